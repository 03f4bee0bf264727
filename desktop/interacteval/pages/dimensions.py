"""Page 1 of the InteractEval wizard: the dimensions to score, each with a definition."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QPushButton,
)

from core.interacteval.inputs import read_notes
from core.interacteval.model import Dimension
from core.interacteval.session import SUMMEVAL_DIMENSIONS, sample_folder
from desktop.interacteval.models import RowColumn, RowsModel
from desktop.interacteval.pages._base import InteractEvalPage
from desktop.views import fit_rows
from desktop.widgets import hint_label, page_layout, row_table

if TYPE_CHECKING:  # pragma: no cover
    from desktop.interacteval.wizard import InteractEvalWizard


class DimensionsPage(InteractEvalPage):
    KEY = "dimensions"

    def __init__(self, wizard: InteractEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self.dimensions_model = RowsModel([
            RowColumn("name", "Dimension", True, "A short name, e.g. Coherence."),
            RowColumn("definition", "Definition (what a good text does)", True,
                      "Used in every prompt: say what the dimension means in plain words."),
        ], self)
        self.dimensions_model.edited.connect(self._dimension_edited)
        self.dimensions_view = row_table(self.dimensions_model, stretch=1)
        self.dimensions_view.setEditTriggers(QAbstractItemView.EditTrigger.AllEditTriggers)
        self.add_dimension_button = QPushButton("Add dimension")
        self.add_dimension_button.clicked.connect(self.add_dimension)
        self.remove_dimension_button = QPushButton("Remove selected")
        self.remove_dimension_button.clicked.connect(self.remove_dimension)
        self.template_button = QPushButton("Use SummEval's four")
        self.template_button.setToolTip("Coherence, Consistency, Fluency and Relevance (the "
                                        "summary dimensions of the paper), defined in plain "
                                        "words. Edit them to fit your texts.")
        self.template_button.clicked.connect(self.use_template)
        self.sample_button = QPushButton("Try the sample set")
        self.sample_button.setToolTip("A small made-up example: 2 dimensions, 8 rated answers to "
                                      "children's weather questions, notes of two teachers and "
                                      "12 answers to score.")
        self.sample_button.clicked.connect(self.load_sample_set)
        buttons = QHBoxLayout()
        for b in (self.add_dimension_button, self.remove_dimension_button, self.template_button,
                  self.sample_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = page_layout(
            self, "InteractEval: what should a good text do?",
            "List the qualities (<b>dimensions</b>) you want to score, each with a definition in "
            "plain words, for example “Coherence: the sentences follow on from one another”. "
            "EvalDesk will build a Yes/No checklist for each dimension from your own notes and "
            "from AI models thinking aloud, and then score every text with it. Double-click a "
            "cell to edit it. Not sure where to start? Use SummEval's four dimensions as a "
            "template, or try the sample set.")
        layout.addLayout(buttons)
        layout.addWidget(self.dimensions_view, 1)
        layout.addWidget(hint_label("Renaming a dimension later takes its notes, samples, build "
                               "steps and checklist along; the steps are then marked out of date."))

    TITLE = "Dimensions"

    def refresh(self) -> None:
        self._fill_dimensions()

    def next_state(self) -> tuple[bool, str]:
        if not self.choices.dimensions:
            return False, "Add at least one dimension to go on."
        return True, ""

    def _fill_dimensions(self) -> None:
        self._filling = True
        try:
            self.dimensions_model.set_rows(
                [{"name": d.name, "definition": d.definition} for d in self.choices.dimensions])
            fit_rows(self.dimensions_view)
        finally:
            self._filling = False
        self.wizard.fill_dimension_combo()

    def _set_dimensions(self, dimensions: list[Dimension]) -> None:
        self.choices.dimensions = dimensions
        self._save()
        self._fill_dimensions()
        self.wizard.update_nav()

    @Slot()
    def add_dimension(self, name: str = "", definition: str = "") -> None:
        names = {d.name for d in self.choices.dimensions}
        name = name or "New dimension"
        base, n = name, 2
        while name in names:
            name, n = f"{base} {n}", n + 1
        self._set_dimensions([*self.choices.dimensions, Dimension(name=name,
                                                                definition=definition)])
        row = len(self.choices.dimensions) - 1
        self.dimensions_view.setCurrentIndex(self.dimensions_model.index(row, 0))

    @Slot()
    def remove_dimension(self) -> None:
        rows = {i.row() for i in self.dimensions_view.selectionModel().selectedIndexes()}
        if not rows and self.dimensions_view.currentIndex().isValid():
            rows = {self.dimensions_view.currentIndex().row()}
        self._set_dimensions([d for i, d in enumerate(self.choices.dimensions) if i not in rows])

    @Slot()
    def use_template(self) -> None:
        have = {d.name.casefold() for d in self.choices.dimensions}
        extra = [d for d in SUMMEVAL_DIMENSIONS if d.name.casefold() not in have]
        self._set_dimensions([*self.choices.dimensions, *[d.model_copy() for d in extra]])

    @Slot(int, str)
    def _dimension_edited(self, row: int, key: str) -> None:
        if self._filling:
            return
        rows = self.dimensions_model.rows()
        old = self.choices.dimensions[row]
        value = rows[row][key]
        if key == "name":
            names = [d.name for i, d in enumerate(self.choices.dimensions) if i != row]
            if not value or value in names:
                self.wizard.nav_message.setText("Each dimension needs its own name.")
                self._fill_dimensions()
                return
            self.session.rename_dimension(old.name, value)  # saves
            self._fill_dimensions()
            self.wizard.update_nav()
            return
        dims = list(self.choices.dimensions)
        dims[row] = old.model_copy(update={"definition": value})
        self._set_dimensions(dims)

    @Slot()
    def load_sample_set(self) -> None:
        """Load the sample set: dimensions, rated samples, teachers' notes, texts to score."""
        import csv

        folder = sample_folder()
        with open(folder / "dimensions.csv", encoding="utf-8", newline="") as handle:
            dims = [Dimension(name=r["dimension"], definition=r["definition"])
                    for r in csv.DictReader(handle)]
        have = {d.name for d in self.choices.dimensions}
        self.choices.dimensions = [*self.choices.dimensions,
                                   *[d for d in dims if d.name not in have]]
        for d in dims:
            notes_file = folder / f"notes_{d.name.lower()}.csv"
            if notes_file.is_file() and not self.choices.notes.get(d.name):
                self.choices.notes[d.name] = read_notes(notes_file).attributes
        self.choices.current = dims[0].name
        self.session.store_input("texts", folder / "texts.csv")  # saves the choices
        self._fill_dimensions()
        self.wizard.pages["samples"].import_samples(folder / "scored_samples.csv")
        self.wizard.main_window.status("Loaded the InteractEval sample set.")
