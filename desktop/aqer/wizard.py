"""The AQER wizard: answers file → columns → embedding model → run → results → check the
judge (grade AI answers, compare with AQER).

A :class:`desktop.wizard.WizardShell` with one page class per step (``desktop/aqer/pages/``).
The wizard holds what the pages share: one :class:`core.aqer.session.AqerSession` as
``wizard.session`` (its ``choices`` are the wizard's), the sheet read, its check, the result
shown. The pages collect choices and show outcomes; every piece of work is a call of the
session (the same calls ``evaldesk aqer`` makes) or of :mod:`core.aqer.inputs`, in the loop's
executor. Every choice is saved in the project as soon as it is made. AQER calls no language model: the
embedding model runs on this computer, so nothing is sent anywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import Signal

from core.aqer.inputs import AnswersCheck
from core.aqer.session import (
    AqerChoices,
    AqerSession,
    EncoderFactory,
    StoredResult,
)
from desktop.aqer.pages import IN_ORDER
from desktop.widgets import alert_box
from desktop.wizard import WizardShell, open_method_wizard

if TYPE_CHECKING:  # pragma: no cover
    from core.aqer.model import Layout, WideRows
    from core.tables import TableRead

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

    #: AQER's work in the project: every page's calls go through it.
    session: AqerSession
    # what the pages share (class defaults, so a page built first may read them)
    sheets: ClassVar[list[str]] = []
    #: the sheets of the answers workbook that Excel does not show (name -> "hidden", ...)
    hidden_sheets: ClassVar[dict[str, str]] = {}
    read: TableRead | None = None
    check: AnswersCheck | None = None
    checking = False
    reading = False
    stored: StoredResult | None = None
    #: What was guessed for the sheet shown, and why (plain sentences for the columns page).
    guess_notes: ClassVar[list[str]] = []
    _stored_fingerprint: dict[str, Any] | None = None

    def __init__(self, main_window: Any, project: Any,
                 encoder_factory: EncoderFactory | None = None) -> None:
        session = AqerSession.open(project, settings=getattr(main_window, "settings", None),
                                   encoders=encoder_factory)
        super().__init__(main_window, project, session=session)
        self.sheets = []
        self.hidden_sheets = {}
        self.guess_notes = []
        #: Choices that could not be read (kept aside in the project), said once on top.
        self.problem_banner = alert_box(session.problem)
        self.problem_banner.setVisible(bool(session.problem))
        self.layout().insertWidget(1, self.problem_banner)
        for page in self.pages.values():
            restore = getattr(page, "restore", None)
            if restore is not None:
                restore()
        self.show_page("file")

    @property
    def choices(self) -> AqerChoices:
        """The AQER choices in the project (the session's)."""
        return self.session.choices

    @property
    def encoder_factory(self) -> EncoderFactory:
        """What makes the embedding model's encoder (the session's)."""
        return self.session.encoders

    @encoder_factory.setter
    def encoder_factory(self, factory: EncoderFactory) -> None:
        self.session.encoders = factory

    # ------------------------------------------------------------------ shared state
    def save(self, **update: Any) -> None:
        """Change the choices and store them in the project at once."""
        self.session.save_choices(self.choices.model_copy(update=update))

    def save_columns(self, **update: Any) -> None:
        """Change the column roles and store the choices in the project at once."""
        self.session.save_choices(self.choices.with_columns(**update))

    def guess_columns(self, choices: AqerChoices | None = None) -> None:
        """The sheet read again: keep the roles chosen in ``choices`` (default: the
        session's), suggest those the sheet lacks, and save."""
        if self.read is None:
            self.session.save_choices(choices or self.choices)
        else:
            self.session.keep_columns(self.read, choices)

    def guess_anew(self, format: Layout | None = None, wide_rows: WideRows | None = None,
                   choices: AqerChoices | None = None) -> None:
        """A new file or sheet (or another layout chosen): drop the column choices made for
        the previous one and guess them from this sheet (the layout too unless ``format`` is
        given), keeping the notes that say what was guessed and why; saved at once."""
        if self.read is None:
            return
        self.guess_notes = self.session.guess_columns(self.read, self.sheets, format=format,
                                                      wide_rows=wide_rows, choices=choices)

    def current_result(self, load: bool = True) -> StoredResult | None:
        """The stored result for exactly the current choices (None when it must be computed;
        with ``load=False`` only the one already shown counts, without reading the project)."""
        if self.stored is not None and self._stored_fingerprint == self.choices.fingerprint():
            return self.stored
        if not load:
            return None
        stored = self.session.load_results()
        if stored is not None:
            self.stored, self._stored_fingerprint = stored, self.choices.fingerprint()
        return stored

    def show_result(self, stored: StoredResult) -> None:
        self.stored, self._stored_fingerprint = stored, self.choices.fingerprint()
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
        stored = self.session.load_results() if self.choices.content_hash else None
        if stored is not None:
            self.show_result(stored)
            return
        self.show_page("file")
        if self.choices.has_file:
            then = "columns" if self.choices.columns.has_mapping else None
            self.pages["file"].reload_file(then=then)


def open_wizard(main_window: Any, encoder_factory: EncoderFactory | None = None) -> AqerWizard:
    """Show the AQER wizard for the open project (creating an untitled project if none)."""
    return open_method_wizard(  # type: ignore[return-value]
        main_window, AqerWizard, "encoder_factory", encoder_factory)
