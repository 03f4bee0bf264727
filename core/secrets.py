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

import os
import re
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
