"""Table and tree models of the InteractEval wizard.

* :class:`RowsModel`: an editable table over plain dict rows (dimensions, key questions,
  sub-questions, attribute groups); ``edited`` is emitted after a person changes a cell.
* :class:`SamplesModel`: the rated samples of one dimension, with a tick for the chosen ones.
* :class:`ChecklistModel`: the checklist as a tree (components -> questions) that can be
  edited, reordered by drag and drop, and moved between components; every change marks the
  question with the editor's name and emits ``changed``.

Result tables use the shared :class:`desktop.views.FrameModel`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QMimeData,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont

from core.interacteval.model import Checklist, ChecklistItem, ScoredSample
from core.words import count
from desktop.judge_check import BADGE
from desktop.views import (
    ColumnsModel,
    GroupTreeMixin,
    HeaderedTableModel,
    MoveDragMixin,
    full_text_tip,
    header_title,
    preview,
)

__all__ = ["ChecklistModel", "Group", "RowsModel", "SamplesModel"]

_Index = QModelIndex | QPersistentModelIndex
MIME = "application/x-evaldesk-checklist-question"
MUTED = QColor("#5f6b7a")


@dataclass
class RowColumn:
    key: str
    title: str
    editable: bool = False
    tip: str = ""
    choices: Sequence[str] = ()


class RowsModel(ColumnsModel):
    """Rows of plain dicts; editable columns emit ``edited(row, key)`` after a change."""

    edited = Signal(int, str)
    columns: list[RowColumn]
    _rows: list[dict[str, Any]]

    def set_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        self.beginResetModel()
        self._rows = [dict(r) for r in rows]
        self.endResetModel()

    def rows(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._rows]

    def set_choices(self, key: str, choices: Sequence[str]) -> None:
        for column in self.columns:
            if column.key == key:
                column.choices = list(choices)

    def insert_row(self, row: int, values: dict[str, Any]) -> None:
        row = max(0, min(row, len(self._rows)))
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.insert(row, dict(values))
        self.endInsertRows()

    def remove_rows(self, rows: Sequence[int]) -> None:
        for row in sorted(set(rows), reverse=True):
            if 0 <= row < len(self._rows):
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._rows[row]
                self.endRemoveRows()

    # -- Qt -------------------------------------------------------------------------------------
    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        if not 0 <= index.column() < len(self.columns):
            return None
        column = self.columns[index.column()]
        value = self._rows[index.row()].get(column.key, "")
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return "" if value is None else str(value)
        if role == Qt.ItemDataRole.ToolTipRole:
            text = "" if value is None else str(value)
            return text if len(text) > 50 else (column.tip or None)
        if role == Qt.ItemDataRole.ForegroundRole and not column.editable:
            return QBrush(MUTED) if column.key in ("source", "who", "kind") else None
        return None

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if (role != Qt.ItemDataRole.EditRole or not index.isValid()
                or not self.columns[index.column()].editable):
            return False
        column = self.columns[index.column()]
        text = " ".join(str(value).split()) if column.key != "definition" else str(value).strip()
        if self._rows[index.row()].get(column.key) == text:
            return False
        self._rows[index.row()][column.key] = text
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole,
                                             Qt.ItemDataRole.EditRole])
        self.edited.emit(index.row(), column.key)
        return True


class SamplesModel(HeaderedTableModel):
    """The rated samples of one dimension; column 0 ticks the ones shown in the think-aloud."""

    HEADERS = ("Use", "Score", "About (source)", "Sample text")
    chosen_changed = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._samples: list[tuple[int, ScoredSample]] = []
        self._chosen: set[int] = set()

    def set_samples(self, samples: Sequence[tuple[int, ScoredSample]], chosen: Sequence[int]):
        """``samples``: (index in the choices' samples, sample) pairs."""
        self.beginResetModel()
        self._samples = list(samples)
        self._chosen = set(chosen)
        self.endResetModel()

    def chosen(self) -> list[int]:
        return [i for i, _ in self._samples if i in self._chosen]

    def sample_at(self, row: int) -> ScoredSample | None:
        return self._samples[row][1] if 0 <= row < len(self._samples) else None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._samples)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        flags = super().flags(index)
        if index.isValid() and index.column() == 0:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._samples):
            return None
        if not 0 <= index.column() < len(self.HEADERS):
            return None
        number, sample = self._samples[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.CheckStateRole and col == 0:
            return (Qt.CheckState.Checked if number in self._chosen
                    else Qt.CheckState.Unchecked)
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 1:
                return f"{sample.score:g}"
            if col == 2:
                return preview(sample.source, 80)
            if col == 3:
                return preview(sample.text)
            return ""
        if role == Qt.ItemDataRole.ToolTipRole and col in (2, 3):
            return full_text_tip(sample.source if col == 2 else sample.text)
        return None

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.CheckStateRole or index.column() != 0 or not index.isValid():
            return False
        number = self._samples[index.row()][0]
        checked = Qt.CheckState(value) == Qt.CheckState.Checked if not isinstance(
            value, bool) else value
        if checked == (number in self._chosen):
            return False
        if checked:
            self._chosen.add(number)
        else:
            self._chosen.discard(number)
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole])
        self.chosen_changed.emit()
        return True


