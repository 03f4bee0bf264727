"""InteractEval's results page: scores per text with every answer, the spread of the scores per
dimension, and the agreement with human scores (each kind of correlation clearly labelled).

Only shows a :class:`core.interacteval.ScoringRun` (and its agreement), with the run it comes
from (when, which texts, checklists, model and options) and a banner when most texts failed
because the model repeated the instructions, or when the results no longer match the current
choices (then Export is off). Exporting is asked for with :attr:`ResultsView.export_requested`
/ :attr:`ResultsView.export_checklists_requested`; the think-aloud samples switch with
:attr:`ResultsView.include_samples_changed`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QLabel,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.interacteval.session import judge_spreads, scatter_points
from core.llm.identity import DEMO_NOTE, is_demo_model
from desktop.charts import ScatterPoint, scatter_panel
from desktop.glossary import explain
from desktop.run_panel import RunPanel
from desktop.views import ACCENT, VALUE_ROLE, Chart, Column, FrameModel, table_view
from desktop.widgets import (
    add_parts,
    done_label,
    fit_columns,
    hbox,
    hint_label,
    note_box,
    pane,
    push_button,
    rich_label,
    splitter,
)

__all__ = ["AGREEMENT_COLUMNS", "ANSWER_COLUMNS", "ResultsView", "draw_distributions",
           "spread_html"]

ANSWER_COLUMNS = [
    Column("dimension", "Dimension"),
    Column("number", "No.", "int"),
    Column("question", "Question"),
    Column("answer", "Answer", "text", "yes / no as read from the model's reply.",
           "unanswered"),
    Column("raw", "The model wrote", "text", "", "(nothing)"),
]
AGREEMENT_COLUMNS = [
    Column("dimension", "Dimension"),
    Column("compared", "Compared", "text",
           "The checklist scores, or the length baseline: the texts' number of words "
           "correlated with the human scores the same way. When the length agrees as well as "
           "the checklist, the checklist adds nothing beyond length."),
    Column("kind", "Kind of correlation", "text",
           "per-source-document averaged: inside each source document, then the mean over "
           "documents (G-Eval's and InteractEval's “summary-level”); pooled: over all texts at "
           "once; per system: over the mean score of each system."),
    Column("statistic", "Statistic"),
    Column("value", "Value", "number", "", "undefined"),
    Column("ci_low", "95% CI low", "number", "", "—"),
    Column("ci_high", "95% CI high", "number", "", "—"),
    Column("p_value", "p", "p", "How likely a value this large would be if the checklist and "
           "the people were unrelated: below 0.05 is the usual bar.", "—"),
    Column("n", "n", "int", "Texts (or systems, or documents) used.", "—"),
    Column("used", "Used / skipped", "text",
           "How many source documents and texts took part (the full notes are in the export's "
           "Agreement sheet)."),
]


def _short_note(note: str) -> str:
    """The parts of an agreement note that say what was used or left out."""
    keep = [p.strip() for p in str(note or "").split(";")
            if "resample" not in p
            and any(w in p for w in ("used", "left out", "skipped", "Not computed"))]
    return "; ".join(keep)


def draw_distributions(figure: Any, scores: dict[str, Sequence[float]]) -> None:
    """One histogram of checklist scores (1 to 5) per dimension, side by side."""
    n = max(1, len(scores))
    for i, (dimension, values) in enumerate(scores.items(), 1):
        ax = figure.add_subplot(1, n, i)
        ax.hist(list(values), bins=8, range=(1, 5), color=ACCENT, edgecolor="white")
        ax.set_title(dimension, loc="left", fontsize=10)
        ax.set_xlabel("Checklist score (1 to 5)")
        if i == 1:
            ax.set_ylabel("Texts")
        ax.set_xlim(1, 5)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)


class ScoresModel(FrameModel):
    """The scores per text: a score cell without a score says why, "failed" or "incomplete"
    (some questions unanswered; issue 28: incomplete texts read "failed")."""

    def __init__(self, columns: Any, parent: Any = None) -> None:
        super().__init__(columns, parent)
        #: (row, column key) -> why that cell has no score.
        self.why: dict[tuple[int, str], str] = {}

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole) and \
                index.isValid() and 0 <= index.column() < len(self.columns) and \
                self.value(index.row(), self.columns[index.column()].key) is None:
            why = self.why.get((index.row(), self.columns[index.column()].key))
            if why == "incomplete":
                return ("incomplete" if role == Qt.ItemDataRole.DisplayRole else
                        "Some questions were left unanswered, so there is no score: see Notes.")
        return super().data(index, role)


class ResultsView(QWidget):
    """The results of one scoring run, in tabs."""

    export_requested = Signal()
    export_checklists_requested = Signal()
    #: The user ticked or unticked "include the think-aloud samples in the agreement".
    include_samples_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run: Any = None
        self.out_of_date: list[str] = []
        #: Does the checklist tell the texts apart? (``judge_spreads`` of the run shown)
        self.spreads: list[tuple[str, Any]] = []
        self.spread_lines: list[str] = []
        self.banner = note_box()
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        self.banner.hide()
        self.run_label = hint_label()
        self.run_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.run_label.setToolTip("Which run these results come from. " + explain("formula"))
        self.summary = rich_label()
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.export_button = push_button(
            "Export results to Excel…",
            "Scores, every answer, the checklists, the attributes and the agreement in one "
            "workbook, with a Read me sheet.", self.export_requested, name="primaryButton")
        self.export_checklists_button = push_button(
            "Export checklists…", on_click=self.export_checklists_requested)
        self.export_panel = RunPanel()
        self.export_panel.hide()
        self.export_message = done_label()
        top = hbox((self.summary, 1), add_parts(
            QVBoxLayout(), [self.export_button, self.export_checklists_button, 1]))

        # scores per text, and the answers of the selected text
        self.scores_model = FrameModel([Column("text_id", "Text")])
        self.scores_view = table_view(self.scores_model)
        self.answers_model = FrameModel(ANSWER_COLUMNS)
        self.answers_view = table_view(self.answers_model, sortable=False)
        self.answers_title = QLabel("<b>Answers</b> (select a text above)")
        answers = pane(self.answers_title, (self.answers_view, 1))
        split = splitter(self.scores_view, answers, sizes=[260, 240],
                         orientation=Qt.Orientation.Vertical)
        scores_tab = QWidget()
        sv = QVBoxLayout(scores_tab)
        sv.addWidget(QLabel("One row per text: its checklist score on each dimension "
                            "(1 + 4 × yes answers / questions). A text with no score says "
                            "why: failed, or incomplete with the questions still unanswered."))
        sv.addWidget(split, 1)

        self.chart = Chart(minimum_height=260)
        self.spread_label = QLabel()
        self.spread_label.setWordWrap(True)
        chart_tab = QWidget()
        cv = QVBoxLayout(chart_tab)
        cv.addWidget(self.spread_label)
        cv.addWidget(self.chart, 1)

        self.agreement_model = FrameModel(AGREEMENT_COLUMNS)
        self.agreement_view = table_view(self.agreement_model, sortable=False)
        self.agreement_label = QLabel()
        self.agreement_label.setWordWrap(True)
        self.agreement_panel = RunPanel()
        self.agreement_panel.hide()
        self.samples_check = QCheckBox("Include the think-aloud samples in the agreement")
        self.samples_check.setToolTip(
            "Texts that are also think-aloud samples were shown to the people and models who "
            "wrote the checklist, so they are not fair test items. They are left out of the "
            "agreement unless you tick this.")
        self.samples_check.toggled.connect(self.include_samples_changed)
        self.samples_check.hide()
        #: One plain sentence per dimension: does the checklist follow the people's scores?
        self.agreement_headline = QLabel()
        self.agreement_headline.setObjectName("intro")
        self.agreement_headline.setWordWrap(True)
        agreement_tab = QWidget()
        gv = QVBoxLayout(agreement_tab)
        gv.addWidget(self.agreement_headline)
        gv.addWidget(self.agreement_label)
        gv.addWidget(self.samples_check)
        gv.addWidget(self.agreement_panel)
        #: The texts as dots: checklist score against the human score, one dimension at a time.
        self.scatter_combo, self.scatter, self.scatter_panel = scatter_panel(
            "Which dimension to plot: one dot per text.",
            "Each dot is one text: across, its checklist score; up, the people's score. When "
            "the texts have a source document, both are shown as above (+) or below (−) the "
            "average of the texts on the same source, because the agreement compares texts "
            "only with the others on their source. The closer the dots lie along a rising "
            "line, the more the two agree. The lowest and highest scores are named.",
            self._draw_scatter, minimum_height=240)
        self.scatter_panel.hide()
        agreement_split = QSplitter()
        agreement_split.addWidget(self.agreement_view)
        agreement_split.addWidget(self.scatter_panel)
        agreement_split.setSizes([700, 420])
        gv.addWidget(agreement_split, 1)

        self.tabs = QTabWidget()
        self.tabs.addTab(scores_tab, "Scores and answers")
        self.tabs.addTab(chart_tab, "Distribution")
        self.tabs.addTab(agreement_tab, "Agreement with human scores")
        self.tabs.currentChanged.connect(self._tab_changed)
        self._drawn = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.banner)
        layout.addLayout(top)
        layout.addWidget(self.run_label)
        layout.addWidget(self.export_panel)
        layout.addWidget(self.export_message)
        layout.addWidget(self.tabs, 1)

    # -- filling --------------------------------------------------------------------------------
    def set_run(self, run: Any, *, lines: Sequence[tuple[str, str]] = (),
                include_samples: bool = False, out_of_date: Sequence[str] = ()) -> None:
        """Show a :class:`core.interacteval.ScoringRun`; ``lines`` say which run it is
        (``core.interacteval.report.run_lines``), ``out_of_date`` why it no longer matches the
        current choices (empty: it is current)."""
        self.run = run
        self.set_run_lines(lines)
        self._drawn = False
        self.export_message.hide()
        dimensions = [c.dimension for c in run.checklists]
        texts: list[str] = []
        by_text: dict[str, dict[str, Any]] = {}
        for s in run.scores:
            if s.text_id not in by_text:
                texts.append(s.text_id)
                by_text[s.text_id] = {"text_id": s.text_id, "system": s.system,
                                      "source_id": s.source_id, "notes": []}
            row = by_text[s.text_id]
            row[f"score:{s.dimension}"] = s.score if s.status == "ok" else None
            if s.status != "ok":  # said in the score's cell: failed, or incomplete
                row.setdefault("_why", {})[f"score:{s.dimension}"] = s.status
            if s.human is not None:
                row[f"human:{s.dimension}"] = s.human
            if s.think_aloud_sample:
                row["notes"].append(f"{s.dimension}: think-aloud sample")
            if s.status != "ok" or s.note:
                flag = {"failed": "FAILED: ", "incomplete": "INCOMPLETE: "}.get(s.status, "")
                row["notes"].append(f"{s.dimension}: {flag}{s.note}")
        columns = [Column("text_id", "Text"), Column("system", "System", "text", "", "—"),
                   Column("source_id", "Source", "text", "", "—")]
        has_human = any(s.human is not None for s in run.scores)
        for d in dimensions:
            columns.append(Column(f"score:{d}", f"{d} score", "score",
                                  f"Checklist score on {d}, 1 to 5.", "failed"))
            if has_human:
                columns.append(Column(f"human:{d}", f"{d} (human)", "number",
                                      f"The human score on {d} from the texts sheet.", "—"))
        columns.append(Column("notes", "Notes", "text", "", ""))
        self.scores_model = ScoresModel(columns, self)
        rows = []
        for r, t in enumerate(texts):
            row = by_text[t]
            rows.append([("; ".join(row["notes"]) or None) if c.key == "notes"
                         else row.get(c.key) for c in columns])
            for key, why in row.get("_why", {}).items():
                self.scores_model.why[(r, key)] = why
        self.scores_model.set_rows(rows)
        proxy = self.scores_view.model()
        proxy.setSourceModel(self.scores_model)
        fit_columns(self.scores_view, stretch=len(columns) - 1)
        self.scores_view.selectionModel().currentRowChanged.connect(self._text_selected)
        self.answers_model.set_rows([])
        self.answers_title.setText("<b>Answers</b> (select a text above)")

        failed = len(run.failed)
        incomplete = sum(1 for s in run.scores if s.status == "incomplete")
        spread = []
        for d in dimensions:
            ok = [s.score for s in run.scores if s.dimension == d and s.status == "ok"]
            if ok:
                spread.append(f"{d}: {len(ok)} scored, mean {sum(ok) / len(ok):.2f}, "
                              f"{min(ok):.2f} to {max(ok):.2f}")
            else:
                spread.append(f"{d}: no text scored")
        self.spread_label.setText("How the checklist scores are spread. " + "; ".join(spread)
                                  + ".")
        plural = "text" if len(texts) == 1 else "texts"
        self.summary.setText(
            f"<b>{len(texts)} {plural}</b> scored on <b>{', '.join(dimensions)}</b> with "
            f"{run.model or 'the chosen model'}: {len(run.scored)} "
            f"score{'s' if len(run.scored) != 1 else ''}"
            + (f", <span style='color:#b42318'><b>{failed} without a score</b></span> ("
               + ", ".join(part for part in (
                   f"{incomplete} incomplete" if incomplete else "",
                   f"{failed - incomplete} failed" if failed - incomplete else "") if part)
               + "; see Notes)"
               if failed else ", none failed")
            + ". Select a text to see every answer behind its score."
            + (f"<br><span style='color:#b42318'><b>Scored by the built-in demo model.</b> "
               f"{escape(DEMO_NOTE)}</span>" if is_demo_model(run.model_used) else ""))
        flagged = sum(1 for s in run.scores if s.think_aloud_sample)
        self.samples_check.blockSignals(True)
        self.samples_check.setChecked(include_samples)
        self.samples_check.blockSignals(False)
        self.samples_check.setText(
            f"Include the {flagged} think-aloud sample{'s' if flagged != 1 else ''} in the "
            + ("agreement (it helped build the checklist, so it is left out by default)"
               if flagged == 1 else
               "agreement (they helped build the checklist, so they are left out by default)"))
        self.samples_check.setVisible(bool(flagged))
        self.spreads = judge_spreads(run.scores, n_boot=0)
        self.spread_lines = spread_html(self.spreads)
        self.set_out_of_date(out_of_date)
        self.agreement_model.set_rows([])
        self.scatter_panel.hide()  # until this run's agreement is shown (never the last run's)
        if not has_human:
            self.agreement_label.setText("The texts have no human scores, so there is no "
                                         "agreement to compute.")
        else:
            self.agreement_label.setText("Computing the agreement…")
        if self.tabs.currentIndex() == 1:
            self._draw()

    def set_run_lines(self, lines: Sequence[tuple[str, str]]) -> None:
        """Which run the page shows, in one wrapped line."""
        self.run_label.setTextFormat(Qt.TextFormat.RichText)
        self.run_label.setText(" · ".join(f"<b>{escape(key)}:</b> {escape(value)}"
                                          for key, value in lines))
        self.run_label.setVisible(bool(lines))

    def set_out_of_date(self, reasons: Sequence[str]) -> None:
        """Mark the results as no longer matching the current choices (or as current again):
        a banner says why, and Export is off while they are out of date."""
        self.out_of_date = list(reasons)
        parts = []
        warning = getattr(self.run, "copy_warning", "") if self.run is not None else ""
        if self.out_of_date:
            parts.append("<b style='color:#b42318'>Out of date.</b> These results were made "
                         "with other choices: " + "; ".join(self.out_of_date) + ". Score the "
                         "texts again on the Score page to get results for the current "
                         "choices. Export is off until then.")
        if warning:
            parts.append(f"<b style='color:#b42318'>{warning}</b>")
        parts += self.spread_lines
        self.banner.setText("<br>".join(parts))
        self.banner.setVisible(bool(parts))
        self.export_button.setEnabled(self.run is not None and not self.out_of_date)
        self.export_button.setToolTip(
            "These results no longer match the current choices: score again to export."
            if self.out_of_date else
            "Scores, every answer, the checklists, the attributes and the agreement in one "
            "workbook, with a Read me sheet that says which run it is.")

    def set_agreement(self, rows: Sequence[dict[str, Any]]) -> None:
        """Rows of ``core.interacteval.agreement_rows`` (the comparison names the dimension)."""
        out = []
        for r in rows:
            dimension = str(r.get("comparison", "")).split(":")[0]
            compared = "Text length alone (baseline)" if _is_length(r) else "Checklist"
            out.append([dimension, compared, r.get("kind"), r.get("statistic"), r.get("value"),
                        r.get("ci_low"), r.get("ci_high"), r.get("p_value"), r.get("n"),
                        _short_note(r.get("note", "")) or None])
        self.agreement_model.set_rows(out)
        fit_columns(self.agreement_view, stretch=9, max_width=300)
        careful = [f"Careful: the checklist of {d} may not be reading the texts (see the "
                   "warning above), so this agreement can come from that alone."
                   for d, spread in self.spreads if spread.flagged]
        self.agreement_headline.setText(" ".join([*_headlines(rows), *careful]))
        dimensions = list(dict.fromkeys(str(r.get("comparison", "")).split(":")[0]
                                        for r in rows))
        current = self.scatter_combo.currentText()
        self.scatter_combo.blockSignals(True)
        self.scatter_combo.clear()
        self.scatter_combo.addItems(dimensions)
        if current in dimensions:
            self.scatter_combo.setCurrentText(current)
        self.scatter_combo.blockSignals(False)
        self.scatter_combo.setVisible(len(dimensions) > 1)
        self.scatter_panel.setVisible(bool(dimensions))
        self._draw_scatter()
        if rows:
            self.agreement_label.setText(
                "How well the checklist scores follow the human scores. Three kinds, as the "
                "literature uses them: <b>per-source-document averaged</b> (correlation inside "
                "each source document, then the mean; documents whose scores are all equal are "
                "skipped and counted), <b>pooled over all texts</b>, and <b>per system</b> (the "
                "mean score of each system). “undefined” means it cannot be computed (too few "
                "texts, or constant scores). Beside each, <b>text length alone</b>: the same "
                "correlation with the texts' number of words, the baseline a checklist must "
                "beat.")
            self.agreement_label.setTextFormat(Qt.TextFormat.RichText)

    @Slot()
    def _draw_scatter(self, *_args: Any) -> None:
        """The chosen dimension's texts as dots, with the texts the agreement uses."""
        dimension = self.scatter_combo.currentText()
        if self.run is None or not dimension:
            return
        points, per_document = scatter_points(self.run.scores, dimension,
                                              include_samples=self.samples_check.isChecked())
        dots = [ScatterPoint(name, x, y) for name, x, y in points]
        if per_document:
            self.scatter.plot(
                dots, title=f"{dimension}: each text against the other texts on the same "
                            "source, one dot per text",
                x_label="Checklist score above (+) or below (−) the source's average",
                y_label="Human score above (+) or below (−) the source's average")
        else:
            self.scatter.plot(
                dots, title=f"{dimension}: checklist score against the human score, "
                            "one dot per text",
                x_label="Checklist score (1 to 5)", y_label="Human score",
                x_range=(0.8, 5.2))

    @Slot()
    def _text_selected(self, *_args: Any) -> None:
        index = self.scores_view.currentIndex()
        if not index.isValid() or self.run is None:
            return
        proxy = self.scores_view.model()
        text_id = proxy.index(index.row(), 0).data(VALUE_ROLE)
        rows = []
        for s in self.run.scores:
            if s.text_id != text_id:
                continue
            if not s.answers:
                rows.append([s.dimension, None, f"(no answers: {s.note})", None, None])
            for a in s.answers:
                rows.append([s.dimension, a.number, a.question, a.answer, a.raw or None])
        self.answers_model.set_rows(rows)
        fit_columns(self.answers_view, stretch=2, max_width=420)
        self.answers_title.setText(f"<b>Answers for {text_id}</b>")

    @Slot(int)
    def _tab_changed(self, index: int) -> None:
        if index == 1 and not self._drawn:
            self._draw()

    def _draw(self) -> None:
        if self.run is None:
            return
        scores = {c.dimension: [s.score for s in self.run.scores
                                if s.dimension == c.dimension and s.status == "ok"]
                  for c in self.run.checklists}
        self.chart.draw(lambda figure: draw_distributions(figure, scores))
        self._drawn = True

    def show_export(self, path: str) -> None:
        self.export_message.setText(f"Saved: {path}")
        self.export_message.show()


