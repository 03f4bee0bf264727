"""The persona editor: stakeholder groups as a tree, each persona as a form with the five
attributes, its evidence one click away.

Every change is stored at once through the session
(:meth:`core.majeval.session.MajEvalSession.edit_persona`, which records who and when) and can
be undone (the undo is itself recorded as an edit). Dragging a persona onto another group moves
it; groups can be renamed, merged and split (a persona moved to a new group name starts a new
group).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTextEdit,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from core.documents import Document, find_evidence
from core.majeval.inputs import PERSONA_COLUMN_TITLES, PersonasRead, read_personas
from core.majeval.model import (
    PERSONA_ATTRIBUTES,
    PERSONA_FIELD_WORDS,
    REQUIRED_PERSONA_FIELDS,
    Persona,
)
from core.majeval.session import evidence_span, lonely_groups
from core.words import count
from desktop.file_dialogs import open_file, save_file
from desktop.majeval.models import PersonaTreeModel
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome, start_step
from desktop.widgets import hint_label, note_box, xlsx_path

if TYPE_CHECKING:  # pragma: no cover
    from core.majeval.session import MajEvalSession
    from core.runs import CancelToken, Progress

__all__ = ["ATTRIBUTE_LABELS", "EvidenceDialog", "PersonaEditor"]

log = logging.getLogger("evaldesk.majeval")

# the same titles as the Personas sheet (core.majeval.inputs.PERSONA_COLUMN_TITLES)
ATTRIBUTE_LABELS = {
    "demographics": (PERSONA_COLUMN_TITLES["demographics"],
                     "Name and demographic information: age, education, work."),
    "perspective": (PERSONA_COLUMN_TITLES["perspective"],
                    "The point of view, in the persona's own words."),
    "specialty": (PERSONA_COLUMN_TITLES["specialty"],
                  "A skill or expertise that matters for the task."),
    "psychological_traits": (PERSONA_COLUMN_TITLES["psychological_traits"],
                             "Temperament, emotions and ways of thinking."),
    "social_relationships": (PERSONA_COLUMN_TITLES["social_relationships"],
                             "How they relate to others in and outside their group."),
}
HIGHLIGHT = QColor("#fde68a")


class EvidenceDialog(QDialog):
    """One page of a document with the evidence sentence highlighted; other pages selectable."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Evidence in the document")
        self.resize(760, 560)
        self.document: Any = None
        self.quote = ""
        self.page_number: int | None = None
        self.highlighted: tuple[int, int] | None = None
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.page_combo = QComboBox()
        self.page_combo.currentIndexChanged.connect(self._page_chosen)
        self.text = QTextEdit()
        self.text.setReadOnly(True)
        self.note = hint_label()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        #: "Page:" for a PDF, "Section:" for a .txt or .md file, as the Documents page says.
        self.unit_label = QLabel("Page:")
        top.addWidget(self.unit_label)
        top.addWidget(self.page_combo)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.note)
        layout.addWidget(buttons)

    def show_evidence(self, document: Document, quote: str, page: int | None, who: str = ""
                      ) -> None:
        self.document, self.quote = document, quote
        self.unit_label.setText(f"{document.unit.capitalize()}:")
        if page is None and quote:
            found = find_evidence(document, quote)
            page = found[0] if found else None
        self.page_combo.blockSignals(True)
        self.page_combo.clear()
        for p in document.pages:
            self.page_combo.addItem(f"{p.number}" + (" (corrected)" if p.edited else ""),
                                    p.number)
        self.page_combo.blockSignals(False)
        self.heading.setText(f"<b>{document.name}</b>" + (f" — evidence for {who}" if who
                                                           else ""))
        target = page if page is not None else document.pages[0].number
        self.page_combo.setCurrentIndex(max(0, self.page_combo.findData(target)))
        self.show_page(target)
        if page is None:
            self.note.setText("The quoted sentence was not found in this document word for word "
                              "or nearly; it may be a paraphrase. The quote was: “"
                              f"{quote}”")

    def show_page(self, number: int) -> None:
        page = self.document.page(number)
        self.page_number = number
        self.text.setPlainText(page.text)
        self.highlighted = evidence_span(page.text, self.quote) if self.quote else None
        if self.highlighted is not None:
            start, end = self.highlighted
            cursor = QTextCursor(self.text.document())
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            fmt = QTextCharFormat()
            fmt.setBackground(HIGHLIGHT)
            cursor.mergeCharFormat(fmt)
            show = QTextCursor(self.text.document())
            show.setPosition(start)
            self.text.setTextCursor(show)
            self.text.ensureCursorVisible()
            self.note.setText("The highlighted sentence is the evidence the persona is based on.")
        else:
            self.note.setText("The evidence sentence is not on this page.")

    @Slot(int)
    def _page_chosen(self, _i: int) -> None:
        number = self.page_combo.currentData()
        if number is not None and self.document is not None:
            self.show_page(int(number))