# ------------------------------------------------------------------------------ checklist tree
#: The fewest characters of a shared start worth moving aside (a few shared words such as "Does
#: the text" are normal; the built-in model's questions shared 89 characters).
SHARED_START_MIN = 30


def shared_start(questions: Sequence[str]) -> str:
    """The longest start (ending at a word) that 3 or more questions all share, when it is at
    least :data:`SHARED_START_MIN` characters and shorter than each of them; "" otherwise."""
    texts = [q for q in questions if q]
    if len(texts) < 3:
        return ""
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    start = first[:n]
    if not start.endswith((" ", "“", '"', "'", ":")):
        start = start[: start.rfind(" ") + 1] if " " in start else ""
    if len(start.strip()) < SHARED_START_MIN or any(len(q) <= len(start) for q in texts):
        return ""
    return start


def distinguishing_first(question: str, start: str) -> str:
    """``question`` shown with what distinguishes it first ("Each example fits.”? — Does the
    text avoid … …") when it begins with the ``start`` all questions share."""
    if not start or not question.startswith(start):
        return question
    rest = question[len(start):].strip()
    shared = " ".join(start.split())
    if shared.endswith(("“", '"', "'")):  # the quote opened at the end goes with the rest
        rest, shared = shared[-1] + rest, shared[:-1].rstrip(" :")
    return f"{rest}  — {shared} …"


@dataclass
class Group:
    """A component of the checklist with its key question and its questions."""

    name: str
    key_question: str = ""
    items: list[ChecklistItem] = field(default_factory=list)


