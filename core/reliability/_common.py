"""What every reliability statistic shares: its result type, its plain-words guide, and the
reading of a raters x units table of ratings into category codes.

A result is *undefined* the way :mod:`core.stats` does it: ``value is None`` with a ``reason``
in plain words, never a NaN that looks like a number.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np

from core.stats import ROW_COLUMNS, _code_ratings, _fmt_value, _join, _percent

__all__ = [
    "GUIDES",
    "RELIABILITY_COLUMNS",
    "Reliability",
    "StatisticGuide",
]


class Counts(TypedDict):
    """What a :class:`Reliability` rests on, the same whether it is defined or not (given to it
    as keywords)."""

    n: int
    n_raters: int
    n_units_dropped: int
    ci: float


@dataclass(frozen=True)
class StatisticGuide:
    """How a statistic is named, what it means in one plain sentence, and when to report it:
    data for the screens and the exports."""

    name: str  #: e.g. "Gwet's AC1"
    meaning: str  #: one plain sentence: what the number says
    advice: str  #: one plain sentence: which to report, when


_KAPPA_SCALE = "1 is perfect agreement, 0 is no better than chance"

#: Every statistic of this package by its key, in the order the screens list them.
GUIDES: dict[str, StatisticGuide] = {
    "percent_agreement": StatisticGuide(
        "Percent agreement",
        "The share of texts on which the raters gave the same answer (with more than two "
        "raters: the share of pairs of raters who agree, averaged over the texts).",
        "Report it beside a chance-corrected number, never alone: it looks high whenever most "
        "texts get the same answer, even from raters who guess.",
    ),
    "cohen_kappa": StatisticGuide(
        "Cohen's kappa",
        f"How much more two raters agree than chance would give them ({_KAPPA_SCALE}).",
        "The usual number for two raters and answers without an order (Yes/No, categories); "
        "when one answer is far more common than the others, report Gwet's AC1 beside it.",
    ),
    "weighted_kappa_linear": StatisticGuide(
        "Weighted kappa (linear)",
        "Cohen's kappa for an ordered scale: a near miss counts as partial agreement, less "
        "the further apart the two marks are.",
        "For two raters on an ordered scale whose steps are all equally important; quadratic "
        "weights are the more common choice in journals.",
    ),
    "weighted_kappa_quadratic": StatisticGuide(
        "Weighted kappa (quadratic)",
        "Cohen's kappa for an ordered scale where a far miss counts much more than a near miss "
        "(the penalty grows with the square of the distance); it is close to the ICC.",
        "The usual number for two raters on an ordered scale such as marks from 1 to 5.",
    ),
    "fleiss_kappa": StatisticGuide(
        "Fleiss' kappa",
        f"Like Cohen's kappa, for three or more raters ({_KAPPA_SCALE}); each text may be "
        "rated by different people.",
        "The usual number for three or more raters and answers without an order; when one "
        "answer is far more common than the others, report Gwet's AC1 beside it.",
    ),
    "gwet_ac1": StatisticGuide(
        "Gwet's AC1",
        f"Agreement beyond chance ({_KAPPA_SCALE}), with chance estimated so that the number "
        "stays stable when one answer is far more common than the others.",
        "Use AC1 for Yes/No questions most texts pass (or most fail): kappa and alpha "
        "collapse there although the raters agree, AC1 does not.",
    ),
    "gwet_ac2_linear": StatisticGuide(
        "Gwet's AC2 (linear weights)",
        "Gwet's AC1 for an ordered scale: a near miss counts as partial agreement, less the "
        "further apart the two marks are.",
        "For an ordered scale where most texts get the same mark and all steps matter "
        "equally.",
    ),
    "gwet_ac2_quadratic": StatisticGuide(
        "Gwet's AC2 (quadratic weights)",
        "Gwet's AC1 for an ordered scale where a far miss counts much more than a near miss.",
        "For an ordered scale where most texts get the same mark: report it beside weighted "
        "kappa, which collapses there.",
    ),
    "icc_2_1": StatisticGuide(
        "ICC(2,1): two-way random effects, absolute agreement, single rater",
        "How closely the marks of one rater, taken from a pool of raters like these, match "
        "the others' marks; a rater who is stricter than the others counts as disagreeing.",
        "Report this when one person (or the judge) will grade alone from now on: it is the "
        "form medical and education journals usually ask for.",
    ),
    "icc_2_k": StatisticGuide(
        "ICC(2,k): two-way random effects, absolute agreement, average of the raters",
        "How reliable the average of the raters' marks is (a stricter rater still counts as "
        "disagreeing).",
        "Report this when the mark you use is the average of all the raters' marks.",
    ),
    "icc_3_1": StatisticGuide(
        "ICC(3,1): two-way mixed effects, consistency, single rater",
        "Whether the raters put the texts in the same order and the same spacing, ignoring "
        "that one rater may be stricter than another by a constant amount.",
        "Report this only when these raters are the only ones that matter and a constant "
        "difference in strictness is acceptable; otherwise report ICC(2,1).",
    ),
    "krippendorff_alpha_nominal": StatisticGuide(
        "Krippendorff's alpha (nominal)",
        f"Agreement beyond chance ({_KAPPA_SCALE}) for any number of raters and missing "
        "ratings, for answers without an order.",
        "Widely reported in content analysis: 0.8 or more for firm conclusions, 0.667 for "
        "tentative ones; it collapses like kappa when one answer dominates.",
    ),
    "krippendorff_alpha_ordinal": StatisticGuide(
        "Krippendorff's alpha (ordinal)",
        f"Agreement beyond chance ({_KAPPA_SCALE}) for any number of raters and missing "
        "ratings, on an ordered scale (only the order of the marks counts).",
        "For several raters on an ordered scale with missing ratings: 0.8 or more for firm "
        "conclusions, 0.667 for tentative ones.",
    ),
    "krippendorff_alpha_interval": StatisticGuide(
        "Krippendorff's alpha (interval)",
        f"Agreement beyond chance ({_KAPPA_SCALE}) for any number of raters and missing "
        "ratings, on a numeric scale (the size of a difference counts).",
        "For several raters on a numeric scale with missing ratings: 0.8 or more for firm "
        "conclusions, 0.667 for tentative ones.",
    ),
}

#: The columns of :meth:`Reliability.to_row`: the agreement sheet's columns
#: (:data:`core.stats.ROW_COLUMNS`) plus the plain-words meaning and advice.
RELIABILITY_COLUMNS: tuple[str, ...] = (*ROW_COLUMNS, "meaning", "which_to_report")


@dataclass(frozen=True)
class Reliability:
    """One agreement or reliability statistic with its confidence interval and its n.

    ``value is None`` means undefined and ``reason`` says why. ``ci_low``/``ci_high`` may be
    ``None`` on a defined value (``note`` says why). ``note`` says how the interval was
    computed and how missing ratings were handled. ``n`` is the number of units (texts) the
    value rests on: those rated by at least two raters (for ICC: by every rater).
    """

    statistic: str  #: key of :data:`GUIDES`
    value: float | None
    ci_low: float | None
    ci_high: float | None
    se: float | None  #: standard error behind the interval (None for a resampled interval)
    n: int
    n_raters: int
    n_units_dropped: int = 0  #: units left out (too few ratings), counted in ``note``
    ci: float = 0.95
    reason: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if self.statistic not in GUIDES:
            raise ValueError(f"unknown reliability statistic {self.statistic!r}")
        if self.value is None and not self.reason:
            raise ValueError("an undefined statistic needs a reason")

    @property
    def defined(self) -> bool:
        return self.value is not None

    @property
    def guide(self) -> StatisticGuide:
        return GUIDES[self.statistic]

    @property
    def name(self) -> str:
        return self.guide.name

    @property
    def meaning(self) -> str:
        return self.guide.meaning

    @property
    def advice(self) -> str:
        return self.guide.advice

    @property
    def half_width(self) -> float | None:
        """Half the interval's width (the "+-" of the interval), None without an interval."""
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_high - self.ci_low) / 2.0

    def summary(self) -> str:
        """One line: "Gwet's AC1 = 0.87 (95% CI 0.79 to 0.95, 40 texts, 3 raters)"."""
        if not self.defined:
            return f"{self.name}: not computed ({self.reason})."
        interval = (
            f"{_percent(self.ci)} CI {self.ci_low:.2f} to {self.ci_high:.2f}, "
            if self.ci_low is not None and self.ci_high is not None else "no interval, "
        )
        return f"{self.name} = {self.value:.2f} ({interval}{self.n} texts, {self.n_raters} raters)."

    def as_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "name": self.name,
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "se": self.se,
            "n": self.n,
            "n_raters": self.n_raters,
            "n_units_dropped": self.n_units_dropped,
            "ci": self.ci,
            "reason": self.reason,
            "note": self.note,
            "meaning": self.meaning,
            "which_to_report": self.advice,
        }

    def to_row(self, *, kind: str = "agreement among raters", comparison: str = "") -> dict:
        """One export row (:data:`RELIABILITY_COLUMNS`); undefined: ``value`` None and the
        reason in ``note``."""
        note = self.note if self.defined else _join(f"Not computed: {self.reason}", self.note)
        return {
            "comparison": comparison,
            "statistic": self.name,
            "kind": kind,
            "value": self.value,
            "p_value": None,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
            "note": note,
            "meaning": self.meaning,
            "which_to_report": self.advice,
        }

    def to_rows(self, comparison: str = "") -> list[dict[str, Any]]:
        """For :func:`core.stats.agreement_rows`: this statistic as a one-row list."""
        return [self.to_row(comparison=comparison)]


