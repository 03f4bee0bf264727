"""The InteractEval wizard: dimensions → samples → think-aloud → build → checklist → score →
results.

The widgets only collect choices and show outcomes; the method is in :mod:`core.interacteval`
(each stage a coroutine taking the previous, possibly edited, result) and what is kept in the
project is in :mod:`core.interacteval.session`. Every model call runs through
:mod:`desktop.runner` with progress and Cancel; every choice and every edit is stored in the
project as soon as it is made, so reopening the project restores the wizard where it was.
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QStyledItemDelegate,
    QVBoxLayout,
    QWidget,
)

from core.interacteval import session as st
from core.interacteval.model import (
    Attribute,
    AttributeCluster,
    Dimension,
    ScoredSample,
)
from desktop.interacteval.checklist_editor import ChecklistEditor
from desktop.interacteval.models import RowColumn, RowsModel, SamplesModel
from desktop.interacteval.results import ResultsView
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome, start_step
from desktop.widgets import (
    alert_box,
    frame_layout,
    hint_label,
    intro_label,
    navigation,
    row_table,
    step_buttons,
    title_label,
    xlsx_path,
)

__all__ = ["BUILD_STEPS", "PAGES", "InteractEvalWizard", "open_wizard"]

log = logging.getLogger("evaldesk.interacteval")

PAGES = ("dimensions", "samples", "think_aloud", "build", "checklist", "score", "results")
PAGE_TITLES = {
    "dimensions": "Dimensions",
    "samples": "Samples",
    "think_aloud": "Think-aloud",
    "build": "Build",
    "checklist": "Checklist",
    "score": "Score",
    "results": "Results",
}
#: Pages that show one dimension at a time (the dimension chooser is visible on them).
PER_DIMENSION = ("samples", "think_aloud", "build", "checklist")

#: The construction steps on the Build page: (stage key, title, what it does).
BUILD_STEPS = [
    ("components", "1. Components",
     ("The model names at most five components of the dimension that recur in the think-aloud "
     "attributes. Edit the list (one per line): rename, delete or add components.")),
    ("clusters", "2. Attribute groups",
     ("Each attribute is put under the component it fits best; the model may leave out "
     "redundant or confusing ones. Change a component in the right-hand column to regroup.")),
    ("key_questions", "3. Key questions",
     ("One Yes/No key question per component (“Yes” is the good answer). They become the "
     "headings of the checklist. Double-click a question to change it.")),
    ("sub_questions", "4. Sub-questions",
     ("Several Yes/No sub-questions under each key question. These are the questions that "
     "will be asked. Double-click to change one; empty it to drop it.")),
    ("checklist", "5. Review (validation)",
     ("The model merges near-duplicates, drops irrelevant questions and rewords unclear ones. "
     "The result is the checklist, which you can edit on the next page.")),
]
LEFT_OUT = "(left out)"


class ChoiceDelegate(QStyledItemDelegate):
    """A combo box editor offering the column's choices (the component of an attribute)."""

    def __init__(self, model: RowsModel, key: str, parent=None) -> None:
        super().__init__(parent)
        self.model, self.key = model, key

    def createEditor(self, parent, option, index):
        combo = QComboBox(parent)
        column = self.model.columns[self.model.column_of(self.key)]
        combo.addItems(list(column.choices))
        return combo

    def setEditorData(self, editor, index):
        editor.setCurrentText(str(index.data(Qt.ItemDataRole.EditRole)))

    def setModelData(self, editor, model, index):
        model.setData(index, editor.currentText(), Qt.ItemDataRole.EditRole)


