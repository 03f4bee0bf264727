"""The AQER wizard: answers file → columns → embedding model → run → results.

The widgets only collect choices and show outcomes; the work is in :mod:`core.aqer.session`
(reading, checking, running, storing, exporting), run through :mod:`desktop.runner` in the
loop's executor. Every choice is saved in the project as soon as it is made.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
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
    QMessageBox,
    QPushButton,
    QRadioButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.aqer.inputs import AI_MARKS, AnswersCheck, check_answers, guess_columns
from core.aqer.session import (
    EncoderFactory,
    OpenedAnswers,
    StoredResult,
    copy_template,
    export_result,
    load_result,
    open_answers,
    restore_setup,
    run_setup,
    sample_path,
    save_setup,
)
from core.tables import TableIssue
from desktop.aqer.models import ROLE_COLOURS, IssuesModel, PreviewModel
from desktop.aqer.results import ResultsView
from desktop.errors import spawn
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome, start_step
from desktop.views import table_view
from desktop.widgets import (
    frame_layout,
    hint_label,
    intro_label,
    navigation,
    note_box,
    step_labels,
    title_label,
    xlsx_path,
)

__all__ = ["PAGES", "AqerWizard", "open_wizard"]

log = logging.getLogger("evaldesk.aqer")

PAGES = ("file", "columns", "model", "run", "results")
PAGE_TITLES = {
    "file": "Answers file",
    "columns": "Columns",
    "model": "Embedding model",
    "run": "Run",
    "results": "Results",
}

TOLERANCES = [(1e-4, "0.0001 (quicker, a little less exact)"),
              (1e-6, "0.000001 (the paper's setting)"),
              (1e-8, "0.00000001 (stricter)")]

BLANK_CHOICES = [("auto", "Decide from the answers (recommended)"),
                 ("worst", "Count a blank as the weakest answer"),
                 ("missing", "Leave blanks out (they do not count)")]

DEVICES = [("auto", "Automatic (a graphics card when there is one)"),
           ("cpu", "Processor (CPU)"),
           ("cuda", "NVIDIA graphics card (CUDA)"),
           ("mps", "Apple graphics (MPS)")]


class AqerWizard(QWidget):
    """The AQER wizard page shown in the main window."""

    #: The current page changed (its key, one of :data:`PAGES`).
    page_changed = Signal(str)
    #: The columns were checked (the :class:`AnswersCheck`).
    checked = Signal(object)
    #: A run ended ("finished", "stopped" or "failed").
    run_ended = Signal(str)

    def __init__(self, main_window: Any, project: Any,
                 encoder_factory: EncoderFactory | None = None) -> None:
        super().__init__()
        self.setObjectName("aqerWizard")
        self.main_window = main_window
        self.project = project
        self.encoder_factory = encoder_factory
        self.setup, self.setup_problem = restore_setup(project)
        self.sheets: list[str] = []
        self.read: Any = None
        self.check: AnswersCheck | None = None
        self.checking = False
        self.reading = False
        self.running = False
        self.stored: StoredResult | None = None
        self.duplicate_box: QMessageBox | None = None
        self._check_generation = 0
        self._advance_after_check = False
        self._filling = False
        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(150)
        self._check_timer.timeout.connect(self._start_check)

        steps, self.step_labels = step_labels(PAGES, PAGE_TITLES)

        self.stack = QStackedWidget()
        self.pages: dict[str, QWidget] = {
            "file": self._file_page(),
            "columns": self._columns_page(),
            "model": self._model_page(),
            "run": self._run_page(),
            "results": self._results_page(),
        }
        for page in self.pages.values():
            self.stack.addWidget(page)

        nav = navigation(self, "Back to the home screen. Everything you chose is kept in the "
                               "project; open AQER again to carry on.", self._go_home,
                         message_name="errorText")
        frame_layout(self, steps, self.stack, nav, margin=12)
        self._restore_choices()
        self.show_page("file")

    # ================================================================== pages: building
    def _file_page(self) -> QWidget:
        self.choose_button = QPushButton("Choose a file…")
        self.choose_button.setObjectName("primaryButton")
        self.choose_button.setToolTip("An Excel workbook (.xlsx, .xls) or a CSV file.")
        self.choose_button.clicked.connect(self._ask_and_choose_file)
        self.sample_button = QPushButton("Try with sample data")
        self.sample_button.setToolTip(
            "Load a small made-up example: 8 people and 2 AIs answered 6 general-knowledge "
            "questions; a teacher graded every answer."
        )
        self.sample_button.clicked.connect(self.load_sample)
        self.template_button = QPushButton("Download template…")
        self.template_button.setToolTip(
            "Save an example workbook with both layouts and instructions, to fill in with "
            "your own answers."
        )
        self.template_button.clicked.connect(self._ask_and_save_template)
        buttons = QHBoxLayout()
        buttons.addWidget(self.choose_button)
        buttons.addWidget(self.sample_button)
        buttons.addWidget(self.template_button)
        buttons.addStretch(1)
        self.file_label = QLabel("No file chosen yet.")
        self.file_label.setWordWrap(True)
        self.file_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.file_note = note_box()
        self.file_note.hide()
        file_box = QGroupBox("Your answers")
        fb = QVBoxLayout(file_box)
        fb.addLayout(buttons)
        fb.addWidget(self.file_label)
        fb.addWidget(self.file_note)

        self.sheet_combo = QComboBox()
        self.sheet_combo.setMinimumWidth(240)
        self.sheet_combo.setToolTip("The sheet of the workbook that holds the answers.")
        self.sheet_combo.currentIndexChanged.connect(self._sheet_chosen)
        self.long_radio = QRadioButton(
            "Long: one row per answer, with a question column, a worker column and an "
            "answer column"
        )
        self.wide_radio = QRadioButton(
            "Wide: one row per question and a column per person (or one row per person and "
            "a column per question)"
        )
        self.format_group = QButtonGroup(self)
        self.format_group.addButton(self.long_radio)
        self.format_group.addButton(self.wide_radio)
        self.long_radio.toggled.connect(self._format_chosen)
        layout_box = QGroupBox("Sheet and layout")
        form = QFormLayout(layout_box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("Sheet:", self.sheet_combo)
        layout_col = QVBoxLayout()
        layout_col.addWidget(self.long_radio)
        layout_col.addWidget(hint_label(
            "For example:  question | worker | response  (and optionally grade, is_llm)"))
        layout_col.addWidget(self.wide_radio)
        layout_col.addWidget(hint_label(
            "For example:  question | Ana | Ben | Chloe | LLM A  — one answer in each cell"))
        form.addRow("Layout:", layout_col)

        self.file_panel = RunPanel()
        self.file_panel.hide()

        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("AQER: score answers without an answer key"))
        layout.addWidget(intro_label(
            "Choose the spreadsheet with your people's answers. Everyone should have answered "
            "the same questions; AI answers to those questions may be in the same sheet. "
            "EvalDesk keeps a copy of the file in the project, so the results can always be "
            "traced back to it. Check that the sheet and the layout below match your file, then "
            "press Next. No file yet? Try the sample data, or download the template."
        ))
        layout.addWidget(file_box)
        layout.addWidget(layout_box)
        layout.addWidget(self.file_panel)
        layout.addStretch(1)
        return page

    def _column_combo(self, role: str, optional: str = "") -> QComboBox:
        combo = QComboBox()
        combo.setMinimumWidth(220)
        combo.setProperty("role", role)
        combo.setProperty("optional", optional)
        combo.currentIndexChanged.connect(self._columns_chosen)
        return combo

    def _columns_page(self) -> QWidget:
        self.question_combo = self._column_combo("question_col")
        self.worker_combo = self._column_combo("worker_col")
        self.response_combo = self._column_combo("response_col")
        self.grade_combo = self._column_combo("grade_col", "(no grades)")
        self.long_form = QWidget()
        lf = QFormLayout(self.long_form)
        lf.setContentsMargins(0, 0, 0, 0)
        lf.addRow("Questions:", self.question_combo)
        lf.addRow("Worker names:", self.worker_combo)
        lf.addRow("Answers:", self.response_combo)
        lf.addRow("Expert grades (optional):", self.grade_combo)

        self.rows_combo = QComboBox()
        self.rows_combo.addItem("One question (a column per person)", "question")
        self.rows_combo.addItem("One person (a column per question)", "worker")
        self.rows_combo.currentIndexChanged.connect(self._columns_chosen)
        self.key_combo = self._column_combo("key")
        self.key_label = QLabel("Question column:")
        self.wide_form = QWidget()
        wf = QFormLayout(self.wide_form)
        wf.setContentsMargins(0, 0, 0, 0)
        wf.addRow("Each row holds:", self.rows_combo)
        wf.addRow(self.key_label, self.key_combo)

        roles_box = QGroupBox("Columns")
        rb = QVBoxLayout(roles_box)
        rb.addWidget(self.long_form)
        rb.addWidget(self.wide_form)
        roles_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        self.llm_list = QListWidget()
        self.llm_list.setMaximumHeight(96)
        self.llm_list.setToolTip("Tick what holds an AI's answers.")
        self.llm_list.itemChanged.connect(self._llm_ticked)
        self.llm_hint = hint_label("")
        llm_box = QGroupBox("AI answers (optional)")
        lb = QVBoxLayout(llm_box)
        lb.addWidget(self.llm_hint)
        lb.addWidget(self.llm_list, 1)
        llm_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        top = QHBoxLayout()
        top.addWidget(roles_box, 3)
        top.addWidget(llm_box, 2)

        self.blank_combo = QComboBox()
        for key, text in BLANK_CHOICES:
            self.blank_combo.addItem(text, key)
        self.blank_combo.setToolTip(
            "In a class test everyone gets every question, so a blank is a weak answer and must "
            "not help a worker. In crowdsourcing each worker gets a different subset, so a "
            "missing answer was never asked and should not count.")
        self.blank_combo.currentIndexChanged.connect(self._blank_chosen)
        self.blank_label = hint_label("")
        self.blank_label.setObjectName("blankRule")
        blank_row = QHBoxLayout()
        blank_row.addWidget(QLabel("Blank answers:"))
        blank_row.addWidget(self.blank_combo)
        blank_row.addWidget(self.blank_label, 1)

        self.preview_model = PreviewModel(self)
        self.preview_view = table_view(self.preview_model, sortable=False)
        self.preview_view.verticalHeader().setVisible(True)
        self.preview_view.horizontalHeader().setStretchLastSection(False)
        self.preview_title = QLabel("<b>Preview</b>")
        legend = "  ".join(
            f"<span style='background:{colour}'>&nbsp;{role}&nbsp;</span>"
            for role, colour in ROLE_COLOURS.items()
        )
        self.preview_legend = QLabel(legend)
        self.preview_legend.setTextFormat(Qt.TextFormat.RichText)
        preview = QWidget()
        pv = QVBoxLayout(preview)
        pv.setContentsMargins(0, 0, 0, 0)
        ph = QHBoxLayout()
        ph.addWidget(self.preview_title)
        ph.addStretch(1)
        ph.addWidget(self.preview_legend)
        pv.addLayout(ph)
        pv.addWidget(self.preview_view, 1)

        self.summary_label = QLabel()
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.issues_model = IssuesModel(self)
        self.issues_view = table_view(self.issues_model, sortable=False)
        self.issues_view.setWordWrap(True)
        self.issues_view.horizontalHeader().setSectionResizeMode(
            2, QHeaderView.ResizeMode.Stretch)
        self.issues_view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        issues = QWidget()
        iv = QVBoxLayout(issues)
        iv.setContentsMargins(0, 0, 0, 0)
        iv.addWidget(self.summary_label)
        iv.addWidget(self.issues_view, 1)

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(preview)
        split.addWidget(issues)
        split.setSizes([300, 200])

        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Which column holds what"))
        layout.addWidget(intro_label(
            "Tell EvalDesk which column holds the questions, the people's names and their "
            "answers. The preview shows the first rows of the sheet with each chosen column "
            "coloured. Below it, EvalDesk checks the whole sheet: problems marked "
            "<b>Must fix</b> stop you from going on; those marked <b>Check</b> are worth a look "
            "but do not."
        ))
        layout.addLayout(top)
        layout.addLayout(blank_row)
        layout.addWidget(split, 1)
        return page

    def _model_page(self) -> QWidget:
        self.bundled_radio = QRadioButton(
            "Built-in: all-MiniLM-L6-v2 (small and fast, English; comes with EvalDesk)")
        self.folder_radio = QRadioButton("A sentence-transformers model folder on this computer:")
        self.model_group = QButtonGroup(self)
        self.model_group.addButton(self.bundled_radio)
        self.model_group.addButton(self.folder_radio)
        self.folder_edit = QLineEdit()
        self.folder_edit.setPlaceholderText("for example …/all-mpnet-base-v2")
        self.folder_button = QPushButton("Browse…")
        self.folder_button.clicked.connect(self._browse_model)
        self.model_error = QLabel()
        self.model_error.setObjectName("errorText")
        self.model_error.setWordWrap(True)
        self.model_error.hide()
        self.bundled_radio.toggled.connect(self._model_chosen)
        self.folder_edit.editingFinished.connect(self._model_chosen)
        self.device_combo = QComboBox()
        for key, text in DEVICES:
            self.device_combo.addItem(text, key)
        self.device_combo.currentIndexChanged.connect(self._model_chosen)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder_edit, 1)
        folder_row.addWidget(self.folder_button)
        model_box = QGroupBox("Embedding model (turns each answer into numbers)")
        mb = QVBoxLayout(model_box)
        mb.addWidget(self.bundled_radio)
        mb.addWidget(self.folder_radio)
        mb.addLayout(folder_row)
        mb.addWidget(self.model_error)
        device_row = QFormLayout()
        device_row.addRow("Run it on:", self.device_combo)
        mb.addLayout(device_row)
        mb.addWidget(hint_label(
            "The paper used a larger model (stsb-roberta-large); a larger model usually judges "
            "meaning better but is slower. Embeddings are kept in the project per model, so "
            "changing the settings below never embeds the same answers twice."))

        self.rounds_spin = QSpinBox()
        self.rounds_spin.setRange(1, 100_000)
        self.rounds_spin.setToolTip("AQER stops after this many rounds even if the weights "
                                    "still change (the paper: 100).")
        self.rounds_spin.valueChanged.connect(self._settings_chosen)
        self.tolerance_combo = QComboBox()
        for value, text in TOLERANCES:
            self.tolerance_combo.addItem(text, value)
        self.tolerance_combo.currentIndexChanged.connect(self._settings_chosen)
        self.baselines_check = QCheckBox(
            "Also compute the baselines RASA, F1 and BLEU-1 (to compare AQER with)")
        self.baselines_check.toggled.connect(self._settings_chosen)
        self.llm_workers_check = QCheckBox(
            "Score AI answers as extra workers (they then shape the consensus too; paper "
            "section 7.4)")
        self.llm_workers_check.toggled.connect(self._settings_chosen)
        settings_box = QGroupBox("How AQER runs")
        sf = QFormLayout(settings_box)
        sf.addRow("At most this many rounds:", self.rounds_spin)
        sf.addRow("Stop when the weights change less than:", self.tolerance_combo)
        sf.addRow(self.baselines_check)
        sf.addRow(self.llm_workers_check)

        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Embedding model and settings"))
        layout.addWidget(intro_label(
            "AQER compares answers by meaning: an embedding model turns every answer into a "
            "list of numbers, and answers with similar meaning get similar numbers. Everything "
            "runs on this computer; nothing is sent anywhere. The defaults are the paper's and "
            "suit most uses."
        ))
        layout.addWidget(model_box)
        layout.addWidget(settings_box)
        layout.addStretch(1)
        return page

    def _run_page(self) -> QWidget:
        self.run_summary = QLabel()
        self.run_summary.setWordWrap(True)
        self.run_summary.setTextFormat(Qt.TextFormat.RichText)
        self.run_summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.run_button = QPushButton("Score the answers")
        self.run_button.setObjectName("primaryButton")
        self.run_button.clicked.connect(self.start_run)
        self.existing_label = QLabel()
        self.existing_label.setObjectName("okText")
        self.existing_label.setWordWrap(True)
        self.existing_label.hide()
        self.run_panel = RunPanel()
        row = QHBoxLayout()
        row.addWidget(self.run_button, 0)
        row.addWidget(self.existing_label, 1)
        row.addStretch(0)
        summary_box = QGroupBox("What will be scored")
        sb = QVBoxLayout(summary_box)
        sb.addWidget(self.run_summary)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Score the answers"))
        layout.addWidget(intro_label(
            "EvalDesk now embeds every answer, builds a consensus answer per question, and "
            "repeats scoring and re-weighting until the scores settle. You can Cancel at any "
            "time: embedded answers are kept in the project, so running again continues where "
            "it stopped. When it finishes, the results open by themselves."
        ))
        layout.addWidget(summary_box)
        layout.addLayout(row)
        layout.addWidget(self.run_panel)
        layout.addStretch(1)
        return page

    def _results_page(self) -> QWidget:
        self.results = ResultsView()
        self.results.export_requested.connect(self._ask_and_export)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(title_label("Results"))
        layout.addWidget(intro_label(
            "Each worker's score says how close their answers came to the consensus of "
            "everyone, with more trusted workers counting more. Check the Warnings tab for "
            "answers that were left out. Export saves every table in one Excel workbook."
        ))
        layout.addWidget(self.results, 1)
        return page

    # ================================================================== navigation
    @property
    def page(self) -> str:
        return PAGES[self.stack.currentIndex()]

    def show_page(self, key: str) -> None:
        self.stack.setCurrentWidget(self.pages[key])
        for name, label in self.step_labels.items():
            current = name == key
            label.setStyleSheet(
                "color:#2563a8; font-weight:600;" if current else "color:#5f6b7a;")
        if key == "columns":
            if self.read is None and self.setup.has_file and not self.reading:
                self.reload_file()
            self._schedule_check()
        elif key == "run":
            self._fill_run_page()
        self._update_nav()
        self.page_changed.emit(key)

    def _update_nav(self) -> None:
        key = self.page
        busy = self.reading or self.running
        self.back_button.setVisible(key != "file")
        self.back_button.setEnabled(not busy)
        self.next_button.setVisible(key != "results")
        message = ""
        enabled = False
        if key == "file":
            enabled = self.read is not None and not busy
            if not self.setup.has_file:
                message = ""
        elif key == "columns":
            if self.read is None:
                enabled = False
            elif self.checking or self.check is None:
                message = "Checking the answers…"
                enabled = False
            elif not self.check.ok:
                n = len(self.check.errors)
                message = (f"Fix the {n} problem{'s' if n != 1 else ''} marked “Must fix” "
                           "to go on.")
            else:
                enabled = True
        elif key == "model":
            enabled = not self.model_error.text()
        elif key == "run":
            enabled = self._current_result() is not None and not busy
            self.next_button.setVisible(enabled)
            self.next_button.setText("Show results")
        if key != "run":
            self.next_button.setText("Next")
        self.next_button.setEnabled(enabled)
        self.nav_message.setObjectName("hint" if self.checking else "errorText")
        self.nav_message.style().unpolish(self.nav_message)
        self.nav_message.style().polish(self.nav_message)
        self.nav_message.setText(message)

    @Slot()
    def go_next(self) -> None:
        if not self.next_button.isEnabled():
            return
        key = self.page
        if key == "columns" and self.check is not None and self.check.needs_duplicate_choice:
            self.ask_duplicates()
            return
        if key == "run":
            stored = self._current_result()
            if stored is not None:
                self.show_result(stored)
            return
        self.show_page(PAGES[PAGES.index(key) + 1])

    @Slot()
    def go_back(self) -> None:
        index = PAGES.index(self.page)
        if index > 0:
            self.show_page(PAGES[index - 1])

    @Slot()
    def _go_home(self) -> None:
        self.main_window.show_home()

    # ================================================================== restoring
    def start(self) -> None:
        """Show what the project holds: the stored result if it is current, else the inputs."""
        stored = load_result(self.project, self.setup) if self.setup.content_hash else None
        if stored is not None:
            self.show_result(stored)
            return
        if self.setup.has_file:
            self.show_page("file")
            self.reload_file(then="columns" if self._has_mapping() else None)
        else:
            self.show_page("file")

    def _has_mapping(self) -> bool:
        s = self.setup
        if s.format == "long":
            return bool(s.question_col and s.worker_col and s.response_col)
        return bool(s.question_col if s.wide_rows == "question" else s.worker_col)

    def _restore_choices(self) -> None:
        """Put the saved setup into the widgets (without saving it again)."""
        self._filling = True
        try:
            s = self.setup
            (self.long_radio if s.format == "long" else self.wide_radio).setChecked(True)
            (self.folder_radio if s.embedding_model else self.bundled_radio).setChecked(True)
            self.folder_edit.setText(s.embedding_model)
            self.device_combo.setCurrentIndex(
                max(0, self.device_combo.findData(s.device)))
            self.rounds_spin.setValue(s.settings.max_iterations)
            best = min(range(len(TOLERANCES)),
                       key=lambda i: abs(TOLERANCES[i][0] - s.settings.tolerance))
            if abs(TOLERANCES[best][0] - s.settings.tolerance) > 1e-15:
                self.tolerance_combo.addItem(f"{s.settings.tolerance:g}", s.settings.tolerance)
                best = self.tolerance_combo.count() - 1
            self.tolerance_combo.setCurrentIndex(best)
            self.baselines_check.setChecked(s.settings.baselines)
            self.blank_combo.setCurrentIndex(
                max(0, self.blank_combo.findData(s.settings.blank_answers)))
            self.llm_workers_check.setChecked(s.settings.llm_as_workers)
            self.rows_combo.setCurrentIndex(max(0, self.rows_combo.findData(s.wide_rows)))
            self._show_file_label()
        finally:
            self._filling = False
        self._update_model_widgets()

    def _save(self, **update: Any) -> None:
        """Change the setup and store it in the project at once."""
        self.setup = self.setup.model_copy(update=update)
        save_setup(self.project, self.setup)

    # ================================================================== page 1: file
    def ask_file_path(self) -> str | None:
        """Ask for the answers file (tests replace this)."""
        path, _ = QFileDialog.getOpenFileName(
            self, "Choose the answers", str(Path(self.setup.path).parent) if self.setup.path
            else str(Path.home()),
            "Spreadsheets (*.xlsx *.xlsm *.xls *.csv *.tsv *.txt);;All files (*)")
        return path or None

    def ask_template_path(self) -> str | None:
        """Ask where to save the template (tests replace this)."""
        path, _ = QFileDialog.getSaveFileName(
            self, "Save the AQER template", str(Path.home() / "aqer-template.xlsx"),
            "Excel workbooks (*.xlsx)")
        return path or None

    def ask_export_path(self) -> str | None:
        """Ask where to save the results workbook (tests replace this)."""
        base = (Path(self.setup.path).stem if self.setup.path else "answers") + "-aqer.xlsx"
        folder = Path(self.setup.path).parent if self.setup.path else Path.home()
        if not folder.is_dir() or str(folder).startswith(str(sample_path().parent)):
            folder = Path.home()
        path, _ = QFileDialog.getSaveFileName(
            self, "Export the AQER results", str(folder / base), "Excel workbooks (*.xlsx)")
        return path or None

    @Slot()
    def _ask_and_choose_file(self) -> None:
        path = self.ask_file_path()
        if path:
            self.choose_file(path)

    @Slot()
    def load_sample(self) -> None:
        """Load the sample answers shipped with EvalDesk."""
        self.choose_file(sample_path(), sample=True)

    def choose_file(self, path: str | Path, sample: bool = False) -> None:
        """Use ``path`` as the answers file: copy it into the project and read it."""
        if sample:
            self._save(format="long", sheet="Long", question_col=None, worker_col=None,
                       response_col=None, grade_col=None, llm_cols=[], llm_workers=[])
            self._filling = True
            self.long_radio.setChecked(True)
            self._filling = False
        self.read = None
        self.check = None
        self._read(path=Path(path), then=None)

    def reload_file(self, then: str | None = None) -> None:
        """Read the chosen file again (another sheet, or when the wizard reopens)."""
        self.read = None
        self.check = None
        self._read(path=None, then=then)

    def _read(self, path: Path | None, then: str | None) -> None:
        name = path.name if path is not None else (self.setup.file_name or "the answers")
        self.reading = True
        self.file_panel.show()
        self._update_nav()
        start_step(
            self.file_panel,
            partial(open_answers, self.project, self.setup, path),
            title=f"Reading {name}",
            on_done=partial(self._read_done, then=then),
        )

    def _read_done(self, outcome: RunOutcome, then: str | None = None) -> None:
        self.reading = False
        if not outcome.finished:
            self.read = None
            self._update_nav()
            return
        opened: OpenedAnswers = outcome.result
        self.setup = opened.setup
        self.sheets = opened.sheets
        self.read = opened.read
        self.file_panel.hide()
        self._guess_columns()
        save_setup(self.project, self.setup)
        self._filling = True
        try:
            self.sheet_combo.clear()
            self.sheet_combo.addItems(self.sheets)
            self.sheet_combo.setCurrentIndex(max(0, self.sheet_combo.findText(self.read.sheet)))
            self.sheet_combo.setEnabled(len(self.sheets) > 1)
        finally:
            self._filling = False
        self.file_note.setText(opened.note)
        self.file_note.setVisible(bool(opened.note))
        self._show_file_label()
        self._fill_columns_page()
        self._update_nav()
        if then:
            self.show_page(then)

    def _show_file_label(self) -> None:
        s = self.setup
        if not s.has_file:
            self.file_label.setText("No file chosen yet.")
            return
        text = f"<b>{s.file_name}</b><br><span style='color:#5f6b7a'>{s.path}</span>"
        if self.read is not None:
            text += (f"<br>{len(self.read.frame):,} rows and {len(self.read.frame.columns)} "
                     f"columns in {self.read.describe()}")
        self.file_label.setTextFormat(Qt.TextFormat.RichText)
        self.file_label.setText(text)

    @Slot(int)
    def _sheet_chosen(self, index: int) -> None:
        if self._filling or index < 0:
            return
        sheet = self.sheet_combo.itemText(index)
        if sheet and sheet != self.setup.sheet:
            self._save(sheet=sheet)
            self.reload_file()

    @Slot(bool)
    def _format_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        fmt = "long" if self.long_radio.isChecked() else "wide"
        if fmt != self.setup.format:
            self._save(format=fmt, llm_cols=[], llm_workers=[])
            self._guess_columns()
            save_setup(self.project, self.setup)
            self._fill_columns_page()

    @Slot()
    def _ask_and_save_template(self) -> None:
        path = self.ask_template_path()
        if path:
            self.save_template(path)

    def save_template(self, path: str | Path) -> Any:
        target = xlsx_path(path)
        self.file_panel.show()
        return start_step(
            self.file_panel, lambda progress, cancel: copy_template(target),
            title=f"Saving the template as {target.name}",
            on_done=lambda outcome: self._template_done(outcome, target),
        )

    def _template_done(self, outcome: RunOutcome, target: Path) -> None:
        if outcome.finished:
            self.file_panel.finish(f"Saved the template as {target}. Fill it in, then choose "
                                   "it with “Choose a file…”.")

    # ================================================================== page 2: columns
    def _guess_columns(self) -> None:
        """Suggest columns for roles that have none (or a column the sheet lacks)."""
        if self.read is not None:
            self.setup = guess_columns(self.setup, self.read.frame.columns)

    def _fill_columns_page(self) -> None:
        if self.read is None:
            return
        self._filling = True
        try:
            columns = [str(c) for c in self.read.frame.columns]
            letters = self.read.letters
            s = self.setup
            for combo, value in ((self.question_combo, s.question_col),
                                 (self.worker_combo, s.worker_col),
                                 (self.response_combo, s.response_col),
                                 (self.grade_combo, s.grade_col)):
                combo.clear()
                combo.addItem(combo.property("optional") or "(choose a column)", None)
                for c in columns:
                    combo.addItem(f"{letters.get(c, '')}: {c}", c)
                combo.setCurrentIndex(max(0, combo.findData(value)) if value else 0)
            wide = s.format == "wide"
            self.long_form.setVisible(not wide)
            self.wide_form.setVisible(wide)
            self.rows_combo.setCurrentIndex(max(0, self.rows_combo.findData(s.wide_rows)))
            key_value = s.question_col if s.wide_rows == "question" else s.worker_col
            self.key_combo.clear()
            self.key_combo.addItem("(choose a column)", None)
            for c in columns:
                self.key_combo.addItem(f"{letters.get(c, '')}: {c}", c)
            self.key_combo.setCurrentIndex(
                max(0, self.key_combo.findData(key_value)) if key_value else 0)
            self.key_label.setText(
                "Question column:" if s.wide_rows == "question" else "Worker column:")
            self.preview_model.set_table(self.read.frame, letters)
            self.preview_title.setText(
                f"<b>Preview</b> of {self.read.describe()} (first "
                f"{min(20, len(self.read.frame))} of {len(self.read.frame):,} rows)")
            self._fill_llm_list()
        finally:
            self._filling = False
        self._update_preview_roles()
        self.preview_view.resizeColumnsToContents()
        header = self.preview_view.horizontalHeader()
        for i in range(header.count()):
            header.resizeSection(i, min(max(header.sectionSize(i), 90), 260))
        self._schedule_check()

    def _fill_llm_list(self) -> None:
        s = self.setup
        self.llm_list.clear()
        if s.format == "long":
            used = {s.question_col, s.worker_col, s.response_col, s.grade_col}
            options = [str(c) for c in self.read.frame.columns
                       if c not in used and str(c).strip().casefold() not in AI_MARKS]
            chosen = set(s.llm_cols)
            self.llm_hint.setText(
                "Rows marked in a column called “is_llm” (yes/no) or naming a model in a "
                "column called “model” count as AI answers automatically. If an AI's answers "
                "are in their own column beside each question, tick that column:")
        elif s.wide_rows == "question":
            options = [str(c) for c in self.read.frame.columns if c != s.question_col]
            chosen = set(s.llm_cols)
            self.llm_hint.setText("Tick the columns that hold an AI's answers (not a person's):")
        else:
            key = s.worker_col
            names = []
            if key in self.read.frame.columns:
                names = [v.strip() for v in self.read.frame[key] if v.strip()]
            options = list(dict.fromkeys(names))
            chosen = set(s.llm_workers)
            self.llm_hint.setText("Tick the rows that hold an AI's answers (not a person's):")
        self.llm_list.setVisible(bool(options))
        if not options:
            self.llm_hint.setText(self.llm_hint.text().split(" If an AI")[0]
                                  + " No other column could hold AI answers.")
        for option in options:
            item = QListWidgetItem(option)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if option in chosen
                               else Qt.CheckState.Unchecked)
            self.llm_list.addItem(item)

    def _update_preview_roles(self) -> None:
        s = self.setup
        roles: dict[str, str] = {}
        if s.format == "long":
            for col, role in ((s.question_col, "questions"), (s.worker_col, "worker names"),
                              (s.response_col, "answers"), (s.grade_col, "expert grades")):
                if col:
                    roles[col] = role
            for col in s.llm_cols:
                roles[col] = "AI answers"
            if self.read is not None:
                for col in self.read.frame.columns:
                    if str(col).strip().casefold() in AI_MARKS and col not in roles:
                        roles[str(col)] = "AI marks"
        else:
            key = s.question_col if s.wide_rows == "question" else s.worker_col
            if key:
                roles[key] = "questions" if s.wide_rows == "question" else "worker names"
                if self.read is not None:
                    for c in self.read.frame.columns:
                        if c != key:
                            roles[str(c)] = ("AI answers" if c in s.llm_cols else "answers")
        self.preview_model.set_roles(roles)

    @Slot()
    def _columns_chosen(self, *_args: Any) -> None:
        if self._filling or self.read is None:
            return
        if self.setup.format == "long":
            self._save(
                question_col=self.question_combo.currentData(),
                worker_col=self.worker_combo.currentData(),
                response_col=self.response_combo.currentData(),
                grade_col=self.grade_combo.currentData(),
            )
        else:
            rows = self.rows_combo.currentData()
            key = self.key_combo.currentData()
            if rows != self.setup.wide_rows:
                self._save(wide_rows=rows, llm_cols=[], llm_workers=[],
                           question_col=None, worker_col=None)
                self._guess_columns()
                save_setup(self.project, self.setup)
                self._fill_columns_page()
                return
            if rows == "question":
                self._save(question_col=key)
            else:
                self._save(worker_col=key, llm_workers=[])
                self._filling = True
                self._fill_llm_list()
                self._filling = False
        self._update_preview_roles()
        self._schedule_check()

    @Slot(int)
    def _blank_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        settings = self.setup.settings.model_copy(
            update={"blank_answers": self.blank_combo.currentData()})
        self._save(settings=settings)
        self._schedule_check()

    @Slot(QListWidgetItem)
    def _llm_ticked(self, _item: QListWidgetItem) -> None:
        if self._filling:
            return
        ticked = [
            self.llm_list.item(i).text()
            for i in range(self.llm_list.count())
            if self.llm_list.item(i).checkState() == Qt.CheckState.Checked
        ]
        if self.setup.format == "wide" and self.setup.wide_rows == "worker":
            self._save(llm_workers=ticked)
        else:
            self._save(llm_cols=ticked)
        self._update_preview_roles()
        self._schedule_check()

    def _schedule_check(self) -> None:
        if self.read is None:
            return
        self.checking = True
        self._check_generation += 1
        self._update_nav()
        self._check_timer.start()

    @Slot()
    def _start_check(self) -> None:
        spawn(self._check(self._check_generation), where="checking the answers")

    async def _check(self, generation: int) -> None:
        read, setup = self.read, self.setup
        if read is None:
            return
        loop = asyncio.get_running_loop()
        try:
            check = await loop.run_in_executor(None, check_answers, read, setup)
        except Exception as exc:  # a bug, not the user's data: say so and keep going
            log.exception("Checking the answers failed")
            check = AnswersCheck(issues=[TableIssue(
                "error", f"EvalDesk could not check these columns ({type(exc).__name__}: "
                f"{exc}). Try other columns, or report the problem with the log file.")])
        if generation != self._check_generation:
            return  # the user changed something meanwhile; a newer check is coming
        self.check = check
        self.checking = False
        self._show_check(check)
        self._update_nav()
        self.checked.emit(check)
        if self._advance_after_check:
            self._advance_after_check = False
            if check.ok and not check.needs_duplicate_choice and self.page == "columns":
                self.show_page("model")

    def _show_check(self, check: AnswersCheck) -> None:
        rule = check.blank_rule
        self.blank_label.setText(rule.reason if rule is not None else "")
        self.issues_model.set_issues(check.issues)
        self.issues_view.resizeColumnToContents(0)
        self.issues_view.resizeColumnToContents(1)
        self.issues_view.resizeRowsToContents()
        parts = []
        if check.prepared is not None:
            parts.append(f"EvalDesk will read <b>{check.prepared.describe()}</b>.")
        if check.errors:
            parts.append(f"<span style='color:#b42318'><b>{len(check.errors)} problem(s) must "
                         "be fixed</b></span> (in the sheet, or by choosing other columns).")
        elif check.needs_duplicate_choice:
            parts.append(f"<span style='color:#8a5a00'><b>{check.duplicates} answer(s) repeat "
                         "a worker's answer to the same question</b>: you will be asked which "
                         "to keep when you press Next.</span>")
        if check.warnings:
            parts.append(f"{len(check.warnings)} note(s) to check; they do not stop the run.")
        if not check.issues and not check.needs_duplicate_choice:
            parts.append("<span style='color:#1d7a46'>No problems found.</span>")
        self.summary_label.setText(" ".join(parts))

    def ask_duplicates(self) -> QMessageBox:
        """Ask which of a worker's repeated answers to keep (non-blocking: open() + signal)."""
        check = self.check
        example = ""
        if check is not None and check.prepared is not None:
            for notice in check.prepared.notices:
                if notice.topic == "Duplicate answer":
                    example = notice.message.replace("; the first answer was kept and this one",
                                                     ": one of them is")
                    break
        n = check.duplicates if check is not None else 0
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Answers given twice",
            f"{n} answer(s) in the sheet repeat a worker's answer to the same question. AQER "
            "uses one answer per worker and question. Which one should count?",
            QMessageBox.StandardButton.NoButton,
            self,
        )
        if example:
            box.setInformativeText(f"For example: {example}\n\nThe answers left out are "
                                   "listed under Warnings.")
        self.keep_first_button = box.addButton("Keep the first answer",
                                               QMessageBox.ButtonRole.AcceptRole)
        self.keep_last_button = box.addButton("Keep the last answer",
                                              QMessageBox.ButtonRole.AcceptRole)
        self.keep_cancel_button = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(self.keep_cancel_button)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(self._duplicates_answered)
        self.duplicate_box = box
        box.open()
        return box

    @Slot(object)
    def _duplicates_answered(self, button: Any) -> None:
        self.duplicate_box = None
        if button is self.keep_first_button:
            choice = "first"
        elif button is self.keep_last_button:
            choice = "last"
        else:
            return
        self._save(duplicates=choice)
        self._advance_after_check = True
        self._schedule_check()

    # ================================================================== page 3: model
    @Slot()
    def _browse_model(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Choose a sentence-transformers model folder", self.folder_edit.text())
        if folder:
            self.folder_edit.setText(folder)
            self.folder_radio.setChecked(True)
            self._model_chosen()

    def _update_model_widgets(self) -> str:
        from core.embeddings import EmbeddingError, check_model_folder

        use_folder = self.folder_radio.isChecked()
        self.folder_edit.setEnabled(use_folder)
        self.folder_button.setEnabled(use_folder)
        problem = ""
        path = self.folder_edit.text().strip() if use_folder else ""
        if use_folder:
            if not path:
                problem = "Choose the model folder, or use the built-in model."
            else:
                try:
                    check_model_folder(path)
                except EmbeddingError as exc:
                    problem = str(exc)
        self.model_error.setText(problem)
        self.model_error.setVisible(bool(problem))
        return "" if problem else path

    @Slot()
    def _model_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        path = self._update_model_widgets()
        if not self.model_error.text():
            self._save(embedding_model=path, device=self.device_combo.currentData())
        self._update_nav()

    @Slot()
    def _settings_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        settings = self.setup.settings.model_copy(update={
            "max_iterations": self.rounds_spin.value(),
            "tolerance": float(self.tolerance_combo.currentData()),
            "baselines": self.baselines_check.isChecked(),
            "llm_as_workers": self.llm_workers_check.isChecked(),
        })
        self._save(settings=settings)

    # ================================================================== page 4: run
    def _current_result(self) -> StoredResult | None:
        """The stored result for exactly the current choices (None when it must be computed)."""
        if self.stored is not None and self._stored_fingerprint == self.setup.fingerprint():
            return self.stored
        stored = load_result(self.project, self.setup)
        if stored is not None:
            self.stored, self._stored_fingerprint = stored, self.setup.fingerprint()
        return stored

    _stored_fingerprint: dict[str, Any] | None = None

    def _fill_run_page(self) -> None:
        s = self.setup
        answers = (self.check.prepared.describe() if self.check is not None
                   and self.check.prepared is not None else "the answers")
        model = s.embedding_model or "the built-in all-MiniLM-L6-v2"
        device = {"auto": "automatic choice", "cpu": "the processor (CPU)",
                  "cuda": "the NVIDIA graphics card", "mps": "the Apple graphics"}[s.device]
        layout = "a row per answer" if s.format == "long" else f"a row per {s.wide_rows}"
        dup = {"first": "; repeated answers: the first counts",
               "last": "; repeated answers: the last counts"}.get(s.duplicates, "")
        rule = self.check.blank_rule if self.check is not None else None
        if rule is None:
            blank = {"worst": "count as the weakest answer (your choice)",
                     "missing": "do not count (your choice)"}.get(
                s.settings.blank_answers, "decided from the answers")
        else:
            blank = ("count as the weakest answer" if rule.rule == "worst"
                     else "do not count") + (" (your choice)" if rule.chosen else
                                             f" (the answers look {rule.design})")
        self.run_summary.setText(
            f"<b>{answers}</b><br>"
            f"from {s.file_name}, sheet “{s.sheet}” ({layout}{dup})<br>"
            f"Embedding model: {model}, running on {device}<br>"
            f"At most {s.settings.max_iterations} rounds, stop below a change of "
            f"{s.settings.tolerance:g}; baselines "
            f"{'on' if s.settings.baselines else 'off'}; AI answers "
            f"{'scored as extra workers' if s.settings.llm_as_workers else 'scored against the workers'}"
            f"; blank answers {blank}."
        )
        stored = self._current_result()
        if stored is not None and not self.running:
            when = stored.finished_at.replace("T", " ")[:16] if stored.finished_at else ""
            self.existing_label.setText(
                f"Results for exactly these choices are already in the project"
                f"{' (computed ' + when + ' UTC)' if when else ''}. Press “Show results”, or "
                "score again.")
            self.existing_label.show()
            self.run_button.setText("Score again")
        else:
            self.existing_label.hide()
            self.run_button.setText("Score the answers")

    @Slot()
    def start_run(self) -> Any:
        """Run AQER on the current choices (in the executor); results open when it ends."""
        if self.running:
            return None
        self.running = True
        self.run_button.setEnabled(False)
        self.run_button.setText("Scoring…")
        self.existing_label.hide()
        self._update_nav()
        step = partial(run_setup, self.project, self.setup, self.encoder_factory)
        return start_step(self.run_panel, step, title="Scoring the answers with AQER",
                          on_done=self._run_done)

    def _run_done(self, outcome: RunOutcome) -> None:
        self.running = False
        self.run_button.setEnabled(True)
        self.run_button.setText("Score the answers")
        if outcome.finished:
            stored: StoredResult = outcome.result
            self.stored, self._stored_fingerprint = stored, self.setup.fingerprint()
            self.show_result(stored)
        else:
            self._fill_run_page()
            self._update_nav()
        self.run_ended.emit(outcome.status)

    # ================================================================== page 5: results
    def show_result(self, stored: StoredResult) -> None:
        self.stored, self._stored_fingerprint = stored, self.setup.fingerprint()
        self.results.set_result(stored)
        self.show_page("results")

    @Slot()
    def _ask_and_export(self) -> None:
        path = self.ask_export_path()
        if path:
            self.export(path)

    def export(self, path: str | Path) -> Any:
        """Write the results workbook to ``path`` (in the executor)."""
        if self.stored is None:
            return None
        target = xlsx_path(path)
        self.results.export_panel.show()
        self.results.export_message.hide()
        self.results.export_button.setEnabled(False)
        return start_step(self.results.export_panel, partial(export_result, self.stored, target),
                          title=f"Exporting to {target.name}",
                          on_done=lambda outcome: self._export_done(outcome, target))

    def _export_done(self, outcome: RunOutcome, target: Path) -> None:
        self.results.export_button.setEnabled(True)
        if outcome.finished:
            self.results.export_panel.hide()
            self.results.show_export(str(target))
            self.main_window.status(f"Saved {target}")


def open_wizard(main_window: Any, encoder_factory: EncoderFactory | None = None) -> AqerWizard:
    """Show the AQER wizard for the open project (creating an untitled project if none)."""
    project = main_window.ensure_project(method="aqer")
    for existing in main_window.findChildren(AqerWizard):
        if existing.project is project and not project.closed:
            if encoder_factory is not None:
                existing.encoder_factory = encoder_factory
            main_window.show_page(existing)
            return existing
        main_window.stack.removeWidget(existing)
        existing.deleteLater()
    wizard = AqerWizard(main_window, project, encoder_factory)
    main_window.show_page(wizard)
    wizard.start()
    return wizard

