"""Steps 4 and 5 of the AQER wizard: score the answers, then show and export the results."""

from __future__ import annotations

from functools import partial
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
)

from core.aqer.model import AqerCondition
from core.aqer.session import StoredResult
from core.embeddings import EmbeddingError, check_model_folder
from core.words import plain_number
from desktop.aqer.pages._base import AqerPage, session_step
from desktop.aqer.results import ResultsView
from desktop.file_dialogs import ask_then, save_file
from desktop.glossary import explain
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.widgets import page_layout, xlsx_path

if TYPE_CHECKING:  # pragma: no cover (the wizard imports the pages)
    from core.runs import CancelToken, Progress
    from desktop.aqer.wizard import AqerWizard

__all__ = ["ResultsPage", "RunPage"]


_DEVICE_WORDS = {"auto": "automatic choice", "cpu": "the processor (CPU)",
                 "cuda": "the NVIDIA graphics card", "mps": "the Apple graphics"}


class RunPage(AqerPage):
    """What will be scored, the Score button and the progress of the run."""

    KEY, TITLE = "run", "Run"
    NEXT_TEXT = "Show results"

    def __init__(self, wizard: AqerWizard) -> None:
        super().__init__(wizard)
        self.run_summary = QLabel()
        self.run_summary.setWordWrap(True)
        self.run_summary.setTextFormat(Qt.TextFormat.RichText)
        self.run_summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.run_button = QPushButton("Score the answers")
        self.run_button.setObjectName("primaryButton")
        self.run_button.clicked.connect(self.start_run)
        self.existing_label = QLabel()
        self.existing_label.setObjectName("okText")
        self.existing_label.setWordWrap(True)
        self.existing_label.hide()
        self.run_panel = RunPanel()
        for label in (self.run_panel.stage_label, self.run_panel.detail_label):
            label.setToolTip("The baselines are simpler ways of scoring the same workers, "
                             "shown beside AQER.\n" + explain("RASA", "F1", "BLEU-1"))
        row = QHBoxLayout()
        row.addWidget(self.run_button, 0)
        row.addWidget(self.existing_label, 1)
        row.addStretch(0)
        summary_box = QGroupBox("What will be scored")
        sb = QVBoxLayout(summary_box)
        sb.addWidget(self.run_summary)
        layout = page_layout(
            self, "Score the answers",
            "EvalDesk now embeds every answer, builds a consensus answer per question, and "
            "repeats scoring and re-weighting until the scores settle. You can Cancel at any "
            "time: embedded answers are kept in the project, so running again continues where "
            "it stopped. When it finishes, the results open by themselves.")
        layout.addWidget(summary_box)
        layout.addLayout(row)
        layout.addWidget(self.run_panel)
        layout.addStretch(1)

    # ------------------------------------------------------------------ the page's protocol
    def refresh(self) -> None:
        wizard = self.wizard
        choices, check = wizard.choices, wizard.check
        s, c = choices, choices.columns
        rule = check.blank_rule if check is not None else None
        # the people it will score, counted as the results will count them
        absent_scored = (rule is not None and rule.rule == "worst"
                         and s.settings.keep_absent)
        answers = (escape(check.prepared.describe(absent_scored)) if check is not None
                   and check.prepared is not None else "the answers")
        model = s.embedding_model or "the built-in all-MiniLM-L6-v2"
        layout = "a row per answer" if c.format == "long" else f"a row per {c.wide_rows}"
        dup = {"first": "; repeated answers: the first counts",
               "last": "; repeated answers: the last counts"}.get(s.duplicates, "")
        if rule is None:
            blank = {"worst": "count as the weakest answer (your choice)",
                     "missing": "do not count (your choice)"}.get(
                s.settings.blank_answers, "decided from the answers")
        else:
            blank = ("count as the weakest answer" if rule.rule == "worst"
                     else "do not count") + (" (your choice)" if rule.chosen else
                                             f" (the answers look {rule.design})")
        ai = ("scored as extra workers" if s.settings.llm_as_workers
              else "scored against the workers")
        read = wizard.read
        header = (f", the header in row {read.header_row}" if read is not None
                  and read.header_note else "")
        self.run_summary.setText(
            f"<b>{answers}</b><br>"
            f"from {escape(s.file_name)}, sheet “{escape(s.sheet or '')}” ({layout}{dup}"
            f"{header})<br>"
            f"Embedding model: {model}, running on {_DEVICE_WORDS[s.device]}<br>"
            f"At most {s.settings.max_iterations} rounds, stop below a change of "
            f"{plain_number(s.settings.tolerance)}; baselines "
            f"{'on' if s.settings.baselines else 'off'}; AI answers {ai}"
            f"; blank answers {blank}."
        )
        stored = wizard.current_result()
        if stored is not None and not wizard.busy:
            when = stored.finished_at.replace("T", " ")[:16] if stored.finished_at else ""
            self.existing_label.setText(
                f"Results for exactly these choices are already in the project"
                f"{' (computed ' + when + ' UTC)' if when else ''}. Press “Show results”, or "
                "score again.")
            self.existing_label.show()
            self.run_button.setText("Score again")
        else:
            self.existing_label.hide()
            self.run_button.setText("Score the answers")

    def shows_next(self) -> bool:
        return self.wizard.current_result(load=False) is not None and not self.wizard.busy

    def next_state(self) -> tuple[bool, str]:
        return self.wizard.current_result(load=False) is not None, ""

    def reachable(self) -> bool:
        return self.wizard.pages["model"].reachable()

    def go_next(self) -> bool:
        stored = self.wizard.current_result()
        if stored is not None:
            self.wizard.show_result(stored)
        return True

    def busy_changed(self, busy: str) -> None:
        self.run_button.setEnabled(not busy)

    # ------------------------------------------------------------------ the run
    @Slot()
    def start_run(self) -> Any:
        """Run AQER on the current choices (in the executor); results open when it ends."""
        wizard = self.wizard
        if wizard.busy:
            return None
        self.run_button.setText("Scoring…")
        self.existing_label.hide()
        return wizard.run_step(self.run_panel, session_step(wizard.session.run),
                               title="Scoring the answers with AQER",
                               on_done=self._run_done)

    def _run_done(self, outcome: RunOutcome) -> None:
        wizard = self.wizard
        self.run_button.setText("Score the answers")
        if outcome.finished:
            wizard.show_result(outcome.result)
        else:
            self.refresh()
            wizard.update_nav()
        wizard.run_ended.emit(outcome.status)


