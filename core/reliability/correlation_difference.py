"""Zou's (2007) confidence interval for the difference of two dependent, overlapping
correlations: judge A vs people and judge B vs people on the same units.

Zou, G. Y. (2007). Toward using confidence intervals to compare correlations. Psychological
Methods 12(4), 399-413. Each correlation gets its own Fisher-z interval; the two are combined
with the correlation between the two estimates (which share the people's ratings):

    L = r1 - r2 - sqrt((r1 - l1)^2 + (u2 - r2)^2 - 2 c (r1 - l1)(u2 - r2))
    U = r1 - r2 + sqrt((u1 - r1)^2 + (r2 - l2)^2 - 2 c (u1 - r1)(r2 - l2))
    c = ((r12 - r1 r2 / 2)(1 - r1^2 - r2^2 - r12^2) + r12^3) / ((1 - r1^2)(1 - r2^2))

with r1 = corr(A, people), r2 = corr(B, people), r12 = corr(A, B). It is analytic (no
resampling), so it sits beside :func:`core.stats.paired_correlation_difference`'s paired
bootstrap and returns the same :class:`core.stats.PairedDifference`. Pearson uses the Fisher-z
standard error 1/sqrt(n - 3); Spearman the Bonett & Wright (2000) one, sqrt((1 + r^2/2)/(n - 3)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats as sps

from core.stats import (
    MIN_PAIRED_UNITS,
    PairedDifference,
    Resampling,
    _numeric_vector,
    _percent,
)

__all__ = ["zou_difference", "zou_interval"]

_METHODS = ("pearson", "spearman")


def zou_interval(r1: float, r2: float, r12: float, n: int, *, method: str = "pearson",
                 ci: float = 0.95) -> tuple[float, float]:
    """Zou's interval for rho1 - rho2 from the three correlations and n (see the module)."""
    if method not in _METHODS:
        raise ValueError(f"method must be 'pearson' or 'spearman' (got {method!r})")
    z = float(sps.norm.ppf(1.0 - (1.0 - ci) / 2.0))

    def limits(r: float) -> tuple[float, float]:
        extra = 1.0 + r * r / 2.0 if method == "spearman" else 1.0
        se = math.sqrt(extra / (n - 3))
        centre = math.atanh(max(-1 + 1e-15, min(1 - 1e-15, r)))
        return math.tanh(centre - z * se), math.tanh(centre + z * se)

    l1, u1 = limits(r1)
    l2, u2 = limits(r2)
    c = ((r12 - r1 * r2 / 2.0) * (1.0 - r1 * r1 - r2 * r2 - r12 * r12) + r12 ** 3) / (
        (1.0 - r1 * r1) * (1.0 - r2 * r2))
    diff = r1 - r2
    low = diff - math.sqrt(max(0.0, (r1 - l1) ** 2 + (u2 - r2) ** 2
                               - 2.0 * c * (r1 - l1) * (u2 - r2)))
    high = diff + math.sqrt(max(0.0, (u1 - r1) ** 2 + (r2 - l2) ** 2
                                - 2.0 * c * (u1 - r1) * (r2 - l2)))
    return low, high


def _corr(x: np.ndarray, y: np.ndarray, method: str) -> float:
    if method == "spearman":
        return float(sps.spearmanr(x, y).statistic)
    return float(sps.pearsonr(x, y).statistic)


def zou_difference(a: Sequence[Any] | np.ndarray, b: Sequence[Any] | np.ndarray,
                   human: Sequence[Any] | np.ndarray, *, method: str = "spearman",
                   ci: float = 0.95) -> PairedDifference:
    """Is judge (or condition) ``a`` closer to the people's ratings than ``b``? Zou's interval.

    Paired one to one like :func:`core.stats.paired_correlation_difference`: a unit missing in
    any of the three is left out and counted. Below :data:`core.stats.MIN_PAIRED_UNITS` units,
    or when a side is constant or perfectly correlated, the result is undefined with a reason.
    ``p_value`` is None: the interval is the result (it excludes 0 or it does not).
    """
    if method not in _METHODS:
        raise ValueError("Zou's interval is for Pearson or Spearman correlations "
                         f"(got {method!r}); use the paired bootstrap for Kendall's tau")
    if not (0.0 < float(ci) < 1.0):
        raise ValueError(f"ci must be between 0 and 1, e.g. 0.95 (got {ci!r})")
    av = _numeric_vector(a, "the first judge's scores")
    bv = _numeric_vector(b, "the second judge's scores")
    hv = _numeric_vector(human, "the human ratings")
    if not (av.shape[0] == bv.shape[0] == hv.shape[0]):
        raise ValueError(
            f"The two judges and the human ratings must be paired one to one (got "
            f"{av.shape[0]}, {bv.shape[0]} and {hv.shape[0]} values).")
    keep = ~(np.isnan(av) | np.isnan(bv) | np.isnan(hv))
    n_dropped = int(np.count_nonzero(~keep))
    av, bv, hv = av[keep], bv[keep], hv[keep]
    n = int(av.shape[0])
    common: Resampling = {"n_dropped": n_dropped, "ci": ci, "n_boot": 0, "seed": 0}

    def undefined(reason: str) -> PairedDifference:
        return PairedDifference(method, None, None, None, None, None, None, n, "pairs",
                                reason=reason, **common)

    if n < MIN_PAIRED_UNITS:
        return undefined(f"not enough units: {n} pairs, at least {MIN_PAIRED_UNITS} needed")
    for values, name in ((av, "the first judge's scores"), (bv, "the second judge's scores"),
                         (hv, "the human ratings")):
        if np.all(values == values[0]):
            return undefined(f"{name} are all the same, so no correlation can be computed")
    r1, r2, r12 = _corr(av, hv, method), _corr(bv, hv, method), _corr(av, bv, method)
    if max(abs(r1), abs(r2)) >= 1.0 - 1e-12:
        return undefined("a judge's scores follow the human ratings perfectly, so Zou's "
                         "interval (through Fisher's z) cannot be formed")
    low, high = zou_interval(r1, r2, r12, n, method=method, ci=ci)
    se = "Fisher z" if method == "pearson" else "Fisher z with Bonett & Wright's SE"
    note = (f"{_percent(ci)} CI: Zou (2007) for two correlations sharing the human ratings "
            f"({se}; the two judges correlate {r12:.2f}); no resampling, no p-value")
    return PairedDifference(method, r1, r2, r1 - r2, float(low), float(high), None, n, "pairs",
                            note=note, **common)