# --------------------------------------------------------------------------------------------
# Reading ratings
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Coded:
    """A raters x units table as category codes (-1 = missing) over the scale's categories."""

    codes: np.ndarray  #: raters x units, int
    categories: list[Any]  #: the scale, in order (numbers sorted unless given)
    numeric: bool  #: every category is a number

    @property
    def n_raters(self) -> int:
        return int(self.codes.shape[0])

    @property
    def q(self) -> int:
        return len(self.categories)

    def counts(self) -> np.ndarray:
        """Units x categories: how many raters gave each answer to each unit (all units)."""
        n_units = self.codes.shape[1]
        out = np.zeros((n_units, self.q), dtype=float)
        raters, units = np.nonzero(self.codes >= 0)
        np.add.at(out, (units, self.codes[raters, units]), 1.0)
        return out

    def positions(self) -> np.ndarray:
        """Where each category sits on the scale: its value when numeric, else its rank."""
        if self.numeric:
            return np.array([float(c) for c in self.categories])
        return np.arange(self.q, dtype=float)


def _category_key(value: Any) -> Any:
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            return text
        return number if math.isfinite(number) else text
    return value


def code_table(data: Any, *, categories: Sequence[Any] | None = None,
               numbers_only: bool = False, what: str = "this statistic") -> Coded:
    """``data`` (rows = raters, columns = units; None, NaN and empty text missing) as codes.

    ``categories`` is the full scale in order (e.g. ``["No", "Yes"]`` or ``[1, 2, 3, 4, 5]``):
    give it so that answers nobody used still count (Gwet's AC1 needs the number of possible
    answers; weights need the scale's ends). A rating outside it is an error naming the rater
    and unit. ``numbers_only``: every rating must be a number (ICC, interval scales).
    """
    level = "interval" if numbers_only else "nominal"
    try:
        codes, observed = _code_ratings(data, level)
    except ValueError as exc:
        if numbers_only:
            raise ValueError(f"{exc} ({what} needs numbers)") from None
        raise
    if categories is None:
        numeric = all(isinstance(c, float) for c in observed)
        return Coded(codes, list(observed), numeric)

    scale = [_category_key(c) for c in categories]
    if len(set(scale)) != len(scale):
        raise ValueError(f"The scale's answers must all differ (got {list(categories)!r}).")
    position = {c: i for i, c in enumerate(scale)}
    remap = np.full(len(observed), -1, dtype=np.int64)
    for i, value in enumerate(observed):
        key = _category_key(value)
        if key not in position:
            rater, unit = (int(v[0]) for v in np.nonzero(codes == i))
            raise ValueError(
                f"Rater {rater + 1}, unit {unit + 1}: {_fmt_value(value)!s} is not one of the "
                f"scale's answers ({', '.join(_fmt_value(c) for c in categories)})."
            )
        remap[i] = position[key]
    new_codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
    numeric = all(isinstance(c, float) for c in scale)
    return Coded(new_codes, list(categories), numeric)


