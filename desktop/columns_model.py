"""The part the wizards' row tables share: rows under a list of columns.

:class:`ColumnsModel` is the base of :class:`desktop.aqer.models.FrameModel`,
:class:`desktop.interacteval.models.RowsModel` and :class:`desktop.majeval.models.RowsModel`;
each keeps its own column type, cell texts and editing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

__all__ = ["ColumnsModel"]

_Index = QModelIndex | QPersistentModelIndex


class ColumnsModel(QAbstractTableModel):
    """Rows (kept in ``_rows`` by the subclass) under ``columns``. A column has a ``key``, a
    ``title`` (the header) and a ``tip`` (the header's tooltip); a column whose ``editable``
    attribute is true has editable cells. Rows are numbered from 1 in the vertical header."""

    def __init__(self, columns: Sequence[Any], parent: Any = None) -> None:
        super().__init__(parent)
        self.columns = list(columns)
        self._rows: list[Any] = []

    def column_of(self, key: str) -> int:
        """The position of the column ``key``, or -1."""
        return next((i for i, c in enumerate(self.columns) if c.key == key), -1)

    # -- Qt -------------------------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if getattr(self.columns[index.column()], "editable", False):
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.columns):
            if role == Qt.ItemDataRole.DisplayRole:
                return self.columns[section].title
            if role == Qt.ItemDataRole.ToolTipRole:
                return self.columns[section].tip or None
        elif (orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole
              and 0 <= section < len(self._rows)):
            return str(section + 1)
        return None
