"""Tests for core.stats: correlations with human ratings and Krippendorff's alpha."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from core import stats
from core.stats import (
    METHODS,
    ROW_COLUMNS,
    agreement_rows,
    correlations,
    grouped_correlations,
    krippendorff_alpha,
)

SCIPY = {"pearson": sps.pearsonr, "spearman": sps.spearmanr, "kendall": sps.kendalltau}


def _paired_sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, size=n).astype(float)  # 1-5 ratings: plenty of ties
    y = x + rng.normal(scale=1.2, size=n)
    return x, np.round(y, 1)


# --- pooled correlations ------------------------------------------------------------------


def test_missing_and_non_numeric_pairs_are_dropped_and_counted():
    x = [1, 2, None, 4, "5", float("nan"), 7, "n/a", 9, 10]
    y = [2, 1, 3, "", 6, 5, float("inf"), 8, 8, 11]
    report = correlations(x, y, n_boot=0)
    # dropped: 2 (x None), 3 (y empty), 5 (x NaN), 6 (y inf), 7 (x text)
    assert report.dropped_indices == (2, 3, 5, 6, 7)
    assert report.n_dropped == 5
    assert report.n == 5
    kept_x, kept_y = [1, 2, 5, 9, 10], [2, 1, 6, 8, 11]  # "5" is read as the number 5
    for method in METHODS:
        assert report[method].n == 5
        assert report[method].value == pytest.approx(SCIPY[method](kept_x, kept_y).statistic)
    assert all(
        "5 pairs with a missing or non-numeric value left out" in r["note"]
        for r in report.to_rows()
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_defined_values_and_p_values_match_scipy(seed):
    x, y = _paired_sample(40, seed)
    report = correlations(x, y, n_boot=200, seed=seed)
    assert report.n == 40 and report.n_dropped == 0
    for method in METHODS:
        expected = SCIPY[method](x, y)
        corr = report[method]
        assert corr.defined and corr.reason == ""
        assert corr.value == pytest.approx(float(expected.statistic), abs=1e-12)
        assert corr.p_value == pytest.approx(float(expected.pvalue), rel=1e-9, abs=1e-300)
    # Kendall must be tau-b (ties in both columns here)
    assert report.kendall.value == pytest.approx(sps.kendalltau(x, y, variant="b").statistic)


def test_fewer_than_three_pairs_is_undefined_with_reason():
    report = correlations([1, 2, None], [3, 5, 4])
    assert report.n == 2
    for corr in report.correlations:
        assert not corr.defined
        assert corr.value is None and corr.p_value is None
        assert corr.ci_low is None and corr.ci_high is None
        assert corr.reason == "fewer than 3 paired values (n=2)"
    for row in report.to_rows():
        assert row["value"] is None
        assert "fewer than 3 paired values (n=2)" in row["note"]


def test_constant_human_scores_are_undefined_with_reason():
    report = correlations([1, 2, 3, 4], [4.0, 4, "4", 4])
    for corr in report.correlations:
        assert corr.value is None
        assert corr.reason == (
            "the human scores are all the same (4), so no correlation can be computed"
        )


def test_constant_scores_name_the_side_that_is_constant():
    one = correlations([3, 3, 3], [1, 2, 3], x_name="the MAJ-Eval scores")
    assert one.spearman.reason.startswith("the MAJ-Eval scores are all the same (3)")
    both = correlations([3, 3, 3], [2.5, 2.5, 2.5])
    assert "the method's scores are all the same (3)" in both.pearson.reason
    assert "the human scores are all the same (2.5)" in both.pearson.reason


def test_undefined_is_never_a_bare_nan():
    report = correlations([1, 1, 1, 1], [1, 2, 3, 4])
    for corr in report.correlations:
        for field in (corr.value, corr.p_value, corr.ci_low, corr.ci_high):
            assert field is None
    with pytest.raises(ValueError):
        stats.Correlation("pearson", None, None, None, None, 3)  # undefined needs a reason


def test_bootstrap_ci_contains_estimate_and_is_reproducible():
    x, y = _paired_sample(60, 7)
    first = correlations(x, y, n_boot=500, seed=11)
    again = correlations(x, y, n_boot=500, seed=11)
    other = correlations(x, y, n_boot=500, seed=12)
    assert first == again
    for method in METHODS:
        corr = first[method]
        assert corr.ci_low < corr.value < corr.ci_high
        assert -1.0 <= corr.ci_low and corr.ci_high <= 1.0
        assert (corr.ci_low, corr.ci_high) != (other[method].ci_low, other[method].ci_high)
    assert "95% CI: percentile bootstrap over pairs (500 resamples, seed 11)" in first.pearson.note
    narrow = correlations(x, y, n_boot=500, seed=11, ci=0.5)
    assert "50% CI" in narrow.pearson.note
    assert first.pearson.ci_low < narrow.pearson.ci_low < narrow.pearson.ci_high
    assert narrow.pearson.ci_high < first.pearson.ci_high


def test_bootstrap_ci_matches_a_plain_resampling_loop():
    """Our vectorised bootstrap gives what a straightforward loop with scipy gives."""
    x, y = _paired_sample(25, 3)
    n_boot, seed = 300, 5
    report = correlations(x, y, n_boot=n_boot, seed=seed, ci=0.9)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(n_boot, len(x)))
    boot = {m: [] for m in METHODS}
    for row in idx:
        xb, yb = x[row], y[row]
        if np.ptp(xb) == 0 or np.ptp(yb) == 0:
            continue
        for m in METHODS:
            boot[m].append(SCIPY[m](xb, yb).statistic)
    for m in METHODS:
        low, high = np.quantile(boot[m], [0.05, 0.95])
        assert report[m].ci_low == pytest.approx(low, abs=1e-9)
        assert report[m].ci_high == pytest.approx(high, abs=1e-9)


def test_constant_resamples_are_skipped_and_too_many_give_no_ci():
    # x = [0,0,1], y = [1,0,0]: about 56% of resamples are constant on one side.
    report = correlations([0, 0, 1], [1, 0, 0], n_boot=1000, seed=0)
    for corr in report.correlations:
        assert corr.defined
        assert corr.ci_low is None and corr.ci_high is None
        assert corr.note.startswith("no CI:")
    # With more variation a few constant resamples are skipped, and the note says how many.
    report = correlations([1, 2, 3, 4], [1, 3, 2, 4], n_boot=1000, seed=0)
    assert report.spearman.ci_low is not None
    assert "resamples skipped because one side was all the same" in report.spearman.note


def test_bootstrap_can_be_switched_off_and_options_are_checked():
    report = correlations([1, 2, 3, 4], [1, 3, 2, 4], n_boot=0)
    assert report.pearson.ci_low is None and "switched off" in report.pearson.note
    with pytest.raises(ValueError, match="ci must be between 0 and 1"):
        correlations([1, 2, 3], [1, 2, 3], ci=95)
    with pytest.raises(ValueError, match="n_boot"):
        correlations([1, 2, 3], [1, 2, 3], n_boot=-1)
    with pytest.raises(ValueError, match="paired one to one"):
        correlations([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="single list"):
        correlations([[1, 2], [3, 4]], [1, 2])


def test_kendall_rows_match_scipy_for_short_and_long_rows():
    rng = np.random.default_rng(0)
    for n in (5, 30, 250):  # 250 takes the per-row scipy path
        a = rng.integers(0, 4, size=(20, n)).astype(float)
        b = rng.integers(0, 4, size=(20, n)).astype(float)
        expected = [sps.kendalltau(a[i], b[i]).statistic for i in range(20)]
        np.testing.assert_allclose(stats._kendall_rows(a, b), expected, atol=1e-12)


# --- grouped (per-source-document averaged) correlations ----------------------------------

# Groups and hand-computed values:
#   A: x 1 2 3, y 1 3 2 (+ one pair with y missing): Pearson = Spearman = 1/2, tau-b = 1/3
#   B: x 1 2 3 4, y 4 3 2 1: all -1
#   C: x 5 5 5: method's scores constant -> skipped
#   D: x 1 2, y 3 3: human scores constant -> skipped
#   E: one pair -> skipped
#   F: x 1 2 3 4, y 1 2 2 3: Pearson 3/sqrt(10); Spearman (ranks 1 2.5 2.5 4) 4.5/sqrt(22.5);
#      tau-b 5 concordant, 0 discordant, one tie in y: 5/sqrt(6*5)
#   plus one pair without a group.
GROUPED_ROWS = [
    ("A", 1, 1), ("A", 2, 3), ("A", 3, 2), ("A", 4, None),
    ("B", 1, 4), ("B", 2, 3), ("B", 3, 2), ("B", 4, 1),
    ("C", 5, 1), ("C", 5, 2), ("C", 5, 3),
    ("D", 1, 3), ("D", 2, 3),
    ("E", 7, 1),
    ("F", 1, 1), ("F", 2, 2), ("F", 3, 2), ("F", 4, 3),
    (None, 1, 2),
]  # fmt: skip
HAND = {
    "A": {"pearson": 0.5, "spearman": 0.5, "kendall": 1 / 3},
    "B": {"pearson": -1.0, "spearman": -1.0, "kendall": -1.0},
    "F": {
        "pearson": 3 / math.sqrt(10),
        "spearman": 4.5 / math.sqrt(22.5),
        "kendall": 5 / math.sqrt(30),
    },
}


def _grouped(**kwargs):
    groups, x, y = zip(*GROUPED_ROWS, strict=True)
    return grouped_correlations(list(x), list(y), list(groups), **kwargs)


def test_grouped_correlations_match_hand_computed_values():
    report = _grouped(n_boot=0)
    assert report.label == "per-source-document averaged"
    by_key = {g.group: g for g in report.groups}
    assert list(by_key) == ["A", "B", "C", "D", "E", "F"]
    for key, values in HAND.items():
        assert by_key[key].used
        for method, value in values.items():
            assert getattr(by_key[key], method) == pytest.approx(value, abs=1e-12)
    for method in METHODS:
        mean = sum(HAND[k][method] for k in HAND) / 3
        assert report[method].value == pytest.approx(mean, abs=1e-12)
        assert report[method].p_value is None
        assert "no p-value" in report[method].note
        assert report[method].n == 11


def test_grouped_correlations_per_group_values_match_scipy():
    report = _grouped(n_boot=0)
    for g in report.used_groups:
        rows = [(x, y) for k, x, y in GROUPED_ROWS if k == g.group and y is not None]
        gx, gy = zip(*rows, strict=True)
        for method in METHODS:
            assert getattr(g, method) == pytest.approx(SCIPY[method](gx, gy).statistic)


def test_grouped_correlations_count_and_explain_skipped_groups():
    report = _grouped(n_boot=0)
    assert report.groups_used == 3
    assert report.groups_skipped == 3
    assert report.n == 11  # pairs in A (3), B (4), F (4)
    assert report.n_total == 17  # every usable pair with a group
    assert report.n_dropped == 2  # A's missing human score, the pair without a group
    assert report.dropped_indices == (3, 18)
    reasons = {g.group: g.reason for g in report.skipped_groups}
    assert reasons == {
        "C": "the method's scores are all the same (5), so no correlation can be computed",
        "D": "the human scores are all the same (3), so no correlation can be computed",
        "E": "fewer than 2 paired values (n=1)",
    }
    assert dict(report.skip_counts) == {
        "the method's scores are all the same": 1,
        "the human scores are all the same": 1,
        "fewer than 2 paired values": 1,
    }
    assert report.skip_summary == (
        "3 of 6 groups skipped: 1 group where the method's scores are all the same, "
        "1 group where the human scores are all the same, 1 group with fewer than 2 paired values"
    )
    assert report.skip_summary in report.spearman.note


def test_grouped_ci_resamples_groups_reproducibly():
    first = _grouped(n_boot=400, seed=3)
    assert first == _grouped(n_boot=400, seed=3)
    rng = np.random.default_rng(3)
    draw = rng.integers(0, 3, size=(400, 3))
    for method in METHODS:
        per_group = np.array([HAND[k][method] for k in ("A", "B", "F")])
        low, high = np.quantile(per_group[draw].mean(axis=1), [0.025, 0.975])
        assert first[method].ci_low == pytest.approx(low, abs=1e-12)
        assert first[method].ci_high == pytest.approx(high, abs=1e-12)
        assert first[method].ci_low <= first[method].value <= first[method].ci_high


def test_grouped_with_too_few_groups_has_no_ci_and_with_none_is_undefined():
    two = grouped_correlations([1, 2, 3, 1, 2], [1, 2, 3, 2, 1], ["a", "a", "a", "b", "b"])
    assert two.spearman.value == pytest.approx(0.0)
    assert two.spearman.ci_low is None
    assert "needs at least 3 usable groups (2 used)" in two.spearman.note

    none = grouped_correlations([1, 2, 3, 3], [2, 2, 1, 5], ["a", "a", "b", "b"])
    assert none.groups_used == 0 and none.groups_skipped == 2
    for corr in none.correlations:
        assert corr.value is None
        assert corr.reason.startswith("no group could be used: 2 of 2 groups skipped")
    # Group keys from a numpy array come back as plain Python values.
    keys = grouped_correlations(
        np.array([1, 2, 3, 1, 2]), np.array([1, 2, 3, 2, 1]), np.array([7, 7, 7, 8, 8])
    )
    assert [type(g.group) for g in keys.groups] == [int, int]
    with pytest.raises(ValueError, match="each text needs one of each"):
        grouped_correlations([1, 2], [1, 2], ["a"])


# --- Krippendorff's alpha -----------------------------------------------------------------

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 observers x 12 units
# example with missing values; reported alpha: nominal .743, ordinal .815, interval .849.
_ = None
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
]


def _reference_alpha(data, level: str) -> float:
    import krippendorff  # GPL: test-only reference

    arr = np.array([[np.nan if v is None else v for v in row] for row in data], dtype=float)
    return float(krippendorff.alpha(reliability_data=arr, level_of_measurement=level))


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_reproduces_krippendorffs_worked_example(level, published):
    result = krippendorff_alpha(KRIPPENDORFF_2011, level)
    assert result.defined and result.reason == ""
    assert round(result.value, 3) == published
    assert result.value == pytest.approx(_reference_alpha(KRIPPENDORFF_2011, level), abs=1e-9)
    assert result.n_units == 11  # unit 12 has a single value: not pairable
    assert result.n_units_dropped == 1
    assert result.n_pairable == 40
    assert result.n_raters == 4


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(8))
def test_alpha_matches_reference_package_on_random_data(level, seed):
    rng = np.random.default_rng(seed)
    raters, units = rng.integers(2, 7), rng.integers(5, 60)
    if level == "interval" and seed % 2:
        data = np.round(rng.normal(3, 1.5, size=(raters, units)), 2)  # many distinct values
    else:
        truth = rng.integers(1, 6, size=units)
        noise = rng.integers(-1, 2, size=(raters, units)) * (rng.random((raters, units)) < 0.4)
        data = np.clip(truth + noise, 1, 5).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    result = krippendorff_alpha(data, level)
    assert result.defined, result.reason
    assert result.value == pytest.approx(_reference_alpha(data, level), abs=1e-9)
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    assert result.n_units == int(pairable.sum())
    assert result.n_pairable == int((~np.isnan(data[:, pairable])).sum())


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_alpha_with_many_distinct_values_matches_reference(level):
    """Continuous ratings (about 500 distinct values) and a large offset."""
    rng = np.random.default_rng(42)
    truth = rng.normal(1000.0, 2.0, size=150)
    data = truth + rng.normal(0.0, 1.0, size=(4, 150))
    data[rng.random(data.shape) < 0.2] = np.nan
    result = krippendorff_alpha(data, level)
    assert result.value == pytest.approx(_reference_alpha(data, level), abs=1e-9)
    assert 0.5 < result.value < 0.95


def test_alpha_accepts_lists_arrays_text_and_empty_cells_alike():
    as_text = [["" if v is None else str(v) for v in row] for row in KRIPPENDORFF_2011]
    as_array = np.array(
        [[np.nan if v is None else v for v in row] for row in KRIPPENDORFF_2011], dtype=float
    )
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff_alpha(KRIPPENDORFF_2011, level).value
        assert krippendorff_alpha(as_text, level).value == pytest.approx(expected, abs=1e-12)
        assert krippendorff_alpha(as_array, level).value == pytest.approx(expected, abs=1e-12)
    # Nominal categories may be words; only their identity matters.
    words = {1: "poor", 2: "fair", 3: "good", 4: "very good", 5: "excellent"}
    as_words = [[None if v is None else words[v] for v in row] for row in KRIPPENDORFF_2011]
    assert krippendorff_alpha(as_words, "nominal").value == pytest.approx(0.743421052631579)


def test_alpha_perfect_agreement_is_one():
    data = [[1, 2, 3, 4, None], [1, 2, 3, 4, 5], [None, 2, 3, 4, 5]]
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha(data, level).value == pytest.approx(1.0)


def test_alpha_without_variation_is_undefined_with_reason():
    result = krippendorff_alpha([[3, 3, 3, None], [3, 3, 3, 1]], "ordinal")
    assert result.value is None
    assert result.reason == (
        "all 6 pairable ratings are the same (3), so there is no variation to measure "
        "agreement against"
    )
    assert result.n_units == 3 and result.n_units_dropped == 1
    row = result.to_rows("Coherence")[0]
    assert row["value"] is None and row["note"].startswith("Not computed: all 6 pairable")


def test_alpha_with_fewer_than_two_pairable_units_is_undefined():
    result = krippendorff_alpha([[1, 2, None], [2, None, 3]], "interval")
    assert result.value is None
    assert result.n_units == 1
    assert "fewer than 2 units were rated by at least 2 raters (found 1)" in result.reason
    single_rater = krippendorff_alpha([[1, 2, 3]])
    assert single_rater.value is None and "at least 2 raters" in single_rater.reason


def test_alpha_input_problems_are_explained():
    with pytest.raises(ValueError, match="Rater 2, unit 3: 'good' is not a usable rating"):
        krippendorff_alpha([[1, 2, 3], [1, 2, "good"]], "ordinal")
    with pytest.raises(ValueError, match="Rater 2 has 2 ratings but rater 1 has 3"):
        krippendorff_alpha([[1, 2, 3], [1, 2]])
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha([[1, 2], [1, 2]], "ratio")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="one row per rater"):
        krippendorff_alpha([1, 2, 3])


# --- export rows --------------------------------------------------------------------------


def test_agreement_rows_have_the_export_columns():
    pooled = correlations([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], n_boot=100)
    grouped = _grouped(n_boot=100)
    alpha = krippendorff_alpha(KRIPPENDORFF_2011, "ordinal")
    rows = agreement_rows(
        {"Coherence: pooled": pooled, "Coherence: grouped": grouped, "Agents": alpha}
    )
    assert len(rows) == 7
    assert all(tuple(row) == ROW_COLUMNS for row in rows)
    assert [r["comparison"] for r in rows] == ["Coherence: pooled"] * 3 + [
        "Coherence: grouped"
    ] * 3 + ["Agents"]
    assert [r["statistic"] for r in rows[:3]] == ["Spearman rho", "Kendall tau-b", "Pearson r"]
    assert rows[0]["kind"] == "pooled over all texts"
    assert rows[3]["kind"] == "per-source-document averaged"
    assert rows[6]["statistic"] == "Krippendorff's alpha (ordinal)"
    assert rows[6]["value"] == pytest.approx(0.8153875, abs=1e-6)
    assert rows[0]["value"] == pooled.spearman.value
    assert rows[0]["p_value"] == pooled.spearman.p_value
    # Plain iterables work too, with an empty comparison.
    assert agreement_rows([alpha])[0]["comparison"] == ""
    # Dict forms carry everything an export or the project file needs.
    assert pooled.as_dict()["statistics"]["kendall"]["value"] == pooled.kendall.value
    assert grouped.as_dict()["groups_skipped"] == 3
