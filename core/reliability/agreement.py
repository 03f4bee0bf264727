"""Agreement between raters on categories and ordered scales, each with a 95% interval.

All functions take the ratings as :func:`core.stats.krippendorff_alpha` does: a table with one
row per rater and one column per unit (text); None, NaN and empty text are missing ratings.
Give ``categories`` (the whole scale, in order) whenever some answer may not have been used.

* :func:`percent_agreement` - the share of agreeing pairs of raters, averaged over units;
  Wilson score interval over the units.
* :func:`cohen_kappa` - two raters; ``weights="linear"`` or ``"quadratic"`` for the weighted
  kappa of an ordered scale. Interval: the large-sample variance of Fleiss, Cohen & Everitt
  (1969), as statsmodels' ``cohens_kappa`` and R's ``psych::cohen.kappa`` compute it.
* :func:`fleiss_kappa`, :func:`gwet_ac1` (``weights=`` for AC2) - any number of raters, units
  rated by different numbers of raters. Interval: Gwet's (2008, 2014) linearised variance with a
  Student t quantile (n - 1 degrees of freedom), as the ``irrCAC`` package computes it.
* :func:`krippendorff_alpha_ci` - today's :func:`core.stats.krippendorff_alpha` with a
  percentile bootstrap over units (seeded), the interval Krippendorff recommends.

Missing ratings: Cohen's and weighted kappa use the units both raters rated. Percent
agreement, Fleiss' kappa, AC1/AC2 and alpha use every unit with at least two ratings, each with
the ratings it has; for Fleiss' kappa and AC1/AC2 a unit with one rating still counts for how
often each answer is given (Gwet's treatment), for alpha it is left out (Krippendorff's).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

from core.reliability._common import (
    Counts,
    Reliability,
    agreement_weights,
    code_table,
    missing_note,
)
from core.stats import (
    _LEVELS,
    Level,
    _check_options,
    _fmt_value,
    _join,
    _percent,
    is_level,
    krippendorff_alpha,
)

__all__ = [
    "bootstrap_indices",
    "cohen_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha_ci",
    "percent_agreement",
]

#: Fewest units rated by at least two raters for any agreement statistic with an interval.
MIN_UNITS = 2


def _z(ci: float) -> float:
    return float(sps.norm.ppf(1.0 - (1.0 - ci) / 2.0))


def _clip(value: float, low: float = -1.0, high: float = 1.0) -> float:
    return float(min(high, max(low, value)))


def _check_ci(ci: float) -> None:
    if not (0.0 < float(ci) < 1.0):
        raise ValueError(f"ci must be between 0 and 1, e.g. 0.95 (got {ci!r})")


def _zero_width_note(se: float) -> str:
    if se > 0:
        return ""
    return ("the interval has no width because every unit agrees in the same way; with few "
            "units it understates the uncertainty")


# --------------------------------------------------------------------------------------------
# Percent agreement
# --------------------------------------------------------------------------------------------


def wilson_interval(share: float, n: int, ci: float) -> tuple[float, float]:
    """Wilson's score interval for a share observed on ``n`` units (statsmodels'
    ``proportion_confint(method="wilson")`` with ``count = share * n``)."""
    z = _z(ci)
    denom = 1.0 + z * z / n
    centre = (share + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(share * (1.0 - share) / n + z * z / (4.0 * n * n)) / denom
    return _clip(centre - half, 0.0, 1.0), _clip(centre + half, 0.0, 1.0)


def percent_agreement(ratings: Any, *, categories: Sequence[Any] | None = None,
                      ci: float = 0.95) -> Reliability:
    """The share of pairs of raters who gave a unit the same answer, averaged over the units
    rated by at least two raters (with two raters: the share of units they agree on).

    Interval: Wilson's score interval with n = those units. With two raters that is the
    textbook interval for a share; with more raters the per-unit shares lie between 0 and 1,
    so their spread is at most that of a Yes/No share and the interval is on the safe side.
    """
    _check_ci(ci)
    coded = code_table(ratings, categories=categories)
    counts = coded.counts()
    per_unit = counts.sum(axis=1)
    used = per_unit >= 2
    n = int(used.sum())
    dropped = int(per_unit.shape[0] - n)
    common: Counts = {"n": n, "n_raters": coded.n_raters, "n_units_dropped": dropped, "ci": ci}
    if coded.n_raters < 2:
        return Reliability("percent_agreement", None, None, None, None, reason=(
            f"agreement needs at least 2 raters (found {coded.n_raters})"), **common)
    if n < 1:
        return Reliability("percent_agreement", None, None, None, None, reason=(
            "no unit was rated by at least 2 raters"), **common)
    c, r = counts[used], per_unit[used]
    per_unit_share = (c * (c - 1.0)).sum(axis=1) / (r * (r - 1.0))
    value = float(per_unit_share.mean())
    low, high = wilson_interval(value, n, ci)
    note = _join(f"{_percent(ci)} CI: Wilson score interval over {n} units",
                 missing_note(coded.n_raters, per_unit, singles_used=False))
    return Reliability("percent_agreement", value, low, high, None, note=note, **common)


# --------------------------------------------------------------------------------------------
# Cohen's kappa, plain and weighted (two raters)
# --------------------------------------------------------------------------------------------

_KAPPA_KEYS = {None: "cohen_kappa", "linear": "weighted_kappa_linear",
               "quadratic": "weighted_kappa_quadratic"}


def cohen_kappa(ratings: Any, *, categories: Sequence[Any] | None = None,
                weights: str | None = None, ci: float = 0.95) -> Reliability:
    """Cohen's kappa between exactly two raters (rows), on the units both rated.

    ``weights=None``: plain kappa (answers without an order). ``"linear"`` or ``"quadratic"``:
    weighted kappa on an ordered scale; the weights use the categories' values when they are
    numbers (else their order in ``categories``): 1 - |a - b| / range, 1 - (a - b)^2 / range^2.

    Interval: kappa +- z * SE with the large-sample SE of Fleiss, Cohen & Everitt (1969) for
    (weighted) kappa, clipped to [-1, 1].
    """
    _check_ci(ci)
    if weights not in _KAPPA_KEYS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic' (got {weights!r})")
    key = _KAPPA_KEYS[weights]
    coded = code_table(ratings, categories=categories)
    if weights is not None and not coded.numeric and categories is None:
        raise ValueError("Weighted kappa needs the scale in order: give categories=[...] "
                         "from the lowest to the highest answer.")
    both = (coded.codes >= 0).all(axis=0) if coded.n_raters == 2 else np.zeros(0, bool)
    n = int(both.sum())
    common: Counts = {"n": n, "n_raters": coded.n_raters,
                      "n_units_dropped": int(coded.codes.shape[1] - n), "ci": ci}

    def undefined(reason: str) -> Reliability:
        return Reliability(key, None, None, None, None, reason=reason, **common)

    if coded.n_raters != 2:
        return undefined(f"Cohen's kappa compares exactly 2 raters (found {coded.n_raters}); "
                         "use Fleiss' kappa or Gwet's AC1 for more")
    if n < MIN_UNITS:
        return undefined(f"fewer than {MIN_UNITS} units were rated by both raters (found {n})")
    a, b = coded.codes[0, both], coded.codes[1, both]
    q = coded.q
    table = np.zeros((q, q))
    np.add.at(table, (a, b), 1.0)
    p = table / n
    row, col = p.sum(axis=1), p.sum(axis=0)
    w = agreement_weights(coded, "identity" if weights is None else weights)
    observed = float((w * p).sum())
    expected = float(row @ w @ col)
    if expected >= 1.0 - 1e-12:
        value_a = coded.categories[int(a[0])]
        return undefined(f"both raters gave every unit the same answer ({_fmt_value(value_a)}), "
                         "so agreement beyond chance cannot be measured")
    kappa = (observed - expected) / (1.0 - expected)
    w_row = w @ col  # sum_j p_.j w_ij
    w_col = row @ w  # sum_i p_i. w_ij
    term = (p * (w - (w_row[:, None] + w_col[None, :]) * (1.0 - kappa)) ** 2).sum()
    var = (term - (kappa - expected * (1.0 - kappa)) ** 2) / (n * (1.0 - expected) ** 2)
    se = math.sqrt(max(var, 0.0))
    z = _z(ci)
    note = _join(
        f"{_percent(ci)} CI: kappa +- {z:.2f} x large-sample SE (Fleiss, Cohen & Everitt 1969)",
        f"{common['n_units_dropped']} units not rated by both raters left out"
        if common["n_units_dropped"] else "",
        _zero_width_note(se),
    )
    return Reliability(key, float(kappa), _clip(kappa - z * se), _clip(kappa + z * se), se,
                       note=note, **common)


# --------------------------------------------------------------------------------------------
# Fleiss' kappa and Gwet's AC1/AC2 (any number of raters, missing ratings allowed)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Chance:
    value: float
    se: float
    n_all: int  # units with at least one rating (Gwet's n)


def _gwet_family(counts: np.ndarray, w: np.ndarray, kind: str) -> _Chance | str:
    """Fleiss' kappa ("fleiss") or Gwet's AC1/AC2 ("ac") and Gwet's linearised SE, over units
    with at least one rating (``counts``: units x categories). A str is why it is undefined."""
    r = counts.sum(axis=1)
    counts, r = counts[r > 0], r[r > 0]
    n = counts.shape[0]
    q = counts.shape[1]
    more = r >= 2
    n2 = int(more.sum())
    weighted_counts = counts @ w.T  # r*_ik = sum_l w_kl r_il
    pairs = np.where(more, r * (r - 1.0), 1.0)
    pa_i = np.where(more, (counts * (weighted_counts - 1.0)).sum(axis=1) / pairs, 0.0)
    pa = float(pa_i.sum() / n2)
    share = (counts / r[:, None]).mean(axis=0)  # pi_k over all n units
    if kind == "fleiss":
        pe = float(share @ w @ share)
        pe_i = counts @ (((w + w.T) / 2.0) @ share) / r
    else:
        scale = float(w.sum()) / (q * (q - 1.0))
        pe = scale * float((share * (1.0 - share)).sum())
        pe_i = scale * (counts @ (1.0 - share)) / r
    if pe >= 1.0 - 1e-12:
        return "all"
    value = (pa - pe) / (1.0 - pe)
    unit_values = (n / n2) * (pa_i - pe * more) / (1.0 - pe)
    unit_values = unit_values - 2.0 * (1.0 - value) * (pe_i - pe) / (1.0 - pe)
    var = float(((unit_values - value) ** 2).sum()) / (n * (n - 1.0))
    return _Chance(float(value), math.sqrt(max(var, 0.0)), n)


def _chance_corrected(key: str, kind: str, ratings: Any, categories: Sequence[Any] | None,
                      weights: str | None, ci: float) -> Reliability:
    _check_ci(ci)
    coded = code_table(ratings, categories=categories)
    if weights is not None and not coded.numeric and categories is None:
        raise ValueError("Weighted agreement needs the scale in order: give categories=[...] "
                         "from the lowest to the highest answer.")
    counts = coded.counts()
    per_unit = counts.sum(axis=1)
    n = int(np.count_nonzero(per_unit >= 2))
    common: Counts = {"n": n, "n_raters": coded.n_raters,
                      "n_units_dropped": int(np.count_nonzero(per_unit < 2)), "ci": ci}

    def undefined(reason: str) -> Reliability:
        return Reliability(key, None, None, None, None, reason=reason, **common)

    if coded.n_raters < 2:
        return undefined(f"agreement needs at least 2 raters (found {coded.n_raters})")
    if n < MIN_UNITS:
        return undefined(f"fewer than {MIN_UNITS} units were rated by at least 2 raters "
                         f"(found {n})")
    if kind == "ac" and coded.q < 2:
        only = _fmt_value(coded.categories[0]) if coded.categories else "none"
        return undefined(
            f"the scale has a single answer ({only}), so chance agreement cannot be estimated; "
            "give the scale's answers (for example Yes and No)")
    w = agreement_weights(coded, "identity" if weights is None else weights)
    result = _gwet_family(counts, w, kind)
    if isinstance(result, str):
        used = coded.codes[coded.codes >= 0]
        value = coded.categories[int(used[0])]
        return undefined(f"every rating is the same ({_fmt_value(value)}), so agreement beyond "
                         "chance cannot be measured; Gwet's AC1 still can")
    df = result.n_all - 1
    t = float(sps.t.ppf(1.0 - (1.0 - ci) / 2.0, df))
    note = _join(
        f"{_percent(ci)} CI: value +- t({df}) x SE, Gwet's linearised variance over units",
        missing_note(coded.n_raters, per_unit, singles_used=True),
        _zero_width_note(result.se),
    )
    return Reliability(key, result.value, _clip(result.value - t * result.se),
                       _clip(result.value + t * result.se), result.se, note=note, **common)


def fleiss_kappa(ratings: Any, *, categories: Sequence[Any] | None = None,
                 ci: float = 0.95) -> Reliability:
    """Fleiss' kappa for two or more raters (with 2 raters it equals Scott's pi); units may be
    rated by different numbers of raters (Gwet's generalisation; with every unit rated by all
    raters it is Fleiss' 1971 kappa, as statsmodels' ``fleiss_kappa`` computes it)."""
    return _chance_corrected("fleiss_kappa", "fleiss", ratings, categories, None, ci)


def gwet_ac1(ratings: Any, *, categories: Sequence[Any] | None = None,
             weights: str | None = None, ci: float = 0.95) -> Reliability:
    """Gwet's AC1, or AC2 with ``weights="linear"`` / ``"quadratic"`` on an ordered scale.

    Chance agreement is ``T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k)`` with q the number of
    answers on the scale: give ``categories`` so that an answer nobody used still counts
    (a Yes/No question everybody answered Yes still has q = 2).
    """
    if weights is None:
        return _chance_corrected("gwet_ac1", "ac", ratings, categories, None, ci)
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic' (got {weights!r})")
    return _chance_corrected(f"gwet_ac2_{weights}", "ac", ratings, categories, weights, ci)


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha with a bootstrap interval
# --------------------------------------------------------------------------------------------

_BOOT_CHUNK = 100
#: Above this many cells (units x values x values) alpha's bootstrap resamples one by one.
_MAX_COINCIDENCE_CELLS = 20_000_000


def bootstrap_indices(n_units: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """The resamples of :func:`krippendorff_alpha_ci`: chunks of rows of ``n_units`` unit
    positions drawn with replacement, ``numpy.random.default_rng(seed).integers`` in chunks of
    100 rows (so a reference can redraw exactly the same resamples)."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_boot:
        size = min(_BOOT_CHUNK, n_boot - done)
        done += size
        yield rng.integers(0, n_units, size=(size, n_units))


