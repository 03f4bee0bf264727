"""The tabs of "Check the judge" for several raters: **Agreed grades** (the items raters
disagree on beyond a threshold, every grade and note side by side, the agreed grade recorded
with who decided and when) and **Raters and sheets** (the grading order, a recorded random
sample to grade, items handed out to k raters with each rater's progress, and an Excel rating
sheet made for each rater and read back with its checks named by row).

Only input and output: the work is :mod:`core.grading`'s. Both tabs live in a
:class:`desktop.judge_check.JudgeCheckPanel` (``panel``), whose project, judge and ratings
they use.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core import judge_check as jc
from core.grading import adjudication as adj
from core.grading import plan as gp
from core.grading.statistics import JUDGE
from core.words import count
from desktop.file_dialogs import SPREADSHEETS, open_files
from desktop.views import Column, FrameModel, table_view
from desktop.widgets import fit_columns, group_box, hint_label, splitter

__all__ = ["AdjudicationTab", "RatersTab"]

DISPUTE_COLUMNS = [
    Column("item", "Item"),
    Column("what", "Disagree on"),
    Column("spread", "Apart by",
           tip="Highest minus lowest grade (1 for a Yes/No question answered both ways)."),
    Column("raters", "Raters", "int"),
    Column("decided", "Agreed grade"),
]
PROGRESS_COLUMNS = [
    Column("rater", "Rater"),
    Column("assigned", "Items", "int", tip="The items handed out to this rater (every item "
           "when none are handed out)."),
    Column("graded", "Graded", "int"),
    Column("remaining", "Left", "int"),
    Column("share", "Done", "percent"),
    Column("outside", "Graded outside their items", "int"),
    Column("not_blind", "Not blind", "int",
           tip="Grades given after the rater saw the judge's scores or other raters' grades."),
]


def _grade_text(value: float | bool) -> str:
    if isinstance(value, bool):
        return "Yes" if value else "No"
    return f"{value:g}"


class AdjudicationTab(QWidget):
    """The items raters disagree on, and recording the grade they agreed on."""

    def __init__(self, panel: Any) -> None:
        super().__init__()
        self.panel = panel
        self.items: list[adj.ItemDisputes] = []
        self.shown: adj.ItemDisputes | None = None
        self.agreed_combos: dict[tuple[str, str], QComboBox] = {}
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(0.0, 100.0)
        self.threshold.setSingleStep(0.5)
        self.threshold.setValue(adj.DEFAULT_THRESHOLD)
        self.threshold.setSuffix(" points")
        self.threshold.setToolTip("List the items whose grades lie more than this many points "
                                  "apart (and checklist questions answered both ways).")
        self.threshold.valueChanged.connect(lambda _v: self.refresh())
        self.about = hint_label()
        top = QHBoxLayout()
        top.addWidget(QLabel("Raters disagree by more than:"))
        top.addWidget(self.threshold)
        top.addWidget(self.about, 1)
        self.model = FrameModel(DISPUTE_COLUMNS)
        self.view = table_view(self.model, sortable=False)
        self.view.clicked.connect(lambda index: self.show_item(index.row()))
        self.side = QTextBrowser()
        self.side.setOpenLinks(False)
        self.form_box = QWidget()
        self.form = QFormLayout(self.form_box)
        self.decided_by = QLineEdit()
        self.decided_by.setToolTip("Who decided the agreed grade (kept with it, and when).")
        self.decided_by.setMaximumWidth(240)
        self.note = QPlainTextEdit()
        self.note.setPlaceholderText("Why this grade (optional)")
        self.note.setMaximumHeight(60)
        self.record_button = QPushButton("Record the agreed grade")
        self.record_button.setObjectName("primaryButton")
        self.record_button.clicked.connect(self.record)
        self.message = hint_label()
        right = QWidget()
        lay = QVBoxLayout(right)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.side, 1)
        lay.addWidget(self.form_box)
        by = QHBoxLayout()
        by.addWidget(QLabel("Decided by:"))
        by.addWidget(self.decided_by)
        by.addStretch(1)
        by.addWidget(self.record_button)
        lay.addWidget(self.note)
        lay.addLayout(by)
        lay.addWidget(self.message)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter(self.view, right, stretch=[2, 3]), 1)

    def refresh(self) -> None:
        import pandas as pd

        panel = self.panel
        if panel.judge is None:
            self.items = []
        else:
            self.items = adj.disputes(panel.judge, panel.ratings,
                                      threshold=self.threshold.value(),
                                      adjudications=panel.adjudications)
        rows = []
        for d in self.items:
            a = d.adjudication
            rows.append({
                "item": d.item_id, "what": "; ".join(x.what for x in d.disputes),
                "spread": f"{d.spread:g} point{'s' if d.spread != 1 else ''}",
                "raters": len(d.ratings),
                "decided": (f"agreed by {a.rater} on {a.at[:10]}" if a is not None and d.decided
                            else "partly agreed" if a is not None else "to decide")})
        self.model.set_frame(pd.DataFrame(rows, columns=[c.key for c in DISPUTE_COLUMNS]))
        fit_columns(self.view, stretch=self.model.column_of("what"), max_width=300)
        open_ = sum(1 for d in self.items if not d.decided)
        self.about.setText(f"{count(len(self.items), 'item')} on which raters disagree; "
                           f"{open_} still to decide. The judge's scores are not shown here.")
        if not self.decided_by.text().strip():
            self.decided_by.setText(panel.rater())
        keep = self.shown.item_id if self.shown is not None else None
        row = next((k for k, d in enumerate(self.items) if d.item_id == keep), 0)
        self.show_item(row if self.items else None)

    def show_item(self, row: int | None) -> None:
        """Every rater's grades and notes of the item side by side, and a choice of the agreed
        grade for each disagreement."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self.agreed_combos = {}
        self.shown = self.items[row] if row is not None and 0 <= row < len(self.items) else None
        self.record_button.setEnabled(self.shown is not None)
        d = self.shown
        if d is None or row is None:
            self.side.setHtml("<p>No item to decide at this threshold.</p>")
            return
        self.view.selectRow(row)
        raters = [r.rater for r in d.ratings]
        head = "".join(f"<th>{html.escape(r)}</th>" for r in raters)
        body = []
        judge = self.panel.judge
        for dim in judge.dimensions:
            cells = "".join(f"<td align='center'>{_grade_text(r.scores[dim])}</td>"
                            if dim in r.scores else "<td align='center'>—</td>"
                            for r in d.ratings)
            body.append(f"<tr><td><b>{html.escape(dim)}</b></td>{cells}</tr>")
            for q in judge.questions.get(dim, []):
                cells = "".join(
                    f"<td align='center'>{_grade_text(r.answers[dim][q])}</td>"
                    if q in r.answers.get(dim, {}) else "<td align='center'>—</td>"
                    for r in d.ratings)
                body.append(f"<tr><td>{html.escape(q)}</td>{cells}</tr>")
        notes = "".join(f"<td>{html.escape(r.note) or '—'}</td>" for r in d.ratings)
        body.append(f"<tr><td><i>Note</i></td>{notes}</tr>")
        decided = (f"<p>Agreed grade recorded by {html.escape(d.adjudication.rater)} on "
                   f"{d.adjudication.at[:16].replace('T', ' ')}.</p>"
                   if d.adjudication is not None else "")
        context = (f"<p style='color:#52606d'>{html.escape(d.context)}</p>" if d.context else "")
        self.side.setHtml(
            f"<h3>Item {html.escape(d.item_id)}</h3>{context}"
            f"<p>{html.escape(d.text or '(no text)')}</p>"
            f"<table border='1' cellpadding='4' cellspacing='0'><tr><th></th>{head}</tr>"
            + "".join(body) + f"</table>{decided}")
        for x in d.disputes:
            combo = QComboBox()
            combo.addItem("—", None)
            if x.question:
                combo.addItem("Yes", True)
                combo.addItem("No", False)
            else:
                for g in judge.grades():
                    combo.addItem(f"{g:g}", float(g))
            if x.agreed is not None:
                combo.setCurrentIndex(max(combo.findData(x.agreed), 0))
            self.agreed_combos[(x.dimension, x.question)] = combo
            label = QLabel(f"Agreed grade of {html.escape(x.what)}:")
            label.setWordWrap(True)
            self.form.addRow(label, combo)
        self.note.setPlainText(d.adjudication.note if d.adjudication is not None else "")

    @Slot()
    def record(self) -> jc.Rating | None:
        d, panel = self.shown, self.panel
        if d is None:
            return None
        scores: dict[str, float] = {}
        answers: dict[str, dict[str, bool]] = {}
        for (dim, question), combo in self.agreed_combos.items():
            value = combo.currentData()
            if value is None:
                continue
            if question:
                answers.setdefault(dim, {})[question] = bool(value)
            else:
                scores[dim] = float(value)
        try:
            saved = adj.adjudicate(panel.project, panel.method, d,
                                   decided_by=self.decided_by.text().strip(), scores=scores,
                                   answers=answers, note=self.note.toPlainText().strip(),
                                   allowed=panel.judge.grades())
        except ValueError as exc:
            self.message.setText(f"Not recorded: {exc}")
            return None
        self.message.setText(f"Agreed grade of item {d.item_id} recorded by {saved.rater}.")
        panel.adjudications = jc.load_adjudications(panel.project, panel.method)
        panel._stale = True
        self.refresh()
        return saved


