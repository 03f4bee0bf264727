"""Page 3: think-aloud, by AI assessors (model profiles) and by people (typed or imported notes)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.interacteval.inputs import parse_notes, read_notes
from core.interacteval.model import Attribute
from core.interacteval.session import CANNOT_THINK_ALOUD, can_think_aloud
from core.words import count
from desktop.file_dialogs import ask_then, open_file
from desktop.interacteval.models import RowColumn, RowsModel
from desktop.interacteval.pages._base import InteractEvalPage
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.views import fit_rows
from desktop.widgets import estimate_label, hint_label, page_layout, row_table

if TYPE_CHECKING:  # pragma: no cover
    from core.interacteval.model import ThinkAloudResult
    from core.runs import CancelToken, Progress
    from desktop.interacteval.wizard import InteractEvalWizard



class ThinkAloudPage(InteractEvalPage):
    KEY, TITLE = "think_aloud", "Think-aloud"

    def __init__(self, wizard: InteractEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self.assessor_list = QListWidget()
        self.assessor_list.setMaximumHeight(110)
        self.assessor_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.assessor_list.setToolTip("Tick the model profiles (from Settings) that think "
                                      "aloud. The paper used four different models.")
        self.assessor_list.itemChanged.connect(self._assessors_ticked)
        self.builder_combo = QComboBox()
        self.builder_combo.setToolTip("The model that turns the attributes into a checklist "
                                      "(the Build page).")
        self.builder_combo.currentIndexChanged.connect(self._builder_chosen)
        self.think_button = QPushButton("Run think-aloud")
        self.think_button.setObjectName("primaryButton")
        self.think_button.clicked.connect(self.run_think_aloud)
        self.think_panel = RunPanel()
        self.think_panel.hide()
        self.think_estimate = estimate_label("Calls, cost and time of the think-aloud, worked "
                                             "out from our prompt and your samples before "
                                             "anything runs.")
        self.failures_label = QLabel()
        self.failures_label.setObjectName("errorText")
        self.failures_label.setWordWrap(True)
        self.failures_label.hide()
        models_box = QGroupBox("AI assessors")
        mb = QVBoxLayout(models_box)
        mb.addWidget(self.assessor_list)
        self.no_assessor_note = hint_label()
        self.no_assessor_note.hide()
        mb.addWidget(self.no_assessor_note)
        form = QFormLayout()
        form.addRow("Builds the checklist:", self.builder_combo)
        mb.addLayout(form)
        mb.addWidget(self.think_button)
        mb.addWidget(self.think_estimate)

        self.author_edit = QLineEdit()
        self.author_edit.setPlaceholderText("who wrote these notes")
        self.notes_edit = QPlainTextEdit()
        self.notes_edit.setPlaceholderText(
            "What do you look for when you rate this dimension? One thought per line, e.g.\n"
            "Each sentence follows on from the one before.\nPronouns point to something clear.")
        self.notes_edit.setMaximumHeight(110)
        self.add_notes_button = QPushButton("Add these notes")
        self.add_notes_button.clicked.connect(self.add_typed_notes)
        self.import_notes_button = QPushButton("Import notes file…")
        self.import_notes_button.setToolTip("A text file (one thought per line; the file name "
                                            "is the author) or a sheet with author and "
                                            "attribute columns.")
        self.import_notes_button.clicked.connect(self._ask_notes)
        notes_box = QGroupBox("People's think-aloud notes")
        nb = QVBoxLayout(notes_box)
        author_row = QHBoxLayout()
        author_row.addWidget(QLabel("Author:"))
        author_row.addWidget(self.author_edit, 1)
        nb.addLayout(author_row)
        nb.addWidget(self.notes_edit)
        nrow = QHBoxLayout()
        nrow.addWidget(self.add_notes_button)
        nrow.addWidget(self.import_notes_button)
        nrow.addStretch(1)
        nb.addLayout(nrow)
        self.notes_message = hint_label()
        nb.addWidget(self.notes_message)

        self.attributes_model = RowsModel([
            RowColumn("text", "Attribute"),
            RowColumn("who", "Whose"),
            RowColumn("kind", "From"),
        ], self)
        self.attributes_view = row_table(self.attributes_model, stretch=0)
        self.attributes_view.setSelectionMode(
            QAbstractItemView.SelectionMode.ExtendedSelection)
        self.attributes_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.remove_attributes_button = QPushButton("Remove selected")
        self.remove_attributes_button.clicked.connect(self.remove_selected_attributes)
        self.attributes_label = QLabel()
        arow = QHBoxLayout()
        arow.addWidget(self.attributes_label, 1)
        arow.addWidget(self.remove_attributes_button)

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 6, 0)
        lv.addWidget(models_box)
        lv.addWidget(notes_box)
        lv.addStretch(1)
        # the left column scrolls rather than squash its boxes on a small screen
        left_scroll = QScrollArea()
        left_scroll.setWidget(left)
        left_scroll.setWidgetResizable(True)
        left_scroll.setFrameShape(QFrame.Shape.NoFrame)
        left_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        left_scroll.setMinimumWidth(360)
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(6, 0, 0, 0)
        rv.addLayout(arow)
        rv.addWidget(self.attributes_view, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left_scroll)
        split.addWidget(right)
        split.setSizes([430, 650])
        layout = page_layout(
            self, "Think aloud: what matters when rating?",
            "AI models and people each say what they keep in mind when rating the dimension. "
            "The paper found that people are better at inner qualities (coherence, fluency) and "
            "models at matching the source (consistency, relevance), and that <b>both together "
            "work best</b>. Run one or more models from Settings, and type or import your own "
            "notes. The table on the right lists every attribute with whose it is.")
        layout.addWidget(split, 1)
        # the run below, across the page: room for its progress, Cancel and the whole message
        layout.addWidget(self.think_panel)
        layout.addWidget(self.failures_label)

    def refresh(self) -> None:
        self._fill_think_aloud()

    def busy_changed(self, busy: str) -> None:
        self.think_button.setEnabled(not busy and self.dimension is not None
                                     and bool(self.choices.assessors))

    def _fill_think_aloud(self) -> None:
        self._filling = True
        try:
            profiles = self._profiles()
            names = [p.name for p in profiles]
            able = [p.name for p in profiles if can_think_aloud(p)]
            # the built-in demo model is never offered (it cannot think aloud)
            chosen = [n for n in self.choices.assessors if n in able or n not in names]
            if chosen != self.choices.assessors:
                self.choices.assessors = chosen
                self._save()
            if not self.choices.assessors and able:
                default = self.wizard.main_window.settings.default_profile
                self.choices.assessors = [default if default in able else able[0]]
            self.assessor_list.clear()
            for p in profiles:
                item = QListWidgetItem(p.name)
                item.setData(Qt.ItemDataRole.UserRole, p.name)
                if can_think_aloud(p):
                    item.setToolTip(f"Model: {p.model}")
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    item.setCheckState(Qt.CheckState.Checked if p.name in self.choices.assessors
                                       else Qt.CheckState.Unchecked)
                else:
                    item.setText(f"{p.name} (cannot think aloud)")
                    item.setToolTip(CANNOT_THINK_ALOUD)
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled
                                  & ~Qt.ItemFlag.ItemIsUserCheckable)
                self.assessor_list.addItem(item)
            self.no_assessor_note.setText(
                "None of your models can think aloud here: the built-in demo model only "
                "repeats itself. Add a larger model in Settings → Models, or write the notes "
                "yourself below (they are enough to build a checklist)." if not able else "")
            self.no_assessor_note.setVisible(not able)
            self.builder_combo.clear()
            for name in names:
                self.builder_combo.addItem(name)
            builder = self._builder_name()
            if builder in names:
                self.builder_combo.setCurrentIndex(names.index(builder))
            if not self.author_edit.text():
                self.author_edit.setText(self.who)
        finally:
            self._filling = False
        self._fill_attributes()
        self.busy_changed(self.busy)
        self.update_estimate()

    def update_estimate(self) -> Any:
        """The calls, cost and time of the think-aloud of the ticked models (worker thread);
        returns the task (tests await it)."""
        from desktop.interacteval.pages._base import show_estimate

        dim = self.dimension
        profiles = [p for n in self.choices.assessors if (p := self._profile(n)) is not None]
        if dim is None or not profiles:
            self.think_estimate.setText("")
            return None
        return show_estimate(self, self.think_estimate,
                             lambda: self.session.estimate_think_aloud(dim.name),
                             lead="Before you run the think-aloud", profiles=profiles)

    def _fill_attributes(self) -> None:
        name = self.choices.current
        stored = self.session.stage(name, "think_aloud") if name else None
        models = stored.value.attributes if stored is not None else []
        notes = self.choices.notes.get(name, [])
        rows = [{"text": a.text, "who": a.source or "unknown",
                 "kind": "model" if a.source_kind == "model" else "person",
                 "_origin": ("model", i)} for i, a in enumerate(models)]
        rows += [{"text": a.text, "who": a.source or "unknown", "kind": "person",
                  "_origin": ("note", i)} for i, a in enumerate(notes)]
        self.attributes_model.set_rows(rows)
        fit_rows(self.attributes_view)
        self.attributes_label.setText(
            f"<b>{count(len(rows), 'attribute')} for {name}</b>: {len(models)} from models, "
            f"{len(notes)} from people.")
        failures = stored.value.failures if stored is not None else []
        self.failures_label.setText("\n".join(f"{f.who} failed: {f.message}" for f in failures))
        self.failures_label.setVisible(bool(failures))

    @Slot()
    def _assessors_ticked(self, *_args: Any) -> None:
        if self._filling:
            return
        self.choices.assessors = [
            self.assessor_list.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(self.assessor_list.count())
            if self.assessor_list.item(i).checkState() == Qt.CheckState.Checked]
        self._save()
        self.busy_changed(self.busy)
        self.update_estimate()

    @Slot(int)
    def _builder_chosen(self, index: int) -> None:
        if self._filling or index < 0:
            return
        self.choices.builder = self.builder_combo.itemText(index)
        self._save()

    @Slot()
    def run_think_aloud(self) -> Any:
        """Ask every ticked model to think aloud about the current dimension (after the notice
        when a ticked model would take the sample texts off this computer)."""
        if self.dimension is None or not self.choices.assessors or self.busy:
            return None
        profiles = [self._profile(name) for name in self.choices.assessors]
        return self.wizard.after_cloud_notice(profiles, self._run_think_aloud)

    def _run_think_aloud(self) -> Any:
        dim = self.dimension
        if dim is None or not self.choices.assessors or self.busy:
            return None
        async def job(progress: Progress, cancel: CancelToken) -> ThinkAloudResult:
            return await self.session.think_aloud(dim.name, progress=progress, cancel=cancel)

        self.think_panel.show()
        return self.wizard.run_step(self.think_panel, job, title=f"Think-aloud on {dim.name}",
                          on_done=self._think_done, busy="think_aloud")

    def _think_done(self, outcome: RunOutcome) -> None:
        self._fill_attributes()

    def add_notes(self, attributes: list[Attribute]) -> None:
        name = self.choices.current
        if not name or not attributes:
            return
        self.choices.notes[name] = [*self.choices.notes.get(name, []), *attributes]
        self._save()
        self._fill_attributes()

    @Slot()
    def add_typed_notes(self) -> None:
        notes = parse_notes(self.notes_edit.toPlainText(), self.author_edit.text() or self.who)
        if not notes:
            self.notes_message.setText("Type at least one note (one per line) first.")
            return
        self.add_notes(notes)
        self.notes_edit.clear()
        self.notes_message.setText(f"Added {count(len(notes), 'note')} by {notes[0].source}.")

    def ask_notes_path(self) -> str | None:
        """Ask for a notes file (tests replace this)."""
        return open_file(self, "Import think-aloud notes",
                         "Notes (*.txt *.md *.xlsx *.xls *.csv);;All files (*)")

    @Slot()
    def _ask_notes(self) -> None:
        ask_then(self.ask_notes_path, self.import_notes)

    def import_notes(self, path: str | Path) -> None:
        got = read_notes(path)
        if got.errors:
            self.notes_message.setText(" ".join(got.errors))
            return
        self.add_notes(got.attributes)
        authors = sorted({a.source for a in got.attributes})
        extra = f" {count(len(got.problems), 'row')} skipped." if got.problems else ""
        self.notes_message.setText(f"Imported {count(len(got.attributes), 'note')} by "
                                   f"{', '.join(authors)} from {Path(path).name}.{extra}")

    @Slot()
    def remove_selected_attributes(self) -> None:
        name = self.choices.current
        rows = self.attributes_model.rows()
        picked = {i.row() for i in self.attributes_view.selectionModel().selectedRows()}
        if not picked:
            return
        drop_models = {rows[r]["_origin"][1] for r in picked if rows[r]["_origin"][0] == "model"}
        drop_notes = {rows[r]["_origin"][1] for r in picked if rows[r]["_origin"][0] == "note"}
        if drop_notes:
            self.choices.notes[name] = [a for i, a in enumerate(self.choices.notes.get(name, []))
                                      if i not in drop_notes]
            self._save()
        stored = self.session.stage(name, "think_aloud")
        if drop_models and stored is not None:
            kept = [a for i, a in enumerate(stored.value.attributes) if i not in drop_models]
            self.session.edit_stage(name, "think_aloud",
                                    stored.value.model_copy(update={"attributes": kept}))
        self._fill_attributes()