class ResultsPage(AqerPage):
    """The result tables and charts, and Export."""

    KEY, TITLE = "results", "Results"

    def __init__(self, wizard: AqerWizard) -> None:
        super().__init__(wizard)
        self.results = ResultsView()
        self.results.export_requested.connect(self._ask_and_export)
        self.results.curve_requested.connect(self.start_curve)
        self.results.condition_requested.connect(self.add_blank_condition)
        self.results.model_condition_requested.connect(self.add_model_condition)
        layout = page_layout(
            self, "Results",
            "Each worker's score says how close their answers came to the consensus of "
            "everyone, with more trusted workers counting more. Check the Warnings tab for "
            "answers that were left out. Export saves every table in one Excel workbook.")
        layout.addWidget(self.results, 1)

    def shows_next(self) -> bool:
        return False

    def reachable(self) -> bool:
        return self.wizard.current_result(load=False) is not None

    def set_result(self, stored: StoredResult) -> None:
        session = self.wizard.session
        self.results.set_result(stored, None, session.load_workers_curve())
        self.results.set_model_choices(session.embedding_choices())
        self.start_comparison()

    def start_comparison(self) -> Any:
        """Compute the Comparison table in the executor (its bootstraps take seconds with
        hundreds of workers); the tab says so meanwhile."""
        wizard, stored = self.wizard, self.wizard.stored
        if stored is None:
            return None
        self.results.set_comparison(None)
        return wizard.run_step(self.results.condition_panel,
                               partial(wizard.session.comparison, stored),
                               title="Comparing the conditions", background=True,
                               on_done=partial(self._comparison_done, stored))

    def _comparison_done(self, stored: StoredResult, outcome: RunOutcome) -> None:
        if self.wizard.stored is not stored:
            return  # another result is shown now
        if outcome.finished:
            self.results.set_comparison(outcome.result)
        else:
            self.results.comparison_empty.setText(
                "The comparison could not be computed: "
                + (str(outcome.error) if outcome.error else outcome.status) + ".")

    # ------------------------------------------------------------------ conditions
    @Slot()
    def add_blank_condition(self) -> Any:
        """Add the other blank-answer rule as a condition and score it (in the executor)."""
        wizard, stored = self.wizard, self.wizard.stored
        if wizard.busy or stored is None:
            return None
        other = "missing" if stored.result.blank_rule == "worst" else "worst"
        return self._add_condition(AqerCondition(blank_answers=other))

    def ask_model_folder(self) -> str | None:
        """Ask for a sentence-transformers model folder (tests replace this)."""
        return QFileDialog.getExistingDirectory(
            self, "Choose a sentence-transformers model folder to compare") or None

    @Slot(object)
    def add_model_condition(self, condition: Any) -> Any:
        """Add another embedding model as a condition (None: ask for a folder) and score it
        (in the executor): each text is embedded once by that model, kept in the project."""
        wizard = self.wizard
        if wizard.busy or wizard.stored is None:
            return None
        if condition is None:
            folder = self.ask_model_folder()
            if not folder:
                return None
            try:
                check_model_folder(folder)
            except EmbeddingError as exc:
                self.results.model_problem.setText(f"{folder} was not added: {exc}")
                self.results.model_problem.show()
                return None
            condition = AqerCondition(embedding_model=folder)
        return self._add_condition(condition)

    def _add_condition(self, condition: Any) -> Any:
        wizard = self.wizard
        self.results.model_problem.hide()
        session = wizard.session
        session.add_condition(condition)
        self.results.condition_button.setEnabled(False)
        self.results.model_button.setEnabled(False)
        self.results.condition_panel.show()
        step = session_step(partial(session.run_conditions, session.condition_names()))
        return wizard.run_step(self.results.condition_panel, step,
                               title=f"Scoring the condition {condition.label()}",
                               on_done=self._condition_done)

    def _condition_done(self, outcome: RunOutcome) -> None:
        self.results.condition_button.setEnabled(True)
        self.results.model_button.setEnabled(True)
        if outcome.finished:
            self.start_comparison()

    # ------------------------------------------------------------------ how many workers
    @Slot()
    def start_curve(self) -> Any:
        """Compute "how many workers do I need?" for the current choices (in the executor)."""
        wizard = self.wizard
        if wizard.busy:
            return None
        self.results.curve_button.setEnabled(False)
        self.results.curve_panel.show()
        return wizard.run_step(self.results.curve_panel,
                               session_step(wizard.session.run_workers_curve),
                               title="Scoring random panels of workers",
                               on_done=self._curve_done)

    def _curve_done(self, outcome: RunOutcome) -> None:
        if outcome.finished:
            self.results.set_curve(outcome.result)
        else:
            self.results.curve_button.setEnabled(True)

    # ------------------------------------------------------------------ export
    def ask_export_path(self) -> str | None:
        """Ask where to save the results workbook (tests replace this)."""
        choices = self.wizard.choices
        base = (Path(choices.path).stem if choices.path else "answers") + "-aqer.xlsx"
        return save_file(self, "Export the AQER results", base)

    @Slot()
    def _ask_and_export(self) -> None:
        ask_then(self.ask_export_path, self.export)

    def export(self, path: str | Path) -> Any:
        """Write the results workbook to ``path`` (in the executor)."""
        stored = self.wizard.stored
        if stored is None:
            return None
        target = xlsx_path(path)
        self.results.export_panel.show()
        self.results.export_message.hide()
        self.results.export_button.setEnabled(False)
        session, who = self.wizard.session, self.wizard.who
        curve, table = self.results.curve, self.results.comparison

        def step(progress: Progress, cancel: CancelToken) -> Path:
            return session.export(target, who=who, stored=stored, curve=curve, table=table,
                                  progress=progress, cancel=cancel)

        return self.wizard.run_step(
            self.results.export_panel, step,
            title=f"Exporting to {target.name}",
            on_done=lambda outcome: self._export_done(outcome, target))

    def _export_done(self, outcome: RunOutcome, target: Path) -> None:
        self.results.export_button.setEnabled(True)
        if outcome.finished:
            self.results.export_panel.hide()
            self.results.show_export(str(target))
            self.wizard.main_window.status(f"Saved {target}")
