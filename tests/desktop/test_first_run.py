"""The first-run welcome: shown once, bundled model preselected, samples per registered method."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from core.settings import BUNDLED_PROFILE_NAME, ModelProfile, SettingsStore
from desktop import methods
from desktop.first_run import SAMPLE_COMING, FirstRunDialog, show_first_run_if_needed


@pytest.fixture
def only_aqer_sample(monkeypatch):
    """Exactly one registered sample (AQER, replaced by a recorder); the others have none."""
    opened = []
    monkeypatch.setattr(methods, "_samples", {})
    methods.register_sample("aqer", lambda main_window: opened.append(main_window) or "opened")
    return opened


def test_sample_registry_mirrors_the_wizard_registry(monkeypatch):
    monkeypatch.setattr(methods, "_samples", {})
    assert methods.sample_for("majeval") is None
    opener = object()
    methods.register_sample("majeval", opener)
    assert methods.sample_for("majeval") is opener
    methods.unregister_sample("majeval")
    assert methods.sample_for("majeval") is None
    with pytest.raises(KeyError, match="Unknown method"):
        methods.register_sample("nonsense", opener)


def test_aqer_registers_its_sample():
    import desktop.aqer

    assert methods.sample_for("aqer") is desktop.aqer.open_aqer_sample


def test_every_method_registers_its_sample():
    import desktop.interacteval
    import desktop.majeval

    assert methods.sample_for("majeval") is desktop.majeval.open_majeval_sample
    assert methods.sample_for("interacteval") is desktop.interacteval.open_interacteval_sample


def test_shown_only_while_the_first_run_is_not_done(qtbot, window):
    assert window.settings.first_run_done is False
    dialog = show_first_run_if_needed(window)
    assert isinstance(dialog, FirstRunDialog) and dialog.isVisible()
    assert dialog.windowModality() == Qt.WindowModality.WindowModal  # open(), not exec()
    dialog.reject()  # "Skip" also counts as seen
    assert window.settings.first_run_done is True
    assert SettingsStore().load().first_run_done is True
    assert show_first_run_if_needed(window) is None


def test_pages_explain_the_methods_and_preselect_the_bundled_model(qtbot, window,
                                                                   only_aqer_sample):
    window.settings.upsert_profile(ModelProfile(name="Work OpenAI", model="openai/gpt-4o-mini"))
    window.settings.default_profile = "Work OpenAI"
    dialog = show_first_run_if_needed(window)
    assert dialog.page == "methods"
    for key, label in dialog.method_labels.items():
        assert methods.METHODS[key].name in label.text()
    assert not dialog.back_button.isEnabled()
    dialog.next_button.click()
    assert dialog.page == "model"
    assert dialog.chosen_profile() == BUNDLED_PROFILE_NAME
    assert dialog.bundled_note.isVisibleTo(dialog)
    assert "not trustworthy" in dialog.bundled_note.text()
    assert "capable model" in dialog.capable_note.text()
    dialog.profile_combo.setCurrentIndex(dialog.profile_combo.findData("Work OpenAI"))
    assert not dialog.bundled_note.isVisibleTo(dialog)
    dialog.profile_combo.setCurrentIndex(dialog.profile_combo.findData(BUNDLED_PROFILE_NAME))
    dialog.user_edit.setText("  Dr Rivera ")
    dialog.next_button.click()
    assert dialog.page == "samples"
    assert dialog.finish_button.isVisibleTo(dialog) and not dialog.next_button.isVisibleTo(dialog)
    assert set(dialog.sample_buttons) == {"aqer"}
    assert set(dialog.sample_notes) == {"majeval", "interacteval"}
    assert all(note.text() == SAMPLE_COMING for note in dialog.sample_notes.values())
    dialog.back_button.click()
    assert dialog.page == "model"
    dialog.next_button.click()
    dialog.finish_button.click()
    assert not dialog.isVisible()
    saved = SettingsStore().load()
    assert saved.first_run_done is True
    assert saved.default_profile == BUNDLED_PROFILE_NAME
    assert saved.user_name == "Dr Rivera"
    assert only_aqer_sample == []


def test_a_missing_bundled_profile_is_added_back(qtbot, window):
    window.settings.remove_profile(BUNDLED_PROFILE_NAME)
    window.settings.upsert_profile(ModelProfile(name="Ollama", model="ollama/llama3.1"))
    dialog = show_first_run_if_needed(window)
    assert dialog.profile_combo.findData(BUNDLED_PROFILE_NAME) >= 0
    assert dialog.chosen_profile() == BUNDLED_PROFILE_NAME
    dialog.accept()
    assert window.settings.profile(BUNDLED_PROFILE_NAME).is_local


def test_try_with_sample_data_closes_the_welcome_and_opens_the_sample(qtbot, window,
                                                                      only_aqer_sample):
    window.new_project()
    dialog = show_first_run_if_needed(window)
    dialog.show_page("samples")
    dialog.sample_buttons["aqer"].click()
    assert only_aqer_sample == [window]
    assert not dialog.isVisible()
    assert window.project is None  # the sample starts its own untitled project
    assert SettingsStore().load().first_run_done is True


def test_add_a_model_opens_settings(qtbot, window):
    dialog = show_first_run_if_needed(window)
    dialog.show_page("model")
    dialog.settings_button.click()
    assert not dialog.isVisible()
    assert window.settings_dialog is not None and window.settings_dialog.isVisible()
    window.settings_dialog.close()
    assert window.settings.first_run_done is True


def test_the_real_aqer_sample_loads_in_the_wizard(qtbot, window):
    """The AQER sample opener opens the wizard with the shipped sample file in the project."""
    from desktop.aqer import open_aqer_sample

    wizard = open_aqer_sample(window, encoder_factory=lambda *a, **k: None)
    qtbot.waitUntil(lambda: wizard.choices.has_file, timeout=20000)
    assert window.project is not None
    assert wizard.choices.sheet == "Long"
    # the answers are checked a moment after the sheet is read: let that finish before the
    # test's event loop goes
    qtbot.waitUntil(lambda: not wizard.checking, timeout=60000)


def test_the_app_shows_the_welcome_on_a_fresh_start_only(qtbot, evaldesk_home):
    import asyncio

    from desktop import app as app_module

    for expect in (True, False):
        session = app_module.start()
        try:
            qtbot.addWidget(session.window)
            if expect:
                win = session.window
                qtbot.waitUntil(lambda w=win: isinstance(
                    getattr(w, "first_run_dialog", None), FirstRunDialog))
                session.window.first_run_dialog.reject()
            else:
                qtbot.wait(50)
                assert getattr(session.window, "first_run_dialog", None) is None
        finally:
            session.reporter.uninstall()
            session.window.close()
            session.loop.close()
            asyncio.set_event_loop(None)


def test_about_shows_the_detected_device(qtbot, window, monkeypatch):
    from desktop.about import device_text
    from desktop.settings_dialog import SettingsDialog

    monkeypatch.setattr(SettingsDialog, "detect_devices", staticmethod(lambda: ["cpu", "cuda"]))
    dialog = window.open_about()
    qtbot.waitUntil(lambda: "detecting" not in dialog.device_label.text())
    assert dialog.device_label.text().startswith("Embeddings run on an NVIDIA GPU (CUDA)")
    assert "processor" in device_text(["cpu"], "auto")
    assert "was chosen in Settings but is not here" in device_text(["cpu"], "mps")
    assert device_text(["cpu", "cuda"], "cpu").startswith("Embeddings run on the processor")
    dialog.close()


def test_interacteval_sample_opens_the_wizard_with_the_sample_set(qtbot, window):
    import desktop.interacteval

    wizard = desktop.interacteval.open_interacteval_sample(window)
    assert [d.name for d in wizard.choices.dimensions] == ["Clarity", "Accuracy"]
    qtbot.waitUntil(lambda: bool(wizard.choices.samples), timeout=10_000)  # imported in the background


def test_majeval_sample_opens_the_wizard_with_the_sample_task_and_documents(qtbot, window):
    import desktop.majeval

    wizard = desktop.majeval.open_majeval_sample(window)  # the welcome's sample button
    assert wizard.pages["task"].task_edit.toPlainText().strip()
    documents = wizard.pages["documents"]
    qtbot.waitUntil(lambda: documents.doc_list.count() == 2, timeout=60_000)  # read in the background


def test_each_sample_says_what_it_holds(qtbot, window):
    dialog = show_first_run_if_needed(window)
    qtbot.addWidget(dialog)
    dialog.show_page("samples")
    texts = " ".join(label.text() for label in dialog.findChildren(QLabel))
    for info in methods.METHODS.values():
        assert info.sample and info.sample in texts
