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


def test_layout_builders_place_the_parts_in_order_with_their_stretch(qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QLineEdit, QRadioButton, QSplitter

    from desktop.widgets import (
        error_label,
        exclusive,
        group_box,
        hbox,
        pane,
        splitter,
        tipped,
    )

    edit = tipped(QLineEdit(), "Type here.")
    assert edit.toolTip() == "Type here."
    row = hbox("Name:", (edit, 1), 2)
    assert row.count() == 3 and isinstance(row.itemAt(0).widget(), QLabel)
    assert row.itemAt(0).widget().text() == "Name:"
    assert row.itemAt(1).widget() is edit and row.stretch(1) == 1
    assert row.itemAt(2).spacerItem() is not None and row.stretch(2) == 2

    side = pane(row, QLabel("below"))
    qtbot.addWidget(side)
    assert side.layout().contentsMargins().left() == 0 and side.layout().count() == 2

    other = QLabel("other")
    split = splitter(side, other, sizes=[10, 20], orientation=Qt.Orientation.Vertical)
    qtbot.addWidget(split)
    assert isinstance(split, QSplitter) and split.orientation() == Qt.Orientation.Vertical
    assert [split.widget(0), split.widget(1)] == [side, other]

    first, second = QRadioButton("a"), QRadioButton("b")
    box = group_box("Choose", first, second)
    qtbot.addWidget(box)
    assert box.title() == "Choose" and box.layout().count() == 2
    group = exclusive(box, first, second)
    assert group.buttons() == [first, second] and group.exclusive()

    error = error_label()
    qtbot.addWidget(error)
    assert error.objectName() == "errorText" and error.isHidden() and error.wordWrap()


def test_a_sample_opener_opens_the_wizard_then_loads_the_sample():
    from desktop.methods import sample_opener

    calls = []

    class Wizard:
        def load_sample(self):
            calls.append("loaded")

    def open_wizard(main_window, llm_factory=None):
        calls.append(("opened", main_window, llm_factory))
        return Wizard()

    opener = sample_opener(open_wizard, lambda wizard: wizard.load_sample())
    assert isinstance(opener("window", llm_factory="f"), Wizard)
    assert calls == [("opened", "window", "f"), "loaded"]