#: Fewer graded texts than this give no interval width on screen: with two or three texts the
#: bootstrap's interval is often 0 wide, which would read as perfectly precise.
MIN_FOR_WIDTH = 10


class RatersTab(QWidget):
    """The grading order, a recorded random sample, items handed out to raters with their
    progress, and the rating sheets."""

    def __init__(self, panel: Any) -> None:
        super().__init__()
        self.panel = panel
        # the order
        self.order_combo = QComboBox()
        for key, words in gp.ORDERS.items():
            self.order_combo.addItem(words, key)
        self.order_button = QPushButton("Use this order")
        self.order_button.clicked.connect(self.use_order)
        self.order_about = hint_label()
        order_row = QHBoxLayout()
        order_row.addWidget(self.order_combo, 1)
        order_row.addWidget(self.order_button)
        # the random sample
        self.sample_spin = QSpinBox()
        self.sample_spin.setRange(1, 1)
        self.sample_button = QPushButton("Draw a random sample of these items to grade")
        self.sample_button.setToolTip("The draw is recorded (which items, the seed, who, "
                                      "when); the drawn items are offered first and only they "
                                      "correct the judge's mean.")
        self.sample_button.clicked.connect(self.draw)
        self.sample_about = hint_label()
        sample_row = QHBoxLayout()
        sample_row.addWidget(QLabel("Items:"))
        sample_row.addWidget(self.sample_spin)
        sample_row.addWidget(self.sample_button)
        sample_row.addStretch(1)
        # assignment
        self.raters_edit = QLineEdit()
        self.raters_edit.setPlaceholderText("Names, separated by commas: Anna, Ben, Cleo")
        self.k_spin = QSpinBox()
        self.k_spin.setRange(2, 2)
        self.k_spin.setToolTip("How many raters grade each item (at least two, so that "
                               "their agreement can be computed).")
        self.assign_button = QPushButton("Hand out the items")
        self.assign_button.clicked.connect(self.hand_out)
        self.clear_button = QPushButton("Everyone grades every item")
        self.clear_button.clicked.connect(self.clear)
        self.raters_edit.textChanged.connect(self._names_changed)
        assign_row = QHBoxLayout()
        assign_row.addWidget(QLabel("Raters:"))
        assign_row.addWidget(self.raters_edit, 1)
        assign_row.addWidget(QLabel("Raters per item:"))
        assign_row.addWidget(self.k_spin)
        assign_row.addWidget(self.assign_button)
        assign_row.addWidget(self.clear_button)
        self.plan_about = hint_label()
        #: How precise the judge-vs-people agreement is now (widths only: no value, no grade).
        self.width_label = hint_label()
        panel.report_changed.connect(self._report_changed)
        self.progress_model = FrameModel(PROGRESS_COLUMNS)
        self.progress_view = table_view(self.progress_model, sortable=False)
        # rating sheets
        self.make_button = QPushButton("Make rating sheets…")
        self.make_button.setToolTip("One Excel sheet per rater with only their items, no "
                                    "judge's score and no other rater's grade.")
        self.make_button.clicked.connect(self._ask_make)
        self.read_button = QPushButton("Read rating sheets…")
        self.read_button.setToolTip("Read filled-in sheets back: every row is checked and "
                                    "problems are named by row.")
        self.read_button.clicked.connect(self._ask_read)
        sheets_row = QHBoxLayout()
        sheets_row.addWidget(self.make_button)
        sheets_row.addWidget(self.read_button)
        sheets_row.addStretch(1)
        self.sheets_text = QTextBrowser()
        self.sheets_text.setMaximumHeight(130)
        layout = QVBoxLayout(self)
        layout.addWidget(group_box("Order", order_row, self.order_about))
        layout.addWidget(group_box("Random sample to grade", sample_row, self.sample_about))
        layout.addWidget(group_box("Who grades what", assign_row, self.plan_about,
                                   (self.progress_view, 1), self.width_label), 1)
        layout.addWidget(group_box("Excel rating sheets", sheets_row, self.sheets_text))

    # ---------------------------------------------------------------- filling
    def refresh(self) -> None:
        panel = self.panel
        project, judge = panel.project, panel.judge
        enabled = judge is not None and project is not None
        for w in (self.order_button, self.sample_button, self.assign_button,
                  self.clear_button, self.make_button, self.read_button):
            w.setEnabled(enabled)
        if not enabled:
            return
        choice = gp.order_choice(project, panel.method)
        assert choice is not None  # made on first use
        self.order_combo.setCurrentIndex(max(self.order_combo.findData(choice.order), 0))
        self.order_about.setText(f"Items are offered in {choice.describe()}.")
        population = len(gp.population(judge))
        self.sample_spin.setRange(1, max(population, 1))
        sample = gp.drawn_sample(project, panel.method)
        if sample is not None:
            self.sample_spin.setValue(sample.size)
        elif self.sample_spin.value() <= 1:
            self.sample_spin.setValue(min(population, 30))
        self.sample_about.setText(
            (f"Drawn: {sample.describe()}. They are offered first; only they correct the "
             "judge's mean.") if sample is not None else
            "No sample drawn: the items graded first in the random order count as drawn at "
            "random.")
        plan = gp.load_plan(project, panel.method)
        if plan is not None and not self.raters_edit.text().strip():
            self.raters_edit.setText(", ".join(plan.raters))
            self.k_spin.setRange(2, max(2, len(plan.raters)))
            self.k_spin.setValue(plan.k)
        self.plan_about.setText(plan.describe() if plan is not None else
                                "No items handed out: every rater is offered every item.")
        self._show_progress(plan)
        self.show_widths()
        if panel._stale and not panel.computing:
            panel.refresh_report()  # in the background; the widths follow when it is done

    @Slot()
    def _report_changed(self) -> None:
        if self.panel.tabs.currentWidget() is self:
            self.show_widths()

    def show_widths(self) -> str:
        """How wide the judge-vs-people agreement's 95% interval is now, per dimension and
        question (half its width, with n): only widths, so a rater stays blind."""
        report = self.panel.report
        parts = []
        for block in report.agreement if report is not None else []:
            first = block.first
            if block.between != JUDGE or first is None \
                    or first.ci_low is None or first.ci_high is None or not first.defined:
                continue
            if first.n < MIN_FOR_WIDTH:  # 2 texts agree perfectly: a width of 0 says nothing
                parts.append(f"{block.what}: {count(first.n, 'text')} graded, too few for an "
                             f"interval (it shows from {MIN_FOR_WIDTH})")
                continue
            half = (first.ci_high - first.ci_low) / 2
            parts.append(f"{block.what}: ±{half:.2f} ({first.n} texts)")
        text = ("How precise the agreement between the judge and the people is now (half the "
                "width of its 95% interval; ±0.10 or less is precise): " + "; ".join(parts) + "."
                if parts else "How precise the agreement is now shows here once graded items "
                "can be compared with the judge.")
        self.width_label.setText(text)
        return text

    def _show_progress(self, plan: gp.GradingPlan | None) -> None:
        import pandas as pd

        panel = self.panel
        rows = [{"rater": p.rater, "assigned": p.assigned, "graded": p.graded,
                 "remaining": p.remaining, "share": p.share * 100, "outside": p.outside,
                 "not_blind": p.not_blind}
                for p in gp.rater_progress(panel.judge, panel.ratings, plan)]
        self.progress_model.set_frame(pd.DataFrame(rows,
                                                   columns=[c.key for c in PROGRESS_COLUMNS]))
        fit_columns(self.progress_view, stretch=self.progress_model.column_of("rater"))

    def names(self) -> list[str]:
        return [n.strip() for n in self.raters_edit.text().split(",") if n.strip()]

    @Slot(str)
    def _names_changed(self, _text: str) -> None:
        self.k_spin.setRange(2, max(2, len(self.names())))

    # ---------------------------------------------------------------- actions
    def _done(self, text: str) -> None:
        self.sheets_text.setPlainText(text)
        self.panel.skipped = []
        self.panel.show_next()
        self.refresh()

    @Slot()
    def use_order(self) -> None:
        panel = self.panel
        others = [j for _n, _k, j in jc.other_judges(panel.judge, panel.candidates)]
        try:
            gp.choose_order(panel.project, panel.method, panel.judge,
                            self.order_combo.currentData(), who=panel.rater(), others=others)
        except ValueError as exc:
            self.order_about.setText(f"Not changed: {exc}")
            return
        self._done("The grading order is changed (recorded with who and when).")

    @Slot()
    def draw(self) -> gp.DrawnSample | None:
        panel = self.panel
        try:
            drawn = gp.draw_sample(panel.project, panel.method, panel.judge,
                                   self.sample_spin.value(), who=panel.rater())
        except ValueError as exc:
            self.sample_about.setText(f"Not drawn: {exc}")
            return None
        self._done(f"Drawn: {drawn.describe()}.")
        return drawn

    @Slot()
    def hand_out(self) -> gp.GradingPlan | None:
        panel = self.panel
        try:
            plan = gp.make_plan(panel.project, panel.method, panel.judge, self.names(),
                                self.k_spin.value(), who=panel.rater())
        except ValueError as exc:
            self.plan_about.setText(f"Not handed out: {exc}")
            return None
        self._done(f"Handed out: {plan.describe()}")
        return plan

    @Slot()
    def clear(self) -> None:
        gp.clear_plan(self.panel.project, self.panel.method, who=self.panel.rater())
        self.raters_edit.clear()
        self._done("Every rater is offered every item again (grades given stay).")

    def ask_sheets_folder(self) -> str | None:
        from desktop.file_dialogs import _folder_of

        path = QFileDialog.getExistingDirectory(self, "Where to put the rating sheets",
                                                _folder_of(self))
        return path or None

    def ask_sheet_paths(self) -> list[str]:
        return open_files(self, "Read rating sheets", SPREADSHEETS)

    @Slot()
    def _ask_make(self) -> None:
        folder = self.ask_sheets_folder()
        if folder:
            self.make_sheets(folder)

    @Slot()
    def _ask_read(self) -> None:
        paths = self.ask_sheet_paths()
        if paths:
            self.read_sheets(paths)

    def make_sheets(self, folder: str | Path) -> list[Path]:
        """One sheet per rater of the plan (their items), or for the rater on the Grade tab
        (every item in the offered order) when no items are handed out."""
        from core.grading.sheets import sheet_name, write_rating_sheet

        panel = self.panel
        plan = gp.load_plan(panel.project, panel.method)
        folder = Path(folder)
        made: list[Path] = []
        raters = list(plan.raters) if plan is not None else [panel.rater()]
        try:
            for rater in raters:
                items = (plan.items.get(rater, ()) if plan is not None else
                         [i for i in (panel.queue() or []) if i in set(gp.population(panel.judge))])
                target = folder / sheet_name(rater, panel.method)
                write_rating_sheet(target, panel.judge, rater, items,
                                   own=[r for r in panel.ratings if r.rater == rater],
                                   readme=[("Made by", panel.who())])
                made.append(target)
        except Exception as exc:  # noqa: BLE001 - TableError and OS errors say what to do
            self.sheets_text.setPlainText(f"Not made: {getattr(exc, 'message', exc)}")
            return made
        self.sheets_text.setPlainText(
            f"{count(len(made), 'rating sheet')} made in {folder}: "
            + ", ".join(p.name for p in made) + ". Each holds only its rater's items, without "
            "the judge's scores or other raters' grades.")
        return made

    def read_sheets(self, paths: list[str]) -> list[jc.RatingsRead]:
        """Read filled-in sheets: the ratings kept in the project, every problem named by
        file and row. A file that cannot be used is said and nothing of it is kept."""
        from core.grading.sheets import read_rating_sheet

        panel = self.panel
        plan = gp.load_plan(panel.project, panel.method)
        lines: list[str] = []
        out = []
        for path in paths:
            name = Path(path).name
            got = read_rating_sheet(path, panel.judge, plan=plan)
            out.append(got)
            if got.errors:
                lines.append(f"{name}: not read. " + " ".join(got.errors))
                continue
            for rating in got.ratings:
                # a sheet EvalDesk made shows no judge's score nor other grades: as blind as
                # its rater was; a file of unknown making: blindness not recorded
                jc.save_rating(panel.project, panel.method, rating,
                               who=f"{panel.who()} (read from {name})",
                               **({} if got.made_for else {"blind": None}))
            lines.append(f"{name}: {count(len(got.ratings), 'rating')} read"
                         + (f" ({got.made_for}'s sheet)" if got.made_for else "") + ".")
            lines += [f"{name}: {p}" for p in got.problems]
        panel.ratings = jc.load_ratings(panel.project, panel.method)
        panel._ratings_changed()
        self._done("\n".join(lines))
        self.sheets_text.setPlainText("\n".join(lines))
        return out