class InteractEvalWizard(QWidget):
    """The InteractEval wizard page shown in the main window."""

    page_changed = Signal(str)
    #: A long step ended: (what, "finished" / "stopped" / "failed").
    step_ended = Signal(str, str)

    def __init__(self, main_window: Any, project: Any,
                 llm_factory: st.LLMFactory | None = None) -> None:
        super().__init__()
        self.setObjectName("interactevalWizard")
        self.main_window = main_window
        self.project = project
        self.llm_factory = llm_factory or st.default_llm_factory
        #: Said when the stored choices could not be read (the original is kept aside).
        self.state, self.state_problem = st.open_state(project)
        self.busy = ""
        self.opened_texts: st.OpenedTexts | None = None
        self.run: Any = None
        self.agreement: list[Any] = []
        self._filling = False
        self._tasks: set[Any] = set()
        self._samples_problems: list[str] = []
        self._retired = False
        signal = getattr(main_window, "project_changed", None)
        if signal is not None:
            signal.connect(self._project_changed)
        self._components_timer = QTimer(self)
        self._components_timer.setSingleShot(True)
        self._components_timer.setInterval(400)
        self._components_timer.timeout.connect(self._save_components)

        steps, self.step_buttons = step_buttons(PAGES, PAGE_TITLES, self.show_page)
        self.dim_label = QLabel("Dimension:")
        self.dim_combo = QComboBox()
        self.dim_combo.setMinimumWidth(180)
        self.dim_combo.setToolTip("The pages Samples, Think-aloud, Build and Checklist work on "
                                  "one dimension at a time.")
        self.dim_combo.currentIndexChanged.connect(self._dimension_chosen)
        steps.addWidget(self.dim_label)
        steps.addWidget(self.dim_combo)
        self.state_alert = alert_box(self.state_problem)
        self.state_alert.setVisible(bool(self.state_problem))

        self.stack = QStackedWidget()
        self.pages: dict[str, QWidget] = {
            "dimensions": self._dimensions_page(),
            "samples": self._samples_page(),
            "think_aloud": self._think_aloud_page(),
            "build": self._build_page(),
            "checklist": self._checklist_page(),
            "score": self._score_page(),
            "results": self._results_page(),
        }
        for page in self.pages.values():
            self.stack.addWidget(page)

        nav = navigation(self, "Back to the home screen. Everything is kept in the project; "
                               "open InteractEval again to carry on.", self.main_window.show_home)
        body = QWidget()
        column = QVBoxLayout(body)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.state_alert)
        column.addWidget(self.stack, 1)
        frame_layout(self, steps, body, nav)

    # ================================================================== helpers
    @property
    def who(self) -> str:
        return (getattr(self.main_window.settings, "user_name", "") or "").strip() or \
            "unnamed person"

    @property
    def dimension(self) -> Dimension | None:
        return self.state.dimension(self.state.current)

    def _save(self) -> None:
        st.save_state(self.project, self.state)

    def _profiles(self) -> list[Any]:
        return list(self.main_window.settings.profiles)

    def _profile(self, name: str) -> Any:
        settings = self.main_window.settings
        try:
            return settings.profile(name or None)
        except KeyError:
            return settings.profile() if settings.profiles else None

    def _llm(self, name: str, run_id: int | None = None) -> Any:
        profile = self._profile(name)
        if profile is None:
            raise RuntimeError("There is no model profile. Add one in Settings → Models.")
        return self.llm_factory(profile, self.project, run_id)

    def _builder_name(self) -> str:
        return self.state.builder or (self.state.assessors[0] if self.state.assessors else "")

    def _start(self, panel: RunPanel, step: Any, **kwargs: Any) -> Any:
        """:func:`desktop.runner.start_step`, remembering the task (see :meth:`retire`)."""
        task = start_step(panel, step, **kwargs)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: Any) -> None:
        self._tasks.discard(task)
        if self._retired and not self._tasks:
            self.deleteLater()

    def retire(self) -> None:
        """The project closed or another wizard replaces this one: stop what runs (finished
        work is kept in the project), then delete the page once every step has ended."""
        self._retired = True
        self.main_window.stack.removeWidget(self)
        self.hide()
        for task in list(self._tasks):
            task.cancel()
        if not self._tasks:
            self.deleteLater()

    @Slot(object)
    def _project_changed(self, project: Any) -> None:
        if project is not self.project and not self._retired:
            self.retire()

    def _set_busy(self, what: str) -> None:
        self.busy = what
        self._update_nav()
        self._update_run_buttons()

    # ================================================================== page 1: dimensions
    def _dimensions_page(self) -> QWidget:
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
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("InteractEval: what should a good text do?"))
        layout.addWidget(intro_label(
            "List the qualities (<b>dimensions</b>) you want to score, each with a definition in "
            "plain words, for example “Coherence: the sentences follow on from one another”. "
            "EvalDesk will build a Yes/No checklist for each dimension from your own notes and "
            "from AI models thinking aloud, and then score every text with it. Double-click a "
            "cell to edit it. Not sure where to start? Use SummEval's four dimensions as a "
            "template, or try the sample set."))
        layout.addLayout(buttons)
        layout.addWidget(self.dimensions_view, 1)
        layout.addWidget(hint_label("Renaming a dimension later takes its notes, samples, build "
                               "steps and checklist along; the steps are then marked out of date."))
        return page

    def _fill_dimensions(self) -> None:
        self._filling = True
        try:
            self.dimensions_model.set_rows(
                [{"name": d.name, "definition": d.definition} for d in self.state.dimensions])
            self.dimensions_view.resizeRowsToContents()
            current = self.state.current
            self.dim_combo.clear()
            for d in self.state.dimensions:
                self.dim_combo.addItem(d.name)
            names = [d.name for d in self.state.dimensions]
            if current not in names:
                current = names[0] if names else ""
                self.state.current = current
            self.dim_combo.setCurrentIndex(names.index(current) if current else -1)
        finally:
            self._filling = False

    def _set_dimensions(self, dimensions: list[Dimension]) -> None:
        self.state.dimensions = dimensions
        self._save()
        self._fill_dimensions()
        self._update_nav()

    @Slot()
    def add_dimension(self, name: str = "", definition: str = "") -> None:
        names = {d.name for d in self.state.dimensions}
        name = name or "New dimension"
        base, n = name, 2
        while name in names:
            name, n = f"{base} {n}", n + 1
        self._set_dimensions([*self.state.dimensions, Dimension(name=name,
                                                                definition=definition)])
        row = len(self.state.dimensions) - 1
        self.dimensions_view.setCurrentIndex(self.dimensions_model.index(row, 0))

    @Slot()
    def remove_dimension(self) -> None:
        rows = {i.row() for i in self.dimensions_view.selectionModel().selectedIndexes()}
        if not rows and self.dimensions_view.currentIndex().isValid():
            rows = {self.dimensions_view.currentIndex().row()}
        self._set_dimensions([d for i, d in enumerate(self.state.dimensions) if i not in rows])

    @Slot()
    def use_template(self) -> None:
        have = {d.name.casefold() for d in self.state.dimensions}
        extra = [d for d in st.SUMMEVAL_DIMENSIONS if d.name.casefold() not in have]
        self._set_dimensions([*self.state.dimensions, *[d.model_copy() for d in extra]])

    @Slot(int, str)
    def _dimension_edited(self, row: int, key: str) -> None:
        if self._filling:
            return
        rows = self.dimensions_model.rows()
        old = self.state.dimensions[row]
        value = rows[row][key]
        if key == "name":
            names = [d.name for i, d in enumerate(self.state.dimensions) if i != row]
            if not value or value in names:
                self.nav_message.setText("Each dimension needs its own name.")
                self._fill_dimensions()
                return
            st.rename_dimension(self.project, self.state, old.name, value, self.who)  # saves
            self._fill_dimensions()
            self._update_nav()
            return
        dims = list(self.state.dimensions)
        dims[row] = old.model_copy(update={"definition": value})
        self._set_dimensions(dims)

    @Slot(int)
    def _dimension_chosen(self, index: int) -> None:
        if self._filling or index < 0:
            return
        self.state.current = self.dim_combo.itemText(index)
        self._save()
        self._refresh_page(self.page)

    # ================================================================== sample set
    @Slot()
    def load_sample_set(self) -> None:
        """Load the sample set: dimensions, rated samples, teachers' notes, texts to score."""
        import csv

        folder = st.sample_folder()
        with open(folder / "dimensions.csv", encoding="utf-8", newline="") as handle:
            dims = [Dimension(name=r["dimension"], definition=r["definition"])
                    for r in csv.DictReader(handle)]
        have = {d.name for d in self.state.dimensions}
        self.state.dimensions = [*self.state.dimensions,
                                 *[d for d in dims if d.name not in have]]
        from core.interacteval import read_notes

        for d in dims:
            notes_file = folder / f"notes_{d.name.lower()}.csv"
            if notes_file.is_file() and not self.state.notes.get(d.name):
                self.state.notes[d.name] = read_notes(notes_file).attributes
        self.state.current = dims[0].name
        self.state.texts = st.store_texts_file(self.project, st.TextsSetup(),
                                               folder / "texts.csv")
        self._save()
        self._fill_dimensions()
        self.import_samples(folder / "scored_samples.csv")
        self.main_window.status("Loaded the InteractEval sample set.")

    # ================================================================== page 2: samples
    def _samples_page(self) -> QWidget:
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
        self.samples_panel = RunPanel()
        self.samples_panel.hide()
        top = QHBoxLayout()
        top.addWidget(self.samples_file_button)
        top.addWidget(self.suggest_button)
        top.addWidget(self.samples_label, 1)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Sample texts the assessors look at"))
        layout.addWidget(intro_label(
            "Before thinking aloud, each AI assessor reads the definition and a few texts that "
            "people have already scored. The paper used <b>4 per dimension</b>, spread over the "
            "score range. Import a scored sheet: EvalDesk suggests 4 for the dimension chosen "
            "at the top right; tick or untick to change the choice. Samples are optional, but "
            "they help the models see what a good and a poor text look like."))
        layout.addLayout(top)
        layout.addWidget(self.samples_panel)
        layout.addWidget(self.samples_view, 1)
        layout.addWidget(self.samples_count)
        return page

    def ask_samples_path(self) -> str | None:
        """Ask for the scored sheet (tests replace this)."""
        path, _ = QFileDialog.getOpenFileName(
            self, "Choose the scored samples", str(Path.home()),
            "Spreadsheets (*.xlsx *.xls *.csv *.tsv);;All files (*)")
        return path or None

    @Slot()
    def _ask_samples(self) -> None:
        path = self.ask_samples_path()
        if path:
            self.import_samples(path)

    def import_samples(self, path: str | Path) -> Any:
        """Read the scored sheet for every dimension and suggest 4 samples each."""
        names = [d.name for d in self.state.dimensions]
        self.samples_panel.show()
        self._set_busy("samples")
        return self._start(self.samples_panel, partial(_read_samples_job, Path(path), names),
                          title=f"Reading {Path(path).name}",
                          on_done=partial(self._samples_read, Path(path)))

    def _samples_read(self, path: Path, outcome: RunOutcome) -> None:
        self._set_busy("")
        self.step_ended.emit("samples", outcome.status)
        if not outcome.finished:
            return
        samples, problems = outcome.result
        if not samples:
            self.samples_panel.fail("No samples could be read: " + " ".join(problems))
            return
        from core.interacteval import suggest_samples

        self.samples_panel.hide()
        self.state.samples = samples
        self.state.samples_file = path.name
        self.state.chosen = {}
        for d in self.state.dimensions:
            mine = [s for s in samples if s.dimension == d.name]
            picked = suggest_samples(mine)
            self.state.chosen[d.name] = [i for i, s in enumerate(samples)
                                         if s.dimension == d.name and any(s is p for p in picked)]
        self._save()
        self._samples_problems = problems
        self._fill_samples()

    @Slot()
    def suggest_again(self) -> None:
        from core.interacteval import suggest_samples

        name = self.state.current
        mine = [s for s in self.state.samples if s.dimension == name]
        picked = suggest_samples(mine)
        self.state.chosen[name] = [i for i, s in enumerate(self.state.samples)
                                   if s.dimension == name and any(s is p for p in picked)]
        self._save()
        self._fill_samples()

    def _fill_samples(self) -> None:
        name = self.state.current
        mine = [(i, s) for i, s in enumerate(self.state.samples) if s.dimension == name]
        self.samples_model.set_samples(mine, self.state.chosen.get(name, []))
        self.samples_view.resizeRowsToContents()
        if self.state.samples_file:
            problems = self._samples_problems
            self.samples_label.setText(
                f"{len(mine)} rated samples for {name} from {self.state.samples_file}"
                + (f" ({len(problems)} rows skipped: {problems[0]})" if problems else "."))
        self._count_samples()

    def _count_samples(self) -> None:
        n = len(self.state.chosen.get(self.state.current, []))
        note = "" if n == 4 else " (the paper used 4)"
        self.samples_count.setText(f"{n} sample(s) chosen for {self.state.current}{note}.")

    @Slot()
    def _samples_ticked(self) -> None:
        self.state.chosen[self.state.current] = self.samples_model.chosen()
        self._save()
        self._count_samples()

    # ================================================================== page 3: think-aloud
    def _think_aloud_page(self) -> QWidget:
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
        self.failures_label = QLabel()
        self.failures_label.setObjectName("errorText")
        self.failures_label.setWordWrap(True)
        self.failures_label.hide()
        models_box = QGroupBox("AI assessors")
        mb = QVBoxLayout(models_box)
        mb.addWidget(self.assessor_list)
        form = QFormLayout()
        form.addRow("Builds the checklist:", self.builder_combo)
        mb.addLayout(form)
        mb.addWidget(self.think_button)
        mb.addWidget(self.think_panel)
        mb.addWidget(self.failures_label)

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
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(6, 0, 0, 0)
        rv.addLayout(arow)
        rv.addWidget(self.attributes_view, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([430, 650])
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Think aloud: what matters when rating?"))
        layout.addWidget(intro_label(
            "AI models and people each say what they keep in mind when rating the dimension. "
            "The paper found that people are better at inner qualities (coherence, fluency) and "
            "models at matching the source (consistency, relevance), and that <b>both together "
            "work best</b>. Run one or more models from Settings, and type or import your own "
            "notes. The table on the right lists every attribute with whose it is."))
        layout.addWidget(split, 1)
        return page

    def _fill_think_aloud(self) -> None:
        self._filling = True
        try:
            profiles = self._profiles()
            names = [p.name for p in profiles]
            if not self.state.assessors and names:
                default = self.main_window.settings.default_profile
                self.state.assessors = [default if default in names else names[0]]
            self.assessor_list.clear()
            for p in profiles:
                item = QListWidgetItem(p.name)
                item.setToolTip(f"Model: {p.model}")
                item.setData(Qt.ItemDataRole.UserRole, p.name)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if p.name in self.state.assessors
                                   else Qt.CheckState.Unchecked)
                self.assessor_list.addItem(item)
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
        self._update_run_buttons()

    def _fill_attributes(self) -> None:
        name = self.state.current
        stored = st.get_stage(self.project, name, "think_aloud") if name else None
        models = stored.value.attributes if stored is not None else []
        notes = self.state.notes.get(name, [])
        rows = [{"text": a.text, "who": a.source or "unknown",
                 "kind": "model" if a.source_kind == "model" else "person",
                 "_origin": ("model", i)} for i, a in enumerate(models)]
        rows += [{"text": a.text, "who": a.source or "unknown", "kind": "person",
                  "_origin": ("note", i)} for i, a in enumerate(notes)]
        self.attributes_model.set_rows(rows)
        self.attributes_view.resizeRowsToContents()
        self.attributes_label.setText(
            f"<b>{len(rows)} attributes for {name}</b>: {len(models)} from models, "
            f"{len(notes)} from people.")
        failures = stored.value.failures if stored is not None else []
        self.failures_label.setText("\n".join(f"{f.who} failed: {f.message}" for f in failures))
        self.failures_label.setVisible(bool(failures))

    @Slot()
    def _assessors_ticked(self, *_args: Any) -> None:
        if self._filling:
            return
        self.state.assessors = [
            self.assessor_list.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(self.assessor_list.count())
            if self.assessor_list.item(i).checkState() == Qt.CheckState.Checked]
        self._save()
        self._update_run_buttons()

    @Slot(int)
    def _builder_chosen(self, index: int) -> None:
        if self._filling or index < 0:
            return
        self.state.builder = self.builder_combo.itemText(index)
        self._save()

    @Slot()
    def run_think_aloud(self) -> Any:
        """Ask every ticked model to think aloud about the current dimension."""
        dim = self.dimension
        if dim is None or not self.state.assessors or self.busy:
            return None
        assessors = {name: self._llm(name) for name in self.state.assessors}

        async def job(progress, cancel):
            return await st.run_think_aloud(self.project, self.state, dim.name, assessors,
                                            progress=progress, cancel=cancel)

        self.think_panel.show()
        self._set_busy("think_aloud")
        return self._start(self.think_panel, job, title=f"Think-aloud on {dim.name}",
                          on_done=self._think_done)

    def _think_done(self, outcome: RunOutcome) -> None:
        self._set_busy("")
        self._fill_attributes()
        self.step_ended.emit("think_aloud", outcome.status)

    def add_notes(self, attributes: list[Attribute]) -> None:
        name = self.state.current
        if not name or not attributes:
            return
        self.state.notes[name] = [*self.state.notes.get(name, []), *attributes]
        self._save()
        self._fill_attributes()

    @Slot()
    def add_typed_notes(self) -> None:
        from core.interacteval import parse_notes

        notes = parse_notes(self.notes_edit.toPlainText(), self.author_edit.text() or self.who)
        if not notes:
            self.notes_message.setText("Type at least one note (one per line) first.")
            return
        self.add_notes(notes)
        self.notes_edit.clear()
        self.notes_message.setText(f"Added {len(notes)} note(s) by {notes[0].source}.")

    def ask_notes_path(self) -> str | None:
        """Ask for a notes file (tests replace this)."""
        path, _ = QFileDialog.getOpenFileName(
            self, "Import think-aloud notes", str(Path.home()),
            "Notes (*.txt *.md *.xlsx *.xls *.csv);;All files (*)")
        return path or None

    @Slot()
    def _ask_notes(self) -> None:
        path = self.ask_notes_path()
        if path:
            self.import_notes(path)

    def import_notes(self, path: str | Path) -> None:
        from core.interacteval import read_notes

        got = read_notes(path)
        if got.errors:
            self.notes_message.setText(" ".join(got.errors))
            return
        self.add_notes(got.attributes)
        authors = sorted({a.source for a in got.attributes})
        extra = f" {len(got.problems)} row(s) skipped." if got.problems else ""
        self.notes_message.setText(f"Imported {len(got.attributes)} note(s) by "
                                   f"{', '.join(authors)} from {Path(path).name}.{extra}")

    @Slot()
    def remove_selected_attributes(self) -> None:
        name = self.state.current
        rows = self.attributes_model.rows()
        picked = {i.row() for i in self.attributes_view.selectionModel().selectedRows()}
        if not picked:
            return
        drop_models = {rows[r]["_origin"][1] for r in picked if rows[r]["_origin"][0] == "model"}
        drop_notes = {rows[r]["_origin"][1] for r in picked if rows[r]["_origin"][0] == "note"}
        if drop_notes:
            self.state.notes[name] = [a for i, a in enumerate(self.state.notes.get(name, []))
                                      if i not in drop_notes]
            self._save()
        stored = st.get_stage(self.project, name, "think_aloud")
        if drop_models and stored is not None:
            kept = [a for i, a in enumerate(stored.value.attributes) if i not in drop_models]
            st.edit_stage(self.project, name, "think_aloud",
                          stored.value.model_copy(update={"attributes": kept}), who=self.who)
        self._fill_attributes()

    # ================================================================== page 4: build
    def _build_page(self) -> QWidget:
        self.build_list = QListWidget()
        self.build_list.setMaximumWidth(250)
        for _key, title, _what in BUILD_STEPS:
            self.build_list.addItem(QListWidgetItem(title))
        self.build_list.currentRowChanged.connect(self._build_step_chosen)
        self.build_stack = QStackedWidget()
        self.build_status: dict[str, QLabel] = {}
        self.build_run_buttons: dict[str, QPushButton] = {}

        self.components_edit = QPlainTextEdit()
        self.components_edit.setPlaceholderText("One component per line")
        self.components_edit.textChanged.connect(self._components_typed)

        self.clusters_model = RowsModel([
            RowColumn("text", "Attribute"), RowColumn("who", "Whose"),
            RowColumn("component", "Component", True,
                      "Double-click to put the attribute under another component."),
        ], self)
        self.clusters_model.edited.connect(self._clusters_edited)
        self.clusters_view = row_table(self.clusters_model, stretch=0)
        self.clusters_view.setItemDelegateForColumn(
            2, ChoiceDelegate(self.clusters_model, "component", self.clusters_view))

        self.keys_model = RowsModel([
            RowColumn("component", "Component"),
            RowColumn("question", "Key question", True),
        ], self)
        self.keys_model.edited.connect(self._keys_edited)
        self.keys_view = row_table(self.keys_model, stretch=1)

        self.subs_model = RowsModel([
            RowColumn("component", "Component"),
            RowColumn("question", "Sub-question", True),
        ], self)
        self.subs_model.edited.connect(self._subs_edited)
        self.subs_view = row_table(self.subs_model, stretch=1)

        self.validate_check = QCheckBox("Let the model review the questions (the paper's "
                                        "validation step)")
        self.validate_check.toggled.connect(self._validate_toggled)
        self.checklist_summary = QLabel()
        self.checklist_summary.setWordWrap(True)
        self.checklist_summary.setTextFormat(Qt.TextFormat.RichText)
        review = QWidget()
        rv = QVBoxLayout(review)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addWidget(self.validate_check)
        rv.addWidget(self.checklist_summary)
        rv.addStretch(1)

        editors = {"components": self.components_edit, "clusters": self.clusters_view,
                   "key_questions": self.keys_view, "sub_questions": self.subs_view,
                   "checklist": review}
        for key, title, what in BUILD_STEPS:
            page = QWidget()
            pv = QVBoxLayout(page)
            pv.setContentsMargins(8, 0, 0, 0)
            header = QLabel(f"<b>{title}</b>")
            status = QLabel()
            status.setWordWrap(True)
            status.setTextFormat(Qt.TextFormat.RichText)
            self.build_status[key] = status
            run = QPushButton("Run this step")
            run.clicked.connect(partial(self.run_stage, key))
            self.build_run_buttons[key] = run
            row = QHBoxLayout()
            row.addWidget(header)
            row.addStretch(1)
            row.addWidget(run)
            pv.addLayout(row)
            pv.addWidget(hint_label(what))
            pv.addWidget(status)
            pv.addWidget(editors[key], 1)
            self.build_stack.addWidget(page)

        self.run_rest_button = QPushButton("Run all remaining steps")
        self.run_rest_button.setObjectName("primaryButton")
        self.run_rest_button.setToolTip("Run every step that has not run yet or is out of "
                                        "date, one after the other (your edits to earlier "
                                        "steps are used).")
        self.run_rest_button.clicked.connect(self.run_remaining)
        self.build_panel = RunPanel()
        self.build_panel.hide()
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.build_list, 1)
        lv.addWidget(self.run_rest_button)
        body = QHBoxLayout()
        body.addWidget(left)
        body.addWidget(self.build_stack, 1)
        self.build_note = hint_label()
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Build the checklist, step by step"))
        layout.addWidget(intro_label(
            "The model turns the attributes into a checklist in five steps. Each result is "
            "shown here and <b>you can change it before the next step runs</b>: the next step "
            "reads your version. A step whose input changed since it ran is marked “out of "
            "date”. Run one step at a time, or all remaining steps at once."))
        layout.addWidget(self.build_note)
        layout.addLayout(body, 1)
        layout.addWidget(self.build_panel)
        return page

    def _stage_status(self, key: str) -> tuple[str, bool]:
        """(plain status text, done and current)."""
        name = self.state.current
        if key == "checklist":
            checklist = st.load_checklist(self.project, name)
            if checklist is None:
                return "Not run yet.", False
            current = self.state.checklist_inputs.get(name) == st.stage_input(
                self.project, self.state, name, "checklist")
            artefact = self.project.get_artefact(st.CHECKLIST_ARTEFACT, name)
            made = "imported" if artefact and artefact.origin == "imported" else "made"
            edited = " and edited in the checklist editor" if artefact and artefact.edited else ""
            text = f"{len(checklist.items)} questions ({made}{edited})."
            if not current and made != "imported":
                return ("<span style='color:#b45309'>Out of date: the sub-questions changed "
                        "since. Run again to use them (this replaces the checklist).</span> "
                        + text), False
            return text, True
        stored = st.get_stage(self.project, name, key)
        if stored is None:
            return "Not run yet.", False
        current = stored.input == st.stage_input(self.project, self.state, name, key)
        who = f"edited by {stored.edited_by}" if stored.edited else "as the model made it"
        if not current and not (stored.edited and not stored.input):
            return ("<span style='color:#b45309'>Out of date: the step before changed since "
                    f"this was made ({who}). Run again to use the change.</span>"), False
        return f"Done ({who}).", True

    def _fill_build(self) -> None:
        name = self.state.current
        self._filling = True
        try:
            attributes = st.attributes_of(self.project, self.state, name) if name else []
            self.build_note.setText(
                f"{len(attributes)} think-aloud attributes for {name}; the model that builds "
                f"is “{self._builder_name() or 'the default profile'}”." if name else
                "Add a dimension first.")
            comps = st.get_stage(self.project, name, "components")
            text = "\n".join(comps.value) if comps else ""
            if self.components_edit.toPlainText() != text:
                self.components_edit.setPlainText(text)
            clusters = st.get_stage(self.project, name, "clusters")
            rows = []
            if clusters is not None:
                for cluster in clusters.value.clusters:
                    rows += [{"text": a.text, "who": a.source, "component": cluster.component,
                              "_attribute": a} for a in cluster.attributes]
                rows += [{"text": a.text, "who": a.source, "component": LEFT_OUT,
                          "_attribute": a} for a in clusters.value.left_out]
                self.clusters_model.set_choices(
                    "component", [c.component for c in clusters.value.clusters] + [LEFT_OUT])
            self.clusters_model.set_rows(rows)
            keys = st.get_stage(self.project, name, "key_questions")
            self.keys_model.set_rows([{"component": k.component, "question": k.question}
                                      for k in (keys.value if keys else [])])
            subs = st.get_stage(self.project, name, "sub_questions")
            self.subs_model.set_rows([{"component": g.component, "question": q, "_group": gi}
                                      for gi, g in enumerate(subs.value if subs else [])
                                      for q in g.sub_questions])
            for view in (self.clusters_view, self.keys_view, self.subs_view):
                view.resizeRowsToContents()
            self.validate_check.setChecked(self.state.validate_questions)
            checklist = st.load_checklist(self.project, name)
            if checklist is not None:
                remarks = "".join(f"<br>• {r}" for r in checklist.remarks)
                self.checklist_summary.setText(
                    f"The checklist of {name} has <b>{len(checklist.items)} questions</b> under "
                    f"{len(checklist.components)} components. Edit it on the next page "
                    f"(Checklist).{remarks}")
            else:
                self.checklist_summary.setText("No checklist yet.")
        finally:
            self._filling = False
        for i, (key, title, _what) in enumerate(BUILD_STEPS):
            status, done = self._stage_status(key)
            self.build_status[key].setText(status)
            item = self.build_list.item(i)
            item.setText(f"{title}  {'✓' if done else ('…' if 'Out of date' in status else '')}")
        if self.build_list.currentRow() < 0:
            self.build_list.setCurrentRow(0)
        self._update_run_buttons()

    @Slot(int)
    def _build_step_chosen(self, row: int) -> None:
        if row >= 0:
            self.build_stack.setCurrentIndex(row)

    def show_build_step(self, key: str) -> None:
        self.build_list.setCurrentRow([k for k, _t, _w in BUILD_STEPS].index(key))

    # -- edits between steps (stored with who and when) ----------------------------------------
    @Slot()
    def _components_typed(self) -> None:
        if not self._filling:
            self._components_timer.start()

    @Slot()
    def _save_components(self) -> None:
        name = self.state.current
        lines = [" ".join(line.split()) for line in self.components_edit.toPlainText()
                 .splitlines()]
        components = list(dict.fromkeys(line for line in lines if line))
        stored = st.get_stage(self.project, name, "components")
        if stored is not None and stored.value == components:
            return
        st.edit_stage(self.project, name, "components", components, who=self.who)
        self._refresh_build_status()

    def flush_edits(self) -> None:
        """Store a pending edit now (before a step runs, or when the page changes)."""
        if self._components_timer.isActive():
            self._components_timer.stop()
            self._save_components()

    def _refresh_build_status(self) -> None:
        for i, (key, title, _w) in enumerate(BUILD_STEPS):
            status, done = self._stage_status(key)
            self.build_status[key].setText(status)
            self.build_list.item(i).setText(
                f"{title}  {'✓' if done else ('…' if 'Out of date' in status else '')}")

    @Slot(int, str)
    def _clusters_edited(self, _row: int, _key: str) -> None:
        name = self.state.current
        stored = st.get_stage(self.project, name, "clusters")
        if stored is None or self._filling:
            return
        rows = self.clusters_model.rows()
        clusters = [AttributeCluster(component=c.component) for c in stored.value.clusters]
        left_out = []
        for r in rows:
            target = next((c for c in clusters if c.component == r["component"]), None)
            (target.attributes if target is not None else left_out).append(r["_attribute"])
        value = stored.value.model_copy(update={"clusters": clusters, "left_out": left_out})
        st.edit_stage(self.project, name, "clusters", value, who=self.who)
        self._refresh_build_status()

    @Slot(int, str)
    def _keys_edited(self, row: int, _key: str) -> None:
        name = self.state.current
        stored = st.get_stage(self.project, name, "key_questions")
        if stored is None or self._filling:
            return
        rows = self.keys_model.rows()
        value = [k.model_copy(update={"question": rows[i]["question"] or k.question})
                 for i, k in enumerate(stored.value)]
        st.edit_stage(self.project, name, "key_questions", value, who=self.who)
        self._refresh_build_status()

    @Slot(int, str)
    def _subs_edited(self, _row: int, _key: str) -> None:
        name = self.state.current
        stored = st.get_stage(self.project, name, "sub_questions")
        if stored is None or self._filling:
            return
        groups = [g.model_copy(update={"sub_questions": []}) for g in stored.value]
        for r in self.subs_model.rows():
            if r["question"].strip():
                groups[r["_group"]].sub_questions.append(r["question"])
        st.edit_stage(self.project, name, "sub_questions", groups, who=self.who)
        self._refresh_build_status()

    @Slot(bool)
    def _validate_toggled(self, checked: bool) -> None:
        if self._filling:
            return
        self.state.validate_questions = checked
        self._save()
        self._refresh_build_status()

    # -- running steps ---------------------------------------------------------------------------
    def _stage_is_current(self, key: str) -> bool:
        return self._stage_status(key)[1]

    @Slot()
    def run_stage(self, key: str) -> Any:
        """Run one construction step for the current dimension."""
        return self._run_stages([key])

    @Slot()
    def run_remaining(self) -> Any:
        """Run every step from the first missing or out-of-date one to the end."""
        keys = [k for k, _t, _w in BUILD_STEPS]
        first = next((i for i, k in enumerate(keys) if not self._stage_is_current(k)), None)
        if first is None:
            self.build_panel.show()
            self.build_panel.finish("Every step is done and up to date.")
            return None
        return self._run_stages(keys[first:])

    def _run_stages(self, keys: list[str]) -> Any:
        dim = self.dimension
        if dim is None or self.busy:
            return None
        self.flush_edits()
        llm = self._llm(self._builder_name())

        async def job(progress, cancel):
            return await st.run_build_steps(self.project, self.state, dim.name, keys, llm,
                                            progress=progress, cancel=cancel)

        titles = {k: t for k, t, _w in BUILD_STEPS}
        title = (f"{titles[keys[0]]} for {dim.name}" if len(keys) == 1 else
                 f"Steps {titles[keys[0]].split('.')[0]} to 5 for {dim.name}")
        self.build_panel.show()
        self._set_busy("build")
        return self._start(self.build_panel, job, title=title,
                          on_done=partial(self._stages_done, keys))

    def _stages_done(self, keys: list[str], outcome: RunOutcome) -> None:
        self._set_busy("")
        self._fill_build()
        done = [k for k in keys if self._stage_is_current(k)]
        if done:
            self.show_build_step(done[-1])
        self.step_ended.emit("build", outcome.status)

    # ================================================================== page 5: checklist
    def _checklist_page(self) -> QWidget:
        self.editor = ChecklistEditor()
        self.editor.import_requested.connect(self._ask_import_checklists)
        self.editor.export_requested.connect(self._ask_export_checklists)
        self.editor.saved.connect(lambda _c: self._update_nav())
        self.checklist_message = hint_label()
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Check and edit the checklist"))
        layout.addWidget(intro_label(
            "These Yes/No questions will be asked about every text; “Yes” is always the good "
            "answer. Components are headings (their key question is not asked). Double-click "
            "a question to change it, drag it to reorder or to move it under another "
            "component, or use the buttons. Select a question to see the think-aloud "
            "attributes it came from and whose they were. Every change is saved at once with "
            "your name (Settings → Your name)."))
        layout.addWidget(self.checklist_message)
        layout.addWidget(self.editor, 1)
        return page

    def _fill_checklist(self) -> None:
        name = self.state.current
        checklist = st.load_checklist(self.project, name) if name else None
        self.editor.set_checklist(self.project, checklist if checklist else None, self.who)
        if checklist is None:
            self.checklist_message.setText(
                f"There is no checklist for {name} yet: build it on the Build page, or import "
                "a checklist workbook." if name else "Add a dimension first.")
        else:
            people = sum(1 for i in checklist.items if i.edited_by)
            self.checklist_message.setText(
                f"{name}: {len(checklist.items)} questions under {len(checklist.components)} "
                f"components; {people} changed by people.")

    def ask_checklist_import_path(self) -> str | None:
        return self.editor.ask_import_path()

    def ask_checklist_export_path(self) -> str | None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export the checklists", str(Path.home() / "checklists.xlsx"),
            "Excel workbooks (*.xlsx)")
        return path or None

    @Slot()
    def _ask_import_checklists(self) -> None:
        path = self.ask_checklist_import_path()
        if path:
            self.import_checklists(path)

    def import_checklists(self, path: str | Path) -> list[str]:
        """Read a checklist workbook; its checklists replace those of the same dimensions
        (new dimensions are added). Returns the problems (empty when all went well)."""
        got = st.import_checklists(self.project, self.state, path)
        if got.errors:
            self.checklist_message.setText("The file cannot be used: " + " ".join(got.errors))
            return got.errors
        self._fill_dimensions()
        self._fill_checklist()
        note = (" Notes: " + " ".join(got.problems)) if got.problems else ""
        self.checklist_message.setText(
            f"Imported {len(got.checklists)} checklist(s) from {Path(path).name}.{note}")
        self._update_nav()
        return got.problems

    @Slot()
    def _ask_export_checklists(self) -> None:
        path = self.ask_checklist_export_path()
        if path:
            self.export_checklists(path)

    def export_checklists(self, path: str | Path) -> Any:
        """Write every checklist to a workbook (sheet ``Checklist``) in the executor."""
        target = xlsx_path(path)
        panel = self.results.export_panel if self.page == "results" else self.build_panel
        panel.show()
        return self._start(panel, _plain_step(st.export_checklists, self.project, self.state,
                                              target, who=self.who),
                          title=f"Exporting the checklists to {target.name}",
                          on_done=partial(self._exported, target, panel))

    def _exported(self, target: Path, panel: RunPanel, outcome: RunOutcome) -> None:
        self.step_ended.emit("export", outcome.status)
        if outcome.finished:
            panel.hide()
            self.main_window.status(f"Saved {target}")
            if self.page == "results":
                self.results.show_export(str(target))
            else:
                self.checklist_message.setText(f"Saved {target}")

    # ================================================================== page 6: score
    def _score_page(self) -> QWidget:
        self.texts_button = QPushButton("Choose the texts file…")
        self.texts_button.setObjectName("primaryButton")
        self.texts_button.clicked.connect(self._ask_texts)
        self.texts_label = QLabel("No texts file chosen yet.")
        self.texts_label.setWordWrap(True)
        self.sheet_combo = QComboBox()
        self.sheet_combo.setMinimumWidth(200)
        self.sheet_combo.currentIndexChanged.connect(self._texts_choice_changed)
        self.role_combos: dict[str, QComboBox] = {}
        columns_box = QGroupBox("Which column holds what")
        self.columns_form = QFormLayout(columns_box)
        self.columns_form.addRow("Sheet:", self.sheet_combo)
        for role, label in st.TEXT_ROLES.items():
            combo = QComboBox()
            combo.setMinimumWidth(200)
            combo.currentIndexChanged.connect(self._texts_choice_changed)
            self.role_combos[role] = combo
            self.columns_form.addRow(label + ":", combo)
        self.human_box = QGroupBox("Human scores (optional, for the agreement)")
        self.human_form = QFormLayout(self.human_box)
        self.human_combos: dict[str, QComboBox] = {}

        self.scorer_combo = QComboBox()
        self.scorer_combo.currentIndexChanged.connect(self._scoring_chosen)
        self.per_question_check = QCheckBox("Ask one question per call (more calls; the paper "
                                            "asked the whole checklist at once)")
        self.per_question_check.toggled.connect(self._scoring_chosen)
        self.legacy_check = QCheckBox("Legacy count (reproduces the authors' code: only “Yes” "
                                      "with a capital Y counts; for replication only)")
        self.legacy_check.toggled.connect(self._scoring_chosen)
        model_box = QGroupBox("Model and settings")
        mf = QFormLayout(model_box)
        mf.addRow("Model profile:", self.scorer_combo)
        mf.addRow(self.per_question_check)
        mf.addRow(self.legacy_check)

        self.texts_summary = QLabel()
        self.texts_summary.setWordWrap(True)
        self.texts_summary.setTextFormat(Qt.TextFormat.RichText)
        self.score_button = QPushButton("Score the texts")
        self.score_button.setObjectName("primaryButton")
        self.score_button.clicked.connect(self.start_scoring)
        self.score_panel = RunPanel()
        self.score_panel.hide()

        left = QVBoxLayout()
        left.addWidget(columns_box)
        left.addWidget(self.human_box)
        left.addStretch(1)
        right = QVBoxLayout()
        right.addWidget(model_box)
        right.addWidget(self.texts_summary)
        right.addStretch(1)
        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addLayout(right, 1)
        top = QHBoxLayout()
        top.addWidget(self.texts_button)
        top.addWidget(self.texts_label, 1)
        run_row = QHBoxLayout()
        run_row.addWidget(self.score_button)
        run_row.addStretch(1)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Score the texts"))
        layout.addWidget(intro_label(
            "Choose the spreadsheet with the texts to score and say which column holds what. "
            "The model answers every checklist question about every text; the score is "
            "1 + 4 × (yes answers / questions), from 1 to 5; a question left unanswered is "
            "asked again, and a text with a question still unanswered gets no score (it is "
            "shown as incomplete, and scoring again asks again). Each scored text is "
            "saved at once: Cancel any time, and scoring again continues where it stopped "
            "without asking the model twice. Human scores, if the sheet has them, are used "
            "only to show the agreement."))
        layout.addLayout(top)
        layout.addLayout(body, 1)
        layout.addLayout(run_row)
        layout.addWidget(self.score_panel)
        return page

    def ask_texts_path(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Choose the texts to score", str(Path.home()),
            "Spreadsheets (*.xlsx *.xls *.csv *.tsv);;All files (*)")
        return path or None

    @Slot()
    def _ask_texts(self) -> None:
        path = self.ask_texts_path()
        if path:
            self.choose_texts(path)

    def choose_texts(self, path: str | Path) -> Any:
        """Use ``path`` as the texts file (copied into the project) and read it."""
        self.state.texts = st.store_texts_file(self.project, st.TextsSetup(), path)
        self._save()
        return self.read_texts()

    def read_texts(self) -> Any:
        setup = self.state.texts
        path = st.texts_file(self.project, setup)
        if path is None:
            self.texts_label.setText("No texts file chosen yet.")
            return None
        names = [d.name for d in self.state.dimensions]
        self.score_panel.show()
        self._set_busy("texts")
        return self._start(self.score_panel, _plain_step(st.open_texts, path, setup,
                                                    names),
                          title=f"Reading {setup.file_name}", on_done=self._texts_read)

    def _texts_read(self, outcome: RunOutcome) -> None:
        self._set_busy("")
        if not outcome.finished:
            return
        opened: st.OpenedTexts = outcome.result
        self.opened_texts = opened
        self.state.texts = opened.setup
        self._save()
        if not opened.read.errors:
            self.score_panel.hide()
        self._fill_texts_widgets()
        self._show_texts_summary()
        self._update_nav()
        self.step_ended.emit("texts", outcome.status)

    def _fill_texts_widgets(self) -> None:
        opened = self.opened_texts
        setup = self.state.texts
        self._filling = True
        try:
            self.texts_label.setText(f"<b>{setup.file_name}</b>" if setup.file_name else
                                     "No texts file chosen yet.")
            self.sheet_combo.clear()
            for sheet in (opened.sheets if opened else []):
                self.sheet_combo.addItem(sheet)
            if setup.sheet:
                self.sheet_combo.setCurrentText(setup.sheet)
            columns = opened.columns if opened else []
            for role, combo in self.role_combos.items():
                combo.clear()
                combo.addItem("(none)" if role != "text" else "(choose)", None)
                for c in columns:
                    combo.addItem(c, c)
                combo.setCurrentIndex(max(0, combo.findData(setup.columns.get(role))))
            while self.human_form.rowCount():
                self.human_form.removeRow(0)
            self.human_combos = {}
            for d in self.state.dimensions:
                combo = QComboBox()
                combo.addItem("(no human scores)", None)
                for c in columns:
                    combo.addItem(c, c)
                combo.setCurrentIndex(max(0, combo.findData(setup.human.get(d.name))))
                combo.currentIndexChanged.connect(self._texts_choice_changed)
                self.human_combos[d.name] = combo
                self.human_form.addRow(f"{d.name}:", combo)
        finally:
            self._filling = False

    def _fill_scoring(self) -> None:
        self._filling = True
        try:
            self.scorer_combo.clear()
            names = [p.name for p in self._profiles()]
            for name in names:
                self.scorer_combo.addItem(name)
            # the profile scoring will use (the default one when none was chosen)
            used = self._profile(self.state.scorer or self._builder_name())
            chosen = used.name if used is not None else ""
            if chosen in names:
                self.scorer_combo.setCurrentIndex(names.index(chosen))
            self.per_question_check.setChecked(self.state.scoring.mode == "per_question")
            self.legacy_check.setChecked(self.state.scoring.counting == "legacy")
        finally:
            self._filling = False
        if self.opened_texts is None and self.state.texts.file_name and not self.busy:
            self.read_texts()
        else:
            self._fill_texts_widgets()
            self._show_texts_summary()

    @Slot()
    def _texts_choice_changed(self, *_args: Any) -> None:
        if self._filling or self.opened_texts is None:
            return
        sheet = self.sheet_combo.currentText() or None
        setup = self.state.texts
        if sheet != setup.sheet:
            self.state.texts = setup.model_copy(update={"sheet": sheet, "columns": {},
                                                        "human": {}})
            self._save()
            self.read_texts()
            return
        columns = {role: combo.currentData() for role, combo in self.role_combos.items()}
        human = {d: combo.currentData() for d, combo in self.human_combos.items()}
        self.state.texts = setup.model_copy(update={"columns": columns, "human": human})
        self._save()
        self.read_texts()

    @Slot()
    def _scoring_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        self.state.scorer = self.scorer_combo.currentText()
        self.state.scoring = self.state.scoring.model_copy(update={
            "mode": "per_question" if self.per_question_check.isChecked() else "checklist",
            "counting": "legacy" if self.legacy_check.isChecked() else "answers",
        })
        self._save()
        self._show_texts_summary()
        self._update_nav()

    def _show_texts_summary(self) -> None:
        checklists = st.all_checklists(self.project, self.state)
        missing = [d.name for d in self.state.dimensions
                   if d.name not in {c.dimension for c in checklists}]
        parts = []
        if self.opened_texts is not None:
            read = self.opened_texts.read
            if read.errors:
                parts.append("<span style='color:#b42318'><b>Cannot score yet:</b> "
                             + " ".join(read.errors) + "</span>")
            else:
                humans = [d for d, c in self.state.texts.human.items() if c]
                parts.append(f"<b>{len(read.items)} texts</b> from {read.describe}"
                             + (f", with human scores for {', '.join(humans)}" if humans else
                                "") + ".")
                if read.problems:
                    parts.append(f"{len(read.problems)} note(s): " + " ".join(read.problems[:3]))
        if checklists:
            n_q = sum(len(c.items) for c in checklists)
            calls = (len(self.opened_texts.read.items) if self.opened_texts else 0) * (
                len(checklists) if self.state.scoring.mode == "checklist" else n_q)
            parts.append(f"Checklists: {', '.join(f'{c.dimension} ({len(c.items)} questions)' for c in checklists)}; "
                         f"about {calls:,} model calls.")
        else:
            parts.append("<span style='color:#b42318'>There is no checklist yet: build one "
                         "first.</span>")
        if missing:
            parts.append(f"Not scored (no checklist): {', '.join(missing)}.")
        self.texts_summary.setText("<br>".join(parts))
        self._update_run_buttons()

    def _can_score(self) -> bool:
        return (not self.busy and self.opened_texts is not None
                and not self.opened_texts.read.errors and bool(self.opened_texts.read.items)
                and bool(st.all_checklists(self.project, self.state))
                and bool(self._profiles()))

    @Slot()
    def start_scoring(self) -> Any:
        """Score every text on every checklist; finished texts are kept as they finish."""
        if not self._can_score():
            return None
        items = list(self.opened_texts.read.items)
        profile = self._profile(self.state.scorer or self._builder_name())
        plan = st.plan_scoring(self.project, self.state, items, profile.model)
        self.run = None  # the earlier results are not this run's
        llm = self.llm_factory(profile, self.project, plan.run_id)

        async def job(progress, cancel):
            return await st.score_texts(plan.checklists, plan.items, llm,
                                        project=self.project, settings=plan.settings,
                                        model=plan.model, run_id=plan.run_id,
                                        samples=plan.samples, progress=progress, cancel=cancel)

        self.score_panel.show()
        self._set_busy("score")
        self.score_button.setText("Scoring…")
        return self._start(self.score_panel, job,
                          title=f"Scoring {len(items)} texts with {profile.name}",
                          on_done=self._scoring_done)

    def _scoring_done(self, outcome: RunOutcome) -> None:
        self._set_busy("")
        self.score_button.setText("Score the texts")
        self.step_ended.emit("score", outcome.status)
        if outcome.finished:
            self.show_run(outcome.result)
        else:
            self._update_nav()

    # ================================================================== page 7: results
    def _results_page(self) -> QWidget:
        self.results = ResultsView()
        self.results.export_requested.connect(self._ask_export_results)
        self.results.export_checklists_requested.connect(self._ask_export_checklists)
        self.results.include_samples_changed.connect(self.set_include_samples)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Results"))
        layout.addWidget(intro_label(
            "Every text's score on every dimension, and every Yes/No answer behind it: select "
            "a text to see them. The Distribution tab shows how the scores spread; the "
            "Agreement tab compares them with the human scores, if the texts had any. Export "
            "saves everything in one Excel workbook."))
        layout.addWidget(self.results, 1)
        return page

    def show_run(self, run: Any) -> None:
        """Show a scoring run (from a finished scoring or from the project), saying which run
        it is and whether it still matches the current choices, and compute the agreement in
        the executor."""
        self.run = run
        self.agreement = []
        self.results.set_run(run, lines=self._run_lines(run),
                             include_samples=self.state.include_samples,
                             out_of_date=self._out_of_date(run))
        self.show_page("results")
        self._compute_agreement()

    def _run_lines(self, run: Any) -> list[tuple[str, str]]:
        from core.interacteval.report import run_lines

        return run_lines(run, texts=st.run_texts_line(self.state),
                         include_samples=self.state.include_samples)

    def _current_model(self) -> str:
        profile = self._profile(self.state.scorer or self._builder_name())
        return profile.model if profile is not None else ""

    def _out_of_date(self, run: Any) -> list[str]:
        """Why ``run`` no longer matches the current choices (empty: it is current)."""
        if run is None:
            return []
        checklists = st.all_checklists(self.project, self.state)
        return st.results_out_of_date(self.project, self.state, run, checklists,
                                      self._current_model())

    def _compute_agreement(self) -> None:
        run = self.run
        if run is None or not any(s.human is not None for s in run.scores):
            return
        from core.interacteval import agreement_rows, human_agreement

        include = self.state.include_samples

        def compute(progress, cancel):
            progress.start("Correlating with the human scores", total=1)
            results = human_agreement(run.scores, include_samples=include)
            progress.advance(1)
            return results, agreement_rows(results)

        self.results.agreement_panel.show()
        self.results.agreement_label.setText("Computing the agreement…")
        self._start(self.results.agreement_panel, compute,
                    title="Computing the agreement", on_done=partial(self._agreement_done, run))

    @Slot(bool)
    def set_include_samples(self, include: bool) -> None:
        """Keep (or leave out) the think-aloud samples in the agreement, and compute it again."""
        if include == self.state.include_samples:
            return
        self.state.include_samples = include
        self._save()
        if self.run is not None:
            self.results.set_run_lines(self._run_lines(self.run))
            self._compute_agreement()

    def _agreement_done(self, run: Any, outcome: RunOutcome) -> None:
        self.step_ended.emit("agreement", outcome.status)
        if outcome.finished and run is self.run:
            self.agreement, rows = outcome.result
            self.results.agreement_panel.hide()
            self.results.set_agreement(rows)

    def ask_results_path(self) -> str | None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export the InteractEval results", str(Path.home() / "interacteval.xlsx"),
            "Excel workbooks (*.xlsx)")
        return path or None

    @Slot()
    def _ask_export_results(self) -> None:
        path = self.ask_results_path()
        if path:
            self.export_results(path)

    def export_results(self, path: str | Path) -> Any:
        """Write the results workbook (Scores, Answers, Checklists, Attributes, Agreement).
        Results that no longer match the current choices are not exported."""
        if self.run is None:
            return None
        reasons = self._out_of_date(self.run)
        if reasons:
            self.results.set_out_of_date(reasons)
            self.main_window.status("Not exported: the results are out of date.")
            return None
        target = xlsx_path(path)
        self.results.export_panel.show()
        return self._start(self.results.export_panel,
                          _plain_step(st.export_results, self.project, self.run, target,
                                      agreement=self.agreement or None, who=self.who,
                                      texts=st.run_texts_line(self.state),
                                      include_samples=self.state.include_samples),
                          title=f"Exporting to {target.name}",
                          on_done=partial(self._exported, target, self.results.export_panel))

    # ================================================================== navigation
    @property
    def page(self) -> str:
        return PAGES[self.stack.currentIndex()]

    def show_page(self, key: str) -> None:
        if self.busy and key != self.page and self.busy not in ("agreement",):
            self.nav_message.setText("Wait for the running step to end (or Cancel it).")
            return
        self.flush_edits()
        self.stack.setCurrentWidget(self.pages[key])
        for name, button in self.step_buttons.items():
            button.setStyleSheet("color:#2563a8; font-weight:600; border:none;" if name == key
                                 else "color:#5f6b7a; border:none;")
        show_dim = key in PER_DIMENSION
        self.dim_label.setVisible(show_dim)
        self.dim_combo.setVisible(show_dim)
        self._refresh_page(key)
        if self.state.page != key:
            self.state.page = key
            self._save()
        self._update_nav()
        self.page_changed.emit(key)

    def _refresh_page(self, key: str) -> None:
        if key == "dimensions":
            self._fill_dimensions()
        elif key == "samples":
            self._fill_samples()
        elif key == "think_aloud":
            self._fill_think_aloud()
        elif key == "build":
            self._fill_build()
        elif key == "checklist":
            self._fill_checklist()
        elif key == "score":
            self._fill_scoring()
        elif key == "results" and self.run is not None:
            self.results.set_run_lines(self._run_lines(self.run))
            self.results.set_out_of_date(self._out_of_date(self.run))

    def _update_run_buttons(self) -> None:
        idle = not self.busy
        has_dim = self.dimension is not None
        self.think_button.setEnabled(idle and has_dim and bool(self.state.assessors))
        for button in self.build_run_buttons.values():
            button.setEnabled(idle and has_dim)
        self.run_rest_button.setEnabled(idle and has_dim)
        self.score_button.setEnabled(self._can_score())
        self.texts_button.setEnabled(idle)
        self.samples_file_button.setEnabled(idle)

    def _update_nav(self) -> None:
        key = self.page
        self.back_button.setVisible(key != "dimensions")
        self.next_button.setVisible(key != "results")
        self.next_button.setText("Next")
        enabled, message = not self.busy, ""
        if key == "dimensions":
            if not self.state.dimensions:
                enabled, message = False, "Add at least one dimension to go on."
        elif key == "checklist":
            if not st.all_checklists(self.project, self.state):
                enabled, message = False, "Build or import a checklist to go on."
        elif key == "score":
            run = self._stored_run()
            reasons = self._out_of_date(run)
            enabled = enabled and run is not None and not reasons
            self.next_button.setText("Show results")
            self.next_button.setVisible(run is not None)
            if run is not None and reasons:
                message = ("The last results no longer match your choices (" + "; ".join(reasons)
                           + "): score the texts to see results for these choices.")
        self.next_button.setEnabled(enabled)
        if message or not self.nav_message.text().startswith("Wait"):
            self.nav_message.setText(message)
        for button in self.step_buttons.values():
            button.setEnabled(not self.busy)

    def _stored_run(self) -> Any:
        """The results of the last scoring run: the ones on screen, else those stored in the
        project (None when there are none, or their checklists are gone or changed)."""
        if self.run is not None and self.run.run_id == self.state.run_id:
            return self.run
        checklists = st.all_checklists(self.project, self.state)
        return st.load_run(self.project, self.state, checklists) if checklists else None

    @Slot()
    def go_next(self) -> None:
        if not self.next_button.isEnabled():
            return
        key = self.page
        if key == "score":
            run = self._stored_run()
            if run is not None and not self._out_of_date(run):
                self.show_run(run)
            return
        self.show_page(PAGES[PAGES.index(key) + 1])

    @Slot()
    def go_back(self) -> None:
        index = PAGES.index(self.page)
        if index > 0:
            self.show_page(PAGES[index - 1])

    def start(self) -> None:
        """Show the page the user was on; stored results open without recomputing."""
        self._fill_dimensions()
        page = self.state.page if self.state.page in PAGES else "dimensions"
        if page == "results":
            run = self._stored_run()
            if run is not None and not self._out_of_date(run):
                self.show_run(run)
                return
            page = "score"  # results that no longer match the choices are not shown
        self.show_page(page)


# ---------------------------------------------------------------------------------- jobs
def _plain_step(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A plain function as a runner step (run in the executor; one short unit of work)."""

    def step(progress: Any, cancel: Any) -> Any:
        progress.start("Working", total=1)
        result = fn(*args, **kwargs)
        progress.advance(1)
        return result

    return step


def _read_samples_job(path: Path, dimensions: list[str], progress: Any,
                      cancel: Any) -> tuple[list[ScoredSample], list[str]]:
    """Read the scored sheet once per dimension (each may have its own score column)."""
    from core.interacteval import read_samples

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


def open_wizard(main_window: Any, llm_factory: st.LLMFactory | None = None) -> InteractEvalWizard:
    """Show the InteractEval wizard for the open project (an untitled one if none is open)."""
    project = main_window.ensure_project(method="interacteval")
    for existing in main_window.findChildren(InteractEvalWizard):
        if existing.project is project and not project.closed:
            if llm_factory is not None:
                existing.llm_factory = llm_factory
            main_window.show_page(existing)
            return existing
        existing.retire()
    wizard = InteractEvalWizard(main_window, project, llm_factory)
    main_window.show_page(wizard)
    wizard.start()
    return wizard

