"""The shared small builders of desktop/widgets.py."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QWidget

from desktop.widgets import open_window


def test_open_window_shows_the_dialog_without_blocking_and_deletes_it_once_closed(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    dialog = QDialog(parent)
    destroyed = []
    dialog.destroyed.connect(lambda: destroyed.append(True))
    assert open_window(dialog) is dialog  # returns at once: open(), not exec()
    assert dialog.isVisible() and dialog.testAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.reject()
    qtbot.waitUntil(lambda: destroyed == [True])


def test_every_table_of_rows_shares_the_same_basics(qtbot):
    from PySide6.QtCore import QStringListModel
    from PySide6.QtWidgets import QAbstractItemView, QTableView

    from desktop.views import table_view
    from desktop.widgets import row_table, rows_view

    model = QStringListModel(["a", "b"])
    plain = QTableView()
    rows_view(plain, word_wrap=True)
    for view, wraps in ((row_table(model), True), (table_view(model), False), (plain, True)):
        qtbot.addWidget(view)
        assert view.selectionBehavior() == QAbstractItemView.SelectionBehavior.SelectRows
        assert view.alternatingRowColors() and view.wordWrap() is wraps
        assert view.verticalScrollMode() == QAbstractItemView.ScrollMode.ScrollPerPixel
        assert not view.verticalHeader().isVisible() or view.verticalHeader().isHidden()
        assert not view.horizontalHeader().highlightSections()


def test_the_wrapped_labels_carry_their_style_names(qtbot):
    from desktop.widgets import alert_box, hint_label, intro_label, note_box, wrapped_label

    for label, name in ((hint_label("h"), "hint"), (note_box("n"), "noteBox"),
                        (alert_box("a"), "alertBox"), (intro_label("i"), "intro"),
                        (wrapped_label("w", "mine"), "mine")):
        qtbot.addWidget(label)
        assert label.objectName() == name and label.wordWrap()
