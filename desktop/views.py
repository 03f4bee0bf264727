"""What the three wizards' pages share for showing results: row tables, result tables and charts.

- :class:`ColumnsModel`: rows under a list of columns (the base of every wizard's row table);
- :class:`Column` and :class:`FrameModel`: a read-only result table over a pandas frame or plain
  rows, with the raw value under :data:`SORT_ROLE` (sorting numbers as numbers, "not scored"
  last) and :data:`VALUE_ROLE`;
- :func:`table_view`: a read-only, sortable table view over such a model;
- :class:`Chart`: a matplotlib figure in the window (matplotlib is imported on the first draw).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from PySide6.QtCore import (
    QAbstractTableModel,
    QMimeData,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QProxyStyle,
    QSizePolicy,
    QStyle,
    QStyleOptionHeader,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.widgets import rows_view

__all__ = [
    "ACCENT",
    "INK",
    "LLM_COLOUR",
    "MUTED",
    "SORT_ROLE",
    "VALUE_ROLE",
    "Chart",
    "Column",
    "ColumnsModel",
    "FrameModel",
    "GroupTreeMixin",
    "HeaderedTableModel",
    "MoveDragMixin",
    "fit_rows",
    "full_text_tip",
    "header_title",
    "pin_row_names",
    "preview",
    "table_view",
]

_Index = QModelIndex | QPersistentModelIndex

SORT_ROLE = int(Qt.ItemDataRole.UserRole) + 1
#: The full value of a cell (tests and the question view read it).
VALUE_ROLE = int(Qt.ItemDataRole.UserRole) + 2

Kind = Literal["text", "score", "number", "int", "bool", "percent", "p"]

ACCENT = "#2563a8"
MUTED = "#9aa5b1"
LLM_COLOUR = "#d97706"
INK = "#1f2933"



class MoveDragMixin:
    """Drag and drop that moves rows inside one item model (mix in before the Qt model class).
    The dragged rows travel as JSON under the model's own ``drag_mime`` type: the model says
    what to pack (``drag_payload``) and reads it back in ``dropMimeData`` (``dropped``)."""

    drag_mime: str = ""

    def drag_payload(self, indexes: Sequence[QModelIndex]) -> Any:
        raise NotImplementedError

    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def supportedDragActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [self.drag_mime]

    def mimeData(self, indexes: Sequence[QModelIndex]) -> QMimeData:
        data = QMimeData()
        data.setData(self.drag_mime, json.dumps(self.drag_payload(indexes)).encode("utf-8"))
        return data

    def dropped(self, data: QMimeData) -> Any:
        """What :meth:`mimeData` packed, or None when it cannot be read."""
        try:
            return json.loads(bytes(data.data(self.drag_mime).data()).decode("utf-8"))
        except ValueError:
            return None


class GroupTreeMixin:
    """The structure of a two-level tree model (groups, each with its members) for a
    ``QAbstractItemModel``: a group's index has internal id 0, a member's its group's row + 1.
    The model says how many groups and members there are (``group_count``, ``member_count``)
    and how many columns (``columnCount``)."""

    def group_count(self) -> int:
        raise NotImplementedError

    def member_count(self, group_row: int) -> int:
        raise NotImplementedError

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:
        if not 0 <= column < self.columnCount() or row < 0:  # type: ignore[attr-defined]
            return QModelIndex()
        if not parent.isValid():
            if row >= self.group_count():
                return QModelIndex()
            return self.createIndex(row, column, 0)  # type: ignore[attr-defined]
        if (parent.internalId() != 0 or parent.column() != 0
                or parent.row() >= self.group_count() or row >= self.member_count(parent.row())):
            return QModelIndex()
        return self.createIndex(row, column, parent.row() + 1)  # type: ignore[attr-defined]

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid() or index.internalId() == 0:
            return QModelIndex()
        return self.createIndex(index.internalId() - 1, 0, 0)  # type: ignore[attr-defined]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        if not parent.isValid():
            return self.group_count()
        if (parent.internalId() == 0 and parent.column() == 0
                and parent.row() < self.group_count()):
            return self.member_count(parent.row())
        return 0


def header_title(headers: Sequence[str], section: int, orientation: Qt.Orientation,
                 role: int) -> str | None:
    """A model's ``headerData`` for column titles ``headers`` (nothing for rows)."""
    if (role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(headers)):
        return headers[section]
    return None


