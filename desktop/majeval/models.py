"""Qt models of the MAJ-Eval wizard: plain rows for tables, and the persona tree.

:class:`RowsModel` shows a list of dicts (read-only, or editable in chosen columns);
:class:`PersonaTreeModel` shows stakeholder groups with their personas and lets a persona be
dragged onto another group (it asks the editor to move it: the model itself stores nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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

from core.majeval.model import persona_problem
from desktop.views import ColumnsModel, GroupTreeMixin, MoveDragMixin

__all__ = ["PERSONA_MIME", "VALUE_ROLE", "Col", "PersonaTreeModel", "RowsModel"]

VALUE_ROLE = int(Qt.ItemDataRole.UserRole) + 1
PERSONA_MIME = "application/x-evaldesk-persona"
FAILED = QColor("#fde2e1")
EDITED = QColor("#1d4ed8")
INCOMPLETE = QColor("#b91c1c")

_Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class Col:
    """A column: the row key, its title, a tooltip, whether it may be edited, number format."""

    key: str
    title: str
    tip: str = ""
    editable: bool = False
    digits: int | None = None
    missing: str = "—"


class RowsModel(ColumnsModel):
    """A table over a list of dicts. A row whose ``status`` is "failed" is tinted; a number is
    shown with ``digits`` decimals; an empty value shows the column's ``missing`` text."""

    #: An editable cell changed: (row, key, new value).
    edited = Signal(int, str, object)

    columns: list[Col]
    _rows: list[dict[str, Any]]

    def set_rows(self, rows: Sequence[dict[str, Any]], columns: Sequence[Col] | None = None
                 ) -> None:
        self.beginResetModel()
        if columns is not None:
            self.columns = list(columns)
        self._rows = [dict(r) for r in rows]
        self.endResetModel()

    def rows(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._rows]

    def row(self, row: int) -> dict[str, Any]:
        return dict(self._rows[row])

    def _text(self, value: Any, col: Col) -> str:
        if value is None or value == "":
            return col.missing
        if isinstance(value, float) and col.digits is not None:
            return f"{value:.{col.digits}f}"
        return str(value)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        col = self.columns[index.column()]
        row = self._rows[index.row()]
        value = row.get(col.key)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(value, col)
        if role == Qt.ItemDataRole.EditRole:
            return "" if value is None else value
        if role == VALUE_ROLE:
            return value
        if role == Qt.ItemDataRole.ToolTipRole:
            text = self._text(value, col)
            return text if len(text) > 40 else (col.tip or None)
        if role == Qt.ItemDataRole.BackgroundRole and row.get("status") == "failed":
            return QBrush(FAILED)
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, (int, float)):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # rows are numbered with ints here (the base class gives text, within the rows)
        if orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return section + 1
        return super().headerData(section, orientation, role)

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        col = self.columns[index.column()]
        if not col.editable:
            return False
        row = self._rows[index.row()]
        if row.get(col.key) == value:
            return False
        row[col.key] = value
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole,
                                             Qt.ItemDataRole.EditRole])
        self.edited.emit(index.row(), col.key, value)
        return True

    def append(self, row: dict[str, Any]) -> None:
        self.beginInsertRows(QModelIndex(), len(self._rows), len(self._rows))
        self._rows.append(dict(row))
        self.endInsertRows()

    def remove(self, row: int) -> None:
        if 0 <= row < len(self._rows):
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._rows[row]
            self.endRemoveRows()


