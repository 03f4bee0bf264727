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


def test_a_pane_without_margins_keeps_the_styles_own_like_a_plain_tab_page(qtbot):
    from PySide6.QtWidgets import QLabel, QVBoxLayout

    from desktop.widgets import pane

    plain = QWidget()
    QVBoxLayout(plain)
    qtbot.addWidget(plain)
    page = pane(QLabel("hint"), (QLabel("table"), 1), margins=None)
    qtbot.addWidget(page)
    assert page.layout().contentsMargins() == plain.layout().contentsMargins()
    assert page.layout().contentsMargins().left() > 0
    assert page.layout().stretch(1) == 1


def test_push_button_sets_tip_click_and_style_and_splitter_stretch(qtbot):
    from PySide6.QtWidgets import QLabel

    from desktop.widgets import push_button, splitter

    clicks: list[bool] = []
    main = push_button("Export…", "Save it all.", lambda: clicks.append(True),
                       name="primaryButton")
    qtbot.addWidget(main)
    assert (main.text(), main.toolTip(), main.objectName()) == (
        "Export…", "Save it all.", "primaryButton")
    main.click()
    assert clicks == [True]
    plain = push_button("Skip")
    qtbot.addWidget(plain)
    assert plain.toolTip() == "" and plain.objectName() == ""

    split = splitter(QLabel("a"), QLabel("b"), stretch=[3, 2])
    qtbot.addWidget(split)
    assert split.widget(0).sizePolicy().horizontalStretch() == 3
    assert split.widget(1).sizePolicy().horizontalStretch() == 2


def test_a_tab_is_refreshed_when_shown_and_only_then(qtbot):
    from PySide6.QtWidgets import QTabWidget

    from desktop.widgets import refresh_if_shown, refresh_when_shown

    class Tab(QWidget):
        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def refresh(self) -> None:
            self.count += 1

    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    first, second = Tab(), Tab()
    tabs.addTab(first, "First")
    tabs.addTab(second, "Second")
    refresh_when_shown(tabs, second)
    refresh_if_shown(tabs, second)
    assert second.count == 0
    tabs.setCurrentWidget(second)
    assert second.count == 1 and first.count == 0
    refresh_if_shown(tabs, second)
    assert second.count == 2
    tabs.setCurrentWidget(first)
    assert second.count == 2


def test_fill_choices_offers_none_first_and_selects_the_kept_choice(qtbot):
    from PySide6.QtWidgets import QComboBox

    from desktop.widgets import fill_choices

    combo = QComboBox()
    qtbot.addWidget(combo)
    combo.addItem("old", "old")
    fill_choices(combo, "(none)", ["text", "score"], "score")
    assert [combo.itemText(i) for i in range(combo.count())] == ["(none)", "text", "score"]
    assert combo.itemData(0) is None and combo.currentData() == "score"
    fill_choices(combo, "(choose)", ["text"], "gone")
    assert combo.currentIndex() == 0 and combo.currentData() is None


def test_check_row_ticks_all_but_the_unchecked_and_calls_back(qtbot):
    from desktop.widgets import check_row

    toggled: list[bool] = []
    boxes, row = check_row("Compare:", {"a": "Alpha", "b": "Beta"},
                           {"a": "first", "b": "second"}, toggled.append, unchecked=("b",))
    holder = QWidget()
    holder.setLayout(row)
    qtbot.addWidget(holder)
    assert row.itemAt(0).widget().text() == "Compare:"
    assert [row.itemAt(i).widget() for i in (1, 2)] == [boxes["a"], boxes["b"]]
    assert row.itemAt(3).spacerItem() is not None
    assert (boxes["a"].isChecked(), boxes["b"].isChecked()) == (True, False)
    assert (boxes["a"].text(), boxes["b"].toolTip()) == ("Alpha", "second")
    boxes["b"].setChecked(True)
    assert toggled == [True]


def test_the_stability_line_of_both_methods(qtbot):
    """One stability line for MAJ-Eval's Run page and InteractEval's Results page: nothing
    without repeats, what is missing while repeats are unfinished, else the sentence per
    dimension, in the warning colours when one is flagged."""
    from types import SimpleNamespace

    from desktop.widgets import show_repeats, stability_label

    label = stability_label()
    qtbot.addWidget(label)
    label.show()
    lines = lambda entries: [s.sentence for _c, _d, s in entries]
    assert show_repeats(label, 1, [], list, lines, "run it again.") == []
    assert label.isHidden()
    assert show_repeats(label, 3, ["r0"], list, lines, "run it again.") == []
    assert label.text() == "Only 1 repeat of 3 finished: run it again."
    assert label.property("flagged") is False
    calm = SimpleNamespace(sentence="Alike.", flagged=False)
    shaky = SimpleNamespace(sentence="Not alike.", flagged=True)
    found = show_repeats(label, 3, ["r0", "r1", "r2"],
                         lambda rs: [("c", "d1", calm), ("c", "d2", shaky)], lines, "again.")
    assert found == ["r0", "r1", "r2"]
    assert label.text() == ("Asked 3 times (the scores shown are the first time's): "
                            "Alike. Not alike.")
    assert label.property("flagged") is True and not label.isHidden()


def test_the_estimate_and_actual_lines_of_every_model_step(qtbot):
    """The five model steps (think-aloud, build, scoring, finding stakeholders, debates) show
    their estimate in one kind of line, styled by its name and explained by its tooltip."""
    from desktop.widgets import actual_label, estimate_label

    label = estimate_label("Counted from our prompts.")
    qtbot.addWidget(label)
    assert label.objectName() == "estimateLabel" and label.wordWrap()
    assert label.toolTip() == "Counted from our prompts." and label.text() == ""
    after = actual_label()
    qtbot.addWidget(after)
    assert after.objectName() == "actualLabel" and after.wordWrap() and after.isHidden()
