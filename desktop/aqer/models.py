"""Table models of the AQER wizard: the sheet preview, the problems list and result tables.

Every model is a read-only :class:`QAbstractTableModel` over plain Python rows (the wizard hands
them pandas frames; values are converted once, so painting never touches pandas). Result tables
give the raw value under :data:`SORT_ROLE` so a :class:`QSortFilterProxyModel` sorts numbers as
numbers and puts "not scored" last in either order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QApplication, QStyle

__all__ = [
    "ROLE_COLOURS",
    "IssuesModel",
    "PreviewModel",
]

#: Tints of the columns chosen for each role in the preview (light, readable under black text).
ROLE_COLOURS = {
    "questions": "#dbeafe",
    "worker names": "#dcfce7",
    "answers": "#fef3c7",
    "expert grades": "#f3e8ff",
    "AI answers": "#ffe4e6",
    "AI marks": "#ffe4e6",
}

_Index = QModelIndex | QPersistentModelIndex


class IssuesModel(QAbstractTableModel):
    """Problems found in the answers (``core.tables.TableIssue``): errors first."""

    HEADERS = ("", "Row", "What to check")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._issues: list[Any] = []

    def set_issues(self, issues: Sequence[Any]) -> None:
        self.beginResetModel()
        self._issues = sorted(issues, key=lambda i: 0 if i.severity == "error" else 1)
        self.endResetModel()

    def issue(self, row: int) -> Any:
        return self._issues[row]

    @property
    def errors(self) -> int:
        return sum(1 for i in self._issues if i.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for i in self._issues if i.severity != "error")

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._issues)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(self.HEADERS)
        ):
            return self.HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._issues)):
            return None
        issue = self._issues[index.row()]
        error = issue.severity == "error"
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return "Must fix" if error else "Check"
            if col == 1:
                return str(issue.row) if issue.row is not None else ""
            if col == 2:
                return issue.message
        if role == Qt.ItemDataRole.ToolTipRole and col == 2:
            return issue.message
        if role == Qt.ItemDataRole.DecorationRole and col == 0:
            app = QApplication.instance()
            if app is None:
                return None
            icon = (
                QStyle.StandardPixmap.SP_MessageBoxCritical
                if error
                else QStyle.StandardPixmap.SP_MessageBoxWarning
            )
            return app.style().standardIcon(icon)
        if role == Qt.ItemDataRole.ForegroundRole and col == 0:
            return QBrush(QColor("#b42318" if error else "#8a5a00"))
        return None


class PreviewModel(QAbstractTableModel):
    """The first rows of the sheet, with each chosen column tinted by its role."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._headers: list[str] = []
        self._letters: list[str] = []
        self._rows: list[list[str]] = []
        self._row_numbers: list[int] = []
        self._roles: dict[str, str] = {}

    def set_table(self, frame: Any, letters: dict[str, str], n: int = 20) -> None:
        self.beginResetModel()
        head = frame.iloc[:n]
        self._headers = [str(c) for c in head.columns]
        self._letters = [letters.get(c, "") for c in head.columns]
        self._rows = [[str(v) for v in row] for row in head.itertuples(index=False, name=None)]
        self._row_numbers = [int(r) for r in head.index]
        self.endResetModel()

    def set_roles(self, roles: dict[str, str]) -> None:
        """``roles``: column header -> role name (a key of :data:`ROLE_COLOURS`)."""
        self._roles = dict(roles)
        if self._headers:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self._headers) - 1)
            if self._rows:
                self.dataChanged.emit(
                    self.index(0, 0),
                    self.index(len(self._rows) - 1, len(self._headers) - 1),
                    [Qt.ItemDataRole.BackgroundRole],
                )

    def role_of(self, column: int) -> str | None:
        return self._roles.get(self._headers[column]) if 0 <= column < len(self._headers) else None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._headers)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self._headers):
            name, letter = self._headers[section], self._letters[section]
            chosen = self._roles.get(name)
            if role == Qt.ItemDataRole.DisplayRole:
                top = f"{letter}: {name}" if letter else name
                return f"{top}\n→ {chosen}" if chosen else f"{top}\n(not used)"
            if role == Qt.ItemDataRole.ToolTipRole:
                return (
                    f'Column {letter} "{name}" holds the {chosen}.'
                    if chosen
                    else f'Column {letter} "{name}" is not used.'
                )
        if orientation == Qt.Orientation.Vertical and 0 <= section < len(self._row_numbers):
            if role == Qt.ItemDataRole.DisplayRole:
                return str(self._row_numbers[section])
            if role == Qt.ItemDataRole.ToolTipRole:
                return f"Row {self._row_numbers[section]} of the sheet"
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        if not (0 <= index.column() < len(self._headers)):
            return None
        text = self._rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return text if len(text) <= 120 else text[:119] + "…"
        if role == Qt.ItemDataRole.ToolTipRole and len(text) > 40:
            return text
        if role == Qt.ItemDataRole.BackgroundRole:
            chosen = self.role_of(index.column())
            if chosen in ROLE_COLOURS:
                return QBrush(QColor(ROLE_COLOURS[chosen]))
        if role == Qt.ItemDataRole.ForegroundRole and self.role_of(index.column()) is None:
            return QBrush(QColor("#8a94a3"))
        return None