def _alpha_rows(unit_counts: np.ndarray, values: np.ndarray | None, level: Level,
                multiplicity: np.ndarray) -> np.ndarray:
    """Alpha of each resample (rows of ``multiplicity``: how often each unit is drawn), from
    the per-unit coincidences; NaN where a resample has no variation. ``values``: the
    positions of the values on the interval level, None on the others."""
    m = unit_counts.sum(axis=1)
    q = unit_counts.shape[1]
    outer = unit_counts[:, :, None] * unit_counts[:, None, :]
    outer[:, np.arange(q), np.arange(q)] -= unit_counts
    per_unit = (outer / (m - 1.0)[:, None, None]).reshape(len(m), q * q)
    coincidence = (multiplicity @ per_unit).reshape(-1, q, q)
    n_c = coincidence.sum(axis=2)
    n = n_c.sum(axis=1)
    if level == "nominal":
        observed = n - np.trace(coincidence, axis1=1, axis2=2)
        expected = n * n - (n_c * n_c).sum(axis=1)
    else:
        if values is not None:  # the interval level
            pos = np.broadcast_to(values, n_c.shape)
        else:
            pos = np.cumsum(n_c, axis=1) - n_c / 2.0
        gap2 = (pos[:, :, None] - pos[:, None, :]) ** 2
        observed = (coincidence * gap2).sum(axis=(1, 2))
        expected = np.einsum("bc,bk,bck->b", n_c, n_c, gap2)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    alpha[~(expected > 1e-12)] = np.nan
    return alpha


