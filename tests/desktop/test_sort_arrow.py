"""The sort arrow matches the order: ▲ ascending, ▼ descending (Qt's styles draw the opposite)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QTableView

from desktop.views import table_view


def _model():
    model = QStandardItemModel(3, 2)
    model.setHorizontalHeaderLabels(["Worker", "Score"])
    for r, (name, score) in enumerate((("Ana", 0.2), ("Ben", 0.9), ("Cy", 0.5))):
        model.setItem(r, 0, QStandardItem(name))
        model.setItem(r, 1, QStandardItem(f"{score}"))
    return model


def _header_image(view, qtbot):
    qtbot.addWidget(view)
    view.resize(300, 150)
    view.setColumnWidth(0, 100)
    view.setColumnWidth(1, 100)
    view.show()
    qtbot.waitExposed(view)
    return view.horizontalHeader().grab().toImage()


def test_descending_draws_what_qt_draws_for_ascending_and_back(qtbot):
    ours = table_view(_model())
    ours.horizontalHeader().setSortIndicator(1, Qt.SortOrder.DescendingOrder)
    plain = QTableView()
    plain.setModel(_model())
    plain.verticalHeader().setVisible(False)
    plain.horizontalHeader().setHighlightSections(False)
    plain.horizontalHeader().setStretchLastSection(True)
    plain.horizontalHeader().setSortIndicatorShown(True)
    plain.horizontalHeader().setSortIndicator(1, Qt.SortOrder.AscendingOrder)
    a, b = _header_image(ours, qtbot), _header_image(plain, qtbot)
    assert a == b
    plain.horizontalHeader().setSortIndicator(1, Qt.SortOrder.DescendingOrder)
    assert _header_image(ours, qtbot) != plain.horizontalHeader().grab().toImage()


def test_the_persons_name_stays_in_sight_when_scrolled_sideways(qtbot):
    """The name is the row header (which does not scroll sideways), sorted with its row."""
    import pandas as pd

    from desktop.views import Column, FrameModel, pin_row_names

    model = FrameModel([Column("worker", "Worker"), Column("score", "Score", "score")])
    view = table_view(model)
    qtbot.addWidget(view)
    pin_row_names(view, model, "worker")
    model.set_frame(pd.DataFrame({"worker": ["Ana", "Ben", "Cy"], "score": [0.2, 0.9, 0.5]}))
    assert not view.verticalHeader().isHidden() and view.isColumnHidden(0)
    view.sortByColumn(1, Qt.SortOrder.DescendingOrder)
    shown = view.model()
    assert [shown.headerData(r, Qt.Orientation.Vertical) for r in range(3)] == ["Ben", "Cy", "Ana"]
