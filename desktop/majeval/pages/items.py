"""Page 5: the items to judge (a spreadsheet and its columns) and what the personas score."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from core.majeval.inputs import ITEM_ROLES, OpenedItems, open_items, read_items
from core.majeval.model import Dimension, Scale
from desktop.file_dialogs import ask_then, open_file
from desktop.majeval.models import Col, RowsModel
from desktop.majeval.pages._base import MajEvalPage
from desktop.majeval.results import table_view
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.views import fit_rows
from desktop.widgets import (
    chosen_sheet,
    fill_choices,
    fill_sheets,
    header_row_spin,
    hint_label,
    page_layout,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.runs import CancelToken, Progress
    from desktop.majeval.wizard import MajEvalWizard

__all__ = ["ItemsPage"]


class ItemsPage(MajEvalPage):
    KEY, TITLE = "items", "Items"

    def __init__(self, wizard: MajEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self.items_button = QPushButton("Choose the items file…")
        self.items_button.setObjectName("primaryButton")
        self.items_button.clicked.connect(self._ask_items)
        self.items_label = hint_label("No file chosen yet.")
        self.sheet_combo = QComboBox()
        self.sheet_combo.setMinimumWidth(160)
        self.sheet_combo.currentIndexChanged.connect(self._items_choice_changed)
        self.column_combos: dict[str, QComboBox] = {}
        self.header_spin = header_row_spin()
        self.header_spin.valueChanged.connect(self._header_chosen)
        form = QFormLayout()
        form.addRow("Sheet:", self.sheet_combo)
        form.addRow("Header row:", self.header_spin)
        for role, title in ITEM_ROLES.items():
            combo = QComboBox()
            combo.setMinimumWidth(200)
            combo.currentIndexChanged.connect(self._items_choice_changed)
            self.column_combos[role] = combo
            form.addRow(f"{title}:", combo)
        self.human_list = QListWidget()
        self.human_list.setMaximumHeight(90)
        self.human_list.setToolTip("Tick the columns with people's ratings (optional): the "
                                   "results then show how well each group agrees with them.")
        self.human_list.itemChanged.connect(self._items_choice_changed)
        form.addRow("Human ratings (optional):", self.human_list)
        columns_box = QGroupBox("Columns")
        columns_box.setLayout(form)

        self.dims_model = RowsModel([Col("name", "Dimension", editable=True),
                                     Col("definition", "Definition (what a good score means)",
                                         editable=True)])
        self.dims_model.edited.connect(self._dimension_edited)
        self.dims_view = table_view(self.dims_model, stretch=1)
        self.dims_view.setMaximumHeight(110)
        self.add_dim_button = QPushButton("Add dimension")
        self.add_dim_button.clicked.connect(self.add_dimension)
        self.remove_dim_button = QPushButton("Remove")
        self.remove_dim_button.clicked.connect(self.remove_dimension)
        self.scale_min = QSpinBox()
        self.scale_min.setRange(0, 9)
        self.scale_max = QSpinBox()
        self.scale_max.setRange(1, 100)
        self.scale_min.valueChanged.connect(self._scale_chosen)
        self.scale_max.valueChanged.connect(self._scale_chosen)
        dim_buttons = QHBoxLayout()
        dim_buttons.addWidget(self.add_dim_button)
        dim_buttons.addWidget(self.remove_dim_button)
        dim_buttons.addStretch(1)
        dim_buttons.addWidget(QLabel("Scale from"))
        dim_buttons.addWidget(self.scale_min)
        dim_buttons.addWidget(QLabel("to"))
        dim_buttons.addWidget(self.scale_max)
        dims_box = QGroupBox("What the personas score")
        db = QVBoxLayout(dims_box)
        db.addWidget(self.dims_view)
        db.addLayout(dim_buttons)

        self.items_model = RowsModel([Col("id", "Id"), Col("content", "Content"),
                                      Col("context", "Context"), Col("human", "Human ratings")])
        self.items_view = table_view(self.items_model, stretch=1)
        self.items_view.horizontalHeader().setSectionResizeMode(
            2, self.items_view.horizontalHeader().ResizeMode.Stretch)
        self.items_problems = QLabel()
        self.items_problems.setObjectName("errorText")
        self.items_problems.setWordWrap(True)
        self.items_problems.hide()
        self.items_panel = RunPanel()
        self.items_panel.hide()

        file_row = QHBoxLayout()
        file_row.addWidget(self.items_button)
        file_row.addWidget(self.items_label, 1)
        top = QHBoxLayout()
        top.addWidget(columns_box, 2)
        top.addWidget(dims_box, 3)
        layout = page_layout(
            self, "Items to judge",
            "Choose the spreadsheet with the AI-generated content, one item per row, and say "
            "which column holds the content, which its context (the story section, the source "
            "text) and, if you have them, people's ratings. Then name what the personas should "
            "score: one “Overall quality” on a 1-5 scale, or your own dimensions, each with a "
            "short definition.")
        layout.addLayout(file_row)
        layout.addLayout(top)
        layout.addWidget(self.items_problems)
        layout.addWidget(self.items_view, 1)
        layout.addWidget(self.items_panel)

    @property
    def opened(self) -> OpenedItems | None:
        return self.wizard.opened_items

    def refresh(self) -> None:
        wizard = self.wizard
        if wizard.opened_items is None and self.choices.items.input_id is not None \
                and not wizard.busy:
            self._reopen_items()

    def next_state(self) -> tuple[bool, str]:
        if not self.choices.item_list:
            return False, "Choose the items file and its content column."
        return True, ""

    def busy_changed(self, busy: str) -> None:
        self.items_button.setEnabled(not busy)

    def ask_items_path(self) -> str | None:
        """Ask for the items spreadsheet (tests replace this)."""
        return open_file(self, "Choose the items to judge")

    @Slot()
    def _ask_items(self) -> None:
        ask_then(self.ask_items_path, self.choose_items)

    def choose_items(self, path: str | Path) -> Any:
        """Copy the items file into the project and read it with guessed columns."""
        source = Path(path)
        self.items_panel.show()

        def step(progress: Progress, cancel: CancelToken) -> OpenedItems:
            progress.start(f"Reading {source.name}", total=1)
            opened = self.session.store_items(source)
            progress.advance(1)
            return opened

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                self.items_panel.hide()
                self.items_opened(outcome.result)

        return self.wizard.start_step("items", self.items_panel, step,
                                      f"Reading {source.name}", done)

    def _reopen_items(self) -> Any:
        """Read the stored items file again (executor) to offer its sheets and columns."""
        setup = self.choices.items
        self.items_panel.show()

        def step(progress: Progress, cancel: CancelToken) -> OpenedItems:
            progress.start(f"Reading {setup.file_name}", total=1)
            path = self.session.items_file(setup)
            if path is None:
                raise FileNotFoundError(f"The items file {setup.file_name} is neither where it "
                                        "was nor in the project; choose it again.")
            opened = open_items(path, setup)
            progress.advance(1)
            return opened

        def done(outcome: RunOutcome) -> None:
            if outcome.finished:
                self.items_panel.hide()
                self.wizard.opened_items = outcome.result
                self.fill()

        return self.wizard.start_step("items", self.items_panel, step,
                                      f"Reading {setup.file_name}", done)

    def items_opened(self, opened: OpenedItems) -> None:
        self.wizard.opened_items = opened
        self.session.use_items(opened.setup, opened.read.items)
        self.fill()
        self.wizard.pages["run"].fill()

    def fill(self) -> None:
        self._filling = True
        s = self.choices.items
        self.items_label.setText(f"{s.file_name}" if s.file_name else "No file chosen yet.")
        opened = self.opened
        columns = opened.columns if opened is not None else []
        fill_sheets(self.sheet_combo, opened.sheets if opened is not None else [],
                    opened.hidden if opened is not None else {}, s.sheet)
        self.header_spin.setValue(s.header_row or 0)
        for role, combo in self.column_combos.items():
            fill_choices(combo, "(none)" if role != "content" else "(choose)", columns,
                         s.columns.get(role))
        self.human_list.clear()
        used = {v for v in s.columns.values() if v}
        for c in columns:
            if c in used:
                continue
            item = QListWidgetItem(c)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if c in s.human else
                               Qt.CheckState.Unchecked)
            self.human_list.addItem(item)
        self.dims_model.set_rows([d.model_dump() for d in self.choices.dimensions])
        self.scale_min.setValue(self.choices.scale.minimum)
        self.scale_max.setValue(self.choices.scale.maximum)
        self._filling = False
        self._show_items()

    def _show_items(self) -> None:
        rows = [{"id": i.id, "content": i.content, "context": i.context,
                 "human": ", ".join(f"{k}: {v:g}" for k, v in i.human.items())}
                for i in self.choices.item_list]
        self.items_model.set_rows(rows)
        fit_rows(self.items_view)
        read = self.opened.read if self.opened is not None else None
        messages = (read.errors + read.problems) if read is not None else []
        self.items_problems.setText("\n".join(messages[:8]))
        self.items_problems.setVisible(bool(messages))
        self.wizard.update_nav()

    @Slot()
    def _items_choice_changed(self, *_args: Any) -> None:
        if self._filling or self.opened is None:
            return
        columns = {role: combo.currentData() for role, combo in self.column_combos.items()}
        human = [self.human_list.item(i).text() for i in range(self.human_list.count())
                 if self.human_list.item(i).checkState() == Qt.CheckState.Checked]
        sheet = chosen_sheet(self.sheet_combo) or None
        setup = self.choices.items.model_copy(update={"columns": columns, "human": human})
        path = self.session.items_file(setup)
        if path is None:
            return
        if sheet != setup.sheet:
            setup = setup.model_copy(update={"sheet": sheet, "columns": {}, "human": [],
                                             "header_row": None})
            self.items_opened(open_items(path, setup))
            return
        read = read_items(path, setup)
        self.wizard.opened_items = OpenedItems(self.opened.sheets, self.opened.columns, setup,
                                               read, self.opened.hidden)
        self.session.use_items(setup, read.items if not read.errors else [])
        self.fill()
        self.wizard.pages["run"].fill()

    @Slot(int)
    def _header_chosen(self, value: int) -> None:
        """Another header row: the columns are read, and guessed, anew."""
        if self._filling or self.opened is None:
            return
        setup = self.choices.items.model_copy(update={"header_row": value or None,
                                                      "columns": {}, "human": [],
                                                      "human_names": {}})
        path = self.session.items_file(setup)
        if path is not None and setup.header_row != self.choices.items.header_row:
            self.items_opened(open_items(path, setup))

    @Slot(int, str, object)
    def _dimension_edited(self, _row: int, _key: str, _value: Any) -> None:
        dims = []
        for row in self.dims_model.rows():
            name = str(row.get("name") or "").strip()
            if name:
                dims.append(Dimension(name=name, definition=str(row.get("definition") or "")))
        names = [d.name for d in dims]
        if not dims or len(set(names)) != len(names):
            self.wizard.nav_message.setText("Each dimension needs its own name.")
            return
        self.wizard.nav_message.setText("")
        self.choices.dimensions = dims
        self.save()
        self.wizard.pages["run"].fill()

    @Slot()
    def add_dimension(self) -> None:
        n = len(self.choices.dimensions) + 1
        while any(d.name == f"Dimension {n}" for d in self.choices.dimensions):
            n += 1
        self.choices.dimensions.append(Dimension(name=f"Dimension {n}", definition=""))
        self.save()
        self.dims_model.set_rows([d.model_dump() for d in self.choices.dimensions])

    @Slot()
    def remove_dimension(self) -> None:
        row = self.dims_view.currentIndex().row()
        if 0 <= row < len(self.choices.dimensions) and len(self.choices.dimensions) > 1:
            del self.choices.dimensions[row]
            self.save()
            self.dims_model.set_rows([d.model_dump() for d in self.choices.dimensions])

    @Slot()
    def _scale_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        low, high = self.scale_min.value(), self.scale_max.value()
        if high <= low:
            self.wizard.nav_message.setText("The top of the scale must be above the bottom.")
            return
        labels = Scale().labels if (low, high) == (1, 5) else {}
        self.choices.scale = Scale(minimum=low, maximum=high, labels=labels)
        self.save()
        self.wizard.pages["run"].fill()
