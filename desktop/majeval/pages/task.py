"""Page 1: the task description (what is judged, for whom), or the sample set."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton

from core.majeval.inputs import task_text
from core.majeval.session import EXAMPLE_TASKS, sample_folder
from desktop.majeval.pages._base import MajEvalPage
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.widgets import alert_box, intro_label, page_layout

if TYPE_CHECKING:  # pragma: no cover
    from core.majeval.inputs import OpenedItems
    from core.runs import CancelToken, Progress
    from desktop.majeval.wizard import MajEvalWizard

__all__ = ["TaskPage"]


class TaskPage(MajEvalPage):
    KEY, TITLE = "task", "Task"

    def __init__(self, wizard: MajEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(500)
        self._timer.timeout.connect(self.save_task)
        self.task_edit = QPlainTextEdit()
        self.task_edit.setPlaceholderText(
            "For example: Judge question-and-answer pairs that an AI wrote for children aged "
            "4 to 8 about a story read with them …")
        self.task_edit.textChanged.connect(self._task_typed)
        templates = QHBoxLayout()
        templates.addWidget(QLabel("Start from an example:"))
        self.template_buttons: dict[str, QPushButton] = {}
        for name, text in EXAMPLE_TASKS.items():
            button = QPushButton(name)
            button.setToolTip(text)
            button.clicked.connect(partial(self.task_edit.setPlainText, text))
            self.template_buttons[name] = button
            templates.addWidget(button)
        templates.addStretch(1)
        self.sample_button = QPushButton("Try with the sample set")
        self.sample_button.setToolTip("Load a small made-up example: a task about children's "
                                      "story questions, two short reports on what parents and "
                                      "teachers look for, and six question-answer pairs.")
        self.sample_button.clicked.connect(self.load_sample)
        templates.addWidget(self.sample_button)
        self.sample_panel = RunPanel()
        self.sample_panel.hide()
        #: Shown when the stored choices could not be read (they are kept aside in the project).
        self.recovered_notice = alert_box()
        self.recovered_notice.hide()
        layout = page_layout(self, "MAJ-Eval: judge AI-generated content through stakeholders' eyes")
        layout.addWidget(self.recovered_notice)
        layout.addWidget(intro_label(
            "Describe in one paragraph what is being judged and for whom. The paragraph is "
            "given to the model when it reads your documents, when it writes the personas, and "
            "to every persona when it judges an item, so say what the content is, who it is "
            "for and what makes it good. Start from one of the paper's two examples or from the "
            "sample set, and change it to fit your study."))
        layout.addLayout(templates)
        layout.addWidget(self.task_edit, 1)
        layout.addWidget(self.sample_panel)

    def fill(self) -> None:
        self._filling = True
        self.task_edit.setPlainText(self.choices.task)
        self._filling = False
        problem = self.wizard.choices_problem
        self.recovered_notice.setText(problem)
        self.recovered_notice.setVisible(bool(problem))

    def leave(self) -> None:
        self.save_task()  # not only after the typing pause: the next page may depend on it

    def next_state(self) -> tuple[bool, str]:
        if not self.task_edit.toPlainText().strip():
            return False, "Write the task description to go on."
        return True, ""

    @Slot()
    def _task_typed(self) -> None:
        if not self._filling:
            self._timer.start()
            self.wizard.update_nav()

    @Slot()
    def save_task(self) -> None:
        self._timer.stop()
        text = task_text(self.task_edit.toPlainText())
        if text != self.choices.task:
            self.choices.task = text
            self.save()
            self.wizard.check_results_current()

    @Slot()
    def load_sample(self) -> Any:
        """Load the sample set: task, both documents and the items file (in the executor)."""
        wizard = self.wizard
        folder = sample_folder()
        self.task_edit.setPlainText((folder / "task.txt").read_text(encoding="utf-8").strip())
        self.save_task()
        paths = [folder / "parents_views.md", folder / "teachers_views.md"]
        documents, items = wizard.pages["documents"], wizard.pages["items"]
        self.sample_panel.show()

        def step(progress: Progress, cancel: CancelToken) -> tuple[list[str], OpenedItems]:
            errors = documents.read_documents(paths, progress, cancel)
            return errors, self.session.store_items(folder / "items.xlsx")

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                errors, opened = outcome.result
                documents.documents_read(errors)
                items.items_opened(opened)
                self.sample_panel.hide()

        return wizard.start_step("sample", self.sample_panel, step, "Loading the sample set",
                                 done)
