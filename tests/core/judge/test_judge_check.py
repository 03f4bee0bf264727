"""core.judge_check: ratings kept as human edits, the next-item order, the judge-vs-people
report against core.stats / scipy / scikit-learn, the ratings workbook round trip."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from core import stats
from core.judge_check import (
    MIN_ITEMS,
    JudgeData,
    JudgeItem,
    Rating,
    export_ratings,
    grading_order,
    grading_seed,
    judge_report,
    load_ratings,
    next_item,
    question_disagreements,
    read_ratings,
    save_rating,
    write_report,
)
from core.project import Project


def _judge(scores, *, answers=None, held=()):
    items = []
    for k, s in enumerate(scores):
        items.append(JudgeItem(
            item_id=f"t{k}", text=f"text {k}", scores={"Clarity": s},
            explanation={"Clarity": f"because {k}"},
            answers={"Clarity": {"Is it clear?": answers[k]}} if answers else {},
            held_out=f"t{k}" in held))
    return JudgeData(method="Test", items=items, dimensions=["Clarity"],
                     questions={"Clarity": ["Is it clear?"]} if answers else {}, model="m")


@pytest.fixture
def project(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as p:
        yield p


def test_ratings_are_kept_as_human_edits_with_who_and_when(project):
    save_rating(project, "majeval", Rating("t1", "Anna", {"Clarity": 4}, note="fine"))
    save_rating(project, "majeval", Rating("t1", "Ben", {"Clarity": 2}))
    save_rating(project, "majeval", Rating("t1", "Anna", {"Clarity": 5}, note="better"))
    got = load_ratings(project, "majeval")
    assert [(r.rater, r.item_id, r.scores, r.note) for r in got] == [
        ("Anna", "t1", {"Clarity": 5.0}, "better"), ("Ben", "t1", {"Clarity": 2.0}, "")]
    assert all(r.at for r in got)
    edits = project.list_edits(kind="majeval.rating")
    assert [e.who for e in edits] == ["Anna", "Ben", "Anna"]
    assert edits[2].old["scores"] == {"Clarity": 4} and edits[2].new["scores"] == {"Clarity": 5}
    assert load_ratings(project, "interacteval") == []
    with pytest.raises(ValueError):
        save_rating(project, "majeval", Rating("t1", "  ", {"Clarity": 4}))


def test_next_item_follows_a_random_order_of_the_seed_not_the_judge_scores():
    judge = _judge([3.0, 5.0, 1.0, 4.0, None, 2.0])
    ratings: list[Rating] = []
    order = []
    while (item := next_item(judge, ratings, "Anna", seed=41)) is not None:
        order.append(item)
        ratings.append(Rating(item, "Anna", {"Clarity": 3}))
    assert order == grading_order(judge, 41)
    assert sorted(order[:5]) == ["t0", "t1", "t2", "t3", "t5"] and order[5] == "t4"  # unscored
    # the judge's scores play no part: reversed scores, the same order
    assert grading_order(_judge([3.0, 1.0, 5.0, 2.0, None, 4.0]), 41) == order
    # another seed, another order; every rater gets the same order
    assert len({tuple(grading_order(judge, s)) for s in range(20)}) > 10
    assert next_item(judge, ratings, "Ben", seed=41) == order[0]


def test_the_seed_is_kept_in_the_project(project):
    assert grading_seed(project, "majeval", create=False) is None
    seed = grading_seed(project, "majeval")
    assert isinstance(seed, int)
    assert grading_seed(project, "majeval") == seed  # reproducible: read back, not redrawn
    assert grading_seed(project, "majeval", create=False) == seed


def test_report_equals_core_stats_and_mae(project):
    rng = np.random.default_rng(3)
    judge_scores = rng.integers(1, 6, 30).astype(float)
    person = np.clip(judge_scores + rng.integers(-1, 2, 30), 1, 5)
    judge = _judge(list(judge_scores), held=("t0", "t1"))
    ratings = [Rating(f"t{k}", "Anna", {"Clarity": float(v)}) for k, v in enumerate(person)]
    report = judge_report(judge, ratings, n_boot=200, seed=1)
    d = report.dimensions[0]
    expected = stats.correlations(judge_scores[2:], person[2:], n_boot=200, seed=1)
    assert report.held_out == 2 and report.rated == 28 and d.n == 28
    assert d.kendall.value == pytest.approx(sps.kendalltau(judge_scores[2:], person[2:])[0])
    assert d.kendall.value == pytest.approx(expected.kendall.value)
    assert (d.kendall.ci_low, d.kendall.ci_high) == (expected.kendall.ci_low,
                                                     expected.kendall.ci_high)
    assert d.spearman.value == pytest.approx(expected.spearman.value)
    assert d.mae == pytest.approx(np.mean(np.abs(judge_scores[2:] - person[2:])))
    assert d.mae_ci[0] <= d.mae <= d.mae_ci[1]
    assert d.warning == ""
    assert "held out" in dict(report.describe())["Held out"]
    # biggest disagreements first, with the judge's explanation
    gaps = [g.gap for g in report.disagreements]
    assert gaps == sorted(gaps, reverse=True) and report.disagreements[0].explanation


def test_few_items_warn_and_constant_ratings_are_undefined():
    judge = _judge([1.0, 2.0, 3.0, 4.0])
    ratings = [Rating(f"t{k}", "Anna", {"Clarity": 3.0}) for k in range(4)]
    report = judge_report(judge, ratings, n_boot=50)
    d = report.dimensions[0]
    assert d.n == 4 and str(MIN_ITEMS) in d.warning
    assert d.kendall.value is None and d.kendall.reason
    assert d.spearman.value is None
    assert d.mae == pytest.approx(1.0)
    assert dict(report.describe())["WARNING"].startswith("Only 4 rated items")


def test_failed_judge_item_is_left_out_and_counted():
    judge = _judge([1.0, None, 3.0, 4.0])
    ratings = [Rating(f"t{k}", "Anna", {"Clarity": float(k + 1)}) for k in range(4)]
    d = judge_report(judge, ratings, n_boot=0).dimensions[0]
    assert d.n == 3 and d.not_scored == 1


def test_questions_use_binary_agreement_and_flag_failing_good_texts():
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(5)
    judge_yes = rng.random(40) < 0.5
    person_yes = np.where(rng.random(40) < 0.7, judge_yes, ~judge_yes)
    judge = _judge([3.0] * 40, answers=list(map(bool, judge_yes)))
    ratings = [Rating(f"t{k}", "Anna", answers={"Clarity": {"Is it clear?": bool(v)}})
               for k, v in enumerate(person_yes)]
    report = judge_report(judge, ratings, n_boot=0)
    (q,) = report.questions
    assert q.result.kappa == pytest.approx(sk.cohen_kappa_score(judge_yes, person_yes))
    assert q.result.mcc == pytest.approx(sk.matthews_corrcoef(judge_yes, person_yes))
    fails = int(np.sum(~judge_yes & person_yes))
    assert q.result.false_fail_rate == pytest.approx(fails / person_yes.sum())
    assert q.fails_good_texts == (fails / person_yes.sum() >= 0.25)
    rows = question_disagreements(judge, ratings, "Clarity", "Is it clear?")
    assert sum(1 for r in rows if r.person == 1.0) == fails
    assert rows[0].person == 1.0 and rows[0].judge == 0.0  # judge failed a good text first


def test_several_raters_alpha_beside_the_judge():
    judge = _judge([1.0, 2.0, 3.0, 4.0, 5.0, 2.0])
    a = [1, 2, 3, 4, 5, 2]
    b = [2, 2, 3, 5, 5, 1]
    ratings = [Rating(f"t{k}", "Anna", {"Clarity": float(v)}) for k, v in enumerate(a)]
    ratings += [Rating(f"t{k}", "Ben", {"Clarity": float(v)}) for k, v in enumerate(b)]
    report = judge_report(judge, ratings, n_boot=0)
    (p,) = report.people
    assert p.people.value == pytest.approx(stats.krippendorff_alpha([a, b], "interval").value)
    assert p.with_judge.value == pytest.approx(
        stats.krippendorff_alpha([a, b, [1, 2, 3, 4, 5, 2]], "interval").value)
    # compared with the mean of both raters by default, or one rater
    mean = (np.array(a) + np.array(b)) / 2
    assert report.dimensions[0].mae == pytest.approx(np.mean(np.abs(mean - [1, 2, 3, 4, 5, 2])))
    assert judge_report(judge, ratings, rater="Anna", n_boot=0).dimensions[0].mae == 0
    assert judge_report(judge, ratings[:6], n_boot=0).people == []


def test_ratings_workbook_round_trip_and_bad_rows(tmp_path):
    ratings = [Rating("t1", "Anna", {"Clarity": 4.0}, {"Clarity": {"Is it clear?": True}},
                      note="ok", at="2026-11-24T10:00:00+00:00"),
               Rating("t2", "Ben", {"Clarity": 2.0}, note="")]
    path = tmp_path / "ratings.xlsx"
    export_ratings(path, ratings)
    got = read_ratings(path, scale=(1, 5), items=["t1", "t2"], dimensions=["CLARITY".title()])
    assert not got.errors and not got.problems
    assert [(r.item_id, r.rater, r.scores, r.answers, r.note) for r in got.ratings] == [
        ("t1", "Anna", {"Clarity": 4.0}, {"Clarity": {"Is it clear?": True}}, "ok"),
        ("t2", "Ben", {"Clarity": 2.0}, {}, "")]
    frame = pd.DataFrame([
        {"rater": "Anna", "item": "t1", "dimension": "Clarity", "question": "", "rating": 9},
        {"rater": "Anna", "item": "t9", "dimension": "Clarity", "question": "", "rating": 3},
        {"rater": "", "item": "t2", "dimension": "Clarity", "question": "", "rating": 3},
        {"rater": "Anna", "item": "t2", "dimension": "Clarity", "question": "Q", "rating": "maybe"},
        {"rater": "Anna", "item": "t2", "dimension": "Clarity", "question": "", "rating": 3},
    ])
    bad = tmp_path / "bad.xlsx"
    frame.to_excel(bad, index=False)
    got = read_ratings(bad, scale=(1, 5), items=["t1", "t2"])
    assert [r.scores for r in got.ratings] == [{"Clarity": 3.0}]
    assert len(got.problems) == 4
    assert "row 2" in got.problems[0] and "from 1 to 5" in got.problems[0]
    assert "t9" in got.problems[1] and "row 4" in got.problems[2]
    assert "maybe" in got.problems[3]
    frame.drop(columns=["rater"]).to_excel(bad, index=False)
    assert "no column rater" in read_ratings(bad).errors[0]


def test_report_workbook_reads_back(tmp_path):
    judge = _judge([1.0, 2.0, 3.0, 4.0, 5.0], answers=[False, False, True, True, True])
    ratings = [Rating(f"t{k}", "Anna", {"Clarity": float(v)},
                      {"Clarity": {"Is it clear?": v >= 3}}) for k, v in enumerate([1, 3, 2, 5, 4])]
    report = judge_report(judge, ratings, n_boot=100)
    path = tmp_path / "report.xlsx"
    write_report(path, report)
    dims = pd.read_excel(path, sheet_name="Dimensions")
    kendall = dims[dims.statistic == "Kendall tau-b"].iloc[0]
    assert kendall.value == pytest.approx(report.dimensions[0].kendall.value, abs=1e-4)
    assert "fewer than 25" in kendall.note
    questions = pd.read_excel(path, sheet_name="Questions")
    assert questions.iloc[0].kappa == pytest.approx(report.questions[0].result.kappa, abs=1e-4)
    readme = pd.read_excel(path, sheet_name="Read me", header=None)
    assert readme.astype(str).apply(lambda c: c.str.contains("model m")).any().any()


def test_next_item_never_offers_held_out_or_skipped_items():
    judge = _judge([5.0, 1.0, 4.0, 2.0], held=("t0",))
    order = grading_order(judge, 7)
    assert "t0" not in order and len(order) == 3
    assert next_item(judge, [], "Anna", seed=7) == order[0]
    assert next_item(judge, [], "Anna", skip=[order[0]], seed=7) == order[1]
    assert next_item(judge, [Rating(i, "Anna", {"Clarity": 3}) for i in ("t1", "t2", "t3")],
                     "Anna", seed=7) is None


def test_rank_judges_best_first_with_the_paired_test_against_the_best():
    from core.judge_check import rank_judges

    rng = np.random.default_rng(11)
    person = rng.integers(1, 6, 30).astype(float)
    good = np.clip(person + rng.integers(-1, 2, 30), 1, 5)
    poor = rng.integers(1, 6, 30).astype(float)
    ratings = [Rating(f"t{k}", "Anna", {"Clarity": v}) for k, v in enumerate(person)]
    flat = _judge([3.0] * 30)
    candidates = [("poor model", "m-poor", _judge(list(poor))),
                  ("flat model", "m-flat", flat),
                  ("good model", "m-good", _judge(list(good)))]
    ranks = rank_judges(candidates, ratings, n_boot=300)
    assert [r.key for r in ranks] == ["m-good", "m-poor", "m-flat"]
    assert ranks[0].value == pytest.approx(sps.kendalltau(good, person)[0])
    assert ranks[0].versus_best is None
    expected = stats.paired_correlation_difference(good, poor, person, method="kendall",
                                                   n_boot=300)
    assert ranks[1].versus_best.difference == pytest.approx(expected.difference)
    assert ranks[1].versus_best.ci_low == pytest.approx(expected.ci_low)
    assert ranks[2].value is None and ranks[2].reason  # constant scores: undefined, last
    spearman = rank_judges(candidates, ratings, method="spearman", n_boot=0)
    assert spearman[0].value == pytest.approx(sps.spearmanr(good, person)[0])


def test_rank_judges_counts_items_once_whatever_the_dimensions():
    """Issue 28, point 13: Pick the judge said 12 "items" for 6 rated items on two
    dimensions."""
    from core.judge_check import rank_judges

    def judge(offset):
        return JudgeData(method="MAJ-Eval", items=[
            JudgeItem(f"i{k}", scores={"A": float((k + offset) % 5 + 1),
                                       "B": float((k * 3 + offset) % 5 + 1)})
            for k in range(6)], dimensions=["A", "B"])

    ratings = [Rating(f"i{k}", "Anna", {"A": float(k % 5 + 1), "B": float((k * 3) % 5 + 1)})
               for k in range(6)]
    ranks = rank_judges([("one", "m1", judge(0)), ("two", "m2", judge(1))], ratings, n_boot=0)
    assert [(r.items, r.n) for r in ranks] == [(6, 12), (6, 12)]


def test_check_step_reports_progress_and_stops_when_cancelled():
    from core.judge_check import check_step, judge_report
    from core.runs import Cancelled, CancelToken, Progress

    judge = JudgeData(method="MAJ-Eval", items=[
        JudgeItem(f"i{k}", scores={"A": float(k % 5 + 1), "B": float((k * 3) % 5 + 1)})
        for k in range(12)], dimensions=["A", "B"])
    ratings = [Rating(f"i{k}", "Anna", {"A": float((k + 1) % 5 + 1), "B": 3.0 + (k % 2)})
               for k in range(12)]
    states = []
    got = check_step(judge, ratings, progress=Progress(states.append))
    assert got.ranks == [] and got.report is not None
    assert states[-1].stage == "Comparing the judge with the ratings"
    # the two dimensions, then the agreement statistics and the corrected means
    assert (states[-1].done, states[-1].total) == (4, 4)
    assert got.report.dimensions[0].kendall == judge_report(judge, ratings).dimensions[0].kendall
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        check_step(judge, ratings, cancel=token)
