"""Small widget pieces shared by the method wizards (AQER, MAJ-Eval, InteractEval).

* labels styled by the application style sheet through their object names: :func:`intro_label`
  (``intro``), :func:`title_label` (``pageTitle``), :func:`hint_label` (``hint``);
* :func:`row_table`: a table view of whole rows whose columns fit their contents;
  :func:`fit_columns` sizes the columns of a view once its rows are in;
* the wizard frame: :func:`step_buttons` / :func:`step_labels` (the numbered steps along the
  top), :func:`navigation` (Home, a message, Back and Next along the bottom) and
  :func:`frame_layout` (steps, the stack of pages and the navigation, one above the other);
* :func:`xlsx_path`: the workbook a save dialog's answer stands for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QBoxLayout,
    QButtonGroup,
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.words import count

__all__ = [
    "MAX_REPEATS",
    "PRIMARY_DISABLED_STYLE",
    "actual_label",
    "add_parts",
    "alert_box",
    "check_row",
    "chosen_sheet",
    "error_label",
    "estimate_label",
    "exclusive",
    "fill_choices",
    "fill_sheets",
    "fit_columns",
    "frame_layout",
    "group_box",
    "hbox",
    "header_row_spin",
    "hidden_label",
    "hint_label",
    "intro_label",
    "navigation",
    "note_box",
    "open_window",
    "pane",
    "push_button",
    "refresh_if_shown",
    "refresh_when_shown",
    "repeats_spin",
    "rich_label",
    "row_table",
    "rows_view",
    "set_times_suffix",
    "show_repeats",
    "show_stability",
    "splitter",
    "stability_label",
    "step_buttons",
    "step_labels",
    "tipped",
    "title_label",
    "usage_of",
    "wrapped_label",
    "xlsx_path",
]

#: A disabled primary button (Next) looks disabled, not just pale blue.
PRIMARY_DISABLED_STYLE = (
    "QPushButton#primaryButton:disabled { background: #a9c0dc; border-color: #a9c0dc;"
    " color: #f5f7fa; }"
)


def wrapped_label(text: str, name: str) -> QLabel:
    """A word-wrapped label styled by its object ``name`` (see resources/style.qss)."""
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(True)
    return label


def intro_label(text: str) -> QLabel:
    """The wrapped rich-text paragraph that opens a page."""
    label = wrapped_label(text, "intro")
    label.setTextFormat(Qt.TextFormat.RichText)
    return label


def title_label(text: str) -> QLabel:
    """A page or section title."""
    label = QLabel(text)
    label.setObjectName("pageTitle")
    return label


def page_layout(page: QWidget, title: str, intro: str = "", *parts: Any) -> QVBoxLayout:
    """The page's top-to-bottom layout, opened by its title and (when given) its intro
    paragraph, then ``parts`` (see :func:`add_parts`); the caller may add more."""
    layout = QVBoxLayout(page)
    layout.addWidget(title_label(title))
    if intro:
        layout.addWidget(intro_label(intro))
    return add_parts(layout, parts)


def add_parts(layout: QBoxLayout, parts: Sequence[Any]) -> QBoxLayout:
    """Add ``parts`` to ``layout`` in order: a widget, a layout, a text (a plain label), a
    number (that much stretch), or a (widget or layout, stretch) pair. Returns the layout."""
    for part in parts:
        part, stretch = part if isinstance(part, tuple) else (part, 0)
        if isinstance(part, int):
            layout.addStretch(part)
        elif isinstance(part, str):
            layout.addWidget(QLabel(part), stretch)
        elif isinstance(part, QLayout):
            layout.addLayout(part, stretch)
        else:
            layout.addWidget(part, stretch)
    return layout


def hbox(*parts: Any) -> QHBoxLayout:
    """A row of ``parts`` (see :func:`add_parts`)."""
    return add_parts(QHBoxLayout(), parts)  # type: ignore[return-value]


def pane(*parts: Any, margins: int | None = 0) -> QWidget:
    """A widget holding ``parts`` top to bottom (see :func:`add_parts`), ``margins`` pixels from
    its edges: one side of a splitter. ``margins=None`` keeps the style's own margins (a tab's
    page)."""
    widget = QWidget()
    layout = QVBoxLayout(widget)
    if margins is not None:
        layout.setContentsMargins(margins, margins, margins, margins)
    add_parts(layout, parts)
    return widget


def splitter(*widgets: QWidget, sizes: Sequence[int] = (),
             orientation: Qt.Orientation = Qt.Orientation.Horizontal,
             stretch: Sequence[int] = ()) -> QSplitter:
    """``widgets`` side by side (or one above the other) with a handle between, at ``sizes``;
    when the splitter grows, widget ``i`` takes ``stretch[i]`` shares of the extra room."""
    split = QSplitter(orientation)
    for widget in widgets:
        split.addWidget(widget)
    for index, factor in enumerate(stretch):
        split.setStretchFactor(index, factor)
    if sizes:
        split.setSizes(list(sizes))
    return split


def refresh_when_shown(tabs: Any, tab: Any) -> None:
    """Call ``tab.refresh()`` each time ``tab`` becomes the shown tab of ``tabs`` (a tab whose
    filling costs time is filled only when someone looks at it)."""
    tabs.currentChanged.connect(
        lambda index: tab.refresh() if tabs.widget(index) is tab else None)


def refresh_if_shown(tabs: Any, tab: Any) -> None:
    """Call ``tab.refresh()`` now if ``tab`` is the shown tab of ``tabs``."""
    if tabs.currentWidget() is tab:
        tab.refresh()


def push_button(text: str, tip: str = "", on_click: Callable[..., Any] | None = None, *,
                name: str = "") -> QPushButton:
    """A button with its tooltip ``tip``, the slot (or signal) ``on_click`` its click calls,
    and its style ``name`` ("primaryButton" for the main action), built in one expression."""
    button = QPushButton(text)
    if tip:
        button.setToolTip(tip)
    if on_click is not None:
        button.clicked.connect(on_click)
    if name:
        button.setObjectName(name)
    return button


def fill_choices(combo: Any, first: str, values: Sequence[str], chosen: Any) -> None:
    """Offer ``first`` (no choice: its data is None) and then ``values`` in ``combo`` (each its
    own data), and select ``chosen`` (``first`` when it is not among them)."""
    combo.clear()
    combo.addItem(first, None)
    for value in values:
        combo.addItem(value, value)
    combo.setCurrentIndex(max(0, combo.findData(chosen)))


def fill_sheets(combo: Any, sheets: Sequence[str], hidden: Mapping[str, str],
                chosen: str | None) -> None:
    """A workbook's sheets in ``combo``, each one Excel hides marked "(hidden in Excel)" (its
    real name is the item's data: read it with :func:`chosen_sheet`), ``chosen`` selected."""
    combo.clear()
    for name in sheets:
        state = hidden.get(name)
        combo.addItem(f"{name} ({state} in Excel)" if state else name, name)
        if state:
            combo.setItemData(combo.count() - 1,
                              "Excel does not show this sheet: whoever sent the file may not "
                              "know it is there.", Qt.ItemDataRole.ToolTipRole)
    index = combo.findData(chosen) if chosen else -1
    if index >= 0:
        combo.setCurrentIndex(index)


