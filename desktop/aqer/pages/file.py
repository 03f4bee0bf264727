"""Step 1 of the AQER wizard: the answers file, its sheet and its layout."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
)

from core.aqer.session import OpenedAnswers, copy_template, sample_path
from desktop.aqer.pages._base import AqerPage
from desktop.file_dialogs import ask_then, save_file
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.widgets import (
    chosen_sheet,
    fill_sheets,
    header_row_spin,
    hint_label,
    note_box,
    page_layout,
    xlsx_path,
)

if TYPE_CHECKING:  # pragma: no cover (the wizard imports the pages)
    from desktop.aqer.wizard import AqerWizard

__all__ = ["FilePage"]


class FilePage(AqerPage):
    """Choose the answers (or the sample, or save the template), the sheet and the layout."""

    KEY, TITLE = "file", "Answers file"

    def __init__(self, wizard: AqerWizard) -> None:
        super().__init__(wizard)
        self._filling = False
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
        self.header_spin = header_row_spin()
        self.header_spin.valueChanged.connect(self._header_chosen)
        self.header_note = note_box()
        self.header_note.setObjectName("headerNote")
        self.header_note.setWordWrap(True)
        self.header_note.hide()
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
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("Sheet:", self.sheet_combo)
        form.addRow("Header row:", self.header_spin)
        layout_col = QVBoxLayout()
        layout_col.addWidget(self.long_radio)
        layout_col.addWidget(hint_label(
            "For example:  question | worker | response  (and optionally grade, is_llm)"))
        layout_col.addWidget(self.wide_radio)
        layout_col.addWidget(hint_label(
            "For example:  question | Ana | Ben | Chloe | LLM A  — one answer in each cell"))
        self.layout_guess = note_box()
        self.layout_guess.setObjectName("layoutGuess")
        self.layout_guess.setWordWrap(True)
        self.layout_guess.hide()
        form.addRow("Layout:", layout_col)
        box_layout = QVBoxLayout()
        box_layout.addLayout(form)
        # full width below the form: a wrapped label inside a form's field is cut
        box_layout.addWidget(self.header_note)
        box_layout.addWidget(self.layout_guess)
        layout_box.setLayout(box_layout)

        self.file_panel = RunPanel()
        self.file_panel.hide()

        layout = page_layout(
            self, "AQER: score answers without an answer key",
            "Choose the spreadsheet with your people's answers. Everyone should have answered "
            "the same questions; AI answers to those questions may be in the same sheet. "
            "EvalDesk keeps a copy of the file in the project, so the results can always be "
            "traced back to it. Check that the sheet and the layout below match your file, then "
            "press Next. No file yet? Try the sample data, or download the template.")
        layout.addWidget(file_box)
        layout.addWidget(layout_box)
        layout.addWidget(self.file_panel)
        layout.addStretch(1)

    # ------------------------------------------------------------------ the page's protocol
    def restore(self) -> None:
        """Put the saved layout choice into the widgets (without saving it again)."""
        self._filling = True
        try:
            s = self.wizard.choices
            (self.long_radio if s.columns.format == "long" else self.wide_radio).setChecked(True)
            self.header_spin.setValue(s.header_row or 0)
            self.show_file_label()
        finally:
            self._filling = False

    def next_state(self) -> tuple[bool, str]:
        return self.wizard.read is not None and not self.wizard.reading, ""

    def busy_changed(self, busy: str) -> None:
        for button in (self.choose_button, self.sample_button, self.template_button):
            button.setEnabled(not busy)

    # ------------------------------------------------------------------ asking (tests replace)
    def ask_file_path(self) -> str | None:
        """Ask for the answers file (tests replace this)."""
        choices = self.wizard.choices
        path, _ = QFileDialog.getOpenFileName(
            self, "Choose the answers", str(Path(choices.path).parent) if choices.path
            else str(Path.home()),
            "Spreadsheets (*.xlsx *.xlsm *.xls *.csv *.tsv *.txt);;All files (*)")
        return path or None

    def ask_template_path(self) -> str | None:
        """Ask where to save the template (tests replace this)."""
        return save_file(self, "Save the AQER template", "aqer-template.xlsx")

    # ------------------------------------------------------------------ the file
    @Slot()
    def _ask_and_choose_file(self) -> None:
        ask_then(self.ask_file_path, self.choose_file)

    @Slot()
    def load_sample(self) -> None:
        """Load the sample answers shipped with EvalDesk."""
        self.choose_file(sample_path(), sample=True)

    def choose_file(self, path: str | Path, sample: bool = False) -> None:
        """Use ``path`` as the answers file: copy it into the project and read it."""
        if sample:
            self.wizard.save(sheet="Long")
        self.wizard.read = None
        self.wizard.check = None
        self._read(path=Path(path), then=None, new=True)

    def reload_file(self, then: str | None = None, new: bool = False) -> None:
        """Read the chosen file again (when the wizard reopens, keeping the choices; or
        another sheet, ``new=True``: the choices are guessed anew for it)."""
        self.wizard.read = None
        self.wizard.check = None
        self._read(path=None, then=then, new=new)

    def _read(self, path: Path | None, then: str | None, new: bool = False) -> None:
        wizard = self.wizard
        name = path.name if path is not None else (wizard.choices.file_name or "the answers")
        wizard.reading = True
        self.file_panel.show()
        wizard.run_step(
            self.file_panel,
            partial(wizard.session.open_answers, path),
            title=f"Reading {name}",
            on_done=partial(self._read_done, then=then, new=new),
        )

    def _read_done(self, outcome: RunOutcome, then: str | None = None,
                   new: bool = False) -> None:
        wizard = self.wizard
        wizard.reading = False
        if not outcome.finished:
            wizard.read = None
            wizard.update_nav()
            return
        opened: OpenedAnswers = outcome.result
        wizard.sheets = opened.sheets
        wizard.hidden_sheets = opened.hidden
        wizard.read = opened.read
        self.file_panel.hide()
        if new:  # nothing chosen for another file or sheet carries over to this one
            wizard.guess_anew(choices=opened.choices)
        else:
            wizard.guess_columns(opened.choices)
        self._filling = True
        try:
            (self.long_radio if wizard.choices.columns.format == "long"
             else self.wide_radio).setChecked(True)
            fill_sheets(self.sheet_combo, wizard.sheets, wizard.hidden_sheets,
                        wizard.read.sheet)
            self.sheet_combo.setEnabled(len(wizard.sheets) > 1)
            self.header_spin.setValue(wizard.choices.header_row or 0)
        finally:
            self._filling = False
        self.show_header(wizard.read)
        self.show_layout_guess(new)
        self.file_note.setText(opened.note)
        self.file_note.setVisible(bool(opened.note))
        self.show_file_label()
        wizard.pages["columns"].fill()
        wizard.update_nav()
        if then:
            wizard.show_page(then)

    def show_layout_guess(self, guessed: bool = True) -> None:
        """Say which layout was guessed from the sheet and why (or that the user chose it)."""
        notes = self.wizard.guess_notes
        text = notes[0] if guessed and notes and notes[0].startswith("Guessed") else ""
        if text:
            text += " Choose the other layout if this is wrong."
        self.layout_guess.setText(text)
        self.layout_guess.setVisible(bool(text))

    def show_header(self, read: Any) -> None:
        """Say which row was read as the header when rows above it were not."""
        note = read.header_note if read is not None else ""
        self.header_note.setText(note)
        self.header_note.setVisible(bool(note))

    @Slot(int)
    def _header_chosen(self, value: int) -> None:
        if self._filling:
            return
        chosen = value or None
        if chosen != self.wizard.choices.header_row:
            self.wizard.save(header_row=chosen)
            self.reload_file(new=True)  # other headers: the columns are guessed anew

    def show_file_label(self) -> None:
        s, read = self.wizard.choices, self.wizard.read
        if not s.has_file:
            self.file_label.setText("No file chosen yet.")
            return
        text = f"<b>{s.file_name}</b><br><span style='color:#5f6b7a'>{s.path}</span>"
        if read is not None:
            text += (f"<br>{len(read.frame):,} rows and {len(read.frame.columns)} "
                     f"columns in {read.describe()}")
        self.file_label.setTextFormat(Qt.TextFormat.RichText)
        self.file_label.setText(text)

    @Slot(int)
    def _sheet_chosen(self, index: int) -> None:
        if self._filling or index < 0:
            return
        sheet = chosen_sheet(self.sheet_combo, index)
        if sheet and sheet != self.wizard.choices.sheet:
            self.wizard.save(sheet=sheet, header_row=None)
            self.reload_file(new=True)

    @Slot(bool)
    def _format_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        fmt = "long" if self.long_radio.isChecked() else "wide"
        if fmt != self.wizard.choices.columns.format:
            self.wizard.guess_anew(format=fmt)
            self.layout_guess.setText(f"You chose the {fmt} layout.")
            self.wizard.pages["columns"].fill()

    # ------------------------------------------------------------------ the template
    @Slot()
    def _ask_and_save_template(self) -> None:
        ask_then(self.ask_template_path, self.save_template)

    def save_template(self, path: str | Path) -> Any:
        target = xlsx_path(path)
        self.file_panel.show()
        return self.wizard.run_step(
            self.file_panel, lambda progress, cancel: copy_template(target),
            title=f"Saving the template as {target.name}",
            on_done=lambda outcome: self._template_done(outcome, target),
        )

    def _template_done(self, outcome: RunOutcome, target: Path) -> None:
        if outcome.finished:
            self.file_panel.finish(f"Saved the template as {target}. Fill it in, then choose "
                                   "it with “Choose a file…”.")
