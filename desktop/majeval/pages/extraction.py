"""Pages 3 and 4: find the stakeholders and write personas (a model step), then check and edit
the personas."""

from __future__ import annotations

import asyncio
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QLabel, QListWidget, QPushButton

from core.majeval.model import COPIED
from core.project import ProjectError
from desktop.calibration import MEASURING, calibrate
from desktop.errors import spawn
from desktop.majeval.pages._base import MajEvalPage, count
from desktop.majeval.persona_editor import PersonaEditor
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.widgets import estimate_label, hbox, hint_label, note_box, page_layout

if TYPE_CHECKING:  # pragma: no cover
    from core.majeval.session import PersonasMade
    from core.runs import CancelToken, Progress
    from desktop.majeval.wizard import MajEvalWizard

__all__ = ["ExtractionPage", "PersonasPage"]


class ExtractionPage(MajEvalPage):
    KEY, TITLE = "extraction", "Find stakeholders"

    def __init__(self, wizard: MajEvalWizard) -> None:
        super().__init__(wizard)
        self.extract_profile = wizard.profile_combo()
        self.extract_profile.currentIndexChanged.connect(lambda _i: self.update_estimate())
        self.extract_button = QPushButton("Find stakeholders and write personas")
        self.extract_button.setObjectName("primaryButton")
        self.extract_button.clicked.connect(self.start_extraction)
        self.extract_summary = QLabel()
        self.extract_summary.setWordWrap(True)
        self.extract_summary.setTextFormat(Qt.TextFormat.RichText)
        self.extract_panel = RunPanel()
        self.extract_estimate = estimate_label(
            "Calls, cost and time worked out before anything runs: one call per part of each "
            "document not read yet, one to group the stakeholders and one per group (how many "
            "groups there will be is known only afterwards, so 2 to 6 are assumed).")
        self._estimate_generation = 0
        self.extract_usage = hint_label()
        self.extract_usage.hide()
        self.failures_list = QListWidget()
        self.failures_list.setMaximumHeight(120)
        self.failures_list.hide()
        self.extract_notice = note_box()
        self.extract_notice.hide()
        page_layout(
            self, "Find the stakeholders and write personas",
            "The model reads each document in parts and lists the kinds of people it mentions "
            "and what they care about, each with a sentence from the text as evidence. It then "
            "puts similar stakeholders into groups (for example “parents” and “caregivers”) and "
            "writes one persona for each distinct point of view. You check and edit everything "
            "on the next page. A document that has not changed is not read again, and Cancel "
            "keeps what is finished.",
            hbox("Model:", self.extract_profile, 1, self.extract_button), self.extract_estimate,
            self.extract_notice, self.extract_panel, self.extract_usage, self.extract_summary,
            self.failures_list, 1)

    def refresh(self) -> None:
        self.fill()
        self.wizard.fill_outdated_notice()
        self.update_estimate()

    def update_estimate(self) -> Any:
        """The calls, cost and time of finding the stakeholders and writing the personas
        (worker thread); returns the task (tests await it)."""
        self._estimate_generation += 1
        generation = self._estimate_generation
        profile = self.wizard.chosen_profile()
        if profile is None or not self.wizard.docs:
            self.extract_estimate.setText("")
            return None
        project, snapshot = self.project, self.session.snapshot()

        async def work() -> None:
            await calibrate(project, profile, lambda: self.extract_estimate.setText(MEASURING))
            if generation != self._estimate_generation:
                return
            try:
                est = await asyncio.get_running_loop().run_in_executor(
                    None, snapshot.estimate_personas)
            except ProjectError:
                return  # the project was closed meanwhile
            if generation != self._estimate_generation or getattr(project, "closed", False):
                return
            if est is None:
                self.extract_estimate.setText("")
                return
            text = est.summary() + "."
            if est.calls_max:
                text = (f"Before you start: {text[0].lower()}{text[1:]} Time based on "
                        f"{est.latency_s:.1f} seconds per call ({est.latency_source}).")
            self.extract_estimate.setText(text)

        return spawn(work(), "estimating the persona calls")

    def next_state(self) -> tuple[bool, str]:
        if not self.wizard.editor.personas:
            return False, "There are no personas yet."
        return True, ""

    def busy_changed(self, busy: str) -> None:
        self.extract_button.setEnabled(not busy and bool(self.wizard.docs)
                                       and self.wizard.chosen_profile() is not None)
        if busy == "extraction":
            self.extract_button.setText("Working…")

    @Slot()
    def start_extraction(self) -> Any:
        """Find the stakeholders (after the notice when the documents would leave this
        computer)."""
        wizard = self.wizard
        if wizard.busy:
            return None
        return wizard.after_cloud_notice(wizard.chosen_profile(), self._start_extraction)

    def _start_extraction(self) -> Any:
        wizard = self.wizard
        wizard.pages["task"].save_task()
        wizard.pages["documents"].save_page_text()

        async def step(progress: Progress, cancel: CancelToken) -> PersonasMade:
            return await self.session.find_stakeholders(progress=progress, cancel=cancel)

        return wizard.start_step("extraction", self.extract_panel, step,
                                 "Finding stakeholders and writing personas",
                                 self._extraction_done, usage_label=self.extract_usage)

    def _extraction_done(self, outcome: RunOutcome) -> None:
        wizard = self.wizard
        wizard.editor.reload()
        self.fill()
        wizard.fill_outdated_notice()
        self.update_estimate()
        if outcome.finished:
            wizard.show_page("personas")

    def fill(self) -> None:
        editor, docs, choices = self.wizard.editor, self.wizard.docs, self.choices
        personas = editor.personas
        groups = editor.groups()
        read = [d.name for d in docs if choices.extracted.get(d.name)]
        if personas:
            self.extract_summary.setText(
                f"<b>{count(len(personas), 'persona')} in {count(len(groups), 'group')}</b> "
                f"({', '.join(groups)}) from {len(read)} of {count(len(docs), 'document')}. "
                "Press Next to check them.")
        else:
            self.extract_summary.setText("No personas yet.")
        copied = sum(1 for f in choices.failures if f.kind == COPIED)
        if copied:
            self.extract_summary.setText(
                self.extract_summary.text() + f"<br><span style='color:#b42318'><b>"
                f"{count(copied, 'part')} failed because the model repeated the instructions "
                "instead of answering</b>: check the personas closely, or try a larger "
                "model.</span>")
        if choices.too_little and personas:
            self.extract_summary.setText(
                self.extract_summary.text() + "<br><span style='color:#b42318'><b>Too little to "
                f"go on.</b> {escape(choices.too_little)}</span>")
        self.failures_list.clear()
        for f in choices.failures:
            self.failures_list.addItem(f"FAILED — {f.where}: {f.message}")
        self.failures_list.setVisible(bool(choices.failures))
        if self.wizard.busy != "extraction":
            self.extract_button.setText("Find stakeholders again" if personas else
                                        "Find stakeholders and write personas")


class PersonasPage(MajEvalPage):
    KEY, TITLE = "personas", "Personas"

    def __init__(self, wizard: MajEvalWizard) -> None:
        super().__init__(wizard)
        self.editor = PersonaEditor(wizard.session, lambda: wizard.who)
        self.editor.changed.connect(self._personas_changed)
        self.personas_notice = note_box()
        self.personas_notice.hide()
        layout = page_layout(
            self, "Check and edit the personas",
            "Each persona stands for one point of view found in your documents; the personas "
            "of a group discuss every item together. Change any text, drag a persona onto "
            "another group, rename or merge groups, add or delete personas. Each persona's "
            "evidence opens the page it comes from. Your changes are saved at once and marked "
            "as yours (✎); Undo takes back the last change.")
        layout.addWidget(self.personas_notice)
        layout.addWidget(self.editor, 1)

    def refresh(self) -> None:
        self.wizard.fill_outdated_notice()

    def leave(self) -> None:
        self.editor.flush()

    def next_state(self) -> tuple[bool, str]:
        if not self.editor.personas:
            return False, "There are no personas yet."
        return True, ""

    @Slot()
    def _personas_changed(self) -> None:
        self.wizard.update_nav()
        self.wizard.pages["run"].fill()