def chosen_sheet(combo: Any, index: int | None = None) -> str:
    """The real name of the sheet chosen in a combo filled by :func:`fill_sheets` ("" when
    none)."""
    at = combo.currentIndex() if index is None else index
    data = combo.itemData(at) if at >= 0 else None
    return str(data) if data else (combo.itemText(at) if at >= 0 else "")


def check_row(title: str, labels: Mapping[str, str], tips: Mapping[str, str],
              on_toggle: Callable[..., Any], unchecked: Sequence[str] = ()
              ) -> tuple[dict[str, QCheckBox], QHBoxLayout]:
    """A row "``title`` [x] label [x] label ..." of one check box per key of ``labels`` (ticked
    unless in ``unchecked``, with its tip from ``tips``; toggling calls ``on_toggle``): the boxes
    by key, and the row."""
    boxes: dict[str, QCheckBox] = {}
    row = QHBoxLayout()
    row.addWidget(QLabel(title))
    for key, label in labels.items():
        box = QCheckBox(label)
        box.setChecked(key not in unchecked)
        box.setToolTip(tips[key])
        box.toggled.connect(on_toggle)
        boxes[key] = box
        row.addWidget(box)
    row.addStretch(1)
    return boxes, row


def group_box(title: str, *parts: Any) -> QGroupBox:
    """A titled frame holding ``parts`` top to bottom (see :func:`add_parts`)."""
    box = QGroupBox(title)
    add_parts(QVBoxLayout(box), parts)
    return box


