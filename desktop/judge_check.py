"""The "Check the judge" panel, shared by the MAJ-Eval and InteractEval wizards: a person grades
a sample of the items the judge scored (the app offers them in a random order kept in the
project, so the items graded first are a fair sample), and the report compares the judge with
them, saying how the graded items were chosen. Only input and
output here: the ratings, the order, the statistics and the workbooks are in
:mod:`core.judge_check`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core import judge_check as jc
from core.grading import plan as gp
from core.words import count
from desktop.file_dialogs import ask_then, open_file, save_file
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome, start_step
from desktop.views import Column, FrameModel, table_view
from desktop.widgets import (
    add_parts,
    alert_box,
    fit_columns,
    hint_label,
    note_box,
    page_layout,
    splitter,
    xlsx_path,
)

__all__ = [
    "BADGE",
    "CheckJudgePageMixin",
    "JudgeCheckPanel",
]

NOT_RATED = "not rated"
#: The mark of a checklist question that fails texts people call good.
BADGE = "⚠ fails good texts"
ALL = "Mean of all raters"
BLIND_TEXT = ("Your rating. The judge's score and the other raters' grades are hidden so that "
              "they do not sway you.")
AGREED_CHOICE = "Agreed grades (the raters' mean elsewhere)"


DIMENSION_COLUMNS = [
    Column("dimension", "Dimension"),
    Column("statistic", "Statistic", tip="Kendall tau-b and Spearman rho: do the judge and the "
           "people put the items in the same order (1 = same order, 0 = unrelated)? Mean "
           "absolute error: how far apart the scores are, on the rating scale."),
    Column("value", "Value", "score", missing="undefined"),
    Column("ci_low", "95% interval from", "score", tip="Bootstrap interval over the items."),
    Column("ci_high", "to", "score"),
    Column("n", "Items", "int"),
    Column("note", "Note"),
]
QUESTION_COLUMNS = [
    Column("dimension", "Dimension"),
    Column("number", "No.", "int"),
    Column("question", "Question"),
    Column("kappa", "Kappa", "score", missing="undefined",
           tip="Cohen's kappa: agreement beyond chance (1 = always the same answer)."),
    Column("mcc", "MCC", "score", missing="undefined",
           tip="Matthews correlation between the judge's and the people's Yes/No."),
    Column("false_pass_rate", "False pass", "score", missing="undefined",
           tip="Of the texts people said No to, the share the judge said Yes to."),
    Column("false_fail_rate", "False fail", "score", missing="undefined",
           tip="Of the texts people said Yes to, the share the judge said No to."),
    Column("n", "Texts", "int"),
    Column("fails_good_texts", "Flag"),
    Column("note", "Note"),
]
GAP_COLUMNS = [
    Column("item", "Item"),
    Column("dimension", "Dimension"),
    Column("judge", "Judge", "score"),
    Column("person", "People", "score"),
    Column("judge_answer", "Judge said"),
    Column("person_answer", "People said"),
    Column("difference", "Difference", "score"),
    Column("judge_explanation", "What the judge said"),
    Column("text", "Text"),
]
PEOPLE_COLUMNS = [
    Column("dimension", "Dimension"),
    Column("raters", "Raters"),
    Column("alpha", "Krippendorff's alpha", "score", missing="undefined",
           tip="Agreement among raters (1 = perfect, 0 = chance). If adding the judge lowers it "
               "little, the judge disagrees with people about as much as they disagree with "
               "each other."),
    Column("items", "Items", "int"),
    Column("note", "Note"),
]


RELIABILITY_COLUMNS = [
    Column("dimension", "Dimension"),
    Column("question", "Question", missing=""),
    Column("between", "Between"),
    Column("statistic", "Statistic"),
    Column("value", "Value", "score", missing="not computed"),
    Column("ci_low", "95% interval from", "score", missing="—"),
    Column("ci_high", "to", "score", missing="—"),
    Column("n", "Texts", "int", tip="How many texts the number rests on."),
    Column("n_raters", "Raters", "int", missing="—"),
    Column("report_first", "Report this one", missing="",
           tip="The number to report for this comparison, and why."),
    Column("meaning", "What it means"),
    Column("note", "Note", missing=""),
]
CORRECTED_COLUMNS = [
    Column("dimension", "Dimension"),
    Column("judge", "Judge"),
    Column("group", "Which items"),
    Column("judge_mean", "Judge's mean", "score", missing="not computed",
           tip="The judge's raw mean over every item it scored."),
    Column("corrected_mean", "Corrected mean", "score", missing="not computed",
           tip="The judge's mean plus the mean of (your grade - the judge's score) on the "
               "items you graded that were drawn at random: valid whatever the judge's bias."),
    Column("corrected_ci_low", "95% interval from", "score", missing="—"),
    Column("corrected_ci_high", "to", "score", missing="—"),
    Column("sample_ci_low", "Your grades alone: from", "score", missing="—",
           tip="The 95% interval from the graded random sample alone, without the judge."),
    Column("sample_ci_high", "to", "score", missing="—"),
    Column("narrower_by", "Narrower by", "percent", missing="—",
           tip="How much narrower the corrected interval is than your grades' alone."),
    Column("n_graded_at_random", "Graded at random", "int"),
    Column("n_items", "Items scored", "int"),
    Column("in_words", "In words"),
]


RANK_COLUMNS = [
    Column("rank", "Rank", "int"),
    Column("judge", "Judge"),
    Column("value", "Agreement", "score", missing="undefined",
           tip="The chosen coefficient between this judge's scores and the people's ratings "
               "(averaged over the dimensions when there are several)."),
    Column("items", "Items", "int", tip="Rated items this judge scored (each item once)."),
    Column("n", "Ratings", "int",
           tip="Ratings compared: an item rated on two dimensions counts twice."),
    Column("difference", "Behind the best by", "score", missing="—"),
    Column("ci_low", "95% interval from", "score", missing="—"),
    Column("ci_high", "to", "score", missing="—"),
    Column("verdict", "In words"),
]
STATISTICS = {"Kendall tau-b": "kendall", "Spearman rho": "spearman", "Pearson r": "pearson"}


class JudgeCheckPanel(QWidget):
    """Grade (tab 1), the judge-vs-people report (tab 2) and the ranking of the judges (tab 3).
    The report and the ranking are computed in the background (their bootstraps take seconds
    with hundreds of rated items), with progress and Cancel in :attr:`run_panel`; grading goes
    on meanwhile. ``runner(panel, step, title=..., on_done=...)`` starts such a step (default
    :func:`desktop.runner.start_step`; a wizard page passes its own ``run_step``)."""

    #: What the "Pick the judge" tab says when fewer than two judges scored the items.
    one_judge_text = (
        "Only one model has scored these items. Run the same items with another model "
        "(choose it on the Run or Score page): its scores are kept beside these, and this tab "
        "then ranks the models by how well they agree with your ratings.")

    #: A rating was saved (item id).
    rating_saved = Signal(str)
    #: The report was recomputed.
    report_changed = Signal()

    def __init__(self, method: str, who: Callable[[], str]) -> None:
        super().__init__()
        self.method = method
        self.who = who
        self.project: Any = None
        self.judge: jc.JudgeData | None = None
        self.ratings: list[jc.Rating] = []
        #: The agreed grades recorded after raters disagreed (kind adjudicated).
        self.adjudications: list[jc.Rating] = []
        self.report: jc.JudgeReport | None = None
        #: The project's grading order (``core.judge_check.grading_seed``).
        self.seed: int | None = None
        #: How the graded items were chosen among the candidates' (the last ranking's).
        self.sampling: jc.Sampling | None = None
        self.current: str | None = None
        self.skipped: list[str] = []
        self.score_combos: dict[str, QComboBox] = {}
        self.answer_combos: dict[tuple[str, str], QComboBox] = {}

        self.problem = alert_box()
        self.problem.hide()
        self.runner: Callable[..., Any] | None = None
        self.run_panel = RunPanel()
        self.run_panel.hide()
        #: A report step is running; ``_queued``: another was asked for meanwhile (True: with
        #: the report, False: the ranking only), started when this one ends.
        self.computing = False
        self._report_pending = False  #: the running step computes the report (not only ranks)
        self._queued: bool | None = None
        self.tabs = QTabWidget()
        self.tabs.addTab(self._grade_tab(), "Grade")
        self.tabs.addTab(self._report_tab(), "Report")
        self.tabs.currentChanged.connect(self._tab_changed)
        #: The ratings changed since the report was computed (it is computed when shown).
        self._stale = False
        self.pick_tab = self.tabs.addTab(self._pick_tab(), "Pick the judge")
        from desktop.judge_raters import AdjudicationTab, RatersTab

        self.adjudication = AdjudicationTab(self)
        self.agreed_tab = self.tabs.addTab(self.adjudication, "Agreed grades")
        self.raters = RatersTab(self)
        self.raters_tab = self.tabs.addTab(self.raters, "Raters and sheets")
        self.candidates: list[tuple[str, str, jc.JudgeData]] = []
        self.ranks: list[jc.JudgeRank] = []
        self.make_judge: Callable[[str], str] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.problem)
        layout.addWidget(self.run_panel)
        layout.addWidget(self.tabs, 1)

    # ================================================================ building
    def _grade_tab(self) -> QWidget:
        tab = QWidget()
        self.rater_edit = QLineEdit()
        self.rater_edit.setToolTip("Your name: each person's ratings are kept separately.")
        self.rater_edit.setMaximumWidth(220)
        self.rater_edit.editingFinished.connect(self._rater_changed)
        self.progress_label = QLabel()
        top = QHBoxLayout()
        top.addWidget(QLabel("Rater:"))
        top.addWidget(self.rater_edit)
        top.addWidget(self.progress_label, 1)
        self.blind_check = QCheckBox("Grade blind")
        self.blind_check.setToolTip(
            "When on, EvalDesk asks before a rater sees the report, the ranking or the agreed "
            "grades (they show the judge's scores and other raters' grades). Whoever has seen "
            "them has their later grades marked “not blind” in every export.")
        self.blind_check.toggled.connect(self._blind_toggled)
        top.addWidget(self.blind_check)
        self.import_button = QPushButton("Import ratings…")
        self.import_button.setToolTip("Read ratings from an Excel file (columns rater, item, "
                                      "dimension, question, rating, note).")
        self.import_button.clicked.connect(self._ask_import)
        self.export_button = QPushButton("Export ratings…")
        self.export_button.clicked.connect(self._ask_export)
        top.addWidget(self.import_button)
        top.addWidget(self.export_button)

        self.item_label = QLabel()
        self.item_label.setObjectName("sectionTitle")
        self.text_view = QTextBrowser()
        self.text_view.setOpenLinks(False)
        self.form_box = QWidget()
        self.form = QFormLayout(self.form_box)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.note_edit = QPlainTextEdit()
        self.note_edit.setPlaceholderText("A note on this item (optional)")
        self.note_edit.setMaximumHeight(70)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.form_box)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        self.blind_label = hint_label(BLIND_TEXT)
        right_layout.addWidget(self.blind_label)
        right_layout.addWidget(scroll, 1)
        right_layout.addWidget(self.note_edit)
        self.save_button = QPushButton("Save and next")
        self.save_button.setObjectName("primaryButton")
        self.save_button.clicked.connect(self.save_and_next)
        self.skip_button = QPushButton("Skip")
        self.skip_button.setToolTip("Show another item; this one comes back later.")
        self.skip_button.clicked.connect(self.skip)
        buttons = QHBoxLayout()
        self.message = hint_label()
        buttons.addWidget(self.message, 1)
        buttons.addWidget(self.skip_button)
        buttons.addWidget(self.save_button)
        right_layout.addLayout(buttons)
        #: After each grade: how wide the judge-vs-people interval is now (widths only, so the
        #: rater stays blind); follows the report, computed in the background.
        self.precision_label = hint_label()
        right_layout.addWidget(self.precision_label)
        split = splitter(self.text_view, right, stretch=[3, 2])
        add_parts(QVBoxLayout(tab), [top, self.item_label, (split, 1)])
        return tab

    def _report_tab(self) -> QWidget:
        tab = QWidget()
        self.rater_combo = QComboBox()
        self.rater_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.rater_combo.setToolTip("Compare the judge with one person, or with the mean of "
                                    "everyone's ratings of an item.")
        self.rater_combo.currentIndexChanged.connect(self._report_rater_chosen)
        self.report_button = QPushButton("Export report…")
        self.report_button.clicked.connect(self._ask_report)
        self.again_button = QPushButton("Compute the report")
        self.again_button.setToolTip("The last computation was stopped or failed: start it "
                                     "again.")
        self.again_button.clicked.connect(self.refresh_report)
        self.again_button.hide()
        top = QHBoxLayout()
        top.addWidget(QLabel("Compare with:"))
        top.addWidget(self.rater_combo)
        top.addStretch(1)
        top.addWidget(self.again_button)
        top.addWidget(self.report_button)
        self.about_label = hint_label()
        self.warning = note_box()
        self.warning.hide()
        self.dims_model = FrameModel(DIMENSION_COLUMNS)
        self.questions_model = FrameModel(QUESTION_COLUMNS)
        self.gaps_model = FrameModel(GAP_COLUMNS)
        self.people_model = FrameModel(PEOPLE_COLUMNS)
        self.dims_view = table_view(self.dims_model, sortable=False)
        self.questions_view = table_view(self.questions_model, sortable=False)
        self.questions_view.doubleClicked.connect(self._question_clicked)
        self.gaps_view = table_view(self.gaps_model, sortable=False)
        self.people_view = table_view(self.people_model, sortable=False)
        self.gaps_title = QLabel("Biggest disagreements")
        self.report_tabs = QTabWidget()
        self.report_tabs.addTab(self.dims_view, "Per dimension")
        self.questions_tab = self.report_tabs.addTab(self.questions_view, "Per question")
        self.report_tabs.addTab(self._gaps_box(), "Disagreements")
        self.people_tab = self.report_tabs.addTab(self.people_view, "Between people")
        self.reliability_model = FrameModel(RELIABILITY_COLUMNS)
        self.reliability_view = table_view(self.reliability_model, sortable=False)
        self.reliability_text = QTextBrowser()
        self.reliability_text.setMaximumHeight(150)
        self.reliability_tab = self.report_tabs.addTab(
            _stacked(self.reliability_text, self.reliability_view), "Which number to report")
        self.corrected_model = FrameModel(CORRECTED_COLUMNS)
        self.corrected_view = table_view(self.corrected_model, sortable=False)
        self.corrected_text = QTextBrowser()
        self.corrected_text.setMaximumHeight(150)
        self.corrected_tab = self.report_tabs.addTab(
            _stacked(self.corrected_text, self.corrected_view), "Corrected mean")
        # the sentences above say it; the column stays in the exported workbook
        self.corrected_view.hideColumn(self.corrected_model.column_of("in_words"))
        layout = QVBoxLayout(tab)
        layout.addLayout(top)
        layout.addWidget(self.about_label)
        layout.addWidget(self.warning)
        layout.addWidget(self.report_tabs, 1)
        return tab

    def _pick_tab(self) -> QWidget:
        tab = QWidget()
        self.statistic_combo = QComboBox()
        self.statistic_combo.addItems(list(STATISTICS))
        self.statistic_combo.setToolTip("How agreement is measured (Kendall tau-b by default).")
        self.statistic_combo.currentIndexChanged.connect(lambda _i: self.refresh_ranking())
        self.use_button = QPushButton("Make the best one the project's judge")
        self.use_button.setObjectName("primaryButton")
        self.use_button.clicked.connect(self.use_best)
        top = QHBoxLayout()
        top.addWidget(QLabel("Measure agreement with:"))
        top.addWidget(self.statistic_combo)
        top.addStretch(1)
        top.addWidget(self.use_button)
        self.pick_about = hint_label()
        #: What "make the best one the project's judge" did, in words.
        self.done_label = QLabel()
        self.done_label.setObjectName("okText")
        self.done_label.setWordWrap(True)
        self.done_label.hide()
        self.rank_model = FrameModel(RANK_COLUMNS)
        self.rank_view = table_view(self.rank_model, sortable=False)
        layout = QVBoxLayout(tab)
        layout.addLayout(top)
        layout.addWidget(self.pick_about)
        layout.addWidget(self.done_label)
        layout.addWidget(self.rank_view, 1)
        return tab

    def set_candidates(self, candidates: list[tuple[str, str, jc.JudgeData]],
                       make_judge: Callable[[str], str] | None) -> None:
        """The models (or conditions) that scored the same items, ``(name, key, judge)``, and
        how to make one the project's judge (``make_judge(key)`` returns what was done)."""
        self.candidates, self.make_judge = list(candidates), make_judge
        self.refresh_ranking()

    def refresh_ranking(self) -> None:
        """Rank the candidates again (in the background) with the chosen statistic."""
        import pandas as pd

        if len(self.candidates) < 2:
            self.ranks = []
            self.rank_model.set_frame(pd.DataFrame(columns=[c.key for c in RANK_COLUMNS]))
            fit_columns(self.rank_view, stretch=self.rank_model.column_of("verdict"),
                        max_width=320)
            self.pick_about.setText(self.one_judge_text)
            self.use_button.setEnabled(False)
            return
        self.use_button.setEnabled(False)
        self.pick_about.setText("Ranking the judges…")
        self._start(report=False)

    def _show_ranks(self, ranks: list[jc.JudgeRank]) -> None:
        import pandas as pd

        self.ranks = ranks
        if len(self.candidates) < 2 or not ranks:
            return
        rows = []
        best = self.ranks[0]
        for k, r in enumerate(self.ranks, start=1):
            d = r.versus_best
            rows.append({
                "rank": k, "judge": r.name, "value": r.value, "n": r.n, "items": r.items,
                "difference": d.difference if d is not None else None,
                "ci_low": d.ci_low if d is not None else None,
                "ci_high": d.ci_high if d is not None else None,
                "verdict": (d.summary(best.name, r.name) if d is not None else
                            (_best_words(ranks) if r.value is not None
                             else f"Undefined: {r.reason}.")),
            })
        favoured = self.sampling.by_key if jc.fair_ranking(self.sampling) and self.sampling \
            else None
        for row, r in zip(rows, self.ranks, strict=True):
            if favoured is not None and r.key == favoured:
                row["verdict"] = ("Favoured by the graded items (chosen by its own highest and "
                                  "lowest scores): not comparable. " + row["verdict"])
            elif favoured is not None and self.sampling is not None:
                row["verdict"] = (f"Not a fair comparison (the graded items favour "
                                  f"{self.sampling.by}): " + row["verdict"])
        self.rank_model.set_frame(pd.DataFrame(rows, columns=[c.key for c in RANK_COLUMNS]))
        fit_columns(self.rank_view, stretch=self.rank_model.column_of("verdict"), max_width=320)
        who = "the mean of all raters" if self.chosen_rater() is None else self.chosen_rater()
        self.pick_about.setText(
            f"{count(len(self.ranks), 'judge')} ranked by {self.statistic_combo.currentText()} "
            f"with {who}, on the rated items all of them scored. Each is compared with the best "
            "by a paired bootstrap (2000 resamples): when the interval includes 0, the "
            "difference could be chance.")
        unfair = jc.fair_ranking(self.sampling)
        if unfair:  # the graded items favour one judge: no "best" to make the project's judge
            self.pick_about.setText(f"<b style='color:#b42318'>{html.escape(unfair)}</b> "
                                    + html.escape(self.pick_about.text()))
        self.use_button.setEnabled(best.value is not None and self.make_judge is not None
                                   and not unfair)

    @Slot()
    def use_best(self) -> str:
        """Make the best-ranked judge the project's judge (one click)."""
        if not self.ranks or self.ranks[0].value is None or self.make_judge is None:
            return ""
        done = self.make_judge(self.ranks[0].key)
        self.done_label.setText(done)
        self.done_label.show()
        return done

    def _gaps_box(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        self.gaps_back = QPushButton("Show the biggest disagreements")
        self.gaps_back.clicked.connect(self._show_biggest)
        self.gaps_back.hide()
        row = QHBoxLayout()
        row.addWidget(self.gaps_title, 1)
        row.addWidget(self.gaps_back)
        layout.addLayout(row)
        layout.addWidget(self.gaps_view, 1)
        return box

    # ================================================================ filling
    def set_judge(self, project: Any, judge: jc.JudgeData | None, problem: str = "") -> None:
        """Show ``judge``'s items to grade (None: ``problem`` says why there are none)."""
        self.project, self.judge = project, judge
        self._question_shown: tuple[str, str] | None = None
        self.problem.setText(problem)
        self.problem.setVisible(judge is None and bool(problem))
        self.tabs.setEnabled(judge is not None)
        if not self.rater_edit.text().strip():
            self.rater_edit.setText(self.who())
        self.skipped = []
        self.ratings = jc.load_ratings(project, self.method) if judge is not None else []
        self.adjudications = (jc.load_adjudications(project, self.method)
                              if judge is not None else [])
        self.seed = jc.grading_seed(project, self.method) if judge is not None else None
        self.blind_check.blockSignals(True)
        self.blind_check.setChecked(judge is not None
                                    and gp.blind_grading(project, self.method))
        self.blind_check.blockSignals(False)
        self._build_form()
        self.show_next()
        self._ratings_changed()
        if self.tabs.currentIndex() == self.raters_tab:
            self.raters.refresh()
        elif self.tabs.currentIndex() == self.agreed_tab:
            self.adjudication.refresh()

    def rater(self) -> str:
        return self.rater_edit.text().strip() or self.who()

    def _build_form(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.score_combos, self.answer_combos = {}, {}
        judge = self.judge
        if judge is None:
            return
        low, high = judge.scale
        for dim in judge.dimensions:
            combo = QComboBox()
            combo.addItem(NOT_RATED, None)
            for value in judge.grades():
                combo.addItem(f"{value:g}", float(value))
            combo.setToolTip(f"Your rating of {dim}, from {low} (worst) to {high} (best).")
            self.score_combos[dim] = combo
            self.form.addRow(f"<b>{html.escape(dim)}</b> ({low}-{high}):", combo)
            questions = judge.questions.get(dim, [])
            if questions:
                self.form.addRow(hint_label("Optional: answer the checklist questions too."))
            for number, question in enumerate(questions, start=1):
                answer = QComboBox()
                answer.addItem("—", None)
                answer.addItem("Yes", True)
                answer.addItem("No", False)
                answer.setToolTip(question)
                self.answer_combos[(dim, question)] = answer
                label = QLabel(f"{number}. {question}")
                label.setWordWrap(True)
                self.form.addRow(label, answer)

    def _mine(self, item_id: str) -> jc.Rating | None:
        rater = self.rater()
        return next((r for r in self.ratings if r.rater == rater and r.item_id == item_id), None)

    def show_item(self, item_id: str | None) -> None:
        """Show ``item_id`` for grading, filled with the rater's earlier rating of it."""
        self.current = item_id
        judge = self.judge
        item = judge.item(item_id) if judge is not None and item_id is not None else None
        self.save_button.setEnabled(item is not None)
        self.skip_button.setEnabled(item is not None)
        if item is None:
            self.item_label.setText("Every item is graded." if judge is not None else "")
            self.text_view.setHtml(
                "<p>You have graded every item the judge scored. See the <b>Report</b> tab, or "
                "ask a colleague to grade them too (each rater separately).</p>"
                if judge is not None else "")
            for combo in [*self.score_combos.values(), *self.answer_combos.values()]:
                combo.setCurrentIndex(0)
            self.note_edit.clear()
            self._show_progress()
            return
        self.item_label.setText(f"Item {item.item_id}")
        parts = []
        if item.context:
            parts.append(f"<p style='color:#52606d'><b>Context</b><br>"
                         f"{html.escape(item.context).replace(chr(10), '<br>')}</p>")
        parts.append(f"<p>{html.escape(item.text or '(no text)').replace(chr(10), '<br>')}</p>")
        self.text_view.setHtml("".join(parts))
        earlier = self._mine(item.item_id)
        for dim, combo in self.score_combos.items():
            value = earlier.scores.get(dim) if earlier else None
            index = combo.findData(value) if value is not None else 0
            combo.setCurrentIndex(max(index, 0))
        for (dim, question), combo in self.answer_combos.items():
            said = earlier.answers.get(dim, {}).get(question) if earlier else None
            combo.setCurrentIndex(0 if said is None else (1 if said else 2))
        self.note_edit.setPlainText(earlier.note if earlier else "")
        self._show_progress()

    def _show_progress(self) -> None:
        judge = self.judge
        if judge is None:
            self.progress_label.setText("")
            return
        rater = self.rater()
        gradable = [i for i in judge.items if not i.held_out]
        mine = {r.item_id for r in self.ratings if r.rater == rater and not r.empty}
        done = sum(1 for i in gradable if i.item_id in mine)
        text = f"{rater} graded {done} of {count(len(gradable), 'item')}"
        held = len(judge.items) - len(gradable)
        if held:
            text += (f" ({count(held, 'item')} not offered: shown to the model in a prompt, "
                     f"{judge.held_out_reason or 'so not a fair test'})")
        choice = gp.order_choice(self.project, self.method, create=False)
        if choice is not None and choice.order != gp.RANDOM:
            text += (". Items come in the order that reaches a usable interval with fewer "
                     "grades (half of them drawn at random): skip only when you must.")
        else:
            text += (f". Items come in a random order (seed {self.seed}): the ones graded "
                     "first are a fair sample, so skip only when you must.")
        sample = gp.drawn_sample(self.project, self.method)
        if sample is not None:
            text += f" The {sample.size} items drawn at random come first."
        plan = gp.load_plan(self.project, self.method)
        if plan is not None and plan.items_of(rater) is not None:
            text += f" You are offered only your {count(len(plan.items_of(rater) or ()), 'item')}."
        self.progress_label.setText(text)
        seen = jc.unblinded(self.project, self.method).get(rater)
        self.blind_label.setText(
            BLIND_TEXT if seen is None else
            f"{BLIND_TEXT} You saw the judge's scores or other raters' grades on {seen[:10]}: "
            "your grades are marked “not blind”.")
        self.progress_label.setWordWrap(True)

    @Slot()
    def show_next(self) -> None:
        if self.judge is None:
            self.show_item(None)
            return
        seed = self.seed or 0
        order = self.queue()
        item = jc.next_item(self.judge, self.ratings, self.rater(), skip=self.skipped,
                            seed=seed, order=order)
        if item is None and self.skipped:  # skipped ones come back at the end
            self.skipped = []
            item = jc.next_item(self.judge, self.ratings, self.rater(), seed=seed,
                                order=order)
        self.show_item(item)

    def queue(self) -> list[str] | None:
        """The items this rater is offered, in order: the project's order, a drawn sample
        first, only their own items when a plan hands items out (None: no project)."""
        if self.judge is None or self.project is None:
            return None
        choice = gp.order_choice(self.project, self.method)
        assert choice is not None
        return gp.rater_queue(self.judge, choice, rater=self.rater(),
                              plan=gp.load_plan(self.project, self.method),
                              sample=gp.drawn_sample(self.project, self.method))

    # ================================================================ blind grading
    @Slot(bool)
    def _blind_toggled(self, on: bool) -> None:
        if self.project is None:
            return
        gp.set_blind(self.project, self.method, on, who=self.rater())
        self.message.setText("Blind grading is on: EvalDesk asks before anyone sees the judge's "
                             "scores or other raters' grades." if on else
                             "Blind grading is off.")

    def confirm_unblind(self, what: str) -> bool:
        """Ask the rater before showing ``what`` while blind grading is on (tests replace
        this)."""
        answer = QMessageBox.question(
            self, "Leave blind grading?",
            f"The {what} shows the judge's scores and other raters' grades. If "
            f"{self.rater()} sees it, the grades {self.rater()} gives from now on are marked "
            "“not blind” in every export. Show it?")
        return answer == QMessageBox.StandardButton.Yes

    def may_see(self, what: str) -> bool:
        """Whether the rater may see ``what`` (the judge's scores, other raters' grades):
        asked first when blind grading is on; when shown, it is recorded so that their later
        grades are marked not blind."""
        if self.project is None or self.judge is None:
            return True
        rater = self.rater()
        if rater in jc.unblinded(self.project, self.method):
            return True
        if gp.blind_grading(self.project, self.method) and not self.confirm_unblind(what):
            return False
        jc.record_unblinding(self.project, self.method, rater, what)
        self._show_progress()
        return True

    @Slot()
    def skip(self) -> None:
        if self.current is not None:
            self.skipped.append(self.current)
        self.message.setText("")
        self.show_next()

    @Slot()
    def _rater_changed(self) -> None:
        self.skipped = []
        self.show_next()

    # ================================================================ saving
    def entered(self) -> jc.Rating | None:
        if self.current is None:
            return None
        scores = {dim: combo.currentData() for dim, combo in self.score_combos.items()
                  if combo.currentData() is not None}
        answers: dict[str, dict[str, bool]] = {}
        for (dim, question), combo in self.answer_combos.items():
            if combo.currentData() is not None:
                answers.setdefault(dim, {})[question] = combo.currentData()
        return jc.Rating(self.current, self.rater(), scores, answers,
                         self.note_edit.toPlainText().strip())

    @Slot()
    def save_and_next(self) -> bool:
        """Keep the rating in the project and show the next item (False: nothing entered, or
        it could not be saved; the message says why and the entries stay)."""
        rating = self.entered()
        if rating is None:
            return False
        if not rating.scores and not any(rating.answers.values()):
            self.message.setText("Choose a rating first (or press Skip).")
            return False
        try:
            jc.save_rating(self.project, self.method, rating)
        except Exception as exc:  # noqa: BLE001 - the person's entries stay on screen
            self.message.setText(f"Not saved: {exc}")
            return False
        self.message.setText(f"Saved your rating of item {rating.item_id}.")
        self.ratings = jc.load_ratings(self.project, self.method)
        self.rating_saved.emit(rating.item_id)
        self.show_next()
        self._ratings_changed()
        return True

    # ================================================================ files
    def ask_import_path(self) -> str | None:
        return open_file(self, "Import ratings")

    def ask_export_path(self) -> str | None:
        return save_file(self, "Export ratings", f"{self.method}-ratings.xlsx")

    def ask_report_path(self) -> str | None:
        return save_file(self, "Export the judge report", f"{self.method}-judge-report.xlsx")

    @Slot()
    def _ask_import(self) -> None:
        ask_then(self.ask_import_path, self.import_ratings)

    @Slot()
    def _ask_export(self) -> None:
        if not self.may_see("export of everyone's ratings"):  # it holds the others' grades
            self.message.setText("Still grading blind: the ratings were not exported.")
            return
        ask_then(self.ask_export_path, self.export_ratings)

    @Slot()
    def _ask_report(self) -> None:
        ask_then(self.ask_report_path, self.export_report)

    def import_ratings(self, path: str | Path) -> jc.RatingsRead | None:
        judge = self.judge
        if judge is None:
            return None
        got = jc.read_ratings(path, scale=judge.scale, items=[i.item_id for i in judge.items],
                              dimensions=judge.dimensions)
        if got.errors:
            self.message.setText("Not imported: " + " ".join(got.errors))
            return got
        name = Path(path).name
        for rating in got.ratings:  # made elsewhere: whether it was blind is not known
            jc.save_rating(self.project, self.method, rating,
                           who=f"{self.who()} (imported from {name})", blind=None)
        for agreed in got.adjudicated:  # rows whose origin says adjudicated stay agreed grades
            jc.save_adjudication(self.project, self.method, agreed.item_id,
                                 decided_by=agreed.rater, sources=agreed.sources,
                                 scores=agreed.scores, answers=agreed.answers,
                                 note=agreed.note)
        self.ratings = jc.load_ratings(self.project, self.method)
        self.adjudications = jc.load_adjudications(self.project, self.method)
        skipped = f"; {count(len(got.problems), 'row')} skipped: " + " ".join(
            got.problems[:3]) if got.problems else ""
        agreed_n = (f" and {count(len(got.adjudicated), 'agreed grade')}"
                    if got.adjudicated else "")
        self.message.setText(f"Imported {count(len(got.ratings), 'rating')}{agreed_n} from "
                             f"{name}{skipped}")
        self.show_next()
        self._ratings_changed()
        return got

    def export_ratings(self, path: str | Path) -> Path | None:
        path = xlsx_path(path)
        try:
            jc.export_ratings(path, self.ratings, adjudicated=self.adjudications,
                              readme=self._readme())
        except Exception as exc:  # noqa: BLE001 - TableError and OS errors say what to do
            self.message.setText(f"Not exported: {getattr(exc, 'message', exc)}")
            return None
        self.message.setText(f"Exported {count(len(self.ratings), 'rating')} to {path.name}.")
        return path

    def export_report(self, path: str | Path) -> Path | None:
        if self.ensure_report() is None:
            return None
        path = xlsx_path(path)
        try:
            jc.write_report(path, self.report, readme=self._readme())
        except Exception as exc:  # noqa: BLE001
            self.about_label.setText(f"Not exported: {getattr(exc, 'message', exc)}")
            return None
        self.about_label.setText(f"Report written to {path.name}.")
        return path

    def _readme(self) -> list[tuple[str, str]]:
        judge = self.judge
        return [("Exported by", self.who()),
                ("Judge", f"{judge.method}, model {judge.model or 'not recorded'}; "
                          f"{judge.source}" if judge else "")]

    # ================================================================ report
    def chosen_rater(self) -> str | None:
        data = self.rater_combo.currentData()
        return data or None

    def _ratings_changed(self) -> None:
        """Recompute the report in the background: it is on screen, or a person is grading
        and enough items are graded for an interval (the Grade tab then shows how wide it is
        now, widths only); else when it is next shown. Grading never waits for it (a request made while one
        runs starts when it ends, with the ratings of then)."""
        from desktop.judge_raters import MIN_FOR_WIDTH

        graded = len({r.item_id for r in self.ratings if not r.empty})
        if self.tabs.currentIndex() in (1, self.pick_tab) or (
                self.tabs.currentIndex() == 0 and graded >= MIN_FOR_WIDTH):
            self.refresh_report()
        else:
            self._stale = True
            if graded < MIN_FOR_WIDTH:
                self.precision_label.setText(
                    f"{count(graded, 'item')} graded: how precise the agreement with the judge "
                    f"is shows here from {MIN_FOR_WIDTH} graded items on.")

    #: What each tab after "Grade" shows, for the question asked before leaving blind grading.
    def _what_tab(self, index: int) -> str:
        return {1: "report", self.pick_tab: "ranking of the judges",
                self.agreed_tab: "view of the agreed grades"}.get(index, "")

    @Slot(int)
    def _tab_changed(self, index: int) -> None:
        if self.computing:  # the step's progress and Cancel, except under the grade form
            self.run_panel.setVisible(index != 0)
        what = self._what_tab(index)
        if index == self.raters_tab:  # counts only: nothing that unblinds
            self.raters.refresh()
            return
        if what and not self.may_see(what):
            self.tabs.blockSignals(True)
            self.tabs.setCurrentIndex(0)
            self.tabs.blockSignals(False)
            self.message.setText(f"Still grading blind: the {what} stays hidden.")
            return
        if index == self.agreed_tab:
            self.adjudication.refresh()
            return
        if index != 0 and self._stale:
            self.refresh_report()

    def ensure_report(self) -> jc.JudgeReport | None:
        """The report of the current ratings, computed here and now if they changed since
        (for an export or the checklist editor's badge, which need it at once)."""
        if (self._stale or self._report_pending or self.report is None) \
                and self.judge is not None:
            self._stale = False
            random, how = self.random_sample()
            self.report = jc.judge_report(self.judge, self.ratings, rater=self.chosen_rater(),
                                          order_seed=self.seed,
                                          adjudications=self.adjudications,
                                          random_items=random, random_how=how,
                                          candidates=jc.other_judges(self.judge,
                                                                     self.candidates))
            self._show_report(self.report)
        return self.report

    def random_sample(self) -> tuple[set[str] | None, str]:
        """The graded items drawn at random (the only ones that may correct the judge's mean)
        and how, from what the project records."""
        if self.judge is None or self.project is None:
            return None, ""
        graded = gp.graded_items(self.ratings, rater=self.chosen_rater(),
                                 adjudications=self.adjudications)
        found = gp.report_sample(self.project, self.method, self.judge, graded)
        return (found[0], found[1]) if found is not None else (None, "")

    def refresh_report(self) -> None:
        self._stale = False
        judge = self.judge
        raters = list(dict.fromkeys(r.rater for r in self.ratings if not r.empty))
        chosen = self.chosen_rater()
        self.rater_combo.blockSignals(True)
        self.rater_combo.clear()
        self.rater_combo.addItem(ALL, "")
        if self.adjudications:
            self.rater_combo.addItem(AGREED_CHOICE, jc.AGREED)
        for name in raters:
            self.rater_combo.addItem(name, name)
        self.rater_combo.setCurrentIndex(max(self.rater_combo.findData(chosen or ""), 0))
        self.rater_combo.blockSignals(False)
        if judge is None:
            self.report = None
            return
        self._start(report=True)

    # ================================================================ the background step
    def _start(self, *, report: bool) -> None:
        """Compute the report (``report``) and the ranking in the background. While a step
        runs, the request waits and starts when it ends (with the ratings of then)."""
        judge = self.judge
        if judge is None:
            return
        if self.computing:
            self._queued = bool(self._queued) or report
            return
        self.computing, self._queued, self._report_pending = True, None, report
        self.again_button.hide()
        self.run_panel.setVisible(self.tabs.currentIndex() != 0)  # grading: nothing moves
        if report:
            self.about_label.setText("Comparing the judge with the ratings…")
        method = STATISTICS[self.statistic_combo.currentText()]
        random, how = self.random_sample()
        step = partial(_check_step, judge, list(self.ratings), self.chosen_rater(),
                       list(self.candidates), method, report, self.seed,
                       list(self.adjudications), random, how)
        title = ("Comparing the judge with your ratings" if report
                 else "Ranking the judges")
        runner = self.runner or start_step
        runner(self.run_panel, step, title=title,
               on_done=partial(self._step_done, judge, report))

    def _step_done(self, judge: jc.JudgeData, report: bool, outcome: RunOutcome[Any]) -> None:
        self.computing = self._report_pending = False
        queued, self._queued = self._queued, None
        if judge is not self.judge:  # another judge is shown now: compute its report
            if self.judge is not None:
                self._start(report=True)
            return
        if outcome.finished and outcome.result is not None:
            result: jc.CheckResult = outcome.result
            if result.report is not None:
                self.report = result.report
                self._show_report(result.report)
            self.sampling = result.sampling
            self._show_ranks(result.ranks)
            self.run_panel.hide()
            self.precision_label.setText(self.raters.show_widths())
            self.report_changed.emit()
        else:
            if report:
                self._stale = True
                self.about_label.setText(
                    "The report was not finished (" + outcome.status + "). Press "
                    "“Compute the report” to start it again.")
                self.again_button.show()
            else:
                self.pick_about.setText("The ranking was not finished (" + outcome.status
                                        + "). Choose the statistic again to start it again.")
        if queued is not None and outcome.status != "stopped":  # Cancel stops both
            self._start(report=queued or self.report is None)

    def _show_report(self, report: jc.JudgeReport) -> None:
        frames = jc.report_frames(report)
        # the warning under 25 items is the banner above the tables, not repeated on each row
        warnings = {d.warning for d in report.dimensions if d.warning}
        frames["Dimensions"]["note"] = [
            "; ".join(p for p in str(n).split("; ") if p not in warnings)
            for n in frames["Dimensions"]["note"]]
        frames["Questions"]["fails_good_texts"] = [
            BADGE if flag else "" for flag in frames["Questions"]["fails_good_texts"]]
        self.dims_model.set_frame(frames["Dimensions"])
        self.questions_model.set_frame(frames["Questions"])
        self.gaps_model.set_frame(frames["Disagreements"])
        self.people_model.set_frame(frames["People"])
        self.reliability_model.set_frame(frames["Reliability"])
        corrected = frames["Corrected mean"].copy()
        corrected["narrower_by"] = [None if v is None or math.isnan(v) else float(v) * 100
                                    for v in corrected["narrower_by"]]
        self.corrected_model.set_frame(corrected)
        self._show_sentences(report)
        self._fit()
        self.gaps_title.setText(
            "Biggest disagreements (double-click a question on the Per question tab to see "
            "its own)" if report.questions else
            "Biggest disagreements: the items the two of you rank furthest apart"
            if report.judge_scale else "Biggest disagreements")
        self.gaps_back.hide()
        about = dict(report.describe())
        scale = " " + about["Judge's scale"] if "Judge's scale" in about else ""
        chosen = f" Graded items: {about['Graded items']}" if "Graded items" in about else ""
        self.about_label.setText(f"{about['Judge']}. {about['Ratings']}. {about['Held out']}"
                                 f"{scale}{chosen}")
        self.warning.setText(about.get("WARNING", ""))
        self.warning.setVisible("WARNING" in about)
        self.report_tabs.setTabVisible(self.questions_tab, bool(report.questions))
        self.report_tabs.setTabVisible(self.people_tab, bool(report.people))
        self.report_tabs.setTabVisible(self.reliability_tab, bool(report.agreement))
        self.report_tabs.setTabVisible(self.corrected_tab, bool(report.corrected))
        self.report_button.setEnabled(report.rated > 0)
        shown = self.__dict__.get("_question_shown")
        if shown is not None and shown[1] in {q.question for q in report.questions}:
            self._fill_question_gaps(*shown)  # the list asked for stays

    def _show_sentences(self, report: jc.JudgeReport) -> None:
        """The number to report for each comparison, and the corrected means, in words."""
        said = [b.sentence() for b in report.agreement]
        self.reliability_text.setHtml(
            "<p>Report each number with its 95% interval and its n (how many texts it rests "
            "on). The table below lists every statistic that fits; the sentence says which one "
            "to report.</p><ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in said)
            + "</ul>")
        lines = [c.sentence() for c in report.corrected]
        how = report.random_how or "none recorded"
        self.corrected_text.setHtml(
            "<p>The judge's mean beside its mean corrected by your grades on items drawn at "
            "random (valid whatever the judge's bias). Graded items drawn at random: "
            f"{html.escape(how)}.</p><ul>"
            + "".join(f"<li>{html.escape(t)}</li>" for t in lines) + "</ul>")

    @Slot(int)
    def _report_rater_chosen(self, _index: int) -> None:
        self.refresh_report()

    def show_question_disagreements(self, dimension: str, question: str) -> int:
        """Open the report on the items where the judge and the people answered ``question``
        differently (the texts the judge failed first). Returns how many. The list stays that
        question's when the report is recomputed meanwhile (the ⚠ mark opened the general list:
        the report computed in the background replaced it)."""
        if self.judge is None:
            return 0
        self._question_shown = (dimension, question)
        self.tabs.setCurrentIndex(1)  # shows the report first (recomputed if needed)
        if self.tabs.currentIndex() != 1:  # the rater stays blind
            return 0
        return self._fill_question_gaps(dimension, question)

    def _fill_question_gaps(self, dimension: str, question: str) -> int:
        import pandas as pd

        if self.judge is None:
            return 0
        rows = jc.question_disagreements(self.judge, self.ratings, dimension, question,
                                         rater=self.chosen_rater())
        frame = pd.DataFrame([{
            "item": g.item_id, "dimension": g.dimension,
            "judge_answer": "Yes" if g.judge else "No",
            "person_answer": "Yes" if g.person else "No",
            "judge_explanation": g.explanation, "text": g.text,
        } for g in rows], columns=["item", "dimension", "judge_answer", "person_answer",
                                   "judge_explanation", "text"])
        self.gaps_model.set_frame(frame)
        self._fit()
        self.gaps_title.setText(f"“{question}”: {count(len(rows), 'text')} where the judge "
                                "and the people answered differently (the judge said No to "
                                "good texts first)")
        self.gaps_back.show()
        self.report_tabs.setCurrentIndex(2)
        return len(rows)

    def _fit(self) -> None:
        """Columns sized to their contents; the question, the judge's words or the note take
        the spare width."""
        for view, model, key in ((self.dims_view, self.dims_model, "note"),
                                 (self.questions_view, self.questions_model, "question"),
                                 (self.gaps_view, self.gaps_model, "judge_explanation"),
                                 (self.people_view, self.people_model, "note"),
                                 (self.reliability_view, self.reliability_model, "meaning"),
                                 (self.corrected_view, self.corrected_model, "group")):
            fit_columns(view, stretch=model.column_of(key), max_width=320)

    @Slot()
    def _show_biggest(self) -> None:
        self._question_shown = None
        if self.report is not None:
            self._show_report(self.report)

    def _question_clicked(self, index: Any) -> None:
        row = index.row()
        self.show_question_disagreements(self.questions_model.value(row, "dimension"),
                                         self.questions_model.value(row, "question"))

    def flagged_questions(self) -> dict[tuple[str, str], float]:
        """(dimension, question) -> false-fail rate of the questions that fail good texts."""
        if self.ensure_report() is None:
            return {}
        assert self.report is not None
        return {(q.dimension, q.question): q.result.false_fail_rate or 0.0
                for q in self.report.fails_good}



def _stacked(*widgets: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for k, w in enumerate(widgets):
        layout.addWidget(w, 1 if k == len(widgets) - 1 else 0)
    return box


def _best_words(ranks: list[jc.JudgeRank]) -> str:
    """What the first of ``ranks`` is: the best, tied with others (same value), or only the
    highest when no difference to the others could be tested."""
    best = ranks[0].value
    tied = [r.name for r in ranks[1:] if r.value is not None and best is not None
            and abs(r.value - best) < 1e-12]
    tested = [r for r in ranks[1:] if r.versus_best is not None and r.versus_best.defined]
    if not tied and len(ranks) > 1 and not tested:
        why = next((r.versus_best.reason for r in ranks[1:]
                    if r.versus_best is not None and r.versus_best.reason), "")
        return ("The highest agreement, but no difference to the others could be tested"
                + (f" ({why})" if why else "") + ": it is not shown to be the best. Grade "
                "more items.")
    if not tied:
        return "The best agreement with the people's ratings."
    return (f"Tied with {', '.join(tied)} for the best agreement: first only by the order "
            "they are listed in; any of them may be chosen.")


def _check_step(judge: jc.JudgeData, ratings: list[jc.Rating], rater: str | None,
                candidates: list[tuple[str, str, jc.JudgeData]], method: str, report: bool,
                order_seed: int | None, adjudications: list[jc.Rating],
                random_items: set[str] | None, random_how: str, progress: Any,
                cancel: Any) -> jc.CheckResult:
    return jc.check_step(judge, ratings, rater=rater, candidates=candidates, method=method,
                         report=report, order_seed=order_seed, progress=progress,
                         cancel=cancel, adjudications=adjudications,
                         random_items=random_items, random_how=random_how)


class CheckJudgePageMixin:
    """What the three methods' "Check the judge" pages share (mix in before the method's page
    class): the panel under the page's title and intro, filled from the wizard's session
    (``judge_to_check``, ``judges_to_compare``), and making the best-matching candidate the
    project's judge (``choose_judge``): the same calls for every method. The page sets
    ``METHOD``, ``HEADING`` and ``INTRO``, and may extend :meth:`judge_chosen` to show the new
    choice on its other pages."""

    METHOD = ""
    HEADING = ""
    INTRO = ""

    def build_check(self) -> None:
        self.panel = JudgeCheckPanel(self.METHOD, lambda: self.wizard.who)
        self.panel.runner = self._run_in_background
        layout = page_layout(self, self.HEADING, self.INTRO)
        layout.addWidget(self.panel, 1)

    def refresh(self) -> None:
        session = self.wizard.session
        judge, problem = session.judge_to_check()
        self.panel.set_judge(self.wizard.project, judge, problem)
        self.panel.set_candidates(session.judges_to_compare(), self.make_judge)

    def _run_in_background(self, panel: Any, step: Any, *, title: str, on_done: Any) -> Any:
        """The report's step, through the wizard (stopped with it), without making it busy."""
        return self.wizard.run_step(panel, step, title=title, on_done=on_done, background=True)

    def make_judge(self, key: str) -> str:
        """Make the candidate ``key`` the project's judge (the session decides what that
        means for its method and saves it), then let the page show the new choice."""
        done = self.wizard.session.choose_judge(key)
        self.judge_chosen()
        return done

    def judge_chosen(self) -> None:
        """The session saved a new judge: show it on the wizard's other pages."""

    def reachable(self) -> bool:
        return self.wizard.run is not None

    def shows_next(self) -> bool:
        return False
