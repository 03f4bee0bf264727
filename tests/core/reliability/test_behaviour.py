"""What the reliability statistics say in the cases users hit: undefined with a reason, missing
ratings, the kappa paradox AC1 fixes, bad input named; Zou's interval; the corrected mean's
coverage; the grading order's random part."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from core.reliability import (
    GUIDES,
    RELIABILITY_COLUMNS,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha_ci,
    percent_agreement,
)
from core.reliability.corrected_mean import corrected_mean
from core.reliability.correlation_difference import zou_difference, zou_interval
from core.reliability.grading_order import (
    RANDOM,
    draw_random_sample,
    grading_order,
    width_after_each_grade,
)
from core.reliability.icc import ICC_FORMS, icc
from core.stats import agreement_rows, paired_correlation_difference

YES_NO = ["No", "Yes"]


def test_every_statistic_has_a_plain_meaning_and_advice():
    for key, guide in GUIDES.items():
        assert guide.meaning.endswith(".") and guide.advice.endswith("."), key
        assert "_" not in guide.name, key
    assert "Yes/No questions most texts pass" in GUIDES["gwet_ac1"].advice
    assert "two-way random effects, absolute agreement, single rater" in GUIDES["icc_2_1"].name
    assert "two-way mixed effects, consistency" in GUIDES["icc_3_1"].name


def test_kappa_paradox_a_rater_who_always_says_yes():
    """Rater 1 says Yes to all 20, rater 2 to 17: they agree on 85% but kappa is 0; AC1 and
    the advice say what is going on."""
    table = [["Yes"] * 20, ["Yes"] * 17 + ["No"] * 3]
    kappa = cohen_kappa(table, categories=YES_NO)
    assert kappa.value == pytest.approx(0.0)
    assert percent_agreement(table).value == pytest.approx(0.85)
    ac1 = gwet_ac1(table, categories=YES_NO)
    assert ac1.value > 0.8
    assert ac1.ci_low is not None and ac1.n == 20


def test_every_rating_the_same_is_undefined_with_a_reason_except_ac1():
    table = [["Yes"] * 12, ["Yes"] * 12, ["Yes"] * 12]
    kappa = fleiss_kappa(table, categories=YES_NO)
    assert kappa.value is None and "every rating is the same (Yes)" in kappa.reason
    pair = cohen_kappa(table[:2], categories=YES_NO)
    assert pair.value is None and "same answer (Yes)" in pair.reason
    ac1 = gwet_ac1(table, categories=YES_NO)
    assert ac1.value == pytest.approx(1.0)
    single = gwet_ac1(table)  # the scale not given: only one answer known
    assert single.value is None and "give the scale's answers" in single.reason
    row = kappa.to_row(comparison="Question 3")
    assert row["value"] is None and row["note"].startswith("Not computed: every rating")
    assert set(row) == set(RELIABILITY_COLUMNS)


def test_missing_ratings_are_used_where_the_statistic_allows_and_said():
    table = [
        [1, 1, 0, 1, None, 0, 1, 1, 0, 1, 1, None],
        [1, None, 0, 1, 1, 0, 1, 0, 0, 1, None, None],
        [1, 1, 0, None, 1, 1, 1, 1, 0, 1, 1, 0],
    ]
    fleiss = fleiss_kappa(table)
    assert fleiss.n == 11 and fleiss.n_units_dropped == 1
    assert "rated by only some of the raters" in fleiss.note
    assert "single rating left out" in fleiss.note
    pair = cohen_kappa(table[:2])
    assert pair.n == 8 and "not rated by both raters left out" in pair.note
    complete_only = icc(table, "icc_2_1")
    assert complete_only.n == 7 and "not marked by every rater left out" in complete_only.note


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"Rater 2, unit 3: Maybe is not one of the scale"):
        gwet_ac1([["Yes", "No", "Yes"], ["Yes", "No", "Maybe"]], categories=YES_NO)
    with pytest.raises(ValueError, match="needs numbers"):
        icc([["a", "b"], ["a", "b"]])
    with pytest.raises(ValueError, match="scale in order"):
        cohen_kappa([["low", "high"], ["high", "high"]], weights="linear")
    three = cohen_kappa([[1, 0, 1], [1, 0, 0], [1, 1, 1]])
    assert three.value is None and "exactly 2 raters" in three.reason


def test_icc_forms_on_a_constant_table_are_undefined():
    for form in ICC_FORMS:
        result = icc([[3, 3, 3], [3, 3, 3]], form)
        assert result.value is None and "every mark is the same" in result.reason


def test_results_go_into_the_agreement_sheet_rows():
    table = [[1, 2, 3, 2, 1, 3], [1, 2, 3, 3, 1, 3]]
    rows = agreement_rows({"Coherence: two teachers": cohen_kappa(table, weights="quadratic"),
                           "Coherence: alpha": krippendorff_alpha_ci(table, "ordinal")})
    assert [r["statistic"] for r in rows] == ["Weighted kappa (quadratic)",
                                              "Krippendorff's alpha (ordinal)"]
    assert all(r["ci_low"] is not None and r["n"] == 6 for r in rows)


# -- Zou's interval ---------------------------------------------------------------------------


def test_zou_reproduces_the_papers_overlapping_example():
    """Zou (2007), p. 409: r12 = .396, r13 = .179, r23 = .088, n = 66 -> (-.093, .517)."""
    low, high = zou_interval(0.396, 0.179, 0.088, 66)
    assert (round(low, 3), round(high, 3)) == (-0.093, 0.517)


def test_zou_on_data_uses_scipys_fisher_intervals():
    rng = np.random.default_rng(3)
    human = rng.normal(size=80)
    a = human + rng.normal(scale=0.6, size=80)
    b = human + rng.normal(scale=1.2, size=80)
    result = zou_difference(a, b, human, method="pearson")
    r1, r2, r12 = (sps.pearsonr(x, y).statistic for x, y in ((a, human), (b, human), (a, b)))
    l1, u1 = sps.pearsonr(a, human).confidence_interval(0.95)
    l2, u2 = sps.pearsonr(b, human).confidence_interval(0.95)
    c = ((r12 - r1 * r2 / 2) * (1 - r1**2 - r2**2 - r12**2) + r12**3) / ((1 - r1**2) * (1 - r2**2))
    low = r1 - r2 - np.sqrt((r1 - l1) ** 2 + (u2 - r2) ** 2 - 2 * c * (r1 - l1) * (u2 - r2))
    high = r1 - r2 + np.sqrt((u1 - r1) ** 2 + (r2 - l2) ** 2 - 2 * c * (u1 - r1) * (r2 - l2))
    assert (result.ci_low, result.ci_high) == pytest.approx((low, high), abs=1e-9)
    assert result.ci_excludes_zero and "agrees better" in result.summary("Judge A", "judge B")
    boot = paired_correlation_difference(a, b, human, method="pearson", n_boot=2000)
    assert abs(boot.ci_low - result.ci_low) < 0.1 and abs(boot.ci_high - result.ci_high) < 0.1


def test_zou_undefined_cases():
    few = zou_difference([1, 2, 3], [1, 2, 2], [1, 2, 3])
    assert few.difference is None and "not enough units" in few.reason
    with pytest.raises(ValueError, match="Kendall"):
        zou_difference([1] * 10, [1] * 10, [1] * 10, method="kendall")


# -- the corrected mean -------------------------------------------------------------------------


def _studies(rng, studies, n_items, n_graded, *, bias, noise):
    truth = rng.normal(3.0, 1.0, size=(studies, n_items))
    judge = truth + bias + rng.normal(0.0, noise, size=(studies, n_items))
    graded = np.argsort(rng.random((studies, n_items)), axis=1)[:, :n_graded]
    human = np.full((studies, n_items), np.nan)
    np.put_along_axis(human, graded, np.take_along_axis(truth, graded, axis=1), axis=1)
    return judge, human


def test_corrected_mean_covers_the_true_mean_with_a_biased_judge():
    """1,000 simulated studies, a judge 0.5 too generous: the corrected 95% interval covers
    the true mean (3.0) in 93-97% of them, the judge's raw interval in almost none, and the
    corrected interval is narrower than the graded sample's alone."""
    rng = np.random.default_rng(20231)
    judge, human = _studies(rng, 1000, 500, 60, bias=0.5, noise=0.5)
    results = [corrected_mean(j, h) for j, h in zip(judge, human, strict=True)]
    covered = np.mean([r.corrected_ci[0] <= 3.0 <= r.corrected_ci[1] for r in results])
    naive = np.mean([r.judge_ci[0] <= 3.0 <= r.judge_ci[1] for r in results])
    assert 0.93 <= covered <= 0.97, covered
    assert naive < 0.05, naive
    assert np.mean([r.narrower_by for r in results]) > 0.3