class HeaderedTableModel(QAbstractTableModel):
    """A read-only table whose columns are the titles in ``HEADERS`` (the subclass gives
    ``rowCount`` and ``data``): rows are selectable, never editable."""

    HEADERS: tuple[str, ...] = ()

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return header_title(self.HEADERS, section, orientation, role)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


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
    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
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


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and not math.isfinite(value):
        return True
    try:
        import pandas as pd

        return value is pd.NA or value is pd.NaT
    except ImportError:  # pragma: no cover
        return False


def _plain(value: Any) -> Any:
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (str, bytes)):
        try:
            value = item()
        except (TypeError, ValueError):
            pass
    return None if _missing(value) else value


@dataclass(frozen=True)
class Column:
    """A column of a result table: the frame column, its title, how to show it, a tooltip."""

    key: str
    title: str
    kind: Kind = "text"
    tip: str = ""
    missing: str = "—"
    """What an empty cell says (e.g. "not scored"): never a made-up number."""


class FrameModel(ColumnsModel):
    """A result table (workers, questions, answers, LLM scores, warnings). ``label_key``: the
    column whose value names each row in the vertical header, so the name stays in sight when
    the table is scrolled sideways (see :func:`pin_row_names`)."""

    _rows: list[list[Any]]
    label_key: str = ""

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (self.label_key and orientation == Qt.Orientation.Vertical
                and role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
                and 0 <= section < len(self._rows)):
            label = self.value(section, self.label_key)
            return "" if label is None else str(label)
        return super().headerData(section, orientation, role)

    # -- filling --------------------------------------------------------------------------------
    def set_frame(self, frame: Any) -> None:
        """Show ``frame`` (a pandas DataFrame; columns the frame lacks are hidden, and come back
        for a later frame that has them)."""
        self.beginResetModel()
        if not hasattr(self, "_all_columns"):
            self._all_columns = list(self.columns)
        present = [c for c in self._all_columns if c.key in getattr(frame, "columns", [])]
        keys = [c.key for c in present]
        self.columns = present
        self._rows = (
            [[_plain(v) for v in row] for row in frame[keys].itertuples(index=False, name=None)]
            if keys
            else []
        )
        self.endResetModel()

    def set_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        """Show plain rows (one value per column, in order)."""
        self.beginResetModel()
        self._rows = [[_plain(v) for v in row] for row in rows]
        self.endResetModel()

    def value(self, row: int, key: str) -> Any:
        for i, column in enumerate(self.columns):
            if column.key == key:
                return self._rows[row][i]
        raise KeyError(key)

    # -- Qt -------------------------------------------------------------------------------------
    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        if not (0 <= index.column() < len(self.columns)):
            return None
        column = self.columns[index.column()]
        value = self._rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(column, value)
        if role == SORT_ROLE:
            if value is None:
                return -math.inf if column.kind != "text" else ""
            if column.kind == "text":
                return str(value).casefold()
            return float(value) if column.kind != "bool" else float(bool(value))
        if role == VALUE_ROLE:
            return value
        if role == Qt.ItemDataRole.ToolTipRole:
            if value is None:
                return column.tip or None
            if column.kind == "text" and len(str(value)) > 60:
                return full_text_tip(value)
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if column.kind in ("score", "number", "int", "percent", "p"):
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and value is None:
            return QBrush(QColor("#8a94a3"))
        return None

    @staticmethod
    def _display(column: Column, value: Any) -> str:
        if value is None:
            return column.missing
        if column.kind == "score":
            return f"{float(value):.3f}"
        if column.kind == "number":  # never in exponent form, never "-0.000"
            number = float(value)
            text = f"{number:,.0f}" if abs(number) >= 1000 else f"{number:.3f}"
            return text[1:] if text.startswith("-") and not text.strip("-0.,") else text
        if column.kind == "int":
            return f"{int(value):,}"
        if column.kind == "percent":
            return f"{float(value):.0f}%"
        if column.kind == "p":
            from core.stats import format_p  # not at start-up: it loads scipy (~1.5 s)

            return format_p(float(value)).removeprefix("p ").removeprefix("= ")
        if column.kind == "bool":
            return "yes" if value else "no"
        return preview(value) if len(str(value)) > PREVIEW_CHARS else str(value)


#: How many characters of a long text a table cell shows (the rest is in the tooltip).
PREVIEW_CHARS = 160
#: How many lines a table row may take at most, so a row is never taller than the table.
MAX_ROW_LINES = 4


