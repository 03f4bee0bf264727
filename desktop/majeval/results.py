"""The results page of the MAJ-Eval wizard: scores, feedback and debate transcripts,
before/after the debate, agreement (alpha within groups, correlations with human ratings and a
heat map drawn with matplotlib, imported only when first drawn)."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.llm.identity import DEMO_NOTE, is_demo_model, made_with
from core.majeval.session import (
    AFTER,
    BASELINE,
    BEFORE,
    LENGTH_GROUP,
    failure_warning,
    human_points,
    judge_spreads,
    run_description,
)
from core.stats import format_p, length_sentence, plain_agreement
from core.words import count
from desktop.charts import ScatterPoint, scatter_panel
from desktop.glossary import explain
from desktop.majeval.models import Col, RowsModel
from desktop.run_panel import RunPanel
from desktop.views import fit_rows
from desktop.widgets import (
    alert_box,
    done_label,
    hint_label,
    pane,
    push_button,
    rich_label,
    row_table,
    splitter,
)

__all__ = ["HeatMap", "ResultsView", "table_view"]

ALL_GROUPS = "All groups (overall score)"
ONE_AGENT = "undefined: one agent"


def table_view(model: Any, stretch: int | None = None) -> QTableView:
    """A table of whole rows, one selected at a time (see :func:`desktop.widgets.row_table`)."""
    return row_table(model, stretch, single_selection=True)


def _mean_text(value: float | None) -> str | float:
    return "" if value is None else round(float(value), 2)


class HeatMap(QWidget):
    """A matplotlib heat map (Spearman of each group with each human dimension, sign kept:
    -1 blue ... +1 red)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas: Any = None
        self.figure: Any = None
        self.values: list[list[float | None]] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.setMinimumHeight(220)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def draw(self, rows: list[str], columns: list[str], values: list[list[float | None]],
             title: str) -> None:
        if self.canvas is None:
            from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
            from matplotlib.figure import Figure

            self.figure = Figure(figsize=(5, 3), dpi=100, layout="constrained")
            self.canvas = FigureCanvasQTAgg(self.figure)
            self._layout.addWidget(self.canvas)
        self.values = values
        self.figure.clear()
        ax = self.figure.add_subplot(1, 1, 1)
        import numpy as np

        grid = np.array([[np.nan if v is None else v for v in row] for row in values],
                        dtype=float)
        image = ax.imshow(grid, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        ax.set_xticks(range(len(columns)), labels=columns, fontsize=9)
        ax.set_yticks(range(len(rows)), labels=rows, fontsize=9)
        for r, row in enumerate(values):
            for c, v in enumerate(row):
                text = "n/a" if v is None else f"{v:.2f}"
                colour = "white" if v is not None and abs(v) > 0.6 else "#1f2933"
                ax.text(c, r, text, ha="center", va="center", fontsize=9, color=colour)
        ax.set_title(title, fontsize=10, loc="left")
        self.figure.colorbar(image, ax=ax, shrink=0.8)
        self.canvas.draw_idle()


class ResultsView(QWidget):
    """Shows an :class:`core.majeval.EvaluationRun` (and its agreement statistics)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run: Any = None
        self.alphas: list[Any] = []
        self.humans: list[Any] = []
        #: Does the debate tell the items apart? (``judge_spreads`` of the run shown)
        self.spreads: list[tuple[str, Any]] = []
        #: The model profiles of the app (the wizard sets it), to say which one made a run.
        self.profiles: Any = list
        self.summary = rich_label()
        self.export_button = push_button(
            "Export to Excel…", "Save every score, feedback, transcript, the personas and the "
            "agreement statistics as one workbook.", name="primaryButton")
        self.export_message = done_label()
        self.export_panel = RunPanel()
        self.export_panel.hide()
        self.about_run = hint_label()
        self.about_run.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.alert = alert_box()
        self.alert.hide()
        self.stale = alert_box()
        self.stale.hide()
        self.out_of_date: list[str] = []
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.export_button, 0, Qt.AlignmentFlag.AlignTop)

        self.tabs = QTabWidget()
        self.tabs.addTab(self._scores_tab(), "Scores")
        self.tabs.addTab(self._debate_tab(), "Feedback and debate")
        self.tabs.addTab(self._change_tab(), "Before and after the debate")
        self.tabs.addTab(self._agreement_tab(), "Agreement")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.about_run)
        layout.addWidget(self.alert)
        layout.addWidget(self.stale)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.export_message)
        layout.addWidget(self.export_panel)

    # ------------------------------------------------------------------------------- tabs
    def _scores_tab(self) -> QWidget:
        self.scores_model = RowsModel([])
        self.scores_view = table_view(self.scores_model)
        self.scores_view.doubleClicked.connect(self._open_item)
        hint = hint_label("Each group's score is the mean of its personas' final scores (computed by "
                      "EvalDesk, not the model); “Overall” is the mean over the groups. A failed "
                      "debate shows as failed, never as a score. Double-click an item to read "
                      "its feedback and debate.")
        return pane(hint, (self.scores_view, 1), margins=None)

    def _debate_tab(self) -> QWidget:
        self.item_combo = QComboBox()
        self.item_combo.setMinimumWidth(120)
        self.item_combo.currentIndexChanged.connect(self._show_item)
        self.group_combo = QComboBox()
        self.group_combo.setMinimumWidth(160)
        self.group_combo.currentIndexChanged.connect(self._show_group)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("Item:"))
        pick.addWidget(self.item_combo)
        pick.addSpacing(16)
        pick.addWidget(QLabel("Group:"))
        pick.addWidget(self.group_combo)
        pick.addStretch(1)
        self.item_text = QPlainTextEdit()
        self.item_text.setReadOnly(True)
        self.item_text.setMaximumHeight(70)
        self.feedback = QTextBrowser()
        self.feedback.setMinimumHeight(90)
        self.transcript_model = RowsModel([
            Col("turn", "Turn", "0 = phase 1, everyone alone"),
            Col("speaker", "Who spoke"),
            Col("reason", "Why the coordinator chose them"),
            Col("message", "What they said"),
            Col("scores", "Scores after the turn"),
        ])
        self.transcript_view = table_view(self.transcript_model, stretch=3)
        self.transcript_view.horizontalHeader().setSectionResizeMode(
            2, QHeaderView.ResizeMode.Interactive)
        self.transcript_view.setColumnWidth(2, 240)
        self.transcript_view.horizontalHeader().setSectionResizeMode(
            3, QHeaderView.ResizeMode.Stretch)
        self.transcript_view.verticalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents)
        lower = splitter(
            pane("<b>The group's feedback</b> (the aggregator's summary)", self.feedback),
            pane("<b>Transcript</b>: phase 1 (everyone alone), then the debate",
                 self.transcript_view),
            sizes=[150, 400], orientation=Qt.Orientation.Vertical)
        return pane(pick, self.item_text, (lower, 1), margins=None)

    def _change_tab(self) -> QWidget:
        self.change_model = RowsModel([
            Col("group", "Group"), Col("dimension", "Dimension"),
            Col("before", "Mean before (phase 1)", digits=2),
            Col("after", "Mean after the debate", digits=2),
            Col("change", "Change", "after minus before, over the same personas", digits=2),
            Col("moved", "Items whose score changed"),
            Col("turns", "Debate turns (mean)", digits=1),
            Col("note", "Note", missing=""),
        ])
        self.change_view = table_view(self.change_model)
        self.change_items_model = RowsModel([])
        self.change_items_view = table_view(self.change_items_model)
        hint = hint_label("How the debate moved the scores: each group's mean over the items before "
                      "the discussion (phase 1, everyone alone) and after it, both over the same "
                      "personas (one that failed during the debate is left out of both). A "
                      "group of one persona cannot debate: its change is undefined.")
        return pane(hint, (self.change_view, 1), "<b>Per item</b> (before → after)",
                    (self.change_items_view, 2), margins=None)

    def _agreement_tab(self) -> QWidget:
        self.alpha_model = RowsModel([
            Col("group", "Group"), Col("dimension", "Dimension"),
            Col("before", "Alpha before the debate", digits=2),
            Col("after", "Alpha after the debate", digits=2),
            Col("note", "Note"),
        ])
        self.alpha_view = table_view(self.alpha_model)
        self.human_model = RowsModel([
            Col("group", "Group"), Col("dimension", "Our dimension"),
            Col("human", "Human rating"),
            Col("spearman_before", "Spearman before", "Spearman's rho of the phase 1 means "
                "with the human ratings (sign kept: below 0 means the opposite order)",
                digits=2),
            Col("spearman", "Spearman after", "Spearman's rho of the means after the debate "
                "with the human ratings (sign kept)", digits=2),
            Col("p", "p (after)", "the p-value of Spearman's rho after the debate"),
            Col("kendall", "Kendall after", "Kendall's tau-b after the debate (before: in the "
                "exported workbook)", digits=2),
            Col("pearson", "Pearson after", "Pearson's r after the debate (before: in the "
                "exported workbook)", digits=2),
            Col("n", "n"), Col("note", "Note", missing=""),
        ])
        self.human_view = table_view(self.human_model)
        self.heatmap = HeatMap()
        self.heatmap.setMinimumWidth(340)
        self.heatmap.setToolTip("One cell per group and people's rating: " + explain("Spearman"))
        self.no_humans = hint_label("The items have no human ratings, so there is nothing to compare "
                                "with. Choose the rating columns on the Items page to see "
                                "agreement with people.")
        hint = hint_label("Krippendorff's alpha (ordinal) says how much the personas of a "
                          "group agree with each other over the items (1 = fully, 0 = no better "
                          "than chance); “undefined” when there are too few items or no "
                          "variation.")
        hint.setToolTip(explain("Krippendorff", "ordinal"))
        #: One plain sentence per human rating: do the personas' overall scores follow it?
        self.human_headline = QLabel()
        self.human_headline.setObjectName("intro")
        self.human_headline.setWordWrap(True)
        human_title = QLabel("<b>Agreement with human ratings</b>, before and after the debate "
                             "(correlations keep their sign: below 0, the personas rank the "
                             "items the opposite way)")
        human_title.setWordWrap(True)
        left = pane(self.human_headline, hint, (self.alpha_view, 1), human_title,
                    (self.human_view, 1), self.no_humans)
        #: The items as dots: the chosen group's score against the people's rating.
        self.scatter_combo, self.scatter, plot = scatter_panel(
            "Which scores to plot against which people's ratings: one dot per item, after the "
            "debate.",
            "Each dot is one item: across, the personas' score after the debate; up, the "
            "people's rating. The closer the dots lie along a rising line, the more the two "
            "agree; a dot far from the others is an item they judge differently. The lowest "
            "and highest scores are named.",
            self._draw_scatter, minimum_height=220)
        self.heatmap.setMinimumHeight(150)
        # the dots need more room than the few-cell map
        right = pane(splitter(self.heatmap, plot, sizes=[190, 520],
                              orientation=Qt.Orientation.Vertical))
        self.scatter_panel = plot
        self.agreement_pictures = right  # hidden, with the heat map, without human ratings
        return pane((splitter(left, right, sizes=[640, 380]), 1), margins=None)

    # ------------------------------------------------------------------------------ filling
    def set_run(self, run: Any, alphas: list[Any] | None = None,
                humans: list[Any] | None = None) -> None:
        self.run = run
        self.alphas = list(alphas or [])
        self.humans = list(humans or [])
        self.export_message.hide()
        groups = list(dict.fromkeys(g.group for item in run.items for g in item.groups))
        dims = [d.name for d in run.dimensions]
        failed = len(run.failed_units)
        n_units = len(run.groups)
        self.summary.setText(
            f"<b>{count(len(run.items), 'item')}</b> judged by "
            f"<b>{count(len(groups), 'stakeholder group')}</b> "
            f"({count(len(run.personas), 'persona')}) with "
            + (html.escape(made_with(self.profiles(), run.model_used)) if run.model
               else "the model") + ". "
            + (f"<span style='color:#b42318'><b>{failed} of {n_units} debates failed</b></span>"
               " (shown as failed; run again to retry them)." if failed else
               "Every debate finished.")
            + (f"<br><span style='color:#b42318'><b>Judged by the built-in demo model.</b> "
               f"{html.escape(DEMO_NOTE)}</span>" if is_demo_model(run.model_used) else ""))
        about = dict(run_description(run))
        scored = ", ".join(dims) + f" ({run.scale.minimum} to {run.scale.maximum})"
        settings = run.settings
        self.about_run.setText(" · ".join([
            f"Run of {about['Run']} with {run.model or about['Model']}", about["Items"],
            about["Personas"], f"scored: {scored}",
            "no debate (ablation)" if settings.no_debate else
            f"debate: up to {count(settings.rounds, 'round')}",
            "simple roles (ablation)" if settings.simple_roles else "full personas"]))
        self.about_run.setToolTip("\n".join(f"{k}: {v}" for k, v in about.items()))
        self.spreads = judge_spreads(run, n_boot=0)
        warnings = [w for w in (failure_warning(run), *[s.sentence for _d, s in self.spreads])
                    if w]
        self.alert.setText("\n".join(warnings))
        self.alert.setVisible(bool(warnings))
        self._fill_scores(groups, dims)
        self._fill_change(groups, dims)
        self._fill_agreement()
        self.item_combo.blockSignals(True)
        self.item_combo.clear()
        for r in run.items:
            self.item_combo.addItem(r.item_id)
        self.item_combo.blockSignals(False)
        self.group_combo.blockSignals(True)
        self.group_combo.clear()
        self.group_combo.addItems(groups)
        self.group_combo.blockSignals(False)
        self._show_item()

    def _fill_scores(self, groups: list[str], dims: list[str]) -> None:
        many = len(dims) > 1
        columns = [Col("item", "Item"), Col("status", "Status")]
        for g in groups:
            for d in dims:
                columns.append(Col(f"{g}|{d}", f"{g} · {d}" if many else g,
                                   f"{g}: mean of its personas' final {d} scores", digits=2,
                                   missing="failed"))
        for d in dims:
            columns.append(Col(f"overall|{d}", f"Overall · {d}" if many else "Overall",
                               "mean of the groups' scores", digits=2, missing="failed"))
        columns.append(Col("note", "Note", missing=""))
        inputs = {i.id: i for i in self.run.item_inputs}
        columns.insert(1, Col("content", "Content"))
        rows = []
        for r in self.run.items:
            row: dict[str, Any] = {"item": r.item_id, "status": r.status, "note": r.error,
                                   "content": _short(inputs[r.item_id].content, 60)
                                   if r.item_id in inputs else ""}
            for g in r.groups:
                for d in dims:
                    value = g.final_mean.get(d)
                    row[f"{g.group}|{d}"] = None if g.status == "failed" or value is None \
                        else float(value)
            for d in dims:
                value = r.overall.get(d)
                row[f"overall|{d}"] = None if value is None else float(value)
            rows.append(row)
        self.scores_model.set_rows(rows, columns)
        self.scores_view.resizeColumnsToContents()
        self.scores_view.setColumnWidth(1, 360)

    def _fill_change(self, groups: list[str], dims: list[str]) -> None:
        size = {g: sum(1 for p in self.run.personas if p.group == g) for g in groups}
        rows, per_item = [], []
        for g in groups:
            one = size[g] == 1
            for d in dims:
                units = [gr for r in self.run.items for gr in r.groups
                         if gr.group == g and gr.status != "failed"]
                both = [u for u in units if d in u.initial_mean and d in u.final_mean]
                mb = sum(u.initial_mean[d] for u in both) / len(both) if both else None
                ma = sum(u.final_mean[d] for u in both) / len(both) if both else None
                moved = sum(1 for u in both
                            if abs(u.initial_mean[d] - u.final_mean[d]) > 1e-9)
                turns = [sum(1 for t in u.turns if t.kind == "debate") for u in units]
                notes = sorted({u.note for u in units if u.note and not one})
                rows.append({
                    "group": g, "dimension": d, "before": mb, "after": ma,
                    "change": ONE_AGENT if one else
                    (ma - mb) if mb is not None and ma is not None else None,
                    "moved": None if one else f"{moved} of {len(both)}",
                    "turns": sum(turns) / len(turns) if turns else None,
                    "note": "One persona: no debate." if one else
                    (f"{len(notes)} debate(s): a persona failed during the debate and is left "
                     "out of both means." if notes else "")})
        columns = [Col("item", "Item")]
        for g in groups:
            for d in dims:
                columns.append(Col(f"{g}|{d}", f"{g} · {d}" if len(dims) > 1 else g,
                                   missing="failed"))
        for r in self.run.items:
            row: dict[str, Any] = {"item": r.item_id}
            for gr in r.groups:
                for d in dims:
                    if gr.status == "failed" or d not in gr.final_mean:
                        row[f"{gr.group}|{d}"] = None
                    elif size.get(gr.group) == 1:
                        row[f"{gr.group}|{d}"] = f"{gr.final_mean[d]:.2f} (one persona)"
                    else:
                        row[f"{gr.group}|{d}"] = (f"{gr.initial_mean.get(d, 0):.2f} → "
                                                  f"{gr.final_mean[d]:.2f}")
            per_item.append(row)
        self.change_model.set_rows(rows)
        self.change_items_model.set_rows(per_item, columns)

    def _fill_agreement(self) -> None:
        rows = []
        for a in self.alphas:
            undefined = ONE_AGENT if getattr(a, "one_agent", False) else "undefined"
            rows.append({"group": a.group, "dimension": a.dimension,
                         "before": a.before.value if a.before.value is not None else undefined,
                         "after": a.after.value if a.after.value is not None else undefined,
                         "note": "; ".join(sorted({x.reason for x in (a.before, a.after)
                                                   if x.reason})),
                         "status": ""})
        self.alpha_model.set_rows(rows)
        pairs: dict[tuple[str, str, str], dict[str, Any]] = {}
        for h in self.humans:
            pairs.setdefault((h.group, h.dimension, h.human_dimension), {})[h.stage] = h.report
        human_rows = []
        for (group, dim, human), stages in pairs.items():
            before, after = stages.get(BEFORE), stages.get(AFTER) or stages.get(BASELINE)
            if after is None:
                continue
            sp = after.spearman
            human_rows.append({
                "group": group, "dimension": dim, "human": human,
                "spearman_before": _value(before.spearman if before else None),
                "spearman": _value(sp), "p": _p_text(sp.p_value),
                "kendall": _value(after.kendall), "pearson": _value(after.pearson),
                "n": after.n, "note": sp.reason or ""})
        self.human_model.set_rows(human_rows)
        several = len({d for _, d, _ in pairs}) > 1
        headline = []
        for (group, dim, human), stages in pairs.items():
            if group != ALL_GROUPS or AFTER not in stages:
                continue
            rho = stages[AFTER].spearman
            headline.append(plain_agreement(
                rho.value, n=stages[AFTER].n,
                who="the personas' overall score" + (f" on {dim}" if several else ""),
                against=f"the people's {human} ratings", units="items", symbol="ρ",
                ci_low=rho.ci_low, ci_high=rho.ci_high, p_value=rho.p_value, reason=rho.reason))
            length = pairs.get((LENGTH_GROUP, dim, human), {}).get(BASELINE)
            if length is not None:
                headline.append(length_sentence(rho.value, length.spearman.value,
                                                who="the personas"))
        headline += [f"Careful: the personas' {d} score may not be reading the items (see the "
                     "warning above), so this agreement can come from that alone."
                     for d, spread in self.spreads if spread.flagged and self.humans]
        self.human_headline.setText(" ".join(h for h in headline if h))
        self.human_headline.setVisible(bool(self.human_headline.text()))
        has = bool(human_rows)
        self.human_view.setVisible(has)
        self.heatmap.setVisible(has)
        self.no_humans.setVisible(not has)
        if has:
            groups = list(dict.fromkeys(r["group"] for r in human_rows))
            cells = list(dict.fromkeys((r["dimension"], r["human"]) for r in human_rows))
            many = len({d for d, _ in cells}) > 1
            labels = [f"{d} vs {hd}" if many else hd for d, hd in cells]
            values = []
            for g in groups:
                line = []
                for d, hd in cells:
                    row = next((r for r in human_rows if r["group"] == g
                                and r["dimension"] == d and r["human"] == hd), None)
                    v = row["spearman"] if row is not None else None
                    line.append(v if isinstance(v, float) else None)
                values.append(line)
            names = ["All groups" if g == ALL_GROUPS else
                     "Length alone" if g == LENGTH_GROUP else g for g in groups]
            self.heatmap.draw(names, labels, values, "Spearman with people,\nafter the debate")
        self.scatter_panel.setVisible(has)
        self.agreement_pictures.setVisible(has)
        self.scatter_combo.blockSignals(True)
        self.scatter_combo.clear()
        many_dims = len({d for _, d, _ in pairs}) > 1
        lengths_shown: set[str] = set()
        for group, dim, human in pairs:
            if group == LENGTH_GROUP:
                if human in lengths_shown:
                    continue  # the same dots beside every dimension: listed once
                lengths_shown.add(human)
                self.scatter_combo.addItem(
                    f"Text length alone against the people's {human} (baseline)",
                    (group, dim, human))
                continue
            who = "All groups" if group == ALL_GROUPS else group
            self.scatter_combo.addItem(
                f"{who}{f' on {dim}' if many_dims else ''} against the people's {human}",
                (group, dim, human))
        overall = next((i for i, (g, _, _) in enumerate(pairs) if g == ALL_GROUPS), 0)
        self.scatter_combo.setCurrentIndex(overall)
        self.scatter_combo.blockSignals(False)
        if has:
            self._draw_scatter()

    @Slot()
    def _draw_scatter(self, *_args: Any) -> None:
        """The chosen (group, dimension, human rating) as dots, one per item."""
        choice = self.scatter_combo.currentData()
        if self.run is None or not choice:
            return
        group, dim, human = choice
        points = [ScatterPoint(item, score, rating)
                  for item, score, rating in human_points(self.run, group, dim, human)]
        scale = self.run.scale
        if group == LENGTH_GROUP:
            self.scatter.plot(
                points, title=f"The items' length against the people's {_short(human, 30)}, "
                              "one dot per item (the baseline)",
                x_label="Number of words of the item",
                y_label=f"People's rating of {_short(human, 30)}")
            return
        who = "The personas' overall score" if group == ALL_GROUPS else \
            f"{group}{chr(39) if group.endswith('s') else chr(39) + 's'} score"
        self.scatter.plot(
            points, title=f"{_short(who, 40)} against the people's {_short(human, 30)}, "
                          "one dot per item",
            x_label=f"{dim} after the debate: "
                    + ("mean of the groups' scores" if group == ALL_GROUPS
                       else "mean of its personas' scores")
                    + f" ({scale.minimum} to {scale.maximum})",
            y_label=f"People's rating of {_short(human, 30)}",
            x_range=(scale.minimum - 0.2, scale.maximum + 0.2))

    # ------------------------------------------------------------------------ item details
    @Slot()
    def _open_item(self, index: Any) -> None:
        self.item_combo.setCurrentIndex(index.row())
        self.tabs.setCurrentIndex(1)

    def show_item(self, item_id: str, group: str | None = None) -> None:
        self.item_combo.setCurrentIndex(max(0, self.item_combo.findText(item_id)))
        if group is not None:
            self.group_combo.setCurrentIndex(max(0, self.group_combo.findText(group)))
        self.tabs.setCurrentIndex(1)

    def _current_group_result(self) -> Any:
        if self.run is None or not self.run.items:
            return None
        r = self.run.items[max(0, self.item_combo.currentIndex())]
        return next((g for g in r.groups if g.group == self.group_combo.currentText()), None)

    @Slot()
    def _show_item(self, *_args: Any) -> None:
        if self.run is None or not self.run.items:
            return
        r = self.run.items[max(0, self.item_combo.currentIndex())]
        inputs = {i.id: i for i in self.run.item_inputs}
        item = inputs.get(r.item_id)
        text = item.content if item else ""
        if item is not None and item.context:
            text += f"\n\nContext: {item.context}"
        self.item_text.setPlainText(text)
        self._show_group()

    @Slot()
    def _show_group(self, *_args: Any) -> None:
        g = self._current_group_result()
        if g is None:
            self.feedback.setHtml("")
            self.transcript_model.set_rows([])
            return

        dims = [d.name for d in self.run.dimensions]
        scores = ", ".join(
            f"{d}: {g.initial_mean[d]:.2f} → {g.final_mean[d]:.2f}" for d in dims
            if d in g.initial_mean and d in g.final_mean)
        parts = []
        if g.status == "failed":
            parts.append(f"<p style='color:#b42318'><b>This debate failed:</b> "
                         f"{html.escape(g.error)}</p>")
        elif g.status == "partial":
            parts.append(f"<p style='color:#8a5a00'><b>Partly failed:</b> "
                         f"{html.escape(g.error)}</p>")
        if scores:
            parts.append(f"<p><b>Scores (before → after the debate):</b> {html.escape(scores)}"
                         + (f"<br><i>The debate ended: {html.escape(g.stop_reason)}.</i>"
                            if g.stop_reason else "")
                         + (f"<br><i>{html.escape(g.note)}</i>" if g.note else "") + "</p>")
        if g.feedback:
            body = html.escape(g.feedback).replace("\n", "<br>")
            parts.append(f"<p>{body}</p>")
        elif g.feedback_error:
            parts.append(f"<p style='color:#b42318'>No feedback: "
                         f"{html.escape(g.feedback_error)}</p>")
        self.feedback.setHtml("".join(parts))
        rows = []
        for a in g.agents:
            if a.initial is not None:
                rows.append({"turn": 0, "speaker": a.agent,
                             "reason": "Phase 1: everyone evaluates alone.",
                             "message": a.initial.rationale, "scores": _scores(a.initial.scores)})
            else:
                rows.append({"turn": 0, "speaker": a.agent, "status": "failed",
                             "reason": "Phase 1: everyone evaluates alone.",
                             "message": f"FAILED: {a.error}", "scores": ""})
        for t in g.turns:
            message = f"FAILED: {t.error}" if t.error else t.message
            if t.kind == "final" and not t.error:
                message = f"Final evaluation: {message}"
            rows.append({"turn": t.turn, "speaker": t.speaker, "reason": t.reason,
                         "message": message, "scores": _scores(t.scores),
                         "status": "failed" if t.error else ""})
        self.transcript_model.set_rows(rows)
        fit_rows(self.transcript_view, lines=8)

    def set_out_of_date(self, differences: list[str]) -> None:
        """Mark the results shown as out of date (``differences``: what changed since, in plain
        words) or as current (empty). Out-of-date results cannot be exported."""
        self.out_of_date = list(differences)
        if differences:
            self.stale.setText(
                "These results are out of date: " + _join(differences) + " changed since they "
                "were made, so they do not show the current choices. Run the debates again "
                "(page Run) for results of the current choices; Export is off until then.")
        self.stale.setVisible(bool(differences))
        self.export_button.setEnabled(not differences)
        self.export_button.setToolTip(
            "These results are out of date; run the debates again to export." if differences
            else "Save every score, feedback, transcript, the personas and the agreement "
                 "statistics as one workbook.")

    def show_export(self, path: str) -> None:
        self.export_message.setText(f"Saved {path}")
        self.export_message.show()


def _scores(scores: dict[str, int] | None) -> str:
    return ", ".join(f"{k}: {v}" for k, v in scores.items()) if scores else ""


def _value(statistic: Any) -> float | str | None:
    """A correlation's value with its sign, or "undefined" (the reason is in the note)."""
    if statistic is None:
        return None
    return float(statistic.value) if statistic.value is not None else "undefined"


def _p_text(p: float | None) -> str | None:
    """A p-value as the other results pages show it ("< 0.001", "0.013", "0.21")."""
    if p is None:
        return None
    return format_p(p).removeprefix("p ").removeprefix("= ")


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