def test_an_uninformative_judge_does_not_narrow_the_interval():
    rng = np.random.default_rng(5)
    judge = rng.normal(size=400)  # unrelated to the grades
    human = np.full(400, np.nan)
    human[:80] = rng.normal(3.0, 1.0, size=80)
    result = corrected_mean(judge, human)
    assert result.narrower_by <= 0.05
    assert "does not help" in result.sentence() or result.narrower_by > 0


def test_too_small_a_sample_and_non_random_grades_are_said():
    judge = np.linspace(1, 5, 100)
    human = np.full(100, np.nan)
    human[:6] = 3.0
    small = corrected_mean(judge, human)
    assert small.corrected is None and "too few items graded at random: 6" in small.reason
    human[:40] = np.linspace(1, 5, 40)
    drawn = np.zeros(100, dtype=bool)
    drawn[:20] = True
    picked = corrected_mean(judge, human, random_sample=drawn)
    assert picked.n_graded == 20 and picked.n_graded_not_random == 20
    assert "fewer than 30" in picked.warning and "were not part of the random sample" in (
        picked.warning)
    assert "corrected by your grades" in picked.sentence()


def test_everything_graded_gives_the_plain_mean_of_the_grades():
    rng = np.random.default_rng(9)
    judge = rng.normal(size=50)
    human = judge + rng.normal(size=50)
    result = corrected_mean(judge, human)
    assert result.corrected == pytest.approx(human.mean())
    half = (result.corrected_ci[1] - result.corrected_ci[0]) / 2
    assert half == pytest.approx(1.959963984540054 * human.std(ddof=1) / np.sqrt(50))


