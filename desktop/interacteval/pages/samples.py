"""Page 2: the rated samples the AI assessors read before thinking aloud (4 per dimension)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
)

from core.interacteval.inputs import read_samples
from core.interacteval.model import ScoredSample
from core.words import count
from desktop.file_dialogs import ask_then, open_file
from desktop.interacteval.models import SamplesModel
from desktop.interacteval.pages._base import InteractEvalPage
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.views import fit_rows
from desktop.widgets import hint_label, page_layout, row_table

if TYPE_CHECKING:  # pragma: no cover
    from desktop.interacteval.wizard import InteractEvalWizard



class SamplesPage(InteractEvalPage):
    KEY, TITLE = "samples", "Samples"

    def __init__(self, wizard: InteractEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self._samples_problems: list[str] = []
        self.samples_file_button = QPushButton("Import a scored sheet…")
        self.samples_file_button.setObjectName("primaryButton")
        self.samples_file_button.setToolTip(
            "A sheet with the columns text, score (or one score column per dimension, named "
            "like the dimension) and optionally source.")
        self.samples_file_button.clicked.connect(self._ask_samples)
        self.suggest_button = QPushButton("Suggest 4 again")
        self.suggest_button.setToolTip("Pick 4 samples whose scores spread from the lowest to "
                                       "the highest.")
        self.suggest_button.clicked.connect(self.suggest_again)
        self.samples_label = hint_label("No samples yet.")
        self.samples_model = SamplesModel(self)
        self.samples_model.chosen_changed.connect(self._samples_ticked)
        self.samples_view = row_table(self.samples_model, stretch=3)
        self.samples_view.horizontalHeader().setSectionResizeMode(
            2, QHeaderView.ResizeMode.Interactive)
        self.samples_view.setColumnWidth(2, 220)
        self.samples_count = QLabel()
        #: The selected sample in full (the table shows a one-line preview of each).
        self.full_text = QPlainTextEdit()
        self.full_text.setReadOnly(True)
        self.full_text.setPlaceholderText("Select a sample to read its whole text here.")
        self.samples_view.selectionModel().currentRowChanged.connect(self._show_full_text)
        self.samples_panel = RunPanel()
        self.samples_panel.hide()
        top = QHBoxLayout()
        top.addWidget(self.samples_file_button)
        top.addWidget(self.suggest_button)
        top.addWidget(self.samples_label, 1)
        layout = page_layout(
            self, "Sample texts the assessors look at",
            "Before thinking aloud, each AI assessor reads the definition and a few texts that "
            "people have already scored. The paper used <b>4 per dimension</b>, spread over the "
            "score range. Import a scored sheet: EvalDesk suggests 4 for the dimension chosen "
            "at the top right; tick or untick to change the choice. Samples are optional, but "
            "they help the models see what a good and a poor text look like.")
        layout.addLayout(top)
        layout.addWidget(self.samples_panel)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.samples_view)
        split.addWidget(self.full_text)
        split.setSizes([380, 200])
        layout.addWidget(split, 1)
        layout.addWidget(self.samples_count)

    def refresh(self) -> None:
        self._fill_samples()

    @Slot()
    def _show_full_text(self, current: Any = None, _previous: Any = None) -> None:
        row = current.row() if current is not None and current.isValid() else -1
        sample = self.samples_model.sample_at(row)
        if sample is not None:
            about = f"About: {sample.source}\n\n" if sample.source else ""
            self.full_text.setPlainText(f"{about}Score {sample.score:g}\n\n{sample.text}")
        else:
            self.full_text.clear()

    def busy_changed(self, busy: str) -> None:
        self.samples_file_button.setEnabled(not busy)

    def ask_samples_path(self) -> str | None:
        """Ask for the scored sheet (tests replace this)."""
        return open_file(self, "Choose the scored samples")

    @Slot()
    def _ask_samples(self) -> None:
        ask_then(self.ask_samples_path, self.import_samples)

    def import_samples(self, path: str | Path) -> Any:
        """Read the scored sheet for every dimension and suggest 4 samples each."""
        names = [d.name for d in self.choices.dimensions]
        self.samples_panel.show()
        return self.wizard.run_step(self.samples_panel, partial(_read_samples_job, Path(path), names),
                          title=f"Reading {Path(path).name}",
                          on_done=partial(self._samples_read, Path(path)), busy="samples")

    def _samples_read(self, path: Path, outcome: RunOutcome) -> None:
        if not outcome.finished:
            return
        samples, problems = outcome.result
        if not samples:
            self.samples_panel.fail("No samples could be read: " + " ".join(problems))
            return
        self.samples_panel.hide()
        self.session.use_samples(path.name, samples)  # 4 suggested per dimension, saved
        self._samples_problems = problems
        self._fill_samples()

    @Slot()
    def suggest_again(self) -> None:
        self.session.suggest_samples(self.choices.current)
        self._fill_samples()

    def _fill_samples(self) -> None:
        name = self.choices.current
        mine = [(i, s) for i, s in enumerate(self.choices.samples) if s.dimension == name]
        self.samples_model.set_samples(mine, self.choices.chosen.get(name, []))
        fit_rows(self.samples_view)
        if self.choices.samples_file:
            problems = self._samples_problems
            self.samples_label.setText(
                f"{len(mine)} rated samples for {name} from {self.choices.samples_file}"
                + (f" ({len(problems)} rows skipped: {problems[0]})" if problems else "."))
        self._count_samples()

    def _count_samples(self) -> None:
        n = len(self.choices.chosen.get(self.choices.current, []))
        note = "" if n == 4 else " (the paper used 4)"
        self.samples_count.setText(f"{count(n, 'sample')} chosen for {self.choices.current}{note}.")

    @Slot()
    def _samples_ticked(self) -> None:
        self.choices.chosen[self.choices.current] = self.samples_model.chosen()
        self._save()
        self._count_samples()


def _read_samples_job(path: Path, dimensions: list[str], progress: Any,
                      cancel: Any) -> tuple[list[ScoredSample], list[str]]:
    """Read the scored sheet once per dimension (each may have its own score column)."""
    progress.start(f"Reading {path.name}", total=max(1, len(dimensions)))
    samples: list[ScoredSample] = []
    problems: list[str] = []
    for name in dimensions or [""]:
        got = read_samples(path, dimension=name or None)
        if got.errors:
            problems += [f"{name}: {e}" if name else e for e in got.errors]
        else:
            problems += got.problems
            for s in got.samples:
                if not s.dimension or s.dimension.casefold() == name.casefold():
                    samples.append(s.model_copy(update={"dimension": name}))
        progress.advance(1, name)
    return samples, list(dict.fromkeys(problems))
