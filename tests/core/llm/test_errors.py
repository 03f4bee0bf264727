"""Turning provider exceptions into plain ``LLMFailure`` messages."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest

from core.llm._errors import LLMFailure, classify, retry_after_seconds
from core.llm._litellm import litellm_module


def _litellm_error(name: str, status: int, message: str, headers=None):
    litellm = litellm_module()
    response = httpx.Response(
        status, headers=headers or {}, request=httpx.Request("POST", "http://x")
    )
    cls = getattr(litellm, name)
    if name in ("Timeout", "APIConnectionError"):
        return cls(message=message, model="m", llm_provider="openai")
    return cls(message=message, model="m", llm_provider="openai", response=response)


@pytest.mark.parametrize(
    ("name", "status", "kind", "retryable"),
    [
        ("AuthenticationError", 401, "auth", False),
        ("PermissionDeniedError", 403, "auth", False),
        ("NotFoundError", 404, "not_found", False),
        ("BadRequestError", 400, "bad_request", False),
        ("RateLimitError", 429, "rate_limit", True),
        ("InternalServerError", 500, "server", True),
        ("ServiceUnavailableError", 503, "server", True),
        ("Timeout", 408, "timeout", True),
        ("APIConnectionError", 500, "connection", True),
    ],
)
def test_litellm_exceptions_are_classified(name, status, kind, retryable):
    exc = _litellm_error(name, status, "details from the provider")
    failure = classify(exc, model="openai/gpt-x", api_base="http://h/v1", profile="Work")
    assert failure.kind == kind
    assert failure.retryable is retryable
    assert failure.message and failure.message[0].isupper()


def test_context_window_errors_say_the_text_is_too_long():
    litellm = litellm_module()
    exc = litellm.ContextWindowExceededError(
        message="This model's maximum context length is 8192 tokens", model="m",
        llm_provider="openai",
    )  # fmt: skip
    failure = classify(exc, model="openai/m", api_base="", profile="P")
    assert failure.kind == "too_long" and not failure.retryable
    assert "context window" in failure.message


def test_retry_after_in_seconds_milliseconds_and_as_a_date():
    exc = _litellm_error("RateLimitError", 429, "x", {"retry-after": "7"})
    exc.litellm_response_headers = exc.response.headers
    assert retry_after_seconds(exc) == 7.0
    exc.litellm_response_headers = httpx.Headers({"retry-after-ms": "1500"})
    assert retry_after_seconds(exc) == 1.5
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    exc.litellm_response_headers = httpx.Headers({"retry-after": later})
    assert 20 < retry_after_seconds(exc) <= 31
    exc.litellm_response_headers = httpx.Headers({"retry-after": "soon"})
    assert retry_after_seconds(exc) is None


def test_a_failure_is_readable():
    failure = LLMFailure("auth", "Enter the right key.")
    assert str(failure) == "Enter the right key."
    assert "auth" in repr(failure)
