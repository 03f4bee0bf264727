"""API keys on a computer without a password store (issue 13, point 4).

keyring then raises ``NoKeyringError`` (its "fail" backend) or silently keeps nothing (its "null"
backend). The key the user typed must never be dropped silently, and the key a connection test
uses must be the one the run finds: both go through ``secrets.get_api_key``.
"""

from __future__ import annotations

import keyring
import keyring.backend
import pytest

from core import secrets
from core.settings import ModelProfile
from tests.core.secrets_support import NoStore


@pytest.fixture
def no_store():
    previous = keyring.get_keyring()
    keyring.set_keyring(NoStore())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def null_store():
    from keyring.backends import null

    previous = keyring.get_keyring()
    keyring.set_keyring(null.Keyring())
    yield
    keyring.set_keyring(previous)


def test_a_missing_store_is_detected(no_store):
    assert not secrets.password_store_available()


def test_the_null_backend_counts_as_no_store(null_store):
    # it accepts set_password and keeps nothing: a key "stored" there would be lost
    assert not secrets.password_store_available()
    with pytest.raises(secrets.KeyringUnavailable) as raised:
        secrets.set_api_key("OpenAI", "sk-test-123456")
    assert raised.value.no_store


def test_a_working_store_is_detected(memory_keyring):
    assert secrets.password_store_available()


def test_storing_without_a_store_says_so_in_plain_words(no_store):
    with pytest.raises(secrets.KeyringUnavailable) as raised:
        secrets.set_api_key("OpenAI", "sk-test-123456")
    message = str(raised.value)
    assert raised.value.no_store
    assert "no password store" in message
    assert "EVALDESK_API_KEY_OPENAI" in message
    for jargon in ("NoKeyringError", "keyrings.alt", "backend"):
        assert jargon not in message
    assert secrets.get_api_key("OpenAI") is None  # nothing half-kept


def test_a_session_key_is_what_the_run_finds(no_store):
    secrets.set_session_key("OpenAI", "sk-session-key")
    assert secrets.get_api_key("OpenAI") == "sk-session-key"
    assert secrets.key_source("OpenAI") == "session"
    secrets.delete_api_key("OpenAI")  # no store: removing must not fail
    assert secrets.get_api_key("OpenAI") is None


def test_keep_api_key_never_drops_the_key(no_store):
    where, why = secrets.keep_api_key("OpenAI", "sk-typed-key")
    assert where == "session"
    assert "until EvalDesk closes" in why and "NoKeyringError" not in why
    assert secrets.get_api_key("OpenAI") == "sk-typed-key"


def test_keep_api_key_prefers_the_store(memory_keyring):
    assert secrets.keep_api_key("OpenAI", "sk-stored") == ("keyring", "")
    assert memory_keyring.passwords[("EvalDesk", "OpenAI")] == "sk-stored"
    assert secrets.key_source("OpenAI") == "keyring"
    # a session key typed later wins over an older stored one (it is the one the user tested)
    secrets.keep_api_key("OpenAI", "sk-newer", session_only=True)
    assert secrets.get_api_key("OpenAI") == "sk-newer"


def test_environment_variables(no_store, monkeypatch):
    monkeypatch.setenv("EVALDESK_API_KEY_LAB_SERVER", "sk-from-env")
    assert secrets.get_api_key("Lab server") == "sk-from-env"
    assert secrets.key_source("Lab server") == "environment"
    assert secrets.environment_variable("Lab server") == "EVALDESK_API_KEY_LAB_SERVER"
    assert secrets.provider_variable("openai/gpt-4o-mini") == "OPENAI_API_KEY"
    assert secrets.provider_variable("anthropic/claude-sonnet-4-5") == "ANTHROPIC_API_KEY"
    assert secrets.provider_variable("ollama/llama3.1") is None


def test_the_gateway_uses_the_session_key(no_store):
    """A run's gateway looks the key up itself: it finds the key kept for this session."""
    from core.llm import Gateway

    secrets.set_session_key("Hosted", "sk-session-for-the-run")
    gateway = Gateway(ModelProfile(name="Hosted", model="openai/gpt-4o-mini"))
    assert gateway._api_key == "sk-session-for-the-run"
