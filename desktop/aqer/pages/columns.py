"""Step 2 of the AQER wizard: which column holds what, the AI answers, blank answers, and the
check of the whole sheet (run in the executor after each change)."""

from __future__ import annotations

import asyncio
import logging
import re
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QWidget,
)

from core.aqer.inputs import (
    AI_MARKS,
    BLANK_TOKENS,
    AnswersCheck,
    note_columns,
    numeric_columns,
)
from core.tables import TableIssue
from desktop.aqer.models import ROLE_COLOURS, IssuesModel, PreviewModel
from desktop.aqer.pages._base import AqerPage
from desktop.errors import spawn
from desktop.file_dialogs import ask_then
from desktop.views import table_view
from desktop.widgets import (
    group_box,
    hbox,
    hint_label,
    open_window,
    page_layout,
    pane,
    rich_label,
    splitter,
    tipped,
    wrapped_label,
)

if TYPE_CHECKING:  # pragma: no cover (the wizard imports the pages)
    from desktop.aqer.wizard import AqerWizard

__all__ = ["BLANK_CHOICES", "ColumnsPage"]

log = logging.getLogger("evaldesk.aqer")

#: The grades combo's item for a grades file of its own.
FILE = "\x00file"

BLANK_CHOICES = [("auto", "Decide from the answers (recommended)"),
                 ("worst", "Count a blank as the weakest answer"),
                 ("missing", "Leave blanks out (they do not count)")]


def _ticked(items: QListWidget) -> list[QListWidgetItem]:
    """The ticked items of a list of tick boxes, in order."""
    return [items.item(i) for i in range(items.count())
            if items.item(i).checkState() == Qt.CheckState.Checked]


def _short_rule(rule: Any) -> str:
    """The blank-answer rule in one line: "The answers look dense (29 of 30 workers answered
    at least half of the 10 questions): a blank counts as the weakest answer."."""
    what = ("a blank counts as the weakest answer" if rule.rule == "worst"
            else "a blank does not count")
    if rule.chosen:
        return f"Your choice: {what}. (The answers look {rule.design}.)"
    return f"The answers look {rule.design} ({rule.evidence.split(';')[0]}): {what}."


