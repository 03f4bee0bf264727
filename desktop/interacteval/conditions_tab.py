"""The results' "Conditions" tab: InteractEval's conditions side by side (checklists built from
the people's notes only, the models' think-aloud only, both; optionally a single judge with
no checklist), how well each agrees with the human scores (Spearman per source document,
averaged, as the paper reports it) and each against "both" with a paired test. One button
runs the conditions still missing, after the estimate of what that costs; an export writes
the "Comparison" workbook. Everything runs through the wizard's session (the same
``run_conditions`` and ``export_conditions`` as ``evaldesk checklist compare``); this widget only
collects the choice and shows the table."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from core.interacteval.session import (
    CONDITIONS,
    PER_DOCUMENT,
    ConditionRun,
    ConditionsView,
    comparison_summary,
    condition_stability_lines,
    how_compared,
)
from core.words import count
from desktop.file_dialogs import ask_then, save_file
from desktop.glossary import explain
from desktop.latest import Latest
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.views import Column, FrameModel, table_view
from desktop.widgets import (
    add_parts,
    check_row,
    fit_columns,
    hbox,
    hint_label,
    push_button,
    repeats_spin,
    rich_label,
    set_times_suffix,
    show_stability,
    stability_label,
    xlsx_path,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.interacteval.model import TextItem
    from core.llm import Usage
    from core.llm.estimate import Estimate
    from core.runs import CancelToken, Progress
    from desktop.interacteval.wizard import InteractEvalWizard

__all__ = ["COLUMNS", "ConditionsTab", "screen_rows"]
NO_HUMANS = ("The texts have no human scores, so there is nothing to compare with. Choose the "
             "human score columns on the Score page.")
TIPS = {
    "human": "A checklist built from the people's think-aloud notes only (no model thinks "
             "aloud).",
    "ai": "A checklist built from the models' think-aloud only (the people's notes are left "
          "out).",
    "combined": "A checklist built from both, as the method does (the condition the others "
                "are compared with).",
    "single-judge": "No checklist: the scoring model reads the dimension's definition and "
                    "gives each text one score from 1 to 5 (one call per text and dimension). "
                    "The simple alternative to compare with.",
}
COLUMNS = [
    Column("condition", "Condition"),
    Column("dimension", "Dimension"),
    Column("compared", "Compared", "text",
           "Per source document, averaged (as the paper reports it) when at least 10 source "
           "documents have two or more texts scored differently by people; else pooled over "
           "all texts (the line under the table says why)."),
    Column("value", "Spearman", "text",
           "Spearman's rho with the human scores, compared as the Compared column says (below "
           "0 the condition ranks the texts the opposite way)", "undefined"),
    Column("ci", "95% CI", "text", "bootstrap confidence interval (over source documents, or "
           "over texts when pooled)", "—"),
    Column("documents", "Documents", "int", "source documents with texts to correlate", "—"),
    Column("difference", "Difference from both", "text",
           "this condition's rho minus that of the checklist from both, on what both scored",
           "—"),
    Column("difference_ci", "95% CI of the difference", "text",
           "paired bootstrap (over source documents, or over texts when pooled); an interval "
           "that includes 0 means no clear difference", "—"),
    Column("p", "p", "p", "two-sided p-value of the paired bootstrap", "—"),
    Column("n", "n", "int", "source documents (or texts, when pooled) both conditions scored",
           "—"),
    Column("note", "Note", "text", "", ""),
]


def _number(value: Any) -> str | None:
    return None if value is None else f"{value:.2f}"


def _interval(low: Any, high: Any) -> str | None:
    return None if low is None or high is None else f"{low:.2f} to {high:.2f}"


def screen_rows(rows: list[dict[str, Any]]) -> list[list[Any]]:
    """The comparison rows (``core.interacteval.conditions.comparison_rows``) as the table shows
    them, numbers rounded to 2 decimals."""
    return [[r["condition"], r["dimension"], _compared(r["compared"]), _number(r["value"]),
             _interval(r["ci_low"], r["ci_high"]), r["documents"],
             _number(r["vs_combined_difference"]),
             _interval(r["vs_combined_ci_low"], r["vs_combined_ci_high"]),
             r["vs_combined_p"], r["vs_combined_n"],
             "; ".join(p for p in (("⚠ may not be reading the texts" if r["warning"] else ""),
                                   r["vs_combined_note"] or "") if p)]
            for r in rows]


def _compared(level: str) -> str:
    return "per source document" if level == PER_DOCUMENT else "pooled over texts"


def short_summary(lines: list[str]) -> list[str]:
    """The summary lines, or one line when every comparison failed for the same reason (too
    few source documents, typically), instead of repeating it per condition and dimension."""
    import re

    marker = re.compile(r" cannot be compared(?: against your ratings of [^:]*)?: ")
    reasons = {marker.split(line, 1)[1] for line in lines if marker.search(line)}
    if len(lines) > 1 and len(reasons) == 1 and all(marker.search(line) for line in lines):
        return ["No paired test against the checklist from both: " + reasons.pop()]
    return lines


def actual_text(estimate: Estimate | None, usage: Usage | None) -> str:
    """The estimate of a run beside the calls and tokens its models used, in plain words
    ("" without an estimate or usage)."""
    from core.llm.estimate import compare_lines

    if estimate is None or usage is None:
        return ""
    return "The last run, estimated beside actual: " + "; ".join(
        compare_lines(estimate, usage)) + "."


class ConditionsTab(QWidget):
    """Shown as a tab of the InteractEval results."""

    def __init__(self, wizard: InteractEvalWizard, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.wizard = wizard
        # the baseline (a single judge) is optional
        self.checks, choose = check_row("Compare:", CONDITIONS, TIPS, self.refresh,
                                        unchecked=("single-judge",))
        self.repeats_spin = repeats_spin()
        self.repeats_spin.setValue(wizard.choices.condition_repeats)
        set_times_suffix(self.repeats_spin)
        self.repeats_spin.valueChanged.connect(self._repeats_chosen)
        self.status = rich_label()
        self.status.setObjectName("conditionsStatus")
        self.run_button = push_button(
            "Run the missing conditions",
            "Builds the missing checklists and scores the texts with them; what is kept "
            "already costs nothing.", self.start_run, name="primaryButton")
        self.export_button = QPushButton("Export the comparison…")
        self.export_button.setToolTip("An Excel workbook with the sheets Comparison, Checklists "
                                      "and Scores (and Stability when each call is repeated).")
        self.export_button.clicked.connect(self._ask_export)
        self.run_panel = RunPanel()
        self.run_panel.hide()
        self.model = FrameModel(COLUMNS)
        self.view = table_view(self.model, sortable=False)
        self.view.setMinimumHeight(150)  # room for the stability lines at 1280x800
        self.summary = QLabel()
        self.summary.setObjectName("conditionsSummary")
        self.summary.setWordWrap(True)
        self.summary.setToolTip(explain("Spearman"))
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top = hbox((self.status, 1), add_parts(QVBoxLayout(), [
            hbox("Repeat each call:", self.repeats_spin), self.run_button, self.export_button,
            1]))
        layout = QVBoxLayout(self)
        layout.addWidget(hint_label(
            "Is the checklist from people and models together better than either alone, or "
            "than simply asking a model for a score? Each condition scores the same texts; the "
            "table shows how well each agrees with the human scores and, for each condition, "
            "the difference from the checklist built from both, with a paired test; the last "
            "row is the texts' length alone, the baseline to beat. Conditions already run are "
            "kept in the project and cost nothing to show again."))
        layout.addLayout(choose)
        layout.addLayout(top)
        layout.addWidget(self.run_panel)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.summary)
        self.stability = stability_label()
        layout.addWidget(self.stability)
        self._latest = Latest()
        self.rows: list[dict[str, Any]] = []
        self.runs: dict[str, ConditionRun] = {}
        self.items: list[TextItem] = []
        self.missing: list[str] = []
        self.estimate: Estimate | None = None
        #: How alike each condition's repeats are (``ConditionsView.stability``).
        self.stability_entries: list[Any] = []
        self.actual = ""
        """The last run's estimate beside what it used (kept until the next run)."""
        self.export_button.setEnabled(False)
        self.run_button.setEnabled(False)

    def names(self) -> list[str]:
        return [n for n, box in self.checks.items() if box.isChecked()]

    @Slot(int)
    def _repeats_chosen(self, value: int) -> None:
        if value != self.wizard.choices.condition_repeats:
            self.wizard.choices.condition_repeats = value
            self.wizard.save_choices()
        self.refresh()

    @Slot()
    def refresh(self, *_args: Any) -> Any:
        """Read the kept conditions, the comparison and the estimate of the missing ones
        (worker thread); returns the task (tests await it)."""
        wizard = self.wizard
        session, choices = wizard.session, wizard.choices
        self._latest.start()
        names = self.names()
        found = session.condition_models()
        if not names or found is None or not choices.dimensions:
            self.status.setText("Choose at least one condition." if not names else
                                "Choose the dimensions and a model first.")
            self.run_button.setEnabled(False)
            return None
        models = found[0]
        repeats = choices.condition_repeats
        if self.repeats_spin.value() != repeats:  # another project's choice
            self.repeats_spin.blockSignals(True)
            self.repeats_spin.setValue(repeats)
            self.repeats_spin.blockSignals(False)
            set_times_suffix(self.repeats_spin)
        self.status.setText("Reading the conditions kept in the project…")
        self.run_button.setEnabled(False)

        def work() -> ConditionsView | None:
            return session.conditions_view(names)

        def show(view: ConditionsView | None) -> None:
            if view is None:
                return
            self.items, self.runs, self.rows = view.items, view.runs, view.rows
            self.missing, self.estimate = view.missing, view.estimate
            self.model.set_rows(screen_rows(view.rows))
            self.show_documents(view.rows)
            fit_columns(self.view, stretch=len(COLUMNS) - 1, max_width=300)
            text = self._status_text(models.scorer, view)
            if repeats > 1:
                text += (f"<br>Each condition's scoring is asked {repeats} times (the "
                         "checklists are built once); the table shows the first time's "
                         "scores.")
            if self.actual:
                text += "<br>" + escape(self.actual)
            self.status.setText(text)
            self.summary.setText("\n".join(self._summary_lines(view.rows)))
            entries = self.stability_entries = view.stability
            show_stability(self.stability, "\n".join(condition_stability_lines(entries)),
                           any(s.flagged for _c, _d, s in entries))
            self.run_button.setEnabled(bool(view.missing) and bool(view.items)
                                       and not wizard.busy)
            self.export_button.setEnabled(bool(view.rows))

        return self._latest.run(wizard.project, work, show, "comparing the conditions")

    @staticmethod
    def _summary_lines(rows: list[dict[str, Any]]) -> list[str]:
        lines = short_summary(comparison_summary(rows))
        if rows and not any(r["value"] is not None for r in rows):
            return [NO_HUMANS]
        return [*(f"{dim}: {line}." for dim, line in how_compared(rows)), *lines,
                *(f"⚠ {r['dimension']}: {r['warning']}" for r in rows if r["warning"])]

    def show_documents(self, rows: list[dict[str, Any]]) -> None:
        """The Documents column only when some dimension is compared per source document."""
        column = next(k for k, c in enumerate(COLUMNS) if c.key == "documents")
        self.view.setColumnHidden(column, all(r["documents"] is None for r in rows))

    @staticmethod
    def _status_text(scorer: str, view: ConditionsView) -> str:
        if not view.items:
            return ("There are no texts to score: choose the texts file on the Score page "
                    "first.")

        def kept(run: ConditionRun) -> str:
            text = run.label
            if run.problems:
                text += " (could not be built: " + "; ".join(run.problems) + ")"
            elif run.failed:
                text += f" ({count(len(run.failed), 'score')} missing)"
            return escape(text)

        est = view.estimate
        text = (f"<b>Kept in the project</b> (scored by {escape(scorer)}, "
                f"{count(len(view.items), 'text')}): "
                + (", ".join(kept(r) for r in view.runs.values()) or "none yet") + ".")
        if view.missing:
            text += (" <b>Still to run:</b> " + ", ".join(CONDITIONS[n] for n in view.missing)
                     + ".")
            if est is not None:
                text += (f"<br>Running them: {escape(est.summary())} (at most: answers "
                         "the project already has cost nothing).")
                if est.too_long:  # refused before any call: say why
                    from core.llm.context import refusal

                    text += "<br>" + escape(refusal(est.too_long)).replace("\n", "<br>")
        for name, why in view.blocked.items():
            text += f"<br><b>{escape(CONDITIONS[name])}</b> cannot run: {escape(why)}."
        return text

    @Slot()
    def start_run(self) -> Any:
        wizard = self.wizard
        if wizard.busy or not self.missing or not self.items:
            return None
        found = wizard.session.condition_models()
        if found is None:
            return None
        return wizard.after_cloud_notice(found[0].profiles["scorer"], self._start_run)

    def _start_run(self) -> Any:
        wizard = self.wizard
        session = wizard.session
        if session.condition_models() is None:
            return None
        names, estimate = list(self.missing), self.estimate
        self.run_panel.show()
        self.actual = ""

        async def step(progress: Progress, cancel: CancelToken) -> dict[str, ConditionRun]:
            return await session.run_conditions(names, progress=progress, cancel=cancel)

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                self.run_panel.hide()
            self.actual = actual_text(estimate, session.usage)
            self.refresh()

        return wizard.run_step(self.run_panel, step, title="Running the missing conditions",
                               on_done=done, busy="conditions")

    # ------------------------------------------------------------------------------ export
    def ask_export_path(self) -> str | None:
        """Ask where to save the comparison workbook (tests replace this)."""
        return save_file(self, "Export the comparison", "interacteval-comparison.xlsx")

    @Slot()
    def _ask_export(self) -> None:
        ask_then(self.ask_export_path, self.export)

    def export(self, path: str | Path) -> Any:
        """Write the "Comparison" workbook of the conditions on screen (2000 bootstrap
        resamples, as the command line) in the executor."""
        from desktop.interacteval.pages._base import plain_step

        if not self.runs:
            return None
        wizard = self.wizard
        target = xlsx_path(path)
        runs = dict(self.runs)
        self.run_panel.show()

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                self.run_panel.hide()
                self.summary.setText(self.summary.text() + f"\nSaved {target}")
                wizard.main_window.status(f"Saved {target}")

        return wizard.run_background(
            self.run_panel, plain_step(wizard.session.export_conditions, target, runs,
                                       who=wizard.who),
            title=f"Exporting the comparison to {target.name}", what="export", on_done=done)