def exclusive(parent: QWidget, *buttons: QAbstractButton) -> QButtonGroup:
    """``buttons`` (radio buttons) of which one at a time is chosen."""
    group = QButtonGroup(parent)
    for button in buttons:
        group.addButton(button)
    return group


def hidden_label(object_name: str) -> QLabel:
    """An empty, hidden, wrapped line styled by ``object_name``, shown when it has something
    to say."""
    label = wrapped_label("", object_name)
    label.hide()
    return label


def error_label() -> QLabel:
    """A hidden, wrapped line in the error colour, shown when something is wrong."""
    return hidden_label("errorText")


def tipped(widget: Any, tip: str) -> Any:
    """``widget`` with the tooltip ``tip`` (returned, so it can be built in one expression)."""
    widget.setToolTip(tip)
    return widget


def rich_label(text: str = "") -> QLabel:
    """A wrapped label showing simple HTML (bold, line breaks)."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    return label


def hint_label(text: str = "") -> QLabel:
    """A wrapped, quieter line of explanation."""
    return wrapped_label(text, "hint")


def estimate_label(tip: str) -> QLabel:
    """The line with the calls, cost and time of a model step before it runs; ``tip`` says
    what it is counted from."""
    return tipped(wrapped_label("", "estimateLabel"), tip)


def actual_label() -> QLabel:
    """The hidden line that shows, after a run, the estimate beside what the run used."""
    return hidden_label("actualLabel")


def done_label() -> QLabel:
    """A hidden, wrapped, selectable line saying what was just done (where a file was saved)."""
    label = hidden_label("okText")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def note_box(text: str = "") -> QLabel:
    """A wrapped remark in a pale box: something to notice before going on."""
    return wrapped_label(text, "noteBox")


def alert_box(text: str = "") -> QLabel:
    """A wrapped warning in a pale red box: the results shown cannot be used as they stand
    (most units failed, or they are out of date)."""
    label = wrapped_label(text, "alertBox")
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def open_window(dialog: QWidget) -> QWidget:
    """Show a dialog or message box window-modal with ``open()`` (never ``exec()``, which would
    block the event loop); it deletes itself once closed. Returns it."""
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


def rows_view(view: QTableView, *, word_wrap: bool) -> None:
    """What every table of rows shares: whole rows selected, alternating colours, smooth
    scrolling, no row numbers, a header that does not light up with the selection."""
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setAlternatingRowColors(True)
    view.setWordWrap(word_wrap)
    view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    view.verticalHeader().setVisible(False)
    view.horizontalHeader().setHighlightSections(False)


def row_table(model: Any, stretch: int | None = None,
              single_selection: bool = False) -> QTableView:
    """A table over ``model`` selecting whole rows, columns sized to their contents; column
    ``stretch`` (or else the last one) takes the spare width."""
    view = QTableView()
    view.setModel(model)
    rows_view(view, word_wrap=True)
    if single_selection:
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    if stretch is not None:
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    else:
        header.setStretchLastSection(True)
    return view


def fit_columns(view: QTableView, stretch: int | None = None, max_width: int = 260) -> None:
    """Size the columns to their contents, none wider than ``max_width``; column ``stretch``
    takes the spare width."""
    view.resizeColumnsToContents()
    header = view.horizontalHeader()
    for i in range(header.count()):
        if header.sectionSize(i) > max_width:
            header.resizeSection(i, max_width)
    if stretch is not None and 0 <= stretch < header.count():
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)


def step_buttons(pages: Sequence[str], titles: Mapping[str, str],
                 show_page: Callable[[str], Any]) -> tuple[QHBoxLayout, dict[str, QPushButton]]:
    """Flat, clickable "1. Title" buttons, one per page key; a click calls ``show_page(key)``.
    Returns the row (ending in a stretch) and the buttons by page key."""
    buttons: dict[str, QPushButton] = {}
    row = QHBoxLayout()
    row.setSpacing(4)
    for i, key in enumerate(pages, 1):
        button = QPushButton(f"{i}. {titles[key]}")
        button.setFlat(True)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.clicked.connect(partial(show_page, key))
        buttons[key] = button
        row.addWidget(button)
    row.addStretch(1)
    return row, buttons


def step_labels(pages: Sequence[str],
                titles: Mapping[str, str]) -> tuple[QHBoxLayout, dict[str, QLabel]]:
    """Plain "1. Title" labels, one per page key. Returns the row (ending in a stretch) and the
    labels by page key."""
    labels: dict[str, QLabel] = {}
    row = QHBoxLayout()
    row.setSpacing(18)
    for i, key in enumerate(pages, 1):
        label = QLabel(f"{i}. {titles[key]}")
        labels[key] = label
        row.addWidget(label)
    row.addStretch(1)
    return row, labels


def navigation(wizard: Any, home_tip: str, on_home: Callable[[], Any],
               message_name: str = "hint") -> QHBoxLayout:
    """Home, a message, Back and Next along the bottom of ``wizard``.

    Sets ``wizard.home_button`` (tool tip ``home_tip``, calls ``on_home``),
    ``wizard.nav_message`` (object name ``message_name``), ``wizard.back_button`` (calls
    ``wizard.go_back``) and ``wizard.next_button`` (the primary button, calls
    ``wizard.go_next``); returns the row holding them."""
    wizard.home_button = QPushButton("← Home")
    wizard.home_button.setToolTip(home_tip)
    wizard.home_button.clicked.connect(on_home)
    wizard.back_button = QPushButton("Back")
    wizard.back_button.clicked.connect(wizard.go_back)
    wizard.next_button = QPushButton("Next")
    wizard.next_button.setObjectName("primaryButton")
    wizard.next_button.clicked.connect(wizard.go_next)
    wizard.nav_message = QLabel()
    wizard.nav_message.setObjectName(message_name)
    wizard.nav_message.setWordWrap(True)
    row = QHBoxLayout()
    row.addWidget(wizard.home_button)
    row.addWidget(wizard.nav_message, 1)
    row.addWidget(wizard.back_button)
    row.addWidget(wizard.next_button)
    return row


def frame_layout(wizard: QWidget, steps: QLayout, stack: QWidget, nav: QLayout,
                 margin: int = 10) -> QVBoxLayout:
    """Lay out ``wizard``: the steps, the stack of pages (taking the spare height) and the
    navigation; a disabled primary button is styled by :data:`PRIMARY_DISABLED_STYLE`."""
    wizard.setStyleSheet(PRIMARY_DISABLED_STYLE)
    layout = QVBoxLayout(wizard)
    layout.setContentsMargins(18, margin, 18, margin)
    layout.addLayout(steps)
    layout.addWidget(stack, 1)
    layout.addLayout(nav)
    return layout


def xlsx_path(path: str | Path) -> Path:
    """``path`` as an Excel workbook: ``.xlsx`` is added unless it already ends so (any case)."""
    target = Path(path)
    if target.suffix.lower() != ".xlsx":
        target = target.with_name(target.name + ".xlsx")
    return target


# ------------------------------------------------------------------- repeat runs (stability)
#: The most repeats offered (as ``core.majeval.repeats`` and ``core.interacteval.repeats``).
MAX_REPEATS = 10


def header_row_spin() -> QSpinBox:
    """The "Header row" spin box of every page that reads a sheet: 0 shows "found by
    EvalDesk" (the row that reads like a header above rows of data, so a title above the table
    is skipped), any other value is the spreadsheet row the user chose."""
    spin = QSpinBox()
    spin.setObjectName("headerRowSpin")
    spin.setRange(0, 1_048_576)
    spin.setSpecialValueText("found by EvalDesk")
    spin.setMinimumWidth(160)
    spin.setMaximumWidth(220)
    spin.setKeyboardTracking(False)
    spin.setToolTip(
        "The row that holds the column names. EvalDesk finds it by itself: the first row that "
        "reads like a header above rows of data, so a title and blank rows above your table "
        "are skipped (and said). Choose a row number if it found the wrong one.")
    return spin


def repeats_spin() -> QSpinBox:
    """The "Repeat each call" spin box (1 to 10 times), with its tooltip in plain words."""
    from core.stats import STABILITY_THRESHOLD  # not at start-up: it loads scipy (~1.5 s)

    spin = QSpinBox()
    spin.setObjectName("repeatsSpin")
    spin.setRange(1, MAX_REPEATS)
    spin.setSuffix(" time")
    spin.setMaximumWidth(120)
    spin.setToolTip(
        "Ask the model everything again, as new calls, to see whether it gives the same scores "
        "a second time. 1 = once (no check). Each repeat costs as much as the first run; "
        "repeats already finished are kept and cost nothing. The results then show how alike "
        "the repeats are (Krippendorff's alpha between repeats: 1 = always the same score); "
        f"below {STABILITY_THRESHOLD}, the level Krippendorff gives for tentative conclusions "
        "only, the judge is flagged. The scores shown are those of the first repeat. At "
        "temperature 0 (the model profile's default) a model answers almost the same every "
        "time; give the profile a temperature above 0 to see how much the judge varies.")
    spin.valueChanged.connect(lambda _v: set_times_suffix(spin))
    return spin


def set_times_suffix(spin: QSpinBox) -> None:
    """" time" for 1, " times" otherwise."""
    spin.setSuffix(" time" if spin.value() == 1 else " times")


def usage_of(gateways: list[Any]) -> Any:
    """The usage of every gateway of a run together (a run with repeats has several)."""
    from core.llm import Usage  # not at start-up (~0.3 s)

    if not gateways or any(getattr(g, "usage", None) is None for g in gateways):
        return None
    return Usage.total(g.usage for g in gateways)


def stability_label() -> QLabel:
    """The line saying how alike the repeats are (hidden without repeats)."""
    from core.stats import STABILITY_THRESHOLD  # not at start-up (scipy)

    label = QLabel()
    label.setObjectName("stabilityLabel")
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setToolTip(
        "Every call was made more than once. The agreement between repeats is Krippendorff's "
        "alpha (interval): 1 means the same scores every time, 0 no more alike than chance. "
        f"Below {STABILITY_THRESHOLD} Krippendorff allows tentative conclusions only, so the "
        "judge is flagged. The scores of every repeat, with each one's spread (SD and range), "
        "are in the export's Stability sheet. The scores shown are those of the first repeat.")
    label.hide()
    return label


def show_stability(label: QLabel, text: str, flagged: bool) -> None:
    """Show ``text`` (hidden when empty), in the warning colours when ``flagged``."""
    label.setText(text)
    label.setProperty("flagged", flagged)
    label.style().unpolish(label)
    label.style().polish(label)
    label.setVisible(bool(text))


def show_repeats(label: QLabel, wanted: int, repeats: list[Any],
                 entries_of: Callable[[list[Any]], Any], lines_of: Callable[[Any], list[str]],
                 again: str) -> list[Any]:
    """The stability line of a run asked ``wanted`` times (0 or 1: no line): how alike the
    ``repeats`` found are (``entries_of(repeats)``, then ``lines_of(entries)``), or how many
    are finished and what to do (``again``). Returns the repeats when 2 or more are there."""
    if len(repeats) < 2:
        text = (f"Only {count(len(repeats), 'repeat')} of {wanted} finished: {again}"
                if wanted > 1 else "")
        show_stability(label, text, False)
        return []
    entries = entries_of(repeats)
    show_stability(label,
                   f"Asked {len(repeats)} times (the scores shown are the first time's): "
                   + " ".join(lines_of(entries)),
                   any(s.flagged for _, _, s in entries))
    return repeats
