"""AQER's results page: workers, questions, AI answers, convergence, agreement, the conditions
compared ("Comparison"), "How many workers?" and warnings.

Only shows a :class:`core.aqer.session.StoredResult`; exporting is asked for with
:attr:`ResultsView.export_requested` (the wizard runs the export through the runner).
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QItemSelection, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.aqer.llm_answers import STYLE_WORDS, where_ai_answers_go
from core.aqer.model import scored_when
from core.aqer.session import CACHED_DEVICE
from core.stats import plain_agreement
from core.tables import is_missing
from core.words import count, plain_number
from desktop.aqer.charts import (
    Chart,
    draw_convergence,
    draw_distribution,
    draw_llm_comparison,
    draw_score_vs_grade,
    draw_scores,
    draw_workers_curve,
)
from desktop.glossary import PLAIN, explain
from desktop.run_panel import RunPanel
from desktop.views import Column, FrameModel, fit_rows, pin_row_names, table_view
from desktop.widgets import (
    alert_box,
    done_label,
    fit_columns,
    group_box,
    hbox,
    hint_label,
    note_box,
    pane,
    push_button,
    splitter,
)

__all__ = ["ResultsView", "describe_run", "table_view"]

WORKER_COLUMNS = [
    Column("rank", "Rank", "int", "1 = closest to the consensus.", "not scored"),
    Column("worker", "Worker"),
    Column("score", "Score", "score",
           "AQER's grade, 0 to 1: the best worker gets 1, the weakest 0.", "not scored"),
    Column("raw_score", "Mean similarity", "score",
           "Mean cosine similarity of the worker's answers with the consensus answers.",
           "not scored"),
    Column("weight", "Weight", "number",
           "The worker's say in the final consensus (all weights add up to 1).", "not scored"),
    Column("answered", "Answers", "int", "Answers that count in the score."),
    Column("blank", "Left blank", "int",
           "Questions this worker left blank; each counts as the weakest possible answer "
           "(similarity 0)."),
    Column("similarity_to_others", "Similarity to the others", "score",
           "Mean similarity of the worker's answers with the consensus of the OTHER workers: "
           "measured like an AI answer, which is never part of the consensus.", "not scored"),
    Column("simplified_score", "One-pass score", "score",
           "Simplified AQER: one pass with equal weights (the paper's ablation).", "not scored"),
    Column("rasa_skill", "RASA skill", "number",
           "How reliable RASA finds the worker (higher = better). " + PLAIN["RASA"],
           "not computed"),
    Column("f1", "F1", "score", PLAIN["F1"],
           "not computed"),
    Column("bleu1", "BLEU-1", "score", PLAIN["BLEU-1"],
           "not computed"),
    Column("expert_grade", "Expert grade", "number",
           "The grade your sheet gives the person, or the mean grade of their answers (for "
           "comparison only).", "no grade"),
    Column("is_llm", "AI", "bool", "Scored as an extra worker."),
    Column("note", "Note", "text",
           "“absent?”: the person answered nothing and is left out of the 0-1 scale (see "
           "Warnings; a box on the Columns page scores them as the weakest).", ""),
]
QUESTION_COLUMNS = [
    Column("question", "Question"),
    Column("mean_similarity", "Mean similarity", "score",
           "How close the answers are to the consensus on average: low = a harder or more "
           "open question.", "not scored"),
    Column("answered", "Answers", "int"),
    Column("best_response", "Answer closest to the class's consensus", "text",
           "The answer closest to the consensus (the paper's best-response selection). The "
           "consensus is what most answers say, not necessarily what is right.", "—"),
    Column("best_worker", "Written by", "text",
           "The worker whose answer is closest to the consensus.", "—"),
    Column("camps", "Answers split into camps", "text",
           "The answers split into camps of similar size (from the embeddings): the consensus "
           "sides with one camp (usually the larger) even when it is the common mistake. Check "
           "this question by hand.", ""),
]
ANSWER_COLUMNS = [
    Column("worker", "Worker"),
    Column("similarity", "Similarity", "score",
           "Cosine similarity of this answer with the question's consensus answer.",
           "not scored"),
    Column("response", "Answer", "text", "Left blank: counts as the weakest possible answer.",
           "(left blank)"),
]
LLM_SUMMARY_COLUMNS = [
    Column("model", "AI model"),
    Column("score_on_workers_scale", "Score on the workers' 0-1 scale", "score",
           "The score a worker with this AI's similarity (like for like) would have: compare "
           "it with the workers' Score.", "not computed"),
    Column("percentile_among_workers", "Above % of workers", "percent",
           "The share of workers whose similarity to the consensus of the OTHER workers is "
           "below this AI's: 50% means mid-pack, like for like.", "not computed"),
    Column("mean_score", "Mean similarity", "score",
           "Mean cosine similarity of the model's answers with the workers' consensus: the raw "
           "measure behind the two columns before, not a score on the workers' scale.",
           "not scored"),
    Column("scored", "Scored", "int"),
    Column("answered", "Answered", "int"),
    Column("blank", "Left blank", "int",
           "Questions this AI left blank; each counts as the weakest possible answer."),
]
WARNING_COLUMNS = [
    Column("topic", "Topic"),
    Column("message", "What happened"),
    Column("row", "Row", "int", "", ""),
]
AGREEMENT_COLUMNS = [
    Column("comparison", "Comparison", "text", "Which scores are compared with which grades."),
    Column("statistic", "Statistic", "text",
           "Pearson r: do the scores rise with the grades in a straight line? Spearman rho: "
           "the same for the ranking only. Kendall tau-b: the share of pairs of people put in "
           "the same order, minus those put in the opposite order. All run from -1 to 1; 0 "
           "means no agreement."),
    Column("value", "Value", "number", "The statistic: 1 = full agreement, 0 = none.",
           "undefined"),
    Column("ci_low", "95% CI low", "number",
           "The range the value would most likely fall in with other people of the same kind "
           "(bootstrap).", "—"),
    Column("ci_high", "95% CI high", "number", "", "—"),
    Column("p_value", "p", "p",
           "How likely a value this large would be if scores and grades were unrelated: "
           "below 0.05 is the usual bar.", "—"),
    Column("n", "n", "int", "How many people (or answers) the value is computed from.", "—"),
    Column("note", "Note"),
]


COMPARISON_COLUMNS = [
    Column("condition", "Condition", "text",
           "AQER is the default; the others are scored on the same answers (hover Settings)."),
    Column("pearson", "Pearson r", "number",
           "Agreement of the condition's worker scores with the expert grades, per worker "
           "(the paper's Table 3 statistic): 1 = the same order and spacing.", "undefined"),
    Column("pearson_ci_low", "95% CI low", "number", "Bootstrap interval of Pearson r.", "—"),
    Column("pearson_ci_high", "95% CI high", "number", "Bootstrap interval of Pearson r.", "—"),
    Column("spearman", "Spearman rho", "number",
           "Agreement of the rankings only (the paper's Online Appendix D).", "undefined"),
    Column("n", "Workers", "int", "Workers with both a score and a grade."),
    Column("difference", "Difference vs AQER", "number",
           "This condition's Pearson r minus AQER's, over the workers both scored: below 0 "
           "means it agrees less well with the grades than AQER.", "—"),
    Column("difference_ci_low", "Diff. CI low", "number",
           "Paired bootstrap interval of the difference: if it contains 0, the two may be "
           "equally good.", "—"),
    Column("difference_ci_high", "Diff. CI high", "number",
           "Paired bootstrap interval of the difference.", "—"),
    Column("p_value", "p", "p", "Two-sided p-value of the paired bootstrap test.", "—"),
    Column("paired_n", "Paired n", "int",
           "Workers in the paired test (at least 10 are needed).", "—"),
    Column("summary", "In words"),
    Column("settings", "Settings"),
]
CURVE_COLUMNS = [
    Column("workers", "Workers", "int", "Workers drawn at random for each panel."),
    Column("repetitions", "Panels", "int", "Random panels drawn of this size."),
    Column("scored", "Scored", "int",
           "Panels whose agreement could be computed (the others are left out of the mean)."),
    Column("mean", "Mean", "number", "Mean agreement over the panels.", "—"),
    Column("sd", "sd", "number", "Standard deviation over the panels (the spread).", "—"),
    Column("low", "Low", "number", "2.5% of the panels agreed less than this.", "—"),
    Column("high", "High", "number", "2.5% of the panels agreed more than this.", "—"),
    Column("min", "Lowest", "number", "The panel that agreed least.", "—"),
    Column("max", "Highest", "number", "The panel that agreed most.", "—"),
]


class ResultsView(QWidget):
    """The results of one AQER run, in tabs."""

    export_requested = Signal()
    curve_requested = Signal()
    condition_requested = Signal()
    model_condition_requested = Signal(object)
    """An embedding model to compare (a ``core.aqer.model.AqerCondition``; None: a folder, to
    be chosen)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stored: Any = None
        self.comparison: Any = None
        self.curve: Any = None

        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        #: Which run these results are: inputs, options, model, date.
        self.run_label = hint_label()
        self.run_label.setTextFormat(Qt.TextFormat.RichText)
        self.run_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.export_button = QPushButton("Export to Excel…")
        self.export_button.setObjectName("primaryButton")
        self.export_button.setToolTip(
            "Save every table below in one Excel workbook (the same workbook as the "
            "'evaldesk aqer' command), with a Read me sheet on how it was computed."
        )
        self.export_button.clicked.connect(self.export_requested)
        self.export_panel = RunPanel()
        self.export_panel.hide()
        self.export_message = done_label()

        top = QHBoxLayout()
        words = QVBoxLayout()
        words.setSpacing(2)
        words.addWidget(self.summary)
        words.addWidget(self.run_label)
        top.addLayout(words, 1)
        top.addWidget(self.export_button, 0, Qt.AlignmentFlag.AlignTop)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(False)
        self.tabs.addTab(self._workers_tab(), "Workers")
        self.tabs.addTab(self._questions_tab(), "Questions")
        self.llm_tab = self._llm_tab()
        self.tabs.addTab(self.llm_tab, "AI answers")
        self.tabs.addTab(self._convergence_tab(), "Convergence")
        self.agreement_tab = self._agreement_tab()
        self.tabs.addTab(self.agreement_tab, "Agreement with grades")
        self.comparison_tab = self._comparison_tab()
        self.tabs.addTab(self.comparison_tab, "Comparison")
        self.curve_tab = self._curve_tab()
        self.tabs.addTab(self.curve_tab, "How many workers?")
        self.warnings_tab = self._warnings_tab()
        self.tabs.addTab(self.warnings_tab, "Warnings")
        self.tabs.currentChanged.connect(self._tab_changed)
        self._drawn: set[int] = set()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.export_panel)
        layout.addWidget(self.export_message)
        layout.addWidget(self.tabs, 1)

    # -- tabs ---------------------------------------------------------------------------------
    def _workers_tab(self) -> QWidget:
        self.workers_model = FrameModel(WORKER_COLUMNS, self)
        self.workers_view = table_view(self.workers_model)
        pin_row_names(self.workers_view, self.workers_model, "worker")
        self.score_chart = Chart(220)
        self.distribution_chart = Chart(180)
        charts = splitter(self.score_chart, self.distribution_chart,
                          orientation=Qt.Orientation.Vertical, stretch=[3, 2])
        split = splitter(self.workers_view, charts, sizes=[640, 440], stretch=[3, 2])
        about = hint_label(
            "One row per worker, best first. Click a column title to sort by it. The score is "
            "0 to 1 (best 1, weakest 0); the baselines RASA, F1 and BLEU-1 are other ways of "
            "judging the same answers, for comparison."
        )
        about.setToolTip(explain("RASA", "F1", "BLEU-1"))
        return pane(about, (split, 1), margins=None)

    def _questions_tab(self) -> QWidget:
        self.questions_model = FrameModel(QUESTION_COLUMNS, self)
        self.questions_view = table_view(self.questions_model)
        self.questions_view.selectionModel().selectionChanged.connect(self._question_selected)
        self.question_title = QLabel("Choose a question above to see every answer to it.")
        self.question_title.setObjectName("sectionTitle")
        self.question_title.setWordWrap(True)
        self.best_label = note_box()
        self.best_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.best_label.hide()
        self.answers_model = FrameModel(ANSWER_COLUMNS, self)
        self.answers_view = table_view(self.answers_model)
        self.answers_view.setWordWrap(True)
        detail = pane(self.question_title, self.best_label, (self.answers_view, 1))
        detail.layout().setContentsMargins(0, 6, 0, 0)
        split = splitter(self.questions_view, detail, sizes=[220, 320],
                         orientation=Qt.Orientation.Vertical)
        return pane(hint_label(
            "Per question: how close the answers came to the consensus (a low mean similarity "
            "means a harder or more open question) and the answer closest to the consensus. "
            "Choose a question to see every answer with its similarity."
        ), (split, 1), margins=None)

    def _llm_tab(self) -> QWidget:
        self.llm_summary_model = FrameModel(LLM_SUMMARY_COLUMNS, self)
        self.llm_summary_view = table_view(self.llm_summary_model)
        self.llm_questions_model = FrameModel([Column("question", "Question")], self)
        self.llm_questions_view = table_view(self.llm_questions_model)
        self.llm_chart = Chart(260)
        self.llm_empty = QLabel(
            "There are no AI answers in this input. To compare an AI with the workers, add its "
            "answers: in a sheet with a row per answer, mark its rows in a column called "
            "“is_llm” (or name the model in a column called “model”), or give each AI a column "
            "beside the question; in a sheet with a column per worker, tick the AI's column "
            "on the Columns page."
        )
        self.llm_empty.setObjectName("noteBox")
        self.llm_empty.setWordWrap(True)
        left = pane("<b>Each AI model on the workers' scale</b>", self.llm_summary_view,
                    "<b>Similarity per question</b> (of each answer to the consensus; "
                    "the workers' column is like for like)", (self.llm_questions_view, 1))
        split = splitter(left, self.llm_chart, sizes=[600, 480])
        self.llm_content = split
        about = hint_label(
            "Each AI answer is compared with the consensus built from the workers only (the AI "
            "never shapes it), by cosine similarity. A worker's own answer is part of the "
            "consensus, which flatters the workers, so they are measured like for like: each "
            "against the consensus of the other workers. “Above % of workers” says where each "
            "AI stands on that measure (50% = mid-pack), and “Score on the workers' 0-1 "
            "scale” is the score a worker with the AI's similarity would have. "
            + STYLE_WORDS
        )
        about.setToolTip(explain("cosine"))
        return pane(about, self.llm_empty, (split, 1), margins=None)

    def _convergence_tab(self) -> QWidget:
        self.convergence_text = QLabel()
        self.convergence_text.setWordWrap(True)
        self.convergence_chart = Chart(260)
        self.convergence_chart.setToolTip(explain("RMSE"))
        return pane(hint_label(
            "AQER repeats two steps: build a consensus answer per question from the workers' "
            "answers (weighted by their scores), then score every worker against it. It stops "
            "when the weights hardly change any more."
        ), self.convergence_text, (self.convergence_chart, 1), margins=None)

    def _agreement_tab(self) -> QWidget:
        self.agreement_model = FrameModel(AGREEMENT_COLUMNS, self)
        self.agreement_view = table_view(self.agreement_model)
        self.agreement_headline = QLabel()
        self.agreement_headline.setObjectName("intro")
        self.agreement_headline.setWordWrap(True)
        self.agreement_scatter = Chart(minimum_height=230)
        details = QGroupBox("Details: every statistic (hover a column title for what it means)")
        details.setCheckable(True)
        details.setChecked(False)
        details.setFlat(True)
        dl = QVBoxLayout(details)
        dl.addWidget(self.agreement_view, 1)
        details.toggled.connect(self.agreement_view.setVisible)
        self.agreement_view.setVisible(False)
        self.agreement_details = details
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(self.agreement_headline)
        layout.addWidget(self.agreement_scatter, 3)
        layout.addWidget(details)
        details.toggled.connect(lambda on: layout.setStretchFactor(details, 2 if on else 0))
        layout.addWidget(hint_label(
            "How well each method's scores agree with the expert grades in your sheet: per "
            "worker (the person's own grade when you gave one per person, else the mean grade "
            "of the answers AQER scored) and, when answers have grades, per answer. Rows starting "
            "“AI answers” compare the AI answers' scores with the grades given to them. "
            "'undefined' means the statistic cannot be computed (for example every grade is the "
            "same, or fewer than 3 values)."
        ))
        return page

    def _show_agreement(self, result: Any) -> str:
        """The agreement tab's headline and scatter; returns the headline ("" without grades)."""
        frame = result.agreement
        rows = frame[frame["comparison"].astype(str).str.startswith("AQER score vs")
                     & (frame["statistic"] == "Pearson r")] if len(frame) else frame
        if not len(rows):
            self.agreement_headline.setText("")
            return ""
        row = rows.iloc[0]

        def num(key: str) -> float | None:
            value = row.get(key)
            return None if is_missing(value) else float(value)

        headline = plain_agreement(
            num("value"), n=int(row["n"]) if row.get("n") == row.get("n") else 0,
            who="AQER", against="your grades", units="people", ci_low=num("ci_low"),
            ci_high=num("ci_high"), p_value=num("p_value"),
            reason=str(row.get("note") or "").removeprefix("Not computed: "))
        self.agreement_headline.setText(headline)
        workers = result.workers
        if "expert_grade" in workers and "score" in workers:
            keep = workers[workers["score"].notna() & workers["expert_grade"].notna()]
            if "is_llm" in keep:
                keep = keep[~keep["is_llm"].fillna(False).astype(bool)]
            self.agreement_scatter.draw(lambda fig: draw_score_vs_grade(
                fig, keep["score"].astype(float).tolist(),
                keep["expert_grade"].astype(float).tolist(),
                keep["worker"].astype(str).tolist()))
        return headline

    def _comparison_tab(self) -> QWidget:
        self.comparison_model = FrameModel(COMPARISON_COLUMNS, self)
        self.comparison_view = table_view(self.comparison_model)
        self.comparison_empty = note_box()
        self.comparison_empty.hide()
        self.comparison_note = QLabel()
        self.comparison_note.setObjectName("hint")
        self.comparison_note.setWordWrap(True)
        self.comparison_words = QLabel()
        self.comparison_words.setWordWrap(True)
        self.comparison_words.setTextFormat(Qt.TextFormat.RichText)
        self.comparison_words.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse)
        for label in (self.comparison_note, self.comparison_words):
            label.setToolTip(explain("Pearson", "Spearman", "bootstrap", "RASA", "F1",
                                     "BLEU-1"))
        self.condition_button = push_button(
            "Also score with blank answers counted the other way",
            "Adds a condition: AQER on the same answers with the other blank-answer rule, kept "
            "in the project and compared with AQER here and in the export. The answers are "
            "not embedded again.", self.condition_requested)
        self.model_button = push_button(
            "Also score with another embedding model",
            "Adds a condition: AQER on the same answers with another embedding model (the "
            "program that turns each answer into numbers), kept in the project and compared "
            "with AQER here and in the export. The answers are embedded once by that model.")
        self.model_menu = QMenu(self.model_button)
        self.model_button.setMenu(self.model_menu)
        self.set_model_choices([])
        self.model_problem = alert_box()
        self.model_problem.hide()
        self.condition_panel = RunPanel()
        self.condition_panel.hide()
        self.comparison_words_box = group_box("In words", self.comparison_words)
        return pane(hint_label(
            "Is AQER better than the simple alternatives on your data? Each row scores the same "
            "workers another way; each is compared with your expert grades, and with AQER by a "
            "paired test. A difference whose interval contains 0 may be no difference at all."
        ), self.comparison_empty, (self.comparison_view, 1), self.comparison_words_box,
            self.comparison_note, hbox(self.condition_button, self.model_button, 1),
            self.model_problem, self.condition_panel, margins=None)

    def set_model_choices(self, choices: list[Any]) -> None:
        """The embedding models offered (``core.aqer.model.AqerCondition``), then "a model
        folder on this computer"."""
        self.model_menu.clear()
        for condition in choices:
            name = {"torch": "PyTorch", "onnx": "ONNX Runtime"}.get(
                condition.embedding_backend or "", "")
            action = self.model_menu.addAction(
                f"The built-in all-MiniLM-L6-v2 through {name}" if name and
                not condition.embedding_model else condition.label())
            action.setToolTip("The same model run by another program: its numbers differ "
                              "only in the last decimals, so the scores should agree.")
            action.triggered.connect(
                lambda _checked=False, c=condition: self.model_condition_requested.emit(c))
        folder = self.model_menu.addAction("A sentence-transformers model folder on this "
                                           "computer…")
        folder.triggered.connect(lambda _checked=False: self.model_condition_requested.emit(None))

    def _curve_tab(self) -> QWidget:
        self.curve_button = QPushButton("Draw panels and score them")
        self.curve_button.setToolTip(
            "Runs AQER once per random panel (25 panels per size, seeded): this takes a while "
            "on large sheets. The answers are embedded only once.")
        self.curve_button.clicked.connect(self.curve_requested)
        self.curve_panel = RunPanel()
        self.curve_panel.hide()
        self.curve_text = QLabel("Not computed yet for these results.")
        self.curve_text.setWordWrap(True)
        self.curve_model = FrameModel(CURVE_COLUMNS, self)
        self.curve_view = table_view(self.curve_model)
        self.curve_chart = Chart(300)
        self.curve_chart.setToolTip(explain("Pearson", "Spearman"))
        split = splitter(self.curve_chart, self.curve_view, sizes=[640, 560])
        return pane(hint_label(
            "How many workers do you need? EvalDesk draws 3, 5, 10, 15, ... of your workers at "
            "random, 25 times each, scores each small panel on its own, and checks how well its "
            "scores agree with the expert grades (without grades: with the ranking of all your "
            "workers). Where the line flattens, more workers add little."
        ), hbox(self.curve_button, (self.curve_text, 1)), self.curve_panel, (split, 1),
            margins=None)

    def set_comparison(self, table: Any) -> None:
        """Show a :class:`core.aqer.comparison.Comparison` (None: being computed)."""
        self.comparison = table
        has = table is not None and len(table.frame) > 0
        self.condition_button.setVisible(has)
        self.model_button.setVisible(has)
        self.condition_panel.hide()
        self.comparison_view.setVisible(has)
        self.comparison_words_box.setVisible(has)
        self.comparison_empty.setVisible(not has)
        if not has:
            self.comparison_empty.setText(
                table.reason if table is not None
                else "Comparing the conditions (bootstrap intervals and paired tests)…")
            self.comparison_model.set_frame(None)
            self.comparison_note.setText("")
            return
        self.comparison_model.set_frame(table.frame)
        fit_columns(self.comparison_view, stretch=self.comparison_model.column_of("summary"),
                    max_width=260)
        self.comparison_words.setText("<br>".join(
            _escape(text) for text in table.frame["summary"]))
        self.comparison_note.setText(table.note)

    def set_curve(self, curve: Any) -> None:
        """Show a :class:`core.aqer.comparison.WorkersCurve` (None: not computed yet)."""
        self.curve = curve
        self.curve_panel.hide()
        self.curve_button.setEnabled(True)
        if curve is None:
            self.curve_text.setText("Not computed yet for these results.")
            self.curve_button.setText("Draw panels and score them")
            self.curve_model.set_frame(None)
            if self.curve_chart.canvas is not None:
                self.curve_chart.draw(lambda fig: None)
            return
        self.curve_button.setText("Draw them again")
        self.curve_text.setText(curve.describe() + (f" {curve.note}" if curve.note else ""))
        self.curve_model.set_frame(curve.frame)
        fit_columns(self.curve_view, max_width=90)
        frame = curve.frame
        values = {int(k): list(v) for k, v in curve.values.items()}
        means = [float("nan") if m is None else float(m) for m in frame["mean"]]
        lows = [float("nan") if m is None else float(m) for m in frame["low"]]
        highs = [float("nan") if m is None else float(m) for m in frame["high"]]
        self.curve_chart.draw(lambda fig: draw_workers_curve(
            fig, values, means, lows, highs, curve.statistic, curve.against))

    def _warnings_tab(self) -> QWidget:
        self.warnings_model = FrameModel(WARNING_COLUMNS, self)
        self.warnings_view = table_view(self.warnings_model, stretch=1)
        self.warnings_view.setWordWrap(True)
        return pane(hint_label(
            "Everything that was left out or is worth checking, with the row of your sheet it "
            "concerns. None of these stopped the run."
        ), (self.warnings_view, 1), margins=None)

    # -- filling ------------------------------------------------------------------------------
    def set_result(self, stored: Any, comparison: Any = None, curve: Any = None) -> None:
        """Show ``stored`` (a :class:`core.aqer.session.StoredResult`), its Comparison table
        (:func:`core.aqer.session.comparison`; None: still being computed, see
        :meth:`set_comparison`) and its workers curve (None: not computed)."""
        self.stored = stored
        result = stored.result
        self._drawn.clear()
        self.export_message.hide()
        self.export_panel.hide()

        workers = result.workers
        scored = workers[workers["score"].notna()] if "score" in workers else workers.iloc[:0]
        n_questions = int(result.questions["mean_similarity"].notna().sum())
        if not result.discriminates:
            how = "the answers do not discriminate between workers (every worker tied)"
        elif result.converged:
            how = f"the scores settled after {count(result.iterations, 'round')}"
        else:
            how = f"the scores had not fully settled after {count(result.iterations, 'round')}"
        best = ""
        if len(scored):
            top = scored.sort_values("score", ascending=False).iloc[0]
            best = f" Closest to the consensus: <b>{top['worker']}</b> ({top['score']:.2f})."
        llm = ""
        if len(result.llm_summary):
            parts = [_ai_words(row) for _, row in result.llm_summary.iterrows()]
            more = len(parts) - 3
            shown = "; ".join(parts[:3]) + (f"; and {more} more (AI answers tab)"
                                             if more > 0 else "")
            llm = f" AI answers, on the workers' 0-1 scale: {shown}."
        absent = [n.worker for n in result.warnings if n.topic == "Absent?"]
        if absent:
            llm += (f" <b>{count(len(absent), 'person')} answered nothing</b> (absent?) and "
                    f"{'is' if len(absent) == 1 else 'are'} not scored.")
        split = [c for c in result.questions.get("camps", []) if isinstance(c, str) and c]
        if split:
            llm += (f" <span style='color:#8a5a00'><b>{count(len(split), 'question')}</b> "
                    f"split{'s' if len(split) == 1 else ''} the answers into camps of similar "
                    "size: check by hand (Questions tab).</span>")
        warn = (
            f" <span style='color:#8a5a00'>{len(result.warnings)} warning(s): see the "
            "Warnings tab.</span>"
            if result.warnings
            else ""
        )
        model = result.embedding_model or "the embedding model"
        self.summary.setText(
            f"<b>{count(len(scored), 'worker')}</b> scored on "
            f"<b>{count(n_questions, 'question')}</b> with {model}; {how}.{best}{llm}{warn}"
        )
        self.run_label.setText(describe_run(stored))

        self.workers_model.set_frame(workers)
        self.workers_view.sortByColumn(
            self.workers_model.column_of("score"), Qt.SortOrder.DescendingOrder
        )
        fit_columns(self.workers_view)

        self.questions_model.set_frame(result.questions)
        # every title whole ("Answer closest to the class's consensus"); the camps take the rest
        fit_columns(self.questions_view, max_width=320)
        self.questions_view.horizontalHeader().setStretchLastSection(True)
        self.answers_model.set_rows([])
        self.best_label.hide()
        if self.questions_model.rowCount():
            self.questions_view.selectRow(0)

        self._fill_llm(result)
        self.convergence_text.setText(self._convergence_words(result))
        self.agreement_model.set_frame(result.agreement)
        fit_columns(self.agreement_view, stretch=self.agreement_model.column_of("note"),
                    max_width=430)
        headline = self._show_agreement(result)
        if headline:  # the short form here; the whole sentence opens the agreement tab
            short = headline.split(" (")[0].split(". ")[0].rstrip(".")
            if "too few" in headline:
                short += ", too few people to be sure"
            self.summary.setText(f"{self.summary.text()}<br><b>{short}.</b> See “Agreement "
                                 "with grades”.")
        self.tabs.setTabVisible(self.tabs.indexOf(self.agreement_tab), len(result.agreement) > 0)
        self.set_comparison(comparison)
        self.set_curve(curve)
        self.warnings_model.set_frame(result.warnings_frame())
        fit_columns(self.warnings_view, stretch=1, max_width=300)
        fit_rows(self.warnings_view)
        self.tabs.setTabText(self.tabs.indexOf(self.warnings_tab),
                             f"Warnings ({len(result.warnings)})")
        self._tab_changed(self.tabs.currentIndex())

    def _fill_llm(self, result: Any) -> None:
        has_llm = len(result.llm_answers) > 0
        layout = str((self.stored.inputs or {}).get("Layout", "")) if self.stored else ""
        self.llm_empty.setText(
            "There are no AI answers in this input. To compare an AI with the workers, "
            + where_ai_answers_go(layout) + ".")
        self.llm_empty.setVisible(not has_llm)
        self.llm_content.setVisible(has_llm)
        self.llm_summary_model.set_frame(result.llm_summary)
        self.llm_summary_view.horizontalHeader().setStretchLastSection(False)
        fit_columns(self.llm_summary_view)
        self.llm_summary_view.setMaximumHeight(
            self.llm_summary_view.horizontalHeader().height()
            + self.llm_summary_view.verticalHeader().defaultSectionSize()
            * max(2, min(6, len(result.llm_summary)))
            + self.llm_summary_view.horizontalScrollBar().sizeHint().height() + 4)
        models = list(dict.fromkeys(result.llm_answers["model"])) if has_llm else []
        columns = [
            Column("question", "Question"),
            Column("workers", "Workers' mean (like for like)", "score",
                   "The workers' mean similarity on this question to the consensus of the OTHER "
                   "workers: measured the way the AI answers are.", "not scored"),
        ] + [Column(f"model:{m}", m, "score", f"Similarity of {m}'s answer to the consensus.",
                    "not scored") for m in models]
        self.llm_questions_model.columns = columns
        scores: dict[tuple[str, str], Any] = {}
        like_for_like: dict[str, Any] = {}
        for _, row in result.llm_answers.iterrows():
            scores[(row["model"], row["question"])] = row["score"]
            if "workers_similarity_to_others" in row:
                like_for_like[row["question"]] = row["workers_similarity_to_others"]
        rows = []
        for _, q in result.questions.iterrows():
            if not any((m, q["question"]) in scores for m in models):
                continue
            rows.append([q["question"], like_for_like.get(q["question"])]
                        + [scores.get((m, q["question"])) for m in models])
        self.llm_questions_model.set_rows(rows)
        self.llm_questions_view.horizontalHeader().setStretchLastSection(False)
        fit_columns(self.llm_questions_view, stretch=0)

    @staticmethod
    def _convergence_words(result: Any) -> str:
        s = result.settings
        if not result.discriminates:
            return ("Every worker got the same similarity to the consensus, so the answers do not "
                    "tell the workers apart; AQER stopped and gave everyone the same score.")
        if result.converged:
            return (f"The weights settled after {count(result.iterations, 'round')}: their change fell "
                    f"below {plain_number(s.tolerance)} (the limit was {s.max_iterations} "
                    "rounds).")
        return (f"The weights still changed after {result.iterations} round(s) (the limit). The "
                "scores are those of the last round; allow more rounds on the Embedding model "
                "page to let them settle.")

    # -- lazy charts --------------------------------------------------------------------------
    @Slot(int)
    def _tab_changed(self, index: int) -> None:
        """Draw a tab's charts the first time it is shown (matplotlib is imported then)."""
        if self.stored is None or index in self._drawn:
            return
        self._drawn.add(index)
        result = self.stored.result
        widget = self.tabs.widget(index)
        if widget is self.tabs.widget(0):
            scored = result.workers[result.workers["score"].notna()]
            names, scores = scored["worker"].tolist(), scored["score"].astype(float).tolist()
            self.score_chart.draw(lambda fig: draw_scores(fig, names, scores))
            self.distribution_chart.draw(lambda fig: draw_distribution(fig, scores))
        elif widget is self.llm_tab and len(result.llm_summary):
            # Like for like: the workers against the consensus of the others, as the AIs are.
            column = ("similarity_to_others" if "similarity_to_others" in result.workers
                      else "raw_score")
            scored = result.workers[result.workers[column].notna()]
            people = list(zip(scored["worker"], scored[column].astype(float)))
            models = [
                (row["model"], float(row["mean_score"]))
                for _, row in result.llm_summary.iterrows()
                if row["mean_score"] is not None and row["mean_score"] == row["mean_score"]
            ]
            self.llm_chart.draw(lambda fig: draw_llm_comparison(fig, people, models))
        elif widget is self.tabs.widget(3):
            trace = result.convergence
            its, rmse = trace["iteration"].astype(int).tolist(), trace["rmse"].tolist()
            tol = result.settings.tolerance
            self.convergence_chart.draw(lambda fig: draw_convergence(fig, its, rmse, tol))

    # -- the question view --------------------------------------------------------------------
    @Slot(QItemSelection, QItemSelection)
    def _question_selected(self, *_args: Any) -> None:
        rows = self.questions_view.selectionModel().selectedRows()
        if not rows or self.stored is None:
            return
        proxy = self.questions_view.model()
        source_row = proxy.mapToSource(rows[0]).row()
        self.show_question(self.questions_model.value(source_row, "question"))

    def show_question(self, question: str) -> None:
        """Show every answer to ``question`` with its similarity, closest first."""
        result = self.stored.result
        self.question_title.setText(question)
        row = result.questions[result.questions["question"] == question]
        best = row.iloc[0] if len(row) else None
        if best is not None and isinstance(best["best_response"], str):
            camps = best.get("camps")
            warning = (
                f"<br><span style='color:#8a5a00'><b>The answers split into camps of similar "
                f"size:</b> {_escape(camps)}. The consensus sides with one camp (usually the "
                "larger) whether or not it is right: check this question by hand.</span>"
                if isinstance(camps, str) and camps else "")
            self.best_label.setText(
                f"<b>Answer closest to the class's consensus</b> (by "
                f"{_escape(best['best_worker'])}, mean similarity of all answers "
                f"{best['mean_similarity']:.3f}):<br>{_escape(best['best_response'])}{warning}"
            )
        else:
            self.best_label.setText(
                "<b>Not scored:</b> fewer than 2 workers answered this question, so there is no "
                "consensus to compare with."
            )
        self.best_label.show()
        answers = result.responses[result.responses["question"] == question]
        self.answers_model.set_frame(answers)
        self.answers_view.sortByColumn(self.answers_model.column_of("similarity"),
                                       Qt.SortOrder.DescendingOrder)
        fit_columns(self.answers_view, stretch=self.answers_model.column_of("response"))
        fit_rows(self.answers_view)

    def show_export(self, path: str) -> None:
        self.export_message.setText(f"Saved the workbook as {path}")
        self.export_message.show()


