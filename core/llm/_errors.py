"""``LLMFailure``: why a call could not give an answer, in words a user can act on.

The gateway turns every litellm / provider exception into one ``LLMFailure`` with a short
``kind`` (for code: tables, filters, exports) and a plain ``message`` (for people: what happened
and what to do). Methods record it per item; a failed item is shown as failed, never scored.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Iterable
from typing import Any, Literal

FailureKind = Literal[
    "auth",  # 401/403: wrong, missing or expired key
    "not_found",  # 404: unknown model or wrong URL
    "bad_request",  # 400/422: the provider rejected the request
    "too_long",  # the prompt does not fit the model's context window
    "rate_limit",  # 429 after the retries
    "server",  # 5xx after the retries
    "timeout",  # no answer in time, after the retries
    "connection",  # could not reach the server, after the retries
    "invalid_output",  # the answer did not match the schema, also after asking again
    "copied_instructions",  # the answer repeated the prompt's own wording instead of answering
    "rejected_output",  # the answer had the right form but failed the stage's own check
    "empty_reply",  # the model answered nothing
    "local_model",  # the GGUF file is missing or cannot be loaded
    "deidentify",  # the texts could not be de-identified: nothing was sent
    "other",
]

#: Kinds worth trying again (with backoff) before giving up.
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "timeout", "connection"})


class Rejection:
    """Why a well-formed answer cannot be used (what a stage's ``check`` returns).

    ``problem`` is said to the model when it is asked again, and to the user if the second
    answer fails too; ``kind`` becomes the :class:`LLMFailure` kind (``copied_instructions`` for
    a copy of the prompt's wording, ``rejected_output`` otherwise); ``advice`` is what the user
    can do about it."""

    __slots__ = ("advice", "kind", "problem")

    def __init__(self, problem: str, kind: str = "rejected_output", advice: str = "") -> None:
        self.problem = problem
        self.kind = kind
        self.advice = advice

    def __repr__(self) -> str:
        return f"Rejection({self.problem!r}, kind={self.kind!r})"


def copied_instructions(what: str) -> Rejection:
    """The rejection of an answer that repeats our prompt's wording (``what``: which part)."""
    return Rejection(
        f"{what} repeats words of the instructions instead of an answer",
        kind="copied_instructions",
        advice="The model repeated the instructions instead of answering: try a larger model.",
    )


class LLMFailure(Exception):
    """A call that gave no usable answer. ``kind`` is one of :data:`FailureKind`; ``message``
    says what happened and what to do. ``status`` is the HTTP status when there was one;
    ``reply`` the model's unusable answer (``invalid_output``)."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
        reply: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.attempts = attempts
        self.reply = reply

    @property
    def message(self) -> str:
        return self._message

    @message.setter
    def message(self, value: str) -> None:
        # ``str(failure)`` says the same as ``message``, also after it was changed (a key
        # hidden, "tried 3 times" added): the exception's own args never keep older words
        self._message = value
        self.args = (value,)

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def __repr__(self) -> str:
        return f"LLMFailure(kind={self.kind!r}, message={self.message!r})"


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    for prefix in ("litellm.", "OpenAIException - ", "APIConnectionError: "):
        text = text.replace(prefix, "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _provider_message(exc: BaseException) -> str:
    """The provider's own words, without litellm's class-name prefixes."""
    text = str(getattr(exc, "message", "") or exc)
    text = text.split("Received Model Group=")[0]
    for marker in ("Exception - ", "Error: ", "Error - "):
        if marker in text:
            text = text.split(marker, 1)[1]
    return _short(text)


def retry_after_seconds(exc: BaseException) -> float | None:
    """The wait the provider asked for (``Retry-After`` / ``retry-after-ms``), in seconds."""
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return max(0.0, float(millis) / 1000.0)
        value = headers.get("retry-after")
    except Exception:  # noqa: BLE001 - odd header objects: no wait asked
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # an HTTP date
        when = email.utils.parsedate_to_datetime(str(value))
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def classify(exc: BaseException, *, model: str, api_base: str, profile: str,
             secrets: Iterable[str | None] = ()) -> LLMFailure:
    """Turn a litellm (or provider) exception into an :class:`LLMFailure` with a plain message.

    The message passes :func:`core.secrets.redact`: the provider's words may repeat the key
    ("Incorrect API key provided: sk-..."), a header sent to it, or a key inside the API
    address; ``secrets`` are the keys the call was made with (the profile's), hidden wherever
    they appear, as is anything shaped like a key or a bearer token."""
    if isinstance(exc, LLMFailure):
        return exc
    from core.secrets import redact

    failure = _classify(exc, model=model, api_base=redact(api_base, secrets), profile=profile)
    failure.message = redact(failure.message, secrets)
    return failure


def _classify(exc: BaseException, *, model: str, api_base: str, profile: str) -> LLMFailure:
    name = type(exc).__name__
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    try:
        status = int(status) if status is not None else None
    except (TypeError, ValueError):
        status = None
    said = _provider_message(exc)
    where = f" at {api_base}" if api_base else ""
    where_settings = f"Check the profile '{profile}' in Settings → Models."

    if "RouterRateLimitError" in names:  # every server of the profile is cooling down
        wait = re.search(r"try again in (\d+(?:\.\d+)?) seconds", said, re.IGNORECASE)
        return LLMFailure(
            "connection",
            f"None of the servers of profile '{profile}' ({api_base}) can take calls right now: "
            "each failed or refused recently. Check that they are running, or wait and run "
            "again; finished items are kept.",
            retry_after=float(wait.group(1)) if wait else None,
        )
    if "ContextWindowExceededError" in names or "exceed context window" in said.lower():
        return LLMFailure(
            "too_long",
            f"The text sent to '{model}' is longer than the model can read at once ({said}). "
            "Use a model with a larger context window, or shorten the input.",
            status=status,
        )
    if "Timeout" in names or isinstance(exc, TimeoutError) or status == 408:
        return LLMFailure(
            "timeout",
            f"The model '{model}'{where} did not answer in time. If the server is just slow, raise the "
            f"timeout of profile '{profile}' in Settings → Models; otherwise check the server.",
            status=status,
        )
    connection = (
        "APIConnectionError" in names
        or "connection error" in said.lower()
        or (isinstance(exc, (ConnectionError, OSError)) and status is None)
    )
    if "missing credentials" in said.lower() or "api_key client option" in said.lower():
        return LLMFailure(
            "auth",
            f"No API key is set for profile '{profile}'. Enter it in Settings → Models, or set "
            "the provider's environment variable (for example OPENAI_API_KEY).",
            status=status,
        )
    if status in (401, 403) or "AuthenticationError" in names or "PermissionDeniedError" in names:
        return LLMFailure(
            "auth",
            f"The provider refused the API key of profile '{profile}' (HTTP {status or 401}: "
            f"{said}). Enter the right key in Settings → Models; it may be missing, mistyped, "
            "expired, or without access to this model.",
            status=status,
        )
    if status == 404 or "NotFoundError" in names:
        return LLMFailure(
            "not_found",
            f"The model '{model}' or the address{where or ' of the provider'} was not found "
            f"(HTTP 404: {said}). Check the model name and the API base URL. {where_settings}",
            status=status,
        )
    if status == 429 or "RateLimitError" in names:
        return LLMFailure(
            "rate_limit",
            f"The provider kept answering 'too many requests' ({said}). Lower the number of "
            f"parallel calls of profile '{profile}', or wait a while and run again: finished "
            "items are kept.",
            status=429,
            retry_after=retry_after_seconds(exc),
        )
    if status in (400, 413, 422) or "BadRequestError" in names or "UnprocessableEntity" in name:
        return LLMFailure(
            "bad_request",
            f"The provider rejected the request (HTTP {status or 400}: {said}). {where_settings} "
            "(model name, maximum tokens, temperature).",
            status=status,
        )
    if connection and (status is None or status >= 500):
        return LLMFailure(
            "connection",
            f"Could not reach '{model}'{where} ({said}). Check the address and your network, "
            "and that the server is running.",
            status=None,
            retry_after=retry_after_seconds(exc),
        )
    if status is not None and status >= 500:
        return LLMFailure(
            "server",
            f"The provider's server failed (HTTP {status}: {said}). This is usually temporary: "
            "try again later; finished items are kept.",
            status=status,
            retry_after=retry_after_seconds(exc),
        )
    return LLMFailure("other", f"The call to '{model}' failed: {name}: {said}", status=status)