class PersonaTreeModel(MoveDragMixin, GroupTreeMixin, QAbstractItemModel):
    """Groups (top level) and their personas (children). Dragging a persona onto a group (or
    onto one of its personas) emits :attr:`move_requested`; the editor stores the move and
    calls :meth:`set_personas` again."""

    drag_mime = PERSONA_MIME

    #: (persona id, target group name)
    move_requested = Signal(str, str)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.groups: list[str] = []
        self.members: dict[str, list[Any]] = {}
        self.describe: Callable[[str], str] = lambda _g: ""

    # -- filling ----------------------------------------------------------------------------
    def set_personas(self, personas: Sequence[Any]) -> None:
        self.beginResetModel()
        self.groups, self.members = [], {}
        for p in personas:
            if p.group not in self.members:
                self.groups.append(p.group)
                self.members[p.group] = []
            self.members[p.group].append(p)
        self.endResetModel()

    def group_index(self, group: str) -> QModelIndex:
        if group not in self.groups:
            return QModelIndex()
        return self.index(self.groups.index(group), 0)

    def persona_index(self, persona_id: str) -> QModelIndex:
        for g, group in enumerate(self.groups):
            for r, p in enumerate(self.members[group]):
                if p.id == persona_id:
                    return self.index(r, 0, self.index(g, 0))
        return QModelIndex()

    def persona_at(self, index: _Index) -> Any:
        if not index.isValid() or index.internalId() == 0:
            return None
        group = self.groups[index.internalId() - 1]
        return self.members[group][index.row()]

    def group_at(self, index: _Index) -> str | None:
        if not index.isValid():
            return None
        if index.internalId() == 0:
            return self.groups[index.row()]
        return self.groups[index.internalId() - 1]

    # -- structure --------------------------------------------------------------------------
    def group_count(self) -> int:
        return len(self.groups)

    def member_count(self, group_row: int) -> int:
        return len(self.members[self.groups[group_row]])

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 1

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        persona = self.persona_at(index)
        if persona is None:
            group = self.groups[index.row()]
            n = len(self.members[group])
            if role == Qt.ItemDataRole.DisplayRole:
                return f"{group}  ({n} persona{'s' if n != 1 else ''})"
            if role == Qt.ItemDataRole.EditRole:
                return group
            if role == Qt.ItemDataRole.FontRole:
                font = QFont()
                font.setBold(True)
                return font
            if role == Qt.ItemDataRole.ToolTipRole:
                return self.describe(group) or (
                    "A stakeholder group: its personas debate together. Drop a persona here "
                    "to move it into this group.")
            return None
        problem = persona_problem(persona)
        if role == Qt.ItemDataRole.DisplayRole:
            mark = "  ✎ edited" if persona.edited else ""
            origin = "  (imported)" if persona.origin == "imported" else ""
            incomplete = "  ⚠ incomplete" if problem else ""
            return f"{persona.name}{mark}{origin}{incomplete}"
        if role == Qt.ItemDataRole.EditRole:
            return persona.name
        if role == Qt.ItemDataRole.ForegroundRole and problem:
            return QBrush(INCOMPLETE)
        if role == Qt.ItemDataRole.ForegroundRole and persona.edited:
            return QBrush(EDITED)
        if role == Qt.ItemDataRole.ToolTipRole:
            if problem:
                return f"Not complete: {problem}. It cannot take part in a debate until then."
            return persona.perspective or persona.name
        if role == VALUE_ROLE:
            return persona.id
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if section == 0 and orientation == Qt.Orientation.Horizontal \
                and role == Qt.ItemDataRole.DisplayRole:
            return "Groups and personas"
        return None

    # -- drag and drop ----------------------------------------------------------------------
    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable \
            | Qt.ItemFlag.ItemIsDropEnabled
        if index.internalId() != 0:
            flags |= Qt.ItemFlag.ItemIsDragEnabled
        return flags

    def drag_payload(self, indexes: Sequence[QModelIndex]) -> Any:
        """The ids of the dragged personas."""
        return [p.id for p in (self.persona_at(i) for i in indexes) if p is not None]

    def canDropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int,
                        parent: _Index) -> bool:
        return data.hasFormat(PERSONA_MIME) and parent.isValid()

    def dropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int,
                     parent: _Index) -> bool:
        if not self.canDropMimeData(data, action, row, column, parent):
            return False
        group = self.group_at(parent)
        ids = self.dropped(data)
        if not isinstance(ids, list):
            return False
        for persona_id in ids:
            self.move_requested.emit(str(persona_id), str(group))
        return False  # the editor rebuilds the tree; Qt must not remove the dragged row
