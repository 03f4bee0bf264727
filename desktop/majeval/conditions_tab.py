"""The results' "Conditions" tab: MAJ-Eval's conditions side by side (full personas after and
before the debate, simple roles, a single judge), how well each agrees with the people's
ratings, and each against the full personas with a paired test. One button runs the
conditions still missing (with the estimate of what that costs first). The work is the
session's (:meth:`core.majeval.session.MajEvalSession.run_conditions` and the calls beside
it); this widget only collects the choice and shows the table."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.llm.context import refusal
from core.majeval.session import (
    CONDITIONS,
    ConditionResult,
    comparison_rows,
    comparison_summary,
    stability_lines,
)
from desktop.glossary import explain
from desktop.latest import Latest
from desktop.majeval.models import Col, RowsModel
from desktop.majeval.results import table_view
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.widgets import check_row, hint_label

if TYPE_CHECKING:  # pragma: no cover
    from core.llm.estimate import Estimate
    from core.runs import CancelToken, Progress
    from desktop.majeval.wizard import MajEvalWizard

__all__ = ["ConditionsTab"]

NO_HUMANS = ("The items have no human ratings, so there is nothing to compare with. Choose "
             "the rating columns on the Items page.")
#: Bootstrap resamples on screen (the workbook of the command line uses 2000).
SCREEN_BOOT = 1000


def comparison_columns() -> list[Col]:
    return [
        Col("condition", "Condition"), Col("group", "Group"), Col("dimension", "Dimension"),
        Col("human_dimension", "Human rating"),
        Col("value", "Spearman", "Spearman's rho with the human ratings (sign kept: below 0 "
            "the condition ranks the items the opposite way)", digits=2),
        Col("ci", "95% CI", "bootstrap confidence interval of Spearman's rho"),
        Col("n", "n", "items with both a score and a human rating"),
        Col("vs_full_difference", "Difference from full personas",
            "this condition's rho minus that of the full personas after debate, on the items "
            "both scored", digits=2),
        Col("vs_full_ci", "95% CI of the difference",
            "paired bootstrap over the items both conditions scored; an interval that "
            "includes 0 means no clear difference"),
        Col("vs_full_p", "p", "two-sided p-value of the paired bootstrap", digits=3),
        Col("vs_full_note", "Note", missing=""),
    ]


def _interval(low: Any, high: Any) -> str:
    if low is None or high is None:
        return ""
    return f"{low:.2f} to {high:.2f}"


def screen_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The comparison rows with their intervals as text, for the table."""
    out = []
    for r in rows:
        row = dict(r)
        row["ci"] = _interval(r["ci_low"], r["ci_high"])
        row["vs_full_ci"] = _interval(r["vs_full_ci_low"], r["vs_full_ci_high"])
        if r.get("warning"):
            row["vs_full_note"] = "; ".join(p for p in ("⚠ may not be reading the items",
                                                        r["vs_full_note"]) if p)
        out.append(row)
    return out