def preview(text: Any, limit: int = PREVIEW_CHARS) -> str:
    """A long text as one short line for a table cell: spaces collapsed, cut with "…"."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def full_text_tip(text: Any, limit: int = 4000) -> str | None:
    """The whole text as a tooltip that wraps (rich text), cut very long ones with a note."""
    import html

    raw = str(text or "").strip()
    if not raw:
        return None
    more = ""
    if len(raw) > limit:
        more = f"<p><i>… {len(raw) - limit:,} more characters.</i></p>"
        raw = raw[:limit]
    body = html.escape(raw).replace("\n", "<br>")
    return f"<p style='white-space:pre-wrap; max-width:560px'>{body}</p>{more}"


def fit_rows(view: QTableView, lines: int = MAX_ROW_LINES) -> None:
    """Rows as tall as their text needs, but never more than ``lines`` lines, and scrolled by
    pixels, so that a table of long texts stays usable (every row fits in the table)."""
    view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    view.resizeRowsToContents()
    line = view.fontMetrics().lineSpacing()
    cap = line * lines + 8
    for row in range(view.model().rowCount() if view.model() is not None else 0):
        if view.rowHeight(row) > cap:
            view.setRowHeight(row, cap)


class SortArrowStyle(QProxyStyle):
    """Draws a header's sort arrow the way people read it: ▲ when the column is sorted
    ascending (smallest first), ▼ when descending. (Qt's own styles draw the opposite.)"""

    def drawPrimitive(self, element: Any, option: Any, painter: Any, widget: Any = None) -> None:
        if element == QStyle.PrimitiveElement.PE_IndicatorHeaderArrow and isinstance(
                option, QStyleOptionHeader):
            flipped = QStyleOptionHeader(option)
            up = QStyleOptionHeader.SortIndicator.SortUp
            down = QStyleOptionHeader.SortIndicator.SortDown
            if option.sortIndicator == up:
                flipped.sortIndicator = down
            elif option.sortIndicator == down:
                flipped.sortIndicator = up
            super().drawPrimitive(element, flipped, painter, widget)
            return
        super().drawPrimitive(element, option, painter, widget)


def pin_row_names(view: QTableView, model: FrameModel, key: str) -> None:
    """Show column ``key`` (the person's name) as the table's row headers, which stay in place
    when the table is scrolled sideways, and hide the column itself."""
    model.label_key = key
    header = view.verticalHeader()
    header.setVisible(True)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    header.setMinimumWidth(110)
    header.setMaximumWidth(220)
    header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

    def hide_column() -> None:
        column = model.column_of(key)
        for i in range(model.columnCount()):
            view.setColumnHidden(i, i == column)

    model.modelReset.connect(hide_column)
    hide_column()


def table_view(model: Any, sortable: bool = True, stretch: int | None = None) -> QTableView:
    """A read-only table over ``model``; sorted through a proxy when ``sortable``."""
    view = QTableView()
    if sortable:
        proxy = QSortFilterProxyModel(view)
        proxy.setSourceModel(model)
        proxy.setSortRole(SORT_ROLE)
        view.setModel(proxy)
        view.setSortingEnabled(True)
        view.sort_style = SortArrowStyle()  # kept on the view: the header does not own it
        view.horizontalHeader().setStyle(view.sort_style)
        # no sort until the user (or the page) asks for one: rows keep the input's order
        view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        proxy.sort(-1)
    else:
        view.setModel(model)
    rows_view(view, word_wrap=False)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(stretch is None)
    return view



class Chart(QWidget):
    """A matplotlib figure in the window; the canvas is made on the first :meth:`draw`."""

    def __init__(self, minimum_height: int = 240, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas: Any = None
        self.figure: Any = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.setMinimumHeight(minimum_height)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def draw(self, paint: Callable[[Any], None]) -> None:
        """Clear the figure and call ``paint(figure)``, then redraw."""
        if self.canvas is None:
            from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
            from matplotlib.figure import Figure

            self.figure = Figure(figsize=(5, 3), dpi=100, layout="constrained")
            self.figure.patch.set_facecolor("#ffffff")
            self.canvas = FigureCanvasQTAgg(self.figure)
            self.canvas.setSizePolicy(
                QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding
            )
            self._layout.addWidget(self.canvas)
        self.figure.clear()
        paint(self.figure)
        self.canvas.draw_idle()