class PersonaEditor(QWidget):
    """Edit the personas kept by ``session``; ``who()`` names the person editing."""

    #: The personas changed (after every stored edit).
    changed = Signal()

    def __init__(self, session: MajEvalSession, who: Callable[[], str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.who = who
        self.personas: list[Persona] = []
        self.undo_stack: list[list[tuple[str, Any]]] = []
        self.current_id: str | None = None
        self.evidence_dialog: EvidenceDialog | None = None
        self._filling = False
        self._pending: dict[str, str] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(700)
        self._timer.timeout.connect(self.flush)

        self.model = PersonaTreeModel(self)
        self.model.move_requested.connect(self.move_persona)
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setHeaderHidden(True)
        self.tree.setDragEnabled(True)
        self.tree.setAcceptDrops(True)
        self.tree.setDropIndicatorShown(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.DragDrop)
        self.tree.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setToolTip("Drag a persona onto another group to move it there.")
        self.tree.selectionModel().currentChanged.connect(self._selected)

        self.add_button = QPushButton("Add persona")
        self.add_button.setToolTip("Add a new persona to the selected group.")
        self.add_button.clicked.connect(self.add_persona)
        self.delete_button = QPushButton("Delete")
        self.delete_button.setToolTip("Delete the selected persona (Undo brings it back).")
        self.delete_button.clicked.connect(self.delete_current)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip("Undo the last change (it is recorded as a change too).")
        self.undo_button.clicked.connect(self.undo)
        self.import_button = QPushButton("Import from Excel…")
        self.import_button.setToolTip("Replace the personas with those of a Personas sheet "
                                      "(for example one you exported and edited in Excel).")
        self.import_button.clicked.connect(self._ask_import)
        self.export_button = QPushButton("Export to Excel…")
        self.export_button.setToolTip("Save the personas as a Personas sheet to edit in Excel.")
        self.export_button.clicked.connect(self._ask_export)
        tree_buttons = QHBoxLayout()
        tree_buttons.addWidget(self.add_button)
        tree_buttons.addWidget(self.delete_button)
        tree_buttons.addWidget(self.undo_button)
        file_buttons = QHBoxLayout()
        file_buttons.addWidget(self.import_button)
        file_buttons.addWidget(self.export_button)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.tree, 1)
        lv.addLayout(tree_buttons)
        lv.addLayout(file_buttons)

        self.form_stack = QStackedWidget()
        self.form_stack.addWidget(self._empty_form())
        self.form_stack.addWidget(self._persona_form())
        self.form_stack.addWidget(self._group_form())

        self.message = hint_label()
        self.lonely_notice = note_box()
        self.lonely_notice.hide()
        self.file_panel = RunPanel()
        self.file_panel.hide()

        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(self.form_stack)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 5)
        splitter.setSizes([300, 700])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.lonely_notice)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.message)
        layout.addWidget(self.file_panel)
        self.reload()

    # ------------------------------------------------------------------------------ forms
    def _empty_form(self) -> QWidget:
        label = QLabel("Select a group or a persona on the left.")
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setObjectName("hint")
        return label

    def _persona_form(self) -> QWidget:
        self.name_edit = QLineEdit()
        self.name_edit.textEdited.connect(partial(self._field_typed, "name"))
        self.name_edit.editingFinished.connect(self.flush)
        self.group_combo = QComboBox()
        self.group_combo.setEditable(True)
        self.group_combo.setToolTip("Choose another group to move the persona there, or type a "
                                    "new name and press Enter to start a new group with it.")
        self.group_combo.activated.connect(self._group_chosen)
        self.group_combo.lineEdit().returnPressed.connect(self._group_typed)
        self.status_label = QLabel()
        self.status_label.setObjectName("hint")
        self.attribute_edits: dict[str, QPlainTextEdit] = {}
        form = QFormLayout()
        form.addRow("Name:", self.name_edit)
        form.addRow("Group:", self.group_combo)
        for key in PERSONA_ATTRIBUTES:
            title, tip = ATTRIBUTE_LABELS[key]
            edit = QPlainTextEdit()
            edit.setToolTip(tip)
            edit.setPlaceholderText(tip)
            edit.setTabChangesFocus(True)
            edit.setMinimumHeight(44)
            edit.setMaximumHeight(78)
            edit.textChanged.connect(partial(self._attribute_typed, key))
            self.attribute_edits[key] = edit
            label = QLabel(f"{title}:")
            label.setToolTip(tip)
            form.addRow(label, edit)
        self.evidence_label = QLabel()
        self.evidence_label.setWordWrap(True)
        self.evidence_label.setTextFormat(Qt.TextFormat.RichText)
        self.evidence_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.evidence_button = QPushButton("Show in the document")
        self.evidence_button.setToolTip("Open the page the evidence comes from, with the "
                                        "sentence highlighted.")
        self.evidence_button.clicked.connect(self.show_evidence)
        evidence = QGroupBox("Evidence")
        ev = QVBoxLayout(evidence)
        ev.addWidget(self.evidence_label)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.evidence_button)
        ev.addLayout(row)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(6, 0, 0, 0)
        layout.addWidget(self.status_label)
        layout.addLayout(form)
        layout.addWidget(evidence)
        layout.addStretch(1)
        return page

    def _group_form(self) -> QWidget:
        self.group_name_edit = QLineEdit()
        self.group_name_edit.setToolTip("Type a new name and press Enter to rename the group.")
        self.group_name_edit.returnPressed.connect(self._rename_typed)
        self.rename_button = QPushButton("Rename")
        self.rename_button.clicked.connect(self._rename_typed)
        self.group_about = QLabel()
        self.group_about.setWordWrap(True)
        self.group_members = QListWidget()
        self.group_members.setMaximumHeight(160)
        self.merge_combo = QComboBox()
        self.merge_combo.setMinimumWidth(200)
        self.merge_button = QPushButton("Merge")
        self.merge_button.setToolTip("Move every persona of this group into the chosen group.")
        self.merge_button.clicked.connect(self._merge_chosen)
        name_row = QHBoxLayout()
        name_row.addWidget(self.group_name_edit, 1)
        name_row.addWidget(self.rename_button)
        merge_row = QHBoxLayout()
        merge_row.addWidget(QLabel("Merge this group into:"))
        merge_row.addWidget(self.merge_combo, 1)
        merge_row.addWidget(self.merge_button)
        hint = hint_label("To split a group, select one of its personas and type a new group name "
                      "in its Group box (or drag it onto another group).")
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(6, 0, 0, 0)
        layout.addWidget(QLabel("<b>Stakeholder group</b>"))
        layout.addLayout(name_row)
        layout.addWidget(self.group_about)
        layout.addWidget(QLabel("Its personas (they debate together):"))
        layout.addWidget(self.group_members)
        layout.addLayout(merge_row)
        layout.addWidget(hint)
        layout.addStretch(1)
        return page

    # ---------------------------------------------------------------------------- filling
    def reload(self, select: str | None = None) -> None:
        """Read the personas from the project and show them (keeping the selection)."""
        self.personas = self.session.personas()
        described = self.session.group_descriptions()
        self.model.describe = lambda g: described.get(g, "")
        keep = select or self.current_id
        self.model.set_personas(self.personas)
        self.tree.expandAll()
        index = self.model.persona_index(keep) if keep else None
        if index is not None and index.isValid():
            self.tree.setCurrentIndex(index)
        elif self.model.rowCount():
            self.tree.setCurrentIndex(self.model.index(0, 0))
        else:
            self.current_id = None
            self.form_stack.setCurrentIndex(0)
        self.undo_button.setEnabled(bool(self.undo_stack))
        self.delete_button.setEnabled(self.current() is not None)
        lonely = lonely_groups(self.personas)
        self.lonely_notice.setText(lonely_text(lonely))
        self.lonely_notice.setVisible(bool(lonely))

    def persona(self, persona_id: str) -> Persona | None:
        return next((p for p in self.personas if p.id == persona_id), None)

    def current(self) -> Persona | None:
        return self.persona(self.current_id) if self.current_id else None

    def groups(self) -> list[str]:
        return list(self.model.groups)

    @Slot()
    def _selected(self, *_args: Any) -> None:
        self.flush()
        index = self.tree.currentIndex()
        persona = self.model.persona_at(index)
        if persona is not None:
            self.current_id = persona.id
            self._fill_persona(persona)
            self.form_stack.setCurrentIndex(1)
        elif index.isValid():
            self.current_id = None
            self._fill_group(self.model.group_at(index) or "")
            self.form_stack.setCurrentIndex(2)
        self.delete_button.setEnabled(persona is not None)

    def _fill_persona(self, p: Persona) -> None:
        self._filling = True
        self.name_edit.setText(p.name)
        self.group_combo.clear()
        self.group_combo.addItems(self.groups())
        self.group_combo.setCurrentText(p.group)
        for key, edit in self.attribute_edits.items():
            edit.setPlainText(getattr(p, key))
        self._filling = False
        origin = {"generated": "written by the model", "human": "added by a person",
                  "imported": "imported from a Personas sheet"}[p.origin]
        edits = self.session.persona_edits(p.id)
        last = f"; last changed by {edits[-1].who} ({edits[-1].at[:16].replace('T', ' ')})" \
            if edits else ""
        self.status_label.setText(f"{origin.capitalize()}"
                                  + (", changed by a person" if p.edited else "") + last)
        if p.evidence:
            where = p.document + (f", page {p.page}" if p.page is not None else
                                  " (page not found)")
            self.evidence_label.setText(f"“{_html(p.evidence)}”<br><i>{_html(where)}</i>")
        else:
            self.evidence_label.setText("<i>No evidence: this persona was added or imported "
                                        "without a quote.</i>")
        has_doc = bool(p.document) and self.session.has_document(p.document)
        self.evidence_button.setEnabled(has_doc)

    def _fill_group(self, group: str) -> None:
        self.group_name_edit.setText(group)
        self.group_about.setText(self.model.describe(group) or "")
        self.group_members.clear()
        self.group_members.addItems([p.name for p in self.model.members.get(group, [])])
        self.merge_combo.clear()
        self.merge_combo.addItems([g for g in self.groups() if g != group])
        self.merge_button.setEnabled(self.merge_combo.count() > 0)

    # ----------------------------------------------------------------------------- editing
    def _field_typed(self, key: str, text: str) -> None:
        if self._filling or self.current_id is None:
            return
        self._pending[key] = text
        self._timer.start()

    def _attribute_typed(self, key: str) -> None:
        if self._filling or self.current_id is None:
            return
        self._pending[key] = self.attribute_edits[key].toPlainText()
        self._timer.start()

    @Slot()
    def flush(self) -> None:
        """Store the fields typed since the last save (also called on leaving a field)."""
        self._timer.stop()
        pending, self._pending = self._pending, {}
        persona = self.current()
        if persona is None or not pending:
            return
        changes = []
        for key, value in pending.items():
            value = value.strip() if key == "name" else value
            if key in REQUIRED_PERSONA_FIELDS and not value.strip():
                # the one persona rule (core.majeval.model.persona_problem)
                self.message.setText(f"A persona needs {PERSONA_FIELD_WORDS[key]}; the old "
                                     f"{key} was kept.")
                continue
            if getattr(persona, key) != value:
                changes.append((key, value))
        if changes:
            self._apply(persona.id, changes, record=True)

    def _apply(self, persona_id: str, changes: list[tuple[str, Any]], *, record: bool) -> None:
        """Store field changes of one persona through the engine (who and when are kept)."""
        persona = self.persona(persona_id)
        if persona is None:
            return
        undo = []
        for key, value in changes:
            undo.append(("edit", (persona_id, key, getattr(persona, key))))
            persona = self.session.edit_persona(persona, key, value, self.who())
        if record:
            self.undo_stack.append(undo)
        self._after_change(persona_id)

    def _after_change(self, select: str | None = None) -> None:
        self.reload(select)
        self.changed.emit()

    @Slot(str, str)
    def move_persona(self, persona_id: str, group: str) -> None:
        """Move a persona to ``group`` (a new name starts a new group)."""
        self.flush()
        persona = self.persona(persona_id)
        group = " ".join(group.split())
        if persona is None or not group or persona.group == group:
            return
        self._apply(persona_id, [("group", group)], record=True)
        self.message.setText(f"{persona.name} moved to {group}.")

    def _group_edits(self, mapping: dict[str, str], what: str) -> None:
        """Move every persona of the groups in ``mapping`` (old -> new) as one undo step."""
        self.flush()
        undo = []
        for persona in list(self.personas):
            new = mapping.get(persona.group)
            if new and new != persona.group:
                undo.append(("edit", (persona.id, "group", persona.group)))
                self.session.edit_persona(persona, "group", new, self.who())
        groups = self.session.groups()
        if groups:
            names = {g.name for g in groups}
            kept = []
            for g in groups:
                target = mapping.get(g.name)
                if target is None:
                    kept.append(g)
                elif target not in names:  # renamed (a merge drops the source group)
                    kept.append(g.model_copy(update={"name": target}))
            self.session.save_groups(kept, origin="human")
        if undo:
            self.undo_stack.append(undo)
        self.message.setText(what)
        self._after_change()

    def rename_group(self, old: str, new: str) -> None:
        new = " ".join(new.split())
        if not new or new == old:
            return
        if new in self.groups():
            self.message.setText(f"There is already a group called {new}. Use Merge to join "
                                 "the two groups.")
            return
        self._group_edits({old: new}, f"Group {old} renamed to {new}.")
        index = self.model.group_index(new)
        if index.isValid():
            self.tree.setCurrentIndex(index)

    def merge_groups(self, source: str, target: str) -> None:
        if source == target or target not in self.groups():
            return
        self._group_edits({source: target}, f"Group {source} merged into {target}.")

    @Slot()
    def _rename_typed(self) -> None:
        group = self.model.group_at(self.tree.currentIndex())
        if group:
            self.rename_group(group, self.group_name_edit.text())

    @Slot()
    def _merge_chosen(self) -> None:
        group = self.model.group_at(self.tree.currentIndex())
        if group and self.merge_combo.currentText():
            self.merge_groups(group, self.merge_combo.currentText())

    @Slot(int)
    def _group_chosen(self, _i: int) -> None:
        if not self._filling and self.current_id:
            self.move_persona(self.current_id, self.group_combo.currentText())

    @Slot()
    def _group_typed(self) -> None:
        if not self._filling and self.current_id:
            self.move_persona(self.current_id, self.group_combo.currentText())

    @Slot()
    def add_persona(self) -> Persona | None:
        self.flush()
        group = self.model.group_at(self.tree.currentIndex()) or (self.groups() or ["New group"])[0]
        taken = {p.name for p in self.personas if p.group == group}
        n = 1
        while f"New persona {n}" in taken:
            n += 1
        persona = self.session.add_persona(group, f"New persona {n}", self.who())
        self.undo_stack.append([("delete", persona)])
        self.message.setText(f"Added a persona to {group}: fill in its name and attributes; "
                             "it needs a perspective before it can take part in a debate.")
        self._after_change(persona.id)
        self.name_edit.setFocus()
        self.name_edit.selectAll()
        return persona

    @Slot()
    def delete_current(self) -> None:
        self.flush()
        persona = self.current()
        if persona is None:
            return
        self.session.delete_persona(persona, self.who())
        self.undo_stack.append([("restore", persona)])
        self.current_id = None
        self.message.setText(f"{persona.name} deleted. Undo brings it back.")
        self._after_change()

    @Slot()
    def undo(self) -> None:
        """Undo the last change (stored as a person's edit, like any other)."""
        self.flush()
        if not self.undo_stack:
            return
        steps = self.undo_stack.pop()
        select = None
        for kind, payload in reversed(steps):
            if kind == "edit":
                persona_id, key, old = payload
                persona = next((p for p in self.session.personas() if p.id == persona_id),
                               None)
                if persona is not None and getattr(persona, key) != old:
                    self.session.edit_persona(persona, key, old, self.who())
                select = persona_id
            elif kind == "delete":
                self.session.delete_persona(payload, self.who())
            elif kind == "restore":
                self.session.restore_persona(payload, self.who())
                select = payload.id
        self.message.setText("Undone.")
        self._after_change(select)

    # --------------------------------------------------------------------------- evidence
    @Slot()
    def show_evidence(self) -> EvidenceDialog | None:
        """Open the page the current persona's evidence comes from, sentence highlighted."""
        persona = self.current()
        if persona is None or not persona.document:
            return None
        try:
            document = self.session.document(persona.document)
        except KeyError:
            self.message.setText(f"The document {persona.document} is no longer in the project.")
            return None
        if self.evidence_dialog is None:
            self.evidence_dialog = EvidenceDialog(self)
        self.evidence_dialog.show_evidence(document, persona.evidence, persona.page,
                                           persona.name)
        self.evidence_dialog.open()
        return self.evidence_dialog

    # ---------------------------------------------------------------------- import/export
    def ask_path(self, save: bool) -> str | None:
        """Ask for a Personas workbook (tests replace this)."""
        if save:
            return save_file(self, "Export the personas", "personas.xlsx")
        return open_file(self, "Import personas")

    @Slot()
    def _ask_export(self) -> None:
        path = self.ask_path(save=True)
        if path:
            self.export_to(path)

    @Slot()
    def _ask_import(self) -> None:
        path = self.ask_path(save=False)
        if path:
            self.import_from(path)

    def export_to(self, path: str | Path) -> Any:
        """Write the personas as the command line does (``session.export_personas``: with the
        documents and task they were made from), in a step that can be watched."""
        self.flush()
        target = xlsx_path(path)
        snapshot = self.session.snapshot()

        def step(progress: Progress, cancel: CancelToken) -> Path:
            progress.start(f"Writing {target.name}", total=1)
            snapshot.export_personas(target)
            progress.advance(1)
            return target

        self.file_panel.show()
        return start_step(self.file_panel, step, title=f"Exporting to {target.name}",
                          on_done=lambda o: self._file_done(o, f"Saved {target}."))

    def import_from(self, path: str | Path) -> Any:
        self.flush()
        source = Path(path)

        def step(progress: Progress, cancel: CancelToken) -> PersonasRead:
            progress.start(f"Reading {source.name}", total=1)
            read = read_personas(source)
            progress.advance(1)
            return read

        self.file_panel.show()
        return start_step(self.file_panel, step, title=f"Importing {source.name}",
                          on_done=self._imported)

    def _imported(self, outcome: RunOutcome) -> None:
        if not outcome.finished:
            return
        read = outcome.result
        if read.errors:
            self.file_panel.fail("The personas were not imported:\n" + "\n".join(
                i.message for i in read.errors[:8]))
            return
        self.session.replace_personas(read.personas, self.who(), read.descriptions)
        self.undo_stack.clear()
        notes = "".join(f"\n{i.message}" for i in read.warnings[:4])
        self.file_panel.hide()
        self.message.setText(f"Imported {count(len(read.personas), 'persona')} in "
                             f"{count(len(read.groups), 'group')}.{notes}")
        self._after_change()

    def _file_done(self, outcome: RunOutcome, text: str) -> None:
        if outcome.finished:
            self.file_panel.hide()
            self.message.setText(text)


def lonely_text(groups: list[str]) -> str:
    """The notice for groups of one persona (they cannot debate)."""
    if not groups:
        return ""
    names = ", ".join(groups)
    if len(groups) == 1:
        return (f"The group {names} has one persona, so it cannot debate: its persona's own "
                "evaluation is the group's score, and its change and agreement within the "
                "group are undefined. Add a persona to it (page Personas) to have a debate.")
    return (f"The groups {names} have one persona each, so they cannot debate: each persona's "
            "own evaluation is its group's score, and their change and agreement within the "
            "group are undefined. Add personas to them (page Personas) to have debates.")


def _html(text: str) -> str:
    import html

    return html.escape(str(text))