class ConditionsTab(QWidget):
    """Shown as a tab of the MAJ-Eval results."""

    def __init__(self, wizard: MajEvalWizard, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.wizard = wizard
        tips = {"full": "The personas as written, scores after their debate (the method).",
                "pre": "The same personas' own first scores, before any debate (no extra "
                       "calls: they come from the same debates).",
                "simple": "Each persona told only one sentence about who they are, then the "
                          "same debate (the paper's ablation).",
                "single-judge": "One model scores each item once, with the dimensions' "
                                "definitions and fixed evaluation steps (the simple "
                                "alternative the paper compares with)."}
        self.checks, choose = check_row("Compare:", CONDITIONS, tips, self.refresh)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.run_button = QPushButton("Run the missing conditions")
        self.run_button.setObjectName("primaryButton")
        self.run_button.clicked.connect(self.start_run)
        self.run_panel = RunPanel()
        self.run_panel.hide()
        self.model = RowsModel(comparison_columns())
        self.view = table_view(self.model)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setToolTip(explain("Spearman"))
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.run_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        about = hint_label(
            "Is the method better than the simple alternative on your own items? Each "
            "condition scores the same items; the table shows how well each agrees with your "
            "ratings (Spearman's rho per group and dimension) and, for each condition, the "
            "difference from the full personas with a paired test. Conditions already run are "
            "kept in the project and cost nothing to show again.")
        about.setToolTip(explain("Spearman"))
        layout.addWidget(about)
        layout.addLayout(choose)
        layout.addLayout(top)
        layout.addWidget(self.run_panel)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.summary)
        self._latest = Latest()
        self.rows: list[dict[str, Any]] = []
        self.missing: list[str] = []
        self.estimate: Estimate | None = None
        self.stability_text: list[str] = []

    def names(self) -> list[str]:
        return [n for n, box in self.checks.items() if box.isChecked()]

    @Slot()
    def refresh(self, *_args: Any) -> Any:
        """Read the kept conditions, then (worker thread) the comparison and the estimate of
        the missing ones; returns the task (tests await it)."""
        wizard = self.wizard
        self._latest.start()
        profile = wizard.chosen_profile()
        names = self.names()
        project, session = wizard.project, wizard.session.snapshot()
        choices = session.choices
        if profile is None or not names or not choices.item_list:
            self.status.setText("Choose at least one condition." if not names else
                                "Choose the items and a model first.")
            self.run_button.setEnabled(False)
            return None
        self.status.setText("Reading the conditions kept in the project…")
        self.run_button.setEnabled(False)

        Found = tuple[dict[str, ConditionResult], list[str], list[dict[str, Any]],
                      "Estimate | None"]

        def work() -> Found:
            have = session.load_conditions(names)
            missing = session.missing_conditions(names)
            kept = session.load_repeats(names)
            self.stability_text = [f"Asked {len(kept)} times: {line}" for line in
                                   stability_lines(session.stability(kept))]
            rows = comparison_rows(have, choices.item_list, [d.name for d in choices.dimensions],
                                   n_boot=SCREEN_BOOT) if have else []
            est = None
            if missing and session.personas():
                est = session.estimate_conditions(missing)
            return have, missing, rows, est

        def show(result: Found) -> None:
            have, missing, rows, est = result
            self.rows, self.missing, self.estimate = rows, missing, est
            self.model.set_rows(screen_rows(rows))
            kept = ", ".join(CONDITIONS[n] + ("" if have[n].complete else
                                                  f" ({len(have[n].failed)} items failed)")
                             for n in have) or "none yet"
            text = (f"<b>Kept in the project</b> (scored by {escape(profile.model)}, "
                    f"{len(choices.item_list)} items): {kept}.")
            if choices.repeats > 1:
                text += (f" Each call is made {choices.repeats} times (the Run page's choice); the "
                         "table shows the first repeat.")
            if missing:
                text += (" <b>Still to run:</b> " + ", ".join(CONDITIONS[n] for n in missing)
                         + ".")
                if est is not None:
                    text += f"<br>Running them: {est.summary()}."
                    if est.too_long:  # refused before any call: say why
                        text += "<br>" + escape(refusal(est.too_long)).replace("\n", "<br>")
            self.status.setText(text)
            lines = comparison_summary(rows)
            if rows and not any(r["value"] is not None for r in rows):
                lines = [NO_HUMANS]
            elif rows:
                lines = [("Compared on Spearman's rho pooled over all items (as MAJ-Eval's "
                          "paper does), with the paired test over the items; the last row of "
                          "each dimension is the items' length alone, the baseline to beat."),
                         *lines, *(f"⚠ {r['warning']}" for r in rows if r.get("warning"))]
            self.summary.setText("\n".join([*lines, *self.stability_text]))
            self.run_button.setEnabled(bool(missing) and not wizard.busy)

        return self._latest.run(project, work, show, "comparing the conditions")

    @Slot()
    def start_run(self) -> Any:
        wizard = self.wizard
        if wizard.busy or not self.missing:
            return None
        return wizard.after_cloud_notice(wizard.chosen_profile(), self._start_run)

    def _start_run(self) -> Any:
        wizard = self.wizard
        wizard.editor.flush()
        names = list(self.missing)
        self.run_panel.show()

        async def step(progress: Progress, cancel: CancelToken) -> dict[str, ConditionResult]:
            return await wizard.session.run_conditions(names, progress=progress, cancel=cancel)

        def done(_outcome: RunOutcome) -> None:
            wizard.pages["run"].fill()
            self.refresh()

        return wizard.start_step("conditions", self.run_panel, step,
                                 "Running the missing conditions", done)
