"""Page 6: the texts to score (file, sheet, columns, human scores), the model and the scoring options."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
)

from core.interacteval.inputs import TEXT_ROLES, OpenedTexts
from core.project import ProjectError
from core.words import count
from desktop.file_dialogs import open_file
from desktop.interacteval.pages._base import InteractEvalPage, plain_step
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.widgets import (
    actual_label,
    chosen_sheet,
    estimate_label,
    fill_choices,
    fill_sheets,
    header_row_spin,
    page_layout,
    repeats_spin,
    set_times_suffix,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.interacteval.session import ScoringRun
    from core.llm.estimate import Estimate
    from core.runs import CancelToken, Progress
    from desktop.interacteval.wizard import InteractEvalWizard



class ScorePage(InteractEvalPage):
    KEY, TITLE = "score", "Score"
    NEXT_TEXT = "Show results"

    def __init__(self, wizard: InteractEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self._file_note = ""
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
        self.header_spin = header_row_spin()
        self.header_spin.valueChanged.connect(self._header_chosen)
        self.columns_form.addRow("Header row:", self.header_spin)
        for role, label in TEXT_ROLES.items():
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
        self.repeats_spin = repeats_spin()
        self.repeats_spin.valueChanged.connect(self._scoring_chosen)
        model_box = QGroupBox("Model and settings")
        mf = QFormLayout(model_box)
        mf.addRow("Model profile:", self.scorer_combo)
        mf.addRow(self.per_question_check)
        mf.addRow(self.legacy_check)
        mf.addRow("Repeat each call:", self.repeats_spin)

        self.texts_summary = QLabel()
        self.texts_summary.setWordWrap(True)
        self.texts_summary.setTextFormat(Qt.TextFormat.RichText)
        self.estimate_label = estimate_label(
            "Counted from our prompt filled with your texts and checklists. Tokens are the "
            "pieces of text a model reads and writes; the price comes from the price list "
            "shipped with EvalDesk (no cost for a model on this computer). The upper figure "
            "counts one more call per text for questions left unanswered.")
        self.actual_label = actual_label()
        self.estimate: Estimate | None = None
        self._estimate_generation = 0
        self._estimate_of_run: Estimate | None = None
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
        right.addWidget(self.estimate_label)
        right.addWidget(self.actual_label)
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
        layout = page_layout(
            self, "Score the texts",
            "Choose the spreadsheet with the texts to score and say which column holds what. "
            "The model answers every checklist question about every text; the score is "
            "1 + 4 × (yes answers / questions), from 1 to 5; a question left unanswered is "
            "asked again, and a text with a question still unanswered gets no score (it is "
            "shown as incomplete, and scoring again asks again). Each scored text is "
            "saved at once: Cancel any time, and scoring again continues where it stopped "
            "without asking the model twice. Human scores, if the sheet has them, are used "
            "only to show the agreement.")
        layout.addLayout(top)
        layout.addLayout(body, 1)
        layout.addLayout(run_row)
        layout.addWidget(self.score_panel)

    def refresh(self) -> None:
        self._fill_scoring()

    def busy_changed(self, busy: str) -> None:
        self.score_button.setEnabled(self._can_score())
        self.texts_button.setEnabled(not busy)

    def shows_next(self) -> bool:
        return self.wizard.stored_run() is not None

    def next_state(self) -> tuple[bool, str]:
        run = self.wizard.stored_run()
        reasons = self.wizard.out_of_date(run)
        if run is not None and reasons:
            return False, ("The last results no longer match your choices ("
                           + "; ".join(reasons)
                           + "): score the texts to see results for these choices.")
        return run is not None, ""

    def go_next(self) -> bool:
        run = self.wizard.stored_run()
        if run is not None and not self.wizard.out_of_date(run):
            self.wizard.show_run(run)
        return True

    def ask_texts_path(self) -> str | None:
        return open_file(self, "Choose the texts to score")

    @Slot()
    def _ask_texts(self) -> None:
        path = self.ask_texts_path()
        if path:
            self.choose_texts(path)

    def choose_texts(self, path: str | Path) -> Any:
        """Use ``path`` as the texts file (copied into the project) and read it."""
        self.session.store_input("texts", path)
        return self.read_texts()

    def read_texts(self) -> Any:
        path, self._file_note = self.session.locate_texts()
        if path is None:
            self.texts_label.setText(self._file_note or "No texts file chosen yet.")
            return None
        self.score_panel.show()
        return self.wizard.run_step(self.score_panel, plain_step(self.session.read_texts, path),
                                    title=f"Reading {self.choices.texts.file_name}",
                                    on_done=self._texts_read, busy="texts")

    def _texts_read(self, outcome: RunOutcome) -> None:
        if not outcome.finished:
            return
        opened: OpenedTexts = outcome.result
        self.wizard.opened_texts = opened
        self.session.use_texts([] if opened.read.errors else opened.read.items, opened.setup)
        if not opened.read.errors:
            self.score_panel.hide()
        self._fill_texts_widgets()
        self._show_texts_summary()
        self.wizard.update_nav()

    def _fill_texts_widgets(self) -> None:
        opened = self.wizard.opened_texts
        setup = self.choices.texts
        self._filling = True
        try:
            note = f" ({self._file_note})" if self._file_note else ""
            self.texts_label.setText(f"<b>{setup.file_name}</b>{note}" if setup.file_name else
                                     "No texts file chosen yet.")
            fill_sheets(self.sheet_combo, opened.sheets if opened else [],
                        opened.hidden if opened else {}, setup.sheet)
            self.header_spin.setValue(setup.header_row or 0)
            columns = opened.columns if opened else []
            for role, combo in self.role_combos.items():
                fill_choices(combo, "(none)" if role != "text" else "(choose)", columns,
                             setup.columns.get(role))
            while self.human_form.rowCount():
                self.human_form.removeRow(0)
            self.human_combos = {}
            for d in self.choices.dimensions:
                combo = QComboBox()
                fill_choices(combo, "(no human scores)", columns, setup.human.get(d.name))
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
            used = self.session.scorer_profile()
            chosen = used.name if used is not None else ""
            if chosen in names:
                self.scorer_combo.setCurrentIndex(names.index(chosen))
            self.per_question_check.setChecked(self.choices.scoring.mode == "per_question")
            self.legacy_check.setChecked(self.choices.scoring.counting == "legacy")
            self.repeats_spin.setValue(self.choices.repeats)
            set_times_suffix(self.repeats_spin)
        finally:
            self._filling = False
        if self.wizard.opened_texts is None and self.choices.texts.file_name and not self.busy:
            self.read_texts()
        else:
            self._fill_texts_widgets()
            self._show_texts_summary()

    @Slot()
    def _texts_choice_changed(self, *_args: Any) -> None:
        if self._filling or self.wizard.opened_texts is None:
            return
        sheet = chosen_sheet(self.sheet_combo) or None
        setup = self.choices.texts
        if sheet != setup.sheet:
            self.choices.texts = setup.model_copy(update={"sheet": sheet, "columns": {},
                                                        "human": {}, "header_row": None})
            self._save()
            self.read_texts()
            return
        columns = {role: combo.currentData() for role, combo in self.role_combos.items()}
        human = {d: combo.currentData() for d, combo in self.human_combos.items()}
        self.choices.texts = setup.model_copy(update={"columns": columns, "human": human})
        self._save()
        self.read_texts()

    @Slot(int)
    def _header_chosen(self, value: int) -> None:
        """Another header row: the columns are read, and guessed, anew."""
        if self._filling or self.wizard.opened_texts is None:
            return
        if (value or None) != self.choices.texts.header_row:
            self.choices.texts = self.choices.texts.model_copy(update={
                "header_row": value or None, "columns": {}, "human": {}})
            self._save()
            self.read_texts()

    @Slot()
    def _scoring_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        self.choices.scorer = self.scorer_combo.currentText()
        self.choices.scoring = self.choices.scoring.model_copy(update={
            "mode": "per_question" if self.per_question_check.isChecked() else "checklist",
            "counting": "legacy" if self.legacy_check.isChecked() else "answers",
        })
        self.choices.repeats = self.repeats_spin.value()
        self._save()
        self._show_texts_summary()
        self.wizard.update_nav()

    def _show_texts_summary(self) -> None:
        checklists = self.session.checklists()
        missing = [d.name for d in self.choices.dimensions
                   if d.name not in {c.dimension for c in checklists}]
        parts = []
        if self.wizard.opened_texts is not None:
            read = self.wizard.opened_texts.read
            if read.errors:
                parts.append("<span style='color:#b42318'><b>Cannot score yet:</b> "
                             + " ".join(read.errors) + "</span>")
            else:
                humans = [d for d, c in self.choices.texts.human.items() if c]
                parts.append(f"<b>{count(len(read.items), 'text')}</b> from {read.describe}"
                             + (f", with human scores for {', '.join(humans)}" if humans else
                                "") + ".")
                if read.problems:
                    parts.append(f"{count(len(read.problems), 'note')}: " + " ".join(read.problems[:3]))
        if checklists:
            n_q = sum(len(c.items) for c in checklists)
            calls = (len(self.wizard.opened_texts.read.items) if self.wizard.opened_texts else 0) * (
                len(checklists) if self.choices.scoring.mode == "checklist" else n_q)
            listed = ", ".join(f"{c.dimension} ({count(len(c.items), 'question')})"
                               for c in checklists)
            repeats = self.choices.repeats
            parts.append(f"Checklists: {listed}; about {count(calls * repeats, 'model call')}"
                         + (f" (each made {repeats} times)" if repeats > 1 else "") + ".")
        else:
            parts.append("<span style='color:#b42318'>There is no checklist yet: build one "
                         "first.</span>")
        if missing:
            parts.append(f"Not scored (no checklist): {', '.join(missing)}.")
        self.texts_summary.setText("<br>".join(parts))
        self.busy_changed(self.busy)
        if self.busy != "score":
            self.update_estimate()

    def update_estimate(self) -> Any:
        """Work out the calls, cost and time of scoring the texts not yet scored (worker
        thread) and show them; returns the task (tests await it)."""
        import asyncio

        from desktop.errors import spawn

        self._estimate_generation += 1
        generation = self._estimate_generation
        self.estimate = None
        profile = self.session.scorer_profile()
        if not self._ready() or profile is None:
            self.estimate_label.setText("")
            return None
        project = self.project
        self.estimate_label.setText("Estimating the calls, cost and time…")

        async def work() -> None:
            from desktop.calibration import MEASURING, calibrate

            await calibrate(project, profile, lambda: self.estimate_label.setText(MEASURING))
            if generation != self._estimate_generation:
                return
            try:
                est = await asyncio.get_running_loop().run_in_executor(
                    None, self.session.estimate)
            except ProjectError:
                return  # the project was closed meanwhile (another one was opened)
            except ValueError as exc:  # another texts file was chosen meanwhile (being read)
                if generation == self._estimate_generation:
                    self.estimate_label.setText(str(exc))
                return
            if generation != self._estimate_generation or getattr(project, "closed", False):
                return
            self.estimate = est
            text = est.summary() + "."
            if est.too_long:  # the run will be refused: say why, before it
                from core.llm.context import refusal

                self.estimate_label.setText(refusal(est.too_long))
                return
            if est.calls_max:
                text = (f"Before you start: {text[0].lower()}{text[1:]} Time based on "
                        f"{est.latency_s:.1f} seconds per call ({est.latency_source}), "
                        f"{est.concurrency} at a time.")
            self.estimate_label.setText(text)

        return spawn(work(), "estimating the scoring")

    def _ready(self) -> bool:
        """The texts are read, there is a checklist and a model profile."""
        opened = self.wizard.opened_texts
        return (opened is not None and not opened.read.errors and bool(opened.read.items)
                and bool(self.session.checklists()) and bool(self._profiles()))

    def _can_score(self) -> bool:
        return not self.busy and self._ready()

    @Slot()
    def start_scoring(self) -> Any:
        """Score every text on every checklist; finished texts are kept as they finish (after
        the notice when the texts would leave this computer)."""
        if not self._can_score():
            return None
        return self.wizard.after_cloud_notice(self.session.scorer_profile(),
                                              self._start_scoring)

    def _start_scoring(self) -> Any:
        if not self._can_score():
            return None
        self._estimate_of_run = self.estimate
        self.wizard.run = None  # the earlier results are not this run's
        self.actual_label.hide()

        async def job(progress: Progress, cancel: CancelToken) -> ScoringRun:
            return await self.session.run(progress=progress, cancel=cancel)

        self.score_panel.show()
        self.score_button.setText("Scoring…")
        profile = self.session.scorer_profile()
        items = len(self.session.texts)
        return self.wizard.run_step(
            self.score_panel, job,
            title=f"Scoring {count(items, 'text')} with {profile.name if profile else ''}",
            on_done=self._scoring_done, busy="score")

    def _scoring_done(self, outcome: RunOutcome) -> None:
        self.score_button.setText("Score the texts")
        usage = self.session.usage
        if self._estimate_of_run is not None and usage is not None:
            from core.llm.estimate import compare_lines

            self.actual_label.setText("This run, estimated beside actual: "
                                      + "; ".join(compare_lines(self._estimate_of_run, usage))
                                      + ".")
            self.actual_label.show()
        if outcome.finished:
            self.wizard.show_run(outcome.result)
        else:
            self.wizard.update_nav()