# -- which item to grade next ------------------------------------------------------------------


def test_random_sample_is_recorded_and_reproducible():
    a = draw_random_sample(200, 30, seed=11)
    assert a == draw_random_sample(200, 30, seed=11) and a.size == 30
    assert a.mask().sum() == 30 and "seed 11" in a.describe()
    with pytest.raises(ValueError):
        draw_random_sample(10, 11, seed=1)


def test_grading_order_keeps_a_random_part_and_puts_rare_scores_early():
    rng = np.random.default_rng(2)
    judge = (rng.random((120, 10)) < 0.9).astype(int)
    judge[:6] = 0  # six texts the judge fails on everything: a rare score
    other = judge.copy()
    other[10:20, :5] = 1 - other[10:20, :5]
    order = grading_order(judge.tolist(), others=[other.tolist()], random_share=0.5, seed=4)
    assert sorted(order.order) == list(range(120))
    assert sum(order.random_part[:20]) == 10  # half of every prefix is random
    assert all(w == RANDOM for w, r in zip(order.why, order.random_part, strict=True) if r)
    targeted_first = [i for i, r in zip(order.order[:12], order.random_part[:12], strict=True)
                      if not r]
    assert any(i < 6 for i in targeted_first[:3])
    sample = order.random_sample(40)
    assert sample.size == 20 and set(sample.positions) <= set(order.order[:40])
    # the random part is a prefix of one seeded permutation: redrawn, the same items
    assert order == grading_order(judge.tolist(), others=[other.tolist()], random_share=0.5,
                                  seed=4)


def test_width_after_each_grade_shrinks():
    rng = np.random.default_rng(8)
    person = (rng.random((80, 10)) < 0.7).astype(int)
    judge = np.where(rng.random((80, 10)) < 0.1, 1 - person, person)
    order = grading_order(judge.tolist(), seed=1).order
    steps = width_after_each_grade(judge.tolist(), person.tolist(), order)
    assert len(steps) == 80 and steps[-1].n_graded == 80
    assert steps[-1].half_width < steps[9].half_width < steps[2].half_width
    partial = list(person.tolist())
    partial[order[5]] = None
    assert len(width_after_each_grade(judge.tolist(), partial, order)) == 5


# -- which number to report first ---------------------------------------------------------------


def test_report_puts_ac1_first_when_one_answer_dominates(shared_data):
    from core.reliability import reliability_report
    from tests.core.reliability.rating_sets import powergrading

    q20 = powergrading(shared_data)[20]  # 95% of the answers were marked correct
    report = reliability_report(q20, "nominal", categories=[0, 1], n_boot=100)
    assert report.headline == "gwet_ac1" and "95% of all ratings" in report.why
    assert [r.statistic for r in report.results] == [
        "percent_agreement", "fleiss_kappa", "gwet_ac1", "krippendorff_alpha_nominal"]
    assert sum(row["report_first"] for row in report.to_rows("Q20")) == 1


def test_report_headlines_by_kind_of_rating():
    from core.reliability import reliability_report

    rng = np.random.default_rng(4)
    truth = rng.integers(1, 6, size=40)
    two = np.vstack([truth, np.clip(truth + rng.integers(-1, 2, 40), 1, 5)])
    three = np.vstack([two, np.clip(truth + rng.integers(-1, 2, 40), 1, 5)])
    yes_no = (two > 3).astype(int)
    assert reliability_report(yes_no, "nominal", n_boot=50).headline == "cohen_kappa"
    assert reliability_report(two, "ordinal", n_boot=50).headline == "weighted_kappa_quadratic"
    assert reliability_report(three, "ordinal", n_boot=50).headline == "icc_2_1"
    assert reliability_report(three, "interval", n_boot=50).headline == "icc_2_1"
    assert reliability_report((three > 3).astype(int), "nominal",
                              n_boot=50).headline == "fleiss_kappa"


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_bootstrap_one_resample_at_a_time_gives_the_same_interval(monkeypatch, level):
    """Scores with many distinct values are resampled one by one (memory); same interval."""
    from core.reliability import agreement

    rng = np.random.default_rng(0)
    table = rng.normal(size=(3, 60)).round(1)
    table[1] += table[0]
    table[2, :5] = np.nan
    fast = krippendorff_alpha_ci(table, level, n_boot=60, seed=2)
    monkeypatch.setattr(agreement, "_MAX_COINCIDENCE_CELLS", 0)
    slow = krippendorff_alpha_ci(table, level, n_boot=60, seed=2)
    assert (slow.ci_low, slow.ci_high) == pytest.approx((fast.ci_low, fast.ci_high), abs=1e-9)
