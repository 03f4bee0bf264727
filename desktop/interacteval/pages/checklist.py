"""Page 5: check and edit the checklist; import or export checklist workbooks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Slot

from core.words import count
from desktop.file_dialogs import ask_then, save_file
from desktop.interacteval.checklist_editor import ChecklistEditor
from desktop.interacteval.pages._base import InteractEvalPage
from desktop.widgets import hint_label, page_layout

if TYPE_CHECKING:  # pragma: no cover
    from desktop.interacteval.wizard import InteractEvalWizard



class ChecklistPage(InteractEvalPage):
    KEY, TITLE = "checklist", "Checklist"

    def __init__(self, wizard: InteractEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self.editor = ChecklistEditor()
        self.editor.import_requested.connect(self._ask_import_checklists)
        self.editor.export_requested.connect(self._ask_export_checklists)
        self.editor.saved.connect(lambda _c: self.wizard.update_nav())
        self.editor.saved.connect(self._say_summary)
        self.editor.disagreements_requested.connect(self.open_disagreements)
        self.checklist_message = hint_label()
        layout = page_layout(
            self, "Check and edit the checklist",
            "These Yes/No questions will be asked about every text; “Yes” is always the good "
            "answer. Components are headings (their key question is not asked). Double-click "
            "a question to change it, drag it to reorder or to move it under another "
            "component, or use the buttons. Select a question to see the think-aloud "
            "attributes it came from and whose they were. Every change is saved at once with "
            "your name (Settings → Your name).")
        layout.addWidget(self.checklist_message)
        layout.addWidget(self.editor, 1)

    def refresh(self) -> None:
        self._fill_checklist()

    def next_state(self) -> tuple[bool, str]:
        if not self.session.checklists():
            return False, "Build or import a checklist to go on."
        return True, ""

    def _fill_checklist(self) -> None:
        name = self.choices.current
        checklist = self.session.checklist(name) if name else None
        self.editor.set_checklist(self.session, checklist if checklist else None, self.who)
        if checklist is None:
            self.checklist_message.setText(
                f"There is no checklist for {name} yet: build it on the Build page, or import "
                "a checklist workbook." if name else "Add a dimension first.")
        else:
            self._say_summary(checklist)

    def _say_summary(self, checklist: Any) -> None:
        """The line above the editor, kept current while the user edits (with the questions
        that fail texts people call good)."""
        people = sum(1 for i in checklist.items if i.edited_by)
        components = len(checklist.components) + len(checklist.empty_components)
        badges = self.session.questions_failing_good_texts(checklist.dimension)
        self.editor.set_badges(badges)
        n = len(badges)
        flagged = (f" {count(n, 'question')} fail{'' if n != 1 else 's'} texts people call "
                   "good (⚠: click the mark to see the texts)." if badges else "")
        self.checklist_message.setText(
            f"{checklist.dimension}: {count(len(checklist.items), 'question')} under "
            f"{count(components, 'component')}; {people} changed by people.{flagged}")

    @Slot(str)
    def open_disagreements(self, question: str) -> None:
        """Open the Check the judge report on the texts where the judge and the people
        answered ``question`` differently."""
        self.wizard.show_page("check")
        self.wizard.pages["check"].panel.show_question_disagreements(self.choices.current,
                                                                     question)

    def ask_checklist_import_path(self) -> str | None:
        return self.editor.ask_import_path()

    def ask_checklist_export_path(self) -> str | None:
        return save_file(self, "Export the checklists", "checklists.xlsx")

    @Slot()
    def _ask_import_checklists(self) -> None:
        ask_then(self.ask_checklist_import_path, self.import_checklists)

    def import_checklists(self, path: str | Path) -> list[str]:
        """Read a checklist workbook; its checklists replace those of the same dimensions
        (new dimensions are added). Returns the problems (empty when all went well)."""
        got = self.session.import_checklists(path)
        if got.errors:
            self.checklist_message.setText("The file cannot be used: " + " ".join(got.errors))
            return got.errors
        self.wizard.fill_dimension_combo()
        self._fill_checklist()
        note = (" Notes: " + " ".join(got.problems)) if got.problems else ""
        self.checklist_message.setText(
            f"Imported {count(len(got.checklists), 'checklist')} from {Path(path).name}.{note}")
        self.wizard.update_nav()
        return got.problems

    @Slot()
    def _ask_export_checklists(self) -> None:
        ask_then(self.ask_checklist_export_path, self.wizard.export_checklists)
