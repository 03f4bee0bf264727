"""The statistics of the judge check (core.grading.statistics, through core.judge_check's
report): between people and between the judge and people they equal core.reliability's on the
same table built straight from the data (and statsmodels' Fleiss kappa on a real rating set),
the corrected mean equals core.reliability.corrected_mean, Zou's interval beside the paired
bootstrap equals core.reliability.zou_difference, and the report's workbook carries all of it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.judge_check import (
    JudgeData,
    JudgeItem,
    Rating,
    judge_report,
    rank_judges,
    write_report,
)
from core.reliability import corrected_mean, reliability_report, zou_difference
from tests.core.reliability.rating_sets import mohler, powergrading

TOL = 1e-9


def _mohler_world(shared_data, n):
    """Mohler's two graders (0-5 in quarter points) on ``n`` answers, and a judge that follows
    their mean with noise and a bias of +0.6."""
    marks = mohler(shared_data)[:, :n]
    rng = np.random.default_rng(7)
    judge_scores = np.clip(np.round((marks.mean(axis=0) + 0.6 + rng.normal(0, 0.7, n)) * 4) / 4,
                           0, 5)
    items = [JudgeItem(item_id=f"A{k:04d}", text=f"answer {k}",
                       scores={"Correctness": float(judge_scores[k])}) for k in range(n)]
    judge = JudgeData(method="AQER", items=items, dimensions=["Correctness"], scale=(0, 5),
                      step=0.25, model="judge-model")
    ratings = [Rating(f"A{k:04d}", who, {"Correctness": float(marks[r, k])})
               for r, who in enumerate(("Grader 1", "Grader 2")) for k in range(n)]
    return judge, ratings, marks, judge_scores


@pytest.mark.parametrize("n", [30, 300])
def test_between_people_and_judge_equal_core_reliability_on_mohler(shared_data, n):
    judge, ratings, marks, judge_scores = _mohler_world(shared_data, n)
    report = judge_report(judge, ratings, n_boot=200, seed=3)
    people, versus = report.agreement
    expected = reliability_report(marks, "ordinal", categories=judge.grades(), n_boot=200,
                                  seed=3)
    assert people.between == "between people" and people.raters == "Grader 1, Grader 2"
    assert people.report.headline == expected.headline == "weighted_kappa_quadratic"
    for got, ref in zip(people.report.results, expected.results, strict=True):
        assert got.statistic == ref.statistic and got.n == ref.n == n
        for a, b in ((got.value, ref.value), (got.ci_low, ref.ci_low),
                     (got.ci_high, ref.ci_high)):
            assert (a is None and b is None) or abs(a - b) < TOL
    # the judge against the graders' mean: an ordered scale while every mean is a grade, else
    # numbers (the mean of two quarter points can be an eighth)
    mean = marks.mean(axis=0)
    on_grid = bool(np.all(mean * 4 == np.round(mean * 4)))
    expected = (reliability_report([judge_scores, mean], "ordinal", categories=judge.grades(),
                                   n_boot=200, seed=3) if on_grid else
                reliability_report([judge_scores, mean], "interval", n_boot=200, seed=3))
    assert versus.between == "between the judge and people"
    assert versus.raters == "judge-model against the mean of the raters"
    assert versus.report.headline == expected.headline
    for got, ref in zip(versus.report.results, expected.results, strict=True):
        assert got.statistic == ref.statistic
        assert (got.value is None and ref.value is None) or abs(got.value - ref.value) < TOL
    # one plain sentence: the number, its interval, its n and why it is the one to report
    sentence = versus.sentence()
    first = versus.report.first
    assert sentence.startswith("Between the judge and the people on Correctness (judge-model "
                               f"against the mean of the raters): report {first.name}")
    assert f"= {first.value:.2f} (95% CI {first.ci_low:.2f} to {first.ci_high:.2f}, {n} texts" \
        in sentence
    assert expected.why in sentence and first.meaning in sentence
    # a mean between two grades (an eighth) makes the comparison numeric: ICC first
    shifted = [Rating(r.item_id, r.rater, {"Correctness": r.scores["Correctness"] + 0.25})
               if r.rater == "Grader 2" and r.item_id == "A0000" and
               r.scores["Correctness"] < 5 else r for r in ratings]
    numeric = judge_report(judge, shifted, n_boot=0).agreement[1]
    mean = np.array([np.mean([x.scores["Correctness"] for x in shifted if x.item_id == i])
                     for i in sorted({x.item_id for x in shifted})])
    ref = reliability_report([judge_scores, mean], "interval", n_boot=0)
    assert numeric.report.headline == ref.headline == "icc_2_1"
    assert abs(numeric.report.first.value - ref.first.value) < TOL
    assert "journals ask for ICC(2,1)" in numeric.sentence()
    # compared with one grader only
    one = judge_report(judge, ratings, rater="Grader 2", n_boot=0).agreement[1]
    ref = reliability_report([judge_scores, marks[1]], "ordinal", categories=judge.grades(),
                             n_boot=0)
    assert one.report.headline == ref.headline
    assert abs(one.report.first.value - ref.first.value) < TOL


def test_three_raters_yes_no_equal_statsmodels_fleiss_on_powergrading(shared_data):
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    marks = powergrading(shared_data)[1][:, :300]  # 3 judges x 300 answers, 0/1
    question = "Does it name the Bill of Rights?"
    items = [JudgeItem(item_id=f"W{k:03d}", scores={"Correct": 4.0},
                       answers={"Correct": {question: bool(marks[0, k])}}) for k in range(300)]
    judge = JudgeData(method="InteractEval", items=items, dimensions=["Correct"],
                      questions={"Correct": [question]}, model="m")
    ratings = [Rating(f"W{k:03d}", f"Judge {r + 1}", answers={"Correct": {question: bool(
        marks[r, k])}}) for r in range(3) for k in range(300)]
    blocks = judge_report(judge, ratings, n_boot=0).agreement
    people = next(b for b in blocks if b.question and b.between == "between people")
    table, _ = aggregate_raters(marks.T)
    assert abs(people.report["fleiss_kappa"].value - fleiss_kappa(table)) < 1e-6
    # most answers are correct: AC1 goes first, and the sentence says why
    assert people.report.headline == "gwet_ac1"
    assert "one answer is" in people.sentence() and "Gwet's coefficient does not" in \
        people.sentence()
    versus = next(b for b in blocks if b.question and b.between != "between people")
    majority = (marks.sum(axis=0) >= 2).astype(int)
    ref = reliability_report([["Yes" if v else "No" for v in marks[0]],
                              ["Yes" if v else "No" for v in majority]], "nominal",
                             categories=["No", "Yes"], n_boot=0)
    assert abs(versus.report["cohen_kappa"].value - ref["cohen_kappa"].value) < TOL


def test_one_rater_and_a_judge_on_another_scale_say_why_nothing_is_computed():
    items = [JudgeItem(item_id=f"i{k}", scores={"Quality": 0.1 * k}) for k in range(12)]
    judge = JudgeData(method="AQER", items=items, dimensions=["Quality"], scale=(0, 2),
                      step=1.0, judge_scale="similarity from -1 to 1")
    ratings = [Rating(f"i{k}", "Anna", {"Quality": float(k % 3)}) for k in range(12)]
    report = judge_report(judge, ratings, n_boot=0)
    people, versus = report.agreement
    assert people.report is None and "one rater only" in people.reason
    assert versus.report is None and "compared by order only" in versus.reason
    assert versus.sentence().endswith("so they are compared by order only).")
    assert report.corrected[0].result.corrected is None
    assert "cannot correct their mean" in report.corrected[0].result.reason


def test_the_corrected_mean_equals_core_reliability_per_dimension_and_condition():
    rng = np.random.default_rng(4)
    n = 120
    truth = rng.integers(1, 6, n).astype(float)
    raw = np.clip(truth + 0.8 + rng.normal(0, 0.6, n), 1, 5)  # a generous judge
    other = np.clip(truth - 0.3 + rng.normal(0, 1.2, n), 1, 5)
    items = [JudgeItem(item_id=f"T{k:03d}", scores={"Overall": float(raw[k])},
                       group="A" if k % 2 else "B") for k in range(n)]
    judge = JudgeData(method="MAJ-Eval", items=items, dimensions=["Overall"], model="m")
    cond = JudgeData(method="MAJ-Eval", items=[
        JudgeItem(item_id=f"T{k:03d}", scores={"Overall": float(other[k])},
                  group="A" if k % 2 else "B") for k in range(n)],
        dimensions=["Overall"], model="m2")
    graded = [f"T{k:03d}" for k in range(40)]
    ratings = [Rating(i, "Anna", {"Overall": float(truth[int(i[1:])])}) for i in graded]
    drawn = set(graded[:30])  # the last 10 were picked, not drawn
    report = judge_report(judge, ratings, n_boot=0, random_items=drawn, random_how="test",
                          candidates=[("Single judge", "single", cond)])
    human = [float(truth[k]) if k < 40 else np.nan for k in range(n)]
    mask = [k < 30 for k in range(n)]
    rows = {(c.judge, c.group): c for c in report.corrected}
    assert set(rows) == {("the judge", ""), ("the judge", "A"), ("the judge", "B"),
                         ("Single judge", ""), ("Single judge", "A"), ("Single judge", "B")}
    ref = corrected_mean(raw, human, random_sample=mask)
    got = rows[("the judge", "")].result
    assert got.as_dict() == ref.as_dict()
    assert got.n_graded == 30 and got.n_graded_not_random == 10
    assert abs(got.judge_mean - raw.mean()) < TOL and got.corrected < got.judge_mean
    ref_b = corrected_mean([raw[k] for k in range(0, n, 2)], human[0::2],
                           random_sample=mask[0::2])
    assert rows[("the judge", "B")].result.as_dict() == ref_b.as_dict()
    ref_c = corrected_mean(other, human, random_sample=mask)
    assert rows[("Single judge", "")].result.as_dict() == ref_c.as_dict()
    sentence = rows[("the judge", "")].sentence()
    assert sentence.startswith("Overall: Mean score corrected by your grades: ")
    assert "10 graded items were not part of the random sample" in sentence


def test_zou_beside_the_paired_bootstrap_in_the_ranking():
    rng = np.random.default_rng(9)
    n = 40
    truth = rng.integers(1, 6, n).astype(float)
    good = truth + rng.normal(0, 0.5, n)
    poor = truth + rng.normal(0, 2.0, n)

    def judge(scores, model):
        return JudgeData(method="MAJ-Eval", items=[
            JudgeItem(item_id=f"i{k}", scores={"D": float(scores[k])}) for k in range(n)],
            dimensions=["D"], model=model)

    ratings = [Rating(f"i{k}", "Anna", {"D": float(truth[k])}) for k in range(n)]
    for method in ("spearman", "kendall", "pearson"):
        ranks = rank_judges([("Good", "g", judge(good, "g")), ("Poor", "p", judge(poor, "p"))],
                            ratings, method=method, n_boot=500)
        assert [r.name for r in ranks] == ["Good", "Poor"]
        assert ranks[0].zou is None and ranks[1].versus_best is not None
        used = "pearson" if method == "pearson" else "spearman"
        ref = zou_difference(good, poor, truth, method=used)
        assert abs(ranks[1].zou.ci_low - ref.ci_low) < TOL
        assert abs(ranks[1].zou.ci_high - ref.ci_high) < TOL
        assert ("not Kendall tau-b" in ranks[1].zou.note) == (method == "kendall")


def test_the_report_workbook_has_the_new_sheets(tmp_path, shared_data):
    judge, ratings, _marks, _scores = _mohler_world(shared_data, 30)
    report = judge_report(judge, ratings, n_boot=100)
    out = tmp_path / "report.xlsx"
    write_report(out, report)
    sheets = pd.read_excel(out, sheet_name=None)
    rel = sheets["Reliability"]
    assert set(rel.between) == {"between people", "between the judge and people"}
    first = rel[rel.report_first.fillna("").str.startswith("yes")]
    assert list(first.statistic) == [block.first.name for block in report.agreement]
    assert first.report_first.tolist() == [f"yes: {b.report.why}" for b in report.agreement]
    assert rel.meaning.notna().all() and rel.which_to_report.notna().all()
    assert (rel.n == 30).all()
    labels = sheets["Labels"]
    assert sorted(set(labels.origin)) == ["human", "judge"]
    assert len(labels) == 30 * 3  # the judge's score and the two graders' per item
    assert set(labels[labels.origin == "human"].by) == {"Grader 1", "Grader 2"}
    corrected = sheets["Corrected mean"]
    assert corrected.dimension.tolist() == ["Correctness"]
    readme = sheets["Read me"].astype(str).to_string()
    assert "Agreement statistics" in readme and "Corrected mean" in readme
