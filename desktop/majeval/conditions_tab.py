"""The results' "Conditions" tab: MAJ-Eval's conditions side by side (full personas after and
before the debate, simple roles, a single judge), how well each agrees with the people's
ratings, and each against the full personas with a paired test. One button runs the
conditions still missing (with the estimate of what that costs first). The logic is in
:mod:`core.majeval.conditions`; this widget only collects the choice and shows the table."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.majeval import conditions as cd
from core.majeval import session as st
from desktop.glossary import explain
from desktop.latest import Latest
from desktop.majeval.models import Col, RowsModel
from desktop.majeval.results import table_view
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.widgets import check_row, hint_label

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


def _missing_repeats(project: Any, state: Any, names: list[str], model: str,
                     missing: list[str]) -> list[str]:
    """The conditions (not in ``missing`` yet) whose repeats 1..N-1 are not all finished."""
    from core.majeval.repeats import load_repeats

    if state.repeats < 2:
        return []
    kept = load_repeats(project, state, names, state.repeats, model)
    return [n for n in names if n not in missing and (
        len(kept) < state.repeats or any(n not in r or not r[n].complete for r in kept))]


def _stability_text(project: Any, state: Any, names: list[str], model: str) -> list[str]:
    """How alike the repeats of each condition are, one line per condition (none without
    repeats)."""
    from core.majeval.repeats import load_repeats, stability, stability_lines

    if state.repeats < 2:
        return []
    kept = load_repeats(project, state, names, state.repeats, model)
    if len(kept) < 2:
        return []
    entries = stability(kept, state.item_list, [d.name for d in state.dimensions])
    return [f"Asked {len(kept)} times: {line}" for line in stability_lines(entries)]


class ConditionsTab(QWidget):
    """Shown as a tab of the MAJ-Eval results."""

    def __init__(self, wizard: Any, parent: QWidget | None = None) -> None:
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
        self.checks, choose = check_row("Compare:", cd.CONDITIONS, tips, self.refresh)
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
        self.estimate: Any = None
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
        project, state = wizard.project, wizard.state.model_copy(deep=True)
        if profile is None or not names or not state.item_list:
            self.status.setText("Choose at least one condition." if not names else
                                "Choose the items and a model first.")
            self.run_button.setEnabled(False)
            return None
        self.status.setText("Reading the conditions kept in the project…")
        self.run_button.setEnabled(False)

        def work() -> tuple[Any, list[str], list[dict[str, Any]], Any]:
            have = cd.load_conditions(project, state, names, profile)
            missing = [n for n in names if n not in have or not have[n].complete]
            missing += _missing_repeats(project, state, names, profile, missing)
            self.stability_text = _stability_text(project, state, names, profile)
            rows = cd.comparison_rows(have, state.item_list, [d.name for d in state.dimensions],
                                      n_boot=SCREEN_BOOT) if have else []
            est = None
            if missing and st.load_personas(project):
                est = cd.estimate_conditions(project, state, missing, profile,
                                             repeats=state.repeats)
            return have, missing, rows, est

        def show(result: tuple[Any, list[str], list[dict[str, Any]], Any]) -> None:
            have, missing, rows, est = result
            self.rows, self.missing, self.estimate = rows, missing, est
            self.model.set_rows(screen_rows(rows))
            kept = ", ".join(cd.CONDITIONS[n] + ("" if have[n].complete else
                                                  f" ({len(have[n].failed)} items failed)")
                             for n in have) or "none yet"
            text = (f"<b>Kept in the project</b> (scored by {escape(profile.model)}, "
                    f"{len(state.item_list)} items): {kept}.")
            if state.repeats > 1:
                text += (f" Each call is made {state.repeats} times (the Run page's choice); the "
                         "table shows the first repeat.")
            if missing:
                text += (" <b>Still to run:</b> " + ", ".join(cd.CONDITIONS[n] for n in missing)
                         + ".")
                if est is not None:
                    text += f"<br>Running them: {est.summary()}."
                    if est.too_long:  # refused before any call: say why
                        from core.llm.context import refusal

                        text += "<br>" + escape(refusal(est.too_long)).replace("\n", "<br>")
            self.status.setText(text)
            lines = cd.comparison_summary(rows)
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
        names, model = list(self.missing), wizard.model_used()
        self.run_panel.show()

        async def step(progress: Any, cancel: Any) -> Any:
            if wizard.state.repeats > 1:
                from core.majeval.repeats import run_repeats

                return (await run_repeats(wizard.project, wizard.state, wizard.llm, names,
                                          wizard.state.repeats, model=model,
                                          progress=progress, cancel=cancel))[0]
            return await cd.run_conditions(wizard.project, wizard.state, wizard.llm, names,
                                           model=model, progress=progress, cancel=cancel)

        def done(_outcome: RunOutcome) -> None:
            wizard.pages["run"].fill()
            self.refresh()

        return wizard.start_step("conditions", self.run_panel, step,
                                 "Running the missing conditions", done)
