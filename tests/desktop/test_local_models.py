"""The local-model windows: the discovery list (fake servers on 127.0.0.1), the model manager
(download, pause, resume, cancel, a corrupted byte, import; mocked memory and disk), the labels
that say where each profile sends texts, and the first-run welcome's buttons."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from core.local_models import catalogue
from core.local_models.catalogue import GB, Computer
from core.local_models.discovery import Candidate
from core.runs import Progress
from core.settings import BUNDLED_PROFILE_NAME, ModelProfile, SettingsStore
from desktop.first_run import show_first_run_if_needed
from desktop.model_discovery import DiscoveryDialog, FoundModelsTableModel
from desktop.model_manager import InstalledTableModel, ModelManagerDialog, RecommendedTableModel
from desktop.settings_dialog import ProfilesTableModel
from tests.core.local_models.fake_servers import (
    LLAMACPP_MODELS,
    OLLAMA_TAGS,
    FileServer,
    gguf_bytes,
    json_routes,
    serve,
)
from tests.desktop.conftest import visible_message_boxes


@pytest.fixture
def fake_servers(monkeypatch):
    with serve(json_routes({})) as closed:
        pass  # nothing listens on this port any more
    with serve(json_routes({"/api/tags": OLLAMA_TAGS})) as ollama, \
            serve(json_routes({"/v1/models": LLAMACPP_MODELS})) as llamacpp:
        monkeypatch.setattr(DiscoveryDialog, "candidates", [
            Candidate("ollama", ollama, "Ollama"),
            Candidate("openai", llamacpp, "llama.cpp server"),
            Candidate("openai", closed, "LM Studio")])
        yield ollama, llamacpp


def _settings_dialog(qtbot, window):
    window.settings_action.trigger()
    return window.settings_dialog


def test_discovery_lists_models_and_adds_a_profile_in_one_click(qtbot, window, fake_servers,
                                                                qtmodeltester):
    ollama, _llamacpp = fake_servers
    settings_dialog = _settings_dialog(qtbot, window)
    dialog = settings_dialog.open_discovery()
    assert isinstance(dialog, DiscoveryDialog) and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.reports is not None, timeout=10_000)
    qtmodeltester.check(dialog.model)
    assert dialog.model.rowCount() == 2
    names = {dialog.model.index(r, 0).data() for r in range(2)}
    assert names == {"llama3.1:8b", "qwen2.5-7b-instruct-q4_k_m.gguf"}
    details = dialog.model.index(0, 3).data()
    assert "4.9 GB on disk" in details and "8.0B parameters" in details
    status = dialog.status.text()
    assert "Found 2 models on Ollama" in status
    assert "Nothing answered for LM Studio" in status
    dialog.view.selectRow(0)
    assert dialog.add_button.isEnabled()
    name = dialog.add_selected()
    assert name == "llama3.1:8b (Ollama on this computer)"
    assert dialog.model.index(0, 4).data() == "added" and not dialog.add_button.isEnabled()
    saved = SettingsStore().load().profile(name)
    assert saved.model == "ollama_chat/llama3.1:8b"
    assert saved.api_bases == [f"http://127.0.0.1:{ollama}"]
    # the settings list shows it at once, labelled as staying on this computer
    row = settings_dialog.profiles_model.row_of(name)
    assert row is not None
    label = settings_dialog.profiles_model.index(row, 5).data()
    assert label == "On this computer: your texts do not leave it"


def test_discovery_with_nothing_running_says_what_to_do(qtbot, qloop, settings_for_dialogs,
                                                        monkeypatch):
    with serve(json_routes({})) as port:
        pass
    monkeypatch.setattr(DiscoveryDialog, "candidates", [Candidate("ollama", port, "Ollama")])
    dialog = DiscoveryDialog(*settings_for_dialogs)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.reports is not None, timeout=10_000)
    assert dialog.model.rowCount() == 0
    assert "No model server is running on this computer" in dialog.status.text()
    assert "Start Ollama or LM Studio" in dialog.status.text()


def test_found_models_table_model(qtmodeltester, settings_for_dialogs):
    settings, _save = settings_for_dialogs
    qtmodeltester.check(FoundModelsTableModel(settings))


def test_each_profile_says_where_texts_go(qtmodeltester):
    from core.settings import Settings

    settings = Settings()
    settings.upsert_profile(ModelProfile(name="Work", model="openai/gpt-4o-mini"))
    settings.upsert_profile(ModelProfile(name="Dept", model="hosted_vllm/q",
                                         api_bases=["http://10.2.3.4:8000/v1"]))
    model = ProfilesTableModel(settings, key_state=lambda _n: False)
    qtmodeltester.check(model)
    texts = {model.index(r, 0).data(): model.index(r, 5).data() for r in range(3)}
    assert texts["Work"] == "Sent to OpenAI"
    assert texts["Dept"] == "Sent to the server at 10.2.3.4 (your network)"
    assert texts[BUNDLED_PROFILE_NAME] == "On this computer: your texts do not leave it (a demo)"
    bundled_tip = model.index(0, 5).data(Qt.ItemDataRole.ToolTipRole)
    assert "demo model for trying the app" in bundled_tip


# ------------------------------------------------------------------------------ the manager
@pytest.fixture
def settings_for_dialogs():
    from core.settings import Settings

    settings = Settings()
    saved = []

    def save():
        SettingsStore().save(settings)
        saved.append(1)
        return True

    return settings, save


@pytest.fixture
def file_server(monkeypatch):
    server = FileServer(gguf_bytes(3_000_000, name="Tiny"), name="Tiny-Q4_K_M.gguf")
    with serve(server) as port:
        server.port = port
        tiny = dataclasses.replace(catalogue.RECOMMENDED[0], key="tiny", name="Tiny Instruct",
                                   file_name=server.name, download_url=server.url())
        big = dataclasses.replace(catalogue.RECOMMENDED[-1], key="big")
        monkeypatch.setattr(ModelManagerDialog, "recommended", (tiny, big))
        monkeypatch.setattr(ModelManagerDialog, "measure", staticmethod(
            lambda folder: Computer(total_ram=8 * GB, free_disk=50 * GB, folder=str(folder))))
        yield server


def _manager(qtbot, settings_for_dialogs):
    dialog = ModelManagerDialog(*settings_for_dialogs)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_the_manager_marks_models_that_do_not_fit(qtbot, qloop, file_server,
                                                  settings_for_dialogs, qtmodeltester):
    dialog = _manager(qtbot, settings_for_dialogs)
    assert "demo for trying the app" in dialog.findChild(QLabel, "intro").text()
    qtmodeltester.check(dialog.recommended_model)
    qtmodeltester.check(dialog.installed_model)
    assert "8.0 GB of memory, 50.0 GB free" in dialog.computer_label.text()
    table = dialog.recommended_model
    assert table.index(0, 5).data() == "yes"
    assert table.index(1, 5).data() == "no: see why"
    assert "will not run well here" in table.index(1, 5).data(Qt.ItemDataRole.ToolTipRole)
    assert table.index(1, 5).data(Qt.ItemDataRole.ForegroundRole) is not None
    assert table.index(1, 4).data() == "Apache 2.0"
    dialog.recommended_view.selectRow(1)
    assert "Will not fit this computer well" in dialog.details.text()
    assert "Quality to expect" in dialog.details.text()


def test_download_pause_resume_and_profile(qtbot, qloop, file_server, settings_for_dialogs):
    settings, _save = settings_for_dialogs
    dialog = _manager(qtbot, settings_for_dialogs)
    dialog.recommended_view.selectRow(0)
    relay = dialog._listener

    def pausing_listener():
        # Press Pause from the worker's own progress (the GUI sees progress a little later)
        shown = relay()

        def listener(state):
            shown._listener(state)
            if state.stage.startswith("Downloading") and state.done > 1_000_000:
                dialog.cancel_token.cancel()

        return Progress(listener)

    dialog._listener = pausing_listener
    task = dialog.start_download()
    assert not dialog.download_button.isEnabled() and dialog.pause_button.isEnabled()
    qtbot.waitUntil(task.done, timeout=15_000)
    assert "Paused at" in dialog.status.text()
    assert dialog.download_button.text() == "Resume"
    assert dialog.recommended_model.index(0, 6).data().startswith("Paused at")

    dialog._listener = relay
    task = dialog.start_download()
    qtbot.waitUntil(task.done, timeout=15_000)
    assert "is ready (SHA-256 checked (published by the server))" in dialog.status.text()
    ranges = [r for m, _p, r in file_server.requests if m == "GET"]
    assert ranges[0] == "" and ranges[1].startswith("bytes=")  # resumed, not restarted
    assert dialog.recommended_model.index(0, 6).data() == "Downloaded"
    assert dialog.installed_model.rowCount() == 1
    assert dialog.installed_model.index(0, 3).data() == catalogue.RECOMMENDED[0].licence
    profile = next(p for p in settings.profiles if p.name == "Tiny Instruct (this computer)")
    assert profile.is_local and profile.gguf_path.endswith("Tiny-Q4_K_M.gguf")
    assert dialog.installed_model.index(0, 5).data() == "added"


def test_a_corrupted_byte_is_mended_and_reported(qtbot, qloop, file_server,
                                                 settings_for_dialogs):
    file_server.corrupt_at = [2_500_000]
    dialog = _manager(qtbot, settings_for_dialogs)
    task = dialog.start_download()
    qtbot.waitUntil(task.done, timeout=15_000)
    assert "1 damaged piece was fetched again" in dialog.status.text()  # one, said in the singular
    target = catalogue.models_dir() / file_server.name
    assert target.read_bytes() == file_server.data


def test_a_failed_download_keeps_its_part_and_cancel_deletes_it(qtbot, qloop, file_server,
                                                                settings_for_dialogs,
                                                                monkeypatch):
    from core.local_models import download

    monkeypatch.setattr(download.time, "sleep", lambda _s: None)
    file_server.drop_after = [400_000] * 10
    dialog = _manager(qtbot, settings_for_dialogs)
    task = dialog.start_download()
    qtbot.waitUntil(task.done, timeout=15_000)
    assert "press Resume" in dialog.status.text()
    assert dialog.status.objectName() == "errorText"
    part = catalogue.models_dir() / (file_server.name + ".part")
    assert part.stat().st_size == 2_400_000
    assert dialog.cancel_button.isEnabled()
    box = dialog.cancel_download()
    assert "delete the 2.4 MB downloaded so far" in box.text()
    box.button(box.StandardButton.Yes).click()
    assert not part.exists()
    assert "deleted" in dialog.status.text()
    assert dialog.download_button.text() == "Download"


def test_import_a_model_file_by_copy_or_in_place(qtbot, qloop, tmp_path, file_server,
                                                 settings_for_dialogs):
    settings, _save = settings_for_dialogs
    source = tmp_path / "Mine-Q4_K_M.gguf"
    source.write_bytes(gguf_bytes(200_000, name="Mine", licence="mit"))
    dialog = _manager(qtbot, settings_for_dialogs)
    box = dialog.ask_copy_or_link(str(source))
    copy = next(b for b in box.buttons() if b.text() == "Copy it")
    copy.click()
    qtbot.waitUntil(lambda: dialog.task is not None and dialog.task.done(), timeout=10_000)
    assert "copied to" in dialog.status.text() and "mit (as the file says)" in dialog.status.text()
    assert (catalogue.models_dir() / source.name).exists()
    assert any(p.gguf_path == str(catalogue.models_dir() / source.name)
               for p in settings.profiles)

    wrong = tmp_path / "notes.gguf"
    wrong.write_text("not a model")
    dialog.import_file(str(wrong), copy=False)
    qtbot.waitUntil(lambda: dialog.task.done(), timeout=10_000)
    assert "notes.gguf is not a GGUF model file" in dialog.status.text()
    assert dialog.status.objectName() == "errorText"


def test_recommended_and_installed_table_models(qtmodeltester, tmp_path, settings_for_dialogs):
    settings, _save = settings_for_dialogs
    here = Computer(total_ram=None, free_disk=None)
    qtmodeltester.check(RecommendedTableModel(catalogue.RECOMMENDED, here, tmp_path))
    qtmodeltester.check(InstalledTableModel(settings))


def test_the_welcome_offers_local_models_and_labels_the_choice(qtbot, window, fake_servers):
    dialog = show_first_run_if_needed(window)
    dialog.next_button.click()
    assert "demo model for trying the app" in dialog.where_label.text()
    discovery = dialog.open_discovery()
    qtbot.waitUntil(lambda: discovery.reports is not None, timeout=10_000)
    discovery.view.selectRow(1)
    name = discovery.add_selected()
    assert dialog.chosen_profile() == name  # the model just added is chosen
    assert dialog.where_label.text() == "On this computer: your texts do not leave it."
    discovery.close()
    manager = dialog.open_model_manager()
    assert isinstance(manager, ModelManagerDialog)
    manager.close()
    dialog.accept()
    assert window.settings.default_profile == name
    assert not visible_message_boxes()
