"""The judge's mean score corrected by a random sample of people's grades: prediction-powered
inference (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, Science 382, 2023).

The judge scored all N items; people graded n of them drawn at random. The corrected mean is

    judge mean over all N items  +  mean of (human - judge) over the n graded items,

which is unbiased whatever the judge's bias, because the second part measures that bias on a
random sample. Its variance adds both parts' variances and their covariance (the graded items
are among the N): var = s_judge^2 / N + s_diff^2 / n + 2 cov(judge, diff) / N, with the
sample (n - 1) variances; the interval is normal. With every item graded it is the plain mean
of the grades. Beside it: the interval from the graded sample alone (the mean of the n grades),
and how much narrower the corrected one is.

Only grades on the *random* sample may correct the mean: grades given to items picked because
the judge scored them high, low or in dispute would bias it. Pass ``random_sample`` to say
which graded items were drawn at random (the others are left out and counted).
For groups or conditions, call it once per group on that group's items.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
from scipy import stats as sps

from core.stats import _numeric_vector, _percent

__all__ = ["MIN_GRADED", "SMALL_SAMPLE", "CorrectedMean", "corrected_mean"]

#: Fewest randomly graded items for a corrected mean at all.
MIN_GRADED = 10
#: Below this many randomly graded items the normal interval may be too narrow: said plainly.
SMALL_SAMPLE = 30


class _Counts(TypedDict):
    """What a :class:`CorrectedMean` rests on, the same whether it is defined or not."""

    n_items: int
    n_graded: int
    n_graded_not_random: int
    ci: float


@dataclass(frozen=True)
class CorrectedMean:
    """The judge's raw mean, the corrected mean and the graded-sample-only mean, each with its
    interval. ``corrected is None`` means undefined and ``reason`` says why."""

    judge_mean: float | None  #: over all N items the judge scored
    judge_ci: tuple[float, float] | None  #: the raw mean's naive interval (ignores the bias)
    corrected: float | None
    corrected_ci: tuple[float, float] | None
    sample_mean: float | None  #: mean of the people's grades on the random sample
    sample_ci: tuple[float, float] | None
    n_items: int  #: N: items the judge scored
    n_graded: int  #: n: randomly graded items used
    n_graded_not_random: int = 0  #: graded outside the random sample: left out
    ci: float = 0.95
    reason: str = ""
    warning: str = ""  #: e.g. the sample is small; "" when none

    @property
    def defined(self) -> bool:
        return self.corrected is not None

    @property
    def narrower_by(self) -> float | None:
        """How much narrower the corrected interval is than the sample-only one (0.3 = 30%)."""
        if self.corrected_ci is None or self.sample_ci is None:
            return None
        width = self.sample_ci[1] - self.sample_ci[0]
        if width <= 0:
            return None
        return 1.0 - (self.corrected_ci[1] - self.corrected_ci[0]) / width

    def sentence(self, what: str = "mean score") -> str:
        """Plain words for the screen: the corrected mean, its interval, the comparison."""
        if self.corrected is None or self.corrected_ci is None:  # not defined
            return f"No corrected {what} yet: {self.reason}."
        low, high = self.corrected_ci
        text = (f"{what[:1].upper() + what[1:]} corrected by your grades: {self.corrected:.2f} ({_percent(self.ci)} CI {low:.2f} to "
                f"{high:.2f}), from the judge's scores on {self.n_items} items and your grades "
                f"on {self.n_graded} items drawn at random; the judge alone says "
                f"{self.judge_mean:.2f}.")
        gain = self.narrower_by
        if self.n_graded >= self.n_items:
            text += " Every item is graded, so it is the mean of your grades."
        elif gain is not None and gain >= 0.005:  # below half a percent: "0% narrower"
            text += (f" The interval is {gain * 100:.0f}% narrower than from your grades "
                     "alone.")
        elif gain is not None:
            text += (" The judge does not help here: your grades alone give an interval as "
                     "narrow or narrower.")
        if self.warning:
            text += f" {self.warning}"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge_mean": self.judge_mean, "judge_ci": self.judge_ci,
            "corrected": self.corrected, "corrected_ci": self.corrected_ci,
            "sample_mean": self.sample_mean, "sample_ci": self.sample_ci,
            "n_items": self.n_items, "n_graded": self.n_graded,
            "n_graded_not_random": self.n_graded_not_random, "narrower_by": self.narrower_by,
            "ci": self.ci, "reason": self.reason, "warning": self.warning,
        }


def _interval(centre: float, var: float, z: float) -> tuple[float, float]:
    half = z * math.sqrt(max(var, 0.0))
    return centre - half, centre + half


def corrected_mean(judge: Sequence[Any] | np.ndarray, human: Sequence[Any] | np.ndarray, *,
                   random_sample: Sequence[bool] | np.ndarray | None = None,
                   ci: float = 0.95) -> CorrectedMean:
    """The corrected mean of one set of items (see the module).

    ``judge``: the judge's score for every item (a missing score leaves the item out).
    ``human``: the people's grade for each item, None/NaN where not graded.
    ``random_sample``: True for the items drawn at random to be graded (as
    :func:`core.reliability.grading_order.draw_random_sample` records them); None means every
    graded item was drawn at random.
    """
    if not (0.0 < float(ci) < 1.0):
        raise ValueError(f"ci must be between 0 and 1, e.g. 0.95 (got {ci!r})")
    f = _numeric_vector(judge, "the judge's scores")
    y = _numeric_vector(human, "the people's grades")
    if f.shape[0] != y.shape[0]:
        raise ValueError(f"The judge scored {f.shape[0]} items but {y.shape[0]} grades were "
                         "given; give one grade (or an empty cell) per item.")
    if random_sample is None:
        drawn = np.ones(f.shape[0], dtype=bool)
    else:
        drawn = np.asarray(random_sample, dtype=bool)
        if drawn.shape != f.shape:
            raise ValueError("random_sample must say for every item whether it was drawn.")
    scored = ~np.isnan(f)
    f, y, drawn = f[scored], y[scored], drawn[scored]
    graded = ~np.isnan(y)
    use = graded & drawn
    big_n, n = int(f.shape[0]), int(use.sum())
    not_random = int(np.count_nonzero(graded & ~drawn))
    z = float(sps.norm.ppf(1.0 - (1.0 - ci) / 2.0))
    judge_mean = float(f.mean()) if big_n else None
    judge_ci = (_interval(judge_mean, float(f.var(ddof=1)) / big_n, z)
                if judge_mean is not None and big_n >= 2 else None)
    common: _Counts = {"n_items": big_n, "n_graded": n, "n_graded_not_random": not_random,
                       "ci": ci}
    if judge_mean is None or n < MIN_GRADED:  # (no item scored: none graded either)
        left = (f"; {not_random} grades on items not drawn at random cannot be used"
                if not_random else "")
        return CorrectedMean(judge_mean, judge_ci, None, None, None, None, reason=(
            f"too few items graded at random: {n}, at least {MIN_GRADED} are needed (draw a "
            f"random sample of at least {SMALL_SAMPLE} items and grade them all){left}"),
            **common)
    diff = y[use] - f[use]
    s_f2 = float(f.var(ddof=1))
    s_d2 = float(diff.var(ddof=1))
    cov = float(np.cov(f[use], diff, ddof=1)[0, 1])
    corrected = judge_mean + float(diff.mean())
    var = s_f2 / big_n + s_d2 / n + 2.0 * cov / big_n
    sample = y[use]
    sample_mean = float(sample.mean())
    warnings = []
    if n < SMALL_SAMPLE:
        warnings.append(f"Only {n} items were graded at random: with fewer than {SMALL_SAMPLE} "
                        "the interval may be too narrow; grade more to be sure.")
    if not_random:
        warnings.append(f"{not_random} graded items were not part of the random sample and "
                        "were not used for the correction (they were picked, not drawn).")
    return CorrectedMean(
        judge_mean, judge_ci, corrected, _interval(corrected, var, z), sample_mean,
        _interval(sample_mean, float(sample.var(ddof=1)) / n, z), warning=" ".join(warnings),
        **common)
