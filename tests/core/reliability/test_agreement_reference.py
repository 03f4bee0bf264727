"""Every agreement statistic against its reference implementation, to 1e-6, on three public
rating sets, two published tables and the edge cases (reference_cases.py).

References: R's psych (ICC, Cohen's and weighted kappa with their bounds) and the irrCAC
package (Fleiss' kappa, Gwet's AC1/AC2 with Gwet's intervals), stored in reference.json by
make_reference.py so the checks run without R or irrCAC (the live tests below re-run them
where they are installed: .ci/run installs R's psych); statsmodels (Cohen's and weighted kappa
with their SE, Fleiss' kappa, Wilson's interval), scikit-learn (kappa) and the krippendorff
package (alpha on the same bootstrap resamples) run live.
"""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from core.reliability import (
    bootstrap_indices,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha_ci,
    percent_agreement,
)
from core.reliability.icc import icc
from tests.conftest import SHARED_DATA
from tests.core.reliability import reference_cases

HERE = Path(__file__).resolve().parent
REFERENCE = json.loads((HERE / "reference.json").read_text())
TOL = 1e-6


@pytest.fixture(scope="module")
def cases():
    found = reference_cases.cases(SHARED_DATA)
    if set(found) != set(REFERENCE["cases"]):
        pytest.skip(f"the shared data sets are not beside this checkout ({SHARED_DATA})")
    return found


def ours(name: str, table, statistic: str):
    scale = reference_cases.categories(name)
    if statistic.startswith("icc"):
        return icc(table, statistic)
    if statistic == "cohen_kappa":
        return cohen_kappa(table, categories=scale)
    if statistic.startswith("weighted_kappa_"):
        return cohen_kappa(table, categories=scale, weights=statistic.rsplit("_", 1)[1])
    if statistic == "fleiss_kappa":
        return fleiss_kappa(table, categories=scale)
    if statistic == "gwet_ac1":
        return gwet_ac1(table, categories=scale)
    if statistic.startswith("gwet_ac2_"):
        return gwet_ac1(table, categories=scale, weights=statistic.rsplit("_", 1)[1])
    raise AssertionError(statistic)


def test_the_reference_covers_three_public_sets_and_every_edge_case():
    names = set(REFERENCE["cases"])
    assert {"powergrading_q8", "mohler", "mslr_fluency"} <= names
    assert {"one_value_rater", "missing_ratings", "two_categories", "all_agree"} <= names
    assert {(r["case"], r["statistic"]) for r in REFERENCE["psych"]} >= {
        ("mohler", "icc_2_1"), ("mohler", "icc_2_k"), ("mohler", "icc_3_1"),
        ("mslr_fluency", "icc_2_1"), ("shrout_fleiss", "icc_2_1"),
        ("mohler", "weighted_kappa_quadratic"), ("one_value_rater", "cohen_kappa"),
    }


@pytest.mark.parametrize("row", REFERENCE["psych"], ids=lambda r: f"{r['case']}-{r['statistic']}")
def test_matches_r_psych(cases, row):
    result = ours(row["case"], cases[row["case"]], row["statistic"])
    assert result.value == pytest.approx(row["value"], abs=TOL)
    if row["statistic"].startswith("weighted_kappa_"):
        # psych 2.2.9's weighted-kappa variance pairs each weight with the wrong margin (R's
        # recycling in colSums(w * cs)); with the margins paired as in Fleiss, Cohen & Everitt
        # (1969) it is statsmodels' variance, checked in the next test. Value only here.
        return
    assert result.ci_low == pytest.approx(row["low"], abs=TOL)
    assert result.ci_high == pytest.approx(row["high"], abs=TOL)


@pytest.mark.parametrize("row", REFERENCE["irrCAC"], ids=lambda r: f"{r['case']}-{r['statistic']}")
def test_matches_irrcac(cases, row):
    result = ours(row["case"], cases[row["case"]], row["statistic"])
    assert result.value == pytest.approx(row["value"], abs=TOL)
    assert result.se == pytest.approx(row["se"], abs=TOL)
    assert result.ci_low == pytest.approx(max(-1.0, row["low"]), abs=TOL)
    assert result.ci_high == pytest.approx(row["high"], abs=TOL)


def _pairs(cases):
    return [(name, t) for name, t in cases.items() if len(t) == 2]


def _table(pair, scale):
    from statsmodels.stats.inter_rater import to_table

    a = np.array([[np.nan if v is None else float(v) for v in row] for row in pair])
    a = a[:, ~np.isnan(a).any(axis=0)]
    bins = np.concatenate([np.array(scale, float) - 1e-9, [float(scale[-1]) + 1]])
    return to_table(a.T, bins=bins)[0]


