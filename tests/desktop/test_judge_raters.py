"""Several raters in the "Check the judge" panel: grading blind (the judge's scores and the
other raters' grades hidden; asked before the report shows them, and the later grades marked
not blind), the statistics reviewers ask for and the corrected mean on screen (the same
numbers as core.reliability on the same grades), a recorded random sample, adjudication,
rating sheets made and read back, and items handed out to raters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import judge_check as jc
from core.grading import plan as gp
from core.project import Project
from core.reliability import corrected_mean
from desktop.judge_check import JudgeCheckPanel

DIM = "Clarity"
QUESTION = "Does it answer the question?"
N = 30


def _judge(n: int = N) -> jc.JudgeData:
    """A judge that is one point too generous on most texts (a biased judge), with a Yes/No
    question most texts pass."""
    rng = np.random.default_rng(7)
    items = []
    for k in range(n):
        true = float(rng.integers(1, 6))
        items.append(jc.JudgeItem(
            item_id=f"s{k:03d}", text=f"Student answer number {k}: the water cycle.",
            context=f"Question {k % 4 + 1}", scores={DIM: min(5.0, true + 1.0)},
            answers={DIM: {QUESTION: bool(k % 5)}}))
    return jc.JudgeData(method="MAJ-Eval", items=items, dimensions=[DIM],
                        questions={DIM: [QUESTION]}, model="judge-model",
                        source="project run 1")


def _truth(judge: jc.JudgeData, item_id: str) -> float:
    return max(1.0, judge.item(item_id).scores[DIM] - 1.0)


@pytest.fixture
def project(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as p:
        yield p


@pytest.fixture
def panel(qtbot, qloop, project):
    widget = JudgeCheckPanel("majeval", lambda: "Anna")
    qtbot.addWidget(widget)
    widget.set_judge(project, _judge())
    return widget


def _wait(qtbot, panel) -> None:
    qtbot.waitUntil(lambda: not panel.computing, timeout=120_000)


def _grade(panel, score: float, answer: bool | None = None) -> str:
    item = panel.current
    combo = panel.score_combos[DIM]
    combo.setCurrentIndex(combo.findData(float(score)))
    if answer is not None:
        panel.answer_combos[(DIM, QUESTION)].setCurrentIndex(1 if answer else 2)
    assert panel.save_and_next(), panel.message.text()
    return item


def test_blind_grading_hides_others_and_asks_before_the_report(qtbot, panel, project):
    judge = panel.judge
    # Ben graded every item already (his 1s would sway Anna): nothing of his is on her screen
    for item in judge.items:
        jc.save_rating(project, "majeval", jc.Rating(item.item_id, "Ben", {DIM: 1.0},
                                                     note="Ben's secret note"))
    panel.set_judge(project, judge)
    panel.blind_check.setChecked(True)
    assert gp.blind_grading(project, "majeval")
    assert panel.score_combos[DIM].currentData() is None  # not Ben's 1
    assert "Ben" not in panel.text_view.toPlainText()
    assert "secret" not in panel.text_view.toPlainText() and panel.note_edit.toPlainText() == ""
    assert "judge's score and the other raters' grades are hidden" in panel.blind_label.text()
    from PySide6.QtWidgets import QLabel

    shown = " ".join(w.text() for w in panel.tabs.widget(0).findChildren(QLabel))
    assert "judge-model" not in shown and "Ben" not in shown
    _grade(panel, 3, answer=True)
    # the report shows the judge and Ben: asked first; "no" keeps Anna on the Grade tab
    asked = []
    panel.confirm_unblind = lambda what: asked.append(what) or False
    panel.tabs.setCurrentIndex(1)
    assert asked == ["report"] and panel.tabs.currentIndex() == 0
    assert jc.unblinded(project, "majeval") == {}
    panel.tabs.setCurrentIndex(panel.pick_tab)
    assert asked[-1] == "ranking of the judges" and panel.tabs.currentIndex() == 0
    # the ratings workbook holds Ben's grades: asked too, and nothing written on "no"
    panel.ask_export_path = lambda: pytest.fail("blind: no file may be asked for")
    panel.export_button.click()
    assert asked[-1] == "export of everyone's ratings" and "not exported" in \
        panel.message.text()
    # "yes": shown, recorded, and her next grades are marked not blind
    panel.confirm_unblind = lambda what: asked.append(what) or True
    panel.tabs.setCurrentIndex(1)
    assert panel.tabs.currentIndex() == 1 and "Anna" in jc.unblinded(project, "majeval")
    _wait(qtbot, panel)
    panel.tabs.setCurrentIndex(0)
    assert "marked “not blind”" in panel.blind_label.text()
    _grade(panel, 4)
    mine = [r for r in jc.load_ratings(project, "majeval") if r.rater == "Anna"]
    assert [r.blind for r in mine] == [True, False]
    # asked once: she has seen it now
    n = len(asked)
    panel.tabs.setCurrentIndex(1)
    assert len(asked) == n and panel.tabs.currentIndex() == 1
    _wait(qtbot, panel)
    out = panel.export_ratings(panel.project.path.parent / "ratings.xlsx")
    sheet = pd.read_excel(out, sheet_name="Ratings", keep_default_na=False)
    anna = sheet[(sheet.rater == "Anna") & (sheet.question == "")]
    assert list(anna.blind) == ["yes", "no"] and set(sheet.origin) == {"human"}


def test_blind_off_still_records_who_saw_the_report(qtbot, panel, project):
    panel.confirm_unblind = lambda what: pytest.fail("blind grading is off: nothing to ask")
    _grade(panel, 2)
    panel.tabs.setCurrentIndex(1)
    _wait(qtbot, panel)
    panel.tabs.setCurrentIndex(0)
    _grade(panel, 5)
    assert [r.blind for r in jc.load_ratings(project, "majeval")] == [True, False]


def test_reliability_and_corrected_mean_on_screen_equal_core(qtbot, panel, project):
    judge = panel.judge
    # a random sample of 20 drawn and recorded; Anna and Ben grade it (Ben one point apart
    # on a few texts)
    drawn = gp.draw_sample(project, "majeval", judge, 20, who="Anna", seed=11)
    panel.set_judge(project, judge)
    assert "The 20 items drawn at random come first." in panel.progress_label.text()
    graded = []
    while panel.current in drawn.items:
        item = panel.current
        graded.append(_grade(panel, _truth(judge, item), answer=bool(int(item[1:]) % 5)))
    assert sorted(graded) == sorted(drawn.items)
    for k, item in enumerate(graded):
        ben = _truth(judge, item) + (1.0 if k % 4 == 0 and _truth(judge, item) < 5 else 0.0)
        jc.save_rating(project, "majeval", jc.Rating(item, "Ben", {DIM: ben}))
    panel.set_judge(project, judge)
    panel.tabs.setCurrentIndex(1)
    _wait(qtbot, panel)
    report = panel.report
    assert report is not None and report.rated == 20
    # the graded items are the recorded draw: a random sample, not "passed over" items
    assert report.sampling.representative and "were drawn at random" in \
        panel.about_label.text()
    assert "WARNING" not in dict(report.describe()) or "not a random sample" not in \
        dict(report.describe())["WARNING"]
    # the statistics: both comparisons, the number to report said in a sentence
    rel = panel.reliability_model
    between = {rel.value(r, "between") for r in range(rel.rowCount())}
    assert between == {"between people", "between the judge and people"}
    stats_shown = {rel.value(r, "statistic") for r in range(rel.rowCount())}
    assert "Percent agreement" in stats_shown and any("ICC(2,1)" in s for s in stats_shown)
    first = [r for r in range(rel.rowCount()) if rel.value(r, "report_first")
             and not rel.value(r, "question")]
    assert len(first) == 2 and all(rel.value(r, "n") == 20 for r in first)
    text = panel.reliability_text.toPlainText()
    assert "Between the people on Clarity (Anna, Ben): report" in text
    assert "95% CI" in text and "20 texts" in text
    # the corrected mean beside the judge's raw mean, equal to core.reliability's
    cm = panel.corrected_model
    row = next(r for r in range(cm.rowCount()) if cm.value(r, "judge") == "the judge"
               and cm.value(r, "group") == "all")
    ids = [i.item_id for i in judge.items]
    people = {r.item_id: [] for r in jc.load_ratings(project, "majeval")}
    for r in jc.load_ratings(project, "majeval"):
        people[r.item_id].append(r.scores[DIM])
    human = [float(np.mean(people[i])) if i in people else np.nan for i in ids]
    expected = corrected_mean([judge.item(i).scores[DIM] for i in ids], human,
                              random_sample=[i in drawn.items for i in ids])
    assert cm.value(row, "judge_mean") == pytest.approx(expected.judge_mean, abs=1e-4)
    assert cm.value(row, "corrected_mean") == pytest.approx(expected.corrected, abs=1e-4)
    assert cm.value(row, "corrected_ci_low") == pytest.approx(expected.corrected_ci[0],
                                                              abs=1e-4)
    assert cm.value(row, "narrower_by") == pytest.approx(expected.narrower_by * 100, abs=0.05)
    assert cm.value(row, "n_graded_at_random") == 20
    assert expected.corrected < expected.judge_mean - 0.5  # the judge's bias is corrected
    words = panel.corrected_text.toPlainText()
    assert "20 graded of the 20 of 30 items drawn at random by Anna" in words
    assert "narrower than from your grades alone" in words
    # how precise the judge-vs-people agreement is now: its width only (a rater stays blind)
    block = next(b for b in report.agreement
                 if b.between == "between the judge and people" and not b.question)
    half = (block.first.ci_high - block.first.ci_low) / 2
    panel.tabs.setCurrentIndex(panel.raters_tab)
    shown = panel.raters.width_label.text()
    assert f"Clarity: ±{half:.2f} (20 texts)" in shown
    assert f"{block.first.value:.2f}" not in shown.replace(f"±{half:.2f}", "")
    # one more grade: recomputed in the background, the width follows
    panel.tabs.setCurrentIndex(0)
    _grade(panel, _truth(judge, panel.current))
    panel.tabs.setCurrentIndex(panel.raters_tab)
    _wait(qtbot, panel)
    assert panel.report.rated == 21 and "(21 texts)" in panel.raters.width_label.text()


def test_adjudication_lists_disputes_side_by_side_and_records_the_agreed_grade(
        qtbot, panel, project, tmp_path):
    judge = panel.judge
    ids = [i.item_id for i in judge.items]
    for k, item in enumerate(ids[:10]):
        jc.save_rating(project, "majeval", jc.Rating(item, "Anna", {DIM: 4.0},
                                                     {DIM: {QUESTION: True}}, note="clear"))
        ben = 1.0 if k < 3 else 3.5  # 3 points apart on 3 items, half a point on the others
        jc.save_rating(project, "majeval", jc.Rating(item, "Ben", {DIM: ben},
                                                     {DIM: {QUESTION: k != 0}},
                                                     note="off topic" if k < 3 else ""))
    panel.set_judge(project, judge)
    panel.confirm_unblind = lambda what: what == "view of the agreed grades"
    panel.blind_check.setChecked(True)
    panel.tabs.setCurrentIndex(panel.agreed_tab)
    assert panel.tabs.currentIndex() == panel.agreed_tab
    assert jc.unblinded(project, "majeval")["Anna"]
    tab = panel.adjudication
    model = tab.model
    assert model.rowCount() == 3 and {model.value(r, "item") for r in range(3)} == set(ids[:3])
    assert model.value(0, "item") == ids[0]  # the question split too: listed first
    assert "Clarity: Does it answer the question?" in model.value(0, "what")
    assert all(model.value(r, "decided") == "to decide" for r in range(3))
    # every grade and note side by side; the judge's score is not shown
    side = tab.side.toPlainText()
    assert "Anna" in side and "Ben" in side and "off topic" in side and "clear" in side
    assert "judge" not in side.lower()
    tab.threshold.setValue(0.25)  # half a point apart counts now
    assert model.rowCount() == 10
    tab.threshold.setValue(1.0)
    # the agreed grade: 3 on Clarity, Yes on the question, decided by Dana
    tab.show_item(0)
    tab.agreed_combos[(DIM, "")].setCurrentIndex(tab.agreed_combos[(DIM, "")].findData(3.0))
    tab.decided_by.setText("Dana")
    tab.note.setPlainText("read together")
    tab.agreed_combos[(DIM, QUESTION)].setCurrentIndex(1)
    saved = tab.record()
    assert saved is not None and saved.rater == "Dana"
    agreed = jc.load_adjudications(project, "majeval")
    assert [(a.item_id, a.scores, a.answers, a.rater) for a in agreed] == [
        (ids[0], {DIM: 3.0}, {DIM: {QUESTION: True}}, "Dana")]
    assert {s.rater for s in agreed[0].sources} == {"Anna", "Ben"}
    assert model.value(next(r for r in range(3) if model.value(r, "item") == ids[0]),
                       "decided").startswith("agreed by Dana on ")
    # nothing chosen: not recorded, said
    tab.show_item(1)
    tab.agreed_combos.clear()
    assert tab.record() is None and "Not recorded" in tab.message.text()
    # the report can compare with the agreed grades; the export marks each label's origin
    panel.confirm_unblind = lambda what: True
    panel.tabs.setCurrentIndex(1)
    _wait(qtbot, panel)
    assert panel.rater_combo.findData(jc.AGREED) > 0
    out = panel.export_report(tmp_path / "report.xlsx")
    labels = pd.read_excel(out, sheet_name="Labels")
    assert set(labels.origin) == {"human", "adjudicated", "judge"}
    decided = labels[labels.origin == "adjudicated"]
    assert set(decided.item) == {ids[0]} and set(decided.by) == {"Dana"}
    ratings = panel.export_ratings(tmp_path / "ratings.xlsx")
    sheet = pd.read_excel(ratings, sheet_name="Ratings", keep_default_na=False)
    assert set(sheet[sheet.origin == "adjudicated"].rater) == {"Dana"}
    assert "Ben: Clarity 1" in sheet[sheet.origin == "adjudicated"].decided_from.iloc[0]


def test_hand_out_to_raters_make_and_read_sheets(qtbot, panel, project, tmp_path):
    from openpyxl import load_workbook

    panel.tabs.setCurrentIndex(panel.raters_tab)
    tab = panel.raters
    # a random sample of 12, recorded, offered first
    tab.sample_spin.setValue(12)
    drawn = tab.draw()
    assert drawn is not None and drawn.size == 12 and gp.drawn_sample(project, "majeval")
    assert "12 of 30 items drawn at random by Anna" in tab.sample_about.text()
    assert panel.current in drawn.items
    # three raters, two per item: the drawn items handed out, balanced, with overlap
    tab.raters_edit.setText("Anna, Ben, Cleo")
    tab.k_spin.setValue(2)
    plan = tab.hand_out()
    assert plan is not None and plan.k == 2
    assert sorted(len(v) for v in plan.items.values()) == [8, 8, 8]
    assert "12 items, each for 2 of 3 raters" in tab.plan_about.text()
    progress = tab.progress_model
    assert [progress.value(r, "rater") for r in range(3)] == ["Anna", "Ben", "Cleo"]
    assert [progress.value(r, "assigned") for r in range(3)] == [8, 8, 8]
    # Anna is offered only her 8 items; grading one moves her progress
    assert panel.current in plan.items_of("Anna")
    panel.tabs.setCurrentIndex(0)
    _grade(panel, 3)
    panel.tabs.setCurrentIndex(panel.raters_tab)
    assert progress.value(0, "graded") == 1 and progress.value(1, "graded") == 0
    # one sheet per rater, only their items, no judge's score
    made = tab.make_sheets(tmp_path)
    assert [p.name for p in made] == [f"majeval-rating-sheet-{r}.xlsx"
                                      for r in ("Anna", "Ben", "Cleo")]
    ben = pd.read_excel(made[1], sheet_name="Ratings", dtype=str, keep_default_na=False)
    assert set(ben.item) == set(plan.items_of("Ben")) and set(ben.rater) == {"Ben"}
    assert "judge" not in " ".join(ben.columns).lower()
    # Ben fills his in as people do: a grade off the scale, a copied row, the rest fine
    book = load_workbook(made[1])
    ws = book["Ratings"]
    rows = [r for r in range(2, ws.max_row + 1) if not ws.cell(r, 4).value]
    for r in rows:
        ws.cell(r, 5).value = 4
    ws.cell(rows[0], 5).value = 7
    ws.append([ws.cell(rows[1], c).value for c in range(1, 9)])
    book.save(made[1])
    got = tab.read_sheets([str(made[1])])
    said = tab.sheets_text.toPlainText()
    assert not got[0].errors and "Ben's sheet" in said
    assert f"row {rows[0]}" in said and "7" in said  # the grade off the scale, by row
    assert f"rows {rows[1]} and {ws.max_row}" in said  # the copy, both rows named
    bens = [r for r in jc.load_ratings(project, "majeval") if r.rater == "Ben"]
    assert len(bens) == 7 and all(r.scores[DIM] == 4.0 for r in bens)
    assert progress.value(1, "graded") == 7
    # Cleo's sheet read as someone else's file names the rater it was made for
    cleo = tab.read_sheets([str(made[2])])
    assert cleo[0].made_for == "Cleo"
    # a file that is no rating sheet: said, nothing kept
    pd.DataFrame({"x": [1]}).to_excel(tmp_path / "bad.xlsx", index=False)
    tab.read_sheets([str(tmp_path / "bad.xlsx")])
    assert "bad.xlsx: not read" in tab.sheets_text.toPlainText()
    # everyone grades everything again
    tab.clear()
    assert gp.load_plan(project, "majeval") is None
    assert "every rater is offered every item" in tab.plan_about.text().lower()


def test_imported_ratings_are_not_called_blind_and_agreed_rows_stay_agreed(
        qtbot, panel, project, tmp_path):
    """A ratings file made outside EvalDesk: nobody knows whether its rater saw the judge's
    scores, so its grades are "not recorded", never "blind"; rows exported as agreed grades
    come back as agreed grades, not as a person called Dana grading."""
    ids = [i.item_id for i in panel.judge.items]
    ben = [jc.Rating(i, "Ben", {DIM: 3.0}) for i in ids[:4]]
    dana = jc.Rating(ids[0], "Dana", {DIM: 2.0}, kind=jc.ADJUDICATED, sources=ben[:1])
    jc.export_ratings(tmp_path / "from-elsewhere.xlsx", ben, adjudicated=[dana])
    got = panel.import_ratings(tmp_path / "from-elsewhere.xlsx")
    assert not got.errors
    assert "Imported 4 ratings and 1 agreed grade" in panel.message.text()
    assert [r.blind for r in jc.load_ratings(project, "majeval")] == [None] * 4
    assert [(a.item_id, a.rater, a.scores) for a in jc.load_adjudications(project, "majeval")] \
        == [(ids[0], "Dana", {DIM: 2.0})]
    out = panel.export_ratings(tmp_path / "back.xlsx")
    sheet = pd.read_excel(out, sheet_name="Ratings", keep_default_na=False)
    assert set(sheet[sheet.origin == "human"].blind) == {"not recorded"}


def test_three_raters_grade_the_same_30_items_blind_in_the_app_adjudicate_and_export(
        qtbot, panel, project, tmp_path):
    judge = panel.judge
    ids = [i.item_id for i in judge.items]
    panel.blind_check.setChecked(True)
    panel.confirm_unblind = lambda what: pytest.fail(f"nobody opened the {what}")
    panel.tabs.setCurrentIndex(panel.raters_tab)
    panel.raters.raters_edit.setText("Anna, Ben, Cleo")
    panel.raters.k_spin.setValue(3)
    assert panel.raters.hand_out() is not None
    panel.tabs.setCurrentIndex(0)
    shift = {"Anna": 0.0, "Ben": 0.5, "Cleo": 0.0}
    for rater in ("Anna", "Ben", "Cleo"):
        panel.rater_edit.setText(rater)
        panel.rater_edit.editingFinished.emit()
        seen = []
        while panel.current is not None:
            item = panel.current
            assert panel.score_combos[DIM].currentData() is None  # nobody's grade shown
            grade = _truth(judge, item) + shift[rater]
            if rater == "Cleo" and item == ids[5]:
                grade = 5.0 if _truth(judge, item) <= 2 else 1.0  # Cleo sees it differently
            seen.append(_grade(panel, min(grade, 5.0)))
        assert sorted(seen) == ids  # the same 30 items for each
    ratings = jc.load_ratings(project, "majeval")
    assert len(ratings) == 90 and all(r.blind is True for r in ratings)
    # the one they disagree on is adjudicated by Dana (who did not grade, so nobody unblinds)
    panel.rater_edit.setText("Dana")
    panel.rater_edit.editingFinished.emit()
    panel.confirm_unblind = lambda what: True
    panel.tabs.setCurrentIndex(panel.agreed_tab)
    tab = panel.adjudication
    assert [d.item_id for d in tab.items] == [ids[5]]
    combo = tab.agreed_combos[(DIM, "")]
    combo.setCurrentIndex(combo.findData(_truth(judge, ids[5])))
    assert tab.decided_by.text() == "Dana"
    assert tab.record() is not None
    assert set(jc.unblinded(project, "majeval")) == {"Dana"}
    panel.tabs.setCurrentIndex(1)
    panel.rater_combo.setCurrentIndex(panel.rater_combo.findData(jc.AGREED))
    _wait(qtbot, panel)
    out = panel.export_report(tmp_path / "three.xlsx")
    labels = pd.read_excel(out, sheet_name="Labels", keep_default_na=False)
    scores = labels[labels.question == ""]
    assert scores.groupby("origin").size().to_dict() == {"adjudicated": 1, "human": 90,
                                                         "judge": 30}
    assert set(scores[scores.origin == "human"].blind) == {"yes"}
    assert set(scores[scores.origin == "human"].by) == {"Anna", "Ben", "Cleo"}
    assert list(scores[scores.origin == "adjudicated"].by) == ["Dana"]
    rel = pd.read_excel(out, sheet_name="Reliability")
    people = rel[(rel.between == "between people") & rel.question.isna()]
    assert (people.n == N).all() and (people.n_raters == 3).all()
    assert "Fleiss' kappa" in set(people.statistic) or any(
        "ICC(2,1)" in s for s in people.statistic)


def test_each_grade_shows_how_wide_the_interval_is_now_on_the_grade_tab(qtbot, panel):
    """Issue 32, point 4: after each grade, how wide the judge-vs-people interval is now,
    on the Grade tab itself (widths only: no statistic, no judge score, so grading stays
    blind), narrowing as grades come in; the grade form never moves for the computation."""
    assert panel.tabs.currentIndex() == 0
    widths = []
    for _ in range(12):
        item = panel.current
        _grade(panel, _truth(panel.judge, item))
        assert panel.run_panel.isHidden()
        _wait(qtbot, panel)
        text = panel.precision_label.text()
        widths.append(text)
    assert "How precise the agreement" in widths[-1] and "±" in widths[-1], widths[-1]
    assert "12 texts" in widths[-1], widths[-1]
    judge_scores = {f"{s:.2f}" for item in panel.judge.items for s in item.scores.values()}
    shown = widths[-1].split(":", 1)[1]
    assert not any(f" {v} " in shown for v in judge_scores if v not in {"0.10"})
    import re

    assert sum(bool(re.search(r"±\d\.\d\d \(", w)) for w in widths) == 3  # from the 10th on

    assert widths[2].startswith("3 items graded: how precise") and "±" not in widths[2]
