"""Intraclass correlations in the forms reviewers name (Shrout & Fleiss 1979; McGraw & Wong
1996), from the two-way analysis of variance of a units x raters table of numeric marks.

* ICC(2,1) - two-way random effects, absolute agreement, single rater;
* ICC(2,k) - two-way random effects, absolute agreement, average of the k raters;
* ICC(3,1) - two-way mixed effects, consistency, single rater.

Missing ratings: the ANOVA needs every rater on every unit, so only the units every rater
marked are used (listwise, as R's ``psych::ICC`` does); the others are counted in the note.
Intervals: the F-distribution bounds of Shrout & Fleiss (1979), with Satterthwaite's degrees
of freedom for ICC(2,1) and its Spearman-Brown transform for ICC(2,k), as ``psych::ICC``.
"""

from __future__ import annotations

import math
from typing import Any

from scipy import stats as sps

from core.reliability._common import Counts, Reliability, code_table
from core.stats import _join, _percent

__all__ = ["ICC_FORMS", "icc"]

#: The forms :func:`icc` computes, by key.
ICC_FORMS: tuple[str, ...] = ("icc_2_1", "icc_2_k", "icc_3_1")


def _f(q: float, df1: float, df2: float) -> float:
    return float(sps.f.ppf(q, df1, df2))


def icc(ratings: Any, form: str = "icc_2_1", *, ci: float = 0.95) -> Reliability:
    """ICC ``form`` ("icc_2_1", "icc_2_k" or "icc_3_1") of ``ratings`` (rows = raters, columns
    = units, numbers; missing allowed, see the module's note)."""
    if form not in ICC_FORMS:
        raise ValueError(f"form must be one of {', '.join(ICC_FORMS)} (got {form!r})")
    if not (0.0 < float(ci) < 1.0):
        raise ValueError(f"ci must be between 0 and 1, e.g. 0.95 (got {ci!r})")
    coded = code_table(ratings, numbers_only=True, what="the ICC")
    k = coded.n_raters
    complete = (coded.codes >= 0).all(axis=0)
    n = int(complete.sum())
    dropped = int(coded.codes.shape[1] - n)
    common: Counts = {"n": n, "n_raters": k, "n_units_dropped": dropped, "ci": ci}

    def undefined(reason: str) -> Reliability:
        return Reliability(form, None, None, None, None, reason=reason, **common)

    if k < 2:
        return undefined(f"the ICC needs at least 2 raters (found {k})")
    if n < 2:
        return undefined(f"fewer than 2 units were marked by every rater (found {n}); the ICC "
                         "uses only units every rater marked")
    values = coded.positions()
    y = values[coded.codes[:, complete]].T  # units x raters
    grand = y.mean()
    ss_rows = k * float(((y.mean(axis=1) - grand) ** 2).sum())
    ss_cols = n * float(((y.mean(axis=0) - grand) ** 2).sum())
    ss_total = float(((y - grand) ** 2).sum())
    ss_error = max(ss_total - ss_rows - ss_cols, 0.0)
    df_rows, df_cols, df_error = n - 1, k - 1, (n - 1) * (k - 1)
    msr, msc, mse = ss_rows / df_rows, ss_cols / df_cols, ss_error / df_error
    if ss_total <= 0.0:
        return undefined(f"every mark is the same ({y.flat[0]:g}), so there is no variation "
                         "to measure agreement against")
    alpha = 1.0 - ci
    if form == "icc_3_1":
        den = msr + (k - 1) * mse
        if den <= 0:
            return undefined("the units do not differ at all, so consistency is undefined")
        value = (msr - mse) / den
        if mse > 0:
            f_obs = msr / mse
            f_low = f_obs / _f(1 - alpha / 2, df_rows, df_error)
            f_up = f_obs * _f(1 - alpha / 2, df_error, df_rows)
            low, high = (f_low - 1) / (f_low + k - 1), (f_up - 1) / (f_up + k - 1)
        else:
            low = high = 1.0
        how = f"F-distribution bounds of Shrout & Fleiss (1979), F({df_rows}, {df_error})"
    else:
        den1 = msr + (k - 1) * mse + k * (msc - mse) / n
        if den1 <= 0:
            return undefined("the units do not differ at all, so agreement is undefined")
        icc21 = (msr - mse) / den1
        if mse > 0 and icc21 < 1.0:
            fj = msc / mse
            vn = (k - 1) * (n - 1) * (k * icc21 * fj + n * (1 + (k - 1) * icc21) - k * icc21) ** 2
            vd = ((n - 1) * k * k * icc21 * icc21 * fj * fj
                  + (n * (1 + (k - 1) * icc21) - k * icc21) ** 2)
            v = vn / vd
            f_up = _f(1 - alpha / 2, n - 1, v)
            f_low = _f(1 - alpha / 2, v, n - 1)
            base = k * msc + (k * n - k - n) * mse
            low = n * (msr - f_up * mse) / (f_up * base + n * msr)
            high = n * (f_low * msr - mse) / (base + n * f_low * msr)
            how = (f"F-distribution bounds of Shrout & Fleiss (1979) with "
                   f"Satterthwaite's {v:.1f} degrees of freedom")
        else:
            low = high = 1.0
            how = "no spread left once units and raters are accounted for"
        if form == "icc_2_1":
            value = icc21
        else:
            value = (msr - mse) / (msr + (msc - mse) / n)
            low = low * k / (1 + low * (k - 1))
            high = high * k / (1 + high * (k - 1))
            how += f"; for the average of {k} raters: Spearman-Brown of the single-rater bounds"
    note = _join(
        f"{_percent(ci)} CI: {how}",
        f"{dropped} units not marked by every rater left out" if dropped else "",
    )
    if not all(math.isfinite(x) for x in (value, low, high)):
        return undefined("the analysis of variance gave no finite value")
    return Reliability(form, float(value), float(max(-1.0, low)), float(min(1.0, high)), None,
                       note=note, **common)
