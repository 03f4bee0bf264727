"""API keys: in the OS password store (keyring), else for this session only, else environment
variables. Never in a file.

Keys are stored under the service ``EvalDesk`` with the profile name as the user name. A computer
may have no password store (a Linux machine without Secret Service or KWallet): the key the user
typed can then be kept in memory until EvalDesk closes (:func:`set_session_key`), or read from an
environment variable. :func:`get_api_key` is the one lookup every run and every connection test
uses: the key kept for this session, then the password store, then
``EVALDESK_API_KEY_<PROFILE>``; with none of them litellm reads the provider's own variable
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ...; see :func:`provider_variable`).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from typing import Literal

SERVICE = "EvalDesk"

#: Plain words for a computer without a password store (shown in the settings window).
NO_STORE = (
    "This computer has no password store (the safe place where programs keep passwords), so "
    "EvalDesk cannot keep the API key for next time."
)

#: Keys kept for this session only (in memory; gone when EvalDesk closes).
_SESSION: dict[str, str] = {}

#: The environment variable litellm reads for a provider (the model string's first part).
_PROVIDER_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "cohere": "COHERE_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "xai": "XAI_API_KEY",
    "perplexity": "PERPLEXITYAI_API_KEY",
    "azure": "AZURE_API_KEY",
}

KeySource = Literal["session", "keyring", "environment"]

#: A password in an address (``https://user:KEY@host``) and a key-like query value
#: (``?api-key=KEY``, ``&token=KEY``...): some gateways take the key that way.
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@", re.IGNORECASE)
_URL_KEY_VALUE = re.compile(
    r"([?&](?:api[-_]?key|key|token|access[-_]?token|auth|secret|password|sig|signature)=)"
    r"[^&#\s]+",
    re.IGNORECASE,
)


def hide_url_secrets(text: str) -> str:
    """``text`` with any key inside a web address replaced by ``***`` (for every message, log
    and stored record that names an API address)."""
    if not text or ("://" not in text and "=" not in text):
        return text
    return _URL_KEY_VALUE.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", text))


#: Secrets this process has given to a provider (a profile's key from the password store, the
#: session or the environment; a key typed in the profile dialog and tested), in memory only,
#: so that whatever a provider sends back can be cleaned of them (:func:`redact`).
_KNOWN: set[str] = set()
#: Shorter values are not looked for as such (a 4-letter "key" would blank out every word it
#: spells); the shapes below still catch them after "Bearer" or "api_key=".
MIN_SECRET_LENGTH = 8
#: Environment variables whose value is a secret (``OPENAI_API_KEY``, ``EVALDESK_API_KEY_X``,
#: ``HF_TOKEN``, ``AZURE_API_SECRET``...).
_SECRET_VARIABLE = re.compile(r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)(?:_[A-Z0-9_]*)?$")

_HIDDEN = "***"
#: A value named as a secret, the name kept: ``Bearer <token>``, ``Basic <base64>``,
#: ``api_key=...``, ``"x-api-key": "..."``, ``'access_token': '...'``, ``Authorization: ...``.
_NAMED_SECRET = re.compile(
    r"((?-i:\bBearer\s+(?=[A-Za-z0-9._~+/=-]{6,})"
    r"|\bBasic\s+(?=[A-Za-z0-9+/]*(?:[0-9+/=]|[a-z][A-Z])))"
    r"|(?:(?<![A-Za-z0-9])(?:x[-_])?(?:api[-_ ]?key|apikey|access[-_]?token|auth[-_]?token"
    r"|refresh[-_]?token|id[-_]?token|secret[-_]?key|client[-_]?secret|password|passwd"
    r"|authorization|subscription[-_]?key)[\"']?\s*[:=]\s*[\"']?(?:(?:Bearer|Basic)\s+)?))"
    r"(?!\*\*\*)(?!(?:Bearer|Basic)\s)([^\s\"',;&)}\]>]{4,})",  # not hidden yet
    re.IGNORECASE,
)
#: Text shaped like a key, whoever it belongs to (a provider may echo a key of its own
#: configuration): our own list, from the providers' documented key formats.
_KEY_PATTERNS = (
    # by their prefix: OpenAI, Anthropic, DeepSeek, OpenRouter (sk-...), Groq (gsk_), Hugging
    # Face, Replicate, Fireworks, GitHub, GitLab, Databricks, xAI, Perplexity, NVIDIA
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}",
    (r"\b(?:gsk|hf|r8|fw|ghp|gho|ghu|ghs|github_pat|glpat|dapi|xai|pplx|nvapi)[-_]"
     r"[A-Za-z0-9_-]{10,}"),
    r"\bAIza[A-Za-z0-9_-]{20,}",  # Google
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",  # AWS access key ids
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    r"\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*",  # a JSON web token
    # a long run of letters and digits with capitals, small letters and digits mixed (how
    # random keys look; model names and words have separators or no such mix), or 32 hex
    # digits and more (Azure's keys)
    r"\b(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{24,}\b",
    r"\b[0-9a-fA-F]{32,}\b",
)
_KEY_SHAPES = re.compile("|".join(_KEY_PATTERNS))


def remember_secret(value: str | None) -> None:
    """Note a key given to a provider, so that :func:`redact` hides it in whatever comes back
    (in memory only, for this process)."""
    if value and len(value.strip()) >= MIN_SECRET_LENGTH:
        _KNOWN.add(value.strip())


def known_secrets(extra: Iterable[str | None] = (), *, environment: bool = True) -> list[str]:
    """Every secret :func:`redact` looks for: the keys remembered, ``extra`` and (unless
    ``environment`` is False) the values of the environment's key variables; longest first (a
    key that contains another is hidden whole)."""
    found = set(_KNOWN)
    found.update(v.strip() for v in extra if v and len(v.strip()) >= MIN_SECRET_LENGTH)
    if environment:
        for name, value in os.environ.items():
            if value and len(value.strip()) >= MIN_SECRET_LENGTH and _SECRET_VARIABLE.search(
                    name.upper()):
                found.add(value.strip())
    return sorted(found, key=len, reverse=True)


def _hide_known(text: str, secret: str) -> str:
    """``text`` without ``secret``, nor a start of it of 10 characters or more (a provider may
    cut the key it repeats), nor its URL-encoded form."""
    from urllib.parse import quote

    for form in {secret, quote(secret, safe="")}:
        if form in text:
            text = text.replace(form, _HIDDEN)
        head = form[:10]
        if len(form) > 10 and head in text:
            out, at = [], 0
            while (start := text.find(head, at)) != -1:
                end = start + 10
                while end < len(text) and end - start < len(form) and \
                        text[end] == form[end - start]:
                    end += 1
                out.append(text[at:start] + _HIDDEN)
                at = end
            text = "".join(out) + text[at:]
    return text


def hide_known_secrets(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without the keys given to providers (:func:`remember_secret`, and ``secrets``),
    and nothing else changed: for a model's answer, which may hold text that only looks like a
    key."""
    if not text:
        return text
    for secret in known_secrets(secrets, environment=False):  # per answer: kept cheap
        if secret[:10] in text:
            text = _hide_known(text, secret)
    return text


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` from a provider (an error body, an exception's words, a header echoed back)
    with every secret hidden as ``***``: the keys this process gave to providers and those in
    the environment (:func:`known_secrets`, plus ``secrets``), anything shaped like a key or a
    bearer token, and a key inside a web address (:func:`hide_url_secrets`). The one step every
    provider's text passes before it reaches a message, a log, the project or an export."""
    if not text:
        return text
    text = str(text)
    for secret in known_secrets(secrets):
        text = _hide_known(text, secret)
    text = _NAMED_SECRET.sub(lambda m: m.group(1) + _HIDDEN, hide_url_secrets(text))
    return _KEY_SHAPES.sub(_HIDDEN, text)


class KeyringUnavailable(Exception):
    """The OS keyring could not be used; the message says what to do instead.

    ``no_store`` is True when the computer has no password store at all (rather than one that
    refused this key).
    """

    def __init__(self, message: str, *, no_store: bool = False) -> None:
        super().__init__(message)
        self.no_store = no_store


def _env_name(profile_name: str) -> str:
    return "EVALDESK_API_KEY_" + re.sub(r"[^A-Z0-9]+", "_", profile_name.upper()).strip("_")


def environment_variable(profile_name: str) -> str:
    """EvalDesk's own variable for ``profile_name``'s key (``EVALDESK_API_KEY_<PROFILE>``)."""
    return _env_name(profile_name)


def provider_variable(model: str) -> str | None:
    """The variable litellm reads for ``model``'s provider (``OPENAI_API_KEY`` for
    ``openai/...``), or None when EvalDesk does not know it."""
    provider = model.split("/", 1)[0].strip().lower() if "/" in model else ""
    return _PROVIDER_VARIABLES.get(provider)


def _no_store(exc: BaseException) -> bool:
    from keyring.errors import InitError, NoKeyringError

    return isinstance(exc, NoKeyringError | InitError)


def _backend_missing() -> bool:
    """True when keyring has no real backend here (its "fail" or "null" stand-ins, which raise
    on every call or silently keep nothing)."""
    import keyring
    from keyring.backends import fail, null

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring | null.Keyring):
        return True
    inner = getattr(backend, "backends", None)  # the chainer: missing when it chains nothing
    return inner is not None and not list(inner)


def password_store_available() -> bool:
    """Whether this computer has a password store EvalDesk can keep keys in."""
    try:
        import keyring

        if _backend_missing():
            return False
        keyring.get_password(SERVICE, "EvalDesk (checking the password store)")
    except ImportError:
        return False
    except Exception as exc:  # noqa: BLE001 - a locked store is still a store
        try:
            return not _no_store(exc)
        except ImportError:
            return False
    return True


def _keyring_key(profile_name: str) -> str | None:
    try:
        import keyring

        return keyring.get_password(SERVICE, profile_name)
    except Exception:  # noqa: BLE001 - no store, or a broken one: fall back
        return None


def get_api_key(profile_name: str) -> str | None:
    """The key runs and connection tests use for ``profile_name``: the one kept for this
    session, else the password store's, else ``EVALDESK_API_KEY_<PROFILE>``; None when there is
    none (litellm then reads the provider's own variable)."""
    return (_SESSION.get(profile_name) or _keyring_key(profile_name)
            or os.environ.get(_env_name(profile_name)) or None)


def key_source(profile_name: str) -> KeySource | None:
    """Where :func:`get_api_key` finds ``profile_name``'s key (None: nowhere)."""
    if _SESSION.get(profile_name):
        return "session"
    if _keyring_key(profile_name):
        return "keyring"
    if os.environ.get(_env_name(profile_name)):
        return "environment"
    return None


def set_session_key(profile_name: str, key: str) -> None:
    """Keep ``key`` in memory only, until EvalDesk closes (an empty key forgets it)."""
    if key:
        _SESSION[profile_name] = key
    else:
        _SESSION.pop(profile_name, None)


def set_api_key(profile_name: str, key: str) -> None:
    """Store ``key`` in the password store (an empty key removes it). Raises
    :class:`KeyringUnavailable` in plain words when it cannot be stored; nothing is kept then."""
    if not key:
        delete_api_key(profile_name)
        return
    try:
        import keyring

        if _backend_missing():
            raise KeyringUnavailable(_no_store_advice(profile_name), no_store=True)
        keyring.set_password(SERVICE, profile_name, key)
    except KeyringUnavailable:
        raise
    except Exception as exc:
        if isinstance(exc, ImportError) or _no_store(exc):
            raise KeyringUnavailable(_no_store_advice(profile_name), no_store=True) from exc
        detail = str(exc).strip()
        raise KeyringUnavailable(
            "Your password store did not accept the API key"
            + (f" ({detail})" if detail else "")
            + ". Unlock it and try again, or set the environment variable "
            f"{_env_name(profile_name)} before starting EvalDesk."
        ) from exc
    _SESSION.pop(profile_name, None)  # the stored key is the one to use from now on


def keep_api_key(profile_name: str, key: str, *, session_only: bool = False) -> tuple[
        KeySource, str]:
    """Keep ``key`` where the next run will find it; never drops it.

    In the password store unless ``session_only``; when the store cannot take it, for this
    session only. Returns where it went and, when it did not go where it was meant to, why
    (plain words for the user).
    """
    if session_only:
        set_session_key(profile_name, key)
        return "session", ""
    try:
        set_api_key(profile_name, key)
    except KeyringUnavailable as exc:
        set_session_key(profile_name, key)
        return "session", (
            f"{exc} The key is kept until EvalDesk closes, so runs in this session use it; "
            "you will need to type it again next time."
        )
    return "keyring", ""


def _no_store_advice(profile_name: str) -> str:
    return (
        f"{NO_STORE} Use the key until EvalDesk closes, or set the environment variable "
        f"{_env_name(profile_name)} (or the provider's own, for example OPENAI_API_KEY) before "
        "starting EvalDesk."
    )


def delete_api_key(profile_name: str) -> None:
    """Forget ``profile_name``'s key: this session's and the password store's."""
    _SESSION.pop(profile_name, None)
    try:
        import keyring
        from keyring.errors import PasswordDeleteError

        if _backend_missing():
            return  # nothing can be stored, so nothing is left to remove
        try:
            keyring.delete_password(SERVICE, profile_name)
        except PasswordDeleteError:
            pass
    except ImportError:
        return
    except Exception as exc:
        if _no_store(exc):
            return
        raise KeyringUnavailable(f"The stored API key could not be removed: {exc}") from exc


def has_api_key(profile_name: str) -> bool:
    return get_api_key(profile_name) is not None


class RedactingFilter(logging.Filter):
    """A log handler's filter that passes every line (and the traceback beside it) through
    :func:`redact`: a library may log what a provider said, keys included (litellm does at its
    debug level). EvalDesk's log file and the command line's terminal handler carry it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken record: logging reports it itself
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            import traceback

            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def redact_logs(handler: logging.Handler) -> logging.Handler:
    """``handler`` with a :class:`RedactingFilter` (once)."""
    if not any(isinstance(f, RedactingFilter) for f in handler.filters):
        handler.addFilter(RedactingFilter())
    return handler
