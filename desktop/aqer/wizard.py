"""The AQER wizard: answers file → columns → embedding model → run → results → check the
judge (grade AI answers, compare with AQER).

A :class:`desktop.wizard.WizardShell` with one page class per step (``desktop/aqer/pages/``).
The wizard holds what the pages share (the setup, the sheet read, its check, the result); the
pages only collect choices and show outcomes. The work is in :mod:`core.aqer.session` and
:mod:`core.aqer.inputs` (the same code ``evaldesk aqer`` runs), in the loop's executor. Every
choice is saved in the project as soon as it is made. AQER calls no language model: the
embedding model runs on this computer, so nothing is sent anywhere.
"""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import Signal

from core.aqer.inputs import AnswersCheck, guess_columns, guess_setup
from core.aqer.session import (
    AqerSetup,
    EncoderFactory,
    StoredResult,
    load_result,
    restore_setup,
    save_setup,
)
from desktop.aqer.pages import IN_ORDER
from desktop.widgets import alert_box
from desktop.wizard import WizardShell, open_method_wizard

__all__ = ["PAGES", "AqerWizard", "open_wizard"]

PAGES = ("file", "columns", "model", "run", "results", "check")


class AqerWizard(WizardShell):
    """The AQER wizard shown in the main window."""

    METHOD = "aqer"
    OBJECT_NAME = "aqerWizard"
    HOME_TIP = ("Back to the home screen. Everything you chose is kept in the project; open "
                "AQER again to carry on.")
    PAGE_CLASSES = IN_ORDER

    #: The columns were checked (the :class:`AnswersCheck`).
    checked = Signal(object)
    #: A run ended ("finished", "stopped" or "failed").
    run_ended = Signal(str)

    # what the pages share (class defaults, so a page built first may read them)
    setup: AqerSetup = AqerSetup()
    sheets: ClassVar[list[str]] = []
    #: the sheets of the answers workbook that Excel does not show (name -> "hidden", ...)
    hidden_sheets: ClassVar[dict[str, str]] = {}
    read: Any = None
    check: AnswersCheck | None = None
    checking = False
    reading = False
    stored: StoredResult | None = None
    #: What was guessed for the sheet shown, and why (plain sentences for the columns page).
    guess_notes: ClassVar[list[str]] = []
    _stored_fingerprint: dict[str, Any] | None = None

    def __init__(self, main_window: Any, project: Any,
                 encoder_factory: EncoderFactory | None = None) -> None:
        super().__init__(main_window, project)
        self.encoder_factory = encoder_factory
        self.setup, self.setup_problem = restore_setup(project)
        self.sheets = []
        self.hidden_sheets = {}
        self.guess_notes = []
        #: Choices that could not be read (kept aside in the project), said once on top.
        self.problem_banner = alert_box(self.setup_problem)
        self.problem_banner.setVisible(bool(self.setup_problem))
        self.layout().insertWidget(1, self.problem_banner)
        for page in self.pages.values():
            restore = getattr(page, "restore", None)
            if restore is not None:
                restore()
        self.show_page("file")

    # ------------------------------------------------------------------ shared state
    def save(self, **update: Any) -> None:
        """Change the setup and store it in the project at once."""
        self.setup = self.setup.model_copy(update=update)
        save_setup(self.project, self.setup)

    def guess_columns(self) -> None:
        """Suggest columns for roles that have none (or a column the sheet lacks), and save."""
        if self.read is not None:
            self.setup = guess_columns(self.setup, self.read.frame.columns)
        save_setup(self.project, self.setup)

    def guess_anew(self, format: str | None = None, wide_rows: str | None = None) -> None:
        """A new file or sheet (or another layout chosen): drop the column choices made for
        the previous one and guess them from this sheet (the layout too unless ``format`` is
        given), keeping the notes that say what was guessed and why; saved at once."""
        if self.read is None:
            return
        if format is None:
            guessed = guess_setup(self.setup, self.read, self.sheets)
        else:
            update: dict[str, Any] = {"format": format}
            if wide_rows is not None:
                update["wide_rows"] = wide_rows
            elif format == "wide":  # the sheet's own orientation when it looks wide
                layout = guess_setup(self.setup, self.read, self.sheets).setup
                update["wide_rows"] = layout.wide_rows if layout.format == "wide" else (
                    self.setup.wide_rows)
            guessed = guess_setup(self.setup.model_copy(update=update), self.read, self.sheets,
                                  layout=False, keep_rows=True)
        self.setup = guessed.setup
        self.guess_notes = guessed.notes
        save_setup(self.project, self.setup)

    def current_result(self, load: bool = True) -> StoredResult | None:
        """The stored result for exactly the current choices (None when it must be computed;
        with ``load=False`` only the one already shown counts, without reading the project)."""
        if self.stored is not None and self._stored_fingerprint == self.setup.fingerprint():
            return self.stored
        if not load:
            return None
        stored = load_result(self.project, self.setup)
        if stored is not None:
            self.stored, self._stored_fingerprint = stored, self.setup.fingerprint()
        return stored

    def show_result(self, stored: StoredResult) -> None:
        self.stored, self._stored_fingerprint = stored, self.setup.fingerprint()
        self.pages["results"].set_result(stored)
        self.show_page("results")

    def load_sample(self) -> None:
        """Load the sample answers shipped with EvalDesk (the home screen's "Try it")."""
        self.pages["file"].load_sample()

    # ------------------------------------------------------------------ navigation
    def update_nav(self) -> None:
        super().update_nav()
        if not self.page:
            return
        self.nav_message.setObjectName("hint" if self.checking else "errorText")
        self.nav_message.style().unpolish(self.nav_message)
        self.nav_message.style().polish(self.nav_message)

    def start(self) -> None:
        """Show what the project holds: the stored result if it is current, else the inputs."""
        stored = load_result(self.project, self.setup) if self.setup.content_hash else None
        if stored is not None:
            self.show_result(stored)
            return
        self.show_page("file")
        if self.setup.has_file:
            self.pages["file"].reload_file(then="columns" if self._has_mapping() else None)

    def _has_mapping(self) -> bool:
        s = self.setup
        if s.format == "long":
            return bool(s.question_col and s.worker_col and s.response_col)
        return bool(s.question_col if s.wide_rows == "question" else s.worker_col)


def open_wizard(main_window: Any, encoder_factory: EncoderFactory | None = None) -> AqerWizard:
    """Show the AQER wizard for the open project (creating an untitled project if none)."""
    return open_method_wizard(  # type: ignore[return-value]
        main_window, AqerWizard, "encoder_factory", encoder_factory)
