"""Settings: profiles round trip (key in the keyring, never in the file), validation, local
model files, embeddings and device detection, connection test."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from PySide6.QtWidgets import QMessageBox

from core import secrets
from core.settings import BUNDLED_PROFILE_NAME, Settings, settings_path
from desktop.settings_dialog import (
    ProfilesTableModel,
    SettingsDialog,
    validate_api_bases,
)
from tests.desktop.conftest import visible_message_boxes
from tests.desktop.settings_support import (
    FakeCheck,
    _fake_llm,
    _fill_service_profile,
    _open_settings,
)

SECRET = "sk-test-0123456789abcdefSECRET"


def _file_text() -> str:
    return settings_path().read_text(encoding="utf-8")


def test_profile_round_trip_keeps_the_key_out_of_the_file(qtbot, window, memory_keyring):
    settings_dialog = _open_settings(qtbot, window)
    editor = settings_dialog.add_profile()
    assert editor.isVisible()
    assert editor.key_edit.echoMode() == editor.key_edit.EchoMode.Password
    _fill_service_profile(editor, "Department vLLM", "hosted_vllm/Qwen/Qwen2.5-7B-Instruct",
                          "http://gpu1.local:8000/v1\nhttp://gpu2.local:8000/v1", SECRET)
    editor.temperature_spin.setValue(0.0)
    editor.seed_spin.setValue(42)
    editor.concurrency_spin.setValue(16)
    editor.timeout_spin.setValue(90)
    editor.buttons.accepted.emit()
    assert not editor.isVisible()

    text = _file_text()
    saved = json.loads(text)
    profile = next(p for p in saved["profiles"] if p["name"] == "Department vLLM")
    assert profile["model"] == "hosted_vllm/Qwen/Qwen2.5-7B-Instruct"
    assert profile["api_bases"] == ["http://gpu1.local:8000/v1", "http://gpu2.local:8000/v1"]
    assert profile["seed"] == 42 and profile["max_concurrency"] == 16
    assert profile["timeout_s"] == 90
    assert SECRET not in text and "SECRET" not in text
    assert memory_keyring.passwords[("EvalDesk", "Department vLLM")] == SECRET

    # the table says a key is stored, without showing it
    model = settings_dialog.profiles_model
    row = model.row_of("Department vLLM")
    assert model.index(row, 3).data() == "stored"
    assert all(SECRET not in str(model.index(row, c).data()) for c in range(model.columnCount()))
    settings_dialog.close()

    # reopen: the editor shows the masked "stored" state
    settings_dialog = _open_settings(qtbot, window)
    settings_dialog.select_profile("Department vLLM")
    editor = settings_dialog.edit_profile()
    assert "A key is stored" in editor.key_status.text()
    assert not editor.key_edit.isVisibleTo(editor) and editor.key_edit.text() == ""
    assert editor.replace_key_button.isVisibleTo(editor)
    assert editor.remove_key_button.isVisibleTo(editor)
    assert editor.seed_spin.value() == 42
    # edit: another model, key kept
    editor.model_edit.setText("hosted_vllm/Qwen/Qwen2.5-14B-Instruct")
    editor.buttons.accepted.emit()
    saved = json.loads(_file_text())
    profile = next(p for p in saved["profiles"] if p["name"] == "Department vLLM")
    assert profile["model"] == "hosted_vllm/Qwen/Qwen2.5-14B-Instruct"
    assert memory_keyring.passwords[("EvalDesk", "Department vLLM")] == SECRET

    # delete: profile and key are gone
    settings_dialog.select_profile("Department vLLM")
    box = settings_dialog.delete_profile()
    assert "Department vLLM" in box.text()
    box.button(QMessageBox.StandardButton.Yes).click()
    saved = json.loads(_file_text())
    assert all(p["name"] != "Department vLLM" for p in saved["profiles"])
    assert ("EvalDesk", "Department vLLM") not in memory_keyring.passwords


def test_replace_and_remove_key(qtbot, window, memory_keyring):
    settings_dialog = _open_settings(qtbot, window)
    editor = settings_dialog.add_profile()
    _fill_service_profile(editor, "OpenAI", "openai/gpt-4o-mini", key="sk-old-key-123456")
    editor.buttons.accepted.emit()
    settings_dialog.select_profile("OpenAI")
    editor = settings_dialog.edit_profile()
    editor.replace_key_button.click()
    assert editor.key_edit.isVisibleTo(editor)
    editor.key_edit.setText("sk-new-key-654321")
    editor.buttons.accepted.emit()
    assert memory_keyring.passwords[("EvalDesk", "OpenAI")] == "sk-new-key-654321"
    settings_dialog.select_profile("OpenAI")
    editor = settings_dialog.edit_profile()
    editor.remove_key_button.click()
    assert "will be removed" in editor.key_status.text()
    editor.buttons.accepted.emit()
    assert ("EvalDesk", "OpenAI") not in memory_keyring.passwords
    assert settings_dialog.profiles_model.index(
        settings_dialog.profiles_model.row_of("OpenAI"), 3).data() == "none"


def test_renaming_a_profile_moves_its_key(qtbot, window, memory_keyring):
    settings_dialog = _open_settings(qtbot, window)
    editor = settings_dialog.add_profile()
    _fill_service_profile(editor, "Claude", "anthropic/claude-sonnet-4-5", key="sk-ant-abcdef12345")
    editor.buttons.accepted.emit()
    settings_dialog.select_profile("Claude")
    editor = settings_dialog.edit_profile()
    editor.name_edit.setText("Claude (lab account)")
    editor.buttons.accepted.emit()
    assert memory_keyring.passwords == {("EvalDesk", "Claude (lab account)"): "sk-ant-abcdef12345"}


@pytest.mark.parametrize(
    ("name", "model", "bases", "expected"),
    [
        ("", "openai/gpt-4o-mini", "", "Give the profile a name"),
        (BUNDLED_PROFILE_NAME, "openai/gpt-4o-mini", "", "already a profile called"),
        ("Ollama", "ollama/llama3.1", "localhost:11434", "is not a web address"),
        ("Ollama", "ollama/llama3.1", "http://ok:1\nhtp:/broken", "Line 2"),
        ("Empty model", "", "", "Enter the model"),
        ("Spaces", "gpt 4o", "", "contains a space"),
    ],
)
def test_validation_messages(qtbot, window, name, model, bases, expected):
    settings_dialog = _open_settings(qtbot, window)
    before = _file_text() if settings_path().exists() else None
    editor = settings_dialog.add_profile()
    _fill_service_profile(editor, name, model, bases)
    editor.buttons.accepted.emit()
    assert editor.isVisible()  # not accepted
    assert editor.error_label.isVisibleTo(editor)
    assert expected in editor.error_label.text()
    after = _file_text() if settings_path().exists() else None
    assert before == after


def test_validate_api_bases():
    bases, problems = validate_api_bases(" http://a:1 \n\nhttps://b.example/v1\n")
    assert bases == ["http://a:1", "https://b.example/v1"] and problems == []
    bases, problems = validate_api_bases("ftp://x\nhttp://\nhttp://ok")
    assert bases == ["http://ok"] and len(problems) == 2


def test_local_model_file(qtbot, window, tmp_path):
    gguf = tmp_path / "Llama-3.2-3B-Instruct-Q4_K_M.gguf"
    gguf.write_bytes(b"GGUF")
    settings_dialog = _open_settings(qtbot, window)
    editor = settings_dialog.add_profile(local=True)
    assert editor.local_radio.isChecked()
    assert not editor.service_box.isEnabled()
    editor.name_edit.setText("Llama 3B on this laptop")
    editor.gguf_edit.setText(str(tmp_path / "missing.gguf"))
    editor.buttons.accepted.emit()
    assert editor.isVisible() and "was not found" in editor.error_label.text()
    editor.gguf_edit.setText(str(gguf))
    editor.buttons.accepted.emit()
    assert not editor.isVisible()
    profile = window.settings.profile("Llama 3B on this laptop")
    assert profile.model == "evaldesk-local/Llama-3.2-3B-Instruct-Q4_K_M"
    assert profile.gguf_path == str(gguf)
    assert profile.is_local
    row = settings_dialog.profiles_model.row_of(profile.name)
    assert settings_dialog.profiles_model.index(row, 3).data() == "not needed"
    assert gguf.name in settings_dialog.profiles_model.index(row, 2).data()


def test_bundled_model_note_is_shown(qtbot, window):
    settings_dialog = _open_settings(qtbot, window)
    from PySide6.QtWidgets import QLabel

    texts = " ".join(label.text() for label in settings_dialog.findChildren(QLabel))
    assert "not trustworthy" in texts
    for alternative in ("Ollama", "vLLM", "hosted provider", ".gguf"):
        assert alternative in texts


def test_make_default(qtbot, window):
    settings_dialog = _open_settings(qtbot, window)
    editor = settings_dialog.add_profile()
    _fill_service_profile(editor, "Gemini", "gemini/gemini-2.0-flash")
    editor.buttons.accepted.emit()
    settings_dialog.select_profile("Gemini")
    settings_dialog.default_button.click()
    assert json.loads(_file_text())["default_profile"] == "Gemini"
    model = settings_dialog.profiles_model
    assert model.index(model.row_of("Gemini"), 4).data() == "default"


def test_profiles_table_model(qtmodeltester):
    settings = Settings()
    from core.settings import ModelProfile

    settings.upsert_profile(ModelProfile(name="A", model="openai/gpt-4o-mini"))
    settings.upsert_profile(
        ModelProfile(name="B", model="ollama/llama3.1", api_bases=["http://h:1", "http://h:2"])
    )
    model = ProfilesTableModel(settings, key_state=lambda name: name == "A")
    qtmodeltester.check(model)
    assert model.rowCount() == 3 and model.columnCount() == 6
    assert model.index(1, 3).data() == "stored"
    assert model.index(2, 3).data() == "none"
    assert model.index(2, 2).data() == "http://h:1 (+1 more)"
    assert model.index(0, 4).data() == "default"


def test_embedding_settings_and_device_detection(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setattr(SettingsDialog, "detect_devices", staticmethod(lambda: ["cpu", "cuda"]))
    settings_dialog = _open_settings(qtbot, window)
    qtbot.waitUntil(lambda: settings_dialog.devices is not None)
    label = settings_dialog.device_label.text()
    assert "cuda" in label and "Automatic will use" in label

    folder = tmp_path / "all-mpnet-base-v2"
    folder.mkdir()
    settings_dialog.folder_radio.setChecked(True)
    settings_dialog.folder_edit.setText(str(tmp_path / "nope"))
    settings_dialog.folder_edit.editingFinished.emit()
    assert "was not found" in settings_dialog.embedding_error.text()
    (folder / "modules.json").write_text("[]", encoding="utf-8")
    settings_dialog.folder_edit.setText(str(folder))
    settings_dialog.folder_edit.editingFinished.emit()
    assert not settings_dialog.embedding_error.isVisibleTo(settings_dialog)
    settings_dialog.device_combo.setCurrentIndex(settings_dialog.device_combo.findData("cpu"))
    saved = json.loads(_file_text())["embedding"]
    assert saved == {"model_path": str(folder), "device": "cpu"}
    settings_dialog.device_combo.setCurrentIndex(settings_dialog.device_combo.findData("mps"))
    assert "was not found here" in settings_dialog.device_label.text()


def test_device_detection_without_embeddings_module(qtbot, window, monkeypatch):
    def broken():
        raise ImportError("No module named 'core.embeddings'")

    monkeypatch.setattr(SettingsDialog, "detect_devices", staticmethod(broken))
    settings_dialog = _open_settings(qtbot, window)
    qtbot.waitUntil(lambda: settings_dialog.devices is not None)
    assert settings_dialog.devices == ["cpu"]
    assert "could not be checked" in settings_dialog.device_label.text()


def test_user_name(qtbot, window):
    settings_dialog = _open_settings(qtbot, window)
    settings_dialog.user_edit.setText("Dr. Amara Osei")
    settings_dialog.user_edit.editingFinished.emit()
    assert json.loads(_file_text())["user_name"] == "Dr. Amara Osei"


def test_test_connection_success_uses_the_typed_key(qtbot, window, monkeypatch):
    calls = _fake_llm(monkeypatch, FakeCheck(True, "ok", "OK", 0.42, 12, 2, 0.00001))
    settings_dialog = _open_settings(qtbot, window)
    editor = settings_dialog.add_profile()
    _fill_service_profile(editor, "Test", "openai/gpt-4o-mini", key="sk-typed-1234567")
    editor.test_button.click()
    qtbot.waitUntil(lambda: editor.test_button.isEnabled())
    assert calls[0][0].model == "openai/gpt-4o-mini" and calls[0][1] == "sk-typed-1234567"
    assert "It works" in editor.test_result.text() and "0.4 s" in editor.test_result.text()
    assert "12 tokens sent" in editor.test_result.text()


def test_test_connection_through_a_real_server(qtbot, window, memory_keyring):
    """The real gateway on the app's qasync loop, over HTTP to a local OpenAI-compatible server
    (the connection-limited client, litellm, the JSON-schema request), key from the editor."""
    from tests.core.llm.fault_server import running_in_a_thread

    with running_in_a_thread() as server:
        settings_dialog = _open_settings(qtbot, window)
        editor = settings_dialog.add_profile()
        _fill_service_profile(editor, "Lab server", "openai/test-model", server.base("ok"),
                              key="sk-typed-1234567")
        editor.test_button.click()
        qtbot.waitUntil(lambda: editor.test_button.isEnabled(), timeout=60_000)
        text = editor.test_result.text()
        # connected; the test server's fixed answer is not the ping's JSON: asked once more
        assert "It works" in text and "did not follow the requested JSON format" in text
        assert "expect many failed items" in text
        assert server.hits["ok"] == 2
        _, headers, body = server.requests[0]
        assert headers["Authorization"] == "Bearer sk-typed-1234567"
        assert body["response_format"]["type"] == "json_schema"
        editor.buttons.rejected.emit()
        from core.llm import close_connections

        closing = asyncio.ensure_future(close_connections())  # before the server goes away
        qtbot.waitUntil(closing.done, timeout=10_000)


def test_test_connection_failure_is_reported(qtbot, window, monkeypatch, memory_keyring):
    secrets.set_api_key(BUNDLED_PROFILE_NAME, "unused")
    _fake_llm(monkeypatch, FakeCheck(False, "401 Unauthorized: check the API key."))
    settings_dialog = _open_settings(qtbot, window)
    settings_dialog.select_profile(BUNDLED_PROFILE_NAME)
    settings_dialog.test_button.click()
    qtbot.waitUntil(lambda: settings_dialog.test_button.isEnabled())
    assert "did not work" in settings_dialog.test_result.text()
    assert "401" in settings_dialog.test_result.text()


def test_test_connection_cannot_run(qtbot, window, monkeypatch):
    _fake_llm(monkeypatch, error=RuntimeError("gateway exploded"))
    settings_dialog = _open_settings(qtbot, window)
    settings_dialog.select_profile(BUNDLED_PROFILE_NAME)
    settings_dialog.test_button.click()
    qtbot.waitUntil(lambda: settings_dialog.test_button.isEnabled())
    assert settings_dialog.test_result.text().startswith("Could not test:")
    boxes = visible_message_boxes(settings_dialog)
    assert boxes and "Could not test" in boxes[0].text()
    boxes[0].close()


def test_test_connection_without_llm_module(qtbot, window, monkeypatch):
    monkeypatch.setitem(sys.modules, "core.llm", None)  # import fails
    settings_dialog = _open_settings(qtbot, window)
    settings_dialog.select_profile(BUNDLED_PROFILE_NAME)
    settings_dialog.test_button.click()
    qtbot.waitUntil(lambda: settings_dialog.test_button.isEnabled())
    assert "Could not test" in settings_dialog.test_result.text()
    assert "not available" in settings_dialog.test_result.text()


def test_settings_dialog_is_opened_without_exec(qtbot, window, monkeypatch):
    from PySide6.QtWidgets import QDialog

    monkeypatch.setattr(QDialog, "exec", lambda *a: (_ for _ in ()).throw(AssertionError()))
    dialog = _open_settings(qtbot, window)
    assert dialog.isVisible()
    editor = dialog.add_profile()
    assert editor.isVisible()


@pytest.mark.parametrize("method", ["majeval", "interacteval"])
def test_a_profile_added_in_settings_is_in_the_open_wizards_lists_at_once(
        qtbot, window, memory_keyring, method):
    """Issue 28, point 13: a profile added in Settings appeared in the wizard's lists only
    after reopening the project."""
    if method == "majeval":
        from desktop.majeval import open_majeval_wizard as open_wizard
    else:
        from desktop.interacteval import open_interacteval_wizard as open_wizard
    wiz = open_wizard(window)
    if method == "majeval":
        wiz.show_page("run")
        combo = wiz.pages["run"].run_profile
        names = lambda: [combo.itemText(i) for i in range(combo.count())]
    else:
        wiz.show_page("think_aloud")
        page = wiz.pages["think_aloud"]
        names = lambda: [page.builder_combo.itemText(i)
                         for i in range(page.builder_combo.count())]
    assert "Department vLLM" not in names()
    settings_dialog = _open_settings(qtbot, window)
    editor = settings_dialog.add_profile()
    _fill_service_profile(editor, "Department vLLM", "hosted_vllm/Qwen/Qwen2.5-7B-Instruct",
                          "http://gpu1.local:8000/v1", SECRET)
    editor.buttons.accepted.emit()
    assert "Department vLLM" in names()
    settings_dialog.close()
