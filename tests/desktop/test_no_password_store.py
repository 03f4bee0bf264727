"""The profile dialog on a computer without a password store (issue 13, point 4).

Before: the dialog showed "NoKeyringError ... install keyrings.alt", then dropped the key,
while the connection test had used it. Now it says so in plain words and offers the key until
EvalDesk closes, or an environment variable; the connection test uses the key the run will find.
"""

from __future__ import annotations

import keyring
import keyring.backend
import pytest
from keyring.errors import KeyringLocked

from core import secrets
from tests.core.secrets_support import NoStore
from tests.desktop.conftest import visible_message_boxes
from tests.desktop.settings_support import (
    FakeCheck,
    _fake_llm,
    _fill_service_profile,
    _open_settings,
)

TYPED = "sk-typed-for-this-session-123"
JARGON = ("NoKeyringError", "keyrings.alt", "backend", "Traceback")


@pytest.fixture
def no_store():
    previous = keyring.get_keyring()
    keyring.set_keyring(NoStore())
    yield
    keyring.set_keyring(previous)


def _test_connection(qtbot, editor) -> None:
    editor.test_button.click()
    qtbot.waitUntil(lambda: editor.test_button.isEnabled())


def test_no_store_offers_the_key_until_evaldesk_closes(qtbot, window, monkeypatch, no_store):
    calls = _fake_llm(monkeypatch, FakeCheck(True, "ok", "OK", 0.4, 10, 2, 0.0))
    settings_dialog = _open_settings(qtbot, window)
    editor = settings_dialog.add_profile()
    _fill_service_profile(editor, "OpenAI", "openai/gpt-4o-mini", key=TYPED)

    assert editor.no_store_box.isVisible()
    said = editor.no_store_label.text()
    assert "This computer has no password store" in said
    assert not any(word in said for word in JARGON)
    assert editor.session_radio.isChecked()
    assert editor.session_radio.text() == "Use this key until EvalDesk closes"
    assert "OPENAI_API_KEY" in editor.env_radio.text()

    _test_connection(qtbot, editor)
    assert calls[-1][1] == TYPED
    editor.buttons.accepted.emit()
    assert not editor.isVisible()
    # the key the test used is the key a run finds: not dropped
    assert secrets.get_api_key("OpenAI") == TYPED
    assert secrets.key_source("OpenAI") == "session"
    assert not [box for box in visible_message_boxes()
                if any(word in box.text() for word in JARGON)]
    model = settings_dialog.profiles_model
    assert model.data(model.index(model.row_of("OpenAI"), 3)) == "until EvalDesk closes"

    # the settings window's own test button uses the same key
    settings_dialog.select_profile("OpenAI")
    settings_dialog.test_selected()
    qtbot.waitUntil(lambda: settings_dialog.test_button.isEnabled())
    assert calls[-1][1] == TYPED

    # editing it again says where the key is
    editor = settings_dialog.edit_profile()
    assert "until EvalDesk closes" in editor.key_status.text()
    editor.reject()


def test_no_store_with_the_environment_variable(qtbot, window, monkeypatch, no_store):
    calls = _fake_llm(monkeypatch, FakeCheck(False, "The connection did not work: no key"))
    settings_dialog = _open_settings(qtbot, window)
    editor = settings_dialog.add_profile()
    _fill_service_profile(editor, "Claude", "anthropic/claude-sonnet-4-5", key=TYPED)
    editor.env_radio.setChecked(True)
    assert "ANTHROPIC_API_KEY" in editor.env_radio.text()
    assert "ANTHROPIC_API_KEY" in editor.env_hint.text()
    assert not editor.key_edit.isEnabled()  # what is typed would not be kept: not used

    _test_connection(qtbot, editor)
    assert calls[-1][1] is None  # the run's own lookup: the environment
    editor.buttons.accepted.emit()
    assert secrets.get_api_key("Claude") is None
    assert editor.key_change() == ("keep", None)


def test_a_store_that_refuses_the_key_keeps_it_for_the_session(qtbot, window, monkeypatch):
    class Locked(keyring.backend.KeyringBackend):
        priority = 1

        def get_password(self, service, username):
            return None

        def set_password(self, service, username, password):
            raise KeyringLocked("the collection is locked")

        def delete_password(self, service, username):
            return None

    previous = keyring.get_keyring()
    keyring.set_keyring(Locked())
    try:
        calls = _fake_llm(monkeypatch, FakeCheck(True, "ok", "OK", 0.4, 10, 2, 0.0))
        settings_dialog = _open_settings(qtbot, window)
        editor = settings_dialog.add_profile()
        assert not editor.no_store_box.isVisible()  # a store exists
        _fill_service_profile(editor, "OpenAI", "openai/gpt-4o-mini", key=TYPED)
        _test_connection(qtbot, editor)
        assert calls[-1][1] == TYPED
        editor.buttons.accepted.emit()
        assert secrets.get_api_key("OpenAI") == TYPED  # never dropped
        boxes = visible_message_boxes()
        assert boxes and "until EvalDesk closes" in boxes[-1].text()
        assert not any(word in boxes[-1].text() for word in JARGON)
    finally:
        keyring.set_keyring(previous)


def test_the_null_backend_is_no_store(qtbot, window, monkeypatch):
    from keyring.backends import null

    previous = keyring.get_keyring()
    keyring.set_keyring(null.Keyring())
    try:
        _fake_llm(monkeypatch, FakeCheck(True, "ok"))
        settings_dialog = _open_settings(qtbot, window)
        editor = settings_dialog.add_profile()
        _fill_service_profile(editor, "OpenAI", "openai/gpt-4o-mini", key=TYPED)
        assert editor.no_store_box.isVisible()
        editor.buttons.accepted.emit()
        assert secrets.get_api_key("OpenAI") == TYPED
    finally:
        keyring.set_keyring(previous)


def test_a_working_store_shows_no_choice(qtbot, window, memory_keyring):
    settings_dialog = _open_settings(qtbot, window)
    editor = settings_dialog.add_profile()
    _fill_service_profile(editor, "OpenAI", "openai/gpt-4o-mini", key=TYPED)
    assert not editor.no_store_box.isVisible()
    editor.buttons.accepted.emit()
    assert memory_keyring.passwords[("EvalDesk", "OpenAI")] == TYPED