class ChecklistModel(MoveDragMixin, GroupTreeMixin, QAbstractItemModel):
    """The checklist as a tree: components (rows at the top) hold questions (their children).

    Column 0 is the component name or the question (both editable), column 1 who changed the
    question last, column 2 how many think-aloud attributes it came from. Questions can be
    dragged within and between components. Every change marks the questions it touched with
    :attr:`who` and emits ``changed(description)``.
    """

    drag_mime = MIME

    HEADERS = ("Question", "Changed by", "Based on", "Judge check")
    #: The column of the badge on questions that fail texts people call good.
    BADGE_COLUMN = 3
    changed = Signal(str)

    def __init__(self, who: str = "", parent=None) -> None:
        super().__init__(parent)
        self.who = who
        self.dimension = ""
        self.definition = ""
        self.remarks: list[str] = []
        self.samples: list[Any] = []
        self.groups: list[Group] = []
        #: question -> what its badge says (questions that fail texts people call good).
        self.badges: dict[str, str] = {}
        self._shared: tuple[tuple[str, ...], str] = ((), "")

    def set_badges(self, badges: dict[str, str]) -> None:
        """Mark the questions that fail good texts (question -> the badge's tooltip)."""
        self.badges = dict(badges)
        for gi, group in enumerate(self.groups):
            if group.items:
                self.dataChanged.emit(self.question_index(gi, 0, self.BADGE_COLUMN),
                                      self.question_index(gi, len(group.items) - 1,
                                                          self.BADGE_COLUMN))

    # -- filling / reading ----------------------------------------------------------------------
    def set_checklist(self, checklist: Checklist | None) -> None:
        self.beginResetModel()
        self.groups = []
        self.dimension = checklist.dimension if checklist else ""
        self.definition = checklist.definition if checklist else ""
        self.remarks = list(checklist.remarks) if checklist else []
        self.samples = list(checklist.samples) if checklist else []
        if checklist is not None:
            for item in checklist.items:
                group = next((g for g in self.groups if g.name == item.component), None)
                if group is None:
                    group = Group(item.component, item.key_question)
                    self.groups.append(group)
                group.items.append(item.model_copy(deep=True))
            for name in checklist.empty_components:
                if not any(g.name == name for g in self.groups):
                    self.groups.append(Group(name, ""))
        self.endResetModel()

    def checklist(self) -> Checklist:
        items = [item.model_copy(update={"component": g.name,
                                         "key_question": item.key_question or g.key_question})
                 for g in self.groups for item in g.items]
        return Checklist(dimension=self.dimension, definition=self.definition, items=items,
                         remarks=list(self.remarks), samples=list(self.samples),
                         empty_components=[g.name for g in self.groups if not g.items])

    def question_count(self) -> int:
        return sum(len(g.items) for g in self.groups)

    def shared_start(self) -> str:
        """The words every question starts with, when they are many (:func:`shared_start`);
        the questions are then shown with what distinguishes them first."""
        questions = tuple(item.question for g in self.groups for item in g.items)
        if self._shared[0] != questions:
            self._shared = (questions, shared_start(questions))
        return self._shared[1]

    def item_at(self, index: _Index) -> ChecklistItem | None:
        if not index.isValid() or index.internalId() == 0:
            return None
        group = self.groups[index.internalId() - 1]
        return group.items[index.row()] if 0 <= index.row() < len(group.items) else None

    def group_at(self, index: _Index) -> Group | None:
        if not index.isValid():
            return None
        gi = index.row() if index.internalId() == 0 else index.internalId() - 1
        return self.groups[gi] if 0 <= gi < len(self.groups) else None

    def question_index(self, component: int, row: int, column: int = 0) -> QModelIndex:
        return self.index(row, column, self.index(component, 0))

    # -- editing (each emits changed) -----------------------------------------------------------
    def _mark(self, item: ChecklistItem) -> None:
        if self.who:
            item.edited_by = self.who

    def set_question(self, component: int, row: int, text: str) -> bool:
        text = " ".join(str(text).split())
        item = self.groups[component].items[row]
        if not text or text == item.question:
            return False
        item.question = text
        self._mark(item)
        first = self.question_index(component, row, 0)
        self.dataChanged.emit(first, self.question_index(component, row, 2))
        self.changed.emit(f"edited question {row + 1} of “{self.groups[component].name}”")
        return True

    def rename_component(self, component: int, name: str) -> bool:
        name = " ".join(str(name).split())
        group = self.groups[component]
        if not name or name == group.name or any(g.name == name for g in self.groups):
            return False
        group.name = name
        for item in group.items:
            item.component = name
            self._mark(item)
        top = self.index(component, 0)
        self.dataChanged.emit(top, self.index(component, 2))
        if group.items:
            self.dataChanged.emit(self.question_index(component, 0, 0),
                                  self.question_index(component, len(group.items) - 1, 2))
        self.changed.emit(f"renamed a component to “{name}”")
        return True

    def add_component(self, name: str) -> int:
        name = " ".join(name.split()) or "New component"
        base, n = name, 2
        while any(g.name == name for g in self.groups):
            name, n = f"{base} ({n})", n + 1
        row = len(self.groups)
        self.beginInsertRows(QModelIndex(), row, row)
        self.groups.append(Group(name))
        self.endInsertRows()
        self.changed.emit(f"added the component “{name}”")
        return row

    def add_question(self, component: int, text: str, row: int | None = None) -> QModelIndex:
        group = self.groups[component]
        row = len(group.items) if row is None else max(0, min(row, len(group.items)))
        item = ChecklistItem(component=group.name, key_question=group.key_question,
                             question=" ".join(text.split()) or "New question?")
        self._mark(item)
        self.beginInsertRows(self.index(component, 0), row, row)
        group.items.insert(row, item)
        self.endInsertRows()
        self.changed.emit(f"added a question to “{group.name}”")
        return self.question_index(component, row)

    def remove_question(self, component: int, row: int) -> None:
        group = self.groups[component]
        self.beginRemoveRows(self.index(component, 0), row, row)
        item = group.items.pop(row)
        self.endRemoveRows()
        self.changed.emit(f"deleted “{item.question}”")

    def remove_component(self, component: int) -> None:
        self.beginRemoveRows(QModelIndex(), component, component)
        group = self.groups.pop(component)
        self.endRemoveRows()
        self.changed.emit(f"deleted the component “{group.name}” and its "
                          f"{count(len(group.items), 'question')}")

    def move_question(self, component: int, row: int, to_component: int, to_row: int) -> bool:
        """Move a question (``to_row`` counts positions before the move, like Qt's moveRows)."""
        source = self.groups[component]
        target = self.groups[to_component]
        to_row = max(0, min(to_row, len(target.items)))
        if component == to_component and to_row in (row, row + 1):
            return False
        src_parent, dst_parent = self.index(component, 0), self.index(to_component, 0)
        if not self.beginMoveRows(src_parent, row, row, dst_parent, to_row):
            return False
        item = source.items.pop(row)
        if component == to_component and to_row > row:
            to_row -= 1
        item.component = target.name
        item.key_question = target.key_question
        self._mark(item)
        target.items.insert(to_row, item)
        self.endMoveRows()
        where = ("within" if component == to_component else "to")
        self.changed.emit(f"moved “{item.question}” {where} “{target.name}”")
        return True

    # -- Qt: structure --------------------------------------------------------------------------
    def group_count(self) -> int:
        return len(self.groups)

    def member_count(self, group_row: int) -> int:
        return len(self.groups[group_row].items)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        return header_title(self.HEADERS, section, orientation, role)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        # a component (internal id 0) takes dropped questions; a question can be dragged
        flags |= (Qt.ItemFlag.ItemIsDropEnabled if index.internalId() == 0
                  else Qt.ItemFlag.ItemIsDragEnabled)
        if index.column() == 0:
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        col = index.column()
        if index.internalId() == 0:
            if not 0 <= index.row() < len(self.groups):
                return None
            group = self.groups[index.row()]
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
                if col == 0:
                    return group.name
                if col == 2 and role == Qt.ItemDataRole.DisplayRole:
                    n = len(group.items)
                    return f"{n} question{'s' if n != 1 else ''}"
                return ""
            if role == Qt.ItemDataRole.FontRole and col == 0:
                font = QFont()
                font.setBold(True)
                return font
            if role == Qt.ItemDataRole.ToolTipRole:
                return (f"Key question: {group.key_question}" if group.key_question
                        else "A component (a heading: its key question is not asked).")
            if role == Qt.ItemDataRole.ForegroundRole and col > 0:
                return QBrush(MUTED)
            return None
        item = self.item_at(index)
        if item is None:
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if col == 0:
                if role == Qt.ItemDataRole.DisplayRole:
                    return distinguishing_first(item.question, self.shared_start())
                return item.question
            if col == 1:
                return item.edited_by or ("" if role == Qt.ItemDataRole.EditRole else "generated")
            if col == 2:
                n = len(item.source_attributes)
                if not n:
                    return "no attributes" if role == Qt.ItemDataRole.DisplayRole else ""
                people = sum(1 for a in item.source_attributes if a.source_kind == "person")
                return f"{n} attribute{'s' if n != 1 else ''} ({people} from people)"
            if col == self.BADGE_COLUMN:
                return BADGE if item.question in self.badges else ""
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == 0:
                return item.question
            if col == self.BADGE_COLUMN and item.question in self.badges:
                return self.badges[item.question]
            if col == 2 and item.source_attributes:
                return "\n".join(a.label() for a in item.source_attributes)
        if role == Qt.ItemDataRole.ForegroundRole and col == 1:
            return QBrush(QColor("#b45309")) if item.edited_by else QBrush(MUTED)
        if role == Qt.ItemDataRole.ForegroundRole and col == self.BADGE_COLUMN:
            return QBrush(QColor("#b42318"))
        return None

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid() or index.column() != 0:
            return False
        if index.internalId() == 0:
            return self.rename_component(index.row(), str(value))
        return self.set_question(index.internalId() - 1, index.row(), str(value))

    # -- Qt: drag and drop ----------------------------------------------------------------------
    def drag_payload(self, indexes: Sequence[QModelIndex]) -> Any:
        """(component, row) of each dragged question."""
        return sorted({(i.internalId() - 1, i.row()) for i in indexes
                       if i.isValid() and i.internalId() != 0})

    def canDropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int,
                        parent: _Index) -> bool:
        return data.hasFormat(MIME) and action == Qt.DropAction.MoveAction

    def dropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int,
                     parent: _Index) -> bool:
        """Move the dragged question(s) here. Returns False on purpose: the move is done, so
        the view must not remove the source rows afterwards."""
        if not self.canDropMimeData(data, action, row, column, parent):
            return False
        where = [tuple(p) for p in self.dropped(data) or []]
        if not where:
            return False
        if not parent.isValid():  # dropped between components: append to the one above
            if not self.groups:
                return False
            gi = max(0, min((row if row >= 0 else len(self.groups)) - 1, len(self.groups) - 1))
            to_row = len(self.groups[gi].items)
        elif parent.internalId() == 0:
            gi = parent.row()
            to_row = row if row >= 0 else len(self.groups[gi].items)
        else:  # dropped onto a question: before it
            gi = parent.internalId() - 1
            to_row = parent.row()
        # move the last first so earlier positions stay valid
        items = [self.groups[c].items[r] for c, r in where
                 if 0 <= c < len(self.groups) and 0 <= r < len(self.groups[c].items)]
        for item in items:
            c = next(i for i, g in enumerate(self.groups) if any(x is item for x in g.items))
            r = next(i for i, x in enumerate(self.groups[c].items) if x is item)
            if self.move_question(c, r, gi, to_row):
                to_row = next(i for i, x in enumerate(self.groups[gi].items) if x is item) + 1
        return False
