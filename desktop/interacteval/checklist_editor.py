"""The checklist editor: components as headings, questions editable, reordered by drag and drop,
added, deleted, moved between components, with the attributes (and whose) behind each question.

Every change is stored in the project at once through the wizard's session
(:meth:`core.interacteval.session.InteractEvalSession.edit_checklist`: ``project.record_edit``,
with the user's name); Undo restores the checklist as it was before the last change (also
stored, as an edit by the same person).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from core.interacteval.model import Checklist
from core.interacteval.session import InteractEvalSession
from desktop.file_dialogs import open_file
from desktop.interacteval.models import ChecklistModel
from desktop.widgets import hint_label, note_box, pane, splitter

__all__ = ["ChecklistEditor"]


class ChecklistEditor(QWidget):
    """Edits one dimension's checklist; ``saved(checklist)`` after each stored change and
    ``import_requested`` / ``export_requested`` for the Excel buttons (the wizard handles them)."""

    saved = Signal(object)
    import_requested = Signal()
    export_requested = Signal()
    #: A question's "fails good texts" badge was clicked (the question's text).
    disagreements_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session: InteractEvalSession | None = None
        self.who = ""
        self.undo_stack: list[Checklist] = []
        #: dimension -> (its undo history, the checklist as this editor last stored it)
        self._undo_stacks: dict[str, tuple[list[Checklist], Checklist | None]] = {}
        self.model = ChecklistModel()
        self.model.changed.connect(self._changed)

        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setDragEnabled(True)
        self.tree.setAcceptDrops(True)
        self.tree.setDropIndicatorShown(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.tree.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.tree.setWordWrap(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(False)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.clicked.connect(self._clicked)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)

        self.add_question_button = QPushButton("Add question")
        self.add_question_button.setToolTip("Add a question under the selected component.")
        self.add_question_button.clicked.connect(self.add_question)
        self.add_component_button = QPushButton("Add component")
        self.add_component_button.clicked.connect(self.add_component)
        self.delete_button = QPushButton("Delete")
        self.delete_button.setToolTip("Delete the selected question (or an empty component).")
        self.delete_button.clicked.connect(self.delete_selected)
        self.up_button = QPushButton("Move up")
        self.up_button.clicked.connect(lambda: self.move_selected(-1))
        self.down_button = QPushButton("Move down")
        self.down_button.clicked.connect(lambda: self.move_selected(1))
        self.move_combo = QComboBox()
        self.move_combo.setMinimumWidth(160)
        self.move_combo.setToolTip("Move the selected question under this component.")
        self.move_button = QPushButton("Move to")
        self.move_button.clicked.connect(self._move_to_chosen)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip("Take back the last change.")
        self.undo_button.clicked.connect(self.undo)
        self.import_button = QPushButton("Import from Excel…")
        self.import_button.setToolTip("Replace checklists with those of a checklist workbook "
                                      "(sheet “Checklist”), e.g. one edited in Excel.")
        self.import_button.clicked.connect(self.import_requested)
        self.export_button = QPushButton("Export to Excel…")
        self.export_button.setToolTip("Save the checklists as a workbook (sheet “Checklist”) to "
                                      "share or edit in Excel.")
        self.export_button.clicked.connect(self.export_requested)

        row1 = QHBoxLayout()
        for widget in (self.add_question_button, self.add_component_button, self.delete_button,
                       self.up_button, self.down_button):
            row1.addWidget(widget)
        row1.addSpacing(12)
        row1.addWidget(self.move_button)
        row1.addWidget(self.move_combo)
        row1.addStretch(1)
        row1.addWidget(self.undo_button)
        row2 = QHBoxLayout()
        row2.addWidget(self.import_button)
        row2.addWidget(self.export_button)
        self.status_label = hint_label("")
        row2.addWidget(self.status_label, 1)

        self.origin_title = QLabel("<b>Where the selected question comes from</b>")
        self.key_label = QLabel()
        self.key_label.setWordWrap(True)
        self.origin_table = QTableWidget(0, 2)
        self.origin_table.setHorizontalHeaderLabels(["Think-aloud attribute", "Whose"])
        self.origin_table.verticalHeader().setVisible(False)
        self.origin_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.origin_table.setWordWrap(True)
        self.origin_table.horizontalHeader().setSectionResizeMode(
            0, QHeaderView.ResizeMode.Stretch)
        self.origin_table.horizontalHeader().setSectionResizeMode(
            1, QHeaderView.ResizeMode.ResizeToContents)
        self.remarks_label = note_box()
        self.remarks_label.hide()
        side = pane(self.origin_title, self.key_label, (self.origin_table, 1),
                    self.remarks_label)
        side.layout().setContentsMargins(6, 0, 0, 0)
        split = splitter(self.tree, side, sizes=[700, 380], stretch=[3, 2])

        self.shared_label = hint_label("")
        self.shared_label.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row1)
        layout.addWidget(self.shared_label)
        layout.addWidget(split, 1)
        layout.addLayout(row2)
        self._update_buttons()

    # -- filling --------------------------------------------------------------------------------
    def set_checklist(self, session: InteractEvalSession, checklist: Checklist | None,
                      who: str) -> None:
        """Show ``checklist`` (None: nothing to edit yet); changes are stored through
        ``session`` (in its project)."""
        if session is not self.session:
            self._undo_stacks = {}
        self.session = session
        self.who = who
        self.model.who = who
        # Each dimension keeps its undo history while the user visits other pages; it starts
        # afresh when the checklist was changed elsewhere (rebuilt or imported).
        key = checklist.dimension if checklist else ""
        stacks = self._undo_stacks
        kept, last = stacks.get(key, ([], None))
        if checklist is None or last is None or last.model_dump() != checklist.model_dump():
            kept = []
        self.undo_stack = kept
        stacks[key] = (kept, checklist)
        self.model.set_checklist(checklist)
        self.tree.expandAll()
        self._fill_move_combo()
        remarks = checklist.remarks if checklist else []
        self.remarks_label.setText("Notes from building it: " + " ".join(remarks))
        self.remarks_label.setVisible(bool(remarks))
        self.status_label.setText("")
        self._show_shared()
        self._current_changed()
        self._update_buttons()

    def _show_shared(self) -> None:
        """Say once what every question starts with (each row then shows what follows first,
        so questions that differ only at their end do not look the same)."""
        start = " ".join(self.model.shared_start().split())
        self.shared_label.setText(
            f"All {self.model.question_count()} questions start with “{start.rstrip(' “:')}”: "
            "each row shows first what follows, then that shared start (double-click a "
            "question to see and edit it whole)." if start else "")
        self.shared_label.setVisible(bool(start))

    def checklist(self) -> Checklist:
        return self.model.checklist()

    def _fill_move_combo(self) -> None:
        self.move_combo.clear()
        for group in self.model.groups:
            self.move_combo.addItem(group.name)

    # -- storing --------------------------------------------------------------------------------
    _last: Checklist | None = None

    @Slot(str)
    def _changed(self, description: str) -> None:
        if self.session is None:
            return
        checklist = self.model.checklist()
        before = self._stored()
        if before is not None:
            self.undo_stack.append(before)
        self.session.edit_checklist(checklist, who=self.who or "unnamed person")
        self._remember(checklist)
        self._fill_move_combo()
        self._show_shared()
        self.status_label.setText(f"Saved: {description} (by {self.who or 'unnamed person'}).")
        self._update_buttons()
        self.saved.emit(checklist)

    def _remember(self, checklist: Checklist) -> None:
        """What this editor stored last for the dimension (with its undo history), so that
        coming back to the page keeps the history."""
        stored = self._stored() or checklist
        self._undo_stacks[stored.dimension] = (self.undo_stack, stored)

    def _stored(self) -> Checklist | None:
        return self.session.checklist(self.model.dimension) if self.session else None

    @Slot()
    def undo(self) -> bool:
        """Restore the checklist as it was before the last change."""
        if not self.undo_stack or self.session is None:
            return False
        previous = self.undo_stack.pop()
        self.session.edit_checklist(previous, who=self.who or "unnamed person")
        stack = self.undo_stack
        self.model.set_checklist(previous)
        self.undo_stack = stack
        self._remember(previous)
        self.tree.expandAll()
        self._fill_move_combo()
        self.status_label.setText("Undone: the checklist is back as it was before the last "
                                  "change.")
        self._update_buttons()
        self.saved.emit(previous)
        return True

    # -- actions --------------------------------------------------------------------------------
    def _selected(self) -> tuple[int, int | None] | None:
        index = self.tree.currentIndex()
        if not index.isValid():
            return None
        if index.internalId() == 0:
            return index.row(), None
        return index.internalId() - 1, index.row()

    def select(self, component: int, row: int | None = None) -> None:
        index = (self.model.index(component, 0) if row is None
                 else self.model.question_index(component, row))
        self.tree.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)

    @Slot()
    def add_question(self) -> None:
        if not self.model.groups:
            self.model.add_component("New component")
        where = self._selected()
        component = where[0] if where else len(self.model.groups) - 1
        row = (where[1] + 1) if where and where[1] is not None else None
        index = self.model.add_question(component, "New question: does the text …?", row)
        self.tree.expand(self.model.index(component, 0))
        self.select(component, index.row())
        self.tree.edit(index)

    @Slot()
    def add_component(self) -> None:
        row = self.model.add_component("New component")
        self.select(row)
        self.tree.edit(self.model.index(row, 0))

    @Slot()
    def delete_selected(self) -> None:
        where = self._selected()
        if where is None:
            return
        component, row = where
        if row is not None:
            self.model.remove_question(component, row)
        elif not self.model.groups[component].items:
            self.model.remove_component(component)
        else:
            self.status_label.setText("A component with questions cannot be deleted: delete or "
                                      "move its questions first.")

    def move_selected(self, step: int) -> None:
        where = self._selected()
        if where is None or where[1] is None:
            return
        component, row = where
        target = row + step
        if not 0 <= target < len(self.model.groups[component].items):
            return
        self.model.move_question(component, row, component, target + (1 if step > 0 else 0))
        self.select(component, target)

    @Slot()
    def _move_to_chosen(self) -> None:
        where = self._selected()
        if where is None or where[1] is None:
            return
        target = self.move_combo.currentIndex()
        if target < 0 or target == where[0]:
            return
        self.model.move_question(where[0], where[1], target,
                                 len(self.model.groups[target].items))
        self.select(target, len(self.model.groups[target].items) - 1)

    # -- the side panel -------------------------------------------------------------------------
    @Slot()
    def _current_changed(self, *_args: Any) -> None:
        index = self.tree.currentIndex()
        item = self.model.item_at(index)
        group = self.model.group_at(index)
        self.origin_table.setRowCount(0)
        if group is None:
            self.key_label.setText("Select a question to see the think-aloud attributes it "
                                   "was built from and who gave them.")
        else:
            key = (item.key_question if item and item.key_question else group.key_question)
            self.key_label.setText(
                f"Component: <b>{group.name}</b><br>Key question (a heading, not asked): "
                f"{key or '—'}")
            attributes = item.source_attributes if item else []
            self.origin_table.setRowCount(len(attributes))
            for r, attribute in enumerate(attributes):
                whose = attribute.source or "unknown"
                kind = {"model": "model", "person": "person"}.get(attribute.source_kind, "")
                self.origin_table.setItem(r, 0, QTableWidgetItem(attribute.text))
                self.origin_table.setItem(
                    r, 1, QTableWidgetItem(f"{whose} ({kind})" if kind else whose))
            self.origin_table.resizeRowsToContents()
        self._update_buttons()

    def _update_buttons(self) -> None:
        has = self.session is not None and bool(self.model.dimension)
        where = self._selected() if has else None
        question = where is not None and where[1] is not None
        for button in (self.add_question_button, self.add_component_button, self.export_button,
                       self.import_button):
            button.setEnabled(has or button is self.import_button)
        self.delete_button.setEnabled(where is not None)
        self.up_button.setEnabled(question)
        self.down_button.setEnabled(question)
        self.move_button.setEnabled(question and len(self.model.groups) > 1)
        self.undo_button.setEnabled(bool(self.undo_stack))

    def ask_import_path(self) -> str | None:
        return open_file(self, "Import checklists",
                         "Checklist workbooks (*.xlsx *.xls *.csv);;All files (*)")

    def set_badges(self, badges: dict[str, str]) -> None:
        """Mark the questions that fail texts people call good (question -> why)."""
        self.model.set_badges(badges)

    @Slot(object)
    def _clicked(self, index: Any) -> None:
        item = self.model.item_at(index)
        if (item is not None and index.column() == self.model.BADGE_COLUMN
                and item.question in self.model.badges):
            self.disagreements_requested.emit(item.question)