# statsmodels also computes kappa's variance under "no agreement", which is negative (and its
# square root NaN) for the rater who answers Yes to everything; we use the other variance
@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt:RuntimeWarning")
def test_cohen_and_weighted_kappa_match_statsmodels(cases):
    from statsmodels.stats.inter_rater import cohens_kappa

    checked = 0
    for name, pair in _pairs(cases):
        scale = reference_cases.categories(name) or sorted(
            {v for row in pair for v in row if v is not None})
        table = _table(pair, scale)
        kinds = [None, "linear", "quadratic"] if reference_cases.numeric(name) else [None]
        for kind in kinds:
            ref = (cohens_kappa(table) if kind is None
                   else cohens_kappa(table, weights=np.array(scale, float), wt=kind))
            mine = cohen_kappa(pair, categories=scale, weights=kind)
            assert mine.value == pytest.approx(ref.kappa, abs=TOL), (name, kind)
            assert mine.se == pytest.approx(ref.std_kappa, abs=TOL), (name, kind)
            assert mine.ci_low == pytest.approx(max(-1, ref.kappa_low), abs=TOL)
            assert mine.ci_high == pytest.approx(min(1, ref.kappa_upp), abs=TOL)
            checked += 1
    assert checked >= 5  # one_value_rater, two_categories, mohler x 3 weightings


def test_kappa_matches_scikit_learn(cases):
    from sklearn.metrics import cohen_kappa_score

    for name, pair in _pairs(cases):
        a, b = (np.array([np.nan if v is None else v for v in row], float) for row in pair)
        keep = ~(np.isnan(a) | np.isnan(b))
        ref = cohen_kappa_score(a[keep].astype(str), b[keep].astype(str))
        assert cohen_kappa(pair, categories=reference_cases.categories(name)).value == (
            pytest.approx(ref, abs=TOL))


def test_fleiss_kappa_matches_statsmodels_on_complete_tables(cases):
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    checked = 0
    for name, table in cases.items():
        a = np.array([[np.nan if v is None else float(v) for v in row] for row in table])
        if np.isnan(a).any() or len(np.unique(a)) < 2:
            continue
        ref = sm_fleiss(aggregate_raters(a.T.astype(int) if name != "mohler" else
                                         (a.T * 4).astype(int))[0], method="fleiss")
        assert fleiss_kappa(table).value == pytest.approx(ref, abs=TOL), name
        checked += 1
    assert checked >= 5


def test_percent_agreement_interval_is_statsmodels_wilson(cases):
    from statsmodels.stats.proportion import proportion_confint

    for name, table in cases.items():
        result = percent_agreement(table)
        low, high = proportion_confint(result.value * result.n, result.n, alpha=0.05,
                                       method="wilson")
        assert (result.ci_low, result.ci_high) == pytest.approx((low, high), abs=TOL), name
    two = cases["two_categories"]
    assert percent_agreement(two).value == pytest.approx(
        np.mean(np.array(two[0]) == np.array(two[1])))


@pytest.mark.parametrize("name,level", [("gwet_4_raters", "nominal"),
                                        ("mslr_fluency", "ordinal"),
                                        ("mohler", "interval"),
                                        ("powergrading_q20", "nominal")])
def test_alpha_bootstrap_is_the_krippendorff_package_on_the_same_resamples(cases, name, level):
    import krippendorff

    table = cases[name]
    a = np.array([[np.nan if v is None else float(v) for v in row] for row in table])
    n_boot = 200
    result = krippendorff_alpha_ci(table, level, n_boot=n_boot, seed=7)
    assert result.value == pytest.approx(
        krippendorff.alpha(reliability_data=a, level_of_measurement=level), abs=TOL)
    pairable = a[:, (~np.isnan(a)).sum(axis=0) >= 2]
    boot = []
    for chunk in bootstrap_indices(pairable.shape[1], n_boot, 7):
        for idx in chunk:
            sample = pairable[:, idx]
            if len(np.unique(sample[~np.isnan(sample)])) < 2:
                continue
            boot.append(krippendorff.alpha(reliability_data=sample, level_of_measurement=level))
    low, high = np.quantile(boot, [0.025, 0.975])
    assert (result.ci_low, result.ci_high) == pytest.approx((low, high), abs=TOL)
    assert "percentile bootstrap over units (200 resamples, seed 7)" in result.note


# -- the stored references are what the references compute today ----------------------------


def _r_with_psych() -> bool:
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(psych)"], capture_output=True,
                           timeout=60, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _r_with_psych(), reason="R with the psych package is not installed "
                    "(apt-get install r-cran-psych; .ci/run does); the stored values are checked "
                    "above")
def test_stored_psych_values_are_what_r_computes_now(cases):
    from tests.core.reliability.make_reference import run_psych

    live = {(r["case"], r["statistic"]): r for r in run_psych(cases)}
    for row in REFERENCE["psych"]:
        now = live[(row["case"], row["statistic"])]
        for field in ("value", "low", "high"):
            assert now[field] == pytest.approx(row[field], abs=1e-12)
    assert len(live) == len(REFERENCE["psych"])


@pytest.mark.skipif(importlib.util.find_spec("irrCAC") is None,
                    reason="irrCAC is not installed (test-only, GPL; it pins an old scipy so it "
                    "is not in the dev extra: see make_reference.py); the stored values are "
                    "checked above")
def test_stored_irrcac_values_are_what_irrcac_computes_now(cases):
    from tests.core.reliability.make_reference import run_irrcac

    live = run_irrcac(cases)
    assert len(live) == len(REFERENCE["irrCAC"])
    for now, row in zip(live, REFERENCE["irrCAC"], strict=True):
        for field in ("value", "se", "low", "high"):
            assert math.isclose(now[field], row[field], abs_tol=1e-12)
