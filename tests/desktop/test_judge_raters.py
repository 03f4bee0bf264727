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
