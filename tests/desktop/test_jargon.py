"""No research or programming word without plain words on the main screens (issue 13, point 5):
every page of each wizard (with the sample set loaded), the home page and the model dialogs
are walked; a term of ``tests.desktop.jargon.TERMS`` on a visible label, button, group box,
tab, combo item or column title must have a tooltip. The results pages are walked in their
end-to-end tests (test_aqer_wizard, test_majeval_wizard, test_interacteval_results)."""

from __future__ import annotations

from tests.desktop.jargon import terms_in, unexplained
from tests.desktop.jargon import unexplained_on_pages as _walk


def test_the_checker_finds_a_term_only_without_a_tooltip(qtbot):
    from PySide6.QtWidgets import QCheckBox, QVBoxLayout, QWidget

    root = QWidget()
    qtbot.addWidget(root)
    box = QVBoxLayout(root)
    bare = QCheckBox("Also compute RASA and BLEU-1")
    explained = QCheckBox("Krippendorff's alpha")
    explained.setToolTip("How much the personas agree with each other.")
    box.addWidget(bare)
    box.addWidget(explained)
    root.show()
    assert terms_in("see paper section 7.4 (kappa)") == ["kappa", "paper section", "section 7.4"]
    assert terms_in("Seattle, a season") == []  # whole words, SEA in capitals only
    assert unexplained(root) == ["QCheckBox: 'Also compute RASA and BLEU-1' (RASA, BLEU)"]


def test_every_wizard_page_explains_its_terms(qtbot, window):
    from desktop.aqer import open_aqer_wizard
    from desktop.interacteval import open_interacteval_wizard
    from desktop.majeval import open_majeval_wizard

    found = [f"[home] {f}" for f in unexplained(window)]
    wiz = open_aqer_wizard(window)
    wiz.load_sample()
    qtbot.waitUntil(lambda: wiz.read is not None and not wiz.reading, timeout=30_000)
    found += _walk(qtbot, window, wiz)
    wiz = open_majeval_wizard(window)
    wiz.pages["task"].load_sample()
    qtbot.waitUntil(lambda: not wiz.busy and len(wiz.docs) == 2, timeout=30_000)
    found += _walk(qtbot, window, wiz)
    wiz = open_interacteval_wizard(window)
    wiz.pages["dimensions"].load_sample_set()
    qtbot.waitUntil(lambda: bool(wiz.choices.samples) and not wiz.busy, timeout=30_000)
    found += _walk(qtbot, window, wiz)
    assert found == []


def test_the_settings_and_model_dialogs_explain_their_terms(qtbot, qloop, store):
    from PySide6.QtWidgets import QTabWidget

    from core.settings import ModelProfile, Settings
    from desktop.model_manager import ModelManagerDialog
    from desktop.profile_dialog import ProfileDialog
    from desktop.settings_dialog import SettingsDialog

    settings = Settings()
    settings.upsert_profile(ModelProfile(name="Work", model="openai/gpt-4o-mini"))
    found = []
    for make in (lambda: SettingsDialog(settings, store), lambda: ProfileDialog(settings),
                 lambda: ProfileDialog(settings, local=True),
                 lambda: ProfileDialog(settings, settings.profiles[0]),
                 lambda: ModelManagerDialog(settings, lambda: True)):
        dialog = make()
        qtbot.addWidget(dialog)
        dialog.show()
        tabs = dialog.findChildren(QTabWidget)
        for i in range(tabs[0].count() if tabs else 1):
            if tabs:
                tabs[0].setCurrentIndex(i)
            qtbot.wait(20)
            found += [f"[{type(dialog).__name__}] {f}" for f in unexplained(dialog)]
        dialog.close()
    assert found == []


def test_the_welcome_and_discovery_dialogs_explain_their_terms(qtbot, window):
    from desktop.first_run import FirstRunDialog
    from desktop.model_discovery import DiscoveryDialog

    found = []
    discovery = DiscoveryDialog(window.settings, lambda: True, start=False)
    qtbot.addWidget(discovery)
    discovery.show()
    found += [f"[discovery] {f}" for f in unexplained(discovery)]
    welcome = FirstRunDialog(window)
    qtbot.addWidget(welcome)
    welcome.show()
    for i in range(welcome.stack.count()):
        welcome.stack.setCurrentIndex(i)
        qtbot.wait(20)
        found += [f"[welcome, page {i + 1}] {f}" for f in unexplained(welcome)]
    assert found == []
