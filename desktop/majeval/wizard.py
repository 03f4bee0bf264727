"""The MAJ-Eval wizard: task → documents → extraction → personas → items → run → results.

The widgets only collect choices and show outcomes; the method is in :mod:`core.majeval` and
what is kept in the project is in :mod:`core.majeval.session`. Every model call runs through
:mod:`desktop.runner` with progress and Cancel; every choice and every edit is stored in the
project as soon as it is made, so reopening the project restores the wizard where it was, with
the results shown without asking the model again.
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.majeval import session as st
from core.majeval.inputs import task_text
from core.majeval.model import COPIED, DebateSettings, Dimension, Scale
from core.majeval.pipeline import lonely_groups
from desktop.majeval.models import Col, RowsModel
from desktop.majeval.persona_editor import PersonaEditor, lonely_text
from desktop.majeval.results import ResultsView, table_view
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome, start_step
from desktop.usage import format_usage
from desktop.widgets import (
    frame_layout,
    hint_label,
    intro_label,
    navigation,
    note_box,
    step_buttons,
    title_label,
    xlsx_path,
)

__all__ = ["PAGES", "MajEvalWizard", "open_wizard"]

log = logging.getLogger("evaldesk.majeval")

PAGES = ("task", "documents", "extraction", "personas", "items", "run", "results")
PAGE_TITLES = {
    "task": "Task",
    "documents": "Documents",
    "extraction": "Find stakeholders",
    "personas": "Personas",
    "items": "Items",
    "run": "Run",
    "results": "Results",
}


class MajEvalWizard(QWidget):
    """The MAJ-Eval wizard page shown in the main window."""

    page_changed = Signal(str)
    #: A long step ended: (what, "finished" / "stopped" / "failed").
    step_ended = Signal(str, str)

    def __init__(self, main_window: Any, project: Any,
                 llm_factory: st.LLMFactory | None = None) -> None:
        super().__init__()
        self.setObjectName("majevalWizard")
        self.main_window = main_window
        self.project = project
        self.llm_factory = llm_factory or st.default_llm_factory
        self.state = st.load_state(project)
        self.page = "task"
        self.busy = ""
        self.docs: list[Any] = st.load_documents(project, self.state)
        self.opened_items: st.OpenedItems | None = None
        self.run: Any = None
        self.alphas: list[Any] = []
        self.humans: list[Any] = []
        self.active_llm: Any = None
        self._filling = False
        self._current_page_number: int | None = None
        self._current_doc_name: str | None = None
        self._task_timer = QTimer(self)
        self._task_timer.setSingleShot(True)
        self._task_timer.setInterval(500)
        self._task_timer.timeout.connect(self._save_task)
        self._page_timer = QTimer(self)
        self._page_timer.setSingleShot(True)
        self._page_timer.setInterval(800)
        self._page_timer.timeout.connect(self.save_page_text)
        self._usage_timer = QTimer(self)
        self._usage_timer.setInterval(400)
        self._usage_timer.timeout.connect(self._show_usage)

        steps, self.step_buttons = step_buttons(PAGES, PAGE_TITLES, self.show_page)

        self.stack = QStackedWidget()
        self.pages: dict[str, QWidget] = {
            "task": self._task_page(),
            "documents": self._documents_page(),
            "extraction": self._extraction_page(),
            "personas": self._personas_page(),
            "items": self._items_page(),
            "run": self._run_page(),
            "results": self._results_page(),
        }
        for page in self.pages.values():
            self.stack.addWidget(page)

        nav = navigation(self, "Back to the home screen. Everything is kept in the project; "
                               "open MAJ-Eval again to carry on.", self._go_home)
        frame_layout(self, steps, self.stack, nav)
        self._restore()

    # ====================================================================== helpers
    def who(self) -> str:
        return getattr(self.main_window.settings, "user_name", "") or "unknown"

    def _save(self) -> None:
        st.save_state(self.project, self.state)

    def _profiles(self) -> list[Any]:
        return list(self.main_window.settings.profiles)

    def _profile(self) -> Any:
        settings = self.main_window.settings
        try:
            return settings.profile(self.state.profile or None)
        except (KeyError, ValueError):
            return settings.profile() if settings.profiles else None

    def _model(self) -> str:
        """The model of the chosen profile (part of the choices a run is made with)."""
        profile = self._profile()
        return profile.model if profile is not None else ""

    def _llm(self, run_id: int | None = None) -> Any:
        profile = self._profile()
        if profile is None:
            raise RuntimeError("There is no model profile. Add one in Settings → Models.")
        self.active_llm = self.llm_factory(profile, self.project, run_id)
        return self.active_llm

    def _start(self, what: str, panel: RunPanel, step: Any, title: str, on_done: Any,
               usage_label: QLabel | None = None) -> Any:
        self.busy = what
        self._update_nav()
        self._usage_label = usage_label
        if usage_label is not None:
            self.active_llm = None
            usage_label.show()
            self._usage_timer.start()

        def done(outcome: RunOutcome) -> Any:
            self.busy = ""
            self._usage_timer.stop()
            self._show_usage()
            try:
                on_done(outcome)
            finally:
                self._update_nav()
                self.step_ended.emit(what, outcome.status)

        return start_step(panel, step, title=title, on_done=done)

    @Slot()
    def _show_usage(self) -> None:
        label = getattr(self, "_usage_label", None)
        usage = getattr(self.active_llm, "usage", None)
        if label is not None and usage is not None:
            label.setText("This step: " + format_usage(usage).removeprefix("LLM: "))

    def _profile_combo(self) -> QComboBox:
        combo = QComboBox()
        combo.setMinimumWidth(240)
        combo.setToolTip("The language model (a profile from Settings → Models).")
        combo.currentIndexChanged.connect(self._profile_chosen)
        return combo

    def _fill_profiles(self) -> None:
        self._filling = True
        names = [p.name for p in self._profiles()]
        chosen = self.state.profile or self.main_window.settings.default_profile
        for combo in (self.extract_profile, self.run_profile):
            combo.clear()
            combo.addItems(names)
            if chosen in names:
                combo.setCurrentText(chosen)
        self._filling = False

    @Slot(int)
    def _profile_chosen(self, _i: int) -> None:
        if self._filling:
            return
        combo = self.sender()
        name = combo.currentText() if isinstance(combo, QComboBox) else ""
        if name and name != self.state.profile:
            self.state.profile = name
            self._save()
            self._fill_profiles()
            self._fill_run_page()

    # ====================================================================== page 1: task
    def _task_page(self) -> QWidget:
        self.task_edit = QPlainTextEdit()
        self.task_edit.setPlaceholderText(
            "For example: Judge question-and-answer pairs that an AI wrote for children aged "
            "4 to 8 about a story read with them …")
        self.task_edit.textChanged.connect(self._task_typed)
        templates = QHBoxLayout()
        templates.addWidget(QLabel("Start from an example:"))
        self.template_buttons: dict[str, QPushButton] = {}
        for name, text in st.EXAMPLE_TASKS.items():
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
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(
            title_label("MAJ-Eval: judge AI-generated content through stakeholders' eyes"))
        layout.addWidget(intro_label(
            "Describe in one paragraph what is being judged and for whom. The paragraph is "
            "given to the model when it reads your documents, when it writes the personas, and "
            "to every persona when it judges an item, so say what the content is, who it is "
            "for and what makes it good. Start from one of the paper's two examples or from the "
            "sample set, and change it to fit your study."))
        layout.addLayout(templates)
        layout.addWidget(self.task_edit, 1)
        layout.addWidget(self.sample_panel)
        return page

    @Slot()
    def _task_typed(self) -> None:
        if not self._filling:
            self._task_timer.start()
            self._update_nav()

    @Slot()
    def _save_task(self) -> None:
        self._task_timer.stop()
        text = task_text(self.task_edit.toPlainText())
        if text != self.state.task:
            self.state.task = text
            self._save()
            self._check_results_current()

    @Slot()
    def load_sample(self) -> Any:
        """Load the sample set: task, both documents and the items file (in the executor)."""
        folder = st.sample_folder()
        self.task_edit.setPlainText((folder / "task.txt").read_text(encoding="utf-8").strip())
        self._save_task()
        paths = [folder / "parents_views.md", folder / "teachers_views.md"]
        self.sample_panel.show()

        def step(progress, cancel):
            errors = self._read_documents(paths, progress, cancel)
            setup = st.store_items_file(self.project, self.state.items, folder / "items.xlsx")
            return errors, st.open_items(folder / "items.xlsx", setup)

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                errors, opened = outcome.result
                self._documents_read(errors)
                self._items_opened(opened)
                self.sample_panel.hide()

        return self._start("sample", self.sample_panel, step, "Loading the sample set", done)

    # ================================================================= page 2: documents
    def _documents_page(self) -> QWidget:
        self.add_docs_button = QPushButton("Add documents…")
        self.add_docs_button.setObjectName("primaryButton")
        self.add_docs_button.setToolTip("PDF, .txt or .md files about the stakeholders.")
        self.add_docs_button.clicked.connect(self._ask_documents)
        self.remove_doc_button = QPushButton("Remove")
        self.remove_doc_button.clicked.connect(self.remove_current_document)
        self.max_pages_spin = QSpinBox()
        self.max_pages_spin.setRange(1, 5000)
        self.max_pages_spin.setToolTip("Longer documents are refused (reading them takes many "
                                       "model calls). Raise it and add the document again.")
        self.max_pages_spin.valueChanged.connect(self._max_pages_chosen)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_docs_button)
        buttons.addWidget(self.remove_doc_button)
        buttons.addStretch(1)
        buttons.addWidget(QLabel("Maximum pages per document:"))
        buttons.addWidget(self.max_pages_spin)
        self.doc_list = QListWidget()
        self.doc_list.currentRowChanged.connect(self._document_chosen)
        self.page_list = QListWidget()
        self.page_list.currentRowChanged.connect(self._page_chosen)
        self.page_edit = QPlainTextEdit()
        self.page_edit.setToolTip("Correct the text if the extraction went wrong (joined words, "
                                  "a table read as a jumble). Changes are saved as you type.")
        self.page_edit.textChanged.connect(self._page_typed)
        self.page_state = hint_label()
        self.doc_warnings = QLabel()
        self.doc_warnings.setObjectName("noteBox")
        self.doc_warnings.setWordWrap(True)
        self.doc_warnings.hide()
        self.doc_errors = QLabel()
        self.doc_errors.setObjectName("errorText")
        self.doc_errors.setWordWrap(True)
        self.doc_errors.hide()
        self.doc_panel = RunPanel()
        self.doc_panel.hide()
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(QLabel("<b>Documents</b>"))
        lv.addWidget(self.doc_list, 2)
        lv.addWidget(QLabel("<b>Pages</b>"))
        lv.addWidget(self.page_list, 3)
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addWidget(self.page_state)
        rv.addWidget(self.page_edit, 1)
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([260, 740])
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Documents about the stakeholders"))
        layout.addWidget(intro_label(
            "Add the research papers or reports that describe the people who care about this "
            "content (parents, teachers, clinicians, patients…). EvalDesk reads the text of "
            "each page and leaves out the reference list. Check the text of each page on the "
            "right and correct it where the extraction went wrong: the model reads exactly "
            "this text, and every persona will point back to a sentence in it."))
        layout.addLayout(buttons)
        layout.addWidget(self.doc_warnings)
        layout.addWidget(self.doc_errors)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.doc_panel)
        return page

    @Slot(int)
    def _max_pages_chosen(self, value: int) -> None:
        if not self._filling and value != self.state.max_pages:
            self.state.max_pages = value
            self._save()

    def ask_document_paths(self) -> list[str]:
        """Ask for documents (tests replace this)."""
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Add documents about the stakeholders", "",
            "Documents (*.pdf *.txt *.md *.markdown);;All files (*)")
        return paths

    @Slot()
    def _ask_documents(self) -> None:
        paths = self.ask_document_paths()
        if paths:
            self.add_documents(paths)

    def _read_documents(self, paths: list[Path], progress: Any, cancel: Any) -> list[str]:
        from core.documents import DocumentError

        errors = []
        for path in paths:
            cancel.raise_if_cancelled()
            try:
                st.add_document(self.project, self.state, path, progress=progress,
                                cancel=cancel)
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
                self._documents_read(outcome.result)
                self.doc_panel.hide()
            else:
                self._documents_read([])

        return self._start("documents", self.doc_panel,
                           partial(self._read_documents, chosen),
                           f"Reading {len(chosen)} document(s)", done)

    def _documents_read(self, errors: list[str]) -> None:
        self.docs = st.load_documents(self.project, self.state)
        self.doc_errors.setText("\n\n".join(errors))
        self.doc_errors.setVisible(bool(errors))
        self._fill_documents(select=len(self.docs) - 1)

    def _fill_documents(self, select: int = 0) -> None:
        self._filling = True
        self.max_pages_spin.setValue(self.state.max_pages)
        self.doc_list.clear()
        for doc in self.docs:
            edited = sum(1 for p in doc.pages if p.edited)
            pages = f"{len(doc.pages)} page" + ("s" if len(doc.pages) != 1 else "")
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

    def current_document(self) -> Any:
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
        for p in doc.pages:
            self.page_list.addItem(f"Page {p.number}" + ("  ✎ corrected" if p.edited else ""))
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

    def _show_page_state(self, page: Any, doc: Any = None) -> None:
        doc = doc or self.current_document()
        edits = [e for e in self.project.list_edits(("majeval.document", doc.name))
                 if e.field == f"pages.{doc.pages.index(page)}"] if doc is not None else []
        if page.edited:
            who = f" by {edits[-1].who}" if edits else ""
            self.page_state.setText(f"Page {page.number}: corrected{who}. The model reads your "
                                    "corrected text.")
        else:
            self.page_state.setText(f"Page {page.number}: as extracted from the file.")

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
        updated = st.edit_page(self.project, doc.name, number, text, self.who())
        position = self.docs.index(doc)
        self.docs[position] = updated
        self._filling = True
        edited = sum(1 for p in updated.pages if p.edited)
        pages = f"{len(updated.pages)} page" + ("s" if len(updated.pages) != 1 else "")
        self.doc_list.item(position).setText(f"{updated.name}  ({pages}, {edited} corrected)")
        if self.current_document() is updated:
            page_row = [p.number for p in updated.pages].index(number)
            self.page_list.item(page_row).setText(f"Page {number}  ✎ corrected")
        self._filling = False
        self._show_page_state(updated.page(number), updated)

    @Slot()
    def remove_current_document(self) -> None:
        doc = self.current_document()
        if doc is None:
            return
        self.save_page_text()
        self._current_page_number = None
        st.remove_document(self.project, self.state, doc.name, self.who())
        self.docs = st.load_documents(self.project, self.state)
        self._fill_documents()
        self._update_nav()

    # =============================================================== page 3: extraction
    def _extraction_page(self) -> QWidget:
        self.extract_profile = self._profile_combo()
        self.extract_button = QPushButton("Find stakeholders and write personas")
        self.extract_button.setObjectName("primaryButton")
        self.extract_button.clicked.connect(self.start_extraction)
        self.extract_summary = QLabel()
        self.extract_summary.setWordWrap(True)
        self.extract_summary.setTextFormat(Qt.TextFormat.RichText)
        self.extract_panel = RunPanel()
        self.extract_usage = hint_label()
        self.extract_usage.hide()
        self.failures_list = QListWidget()
        self.failures_list.setMaximumHeight(120)
        self.failures_list.hide()
        self.extract_notice = note_box()
        self.extract_notice.hide()
        row = QHBoxLayout()
        row.addWidget(QLabel("Model:"))
        row.addWidget(self.extract_profile)
        row.addStretch(1)
        row.addWidget(self.extract_button)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Find the stakeholders and write personas"))
        layout.addWidget(intro_label(
            "The model reads each document in parts and lists the kinds of people it mentions "
            "and what they care about, each with a sentence from the text as evidence. It then "
            "puts similar stakeholders into groups (for example “parents” and “caregivers”) and "
            "writes one persona for each distinct point of view. You check and edit everything "
            "on the next page. A document that has not changed is not read again, and Cancel "
            "keeps what is finished."))
        layout.addLayout(row)
        layout.addWidget(self.extract_notice)
        layout.addWidget(self.extract_panel)
        layout.addWidget(self.extract_usage)
        layout.addWidget(self.extract_summary)
        layout.addWidget(self.failures_list)
        layout.addStretch(1)
        return page

    @Slot()
    def start_extraction(self) -> Any:
        if self.busy:
            return None
        self._save_task()
        self.save_page_text()

        async def step(progress, cancel):
            llm = self._llm()
            return await st.create_personas_stored(self.project, self.state, llm,
                                                   progress=progress, cancel=cancel)

        return self._start("extraction", self.extract_panel, step,
                           "Finding stakeholders and writing personas", self._extraction_done,
                           usage_label=self.extract_usage)

    def _extraction_done(self, outcome: RunOutcome) -> None:
        self.state = st.load_state(self.project)
        self.editor.reload()
        self._fill_extraction()
        self._fill_outdated_notice()
        if outcome.finished:
            self.show_page("personas")

    def _fill_extraction(self) -> None:
        personas = self.editor.personas
        groups = self.editor.groups()
        read = [d.name for d in self.docs if self.state.extracted.get(d.name)]
        if personas:
            self.extract_summary.setText(
                f"<b>{len(personas)} personas in {len(groups)} groups</b> "
                f"({', '.join(groups)}) from {len(read)} of {len(self.docs)} documents. "
                "Press Next to check them.")
        else:
            self.extract_summary.setText("No personas yet.")
        copied = sum(1 for f in self.state.failures if f.kind == COPIED)
        if copied:
            self.extract_summary.setText(
                self.extract_summary.text() + f"<br><span style='color:#b42318'><b>"
                f"{_count(copied, 'part')} failed because the model repeated the instructions "
                "instead of answering</b>: check the personas closely, or try a larger "
                "model.</span>")
        self.failures_list.clear()
        for f in self.state.failures:
            self.failures_list.addItem(f"FAILED — {f.where}: {f.message}")
        self.failures_list.setVisible(bool(self.state.failures))
        self.extract_button.setText("Find stakeholders again" if personas else
                                    "Find stakeholders and write personas")

    def _fill_outdated_notice(self) -> None:
        """Say so when the task or the documents changed after the personas were written."""
        reason = st.personas_out_of_date(self.project, self.state)
        for label, place in ((self.extract_notice, "above"),
                             (self.personas_notice, "on the “Find stakeholders” page")):
            label.setText(f"{reason} To bring the personas up to date, press “Find stakeholders "
                          f"again” {place}: personas you edited are kept. Or go on with them as "
                          "they are." if reason else "")
            label.setVisible(bool(reason))

    # ================================================================= page 4: personas
    def _personas_page(self) -> QWidget:
        self.editor = PersonaEditor(self.project, self.who)
        self.editor.changed.connect(self._personas_changed)
        self.personas_notice = note_box()
        self.personas_notice.hide()
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Check and edit the personas"))
        layout.addWidget(intro_label(
            "Each persona stands for one point of view found in your documents; the personas "
            "of a group discuss every item together. Change any text, drag a persona onto "
            "another group, rename or merge groups, add or delete personas. Each persona's "
            "evidence opens the page it comes from. Your changes are saved at once and marked "
            "as yours (✎); Undo takes back the last change."))
        layout.addWidget(self.personas_notice)
        layout.addWidget(self.editor, 1)
        return page

    @Slot()
    def _personas_changed(self) -> None:
        self._update_nav()
        self._fill_run_page()

    # ==================================================================== page 5: items
    def _items_page(self) -> QWidget:
        self.items_button = QPushButton("Choose the items file…")
        self.items_button.setObjectName("primaryButton")
        self.items_button.clicked.connect(self._ask_items)
        self.items_label = hint_label("No file chosen yet.")
        self.sheet_combo = QComboBox()
        self.sheet_combo.setMinimumWidth(160)
        self.sheet_combo.currentIndexChanged.connect(self._items_choice_changed)
        self.column_combos: dict[str, QComboBox] = {}
        form = QFormLayout()
        form.addRow("Sheet:", self.sheet_combo)
        for role, title in st.ITEM_ROLES.items():
            combo = QComboBox()
            combo.setMinimumWidth(200)
            combo.currentIndexChanged.connect(self._items_choice_changed)
            self.column_combos[role] = combo
            form.addRow(f"{title}:", combo)
        self.human_list = QListWidget()
        self.human_list.setMaximumHeight(90)
        self.human_list.setToolTip("Tick the columns with people's ratings (optional): the "
                                   "results then show how well each group agrees with them.")
        self.human_list.itemChanged.connect(self._items_choice_changed)
        form.addRow("Human ratings (optional):", self.human_list)
        columns_box = QGroupBox("Columns")
        columns_box.setLayout(form)

        self.dims_model = RowsModel([Col("name", "Dimension", editable=True),
                                     Col("definition", "Definition (what a good score means)",
                                         editable=True)])
        self.dims_model.edited.connect(self._dimension_edited)
        self.dims_view = table_view(self.dims_model, stretch=1)
        self.dims_view.setMaximumHeight(110)
        self.add_dim_button = QPushButton("Add dimension")
        self.add_dim_button.clicked.connect(self.add_dimension)
        self.remove_dim_button = QPushButton("Remove")
        self.remove_dim_button.clicked.connect(self.remove_dimension)
        self.scale_min = QSpinBox()
        self.scale_min.setRange(0, 9)
        self.scale_max = QSpinBox()
        self.scale_max.setRange(1, 100)
        self.scale_min.valueChanged.connect(self._scale_chosen)
        self.scale_max.valueChanged.connect(self._scale_chosen)
        dim_buttons = QHBoxLayout()
        dim_buttons.addWidget(self.add_dim_button)
        dim_buttons.addWidget(self.remove_dim_button)
        dim_buttons.addStretch(1)
        dim_buttons.addWidget(QLabel("Scale from"))
        dim_buttons.addWidget(self.scale_min)
        dim_buttons.addWidget(QLabel("to"))
        dim_buttons.addWidget(self.scale_max)
        dims_box = QGroupBox("What the personas score")
        db = QVBoxLayout(dims_box)
        db.addWidget(self.dims_view)
        db.addLayout(dim_buttons)

        self.items_model = RowsModel([Col("id", "Id"), Col("content", "Content"),
                                      Col("context", "Context"), Col("human", "Human ratings")])
        self.items_view = table_view(self.items_model, stretch=1)
        self.items_view.horizontalHeader().setSectionResizeMode(
            2, self.items_view.horizontalHeader().ResizeMode.Stretch)
        self.items_problems = QLabel()
        self.items_problems.setObjectName("errorText")
        self.items_problems.setWordWrap(True)
        self.items_problems.hide()
        self.items_panel = RunPanel()
        self.items_panel.hide()

        file_row = QHBoxLayout()
        file_row.addWidget(self.items_button)
        file_row.addWidget(self.items_label, 1)
        top = QHBoxLayout()
        top.addWidget(columns_box, 2)
        top.addWidget(dims_box, 3)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Items to judge"))
        layout.addWidget(intro_label(
            "Choose the spreadsheet with the AI-generated content, one item per row, and say "
            "which column holds the content, which its context (the story section, the source "
            "text) and, if you have them, people's ratings. Then name what the personas should "
            "score: one “Overall quality” on a 1-5 scale, or your own dimensions, each with a "
            "short definition."))
        layout.addLayout(file_row)
        layout.addLayout(top)
        layout.addWidget(self.items_problems)
        layout.addWidget(self.items_view, 1)
        layout.addWidget(self.items_panel)
        return page

    def ask_items_path(self) -> str | None:
        """Ask for the items spreadsheet (tests replace this)."""
        path, _ = QFileDialog.getOpenFileName(self, "Choose the items to judge", "",
                                              "Spreadsheets (*.xlsx *.xls *.csv *.tsv)")
        return path or None

    @Slot()
    def _ask_items(self) -> None:
        path = self.ask_items_path()
        if path:
            self.choose_items(path)

    def choose_items(self, path: str | Path) -> Any:
        """Copy the items file into the project and read it with guessed columns."""
        source = Path(path)
        self.items_panel.show()

        def step(progress, cancel):
            progress.start(f"Reading {source.name}", total=1)
            setup = st.store_items_file(self.project, self.state.items, source)
            opened = st.open_items(source, setup)
            progress.advance(1)
            return opened

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                self.items_panel.hide()
                self._items_opened(outcome.result)

        return self._start("items", self.items_panel, step, f"Reading {source.name}", done)

    def _reopen_items(self) -> Any:
        """Read the stored items file again (executor) to offer its sheets and columns."""
        setup = self.state.items
        self.items_panel.show()

        def step(progress, cancel):
            progress.start(f"Reading {setup.file_name}", total=1)
            path = st.items_file(self.project, setup)
            if path is None:
                raise FileNotFoundError(f"The items file {setup.file_name} is neither where it "
                                        "was nor in the project; choose it again.")
            opened = st.open_items(path, setup)
            progress.advance(1)
            return opened

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                self.items_panel.hide()
                self.opened_items = outcome.result
                self._fill_items_page()

        return self._start("items", self.items_panel, step, f"Reading {setup.file_name}", done)

    def _items_opened(self, opened: st.OpenedItems) -> None:
        self.opened_items = opened
        self.state.items = opened.setup
        self.state.item_list = list(opened.read.items)
        self._save()
        self._fill_items_page()
        self._fill_run_page()

    def _fill_items_page(self) -> None:
        self._filling = True
        s = self.state.items
        self.items_label.setText(f"{s.file_name}" if s.file_name else "No file chosen yet.")
        opened = self.opened_items
        columns = opened.columns if opened is not None else []
        self.sheet_combo.clear()
        if opened is not None:
            self.sheet_combo.addItems(opened.sheets)
            self.sheet_combo.setCurrentText(s.sheet or "")
        for role, combo in self.column_combos.items():
            combo.clear()
            combo.addItem("(none)" if role != "content" else "(choose)", None)
            for c in columns:
                combo.addItem(c, c)
            combo.setCurrentIndex(max(0, combo.findData(s.columns.get(role))))
        self.human_list.clear()
        used = {v for v in s.columns.values() if v}
        for c in columns:
            if c in used:
                continue
            item = QListWidgetItem(c)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if c in s.human else
                               Qt.CheckState.Unchecked)
            self.human_list.addItem(item)
        self.dims_model.set_rows([d.model_dump() for d in self.state.dimensions])
        self.scale_min.setValue(self.state.scale.minimum)
        self.scale_max.setValue(self.state.scale.maximum)
        self._filling = False
        self._show_items()

    def _show_items(self) -> None:
        rows = [{"id": i.id, "content": i.content, "context": i.context,
                 "human": ", ".join(f"{k}: {v:g}" for k, v in i.human.items())}
                for i in self.state.item_list]
        self.items_model.set_rows(rows)
        self.items_view.resizeRowsToContents()
        read = self.opened_items.read if self.opened_items is not None else None
        messages = (read.errors + read.problems) if read is not None else []
        self.items_problems.setText("\n".join(messages[:8]))
        self.items_problems.setVisible(bool(messages))
        self._update_nav()

    @Slot()
    def _items_choice_changed(self, *_args: Any) -> None:
        if self._filling or self.opened_items is None:
            return
        columns = {role: combo.currentData() for role, combo in self.column_combos.items()}
        human = [self.human_list.item(i).text() for i in range(self.human_list.count())
                 if self.human_list.item(i).checkState() == Qt.CheckState.Checked]
        sheet = self.sheet_combo.currentText() or None
        setup = self.state.items.model_copy(update={"columns": columns, "human": human})
        path = st.items_file(self.project, setup)
        if path is None:
            return
        if sheet != setup.sheet:
            setup = setup.model_copy(update={"sheet": sheet, "columns": {}, "human": []})
            self._items_opened(st.open_items(path, setup))
            return
        read = st.read_items(path, setup)
        self.opened_items = st.OpenedItems(self.opened_items.sheets, self.opened_items.columns,
                                           setup, read)
        self.state.items = setup
        self.state.item_list = list(read.items) if not read.errors else []
        self._save()
        self._fill_items_page()
        self._fill_run_page()

    @Slot(int, str, object)
    def _dimension_edited(self, _row: int, _key: str, _value: Any) -> None:
        dims = []
        for row in self.dims_model.rows():
            name = str(row.get("name") or "").strip()
            if name:
                dims.append(Dimension(name=name, definition=str(row.get("definition") or "")))
        names = [d.name for d in dims]
        if not dims or len(set(names)) != len(names):
            self.nav_message.setText("Each dimension needs its own name.")
            return
        self.nav_message.setText("")
        self.state.dimensions = dims
        self._save()
        self._fill_run_page()

    @Slot()
    def add_dimension(self) -> None:
        n = len(self.state.dimensions) + 1
        while any(d.name == f"Dimension {n}" for d in self.state.dimensions):
            n += 1
        self.state.dimensions.append(Dimension(name=f"Dimension {n}", definition=""))
        self._save()
        self.dims_model.set_rows([d.model_dump() for d in self.state.dimensions])

    @Slot()
    def remove_dimension(self) -> None:
        row = self.dims_view.currentIndex().row()
        if 0 <= row < len(self.state.dimensions) and len(self.state.dimensions) > 1:
            del self.state.dimensions[row]
            self._save()
            self.dims_model.set_rows([d.model_dump() for d in self.state.dimensions])

    @Slot()
    def _scale_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        low, high = self.scale_min.value(), self.scale_max.value()
        if high <= low:
            self.nav_message.setText("The top of the scale must be above the bottom.")
            return
        labels = Scale().labels if (low, high) == (1, 5) else {}
        self.state.scale = Scale(minimum=low, maximum=high, labels=labels)
        self._save()
        self._fill_run_page()

    # ====================================================================== page 6: run
    def _run_page(self) -> QWidget:
        self.rounds_spin = QSpinBox()
        self.rounds_spin.setRange(1, 20)
        self.rounds_spin.setToolTip("The debate stops after this many rounds (each persona "
                                    "speaking once is a round), or earlier when nobody "
                                    "disagrees.")
        self.rounds_spin.valueChanged.connect(self._options_chosen)
        self.no_debate_check = QCheckBox("No debate: keep the personas' first scores (faster, "
                                         "cheaper; the paper's ablation)")
        self.no_debate_check.toggled.connect(self._options_chosen)
        self.simple_roles_check = QCheckBox("Simple roles: one sentence per persona instead of "
                                            "the five attributes (the paper's ablation)")
        self.simple_roles_check.setToolTip(
            "Each persona is told only its name, its group with the group's description, and "
            "its specialty, in one sentence (for example: You are Ana Ruiz, one of the "
            "teachers (preschool teachers who often read books to their students); your "
            "specialty: early literacy).")
        self.simple_roles_check.toggled.connect(self._options_chosen)
        self.run_profile = self._profile_combo()
        options = QGroupBox("Options")
        form = QFormLayout(options)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("Model:", self.run_profile)
        form.addRow("Debate rounds at most:", self.rounds_spin)
        form.addRow("", self.no_debate_check)
        form.addRow("", self.simple_roles_check)
        self.run_summary = QLabel()
        self.run_summary.setWordWrap(True)
        self.run_summary.setTextFormat(Qt.TextFormat.RichText)
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
        row.addWidget(self.run_summary, 1)
        row.addWidget(self.run_button, 0, Qt.AlignmentFlag.AlignTop)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Run the debates"))
        layout.addWidget(intro_label(
            "For every item, the personas of each group first judge it alone, then discuss it: "
            "a coordinator gives every persona the floor, letting the one addressed by name or "
            "the one who disagrees most speak next, until nobody disagrees or the rounds are "
            "used up. A group of one persona cannot debate: its persona's own judgement counts. "
            "A neutral summary of each group's views and the group's mean score follow. "
            "Finished debates are saved one by one; after Cancel (or a crash) the run goes on "
            "where it stopped."))
        layout.addWidget(options)
        layout.addWidget(self.lonely_notice)
        layout.addLayout(row)
        layout.addWidget(self.run_panel)
        layout.addWidget(self.run_usage)
        layout.addWidget(self.units_view, 1)
        return page

    @Slot()
    def _options_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        self.state.settings = DebateSettings(rounds=self.rounds_spin.value(),
                                             no_debate=self.no_debate_check.isChecked(),
                                             simple_roles=self.simple_roles_check.isChecked())
        self._save()
        self._fill_run_page()

    def _fill_run_page(self) -> None:
        self._filling = True
        s = self.state.settings
        self.rounds_spin.setValue(s.rounds)
        self.no_debate_check.setChecked(s.no_debate)
        self.simple_roles_check.setChecked(s.simple_roles)
        self._filling = False
        done, total = st.run_progress(self.project, self.state, self._model())
        groups = len(self.editor.groups())
        dims = ", ".join(d.name for d in self.state.dimensions)
        text = (f"<b>{_count(len(self.state.item_list), 'item')} × {_count(groups, 'group')} = "
                f"{_count(total, 'debate')}</b>, scoring {dims} on "
                f"{self.state.scale.describe()}.")
        if done and done < total:
            text += (f"<br>{done} of these debates are already finished with these choices and "
                     "will not be repeated.")
        elif total and done == total:
            text += ("<br>All debates are finished for these personas, items, options and "
                     "model.")
        self.run_summary.setText(text)
        self.run_button.setText("Continue the debates" if 0 < done < total else
                                "Run again (failed debates only)" if total and done == total
                                else "Start the debates")
        lonely = lonely_groups(self.editor.personas)
        self.lonely_notice.setText(lonely_text(lonely))
        self.lonely_notice.setVisible(bool(lonely))
        self._fill_units()
        self._check_results_current()

    def _check_results_current(self) -> None:
        """Mark the results shown as out of date when the choices changed since they were
        made (they are never shown as current; Export is off for them)."""
        if self.run is None or not hasattr(self, "results"):
            return
        self.results.set_out_of_date(
            st.run_differences(self.project, self.state, self.run, self._model()))

    @Slot()
    def _fill_units(self) -> None:
        self.units_model.set_rows(st.unit_statuses(self.project, self.state, self._model()))

    @Slot()
    def start_run(self) -> Any:
        if self.busy:
            return None
        self.editor.flush()
        profile = self._profile()
        model = profile.model if profile is not None else ""

        async def step(progress, cancel):
            return await st.run_debates(self.project, self.state, self._llm, model=model,
                                        progress=progress, cancel=cancel)

        self._units_timer.start()
        total = st.run_progress(self.project, self.state)[1]
        return self._start("run", self.run_panel, step, f"Debating {total} times",
                           self._run_done, usage_label=self.run_usage)

    def _run_done(self, outcome: RunOutcome) -> None:
        self._units_timer.stop()
        self._fill_run_page()
        if outcome.finished:
            self.show_run(outcome.result)

    # ================================================================== page 7: results
    def _results_page(self) -> QWidget:
        self.results = ResultsView()
        self.results.export_button.clicked.connect(self._ask_export)
        self.results_intro = intro_label(
            "The scores of each stakeholder group per item, the groups' written feedback and "
            "the full debate (who spoke, and why the coordinator chose them), how the debate "
            "changed the scores, and how well the personas agree with each other and with "
            "people's ratings. Export writes all of it to one Excel workbook.")
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Results"))
        layout.addWidget(self.results_intro)
        layout.addWidget(self.results, 1)
        return page

    def show_run(self, run: Any) -> Any:
        """Compute the agreement statistics (executor) and show the results page."""
        import asyncio

        self.run = run

        async def go() -> None:
            loop = asyncio.get_running_loop()
            self.alphas, self.humans = await loop.run_in_executor(None, st.agreement, run)
            self.results.set_run(run, self.alphas, self.humans)
            self._check_results_current()
            self.show_page("results")
            self.step_ended.emit("results", "finished")

        from desktop.errors import spawn

        return spawn(go(), where="showing the results")

    def ask_export_path(self) -> str | None:
        """Ask where to save the results workbook (tests replace this)."""
        path, _ = QFileDialog.getSaveFileName(self, "Export the results",
                                              "majeval-results.xlsx", "Excel workbook (*.xlsx)")
        return path or None

    @Slot()
    def _ask_export(self) -> None:
        path = self.ask_export_path()
        if path:
            self.export(path)

    def export(self, path: str | Path) -> Any:
        if self.run is None:
            return None
        self._check_results_current()
        if self.results.out_of_date:  # never written as if they were current
            self.results.export_message.setText(
                "Not exported: these results are out of date. Run the debates again first.")
            self.results.export_message.show()
            return None
        target = xlsx_path(path)
        self.results.export_panel.show()

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                self.results.export_panel.hide()
                self.results.show_export(str(target))
                self.main_window.status(f"Saved {target}")

        return self._start("export", self.results.export_panel,
                           partial(st.export_results, self.project, self.run, target),
                           f"Exporting to {target.name}", done)

    # ====================================================================== navigation
    def _restore(self) -> None:
        self._filling = True
        self.task_edit.setPlainText(self.state.task)
        self._filling = False
        self._fill_documents()
        self._fill_profiles()
        self._fill_extraction()
        self._fill_items_page()  # the file itself is read when the Items page is shown
        self._fill_run_page()
        run = st.load_run(self.project, self.state, self._model())
        page = self.state.page if self.state.page in PAGES else "task"
        if run is not None:
            self.run = run
            if page == "results":
                self.show_run(run)
                page = "run"
        elif page == "results":
            page = "run"
        self.show_page(page)

    def show_page(self, key: str) -> None:
        if self.page == "task":
            self._save_task()  # not only after the typing pause: the next page may depend on it
        if self.page == "documents":
            self.save_page_text()
        if self.page == "personas":
            self.editor.flush()
        if key == "results" and self.run is None:
            key = "run"
        self.page = key
        self.stack.setCurrentWidget(self.pages[key])
        if key == "run":
            self._fill_run_page()
        if key == "results":
            self._check_results_current()
        if key == "extraction":
            self._fill_extraction()
        if key in ("extraction", "personas"):
            self._fill_outdated_notice()
        if key == "items" and self.opened_items is None and self.state.items.input_id \
                is not None and not self.busy:
            self._reopen_items()
        if self.state.page != key:
            self.state.page = key
            self._save()
        for name, button in self.step_buttons.items():
            font = button.font()
            font.setBold(name == key)
            button.setFont(font)
        self._update_nav()
        self.page_changed.emit(key)

    def _ready(self, key: str) -> str:
        """'' when the page's work is done, else what is missing."""
        if key == "task" and not self.task_edit.toPlainText().strip():
            return "Write the task description to go on."
        if key == "documents" and not self.docs:
            return "Add at least one document (or go straight to Personas to import them)."
        if key in ("extraction", "personas") and not self.editor.personas:
            return "There are no personas yet."
        if key == "items" and not self.state.item_list:
            return "Choose the items file and its content column."
        if key == "run" and self.run is None:
            return "Run the debates to see results."
        return ""

    def _update_nav(self) -> None:
        index = PAGES.index(self.page)
        self.back_button.setEnabled(index > 0)
        missing = self._ready(self.page)
        last = index == len(PAGES) - 1
        self.next_button.setEnabled(not last and not missing and not self.busy)
        self.nav_message.setText(missing if not self.busy else "Working…")
        self.step_buttons["results"].setEnabled(self.run is not None)
        self.run_button.setEnabled(not self.busy and bool(self.editor.personas)
                                   and bool(self.state.item_list)
                                   and self._profile() is not None)
        self.extract_button.setEnabled(not self.busy and bool(self.docs)
                                       and self._profile() is not None)
        if self.busy == "run":
            self.run_button.setText("Debating…")
        elif self.busy == "extraction":
            self.extract_button.setText("Working…")
        if self._profile() is None:
            self.nav_message.setText("Add a language model in Settings → Models first.")

    @Slot()
    def go_next(self) -> None:
        index = PAGES.index(self.page)
        if index + 1 >= len(PAGES):
            return
        target = PAGES[index + 1]
        if target == "results" and self.run is not None and self.results.run is not self.run:
            self.show_run(self.run)
            return
        self.show_page(target)

    @Slot()
    def go_back(self) -> None:
        index = PAGES.index(self.page)
        if index > 0:
            self.show_page(PAGES[index - 1])

    @Slot()
    def _go_home(self) -> None:
        self.editor.flush()
        self.save_page_text()
        self._save_task()
        self.main_window.show_home()


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def open_wizard(main_window: Any, llm_factory: st.LLMFactory | None = None) -> MajEvalWizard:
    """Show the MAJ-Eval wizard for the open project (creating an untitled project if none)."""
    project = main_window.ensure_project(method="majeval")
    for existing in main_window.findChildren(MajEvalWizard):
        if existing.project is project and not project.closed:
            if llm_factory is not None:
                existing.llm_factory = llm_factory
            main_window.show_page(existing)
            return existing
        main_window.stack.removeWidget(existing)
        existing.deleteLater()
    wizard = MajEvalWizard(main_window, project, llm_factory)
    main_window.show_page(wizard)
    return wizard
