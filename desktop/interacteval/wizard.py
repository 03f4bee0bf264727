"""The InteractEval wizard: dimensions → samples → think-aloud → build → checklist → score →
results, one page class per step in :mod:`desktop.interacteval.pages`.

The pages only collect choices and show outcomes; everything kept in the project and every run
goes through :mod:`core.interacteval.session` (the same functions ``evaldesk checklist`` calls).
Every model call runs as a step of the :class:`desktop.wizard.WizardShell` with progress and
Cancel; every choice and every edit is stored in the project as soon as it is made, so reopening
the project restores the wizard where it was.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox, QLabel

from core.interacteval import session as st
from core.interacteval.model import Dimension
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

    def __init__(self, main_window: Any, project: Any,
                 llm_factory: st.LLMFactory | None = None) -> None:
        self._filling = False
        super().__init__(main_window, project)
        self.llm_factory = llm_factory or st.default_llm_factory
        #: Said when the stored choices could not be read (the original is kept aside).
        self.state, self.state_problem = st.open_state(project)
        self.opened_texts: Any = None
        self.run: Any = None
        self.agreement: list[Any] = []

        self.dim_label = QLabel("Dimension:")
        self.dim_combo = QComboBox()
        self.dim_combo.setMinimumWidth(180)
        self.dim_combo.setToolTip("The pages Samples, Think-aloud, Build and Checklist work on "
                                  "one dimension at a time.")
        self.dim_combo.currentIndexChanged.connect(self._dimension_chosen)
        self.steps_row.addWidget(self.dim_label)
        self.steps_row.addWidget(self.dim_combo)
        self.state_alert = alert_box(self.state_problem)
        self.state_alert.setVisible(bool(self.state_problem))
        self.layout().insertWidget(1, self.state_alert)

    # ================================================================== shared by the pages
    @property
    def dimension(self) -> Dimension | None:
        return self.state.dimension(self.state.current)

    def save_state(self) -> None:
        st.save_state(self.project, self.state)

    def llm(self, name: str, run_id: int | None = None) -> Any:
        """The model of the profile called ``name`` (the default one when it is gone)."""
        profile = self.profile(name)
        if profile is None:
            raise RuntimeError("There is no model profile. Add one in Settings → Models.")
        return self.llm_factory(profile, self.project, run_id)

    def privacy_profiles(self) -> list[Any]:
        names = [*self.state.assessors, self.builder_name(), self.state.scorer]
        return [p for n in dict.fromkeys(n for n in names if n)
                if (p := self.profile(n)) is not None]

    def builder_name(self) -> str:
        return self.state.builder or (self.state.assessors[0] if self.state.assessors else "")

    def current_model(self) -> Any:
        """The profile that scores (its model and every setting that changes an answer are
        what results are current for); "" when there is none."""
        profile = self.profile(self.state.scorer or self.builder_name())
        return profile if profile is not None else ""

    def out_of_date(self, run: Any) -> list[str]:
        """Why ``run`` no longer matches the current choices (empty: it is current)."""
        if run is None:
            return []
        checklists = st.all_checklists(self.project, self.state)
        return st.results_out_of_date(self.project, self.state, run, checklists,
                                      self.current_model())

    def stored_run(self) -> Any:
        """The results of the last scoring run: the ones on screen, else those stored in the
        project (None when there are none, or their checklists are gone or changed)."""
        if self.run is not None and self.run.run_id == self.state.run_id:
            return self.run
        checklists = st.all_checklists(self.project, self.state)
        return st.load_run(self.project, self.state, checklists) if checklists else None

    def show_run(self, run: Any) -> None:
        self.pages["results"].show_run(run)

    def fill_dimension_combo(self) -> None:
        """The dimension chooser at the top right, after the dimensions changed."""
        self._filling = True
        try:
            current = self.state.current
            self.dim_combo.clear()
            names = [d.name for d in self.state.dimensions]
            self.dim_combo.addItems(names)
            if current not in names:
                current = names[0] if names else ""
                self.state.current = current
            self.dim_combo.setCurrentIndex(names.index(current) if current else -1)
        finally:
            self._filling = False

    @Slot(int)
    def _dimension_chosen(self, index: int) -> None:
        if self._filling or index < 0:
            return
        self.state.current = self.dim_combo.itemText(index)
        self.save_state()
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
            panel, plain_step(st.export_checklists, self.project, self.state, target,
                              who=self.who),
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
        if self.state.page != key:
            self.state.page = key
            self.save_state()

    def start(self) -> None:
        """Show the page the user was on; stored results open without recomputing."""
        self.pages["dimensions"].refresh()
        page = self.state.page if self.state.page in PAGES else "dimensions"
        if page in ("results", "check"):
            run = self.stored_run()
            if run is not None and not self.out_of_date(run):
                self.show_run(run)
                return
            page = "score"  # results that no longer match the choices are not shown
        self.show_page(page)


def open_wizard(main_window: Any, llm_factory: st.LLMFactory | None = None) -> InteractEvalWizard:
    """Show the InteractEval wizard for the open project (an untitled one if none is open)."""
    return open_method_wizard(  # type: ignore[return-value]
        main_window, InteractEvalWizard, "llm_factory", llm_factory)
