"""Page 7: the scores, answers, distribution and agreement of the last scoring run; export."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Slot

from core.interacteval.session import ScoringRun, stability, stability_lines
from desktop.file_dialogs import ask_then, save_file
from desktop.interacteval.conditions_tab import ConditionsTab
from desktop.interacteval.pages._base import InteractEvalPage, plain_step
from desktop.interacteval.results import ResultsView
from desktop.runner import RunOutcome
from desktop.widgets import (
    page_layout,
    refresh_if_shown,
    refresh_when_shown,
    show_repeats,
    stability_label,
    xlsx_path,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.runs import CancelToken, Progress
    from desktop.interacteval.wizard import InteractEvalWizard



class ResultsPage(InteractEvalPage):
    KEY, TITLE = "results", "Results"

    def __init__(self, wizard: InteractEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self.results = ResultsView()
        self.results.export_requested.connect(self._ask_export_results)
        self.results.export_checklists_requested.connect(self._ask_export_checklists)
        self.results.include_samples_changed.connect(self.set_include_samples)
        self.conditions = ConditionsTab(wizard)
        self.results.tabs.addTab(self.conditions, "Conditions")
        refresh_when_shown(self.results.tabs, self.conditions)
        layout = page_layout(
            self, "Results",
            "Every text's score on every dimension, and every Yes/No answer behind it: select "
            "a text to see them. The Distribution tab shows how the scores spread; the "
            "Agreement tab compares them with the human scores, if the texts had any; the "
            "Conditions tab compares checklists built from people's notes, models' notes or "
            "both. Export saves everything in one Excel workbook.")
        self.stability_label = stability_label()
        layout.addWidget(self.stability_label)
        layout.addWidget(self.results, 1)

    def fill_stability(self) -> list[ScoringRun]:
        """Show how alike the repeats of the run shown are (when each call was made more than
        once); returns the repeats read from the project."""
        run, n = self.wizard.run, self.choices.repeats
        repeats = self.session.repeats_of(run) if run is not None else []
        return show_repeats(self.stability_label, n if run is not None else 0, repeats,
                            stability, stability_lines,
                            "score the texts again to finish the others.")

    def refresh(self) -> None:
        run = self.wizard.run
        self.fill_stability()
        if run is not None:
            self.results.set_run_lines(self._run_lines(run))
            self.results.set_out_of_date(self.wizard.out_of_date(run))
        refresh_if_shown(self.results.tabs, self.conditions)

    def shows_next(self) -> bool:
        return False

    def show_run(self, run: ScoringRun) -> None:
        """Show a scoring run (from a finished scoring or from the project), saying which run
        it is and whether it still matches the current choices, and compute the agreement in
        the executor."""
        self.wizard.run = run
        self.wizard.agreement = []
        self.results.set_run(run, lines=self._run_lines(run),
                             include_samples=self.choices.include_samples,
                             out_of_date=self.wizard.out_of_date(run))
        self.fill_stability()
        self.wizard.show_page("results")
        self._compute_agreement()

    def _ask_export_checklists(self) -> None:
        path = self.wizard.pages["checklist"].ask_checklist_export_path()
        if path:
            self.wizard.export_checklists(path)

    def _run_lines(self, run: ScoringRun) -> list[tuple[str, str]]:
        from core.llm.identity import made_with

        lines = self.session.run_lines(run)
        # which profile made them (its settings), as the page says it
        profiles = self.wizard.main_window.settings.profiles
        return [(key, made_with(profiles, run.model_used) if key == "Model" and run.model
                 else value) for key, value in lines]

    def _compute_agreement(self) -> None:
        run = self.wizard.run
        if run is None or not any(s.human is not None for s in run.scores):
            return
        def compute(progress: Progress, cancel: CancelToken) -> Any:
            progress.start("Correlating with the human scores", total=1)
            results = self.session.agreement(run)
            progress.advance(1)
            return results

        self.results.agreement_panel.show()
        self.results.agreement_label.setText("Computing the agreement…")
        self.wizard.run_background(self.results.agreement_panel, compute,
                                   title="Computing the agreement",
                                   on_done=partial(self._agreement_done, run), what="agreement")

    @Slot(bool)
    def set_include_samples(self, include: bool) -> None:
        """Keep (or leave out) the think-aloud samples in the agreement, and compute it again."""
        if include == self.choices.include_samples:
            return
        self.choices.include_samples = include
        self._save()
        if self.wizard.run is not None:
            self.results.set_run_lines(self._run_lines(self.wizard.run))
            self._compute_agreement()

    def _agreement_done(self, run: ScoringRun, outcome: RunOutcome) -> None:
        if outcome.finished and run is self.wizard.run:
            self.wizard.agreement, rows = outcome.result
            self.results.agreement_panel.hide()
            self.results.set_agreement(rows)

    def ask_results_path(self) -> str | None:
        return save_file(self, "Export the InteractEval results", "interacteval.xlsx")

    @Slot()
    def _ask_export_results(self) -> None:
        ask_then(self.ask_results_path, self.export_results)

    def export_results(self, path: str | Path) -> Any:
        """Write the results workbook (Scores, Answers, Checklists, Attributes, Agreement).
        Results that no longer match the current choices are not exported."""
        if self.wizard.run is None:
            return None
        reasons = self.wizard.out_of_date(self.wizard.run)
        if reasons:
            self.results.set_out_of_date(reasons)
            self.wizard.main_window.status("Not exported: the results are out of date.")
            return None
        target = xlsx_path(path)
        self.fill_stability()
        self.results.export_panel.show()
        return self.wizard.run_background(
            self.results.export_panel,
            plain_step(self.session.export, target, who=self.who, run=self.wizard.run,
                       agreement=self.wizard.agreement or None),
            title=f"Exporting to {target.name}",
            on_done=partial(self.wizard.exported, target, self.results.export_panel),
            what="export")
