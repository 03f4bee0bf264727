"""Pages 6 and 7: run the debates (options, progress per debate), then the results and their
export."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from core.llm.context import refusal
from core.llm.estimate import compare_lines
from core.majeval.model import DebateSettings
from core.majeval.session import lonely_groups, stability_lines
from core.project import ProjectError
from desktop.calibration import MEASURING, calibrate
from desktop.errors import spawn
from desktop.file_dialogs import ask_then, save_file
from desktop.glossary import explain
from desktop.majeval.conditions_tab import ConditionsTab
from desktop.majeval.models import Col, RowsModel
from desktop.majeval.pages._base import MajEvalPage, count
from desktop.majeval.persona_editor import lonely_text
from desktop.majeval.results import ResultsView, table_view
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.widgets import (
    actual_label,
    estimate_label,
    hint_label,
    intro_label,
    note_box,
    page_layout,
    refresh_if_shown,
    refresh_when_shown,
    repeats_spin,
    set_times_suffix,
    show_repeats,
    stability_label,
    xlsx_path,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.llm import Usage
    from core.llm.estimate import Estimate
    from core.majeval.session import EvaluationRun
    from core.runs import CancelToken, Progress
    from desktop.majeval.wizard import MajEvalWizard

__all__ = ["ResultsPage", "RunPage"]


class RunPage(MajEvalPage):
    KEY, TITLE = "run", "Run"

    def __init__(self, wizard: MajEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self.rounds_spin = QSpinBox()
        self.rounds_spin.setRange(1, 20)
        self.rounds_spin.setToolTip("The debate stops after this many rounds (each persona "
                                    "speaking once is a round), or earlier when nobody "
                                    "disagrees.")
        self.rounds_spin.valueChanged.connect(self._options_chosen)
        self.no_debate_check = QCheckBox("No debate: keep the personas' first scores (faster, "
                                         "cheaper; for comparison)")
        self.no_debate_check.setToolTip(explain("no debate"))
        self.no_debate_check.toggled.connect(self._options_chosen)
        self.simple_roles_check = QCheckBox("Simple roles: one sentence per persona instead of "
                                            "the five attributes (for comparison)")
        self.simple_roles_check.setToolTip(
            "Each persona is told only its name, its group with the group's description, and "
            "its specialty, in one sentence (for example: You are Ana Ruiz, one of the "
            "teachers (preschool teachers who often read books to their students); your "
            "specialty: early literacy). " + explain("simple roles"))
        self.simple_roles_check.toggled.connect(self._options_chosen)
        self.repeats_spin = repeats_spin()
        self.repeats_spin.valueChanged.connect(self._options_chosen)
        self.run_profile = wizard.profile_combo()
        options = QGroupBox("Options")
        form = QFormLayout(options)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("Model:", self.run_profile)
        form.addRow("Debate rounds at most:", self.rounds_spin)
        form.addRow("", self.no_debate_check)
        form.addRow("", self.simple_roles_check)
        form.addRow("Repeat each call:", self.repeats_spin)
        self.run_summary = QLabel()
        self.run_summary.setWordWrap(True)
        self.run_summary.setTextFormat(Qt.TextFormat.RichText)
        self.estimate_label = estimate_label(
            "Counted from our prompts filled with your items and personas. The number of debate "
            "turns depends on how soon the personas agree, so the calls are given as a range. "
            "Tokens are the pieces of text a model reads and writes; the price comes from the "
            "price list shipped with EvalDesk (no cost for a model on this computer).")
        self.actual_label = actual_label()
        self._estimate_generation = 0
        self.estimate: Estimate | None = None
        """The estimate shown for the current choices (None while it is being worked out)."""
        self._estimate_of_run: Estimate | None = None
        #: Where each running debate is (unit key -> a line), filled while the run goes.
        self.live: dict[str, str] = {}
        self.run_button = QPushButton("Start the debates")
        self.run_button.setObjectName("primaryButton")
        self.run_button.clicked.connect(self.start_run)
        self.run_panel = RunPanel()
        self.run_usage = hint_label()
        self.run_usage.hide()
        self.lonely_notice = note_box()
        self.lonely_notice.hide()
        self.units_model = RowsModel([Col("item", "Item"), Col("group", "Group"),
                                      Col("status", "Status"), Col("note", "Note", missing="")])
        self.units_view = table_view(self.units_model)
        self._units_timer = QTimer(self)
        self._units_timer.setInterval(700)
        self._units_timer.timeout.connect(self._fill_units)
        row = QHBoxLayout()
        summary = QVBoxLayout()
        summary.addWidget(self.run_summary)
        summary.addWidget(self.estimate_label)
        summary.addWidget(self.actual_label)
        row.addLayout(summary, 1)
        row.addWidget(self.run_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = page_layout(
            self, "Run the debates",
            "For every item, the personas of each group first judge it alone, then discuss it: "
            "a coordinator gives every persona the floor, letting the one addressed by name or "
            "the one who disagrees most speak next, until nobody disagrees or the rounds are "
            "used up. A group of one persona cannot debate: its persona's own judgement counts. "
            "A neutral summary of each group's views and the group's mean score follow. "
            "Finished debates are saved one by one; after Cancel (or a crash) the run goes on "
            "where it stopped.")
        layout.addWidget(options)
        layout.addWidget(self.lonely_notice)
        layout.addLayout(row)
        layout.addWidget(self.run_panel)
        layout.addWidget(self.run_usage)
        layout.addWidget(self.units_view, 1)

    def refresh(self) -> None:
        self.fill()

    def next_state(self) -> tuple[bool, str]:
        if self.wizard.run is None:
            return False, "Run the debates to see results."
        return True, ""

    def go_next(self) -> bool:
        wizard = self.wizard
        if wizard.run is not None and wizard.results.run is not wizard.run:
            wizard.show_run(wizard.run)
            return True
        return False

    def busy_changed(self, busy: str) -> None:
        wizard = self.wizard
        self.run_button.setEnabled(not busy and bool(wizard.editor.personas)
                                   and bool(self.choices.item_list)
                                   and wizard.chosen_profile() is not None)
        if busy == "run":
            self.run_button.setText("Debating…")

    @Slot()
    def _options_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        self.choices.settings = DebateSettings(rounds=self.rounds_spin.value(),
                                               no_debate=self.no_debate_check.isChecked(),
                                               simple_roles=self.simple_roles_check.isChecked())
        self.choices.repeats = self.repeats_spin.value()
        self.actual_label.hide()
        self.save()
        self.fill()

    def fill(self) -> None:
        wizard, choices = self.wizard, self.choices
        self._filling = True
        s = choices.settings
        self.rounds_spin.setValue(s.rounds)
        self.no_debate_check.setChecked(s.no_debate)
        self.simple_roles_check.setChecked(s.simple_roles)
        self.repeats_spin.setValue(choices.repeats)
        set_times_suffix(self.repeats_spin)
        self._filling = False
        done, total = self.session.run_progress()  # a repeat still to run is work to do
        groups = len(wizard.editor.groups())
        dims = ", ".join(d.name for d in choices.dimensions)
        text = (f"<b>{count(len(choices.item_list), 'item')} × {count(groups, 'group')} = "
                f"{count(total // max(1, choices.repeats), 'debate')}</b>"
                + (f" (each made {choices.repeats} times: {total} in all)"
                   if choices.repeats > 1 else "")
                + f", scoring {dims} on {choices.scale.describe()}.")
        if done and done < total:
            text += (f"<br>{done} of these debates are already finished with these choices and "
                     "will not be repeated.")
        elif total and done == total:
            text += ("<br>All debates are finished for these personas, items, options and "
                     "model.")
        self.run_summary.setText(text)
        if wizard.busy != "run":
            self.run_button.setText("Continue the debates" if 0 < done < total else
                                    "Run again (failed debates only)" if total and done == total
                                    else "Start the debates")
        lonely = lonely_groups(wizard.editor.personas)
        self.lonely_notice.setText(lonely_text(lonely))
        self.lonely_notice.setVisible(bool(lonely))
        self._fill_units()
        if wizard.busy != "run":
            self.update_estimate()
        wizard.check_results_current()
        self.busy_changed(wizard.busy)

    def update_estimate(self) -> Any:
        """Work out the calls, cost and time of the debates still to run (in a worker thread:
        the token counter takes a moment) and show them; returns the task (tests await it)."""
        profile = self.wizard.chosen_profile()
        self._estimate_generation += 1
        generation = self._estimate_generation
        self.estimate = None
        if profile is None or not self.wizard.editor.personas or not self.choices.item_list:
            self.estimate_label.setText("")
            return None
        self.estimate_label.setText("Estimating the calls, cost and time…")
        project, snapshot = self.project, self.session.snapshot()

        async def work() -> None:
            await calibrate(project, profile, lambda: self.estimate_label.setText(MEASURING))
            if generation != self._estimate_generation:
                return
            loop = asyncio.get_running_loop()
            try:
                est: Estimate | None = await loop.run_in_executor(None, snapshot.estimate)
            except ValueError as exc:
                est, problem = None, str(exc)
            except ProjectError:
                return  # the project was closed meanwhile (another one was opened)
            else:
                problem = ""
            if generation != self._estimate_generation or getattr(project, "closed", False):
                return  # the choices changed meanwhile (a newer estimate is on its way)
            self.estimate = est
            self.estimate_label.setText(estimate_text(est) if est is not None else problem)

        return spawn(work(), "estimating the run")

    def stop_timers(self) -> None:
        self._units_timer.stop()

    @Slot()
    def _fill_units(self) -> None:
        self.units_model.set_rows(self.session.unit_statuses(live=self.live))

    @Slot()
    def start_run(self) -> Any:
        """Run the debates (after the notice when the items would leave this computer)."""
        wizard = self.wizard
        if wizard.busy:
            return None
        return wizard.after_cloud_notice(wizard.chosen_profile(), self._start_run)

    def _start_run(self) -> Any:
        wizard = self.wizard
        wizard.editor.flush()
        self._estimate_of_run = self.estimate

        async def step(progress: Progress, cancel: CancelToken) -> EvaluationRun:
            if self._estimate_of_run is None:  # not shown yet
                self._estimate_of_run = await asyncio.get_running_loop().run_in_executor(
                    None, self.session.snapshot().estimate)
            self.live.clear()
            return await self.session.run(progress=progress, cancel=cancel,
                                          estimate=self._estimate_of_run, live=self.live)

        self._units_timer.start()
        _done, total = self.session.run_progress()
        return wizard.start_step("run", self.run_panel, step,
                                 f"Debating {total // max(1, self.choices.repeats)} times",
                                 self._run_done, usage_label=self.run_usage)

    def _run_done(self, outcome: RunOutcome) -> None:
        self._units_timer.stop()
        self.live.clear()  # a stopped run has no debate running
        est, usage = self._estimate_of_run, self.session.usage
        self.fill()
        if est is not None and usage is not None:
            self.actual_label.setText(actual_text(est, usage))
            self.actual_label.show()
        if outcome.finished:
            self.wizard.show_run(outcome.result)


def estimate_text(est: Estimate) -> str:
    """The estimate in plain words for the run page (why the run will be refused, when an
    item is too long for the model)."""
    if getattr(est, "too_long", None):
        return refusal(est.too_long)
    text = est.summary() + "."
    if est.calls_max:
        text = "Before you start: " + text[0].lower() + text[1:]
        text += (f" Time based on {est.latency_s:.1f} seconds per call "
                 f"({est.latency_source}), {est.concurrency} at a time.")
    return text


def actual_text(est: Estimate, usage: Usage) -> str:
    """The estimate beside what the run used, in plain words."""
    return "This run, estimated beside actual: " + "; ".join(compare_lines(est, usage)) + "."


class ResultsPage(MajEvalPage):
    KEY, TITLE = "results", "Results"

    def __init__(self, wizard: MajEvalWizard) -> None:
        super().__init__(wizard)
        self.results = ResultsView()
        self.results.profiles = lambda: wizard.main_window.settings.profiles
        self.results.export_button.clicked.connect(self._ask_export)
        self.conditions = ConditionsTab(wizard)
        self.results.tabs.addTab(self.conditions, "Conditions")
        refresh_when_shown(self.results.tabs, self.conditions)
        self.results_intro = intro_label(
            "The scores of each stakeholder group per item, the groups' written feedback and "
            "the full debate (who spoke, and why the coordinator chose them), how the debate "
            "changed the scores, and how well the personas agree with each other and with "
            "people's ratings. Export writes all of it to one Excel workbook.")
        self.stability_label = stability_label()
        layout = page_layout(self, "Results")
        layout.addWidget(self.results_intro)
        layout.addWidget(self.stability_label)
        layout.addWidget(self.results, 1)

    def fill_stability(self) -> None:
        """Show how alike the repeats of the current debates are (when each call was made
        more than once)."""
        wizard, choices = self.wizard, self.choices
        repeats = self.session.load_repeats() if wizard.run is not None else []
        show_repeats(self.stability_label, choices.repeats if wizard.run is not None else 0,
                     repeats, self.session.stability, stability_lines,
                     "run the debates again to finish the others.")

    def refresh(self) -> None:
        self.fill_stability()
        self.wizard.check_results_current()
        refresh_if_shown(self.results.tabs, self.conditions)

    def reachable(self) -> bool:
        return self.wizard.run is not None

    def shows_next(self) -> bool:
        return False

    def ask_export_path(self) -> str | None:
        """Ask where to save the results workbook (tests replace this)."""
        return save_file(self, "Export the results", "majeval-results.xlsx")

    @Slot()
    def _ask_export(self) -> None:
        ask_then(self.ask_export_path, self.export)

    def export(self, path: str | Path) -> Any:
        wizard = self.wizard
        if wizard.run is None:
            return None
        wizard.check_results_current()
        if self.results.out_of_date:  # never written as if they were current
            self.results.export_message.setText(
                "Not exported: these results are out of date. Run the debates again first.")
            self.results.export_message.show()
            return None
        target = xlsx_path(path)
        self.fill_stability()
        self.results.export_panel.show()
        run, snapshot, who = wizard.run, self.session.snapshot(), wizard.who

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                self.results.export_panel.hide()
                self.results.show_export(str(target))
                wizard.main_window.status(f"Saved {target}")

        def step(progress: Progress, cancel: CancelToken) -> Path:
            return snapshot.export(target, who=who, run=run, progress=progress, cancel=cancel)

        return wizard.start_step("export", self.results.export_panel, step,
                                 f"Exporting to {target.name}", done)