def krippendorff_alpha_ci(ratings: Any, level: str = "nominal", *, n_boot: int = 1000,
                          seed: int = 0, ci: float = 0.95) -> Reliability:
    """Krippendorff's alpha (:func:`core.stats.krippendorff_alpha`, unchanged) with a
    percentile bootstrap interval: units rated by at least two raters are resampled with
    replacement (:func:`bootstrap_indices`) and alpha is recomputed on each resample; resamples
    with no variation are skipped and counted."""
    if not is_level(level):
        raise ValueError(f"level must be one of {', '.join(_LEVELS)}, not {level!r}")
    _check_options(n_boot, ci)
    key = f"krippendorff_alpha_{level}"
    alpha = krippendorff_alpha(ratings, level)
    common: Counts = {"n": alpha.n_units, "n_raters": alpha.n_raters,
                      "n_units_dropped": alpha.n_units_dropped, "ci": ci}
    if not alpha.defined:
        return Reliability(key, None, None, None, None, reason=alpha.reason, **common)
    coded = code_table(ratings, numbers_only=level != "nominal")
    counts = coded.counts()
    counts = counts[counts.sum(axis=1) >= 2]
    used = counts.sum(axis=0) > 0
    counts = counts[:, used]
    values = coded.positions()[used] if level == "interval" else None
    drop_note = (f"{alpha.n_units_dropped} units with fewer than 2 ratings left out"
                 if alpha.n_units_dropped else "")
    if n_boot == 0:
        return Reliability(key, alpha.value, None, None, None,
                           note=_join("no CI (bootstrap switched off)", drop_note), **common)
    n_units = counts.shape[0]
    estimates = []
    # Many distinct values (scores with decimals): the per-unit coincidence tables would not
    # fit in memory, so each resample goes through krippendorff_alpha itself.
    per_resample = counts.shape[1] ** 2 * n_units > _MAX_COINCIDENCE_CELLS
    if per_resample:
        pairable = coded.codes[:, (coded.codes >= 0).sum(axis=0) >= 2]
        table = np.where(pairable >= 0, coded.positions()[np.maximum(pairable, 0)], np.nan)
        if level == "nominal":
            table = np.where(pairable >= 0, pairable.astype(float), np.nan)
    for idx in bootstrap_indices(n_units, n_boot, seed):
        if per_resample:
            estimates.append(np.array([
                np.nan if (a := krippendorff_alpha(table[:, row], level)).value is None
                else a.value for row in idx]))
            continue
        rows = idx.shape[0]
        flat = (idx + np.arange(rows)[:, None] * n_units).ravel()
        multiplicity = np.bincount(flat, minlength=rows * n_units).reshape(rows, n_units)
        estimates.append(_alpha_rows(counts, values, level, multiplicity))
    boot = np.concatenate(estimates)
    boot = boot[~np.isnan(boot)]
    skipped = n_boot - boot.shape[0]
    if boot.shape[0] * 2 < n_boot:
        return Reliability(key, alpha.value, None, None, None, note=_join(
            f"no CI: {skipped} of {n_boot} bootstrap resamples had no variation", drop_note),
            **common)
    tail = (1.0 - ci) / 2.0
    low, high = np.quantile(boot, [tail, 1.0 - tail])
    note = _join(
        f"{_percent(ci)} CI: percentile bootstrap over units ({n_boot} resamples, seed {seed})",
        f"{skipped} resamples skipped (no variation)" if skipped else "",
        drop_note,
    )
    return Reliability(key, alpha.value, _clip(float(low)), _clip(float(high)), None,
                       note=note, **common)
