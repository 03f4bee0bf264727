"""The first-run welcome: what the three methods are for, which language model to start with,
and a sample project per method to try.

Shown once, when ``settings.first_run_done`` is False; closing it in any way (finish, skip, a
sample, the window's close button) sets it True and saves the settings. Nothing here imports a
heavy library, so the welcome appears as fast as the main window.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.privacy import destination
from core.settings import BUNDLED_PROFILE_NAME, bundled_profile
from desktop.home import CARD_ORDER
from desktop.methods import METHODS, sample_for
from desktop.widgets import (
    open_window,
    push_button,
)

__all__ = ["SAMPLE_COMING", "FirstRunDialog", "show_first_run_if_needed"]

log = logging.getLogger("evaldesk.first_run")

#: Shown instead of a sample button while a method has no registered sample.
SAMPLE_COMING = "Sample coming with the wizard"

BUNDLED_MODEL_NOTE = (
    "The built-in model runs on this computer, needs no internet and no account, and sends your "
    "texts nowhere. It is very small, so it is there for trying EvalDesk: its personas, "
    "checklists and scores are not trustworthy."
)
CAPABLE_MODEL_NOTE = (
    "A capable model changes the results, not the steps. A larger model on this computer (a 3 to "
    "8 billion parameter model file), a server in your department, or a provider such as OpenAI, "
    "Anthropic or Google follows the instructions closely, reads long documents and writes "
    "feedback you can use. Providers charge per use and receive the texts you evaluate; you can "
    "add one at any time in Settings → Models. AQER needs no language model at all."
)


def _label(text: str, name: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if name:
        label.setObjectName(name)
    return label


def _page(title: str, intro: str) -> tuple[QWidget, QVBoxLayout]:
    """A page of the dialog: its title and first paragraph, and the layout to add the rest to."""
    page = QWidget()
    layout = QVBoxLayout(page)
    layout.addWidget(_label(title, "pageTitle"))
    layout.addWidget(_label(intro))
    return page, layout


class FirstRunDialog(QDialog):
    """Three short pages: the methods, the model to start with, and sample projects."""

    PAGES = ("methods", "model", "samples")

    def __init__(self, main_window: Any) -> None:
        super().__init__(main_window)
        self.main_window = main_window
        self.settings = main_window.settings
        self._done = False
        self.local_dialog: QDialog | None = None
        self.setWindowTitle("Welcome to EvalDesk")
        self.setObjectName("firstRunDialog")
        self.resize(760, 560)

        self.stack = QStackedWidget()
        self.stack.addWidget(self._methods_page())
        self.stack.addWidget(self._model_page())
        self.stack.addWidget(self._samples_page())

        self.skip_button = QPushButton("Skip")
        self.skip_button.setToolTip("Close this welcome; everything here is also in Settings.")
        self.skip_button.clicked.connect(self.reject)
        self.back_button = QPushButton("Back")
        self.back_button.clicked.connect(self.go_back)
        self.next_button = QPushButton("Next")
        self.next_button.setObjectName("primaryButton")
        self.next_button.setDefault(True)
        self.next_button.clicked.connect(self.go_next)
        self.finish_button = QPushButton("Start using EvalDesk")
        self.finish_button.setObjectName("primaryButton")
        self.finish_button.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        buttons.addWidget(self.skip_button)
        buttons.addStretch(1)
        buttons.addWidget(self.back_button)
        buttons.addWidget(self.next_button)
        buttons.addWidget(self.finish_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.stack, 1)
        layout.addLayout(buttons)
        self.show_page("methods")

    # -- pages --------------------------------------------------------------------------------
    def _methods_page(self) -> QWidget:
        page, layout = _page(
            "Welcome to EvalDesk",
            "EvalDesk helps you judge AI-generated text with three published research methods. "
            "Each has a step-by-step wizard; you see and can edit everything the AI produces "
            "before it is used, and your work is saved as you go.",
        )
        self.method_labels: dict[str, QLabel] = {}
        for key in CARD_ORDER:
            info = METHODS[key]
            label = _label(
                f"<b>{info.name}</b>: {info.tagline}<br>{info.use_it_when}<br>"
                f"<i>{info.needs_llm}</i>"
            )
            self.method_labels[key] = label
            layout.addWidget(label)
        layout.addStretch(1)
        return page

    def _model_page(self) -> QWidget:
        page, layout = _page(
            "Which language model to start with",
            "MAJ-Eval and InteractEval ask a language model to write personas, discuss, build "
            "checklists and answer them. EvalDesk starts with its built-in model selected.",
        )
        self.profile_combo = QComboBox()
        self._fill_profiles()
        self.user_edit = QLineEdit(self.settings.user_name)
        self.user_edit.setPlaceholderText("for example: J. Smith")
        self.user_edit.setToolTip("Recorded with every change you make to generated texts, so "
                                  "exports can say who edited what.")
        form = QFormLayout()
        form.addRow("Language model:", self.profile_combo)
        form.addRow("Your name:", self.user_edit)
        layout.addLayout(form)
        self.bundled_note = _label(BUNDLED_MODEL_NOTE, "hint")
        self.capable_note = _label(CAPABLE_MODEL_NOTE)
        layout.addWidget(self.bundled_note)
        layout.addWidget(self.capable_note)
        self.where_label = _label("", "hint")
        form.insertRow(1, "Your texts:", self.where_label)
        self.discover_button = push_button(
            "Look for models on this computer…",
            "Find Ollama, LM Studio, a llama.cpp server or vLLM already running here and use "
            "their models; only this computer is asked.", self.open_discovery)
        self.manager_button = push_button(
            "Download a model file…",
            "Recommended model files that run inside EvalDesk, and which of them fit this "
            "computer; or a .gguf file you already have.", self.open_model_manager)
        self.settings_button = QPushButton("Add a model in Settings…")
        self.settings_button.setToolTip("Close this welcome and open Settings → Models.")
        self.settings_button.clicked.connect(self.open_settings)
        row = QHBoxLayout()
        row.addWidget(self.discover_button)
        row.addWidget(self.manager_button)
        row.addWidget(self.settings_button)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(1)
        self.profile_combo.currentIndexChanged.connect(self._profile_chosen)
        self._profile_chosen()
        return page

    def _samples_page(self) -> QWidget:
        page, layout = _page(
            "Try a method with sample data",
            "Each sample is a small made-up example written for EvalDesk. It opens in a new "
            "untitled project, so nothing of yours is changed.",
        )
        self.sample_buttons: dict[str, QPushButton] = {}
        self.sample_notes: dict[str, QLabel] = {}
        for key in CARD_ORDER:
            info = METHODS[key]
            card = QFrame()
            card.setObjectName("card")
            row = QHBoxLayout(card)
            row.addWidget(_label(f"<b>{info.name}</b><br>{info.sample or info.you_bring}"), 1)
            if sample_for(key) is not None:
                button = QPushButton("Try with sample data")
                button.setToolTip(f"Open the {info.name} wizard with its sample data.")
                button.clicked.connect(lambda _=False, k=key: self.open_sample(k))
                self.sample_buttons[key] = button
                row.addWidget(button)
            else:
                note = _label(SAMPLE_COMING, "hint")
                note.setWordWrap(False)
                self.sample_notes[key] = note
                row.addWidget(note)
            layout.addWidget(card)
        layout.addWidget(_label("Or start with your own data from the home screen."))
        layout.addStretch(1)
        return page

    def _fill_profiles(self) -> None:
        if not any(p.name == BUNDLED_PROFILE_NAME for p in self.settings.profiles):
            self.settings.upsert_profile(bundled_profile())
        self.profile_combo.clear()
        for profile in self.settings.profiles:
            label = profile.name if profile.name == BUNDLED_PROFILE_NAME else (
                f"{profile.name} ({profile.model})")
            self.profile_combo.addItem(label, profile.name)
        # The bundled model preselected on a first run, whatever the defaults say; shown again
        # later (Help menu), the welcome keeps the model the user chose.
        chosen = (self.settings.default_profile if self.settings.first_run_done
                  else BUNDLED_PROFILE_NAME)
        index = self.profile_combo.findData(chosen)
        if index < 0:
            index = self.profile_combo.findData(BUNDLED_PROFILE_NAME)
        self.profile_combo.setCurrentIndex(max(0, index))

    @Slot()
    def _profile_chosen(self, *_args: Any) -> None:
        name = self.chosen_profile()
        self.bundled_note.setVisible(name == BUNDLED_PROFILE_NAME)
        try:
            self.where_label.setText(destination(self.settings.profile(name)).label)
        except KeyError:
            self.where_label.setText("")

    # -- local models -------------------------------------------------------------------------
    @Slot()
    def open_discovery(self) -> QDialog:
        """“Look for models on this computer”; a profile added there is chosen here."""
        from desktop.model_discovery import DiscoveryDialog  # not at start-up (~40 ms)

        return self._open_local(DiscoveryDialog(self.settings, self.main_window.save_settings,
                                                self))

    @Slot()
    def open_model_manager(self) -> QDialog:
        from desktop.model_manager import ModelManagerDialog  # not at start-up (~0.1 s)

        return self._open_local(ModelManagerDialog(self.settings,
                                                   self.main_window.save_settings, self))

    def _open_local(self, dialog: QDialog) -> QDialog:
        dialog.profile_added.connect(self._choose_added)
        self.local_dialog = dialog
        return open_window(dialog)

    @Slot(str)
    def _choose_added(self, name: str) -> None:
        self.profile_combo.blockSignals(True)
        self._fill_profiles()
        self.profile_combo.blockSignals(False)
        self.profile_combo.setCurrentIndex(max(0, self.profile_combo.findData(name)))
        self._profile_chosen()

    # -- navigation ---------------------------------------------------------------------------
    @property
    def page(self) -> str:
        return self.PAGES[self.stack.currentIndex()]

    def show_page(self, key: str) -> None:
        index = self.PAGES.index(key)
        self.stack.setCurrentIndex(index)
        last = index == len(self.PAGES) - 1
        self.back_button.setEnabled(index > 0)
        self.next_button.setVisible(not last)
        self.finish_button.setVisible(last)
        (self.finish_button if last else self.next_button).setDefault(True)

    @Slot()
    def go_next(self) -> None:
        index = self.stack.currentIndex()
        if index < len(self.PAGES) - 1:
            self.show_page(self.PAGES[index + 1])

    @Slot()
    def go_back(self) -> None:
        index = self.stack.currentIndex()
        if index > 0:
            self.show_page(self.PAGES[index - 1])

    # -- results ------------------------------------------------------------------------------
    def chosen_profile(self) -> str:
        return self.profile_combo.currentData() or BUNDLED_PROFILE_NAME

    def finish(self) -> None:
        """Keep the choices and mark the first run done (once, however the dialog closes)."""
        if self._done:
            return
        self._done = True
        self.settings.default_profile = self.chosen_profile()
        name = self.user_edit.text().strip()
        if name:
            self.settings.user_name = name
        self.settings.first_run_done = True
        self.main_window.save_settings()
        log.info("First-run welcome done (model profile: %s)", self.settings.default_profile)

    @Slot()
    def open_sample(self, key: str) -> Any:
        """Close the welcome and open method ``key``'s sample project."""
        opener = sample_for(key)
        self.accept()
        if opener is None:  # unregistered since the page was built
            return None
        opened: list[Any] = []
        # Untitled work in the open project is not left without asking "Save … first?"
        self.main_window.close_project(then=lambda: opened.append(opener(self.main_window)))
        return opened[0] if opened else None

    @Slot()
    def open_settings(self) -> Any:
        self.accept()
        return self.main_window.open_settings()

    def done(self, result: int) -> None:
        self.finish()
        super().done(result)


def show_first_run_if_needed(main_window: Any) -> FirstRunDialog | None:
    """Open the welcome (window-modal, with ``open()``) unless the first run is done."""
    if main_window.settings.first_run_done:
        return None
    dialog = FirstRunDialog(main_window)
    main_window.first_run_dialog = dialog
    return open_window(dialog)