def agreement_weights(coded: Coded, kind: str) -> np.ndarray:
    """q x q agreement weights: identity; "linear" 1 - |a - b| / (max - min); "quadratic"
    1 - (a - b)^2 / (max - min)^2, over the categories' places on the scale."""
    q = coded.q
    if kind == "identity" or q < 2:
        return np.eye(q)
    pos = coded.positions()
    span = float(pos.max() - pos.min())
    gap = np.abs(pos[:, None] - pos[None, :]) / span
    if kind == "linear":
        return 1.0 - gap
    if kind == "quadratic":
        return 1.0 - gap * gap
    raise ValueError(f"weights must be 'linear' or 'quadratic' (got {kind!r})")


def missing_note(n_raters: int, per_unit: np.ndarray, *, singles_used: bool) -> str:
    """How the units with missing ratings were used, in plain words ("" when none)."""
    partial = int(np.count_nonzero((per_unit >= 2) & (per_unit < n_raters)))
    single = int(np.count_nonzero(per_unit == 1))
    parts = []
    if partial:
        parts.append(f"{partial} units rated by only some of the raters: used with the ratings "
                     "they have")
    if single:
        tail = (" (they still count for how often each answer is given)" if singles_used
                else "")
        parts.append(f"{single} units with a single rating left out of the agreement{tail}")
    return "; ".join(parts)
