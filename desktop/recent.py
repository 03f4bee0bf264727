"""The list of recently used project files (persisted in ``Settings.recent_projects``)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor

__all__ = ["RecentProjectsModel"]

PathRole = Qt.ItemDataRole.UserRole
ExistsRole = Qt.ItemDataRole.UserRole + 1

_Index = QModelIndex | QPersistentModelIndex


class RecentProjectsModel(QAbstractListModel):
    """Recent project files, newest first. Missing files stay listed, greyed, "not found"."""

    #: The list changed through the model (removal); the owner saves the settings.
    paths_changed = Signal(list)

    def __init__(self, paths: list[str] | None = None, parent=None) -> None:
        super().__init__(parent)
        self._paths: list[str] = []
        self._exists: list[bool] = []
        self.set_paths(paths or [])

    # -- data ---------------------------------------------------------------------------------
    def set_paths(self, paths: list[str]) -> None:
        self.beginResetModel()
        self._paths = [str(p) for p in paths]
        self._exists = [Path(p).is_file() for p in self._paths]
        self.endResetModel()

    def refresh(self) -> None:
        """Check again which files exist (a USB stick may have come back)."""
        self.set_paths(self._paths)

    def paths(self) -> list[str]:
        return list(self._paths)

    def path(self, row: int) -> str:
        return self._paths[row]

    def exists(self, row: int) -> bool:
        return self._exists[row]

    def remove_path(self, path: str) -> None:
        if path in self._paths:
            row = self._paths.index(path)
            self.removeRows(row, 1)

    def remove_missing(self) -> int:
        missing = [p for p, ok in zip(self._paths, self._exists) if not ok]
        for path in missing:
            self.remove_path(path)
        return len(missing)

    # -- Qt model -----------------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._paths)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._paths):
            return None
        path = Path(self._paths[index.row()])
        exists = self._exists[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            name = path.stem
            where = str(path.parent)
            return f"{name}    —    {where}" if exists else f"{name} (not found)    —    {where}"
        if role == Qt.ItemDataRole.ToolTipRole:
            if exists:
                return f"{path}\nDouble-click to open."
            return (
                f"{path}\nThis file was not found. It may have been moved, renamed or deleted, "
                "or it is on a drive that is not connected. Use “Open a project…” to find it, "
                "or remove it from this list."
            )
        if role == Qt.ItemDataRole.ForegroundRole and not exists:
            return QBrush(QColor("#8a8f98"))
        if role == PathRole:
            return str(path)
        if role == ExistsRole:
            return exists
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def removeRows(self, row: int, count: int, parent: _Index = QModelIndex()) -> bool:
        if parent.isValid() or row < 0 or count < 1 or row + count > len(self._paths):
            return False
        self.beginRemoveRows(QModelIndex(), row, row + count - 1)
        del self._paths[row : row + count]
        del self._exists[row : row + count]
        self.endRemoveRows()
        self.paths_changed.emit(self.paths())
        return True