def _headlines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Per dimension, the sentence a reader can act on: the per-source-document averaged
    Spearman rho (the paper's statistic), else the pooled one."""
    from core.stats import GROUPED_LABEL, POOLED_LABEL, length_sentence, plain_agreement

    out = []
    by_dimension: dict[str, dict[str, dict[str, Any]]] = {}
    lengths: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        if r.get("statistic") != "Spearman rho":
            continue
        dimension = str(r.get("comparison", "")).split(":")[0]
        (lengths if _is_length(r) else by_dimension).setdefault(dimension, {})[
            str(r.get("kind"))] = r
    for dimension, kinds in by_dimension.items():
        grouped = kinds.get(GROUPED_LABEL)
        row = grouped if grouped is not None and grouped.get("value") is not None \
            else kinds.get(POOLED_LABEL)
        if row is None:
            continue

        def number(key: str, row: dict[str, Any] = row) -> float | None:
            value = row.get(key)
            return None if value is None or math.isnan(float(value)) else float(value)

        length = lengths.get(dimension, {}).get(str(row.get("kind")))

        out.append(plain_agreement(
            number("value"), n=int(row.get("n") or 0), who="the checklist",
            against=f"your scores of {dimension}", units="texts",
            symbol="ρ per source document" if row is grouped else "ρ",
            ci_low=number("ci_low"), ci_high=number("ci_high"), p_value=number("p_value"),
            reason=str(row.get("note") or "").removeprefix("Not computed: ")))
        if length is not None:
            line = length_sentence(number("value"), number("value", length),
                                   who="the checklist",
                                   symbol="ρ per source document" if row is grouped else "ρ")
            if line:
                out.append(line)
    return out


def _is_length(row: dict[str, Any]) -> bool:
    """A row of the length baseline (``core.interacteval.agreement``)."""
    from core.stats import LENGTH_NAME

    return LENGTH_NAME in str(row.get("comparison", ""))


def spread_html(spreads: Sequence[tuple[str, Any]]) -> list[str]:
    """The banner's lines of ``core.interacteval.agreement.judge_spreads``: the warning of a
    checklist that may not be reading the texts, and the questions answered the same way for
    every text (named by number; the Agreement sheet of the export lists them in full)."""
    out = [f"<b style='color:#b42318'>{escape(s.sentence)}</b>" for _d, s in spreads
           if s.flagged]
    for dimension, s in spreads:
        if not s.constant_questions:
            continue
        named = [f"{q.label.split(' (')[0]} ({q.answer} for all {q.n})"
                 for q in s.constant_questions]
        shown = ", ".join(named[:4]) + (f" and {len(named) - 4} more" if len(named) > 4
                                        else "")
        out.append(escape(f"{dimension}: {shown}: answered the same for every text, so "
                          f"{'it tells' if len(named) == 1 else 'they tell'} no text apart."))
    return out
