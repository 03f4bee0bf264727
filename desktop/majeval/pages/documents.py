"""Page 2: the documents about the stakeholders, page by page, with a person's corrections."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
)

from core.documents import Document, DocumentError, Page
from desktop.file_dialogs import open_files
from desktop.majeval.pages._base import MajEvalPage, count
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.widgets import (
    error_label,
    hbox,
    hint_label,
    note_box,
    page_layout,
    pane,
    splitter,
    tipped,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.runs import CancelToken, Progress
    from desktop.majeval.wizard import MajEvalWizard

__all__ = ["DocumentsPage"]


class DocumentsPage(MajEvalPage):
    KEY, TITLE = "documents", "Documents"

    def __init__(self, wizard: MajEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self._current_page_number: int | None = None
        self._current_doc_name: str | None = None
        self._page_timer = QTimer(self)
        self._page_timer.setSingleShot(True)
        self._page_timer.setInterval(800)
        self._page_timer.timeout.connect(self.save_page_text)
        self.add_docs_button = QPushButton("Add documents…")
        self.add_docs_button.setObjectName("primaryButton")
        self.add_docs_button.setToolTip("PDF, .txt or .md files about the stakeholders.")
        self.add_docs_button.clicked.connect(self._ask_documents)
        self.remove_doc_button = QPushButton("Remove")
        self.remove_doc_button.clicked.connect(self.remove_current_document)
        self.max_pages_spin = tipped(QSpinBox(), "Longer documents are refused (reading them "
                                     "takes many model calls). Raise it and add the document "
                                     "again.")
        self.max_pages_spin.setRange(1, 5000)
        self.max_pages_spin.valueChanged.connect(self._max_pages_chosen)
        self.keep_references_box = tipped(QCheckBox("Keep the reference list"), (
            "EvalDesk leaves out each document's reference list (it names authors, not the "
            "people who care about the content). Tick this to keep it in documents you add "
            "from now on; to apply it to a document already added, remove it and add it again."))
        self.keep_references_box.toggled.connect(self._keep_references_chosen)
        buttons = hbox(self.add_docs_button, self.remove_doc_button, self.keep_references_box, 1,
                       "Maximum pages per document:", self.max_pages_spin)
        self.doc_list = QListWidget()
        self.doc_list.currentRowChanged.connect(self._document_chosen)
        self.page_list = QListWidget()
        self.page_list.currentRowChanged.connect(self._page_chosen)
        self.page_edit = QPlainTextEdit()
        self.page_edit.setToolTip("Correct the text if the extraction went wrong (joined words, "
                                  "a table read as a jumble). Changes are saved as you type.")
        self.page_edit.textChanged.connect(self._page_typed)
        self.page_state = hint_label()
        self.revert_page_button = QPushButton("Revert this page")
        self.revert_page_button.setToolTip("Put the text back as it was read from the file (your "
                                           "correction stays in the project's history).")
        self.revert_page_button.clicked.connect(self.revert_current_page)
        self.revert_page_button.setEnabled(False)
        self.parts_label = QLabel("<b>Pages</b>")
        self.doc_warnings = note_box()
        self.doc_warnings.hide()
        self.doc_errors = error_label()
        self.doc_panel = RunPanel()
        self.doc_panel.hide()
        left = pane("<b>Documents</b>", (self.doc_list, 2), self.parts_label, (self.page_list, 3))
        right = pane(hbox((self.page_state, 1), self.revert_page_button), (self.page_edit, 1))
        page_layout(
            self, "Documents about the stakeholders",
            "Add the research papers or reports that describe the people who care about this "
            "content (parents, teachers, clinicians, patients…). EvalDesk reads the text of "
            "each page (each section of a .txt or .md file) and leaves out the reference list. "
            "Check the text of each part on the "
            "right and correct it where the extraction went wrong: the model reads exactly "
            "this text, and every persona will point back to a sentence in it.",
            buttons, self.doc_warnings, self.doc_errors,
            (splitter(left, right, sizes=[260, 740]), 1), self.doc_panel)

    @property
    def docs(self) -> list[Document]:
        return self.wizard.docs

    def leave(self) -> None:
        self.save_page_text()

    def next_state(self) -> tuple[bool, str]:
        if not self.docs:
            return False, ("Add at least one document (or go straight to Personas to import "
                           "them).")
        return True, ""

    def busy_changed(self, busy: str) -> None:
        self.add_docs_button.setEnabled(not busy)
        self.remove_doc_button.setEnabled(not busy and bool(self.docs))

    @Slot(int)
    def _keep_references_chosen(self, keep: bool) -> None:
        if not self._filling and keep != self.choices.keep_references:
            self.choices.keep_references = keep
            self.save()

    @Slot()
    def revert_current_page(self) -> None:
        """Put the selected page back as it was extracted (recorded as an edit)."""
        self.save_page_text()
        doc = self.current_document()
        number = self._current_page_number
        if doc is None or number is None:
            return
        reverted = self.session.revert_page(doc.name, number, self.wizard.who)
        if reverted is None:
            return
        self._filling = True  # the editor shows the extracted text again, nothing to save
        self.page_edit.setPlainText(reverted.page(number).text)
        self._filling = False
        self.wizard.docs = self.session.documents()
        row = self.page_list.currentRow()
        self.fill(self.doc_list.currentRow())
        self.page_list.setCurrentRow(row)

    def _max_pages_chosen(self, value: int) -> None:
        if not self._filling and value != self.choices.max_pages:
            self.choices.max_pages = value
            self.save()

    def ask_document_paths(self) -> list[str]:
        """Ask for documents (tests replace this)."""
        return open_files(self, "Add documents about the stakeholders",
                          "Documents (*.pdf *.txt *.md *.markdown);;All files (*)")

    @Slot()
    def _ask_documents(self) -> None:
        paths = self.ask_document_paths()
        if paths:
            self.add_documents(paths)

    def read_documents(self, paths: list[Path], progress: Progress, cancel: CancelToken
                       ) -> list[str]:
        """Read and store each document (blocking: the executor); the problems, in words."""
        errors = []
        for path in paths:
            cancel.raise_if_cancelled()
            try:
                self.session.add_document(path, progress=progress, cancel=cancel)
            except DocumentError as exc:
                errors.append(str(exc))
        return errors

    def add_documents(self, paths: list[str | Path]) -> Any:
        """Read documents in the executor and add them to the project."""
        self.save_page_text()
        chosen = [Path(p) for p in paths]
        self.doc_panel.show()

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                self.documents_read(outcome.result)
                self.doc_panel.hide()
            else:
                self.documents_read([])

        return self.wizard.start_step("documents", self.doc_panel,
                                      partial(self.read_documents, chosen),
                                      f"Reading {len(chosen)} document(s)", done)

    def documents_read(self, errors: list[str]) -> None:
        self.wizard.docs = self.session.documents()
        self.doc_errors.setText("\n\n".join(errors))
        self.doc_errors.setVisible(bool(errors))
        self.fill(select=len(self.docs) - 1)

    def fill(self, select: int = 0) -> None:
        self._filling = True
        self.max_pages_spin.setValue(self.choices.max_pages)
        self.keep_references_box.setChecked(self.choices.keep_references)
        self.doc_list.clear()
        for doc in self.docs:
            edited = sum(1 for p in doc.pages if p.edited)
            pages = count(len(doc.pages), doc.unit)
            text = f"{doc.name}  ({pages}" + (
                f", {edited} corrected)" if edited else ")")
            self.doc_list.addItem(text)
        self._filling = False
        if self.docs:
            self.doc_list.setCurrentRow(max(0, min(select, len(self.docs) - 1)))
        else:
            self._current_page_number = self._current_doc_name = None
            self._filling = True
            self.page_list.clear()
            self.page_edit.setPlainText("")
            self._filling = False
            self.doc_warnings.hide()
        self.remove_doc_button.setEnabled(bool(self.docs))

    def current_document(self) -> Document | None:
        row = self.doc_list.currentRow()
        return self.docs[row] if 0 <= row < len(self.docs) else None

    @Slot(int)
    def _document_chosen(self, _row: int) -> None:
        if self._filling:
            return
        self.save_page_text()
        doc = self.current_document()
        if doc is None:
            return
        warnings = list(doc.warnings)
        self.doc_warnings.setText("\n".join(f"• {w}" for w in warnings))
        self.doc_warnings.setVisible(bool(warnings))
        self._filling = True
        self.page_list.clear()
        self.parts_label.setText(f"<b>{doc.unit.capitalize()}s</b>")
        for p in doc.pages:
            self.page_list.addItem(f"{doc.unit.capitalize()} {p.number}"
                                   + ("  ✎ corrected" if p.edited else ""))
        self._filling = False
        self.page_list.setCurrentRow(0)

    @Slot(int)
    def _page_chosen(self, row: int) -> None:
        if self._filling:
            return
        self.save_page_text()
        doc = self.current_document()
        if doc is None or not 0 <= row < len(doc.pages):
            return
        page = doc.pages[row]
        self._filling = True
        self.page_edit.setPlainText(page.text)
        self._filling = False
        self._current_page_number = page.number
        self._current_doc_name = doc.name
        self._show_page_state(page)

    def _show_page_state(self, page: Page, doc: Document | None = None) -> None:
        doc = doc or self.current_document()
        edits = self.session.page_edits(doc.name, doc.pages.index(page)) \
            if doc is not None else []
        part = (doc.unit if doc is not None else "page").capitalize()
        self.revert_page_button.setEnabled(bool(page.edited and edits))
        if page.edited:
            who = f" by {edits[-1].who}" if edits else ""
            self.page_state.setText(f"{part} {page.number}: corrected{who}. The model reads your "
                                    "corrected text.")
        else:
            self.page_state.setText(f"{part} {page.number}: as extracted from the file.")

    @Slot()
    def _page_typed(self) -> None:
        if not self._filling:
            self._page_timer.start()

    @Slot()
    def save_page_text(self) -> None:
        """Store the text typed into the page editor (a person's correction) on the page it
        was typed for (not whatever document or page is selected now)."""
        self._page_timer.stop()
        number, name = self._current_page_number, self._current_doc_name
        doc = next((d for d in self.docs if d.name == name), None)
        if doc is None or number is None:
            return
        try:
            page = doc.page(number)
        except KeyError:
            return
        text = self.page_edit.toPlainText()
        if text == page.text:
            return
        updated = self.session.edit_page(doc.name, number, text, self.wizard.who)
        position = self.docs.index(doc)
        self.docs[position] = updated
        self._filling = True
        edited = sum(1 for p in updated.pages if p.edited)
        pages = count(len(updated.pages), updated.unit)
        self.doc_list.item(position).setText(f"{updated.name}  ({pages}, {edited} corrected)")
        if self.current_document() is updated:
            page_row = [p.number for p in updated.pages].index(number)
            self.page_list.item(page_row).setText(
                f"{doc.unit.capitalize()} {number}  ✎ corrected")
        self._filling = False
        self._show_page_state(updated.page(number), updated)

    @Slot()
    def remove_current_document(self) -> None:
        doc = self.current_document()
        if doc is None:
            return
        self.save_page_text()
        self._current_page_number = None
        self.session.remove_document(doc.name, self.wizard.who)
        self.wizard.docs = self.session.documents()
        self.fill()
        self.wizard.update_nav()