def _ai_words(row: Any) -> str:
    """ "GPT 0.81 (above 55% of the workers)" for the summary line: on the workers' 0-1
    scale, never the raw similarity (a worker's score beside it is on that scale)."""
    mean, place = _number(row["mean_score"]), _number(row.get("percentile_among_workers"))
    scale = _number(row.get("score_on_workers_scale"))
    if mean is None:
        return f"{row['model']} not scored"
    words = f"{row['model']} {scale:.2f}" if scale is not None else f"{row['model']}"
    if place is not None:
        words += (" (above every worker)" if place >= 100 else
                  " (below every worker)" if place <= 0 else
                  f" (above {place:.0f}% of the workers)")
    return words


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def describe_run(stored: Any) -> str:
    """Which run a result is, in plain words: inputs, options, embedding model and date."""
    result, inputs, s = stored.result, stored.inputs, stored.result.settings
    source = inputs.get("Input file") or inputs.get("Read from") or "the answers"
    where = []
    if inputs.get("Sheet"):
        where.append(f"sheet “{inputs['Sheet']}”")
    if inputs.get("Layout"):
        where.append(inputs["Layout"])
    answers = inputs.get("Answers", "")
    blank = ("blank answers count as the weakest answer" if result.blank_rule == "worst"
             else "blank answers do not count")
    blank += " (your choice)" if result.blank_reason.startswith("Chosen") else (
        " (decided from the data)" if result.blank_reason else "")
    ai = ("AI answers scored as extra workers" if s.llm_as_workers
          else "AI answers compared with the workers like for like")
    when = scored_when(result.computed_at) if result.computed_at else (
        stored.finished_at.replace("T", " ")[:16] + " UTC" if stored.finished_at
        else "(date not recorded)")
    device = (f" on {result.device}" if result.device and result.device != CACHED_DEVICE
              else " (every answer's vector was already in the project: the model did not run)"
              if result.device else "")
    parts = [
        (f"<b>Input:</b> {_escape(source)}" + (f" ({_escape(', '.join(where))})" if where else "")
         + (f": {_escape(answers)}" if answers else "")),
        (f"<b>Options:</b> at most {s.max_iterations} rounds, stop below "
         f"{plain_number(s.tolerance)}; "
         f"baselines {'on' if s.baselines else 'off'}; {ai}; {blank}"),
        f"<b>Embedding model:</b> {_escape(result.embedding_model or '(not recorded)')}{device}",
        f"<b>Scored:</b> {when}",
    ]
    if inputs.get("Duplicate answers"):
        parts.insert(1, f"<b>Duplicates:</b> {_escape(inputs['Duplicate answers'])}")
    return " · ".join(parts)


def _escape(text: str) -> str:
    import html

    return html.escape(str(text)).replace("\n", "<br>")

