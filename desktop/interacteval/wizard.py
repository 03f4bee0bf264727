"""The InteractEval wizard: dimensions → samples → think-aloud → build → checklist → score →
results, one page class per step in :mod:`desktop.interacteval.pages`.

The pages only collect choices and show outcomes; everything kept in the project and every run
goes through the wizard's one :class:`core.interacteval.session.InteractEvalSession`
(``wizard.session``, the same calls ``evaldesk checklist`` makes).
Every model call runs as a step of the :class:`desktop.wizard.WizardShell` with progress and
Cancel; every choice and every edit is stored in the project as soon as it is made, so reopening
the project restores the wizard where it was.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox, QLabel

from core.interacteval.model import Dimension
from core.interacteval.session import InteractEvalChoices, InteractEvalSession, ScoringRun
from desktop.interacteval.pages.build import BUILD_STEPS, BuildPage
from desktop.interacteval.pages.check import CheckJudgePage
from desktop.interacteval.pages.checklist import ChecklistPage
from desktop.interacteval.pages.dimensions import DimensionsPage
from desktop.interacteval.pages.results import ResultsPage
from desktop.interacteval.pages.samples import SamplesPage
from desktop.interacteval.pages.score import ScorePage
from desktop.interacteval.pages.think_aloud import ThinkAloudPage
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.widgets import alert_box, xlsx_path
from desktop.wizard import WizardShell, open_method_wizard

if TYPE_CHECKING:  # pragma: no cover
    from core.interacteval.inputs import OpenedTexts
    from core.interacteval.session import DimensionAgreement
    from core.llm import LLMFactory
    from core.project import Project

__all__ = ["BUILD_STEPS", "PAGES", "InteractEvalWizard", "open_wizard"]

PAGES = ("dimensions", "samples", "think_aloud", "build", "checklist", "score", "results",
         "check")
#: Pages that show one dimension at a time (the dimension chooser is visible on them).
PER_DIMENSION = ("samples", "think_aloud", "build", "checklist")


class InteractEvalWizard(WizardShell):
    """The InteractEval wizard page shown in the main window."""

    METHOD, OBJECT_NAME = "interacteval", "interactevalWizard"
    SENDS_TEXTS = True
    HOME_TIP = ("Back to the home screen. Everything is kept in the project; open InteractEval "
                "again to carry on.")
    PAGE_CLASSES = (DimensionsPage, SamplesPage, ThinkAloudPage, BuildPage, ChecklistPage,
                    ScorePage, ResultsPage, CheckJudgePage)

    session: InteractEvalSession

    def __init__(self, main_window: Any, project: Project,
                 llm_factory: LLMFactory | None = None) -> None:
        self._filling = False
        #: The texts file as last read (its sheets, columns and texts), for the Score page.
        self.opened_texts: OpenedTexts | None = None
        #: The scoring run shown on the Results page.
        self.run: ScoringRun | None = None
        self.agreement: list[DimensionAgreement] = []
        session = InteractEvalSession.open(project, settings=main_window.settings)
        if llm_factory is not None:
            session.models = llm_factory
        super().__init__(main_window, project, session)
        #: Said when the stored choices could not be read (the original is kept aside).
        self.choices_problem = session.problem

        self.dim_label = QLabel("Dimension:")
        self.dim_combo = QComboBox()
        self.dim_combo.setMinimumWidth(180)
        self.dim_combo.setToolTip("The pages Samples, Think-aloud, Build and Checklist work on "
                                  "one dimension at a time.")
        self.dim_combo.currentIndexChanged.connect(self._dimension_chosen)
        self.steps_row.addWidget(self.dim_label)
        self.steps_row.addWidget(self.dim_combo)
        self.choices_alert = alert_box(self.choices_problem)
        self.choices_alert.setVisible(bool(self.choices_problem))
        self.layout().insertWidget(1, self.choices_alert)

    # ================================================================== shared by the pages
    @property
    def choices(self) -> InteractEvalChoices:
        """The method's choices in this project (the session's; pages change them in place
        and keep them with :meth:`save_choices`)."""
        return self.session.choices

    @property
    def llm_factory(self) -> LLMFactory:
        """What makes the models (``core.llm.gateway_for``; tests give a fake)."""
        return self.session.models

    @llm_factory.setter
    def llm_factory(self, factory: LLMFactory) -> None:
        self.session.models = factory

    @property
    def dimension(self) -> Dimension | None:
        return self.choices.dimension(self.choices.current)

    def save_choices(self) -> None:
        self.session.save_choices()

    def privacy_profiles(self) -> list[Any]:
        names = [*self.choices.assessors, self.builder_name(), self.choices.scorer]
        return [p for n in dict.fromkeys(n for n in names if n)
                if (p := self.profile(n)) is not None]

    def builder_name(self) -> str:
        return self.choices.builder_name()

    def out_of_date(self, run: ScoringRun | None) -> list[str]:
        """Why ``run`` no longer matches the current choices (empty: it is current)."""
        return self.session.results_out_of_date(run)

    def stored_run(self) -> ScoringRun | None:
        """The results of the last scoring run: the ones on screen, else those stored in the
        project (None when there are none, or their checklists are gone or changed)."""
        if self.run is not None and self.run.run_id == self.choices.run_id:
            return self.run
        return self.session.load_results()

    def show_run(self, run: ScoringRun) -> None:
        self.pages["results"].show_run(run)

    def settings_changed(self) -> None:
        """The session reads the profiles (and who works) from the settings shown."""
        self.session.settings = self.main_window.settings
        super().settings_changed()

    def fill_dimension_combo(self) -> None:
        """The dimension chooser at the top right, after the dimensions changed."""
        self._filling = True
        try:
            current = self.choices.current
            self.dim_combo.clear()
            names = [d.name for d in self.choices.dimensions]
            self.dim_combo.addItems(names)
            if current not in names:
                current = names[0] if names else ""
                self.choices.current = current
            self.dim_combo.setCurrentIndex(names.index(current) if current else -1)
        finally:
            self._filling = False

    @Slot(int)
    def _dimension_chosen(self, index: int) -> None:
        if self._filling or index < 0:
            return
        self.choices.current = self.dim_combo.itemText(index)
        self.save_choices()
        if self.page:
            self.current.refresh()
            self.update_nav()

    def run_background(self, panel: RunPanel, step: Any, *, title: str, what: str,
                       on_done: Any = None) -> Any:
        """A short step that does not make the wizard busy (the agreement, an export): the
        user may go on; a closing wizard still stops it. :attr:`step_ended` says when it ends."""
        return self.run_step(panel, step, title=title, on_done=on_done, busy=what,
                             background=True)

    def export_checklists(self, path: str | Path) -> Any:
        """Write every checklist to a workbook (sheet ``Checklist``) in the executor."""
        from desktop.interacteval.pages._base import plain_step

        target = xlsx_path(path)
        panel = (self.pages["results"].results.export_panel if self.page == "results"
                 else self.pages["build"].build_panel)
        panel.show()
        return self.run_background(
            panel, plain_step(self.session.export_checklists, target, who=self.who),
            title=f"Exporting the checklists to {target.name}", what="export",
            on_done=partial(self.exported, target, panel))

    def exported(self, target: Path, panel: RunPanel, outcome: RunOutcome) -> None:
        if outcome.finished:
            panel.hide()
            self.main_window.status(f"Saved {target}")
            if self.page == "results":
                self.pages["results"].results.show_export(str(target))
            else:
                self.pages["checklist"].checklist_message.setText(f"Saved {target}")

    # ================================================================== navigation
    def page_shown(self, key: str) -> None:
        show_dim = key in PER_DIMENSION
        self.dim_label.setVisible(show_dim)
        self.dim_combo.setVisible(show_dim)
        if self.choices.page != key:
            self.choices.page = key
            self.save_choices()

    def start(self) -> None:
        """Show the page the user was on; stored results open without recomputing."""
        self.pages["dimensions"].refresh()
        page = self.choices.page if self.choices.page in PAGES else "dimensions"
        if page in ("results", "check"):
            run = self.stored_run()
            if run is not None and not self.out_of_date(run):
                self.show_run(run)
                return
            page = "score"  # results that no longer match the choices are not shown
        self.show_page(page)


def open_wizard(main_window: Any,
                llm_factory: LLMFactory | None = None) -> InteractEvalWizard:
    """Show the InteractEval wizard for the open project (an untitled one if none is open)."""
    return open_method_wizard(  # type: ignore[return-value]
        main_window, InteractEvalWizard, "llm_factory", llm_factory)