class ColumnsPage(AqerPage):
    """The roles of the columns, with a coloured preview and the issues of the whole sheet."""

    KEY, TITLE = "columns", "Columns"

    def __init__(self, wizard: AqerWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self._numeric: dict[str, tuple[int, int]] = {}
        self._notes: dict[str, str] = {}
        self._check_generation = 0
        self._advance_after_check = False
        self.duplicate_box: QMessageBox | None = None
        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(150)
        self._check_timer.timeout.connect(self._start_check)

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
        self.wide_grade_combo = self._column_combo("wide_grade", "(no grades)")
        self.wide_grade_combo.setToolTip(
            "A column with one grade per person (for example an average grade). It is compared "
            "with each person's AQER score; it is never scored as an answer.")
        self.wide_grade_label = QLabel("Expert grades (optional):")
        self.grades_sheet_combo = QComboBox()
        self.grades_sheet_combo.setToolTip(
            "Another sheet of this workbook with one grade per person: a column of names and a "
            "column of grades. Names are matched ignoring case and spaces; names that match no "
            "one are listed below.")
        self.grades_sheet_combo.currentIndexChanged.connect(self._grades_sheet_chosen)
        self.grades_sheet_label = QLabel("Or grades from:")
        self.grades_sheet_label.setToolTip(self.grades_sheet_combo.toolTip())
        self.grades_sheet_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.grades_file_button = QPushButton("Grades file…")
        self.grades_file_button.setToolTip(
            "A file of its own (.xlsx, .xls or .csv) with a column of names and a column of "
            "grades, one row per person. EvalDesk keeps a copy in the project.")
        self.grades_file_button.clicked.connect(self._ask_and_choose_grades_file)
        grades_row = QHBoxLayout()
        grades_row.setContentsMargins(0, 0, 0, 0)
        grades_row.addWidget(self.grades_sheet_combo, 1)
        grades_row.addWidget(self.grades_file_button)
        self.grades_row = QWidget()
        self.grades_row.setLayout(grades_row)
        self.wide_form = QWidget()
        wf = QFormLayout(self.wide_form)
        wf.setContentsMargins(0, 0, 0, 0)
        wf.addRow("Each row holds:", self.rows_combo)
        wf.addRow(self.key_label, self.key_combo)
        wf.addRow(self.wide_grade_label, self.wide_grade_combo)
        wf.addRow(self.grades_sheet_label, self.grades_row)

        roles_box = group_box("Columns", self.long_form, self.wide_form)
        roles_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        self.llm_list = QListWidget()
        self.llm_list.setMaximumHeight(96)
        self.llm_list.setToolTip("Tick what holds an AI's answers.")
        self.llm_list.itemChanged.connect(self._llm_ticked)
        self.llm_hint = hint_label("")
        llm_box = group_box("AI answers (optional)", self.llm_hint, (self.llm_list, 1))
        llm_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        self.ignore_list = QListWidget()
        self.ignore_list.setMaximumHeight(96)
        self.ignore_list.setToolTip(
            "Ticked columns are left out: they are not scored as answers. Columns that are "
            "mostly numbers start ticked (unless they are the expert grades).")
        self.ignore_list.itemChanged.connect(self._ignore_ticked)
        self.ignore_box = group_box("Leave out", hint_label("Tick the columns that hold no "
                                                           "answers:"), (self.ignore_list, 1))
        self.ignore_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        top = hbox((roles_box, 3), (llm_box, 2), (self.ignore_box, 2))
        self.guess_note = wrapped_label("", "guessNote")
        self.guess_note.hide()

        self.blank_combo = QComboBox()
        for key, text in BLANK_CHOICES:
            self.blank_combo.addItem(text, key)
        self.blank_combo.setToolTip(
            "In a class test everyone gets every question, so a blank is a weak answer and must "
            "not help a worker. In crowdsourcing each worker gets a different subset, so a "
            "missing answer was never asked and should not count.")
        self.blank_combo.currentIndexChanged.connect(self._blank_chosen)
        self.blank_label = wrapped_label("", "blankRule")
        blank_row = hbox("Blank answers:", self.blank_combo, (self.blank_label, 1))
        self.absent_box = QCheckBox()
        self.absent_box.setToolTip(
            "A person who left every question blank was probably absent. By default they are "
            "left out of the scores and listed, so they do not become the 0 of the 0-1 scale "
            "(which would move everyone else's score). Tick to score them as the weakest.")
        self.absent_box.toggled.connect(self._absent_chosen)
        self.absent_box.hide()
        self.blank_tokens_edit = tipped(QLineEdit(), (
            "Answers that mean the person did not answer, separated by commas. They count as "
            "blank answers (as an empty cell does), not as answers; case and spaces do not "
            "matter. The cells read as blank are listed below. EvalDesk's list: "
            + ", ".join(BLANK_TOKENS) + "."))
        self.blank_tokens_edit.setPlaceholderText("(only empty cells)")
        self.blank_tokens_edit.editingFinished.connect(self._blank_tokens_edited)
        tokens_hint = hint_label("(commas between)")
        tokens_hint.setToolTip("Remove a word that is a real answer in your sheet.")
        tokens_row = hbox("Also blank when the answer is:", (self.blank_tokens_edit, 1),
                          tokens_hint)

        self.preview_model = PreviewModel(self)
        self.preview_view = table_view(self.preview_model, sortable=False)
        self.preview_view.verticalHeader().setVisible(True)
        # one line per row (the cells are cut with "…"): more rows of the sheet in sight
        self.preview_view.verticalHeader().setDefaultSectionSize(
            self.preview_view.fontMetrics().height() + 8)
        self.preview_view.horizontalHeader().setStretchLastSection(False)
        self.preview_title = QLabel("<b>Preview</b>")
        legend = "  ".join(
            f"<span style='background:{colour}'>&nbsp;{role}&nbsp;</span>"
            for role, colour in ROLE_COLOURS.items()
        )
        self.preview_legend = QLabel(legend)
        self.preview_legend.setTextFormat(Qt.TextFormat.RichText)
        preview = pane(hbox(self.preview_title, 1, self.preview_legend), (self.preview_view, 1))

        self.summary_label = rich_label()
        self.issues_model = IssuesModel(self)
        self.issues_view = table_view(self.issues_model, sortable=False)
        self.issues_view.setWordWrap(True)
        self.issues_view.horizontalHeader().setSectionResizeMode(
            2, QHeaderView.ResizeMode.Stretch)
        self.issues_view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        issues = pane(self.summary_label, (self.issues_view, 1))
        # the preview first: at 1280x800 it shows 6 rows or more, the issues at least 2
        split = splitter(preview, issues, sizes=[280, 150], orientation=Qt.Orientation.Vertical,
                         stretch=[3, 1])

        page_layout(
            self, "Which column holds what",
            "Tell EvalDesk which column holds the questions, the people's names and their "
            "answers; EvalDesk's guess and why are said below. The preview shows the first rows of the sheet with each chosen column "
            "coloured. Below it, EvalDesk checks the whole sheet: problems marked "
            "<b>Must fix</b> stop you from going on; those marked <b>Check</b> are worth a look "
            "but do not.",
            self.guess_note, top, blank_row, self.absent_box, tokens_row, (split, 1))

    def _column_combo(self, role: str, optional: str = "") -> QComboBox:
        combo = QComboBox()
        combo.setMinimumWidth(220)
        combo.setProperty("role", role)
        combo.setProperty("optional", optional)
        combo.currentIndexChanged.connect(self._columns_chosen)
        return combo

    # ------------------------------------------------------------------ the page's protocol
    def restore(self) -> None:
        """Put the saved choices into the widgets (without saving them again)."""
        self._filling = True
        try:
            s = self.wizard.choices
            self.blank_combo.setCurrentIndex(
                max(0, self.blank_combo.findData(s.settings.blank_answers)))
            self.rows_combo.setCurrentIndex(
                max(0, self.rows_combo.findData(s.columns.wide_rows)))
            self.blank_tokens_edit.setText(", ".join(s.blank_tokens))
            self.absent_box.setChecked(s.settings.keep_absent)
        finally:
            self._filling = False

    def refresh(self) -> None:
        wizard = self.wizard
        if wizard.read is None and wizard.choices.has_file and not wizard.reading:
            wizard.pages["file"].reload_file()
        self.schedule_check()

    def next_state(self) -> tuple[bool, str]:
        wizard = self.wizard
        if wizard.read is None:
            return False, ""
        if wizard.checking or wizard.check is None:
            return False, "Checking the answers…"
        if not wizard.check.ok:
            n = len(wizard.check.errors)
            return False, (f"Fix the {n} problem{'s' if n != 1 else ''} marked “Must fix” "
                           "to go on.")
        return True, ""

    def reachable(self) -> bool:
        return self.wizard.choices.has_file

    def go_next(self) -> bool:
        check = self.wizard.check
        if check is not None and check.needs_duplicate_choice:
            self.ask_duplicates()
            return True
        return False

    # ------------------------------------------------------------------ filling
    def fill(self) -> None:
        """Fill the page from the sheet just read and the choices."""
        read = self.wizard.read
        if read is None:
            return
        self._filling = True
        try:
            columns = [str(c) for c in read.frame.columns]
            letters = read.letters
            choices = self.wizard.choices
            s = choices.columns
            for combo, value in ((self.question_combo, s.question_col),
                                 (self.worker_combo, s.worker_col),
                                 (self.response_combo, s.response_col),
                                 (self.grade_combo, s.grade_col),
                                 (self.wide_grade_combo, s.grade_col)):
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
            by_worker = wide and s.wide_rows == "worker"
            self.wide_grade_combo.setVisible(by_worker)
            self.wide_grade_label.setVisible(by_worker)
            others = [x for x in self.wizard.sheets if x != read.sheet]
            self.grades_sheet_combo.clear()
            self.grades_sheet_combo.addItem("(none)", None)
            for sheet in others:
                self.grades_sheet_combo.addItem(f"sheet “{sheet}”", sheet)
            if s.grades_file is not None:
                self.grades_sheet_combo.addItem(f"file “{s.grades_file.shown_name}”", FILE)
                self.grades_sheet_combo.setCurrentIndex(self.grades_sheet_combo.count() - 1)
            else:
                self.grades_sheet_combo.setCurrentIndex(
                    max(0, self.grades_sheet_combo.findData(s.grades_sheet)) if s.grades_sheet
                    else 0)
            self.grades_row.setVisible(wide)
            self.grades_sheet_label.setVisible(wide)
            self.blank_tokens_edit.setText(", ".join(choices.blank_tokens))
            self._show_guess_notes()
            self._numeric = numeric_columns(read)
            self._notes = note_columns(read, by_person=s.wide_rows == "worker")
            self._fill_ignore_list()
            self.preview_model.set_table(read.frame, letters)
            self.preview_title.setText(
                f"<b>Preview</b> of {read.describe()} (first "
                f"{min(20, len(read.frame))} of {len(read.frame):,} rows)")
            self._fill_llm_list()
        finally:
            self._filling = False
        self._update_preview_roles()
        self.preview_view.resizeColumnsToContents()
        header = self.preview_view.horizontalHeader()
        for i in range(header.count()):
            header.resizeSection(i, min(max(header.sectionSize(i), 90), 260))
        self.schedule_check()

    def _show_guess_notes(self) -> None:
        """What EvalDesk guessed and why, without the notes the user's choices since made
        untrue (a column it left out that is now the grades, or scored after all)."""
        s = self.wizard.choices.columns
        notes = []
        for note in self.wizard.guess_notes:
            found = re.match(r"Column [A-Z]+ '(.+?)' ", note)
            if found:
                column = found.group(1)
                if "it is used as the expert grades" in note and s.grade_col != column:
                    continue
                if "left out" in note and column not in s.ignore_cols:
                    continue
            notes.append(note)
        self.guess_note.setText("<br>".join(escape(n, quote=False) for n in notes))
        self.guess_note.setVisible(bool(notes))

    def _fill_ignore_list(self) -> None:
        s, read = self.wizard.choices.columns, self.wizard.read
        self.ignore_list.clear()
        wide = s.format == "wide"
        self.ignore_box.setVisible(wide)
        if not wide or read is None:
            return
        key = s.question_col if s.wide_rows == "question" else s.worker_col
        grade = s.grade_col if s.wide_rows == "worker" else None
        for column in read.frame.columns:
            column = str(column)
            if column in (key, grade):
                continue
            text = f"{read.letters.get(column, '')}: {column}"
            if column in self._numeric:
                numbers, filled = self._numeric[column]
                text += f"  (numbers in {numbers} of {filled} cells)"
            elif column in self._notes:
                text += f"  (looks like notes: {self._notes[column]})"
            item = QListWidgetItem(text)
            item.setToolTip(text)
            item.setData(Qt.ItemDataRole.UserRole, column)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if column in s.ignore_cols
                               else Qt.CheckState.Unchecked)
            self.ignore_list.addItem(item)

    def _fill_llm_list(self) -> None:
        s, read = self.wizard.choices.columns, self.wizard.read
        self.llm_list.clear()
        if s.format == "long":
            used = {s.question_col, s.worker_col, s.response_col, s.grade_col}
            options = [str(c) for c in read.frame.columns
                       if c not in used and str(c).strip().casefold() not in AI_MARKS]
            chosen = set(s.llm_cols)
            self.llm_hint.setText(
                "Rows marked in a column called “is_llm” (yes/no) or naming a model in a "
                "column called “model” count as AI answers automatically. If an AI's answers "
                "are in their own column beside each question, tick that column:")
        elif s.wide_rows == "question":
            options = [str(c) for c in read.frame.columns
                       if c != s.question_col and c not in s.ignore_cols]
            chosen = set(s.llm_cols)
            self.llm_hint.setText("Tick the columns that hold an AI's answers (not a person's):")
        else:
            key = s.worker_col
            names = []
            if key in read.frame.columns:
                names = [v.strip() for v in read.frame[key] if v.strip()]
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
        s, read = self.wizard.choices.columns, self.wizard.read
        roles: dict[str, str] = {}
        if s.format == "long":
            for col, role in ((s.question_col, "questions"), (s.worker_col, "worker names"),
                              (s.response_col, "answers"), (s.grade_col, "expert grades")):
                if col:
                    roles[col] = role
            for col in s.llm_cols:
                roles[col] = "AI answers"
            if read is not None:
                for col in read.frame.columns:
                    if str(col).strip().casefold() in AI_MARKS and col not in roles:
                        roles[str(col)] = "AI marks"
        else:
            key = s.question_col if s.wide_rows == "question" else s.worker_col
            grade = s.grade_col if s.wide_rows == "worker" else None
            if key:
                roles[key] = "questions" if s.wide_rows == "question" else "worker names"
                if grade:
                    roles[grade] = "expert grades"
                if read is not None:
                    for c in read.frame.columns:
                        if c not in (key, grade) and c not in s.ignore_cols:
                            roles[str(c)] = ("AI answers" if c in s.llm_cols else "answers")
        self.preview_model.set_roles(roles)

    # ------------------------------------------------------------------ choices
    @Slot()
    def _columns_chosen(self, *_args: Any) -> None:
        wizard = self.wizard
        if self._filling or wizard.read is None:
            return
        if wizard.choices.columns.format == "long":
            wizard.save_columns(
                question_col=self.question_combo.currentData(),
                worker_col=self.worker_combo.currentData(),
                response_col=self.response_combo.currentData(),
                grade_col=self.grade_combo.currentData(),
            )
        else:
            rows = self.rows_combo.currentData()
            key = self.key_combo.currentData()
            if rows != wizard.choices.columns.wide_rows:
                wizard.guess_anew(format="wide", wide_rows=rows)
                self.fill()
                return
            s = wizard.choices.columns
            grade = self.wide_grade_combo.currentData() if rows == "worker" else None
            ignore = [c for c in s.ignore_cols if c not in (key, grade)]
            if s.grade_col and s.grade_col != grade and s.grade_col in self._numeric:
                ignore.append(s.grade_col)  # no longer the grades: still never an answer
            if rows == "question":
                wizard.save_columns(question_col=key, ignore_cols=ignore,
                            llm_cols=[c for c in s.llm_cols if c != key])
            else:
                # the AI rows ticked stay ticked while they are still rows of the sheet (the
                # same names in the chosen name column): only another name column drops them
                names = set()
                if key in self.wizard.read.frame.columns:
                    names = {v.strip() for v in self.wizard.read.frame[key] if v.strip()}
                wizard.save_columns(worker_col=key, grade_col=grade, ignore_cols=ignore,
                                    llm_workers=[w for w in s.llm_workers if w in names])
            self._filling = True
            self._fill_llm_list()
            self._fill_ignore_list()
            self._filling = False
        self._show_guess_notes()
        self._update_preview_roles()
        self.schedule_check()

    @Slot(int)
    def _blank_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        settings = self.wizard.choices.settings.model_copy(
            update={"blank_answers": self.blank_combo.currentData()})
        self.wizard.save(settings=settings)
        self.schedule_check()

    @Slot(bool)
    def _absent_chosen(self, on: bool) -> None:
        if self._filling:
            return
        settings = self.wizard.choices.settings.model_copy(update={"keep_absent": bool(on)})
        self.wizard.save(settings=settings)
        self.schedule_check()

    @Slot(int)
    def _grades_sheet_chosen(self, *_args: Any) -> None:
        if self._filling or self.wizard.read is None:
            return
        chosen = self.grades_sheet_combo.currentData()
        if chosen == FILE:
            return
        self.wizard.save_columns(grades_sheet=chosen, grades_file=None,
                                 grades_name_col=None, grades_value_col=None)
        self.fill()

    def ask_grades_path(self) -> str | None:
        """Ask for a file of grades (tests replace this)."""
        answers = self.wizard.choices.path
        path, _ = QFileDialog.getOpenFileName(
            self, "Choose the grades (one per person)",
            str(Path(answers).parent) if answers else str(Path.home()),
            "Spreadsheets (*.xlsx *.xlsm *.xls *.csv *.tsv *.txt);;All files (*)")
        return path or None

    @Slot()
    def _ask_and_choose_grades_file(self) -> None:
        ask_then(self.ask_grades_path, self.choose_grades_file)

    def choose_grades_file(self, path: str) -> None:
        """Use ``path`` for one grade per person (copied into the project)."""
        wizard = self.wizard
        s = wizard.choices.columns
        ignore = list(s.ignore_cols)
        if s.grade_col and s.grade_col in self._numeric and s.grade_col not in ignore:
            ignore.append(s.grade_col)  # no longer the grades: still never an answer
        try:
            wizard.session.store_input("grades", path)
        except OSError as exc:
            QMessageBox.warning(self, "Grades file", f"EvalDesk cannot read {path}: {exc}")
            return
        wizard.save_columns(ignore_cols=ignore)
        self.fill()

    @Slot(QListWidgetItem)
    def _ignore_ticked(self, _item: QListWidgetItem) -> None:
        if self._filling:
            return
        ticked = [item.data(Qt.ItemDataRole.UserRole) for item in _ticked(self.ignore_list)]
        s = self.wizard.choices.columns
        self.wizard.save_columns(ignore_cols=ticked,
                                 llm_cols=[c for c in s.llm_cols if c not in ticked])
        self._filling = True
        self._fill_llm_list()
        self._filling = False
        self._show_guess_notes()
        self._update_preview_roles()
        self.schedule_check()

    @Slot()
    def _blank_tokens_edited(self) -> None:
        if self._filling:
            return
        tokens = [t.strip() for t in self.blank_tokens_edit.text().split(",") if t.strip()]
        if tokens != self.wizard.choices.blank_tokens:
            self.wizard.save(blank_tokens=tokens)
            self.schedule_check()

    @Slot(QListWidgetItem)
    def _llm_ticked(self, _item: QListWidgetItem) -> None:
        if self._filling:
            return
        ticked = [item.text() for item in _ticked(self.llm_list)]
        s = self.wizard.choices.columns
        if s.format == "wide" and s.wide_rows == "worker":
            self.wizard.save_columns(llm_workers=ticked)
        else:
            self.wizard.save_columns(llm_cols=ticked)
        self._update_preview_roles()
        self.schedule_check()

    # ------------------------------------------------------------------ the check
    def schedule_check(self) -> None:
        wizard = self.wizard
        if wizard.read is None:
            return
        wizard.checking = True
        self._check_generation += 1
        wizard.update_nav()
        self._check_timer.start()

    @Slot()
    def _start_check(self) -> None:
        spawn(self._check(self._check_generation), where="checking the answers")

    async def _check(self, generation: int) -> None:
        wizard = self.wizard
        read = wizard.read
        if read is None:
            return
        loop = asyncio.get_running_loop()
        try:
            check = await loop.run_in_executor(None, wizard.session.check_answers, read,
                                               wizard.choices)
        except Exception as exc:  # a bug, not the user's data: say so and keep going
            log.exception("Checking the answers failed")
            check = AnswersCheck(issues=[TableIssue(
                "error", f"EvalDesk could not check these columns ({type(exc).__name__}: "
                f"{exc}). Try other columns, or report the problem with the log file.")])
        if generation != self._check_generation or wizard.retired:
            return  # the user changed something meanwhile; a newer check is coming
        wizard.check = check
        wizard.checking = False
        self._show_check(check)
        wizard.update_nav()
        wizard.checked.emit(check)
        if self._advance_after_check:
            self._advance_after_check = False
            if check.ok and not check.needs_duplicate_choice and wizard.page == "columns":
                wizard.show_page("model")

    def _show_check(self, check: AnswersCheck) -> None:
        rule = check.blank_rule
        # one line here; the whole reason on hover (and on the Run page, in the Read me)
        self.blank_label.setText(_short_rule(rule) if rule is not None else "")
        self.blank_label.setToolTip(rule.reason if rule is not None else "")
        self.issues_model.set_issues(check.issues)
        self.issues_view.resizeColumnToContents(0)
        self.issues_view.resizeColumnToContents(1)
        self.issues_view.resizeRowsToContents()
        parts = []
        absent = check.prepared.absent if check.prepared is not None else []
        worst = rule is not None and rule.rule == "worst"
        self.absent_box.setVisible(bool(absent) and worst)
        if absent:
            names = ", ".join(f"“{n}”" for n in absent[:3]) + (" and more" if len(absent) > 3
                                                                else "")
            self._filling = True
            self.absent_box.setText(
                f"Score {'the person' if len(absent) == 1 else f'the {len(absent)} people'} "
                f"who answered nothing ({names}) as the weakest")
            self.absent_box.setChecked(self.wizard.choices.settings.keep_absent)
            self._filling = False
        if check.prepared is not None:
            scored = worst and self.wizard.choices.settings.keep_absent
            parts.append(f"EvalDesk will read <b>{escape(check.prepared.describe(scored))}</b>.")
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

    # ------------------------------------------------------------------ repeated answers
    def ask_duplicates(self) -> QMessageBox:
        """Ask which of a worker's repeated answers to keep (non-blocking: open() + signal)."""
        check = self.wizard.check
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
        box.buttonClicked.connect(self._duplicates_answered)
        self.duplicate_box = box
        return open_window(box)

    @Slot(object)
    def _duplicates_answered(self, button: Any) -> None:
        self.duplicate_box = None
        if button is self.keep_first_button:
            choice = "first"
        elif button is self.keep_last_button:
            choice = "last"
        else:
            return
        self.wizard.save(duplicates=choice)
        self._advance_after_check = True
        self.schedule_check()
