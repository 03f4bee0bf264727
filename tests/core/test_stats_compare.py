"""core.stats.paired_correlation_difference and binary_agreement on constructed data, checked
against scipy and scikit-learn (test-only references)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score, matthews_corrcoef

from core.stats import (
    MIN_PAIRED_UNITS,
    binary_agreement,
    grouped_correlations,
    paired_correlation_difference,
)


def _noisy(rng, human, scale):
    return human + rng.normal(0, scale, size=human.shape[0])


def test_identical_conditions_differ_by_zero_and_the_interval_covers_zero():
    rng = np.random.default_rng(1)
    human = rng.integers(1, 6, size=60).astype(float)
    a = _noisy(rng, human, 1.0)
    result = paired_correlation_difference(a, a.copy(), human, seed=3)
    assert result.difference == 0.0
    assert result.ci_low <= 0.0 <= result.ci_high
    assert result.p_value == 1.0
    assert result.n == 60 and result.unit == "pairs"
    assert "about equally well" in result.summary("Combined", "AI-only")


def test_a_condition_equal_to_the_ratings_beats_noise_and_the_interval_excludes_zero():
    rng = np.random.default_rng(2)
    human = rng.normal(size=80)
    noise = rng.normal(size=80)
    result = paired_correlation_difference(human.copy(), noise, human, n_boot=1000, seed=0)
    assert result.a_value == pytest.approx(1.0)
    assert result.b_value == pytest.approx(sps.spearmanr(noise, human).statistic)
    assert result.difference == pytest.approx(1.0 - result.b_value)
    assert result.ci_low > 0 and result.ci_excludes_zero
    assert result.p_value < 0.01
    text = result.summary("Combined think-aloud", "AI-only")
    assert text.startswith("Combined think-aloud agrees better with your ratings than AI-only")
    assert "95% CI" in text and "80 pairs" in text


@pytest.mark.parametrize("method", ["pearson", "kendall"])
def test_the_point_estimates_are_scipys_coefficients(method):
    rng = np.random.default_rng(5)
    human = rng.normal(size=40)
    a, b = _noisy(rng, human, 0.5), _noisy(rng, human, 2.0)
    result = paired_correlation_difference(a, b, human, method=method, n_boot=200)
    ref = {"pearson": sps.pearsonr, "kendall": sps.kendalltau}[method]
    assert result.a_value == pytest.approx(ref(a, human).statistic)
    assert result.b_value == pytest.approx(ref(b, human).statistic)


def test_units_missing_in_either_condition_are_left_out_and_counted():
    rng = np.random.default_rng(7)
    human = rng.normal(size=30)
    a, b = list(_noisy(rng, human, 0.3)), list(_noisy(rng, human, 0.3))
    a[0], b[1], b[2] = None, float("nan"), "failed"
    result = paired_correlation_difference(a, b, list(human), n_boot=100)
    assert result.n == 27 and result.n_dropped == 3
    keep = [i for i in range(30) if i not in (0, 1, 2)]
    assert result.a_value == pytest.approx(
        sps.spearmanr(np.array(a[3:], dtype=float), human[keep]).statistic
    )


def test_fewer_than_ten_units_is_not_enough():
    human = list(range(MIN_PAIRED_UNITS - 1))
    result = paired_correlation_difference(human, human[::-1], human)
    assert not result.defined and result.difference is None
    assert "not enough units" in result.reason
    assert "cannot be compared" in result.summary("A", "B")


def test_grouped_comparison_averages_per_group_and_resamples_groups():
    rng = np.random.default_rng(11)
    groups = np.repeat(np.arange(15), 6)
    human = rng.normal(size=groups.shape[0])
    a, b = _noisy(rng, human, 0.2), rng.normal(size=groups.shape[0])
    result = paired_correlation_difference(a, b, human, groups=groups, n_boot=500)
    assert result.unit == "groups" and result.n == 15
    ref_a = grouped_correlations(a, human, groups, n_boot=0).spearman.value
    ref_b = grouped_correlations(b, human, groups, n_boot=0).spearman.value
    assert result.a_value == pytest.approx(ref_a)
    assert result.b_value == pytest.approx(ref_b)
    assert result.ci_low > 0


def test_the_same_seed_gives_the_same_interval():
    rng = np.random.default_rng(13)
    human = rng.normal(size=25)
    a, b = _noisy(rng, human, 1.0), _noisy(rng, human, 1.5)
    first = paired_correlation_difference(a, b, human, seed=4, n_boot=300)
    again = paired_correlation_difference(a, b, human, seed=4, n_boot=300)
    assert (first.ci_low, first.ci_high, first.p_value) == (again.ci_low, again.ci_high, again.p_value)


def test_binary_agreement_equals_scikit_learn_on_random_answers():
    rng = np.random.default_rng(17)
    for trial in range(30):
        n = int(rng.integers(5, 60))
        human = rng.integers(0, 2, size=n)
        flip = rng.random(n) < rng.uniform(0.05, 0.6)
        judge = np.where(flip, 1 - human, human)
        if len(set(human)) < 2 or len(set(judge)) < 2:
            continue
        result = binary_agreement(["Yes" if j else "No" for j in judge], list(human.astype(bool)))
        assert result.kappa == pytest.approx(cohen_kappa_score(judge, human)), trial
        assert result.mcc == pytest.approx(matthews_corrcoef(judge, human)), trial
        person_no = human == 0
        assert result.false_pass_rate == pytest.approx(judge[person_no].mean())
        assert result.false_fail_rate == pytest.approx(1 - judge[~person_no].mean())
        assert result.n == n


def test_binary_agreement_says_why_a_value_is_undefined():
    same = binary_agreement(["Yes"] * 5, ["yes"] * 5)
    assert same.kappa is None and "only one answer" in same.reasons["kappa"]
    assert same.mcc is None and same.false_fail_rate == 0.0
    assert same.false_pass_rate is None and "No to no item" in same.reasons["false_pass_rate"]
    judge_constant = binary_agreement([1, 1, 1, 1], [1, 0, 1, 0])
    assert judge_constant.mcc is None and "the judge" in judge_constant.reasons["mcc"]
    assert judge_constant.kappa == pytest.approx(0.0)
    assert judge_constant.false_pass_rate == 1.0


def test_binary_agreement_leaves_out_unanswered_items():
    result = binary_agreement(["Yes", None, "No", "maybe", "No"], ["No", "Yes", "No", "Yes", ""])
    assert result.n == 2 and result.n_dropped == 3
    assert result.judge_yes_person_no == 1 and result.both_no == 1
    assert not math.isnan(result.kappa if result.kappa is not None else 0.0)


def test_p_values_and_agreement_in_plain_words():
    from core.stats import format_p, plain_agreement

    assert format_p(0.0004) == "p < 0.001"
    assert format_p(0.013) == "p = 0.013"
    assert format_p(0.21) == "p = 0.21"
    assert format_p(None) == ""
    text = plain_agreement(0.59, n=30, who="AQER", against="your grades", units="students",
                           ci_low=0.30, ci_high=0.78, p_value=0.0006)
    assert text == ("AQER agrees moderately with your grades: r = 0.59 over 30 students "
                    "(95% CI 0.30 to 0.78, p < 0.001).")
    unsure = plain_agreement(0.2, n=8, who="AQER", against="your grades", units="students",
                             ci_low=-0.5, ci_high=0.7)
    assert "too few students to be sure" in unsure
    assert "disagrees" in plain_agreement(-0.4, n=20, who="AQER")
    assert "cannot be said" in plain_agreement(None, n=3, who="AQER", reason="all grades equal")


# ------------------------------------------------------------------ the words follow the numbers


def _difference(a, b, low, high, n=29):
    from core.stats import PairedDifference

    return PairedDifference("pearson", a, b, a - b, low, high, 0.5, n, "pairs", 0)


def test_a_difference_that_rounds_to_zero_is_not_called_less_well_and_never_minus_zero():
    # issue 27: "agrees less well ... difference -0.00, 95% CI -0.00 to -0.00"
    text = _difference(0.7837, 0.7839, -0.0003, -0.00005).summary("RASA", "AQER")
    assert "-0.00" not in text
    assert "slightly less well" in text and "the difference is small" in text
    assert "difference 0.00, 95% CI 0.00 to 0.00" in text


def test_a_large_gap_with_an_interval_over_zero_is_not_about_equally_well():
    # issue 27: "agree about equally well ... r 0.23 vs 0.59, difference -0.36, CI -0.66 to 0.02"
    text = _difference(0.23, 0.59, -0.66, 0.02, n=12).summary("BLEU-1", "AQER")
    assert "equally well" not in text
    assert text.startswith("BLEU-1 may agree less well with your ratings than AQER")
    assert "the data cannot tell" in text
    assert "difference -0.36, 95% CI -0.66 to 0.02, 12 pairs" in text


@pytest.mark.parametrize(("low", "high", "words"), [
    (-0.02, 0.03, "agree about equally well"),          # narrow, over zero
    (0.08, 0.30, "agrees better"),                      # clear and large
    (-0.30, 0.25, "The data cannot tell whether"),      # wide, gap close to zero
])
def test_the_words_follow_the_interval_and_the_gap(low, high, words):
    gap = 0.01 if "cannot tell whether" in words or "equally" in words else 0.19
    text = _difference(0.6 + gap, 0.6, low, high).summary("A", "B")
    assert words in text, text
