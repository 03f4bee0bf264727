"""Agreement statistics: correlations with human ratings and Krippendorff's alpha.

Every method's agreement screen uses this module. Three kinds of result:

* :func:`correlations` - Pearson r, Spearman rho and Kendall tau-b between two paired lists of
  scores (say, a method's scores and human ratings), pooled over all pairs, each with a two-sided
  p-value (as computed by ``scipy.stats``) and a percentile bootstrap confidence interval
  (resampling pairs with a fixed seed, so the same inputs always give the same interval).
* :func:`grouped_correlations` - the per-group averaged correlation (G-Eval's and InteractEval's
  "summary-level", i.e. per-source-document averaged): the three coefficients inside each group,
  averaged over the groups where they are defined.
* :func:`krippendorff_alpha` - agreement among several raters (nominal, ordinal or interval
  level), our own implementation through the coincidence matrix of Krippendorff (2011),
  "Computing Krippendorff's Alpha-Reliability".
* :func:`paired_correlation_difference` - is condition A closer to the human ratings than
  condition B? The difference of their correlations with a paired bootstrap CI and p-value over
  the units both scored (every method's comparison view uses this one).
* :func:`repeat_stability` - the same calls made N times (repeat runs): per unit the spread of
  the scores, and Krippendorff's alpha (interval) with the repeats as raters.
* :func:`binary_agreement` - a judge's Yes/No answers against a person's: Cohen's kappa, MCC and
  the false-pass and false-fail rates.
* :func:`judge_spread` - does the judge tell the texts apart at all? (most texts with the same
  answers or score, a question answered alike for every text, scores that follow the texts'
  length); :func:`word_count` is the length of the baseline put beside every agreement.

Nothing here is silent. A missing or non-numeric value is dropped and counted. A statistic that
cannot be computed (fewer than 3 pairs, a constant column, a single rating value) is returned as
*undefined*: ``value is None`` plus a plain-language ``reason``, never a NaN that looks like a
number. Every result can be turned into rows for an Excel "Agreement" sheet (:data:`ROW_COLUMNS`,
``to_rows()``, :func:`agreement_rows`).

    report = correlations(method_scores, human_scores)
    report.spearman.value, report.spearman.p_value, report.spearman.ci_low
    report.spearman.defined or report.spearman.reason
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, TypeGuard, get_args

import numpy as np
from scipy import sparse
from scipy import stats as sps

__all__ = [
    "GROUPED_LABEL",
    "LENGTH_NAME",
    "METHODS",
    "MIN_PAIRED_UNITS",
    "POOLED_LABEL",
    "ROW_COLUMNS",
    "SMALL_DIFFERENCE",
    "STABILITY_THRESHOLD",
    "STATISTIC_NAMES",
    "AlphaResult",
    "BinaryAgreement",
    "ConstantQuestion",
    "Correlation",
    "CorrelationReport",
    "GroupCorrelation",
    "GroupedCorrelationReport",
    "JudgeSpread",
    "Level",
    "PairedDifference",
    "RepeatStability",
    "Resampling",
    "UnitSpread",
    "agreement_rows",
    "binary_agreement",
    "correlations",
    "format_p",
    "grouped_correlations",
    "is_level",
    "judge_spread",
    "krippendorff_alpha",
    "length_sentence",
    "paired_correlation_difference",
    "plain_agreement",
    "repeat_stability",
    "stability_columns",
    "stability_rows",
    "strength",
    "word_count",
]

#: The correlation coefficients we compute, in the order the agreement screens show them
#: (Spearman first: it is the headline of MAJ-Eval, G-Eval and InteractEval).
METHODS: tuple[str, ...] = ("spearman", "kendall", "pearson")

#: How each coefficient is named in tables and exports.
STATISTIC_NAMES: dict[str, str] = {
    "pearson": "Pearson r",
    "spearman": "Spearman rho",
    "kendall": "Kendall tau-b",
}

#: Default label of :func:`correlations` (CheckEval's code calls this "sample-level").
POOLED_LABEL = "pooled over all texts"
#: Default label of :func:`grouped_correlations` (G-Eval's and InteractEval's "summary-level").
GROUPED_LABEL = "per-source-document averaged"

#: The columns of every row produced by ``to_rows()`` and :func:`agreement_rows`.
ROW_COLUMNS: tuple[str, ...] = (
    "comparison",
    "statistic",
    "kind",
    "value",
    "p_value",
    "ci_low",
    "ci_high",
    "n",
    "note",
)

Level = Literal["nominal", "ordinal", "interval"]
_LEVELS: tuple[Level, ...] = get_args(Level)


def is_level(value: object) -> TypeGuard[Level]:
    """True for a level of measurement :func:`krippendorff_alpha` knows (see :data:`Level`)."""
    return value in _LEVELS


#: Fewest pairs for a pooled correlation, fewest pairs inside a group, fewest groups for a CI.
_MIN_PAIRS = 3
_MIN_GROUP_PAIRS = 2
_MIN_GROUPS_FOR_CI = 3

_DEFAULT_X_NAME = "the method's scores"
_DEFAULT_Y_NAME = "the human scores"


# --------------------------------------------------------------------------------------------
# Result types
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Correlation:
    """One correlation coefficient with its p-value and confidence interval.

    ``value is None`` means undefined; ``reason`` then says why in plain words. ``p_value`` or the
    CI may also be ``None`` on a defined value (an averaged correlation has no p-value; too few
    usable bootstrap resamples give no CI): ``note`` says why.
    """

    method: str  #: "pearson", "spearman" or "kendall"
    value: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int  #: pairs the value is computed from
    reason: str = ""  #: why the value is undefined ("" when defined)
    note: str = ""  #: how the p-value and CI were obtained, or why they are missing

    def __post_init__(self) -> None:
        if self.method not in STATISTIC_NAMES:
            raise ValueError(f"unknown correlation method {self.method!r}")
        if self.value is None and not self.reason:
            raise ValueError("an undefined correlation needs a reason")

    @property
    def defined(self) -> bool:
        return self.value is not None

    @property
    def statistic(self) -> str:
        """The coefficient's display name, e.g. "Spearman rho"."""
        return STATISTIC_NAMES[self.method]

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "statistic": self.statistic,
            "value": self.value,
            "p_value": self.p_value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
            "reason": self.reason,
            "note": self.note,
        }

    def to_row(self, *, kind: str = "", comparison: str = "") -> dict[str, Any]:
        """One export row (:data:`ROW_COLUMNS`); an undefined value has ``value`` None and the
        reason in ``note``."""
        if self.defined:
            note = self.note
        else:
            note = f"Not computed: {self.reason}"
        return {
            "comparison": comparison,
            "statistic": self.statistic,
            "kind": kind,
            "value": self.value,
            "p_value": self.p_value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
            "note": note,
        }


class _ThreeCorrelations:
    """What both correlation reports share: their Pearson, Spearman and Kendall coefficients
    (fields ``pearson``, ``spearman``, ``kendall``), ``label`` and ``n_dropped``."""

    label: str  # declared for type checkers; the dataclasses below hold the fields
    n_dropped: int

    @property
    def correlations(self) -> tuple[Correlation, ...]:
        """The three coefficients in display order (:data:`METHODS`)."""
        return tuple(getattr(self, m) for m in METHODS)

    def __getitem__(self, method: str) -> Correlation:
        if method not in STATISTIC_NAMES:
            raise KeyError(method)
        return getattr(self, method)

    def to_rows(self, comparison: str = "") -> list[dict[str, Any]]:
        """Rows for an Excel "Agreement" sheet, one per coefficient (:data:`ROW_COLUMNS`)."""
        rows = []
        for corr in self.correlations:
            row = corr.to_row(kind=self.label, comparison=comparison)
            if self.n_dropped:
                row["note"] = _join(row["note"], _dropped_note(self.n_dropped))
            rows.append(row)
        return rows


@dataclass(frozen=True)
class CorrelationReport(_ThreeCorrelations):
    """Pearson, Spearman and Kendall tau-b between two paired score lists, pooled over pairs."""

    pearson: Correlation
    spearman: Correlation
    kendall: Correlation
    n: int  #: pairs used
    n_dropped: int  #: pairs left out because either value was missing or not a number
    dropped_indices: tuple[int, ...]  #: 0-based positions of the dropped pairs
    label: str = POOLED_LABEL
    ci: float = 0.95
    n_boot: int = 1000
    seed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "n": self.n,
            "n_dropped": self.n_dropped,
            "dropped_indices": list(self.dropped_indices),
            "ci": self.ci,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "statistics": {c.method: c.as_dict() for c in self.correlations},
        }


@dataclass(frozen=True)
class GroupCorrelation:
    """The three coefficients inside one group (one source document), or why it was skipped."""

    group: Hashable
    n: int
    pearson: float | None
    spearman: float | None
    kendall: float | None
    reason: str = ""  #: why the group was skipped ("" when used)
    skip_kind: str = ""  #: short category of ``reason`` used for counting, "" when used

    @property
    def used(self) -> bool:
        return not self.reason


@dataclass(frozen=True)
class GroupedCorrelationReport(_ThreeCorrelations):
    """Per-group averaged correlations (G-Eval's "summary-level").

    Each coefficient is the plain mean of the per-group coefficients over the groups used.
    It has **no p-value**: the per-group values are neither independent draws of one test
    statistic nor equally precise, so no single standard test applies; ``p_value`` is ``None``
    and ``note`` says so. The CI is a percentile bootstrap over *groups* (resampling whole
    groups with a fixed seed and averaging their coefficients), given when at least 3 groups
    were used.
    """

    pearson: Correlation
    spearman: Correlation
    kendall: Correlation
    groups: tuple[GroupCorrelation, ...]  #: every group in order of first appearance
    n: int  #: pairs inside the groups used
    n_total: int  #: usable pairs in all groups (used and skipped)
    n_dropped: int  #: pairs left out: missing/non-numeric score or no group
    dropped_indices: tuple[int, ...]
    skip_counts: tuple[tuple[str, int], ...]  #: (reason category, number of groups)
    label: str = GROUPED_LABEL
    ci: float = 0.95
    n_boot: int = 1000
    seed: int = 0

    @property
    def used_groups(self) -> tuple[GroupCorrelation, ...]:
        return tuple(g for g in self.groups if g.used)

    @property
    def skipped_groups(self) -> tuple[GroupCorrelation, ...]:
        return tuple(g for g in self.groups if not g.used)

    @property
    def groups_used(self) -> int:
        return len(self.used_groups)

    @property
    def groups_skipped(self) -> int:
        return len(self.groups) - self.groups_used

    @property
    def skip_summary(self) -> str:
        """E.g. "2 of 10 groups skipped: 1 because the human scores are all the same, ..."."""
        return _skip_summary(len(self.groups), self.skip_counts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "n": self.n,
            "n_total": self.n_total,
            "n_dropped": self.n_dropped,
            "dropped_indices": list(self.dropped_indices),
            "groups_used": self.groups_used,
            "groups_skipped": self.groups_skipped,
            "skip_counts": dict(self.skip_counts),
            "skip_summary": self.skip_summary,
            "ci": self.ci,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "statistics": {c.method: c.as_dict() for c in self.correlations},
            "groups": [
                {
                    "group": g.group,
                    "n": g.n,
                    "used": g.used,
                    "pearson": g.pearson,
                    "spearman": g.spearman,
                    "kendall": g.kendall,
                    "reason": g.reason,
                }
                for g in self.groups
            ],
        }


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's alpha; ``value is None`` means undefined and ``reason`` says why."""

    value: float | None
    level: str  #: "nominal", "ordinal" or "interval"
    n_units: int  #: units with at least 2 ratings (pairable), the ones used
    n_pairable: int  #: ratings inside those units
    n_units_dropped: int  #: units with fewer than 2 ratings (not pairable), left out
    n_raters: int
    reason: str = ""

    @property
    def defined(self) -> bool:
        return self.value is not None

    @property
    def statistic(self) -> str:
        return f"Krippendorff's alpha ({self.level})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "level": self.level,
            "value": self.value,
            "n_units": self.n_units,
            "n_pairable": self.n_pairable,
            "n_units_dropped": self.n_units_dropped,
            "n_raters": self.n_raters,
            "reason": self.reason,
        }

    def to_rows(self, comparison: str = "") -> list[dict[str, Any]]:
        note = (
            f"{self.n_raters} raters; {self.n_units} units rated by at least 2 raters "
            f"({self.n_pairable} ratings)"
        )
        if self.n_units_dropped:
            note += f"; {self.n_units_dropped} units with fewer than 2 ratings left out"
        if not self.defined:
            note = _join(f"Not computed: {self.reason}", note)
        return [
            {
                "comparison": comparison,
                "statistic": self.statistic,
                "kind": "agreement among raters",
                "value": self.value,
                "p_value": None,
                "ci_low": None,
                "ci_high": None,
                "n": self.n_units,
                "note": note,
            }
        ]


def agreement_rows(
    reports: Mapping[str, CorrelationReport | GroupedCorrelationReport | AlphaResult]
    | Iterable[CorrelationReport | GroupedCorrelationReport | AlphaResult],
) -> list[dict[str, Any]]:
    """Rows for an Excel "Agreement" sheet from several results (columns :data:`ROW_COLUMNS`).

    Pass a mapping to fill the ``comparison`` column with its keys, e.g.
    ``{"Coherence: method vs experts": report, ...}``.
    """
    items = reports.items() if isinstance(reports, Mapping) else (("", r) for r in reports)
    rows: list[dict[str, Any]] = []
    for comparison, report in items:
        rows.extend(report.to_rows(comparison))
    return rows


# --------------------------------------------------------------------------------------------
# Correlations
# --------------------------------------------------------------------------------------------


def correlations(
    x: Sequence[Any] | np.ndarray,
    y: Sequence[Any] | np.ndarray,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
    x_name: str = _DEFAULT_X_NAME,
    y_name: str = _DEFAULT_Y_NAME,
    label: str = POOLED_LABEL,
) -> CorrelationReport:
    """Pearson r, Spearman rho and Kendall tau-b between paired scores ``x`` and ``y``.

    Pairs where either value is missing (None, NaN, empty) or not a number are dropped and
    counted; numeric text such as ``"4"`` counts as a number. p-values are two-sided, as
    ``scipy.stats`` computes them (Kendall: exact for small samples without ties, else the normal
    approximation). The CI is a percentile bootstrap over pairs: ``n_boot`` resamples drawn with
    ``numpy.random.default_rng(seed)``; a resample in which either side is constant is skipped
    (and counted in the note); with fewer than half the resamples usable, no CI is given.
    ``n_boot=0`` switches the bootstrap off.

    ``x_name`` and ``y_name`` are plural phrases used in the plain-language reasons ("the human
    scores are all the same (4), so no correlation can be computed").
    """
    _check_options(n_boot, ci)
    xv = _numeric_vector(x, x_name)
    yv = _numeric_vector(y, y_name)
    if xv.shape[0] != yv.shape[0]:
        raise ValueError(
            f"{_sentence(x_name)} have {xv.shape[0]} values but {y_name} have {yv.shape[0]}; "
            "they must be paired one to one."
        )
    keep = ~(np.isnan(xv) | np.isnan(yv))
    dropped = tuple(int(i) for i in np.flatnonzero(~keep))
    xv, yv = xv[keep], yv[keep]
    n = int(xv.shape[0])

    reason = _undefined_reason(xv, yv, _MIN_PAIRS, x_name, y_name)
    if reason:
        undefined = {
            m: Correlation(m, None, None, None, None, n, reason=reason) for m in STATISTIC_NAMES
        }
        return CorrelationReport(
            **undefined, n=n, n_dropped=len(dropped), dropped_indices=dropped,
            label=label, ci=ci, n_boot=n_boot, seed=seed,
        )  # fmt: skip

    estimates = {
        "pearson": sps.pearsonr(xv, yv),
        "spearman": sps.spearmanr(xv, yv),
        "kendall": sps.kendalltau(xv, yv),
    }
    boot, used = _bootstrap_pairs(xv, yv, n_boot, seed)
    ci_note, has_ci = _pairs_ci_note(n_boot, used, ci, seed)
    out: dict[str, Correlation] = {}
    for method, result in estimates.items():
        value, p_value = float(result.statistic), float(result.pvalue)
        if not math.isfinite(value):
            out[method] = Correlation(
                method, None, None, None, None, n,
                reason="the calculation gave no number for these scores",
            )  # fmt: skip
            continue
        low = high = None
        if has_ci:
            low, high = _percentile_interval(boot[method], ci)
        out[method] = Correlation(
            method,
            _clip(value),
            p_value if math.isfinite(p_value) else None,
            low,
            high,
            n,
            note=ci_note if math.isfinite(p_value) else _join(ci_note, "no p-value available"),
        )
    return CorrelationReport(
        **out, n=n, n_dropped=len(dropped), dropped_indices=dropped,
        label=label, ci=ci, n_boot=n_boot, seed=seed,
    )  # fmt: skip


def grouped_correlations(
    x: Sequence[Any] | np.ndarray,
    y: Sequence[Any] | np.ndarray,
    groups: Sequence[Hashable] | np.ndarray,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
    x_name: str = _DEFAULT_X_NAME,
    y_name: str = _DEFAULT_Y_NAME,
    label: str = GROUPED_LABEL,
) -> GroupedCorrelationReport:
    """Per-group averaged correlations (G-Eval's "summary-level", per source document).

    Inside each group (e.g. all summaries of one source document) compute Pearson, Spearman and
    Kendall tau-b; skip a group with fewer than 2 usable pairs or where either side is constant
    (each skipped group says why); average each coefficient over the remaining groups (plain
    mean). Pairs with a missing or non-numeric score, or without a group, are dropped and counted.

    p-values: none. An average of per-group correlations has no single standard test, so
    ``p_value`` is ``None`` and the note says so. CI: percentile bootstrap over the groups used
    (``n_boot`` resamples of whole groups, ``numpy.random.default_rng(seed)``), when at least 3
    groups were used.
    """
    _check_options(n_boot, ci)
    xv = _numeric_vector(x, x_name)
    yv = _numeric_vector(y, y_name)
    keys = [k.item() if isinstance(k, np.generic) else k for k in groups]
    if not (xv.shape[0] == yv.shape[0] == len(keys)):
        raise ValueError(
            f"{_sentence(x_name)} have {xv.shape[0]} values, {y_name} have {yv.shape[0]} and "
            f"the group column has {len(keys)}; each text needs one of each."
        )
    has_group = np.array([not _is_missing(k) for k in keys], dtype=bool)
    keep = ~(np.isnan(xv) | np.isnan(yv)) & has_group
    dropped = tuple(int(i) for i in np.flatnonzero(~keep))

    members: dict[Hashable, list[int]] = {}  # every group seen, even one with no usable pair
    for i in np.flatnonzero(has_group):
        members.setdefault(keys[i], [])
        if keep[i]:
            members[keys[i]].append(int(i))

    per_group: list[GroupCorrelation] = []
    for key, idx in members.items():
        gx, gy = xv[idx], yv[idx]
        reason = _undefined_reason(gx, gy, _MIN_GROUP_PAIRS, x_name, y_name)
        if reason:
            kind = _skip_kind(gx, gy, _MIN_GROUP_PAIRS, x_name, y_name)
            per_group.append(GroupCorrelation(key, len(idx), None, None, None, reason, kind))
            continue
        per_group.append(
            GroupCorrelation(
                key,
                len(idx),
                pearson=_clip(_pearson_rows(gx[None, :], gy[None, :])[0]),
                spearman=_clip(_spearman_rows(gx[None, :], gy[None, :])[0]),
                kendall=_clip(float(sps.kendalltau(gx, gy).statistic)),
            )
        )

    skip_counts: dict[str, int] = {}
    for g in per_group:
        if not g.used:
            skip_counts[g.skip_kind] = skip_counts.get(g.skip_kind, 0) + 1
    skip_counts_t = tuple(skip_counts.items())
    used = [g for g in per_group if g.used]
    n_used = sum(g.n for g in used)
    n_total = int(keep.sum())
    common: dict[str, Any] = {
        "groups": tuple(per_group),
        "n": n_used,
        "n_total": n_total,
        "n_dropped": len(dropped),
        "dropped_indices": dropped,
        "skip_counts": skip_counts_t,
        "label": label,
        "ci": ci,
        "n_boot": n_boot,
        "seed": seed,
    }

    if not used:
        if not per_group:
            reason = "no pairs with a group and both scores, so no correlation can be computed"
        else:
            reason = "no group could be used: " + _skip_summary(len(per_group), skip_counts_t)
        undefined = {
            m: Correlation(m, None, None, None, None, 0, reason=reason) for m in STATISTIC_NAMES
        }
        return GroupedCorrelationReport(pearson=undefined["pearson"],
                                        spearman=undefined["spearman"],
                                        kendall=undefined["kendall"], **common)

    rng = np.random.default_rng(seed)
    n_used_groups = len(used)
    draw = None
    if n_boot and n_used_groups >= _MIN_GROUPS_FOR_CI:
        draw = rng.integers(0, n_used_groups, size=(n_boot, n_used_groups))
    base_note = f"mean of {n_used_groups} per-group values"
    if len(per_group) > n_used_groups:
        base_note += f" ({_skip_summary(len(per_group), skip_counts_t)})"
    base_note += "; no p-value: an average of per-group correlations has no single test"
    if draw is not None:
        base_note += f"; {_percent(ci)} CI: percentile bootstrap over the groups ({n_boot} resamples, seed {seed})"
    elif n_boot:
        base_note += (
            f"; no CI: needs at least {_MIN_GROUPS_FOR_CI} usable groups ({n_used_groups} used)"
        )
    else:
        base_note += "; no CI (bootstrap switched off)"

    out: dict[str, Correlation] = {}
    for method in STATISTIC_NAMES:
        values = np.array([getattr(g, method) for g in used], dtype=float)
        low = high = None
        if draw is not None:
            low, high = _percentile_interval(values[draw].mean(axis=1), ci)
        out[method] = Correlation(
            method, _clip(float(values.mean())), None, low, high, n_used, note=base_note
        )
    return GroupedCorrelationReport(pearson=out["pearson"], spearman=out["spearman"],
                                    kendall=out["kendall"], **common)


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha
# --------------------------------------------------------------------------------------------


def krippendorff_alpha(data: Any, level: Level = "nominal") -> AlphaResult:
    """Krippendorff's alpha for ``data`` laid out raters x units (rows = raters).

    ``data`` is a list of lists or a 2-D array; None, NaN and empty text are missing ratings.
    Nominal ratings may be text or numbers (``"3"`` and ``3`` are the same category); ordinal
    and interval ratings must be numbers. Units with fewer than 2 ratings are not pairable and
    are left out (counted in ``n_units_dropped``).

    Computed through the coincidence matrix (Krippendorff 2011): ``o_ck`` sums, over units,
    the ordered pairs of ratings (c, k) from different raters weighted by 1/(m_u - 1);
    ``alpha = 1 - (n - 1) * sum o_ck d2_ck / sum n_c n_k d2_ck`` with d2 the squared difference
    of the level: nominal 0/1; interval (c - k)^2; ordinal
    ``(sum_{g=c..k} n_g - (n_c + n_k)/2)^2`` over the ranked values actually observed.

    Undefined (``value is None`` with a reason) when fewer than 2 raters, fewer than 2 pairable
    units, or when all pairable ratings are the same (no variation: expected disagreement 0).
    """
    if not is_level(level):
        raise ValueError(f"level must be one of {', '.join(_LEVELS)}, not {level!r}")
    codes, categories = _code_ratings(data, level)
    n_raters, n_units_all = codes.shape

    present = codes >= 0
    per_unit = present.sum(axis=0)
    pairable = per_unit >= 2
    n_units = int(pairable.sum())
    n_pairable = int(per_unit[pairable].sum())

    def undefined(reason: str) -> AlphaResult:
        return AlphaResult(
            None, level, n_units, n_pairable, n_units_all - n_units, n_raters, reason=reason
        )

    if n_raters < 2:
        return undefined(f"agreement needs at least 2 raters (found {n_raters})")
    if n_units < 2:
        return undefined(
            f"fewer than 2 units were rated by at least 2 raters (found {n_units}), "
            "so agreement cannot be measured"
        )

    # Keep pairable units and re-index the categories actually used there.
    sub = codes[:, pairable]
    used_codes = np.unique(sub[sub >= 0])
    if used_codes.shape[0] < 2:
        value = categories[int(used_codes[0])]
        return undefined(
            f"all {n_pairable} pairable ratings are the same ({_fmt_value(value)}), "
            "so there is no variation to measure agreement against"
        )
    remap = np.full(len(categories), -1, dtype=np.int64)
    remap[used_codes] = np.arange(used_codes.shape[0])
    unit_idx, rater_cat = [], []
    for r in range(n_raters):
        row = sub[r]
        mask = row >= 0
        unit_idx.append(np.flatnonzero(mask))
        rater_cat.append(remap[row[mask]])
    units = np.concatenate(unit_idx)
    cats = np.concatenate(rater_cat)
    n_cat = used_codes.shape[0]

    # Unit-by-category counts n_uc, then o = sum_u (n_u n_u^T - diag(n_u)) / (m_u - 1).
    # o stays sparse (only value pairs that meet in some unit), so thousands of distinct
    # interval values cost no V x V table.
    counts = sparse.csr_matrix((np.ones(units.shape[0]), (units, cats)), shape=(n_units, n_cat))
    inverse = 1.0 / (np.asarray(counts.sum(axis=1)).ravel() - 1.0)
    coincidence = (counts.T @ sparse.diags(inverse) @ counts).tocoo()
    coincidence = (coincidence - sparse.diags(np.asarray(counts.T @ inverse).ravel())).tocoo()
    n_c = np.asarray(coincidence.sum(axis=1)).ravel()
    n = float(n_c.sum())

    if level == "nominal":  # d2 = 1 off the diagonal, 0 on it
        observed = n - float(coincidence.diagonal().sum())
        expected = n * n - float((n_c * n_c).sum())
    else:
        if level == "interval":  # d2 = (c - k)^2
            position = np.array([categories[int(c)] for c in used_codes], dtype=float)
        else:  # ordinal: sum_{g=c..k} n_g - (n_c + n_k)/2 == mid_k - mid_c, mid = cum - n/2
            position = np.cumsum(n_c) - n_c / 2.0
        position = position - float(n_c @ position) / n  # centred: exact, no cancellation
        gaps = position[coincidence.row] - position[coincidence.col]
        observed = float((coincidence.data * gaps * gaps).sum())
        # sum_ck n_c n_k (p_c - p_k)^2 = 2 (n sum_c n_c p_c^2 - (sum_c n_c p_c)^2)
        expected = 2.0 * (n * float(n_c @ (position * position)) - float(n_c @ position) ** 2)
    if expected <= 0.0:  # cannot happen with 2+ categories; kept as a guard
        return undefined("there is no variation among the ratings to measure agreement against")
    value = 1.0 - (n - 1.0) * observed / expected
    return AlphaResult(float(value), level, n_units, n_pairable, n_units_all - n_units, n_raters)


# --------------------------------------------------------------------------------------------
# Internals
# --------------------------------------------------------------------------------------------


def _check_options(n_boot: int, ci: float) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, numbers.Integral) or n_boot < 0:
        raise ValueError(f"n_boot must be a whole number of resamples, 0 or more (got {n_boot!r})")
    if not (0.0 < float(ci) < 1.0):
        raise ValueError(f"ci must be between 0 and 1, e.g. 0.95 (got {ci!r})")


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float | np.floating) and math.isnan(value):
        return True
    if isinstance(value, str) and not value.strip():
        return True
    return type(value).__name__ in ("NAType", "NaTType")  # pandas.NA, pandas.NaT


def _as_number(value: Any) -> float:
    """A finite float, or NaN for a missing, non-numeric or infinite value."""
    if value is None or isinstance(value, bool | np.bool_):
        return math.nan
    if isinstance(value, numbers.Real):
        result = float(value)
    elif isinstance(value, str):
        try:
            result = float(value.strip())
        except ValueError:
            return math.nan
    else:
        return math.nan
    return result if math.isfinite(result) else math.nan


def _numeric_vector(values: Any, name: str) -> np.ndarray:
    """Float vector with NaN for every missing, non-numeric or infinite value."""
    if isinstance(values, str | bytes) or getattr(values, "ndim", 1) != 1:
        raise ValueError(f"{_sentence(name)} must be a single list of values.")
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        arr = values.astype(float)
        arr[~np.isfinite(arr)] = np.nan
        return arr
    items = list(values)
    for item in items:
        if isinstance(item, list | tuple | dict | set | np.ndarray):
            raise ValueError(  # noqa: TRY004 - a user-facing input problem
                f"{_sentence(name)} must be a single list of values, not a table."
            )
    return np.array([_as_number(v) for v in items], dtype=float).reshape(len(items))


def _undefined_reason(x: np.ndarray, y: np.ndarray, min_n: int, x_name: str, y_name: str) -> str:
    n = x.shape[0]
    if n < min_n:
        return f"fewer than {min_n} paired values (n={n})"
    x_const = bool(np.all(x == x[0]))
    y_const = bool(np.all(y == y[0]))
    if x_const and y_const:
        return (
            f"{x_name} are all the same ({_fmt_value(x[0])}) and {y_name} are all the same "
            f"({_fmt_value(y[0])}), so no correlation can be computed"
        )
    if x_const:
        return f"{x_name} are all the same ({_fmt_value(x[0])}), so no correlation can be computed"
    if y_const:
        return f"{y_name} are all the same ({_fmt_value(y[0])}), so no correlation can be computed"
    return ""


def _skip_kind(x: np.ndarray, y: np.ndarray, min_n: int, x_name: str, y_name: str) -> str:
    """The category of :func:`_undefined_reason` used to count skipped groups."""
    if x.shape[0] < min_n:
        return f"fewer than {min_n} paired values"
    x_const = bool(np.all(x == x[0]))
    y_const = bool(np.all(y == y[0]))
    if x_const and y_const:
        return f"both {x_name} and {y_name} are all the same"
    return f"{x_name if x_const else y_name} are all the same"


def _skip_summary(n_groups: int, skip_counts: tuple[tuple[str, int], ...]) -> str:
    skipped = sum(c for _, c in skip_counts)
    if not skipped:
        return f"all {n_groups} groups used"
    parts = []
    for kind, count in skip_counts:
        noun = "group" if count == 1 else "groups"
        parts.append(f"{count} {noun} {'with' if kind.startswith('fewer') else 'where'} {kind}")
    return f"{skipped} of {n_groups} groups skipped: {', '.join(parts)}"


def _fmt_value(value: Any) -> str:
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return f"{float(value):g}"
    return str(value)


def _percent(fraction: float) -> str:
    return f"{fraction * 100:g}%"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _dropped_note(n_dropped: int) -> str:
    noun = "pair" if n_dropped == 1 else "pairs"
    return f"{n_dropped} {noun} with a missing or non-numeric value left out"


def _clip(value: float) -> float:
    """Round-off can push a coefficient a hair past +-1."""
    return float(min(1.0, max(-1.0, value)))


def _pairs_ci_note(n_boot: int, used: int, ci: float, seed: int) -> tuple[str, bool]:
    if n_boot == 0:
        return "no CI (bootstrap switched off)", False
    skipped = n_boot - used
    if used * 2 < n_boot:
        note = (
            f"no CI: {skipped} of {n_boot} bootstrap resamples had all-equal scores on one side "
            "(too little variation for a bootstrap)"
        )
        return note, False
    note = f"{_percent(ci)} CI: percentile bootstrap over pairs ({n_boot} resamples, seed {seed})"
    if skipped:
        note += f"; {skipped} resamples skipped because one side was all the same"
    return note, True


def _percentile_interval(values: np.ndarray, ci: float) -> tuple[float, float]:
    tail = (1.0 - ci) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return _clip(float(low)), _clip(float(high))


def _pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r of each row of ``a`` with the same row of ``b`` (rows must not be constant)."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    return (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))


def _spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman rho row by row: Pearson r of the average ranks (scipy's definition)."""
    return _pearson_rows(sps.rankdata(a, axis=1), sps.rankdata(b, axis=1))


def _kendall_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall tau-b row by row.

    tau-b = sum_ij sign(a_i - a_j) sign(b_i - b_j) / sqrt(sum_ij sign(a_i - a_j)^2 * same for b),
    ties giving sign 0. Vectorised over pairs for short rows; scipy's O(n log n) routine per row
    for long ones.
    """
    rows, n = a.shape
    if n > 200:
        return np.array([sps.kendalltau(a[i], b[i]).statistic for i in range(rows)])
    out = np.empty(rows)
    chunk = max(1, 500_000 // (n * n))
    for start in range(0, rows, chunk):
        sa = np.sign(a[start : start + chunk, :, None] - a[start : start + chunk, None, :])
        sb = np.sign(b[start : start + chunk, :, None] - b[start : start + chunk, None, :])
        num = (sa * sb).sum(axis=(1, 2))
        den = np.sqrt(np.abs(sa).sum(axis=(1, 2)) * np.abs(sb).sum(axis=(1, 2)))
        out[start : start + chunk] = num / den
    return out


def _bootstrap_pairs(
    x: np.ndarray, y: np.ndarray, n_boot: int, seed: int
) -> tuple[dict[str, np.ndarray], int]:
    """Bootstrap estimates of the three coefficients over resampled pairs.

    Resamples where either side is constant are skipped. Indices are drawn in chunks from one
    generator, so results depend only on (x, y, n_boot, seed).
    """
    out: dict[str, list[np.ndarray]] = {m: [] for m in STATISTIC_NAMES}
    if n_boot == 0:
        return {m: np.empty(0) for m in STATISTIC_NAMES}, 0
    n = x.shape[0]
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, 1_000_000 // n))
    done = 0
    while done < n_boot:
        size = min(chunk, n_boot - done)
        idx = rng.integers(0, n, size=(size, n))
        done += size
        xb, yb = x[idx], y[idx]
        ok = (xb.max(axis=1) > xb.min(axis=1)) & (yb.max(axis=1) > yb.min(axis=1))
        xb, yb = xb[ok], yb[ok]
        if xb.shape[0] == 0:
            continue
        out["pearson"].append(_pearson_rows(xb, yb))
        out["spearman"].append(_spearman_rows(xb, yb))
        out["kendall"].append(_kendall_rows(xb, yb))
    result = {m: (np.concatenate(v) if v else np.empty(0)) for m, v in out.items()}
    return result, int(result["pearson"].shape[0])


def _code_ratings(data: Any, level: str) -> tuple[np.ndarray, list[Any]]:
    """Raters x units integer codes (-1 = missing) and the category of each code.

    For ordinal and interval data the categories are the sorted distinct numbers.
    """
    if isinstance(data, np.ndarray) and data.dtype.kind in "iuf":
        if data.ndim != 2:
            raise ValueError(_TABLE_SHAPE_MESSAGE)
        numbers_ = data.astype(float)
        numbers_[~np.isfinite(numbers_)] = np.nan
        return _code_numbers(numbers_)

    table = _ratings_table(data)
    width = len(table[0])
    parsed: list[list[Any]] = []
    for r, row in enumerate(table):
        out_row: list[Any] = []
        for u, value in enumerate(row):
            if _is_missing(value):
                out_row.append(None)
                continue
            number = _as_number(value)
            if not math.isnan(number):
                out_row.append(number)
            elif level == "nominal" and isinstance(value, str):
                out_row.append(value.strip())
            else:
                raise ValueError(
                    f"Rater {r + 1}, unit {u + 1}: {value!r} is not a usable rating; {level} "
                    "alpha needs numeric ratings (leave a missing rating empty)."
                )
        parsed.append(out_row)

    if level != "nominal" or all(v is None or isinstance(v, float) for row in parsed for v in row):
        numbers_ = np.array(
            [[math.nan if v is None else v for v in row] for row in parsed], dtype=float
        ).reshape(len(parsed), width)
        return _code_numbers(numbers_)
    index: dict[Any, int] = {}
    for row in parsed:
        for value in row:
            if value is not None and value not in index:
                index[value] = len(index)
    codes = np.array(
        [[-1 if v is None else index[v] for v in row] for row in parsed], dtype=np.int64
    ).reshape(len(parsed), width)
    return codes, list(index)


def _code_numbers(numbers_: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    mask = ~np.isnan(numbers_)
    uniq = np.unique(numbers_[mask])
    codes = np.full(numbers_.shape, -1, dtype=np.int64)
    codes[mask] = np.searchsorted(uniq, numbers_[mask])
    return codes, [float(v) for v in uniq]


_TABLE_SHAPE_MESSAGE = "The ratings must be a table with one row per rater and one column per unit."


def _ratings_table(data: Any) -> list[list[Any]]:
    """``data`` as a rectangular list of rows (raters), checked."""
    if hasattr(data, "shape"):  # numpy object array, pandas DataFrame
        arr = np.asarray(data, dtype=object)
        if arr.ndim != 2:
            raise ValueError(_TABLE_SHAPE_MESSAGE)
        table = [list(row) for row in arr]
    else:
        if isinstance(data, str | bytes) or not isinstance(data, Iterable):
            raise ValueError(_TABLE_SHAPE_MESSAGE)
        table = []
        for row in data:
            if isinstance(row, str | bytes) or not isinstance(row, Iterable):
                raise ValueError(_TABLE_SHAPE_MESSAGE)  # noqa: TRY004 - user-facing
            table.append(list(row))
    if not table or not table[0]:
        raise ValueError("The ratings table is empty: it needs one row per rater.")
    width = len(table[0])
    for r, row in enumerate(table):
        if len(row) != width:
            raise ValueError(
                f"Rater {r + 1} has {len(row)} ratings but rater 1 has {width}; every rater "
                "needs one cell per unit (leave the cell empty when a rating is missing)."
            )
    return table


# --------------------------------------------------------------------------------------------
# Comparing two conditions against the same human ratings
# --------------------------------------------------------------------------------------------

#: Fewest units (pairs, or groups when ``groups`` is given) for a paired comparison.
MIN_PAIRED_UNITS = 10
#: A difference in agreement smaller than this is "small" in the sentences of
#: :meth:`PairedDifference.summary` (0.05 on the -1 to 1 scale of r, rho or tau).
SMALL_DIFFERENCE = 0.05

_ROW_FUNCTIONS = {"pearson": _pearson_rows, "spearman": _spearman_rows, "kendall": _kendall_rows}


class Resampling(TypedDict):
    """How a :class:`PairedDifference` was resampled, the same whether it is defined or not
    (given to it as keywords)."""

    n_dropped: int
    ci: float
    n_boot: int
    seed: int


@dataclass(frozen=True)
class PairedDifference:
    """How much better condition A agrees with the human ratings than condition B.

    ``difference`` = agreement(A, human) - agreement(B, human), both computed over the same units
    (the ones both conditions scored and the human rated). ``ci_low``/``ci_high`` are a paired
    percentile bootstrap over those units; ``p_value`` is two-sided (twice the smaller share of
    bootstrap differences on either side of 0, with the usual +1 correction). ``value is None``
    style: ``difference is None`` means undefined and ``reason`` says why ("not enough units").
    """

    method: str
    a_value: float | None
    b_value: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n: int  #: units used: pairs, or groups when grouped
    unit: str  #: "pairs" or "groups"
    n_dropped: int  #: pairs left out (a missing value in A, B or the human ratings)
    ci: float = 0.95
    n_boot: int = 2000
    seed: int = 0
    reason: str = ""
    note: str = ""

    @property
    def defined(self) -> bool:
        return self.difference is not None

    @property
    def statistic(self) -> str:
        return STATISTIC_NAMES[self.method]

    @property
    def ci_excludes_zero(self) -> bool:
        return (
            self.ci_low is not None
            and self.ci_high is not None
            and (self.ci_low > 0 or self.ci_high < 0)
        )

    def summary(self, a_name: str, b_name: str, ratings: str = "your ratings") -> str:
        """One plain sentence whose words follow the interval and the size of the gap, e.g.
        "Combined agrees better with your ratings of Coherence than AI-only (Spearman rho 0.61
        vs 0.44; difference 0.17, 95% CI 0.05 to 0.29)." (``ratings``: what the conditions were
        compared with, naming the dimension).

        * the interval excludes 0 and the gap is at least :data:`SMALL_DIFFERENCE`: "agrees
          better" / "agrees less well";
        * it excludes 0 but the gap is smaller: "agrees slightly better / less well: the
          difference is real but small";
        * it includes 0 and lies within ±:data:`SMALL_DIFFERENCE`: "agree about equally well";
        * it includes 0 but reaches further: the data cannot tell ("may agree better / less
          well" when the gap itself is not small).

        Numbers are rounded to 2 decimals the same way everywhere (never "-0.00")."""
        difference = self.difference
        if difference is None:  # not defined
            against = "" if ratings == "your ratings" else f" against {ratings}"
            return (f"{_sentence(a_name)} and {b_name} cannot be compared{against}: "
                    f"{self.reason}.")
        numbers_ = f"{self.statistic} {_r2(self.a_value)} vs {_r2(self.b_value)}"
        diff = f"difference {_r2(difference)}"
        if self.ci_low is None or self.ci_high is None:
            return (f"{_sentence(a_name)} and {b_name} cannot be told apart against {ratings} "
                    f"without an interval ({numbers_}; {diff}, no interval: {self.note}).")
        detail = (
            f"({numbers_}; {diff}, {_percent(self.ci)} CI {_r2(self.ci_low)} to "
            f"{_r2(self.ci_high)}, {self.n} {self.unit})"
        )
        gap = abs(difference)
        higher = difference > 0
        if self.ci_excludes_zero:
            if gap >= SMALL_DIFFERENCE:
                better = "better" if higher else "less well"
                return (f"{_sentence(a_name)} agrees {better} with {ratings} than {b_name} "
                        f"{detail}.")
            better = "slightly better" if higher else "slightly less well"
            return (f"{_sentence(a_name)} agrees {better} with {ratings} than {b_name}, but "
                    f"the difference is small (below {SMALL_DIFFERENCE:.2f}) {detail}.")
        if max(abs(self.ci_low), abs(self.ci_high)) < SMALL_DIFFERENCE:
            return (f"{_sentence(a_name)} and {b_name} agree about equally well with "
                    f"{ratings}: any difference is small {detail}.")
        if gap >= SMALL_DIFFERENCE:
            better = "better" if higher else "less well"
            return (f"{_sentence(a_name)} may agree {better} with {ratings} than {b_name}, "
                    f"but the interval of the difference includes zero, so the data cannot "
                    f"tell {detail}.")
        return (f"The data cannot tell whether {a_name} or {b_name} agrees better with "
                f"{ratings}: the difference is close to zero, but its interval is wide {detail}.")

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "statistic": self.statistic,
            "a_value": self.a_value,
            "b_value": self.b_value,
            "difference": self.difference,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "n": self.n,
            "unit": self.unit,
            "n_dropped": self.n_dropped,
            "ci": self.ci,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "reason": self.reason,
            "note": self.note,
        }


def _r2(value: float | None) -> str:
    """A number rounded to 2 decimals as text; a value that rounds to zero is "0.00", never
    "-0.00"."""
    if value is None:
        return "-"
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def _group_coefficients(
    x: np.ndarray, y: np.ndarray, codes: np.ndarray, n_groups: int, method: str
) -> np.ndarray:
    """The coefficient inside each group (NaN where fewer than 2 pairs or a side is constant)."""
    out = np.full(n_groups, np.nan)
    row = _ROW_FUNCTIONS[method]
    for g in range(n_groups):
        sel = codes == g
        xs, ys = x[sel], y[sel]
        if xs.shape[0] < _MIN_GROUP_PAIRS or np.all(xs == xs[0]) or np.all(ys == ys[0]):
            continue
        out[g] = _clip(float(row(xs[None, :], ys[None, :])[0]))
    return out


def _bootstrap_p(diffs: np.ndarray) -> float:
    below = int(np.count_nonzero(diffs <= 0))
    above = int(np.count_nonzero(diffs >= 0))
    return float(min(1.0, 2.0 * (min(below, above) + 1) / (diffs.shape[0] + 1)))


def paired_correlation_difference(
    a: Sequence[Any] | np.ndarray,
    b: Sequence[Any] | np.ndarray,
    human: Sequence[Any] | np.ndarray,
    *,
    method: str = "spearman",
    groups: Sequence[Hashable] | np.ndarray | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
) -> PairedDifference:
    """Is condition ``a`` closer to the human ratings than condition ``b``? (paired bootstrap)

    ``a``, ``b`` and ``human`` are paired one to one (the same units in the same order). A unit
    missing in any of the three is left out and counted, so both conditions are compared on the
    units they both scored. Without ``groups`` the coefficient is pooled over pairs and the
    bootstrap resamples pairs; with ``groups`` (e.g. the source document of each text) the
    coefficient is the per-group average (:func:`grouped_correlations`'s definition) over the
    groups where both conditions' coefficients are defined, and the bootstrap resamples groups.
    Below :data:`MIN_PAIRED_UNITS` units the result is undefined: "not enough units".
    """
    if method not in STATISTIC_NAMES:
        raise ValueError(f"method must be one of {', '.join(STATISTIC_NAMES)} (got {method!r})")
    _check_options(n_boot, ci)
    av = _numeric_vector(a, "the first condition's scores")
    bv = _numeric_vector(b, "the second condition's scores")
    hv = _numeric_vector(human, "the human ratings")
    if not (av.shape[0] == bv.shape[0] == hv.shape[0]):
        raise ValueError(
            f"The two conditions and the human ratings must be paired one to one (got "
            f"{av.shape[0]}, {bv.shape[0]} and {hv.shape[0]} values)."
        )
    keep = ~(np.isnan(av) | np.isnan(bv) | np.isnan(hv))
    group_list = None
    if groups is not None:
        group_list = list(groups)
        if len(group_list) != av.shape[0]:
            raise ValueError(
                f"groups has {len(group_list)} entries but the scores have {av.shape[0]}; "
                "give one group per scored unit."
            )
        keep &= np.array([not _is_missing(g) for g in group_list], dtype=bool)
    n_dropped = int(np.count_nonzero(~keep))
    av, bv, hv = av[keep], bv[keep], hv[keep]
    common: Resampling = {"n_dropped": n_dropped, "ci": ci, "n_boot": n_boot, "seed": seed}
    rng = np.random.default_rng(seed)

    if group_list is None:
        n, unit = int(av.shape[0]), "pairs"

        def undefined(reason: str) -> PairedDifference:
            return PairedDifference(
                method, None, None, None, None, None, None, n, unit, reason=reason, **common
            )

        if n < MIN_PAIRED_UNITS:
            return undefined(f"not enough units: {n} pairs, at least {MIN_PAIRED_UNITS} needed")
        for values, name in ((av, "the first condition's scores"),
                             (bv, "the second condition's scores"), (hv, "the human ratings")):
            if np.all(values == values[0]):
                return undefined(f"{name} are all the same, so no correlation can be computed")
        row = _ROW_FUNCTIONS[method]
        a_val = _clip(float(row(av[None, :], hv[None, :])[0]))
        b_val = _clip(float(row(bv[None, :], hv[None, :])[0]))
        diffs_list: list[np.ndarray] = []
        chunk = max(1, min(n_boot, 1_000_000 // n)) if n_boot else 1
        done = 0
        while done < n_boot:
            size = min(chunk, n_boot - done)
            idx = rng.integers(0, n, size=(size, n))
            done += size
            ab, bb, hb = av[idx], bv[idx], hv[idx]
            ok = (
                (ab.max(axis=1) > ab.min(axis=1))
                & (bb.max(axis=1) > bb.min(axis=1))
                & (hb.max(axis=1) > hb.min(axis=1))
            )
            if np.any(ok):
                diffs_list.append(row(ab[ok], hb[ok]) - row(bb[ok], hb[ok]))
        diffs = np.concatenate(diffs_list) if diffs_list else np.empty(0)
        resampled = "pairs"
    else:
        kept_groups = [g for g, k in zip(group_list, keep, strict=True) if k]
        order: dict[Hashable, int] = {}
        codes = np.array([order.setdefault(g, len(order)) for g in kept_groups], dtype=int)
        ga = _group_coefficients(av, hv, codes, len(order), method)
        gb = _group_coefficients(bv, hv, codes, len(order), method)
        both = ~(np.isnan(ga) | np.isnan(gb))
        ga, gb = ga[both], gb[both]
        n, unit = int(ga.shape[0]), "groups"
        if n < MIN_PAIRED_UNITS:
            return PairedDifference(
                method, None, None, None, None, None, None, n, unit,
                reason=(
                    f"not enough units: {n} groups where both conditions' correlations are "
                    f"defined, at least {MIN_PAIRED_UNITS} needed"
                ),
                **common,
            )  # fmt: skip
        a_val, b_val = float(ga.mean()), float(gb.mean())
        per_group = ga - gb
        idx = rng.integers(0, n, size=(n_boot, n)) if n_boot else np.empty((0, n), dtype=int)
        diffs = per_group[idx].mean(axis=1)
        resampled = "groups"

    difference = a_val - b_val
    if n_boot == 0:
        note, low, high, p_value = "no CI (bootstrap switched off)", None, None, None
    elif diffs.shape[0] * 2 < n_boot:
        note = (
            f"no CI: only {diffs.shape[0]} of {n_boot} bootstrap resamples were usable "
            "(too little variation)"
        )
        low = high = p_value = None
    else:
        tail = (1.0 - ci) / 2.0
        lo, hi = np.quantile(diffs, [tail, 1.0 - tail])
        low, high = float(lo), float(hi)
        p_value = _bootstrap_p(diffs)
        note = (
            f"{_percent(ci)} CI and p-value: paired percentile bootstrap over {resampled} "
            f"({n_boot} resamples, seed {seed})"
        )
        if diffs.shape[0] < n_boot:
            note += f"; {n_boot - diffs.shape[0]} resamples skipped (a side was all the same)"
    return PairedDifference(
        method, a_val, b_val, float(difference), low, high, p_value, n, unit,
        note=note, **common,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# Yes/No agreement between a judge and a person
# --------------------------------------------------------------------------------------------

_YES_WORDS = frozenset({"yes", "y", "true", "1", "pass", "passed"})
_NO_WORDS = frozenset({"no", "n", "false", "0", "fail", "failed"})


@dataclass(frozen=True)
class BinaryAgreement:
    """A judge's Yes/No answers against a person's, on the items both answered.

    ``kappa`` is Cohen's kappa and ``mcc`` the Matthews correlation coefficient (both as
    scikit-learn defines them). ``false_pass_rate``: of the items the person answered No, the
    share the judge answered Yes; ``false_fail_rate``: of the items the person answered Yes, the
    share the judge answered No. A value that cannot be computed is ``None`` and ``reasons`` maps
    its field name to why, in plain words.
    """

    kappa: float | None
    mcc: float | None
    false_pass_rate: float | None
    false_fail_rate: float | None
    n: int
    both_yes: int
    both_no: int
    judge_yes_person_no: int  #: false passes
    judge_no_person_yes: int  #: false fails
    n_dropped: int = 0  #: items left out: missing or not Yes/No on either side
    reasons: Mapping[str, str] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.reasons is None:
            object.__setattr__(self, "reasons", {})

    @property
    def agreement(self) -> float | None:
        """Share of items where judge and person gave the same answer."""
        return None if self.n == 0 else (self.both_yes + self.both_no) / self.n

    def as_dict(self) -> dict[str, Any]:
        return {
            "kappa": self.kappa,
            "mcc": self.mcc,
            "false_pass_rate": self.false_pass_rate,
            "false_fail_rate": self.false_fail_rate,
            "agreement": self.agreement,
            "n": self.n,
            "both_yes": self.both_yes,
            "both_no": self.both_no,
            "judge_yes_person_no": self.judge_yes_person_no,
            "judge_no_person_yes": self.judge_no_person_yes,
            "n_dropped": self.n_dropped,
            "reasons": dict(self.reasons),
        }


def _yes_no(value: Any) -> bool | None:
    """True for Yes, False for No, None for missing or anything else."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, numbers.Real):
        if value == 1:
            return True
        if value == 0:
            return False
        return None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _YES_WORDS:
            return True
        if word in _NO_WORDS:
            return False
    return None


def binary_agreement(
    judge: Sequence[Any] | np.ndarray, human: Sequence[Any] | np.ndarray
) -> BinaryAgreement:
    """Cohen's kappa, MCC, false-pass and false-fail rates of ``judge`` against ``human``.

    Both lists are paired one to one; answers may be booleans, 1/0 or the words Yes/No (any
    case). Items missing or not Yes/No on either side are left out and counted.
    """
    judge_list, human_list = list(judge), list(human)
    if len(judge_list) != len(human_list):
        raise ValueError(
            f"The judge has {len(judge_list)} answers but the person has {len(human_list)}; "
            "they must be paired one to one."
        )
    pairs = [(_yes_no(j), _yes_no(h)) for j, h in zip(judge_list, human_list, strict=True)]
    used = [(j, h) for j, h in pairs if j is not None and h is not None]
    n = len(used)
    tp = sum(1 for j, h in used if j and h)
    tn = sum(1 for j, h in used if not j and not h)
    fp = sum(1 for j, h in used if j and not h)
    fn = sum(1 for j, h in used if not j and h)
    reasons: dict[str, str] = {}
    kappa = mcc = fpr = ffr = None
    if n == 0:
        for field in ("kappa", "mcc", "false_pass_rate", "false_fail_rate"):
            reasons[field] = "no item has a Yes/No answer from both the judge and the person"
    else:
        person_no, person_yes = tn + fp, tp + fn
        if person_no:
            fpr = fp / person_no
        else:
            reasons["false_pass_rate"] = "the person answered No to no item"
        if person_yes:
            ffr = fn / person_yes
        else:
            reasons["false_fail_rate"] = "the person answered Yes to no item"
        observed = (tp + tn) / n
        judge_yes = tp + fp
        expected = (judge_yes * person_yes + (n - judge_yes) * person_no) / (n * n)
        if expected >= 1.0:
            reasons["kappa"] = (
                "the judge and the person each gave only one answer (the same one) to every "
                "item, so agreement beyond chance cannot be measured"
            )
        else:
            kappa = (observed - expected) / (1.0 - expected)
        denominator = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
        if denominator == 0:
            side = "the judge" if judge_yes in (0, n) else "the person"
            reasons["mcc"] = f"{side} gave the same answer to every item, so MCC is undefined"
        else:
            mcc = (tp * tn - fp * fn) / math.sqrt(denominator)
    return BinaryAgreement(
        kappa=kappa, mcc=mcc, false_pass_rate=fpr, false_fail_rate=ffr, n=n,
        both_yes=tp, both_no=tn, judge_yes_person_no=fp, judge_no_person_yes=fn,
        n_dropped=len(pairs) - n, reasons=reasons,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# Does the judge read the texts? (a judge that gives every text the same answers, or scores
# length, can still correlate with people; these checks say so beside its agreement)
# --------------------------------------------------------------------------------------------

#: More than this share of the units with one identical answer pattern (or score) flags a judge.
SAME_SHARE = 0.5
#: Fewest scored units before "most units got the same answers" is judged.
MIN_SPREAD_UNITS = 4
#: A judge whose scores follow length this closely (|Spearman rho|) is flagged ...
LENGTH_FLAG = 0.7
#: ... once it scored at least this many units.
MIN_LENGTH_UNITS = 8
#: With human scores, a judge that follows length is flagged only when its Spearman rho with
#: them is not above the length's by at least this much (it adds nothing beyond length).
LENGTH_MARGIN = 0.1
#: What the length baseline measures, in the words of the tables.
LENGTH_NAME = "text length (number of words)"
#: The "kind" of the rows of :meth:`JudgeSpread.rows`.
SPREAD_KIND = "does the judge tell the texts apart? (no human scores needed)"


def word_count(text: Any) -> float:
    """A text's length as the length baseline counts it: its number of words (runs of
    characters between spaces); NaN for a missing text (never 0: a text that was not kept is
    not an empty one)."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return float("nan")
    return float(len(str(text).split()))


@dataclass(frozen=True)
class ConstantQuestion:
    """A checklist question the judge answered the same way for every unit it answered."""

    label: str  #: "question 3 (Does the essay ...?)"
    answer: str  #: "Yes" or "No"
    n: int  #: units that have an answer to it


@dataclass(frozen=True)
class JudgeSpread:
    """Does a judge tell the units apart? Over the ``n`` units it scored: how many got its most
    common score (``top_score``, ``top_score_count``) and its most common answer pattern
    (``top_pattern``: the answers to every question in order, ``top_pattern_count``; 0 when the
    judge gives no answers), the Spearman correlation of its scores with the units' length
    (``length``, None when the lengths are unknown) and the questions answered the same way for
    every unit. ``flagged``: most units got the same answers or the same score, or the scores
    follow length closely (:data:`SAME_SHARE`, :data:`LENGTH_FLAG`); ``sentence`` says so in
    plain words."""

    who: str  #: "the checklist", "the personas' overall score"
    units: str  #: plural noun: "texts", "items"
    n: int
    top_score: float | None
    top_score_count: int
    top_pattern: str
    top_pattern_count: int
    length: Correlation | None
    constant_questions: tuple[ConstantQuestion, ...] = ()
    #: With human scores: (the judge's Spearman rho with them, the length's), on the units
    #: that have all three; None without human scores (or when either is undefined).
    versus_length: tuple[float, float] | None = None

    @property
    def same_pattern(self) -> bool:
        return (self.n >= MIN_SPREAD_UNITS and self.top_pattern_count > 1
                and self.top_pattern_count > SAME_SHARE * self.n)

    @property
    def same_score(self) -> bool:
        return (self.n >= MIN_SPREAD_UNITS and self.top_score_count > 1
                and self.top_score_count > SAME_SHARE * self.n)

    @property
    def follows_length(self) -> bool:
        c = self.length
        close = (c is not None and c.value is not None and c.n >= MIN_LENGTH_UNITS
                 and abs(c.value) >= LENGTH_FLAG)
        if not close or self.versus_length is None:
            return close
        judge, length = self.versus_length
        return judge < length + LENGTH_MARGIN

    @property
    def flagged(self) -> bool:
        return self.same_pattern or self.same_score or self.follows_length

    def problems(self) -> list[str]:
        """What is wrong, one clause each ("" when nothing)."""
        out = []
        if self.same_pattern:
            out.append(f"{self.top_pattern_count} of {self.n} {self.units} got exactly the "
                       f"same answers ({self.top_pattern})")
        if self.same_score and not (self.same_pattern
                                    and self.top_pattern_count >= self.top_score_count):
            every = self.top_score_count == self.n
            out.append((f"every one of the {self.n} {self.units}" if every else
                        f"{self.top_score_count} of {self.n} {self.units}")
                       + f" got the same score ({_fmt_value(round(self.top_score or 0, 3))})")
        if self.follows_length:
            c = self.length
            assert c is not None and c.value is not None
            way = "longer" if c.value > 0 else "shorter"
            clause = (f"the scores follow the {self.units}' length closely (rank correlation "
                      f"{c.value:.2f} with the number of words: the {way}, the higher)")
            if self.versus_length is not None:
                judge, length = self.versus_length
                clause += (f" and agree with people no better than the length alone does "
                           f"({judge:.2f} against {length:.2f})")
            out.append(clause)
        return out

    @property
    def sentence(self) -> str:
        """The warning for the results page, the Agreement sheet and the Read me; "" when the
        judge does tell the units apart."""
        found = self.problems()
        if not found:
            return ""
        return (f"{_sentence(self.who)} may not be reading the {self.units}: "
                + "; ".join(found) + ". Its agreement with people can come from that alone: "
                "read some of its answers (Check the judge) before trusting it, or try a "
                "larger model.")

    @property
    def question_sentence(self) -> str:
        """The questions answered the same way for every unit ("" when none)."""
        if not self.constant_questions:
            return ""
        parts = [f"{q.label} was answered {q.answer} for all {q.n} {self.units}"
                 for q in self.constant_questions]
        tells = "tells" if len(parts) == 1 else "tell"
        return "; ".join(parts) + f": {'it' if len(parts) == 1 else 'they'} {tells} no " \
            f"{self.unit} apart."

    @property
    def unit(self) -> str:
        """The singular of :attr:`units`."""
        return self.units.removesuffix("s")

    def rows(self, comparison: str) -> list[dict[str, Any]]:
        """Rows of an Agreement sheet (:data:`ROW_COLUMNS`), kind :data:`SPREAD_KIND`."""
        def row(statistic: str, value: Any, n: int, note: str, **extra: Any) -> dict[str, Any]:
            return {"comparison": comparison, "statistic": statistic, "kind": SPREAD_KIND,
                    "value": value, "p_value": extra.get("p"), "ci_low": extra.get("low"),
                    "ci_high": extra.get("high"), "n": n, "note": note}

        out = []
        if self.n == 0:
            return [row("share with the most common score", None, 0,
                        f"Not computed: no {self.unit} has a score")]
        if self.top_pattern_count:
            out.append(row("share with the most common answers",
                           self.top_pattern_count / self.n, self.n,
                           _join(f"{self.top_pattern_count} of {self.n} {self.units}: "
                                 f"{self.top_pattern}",
                                 "FLAGGED: most got the same answers" if self.same_pattern
                                 else "")))
        out.append(row("share with the most common score", self.top_score_count / self.n,
                       self.n, _join(f"{self.top_score_count} of {self.n} {self.units} scored "
                                     f"{_fmt_value(round(self.top_score or 0, 3))}",
                                     "FLAGGED: most got the same score" if self.same_score
                                     else "")))
        c = self.length
        if c is not None:
            out.append(row(f"Spearman rho with {LENGTH_NAME}", c.value, c.n,
                           _join("FLAGGED: the scores follow length closely"
                                 if self.follows_length else "",
                                 c.note if c.defined else f"Not computed: {c.reason}"),
                           p=c.p_value, low=c.ci_low, high=c.ci_high))
        if self.constant_questions:
            out.append(row(f"questions answered the same for every {self.unit}",
                           len(self.constant_questions), self.n, self.question_sentence))
        return out


def _pattern_text(pattern: Any) -> str:
    if isinstance(pattern, str):
        return pattern
    return ", ".join(_fmt_value(v) for v in pattern)


def judge_spread(scores: Sequence[Any], *, patterns: Sequence[Any] | None = None,
                 lengths: Sequence[Any] | None = None,
                 questions: Mapping[str, Sequence[Any]] | None = None,
                 human: Sequence[Any] | None = None,
                 who: str = "the judge", units: str = "texts", n_boot: int = 1000,
                 seed: int = 0) -> JudgeSpread:
    """How well a judge tells the units apart (:class:`JudgeSpread`). ``scores``: its score of
    each unit (None/NaN: no score, left out with the unit's pattern and length); ``patterns``:
    each unit's answers to every question (a string such as "YNYY" or a tuple of scores),
    compared as they are; ``lengths``: each unit's length (:func:`word_count`), correlated with
    the scores by :func:`correlations` (the same bootstrap); ``questions``: question label ->
    its answer for each unit (True/False/None), to find the ones answered the same way for every
    unit; ``human``: people's score of each unit (None: missing): then scores that follow
    length are flagged only when they agree with people no better than the length alone
    (:data:`LENGTH_MARGIN`)."""
    values = _numeric_vector(scores, "the judge's scores")
    keep = ~np.isnan(values)
    n = int(keep.sum())
    top_score, top_count = None, 0
    if n:
        found, counts = np.unique(values[keep], return_counts=True)
        best = int(np.argmax(counts))
        top_score, top_count = float(found[best]), int(counts[best])
    top_pattern, pattern_count = "", 0
    if patterns is not None:
        if len(patterns) != values.shape[0]:
            raise ValueError("give one answer pattern per score")
        tally: dict[Any, int] = {}
        for pattern, k in zip(patterns, keep, strict=True):
            if k and pattern is not None:
                key = pattern if isinstance(pattern, str) else tuple(pattern)
                tally[key] = tally.get(key, 0) + 1
        if tally:
            first = max(tally.values())
            key = next(p for p, c in tally.items() if c == first)
            top_pattern, pattern_count = _pattern_text(key), first
    length = None
    if lengths is not None:
        if len(lengths) != values.shape[0]:
            raise ValueError("give one length per score")
        length = correlations(values, lengths, n_boot=n_boot, seed=seed,
                              x_name="the judge's scores", y_name="the lengths").spearman
    versus = None
    if lengths is not None and human is not None:
        if len(human) != values.shape[0]:
            raise ValueError("give one human score per score")
        lv = _numeric_vector(lengths, "the lengths")
        hv = _numeric_vector(human, "the human scores")
        ok = ~(np.isnan(values) | np.isnan(lv) | np.isnan(hv))
        if ok.sum() >= _MIN_PAIRS:
            judge_h = correlations(values[ok], hv[ok], n_boot=0).spearman.value
            length_h = correlations(lv[ok], hv[ok], n_boot=0).spearman.value
            if judge_h is not None and length_h is not None:
                versus = (judge_h, length_h)
    constant = []
    for label, answers in (questions or {}).items():
        given = [a for a in answers if a is not None]
        if len(given) >= MIN_SPREAD_UNITS and all(a == given[0] for a in given):
            constant.append(ConstantQuestion(label, "Yes" if given[0] else "No", len(given)))
    return JudgeSpread(who, units, n, top_score, top_count, top_pattern, pattern_count, length,
                       tuple(constant), versus)


def length_sentence(judge: float | None, length: float | None, *, who: str = "the judge",
                    symbol: str = "ρ") -> str:
    """Beside an agreement with people: what the texts' length alone gives. "" without a
    length baseline."""
    if length is None:
        return ""
    if judge is not None and length >= judge:
        return (f"Text length alone agrees as well or better ({symbol} = {length:.2f}): "
                f"{who} may add nothing beyond the texts' length.")
    return f"Text length alone: {symbol} = {length:.2f}."


# --------------------------------------------------------------------------------------------
# Plain words for the results screens
# --------------------------------------------------------------------------------------------


def format_p(p: float | None) -> str:
    """A p-value as people read it: "p < 0.001", "p = 0.013", "p = 0.21"; "" when None."""
    if p is None or not math.isfinite(p):
        return ""
    if p < 0.001:
        return "p < 0.001"
    if p < 0.1:
        return f"p = {p:.3f}"
    return f"p = {p:.2f}" if p < 0.995 else "p = 1"


def strength(value: float) -> str:
    """How strongly a correlation agrees, in words (by its size; the sign is said apart)."""
    size = abs(value)
    if size < 0.1:
        return "hardly"
    if size < 0.3:
        return "weakly"
    if size < 0.7:
        return "moderately"
    return "strongly"


def plain_agreement(value: float | None, *, n: int, who: str = "the method",
                    against: str = "your ratings", units: str = "people",
                    symbol: str = "r", ci_low: float | None = None,
                    ci_high: float | None = None, p_value: float | None = None,
                    reason: str = "") -> str:
    """One sentence a teacher can act on: "AQER agrees moderately with your grades: r = 0.59
    over 30 students (95% CI 0.30 to 0.78, p < 0.001)." A CI that crosses zero is explained."""
    if value is None:
        return f"How well {who} agrees with {against} cannot be said: {reason or 'no value'}."
    if value < 0 and abs(value) >= 0.1:
        head = f"{_sentence(who)} {strength(value)} disagrees with {against}"
    else:
        head = f"{_sentence(who)} agrees {strength(value)} with {against}"
    numbers_ = f"{symbol} = {value:.2f} over {n} {units}"
    extra = []
    if ci_low is not None and ci_high is not None:
        extra.append(f"95% CI {ci_low:.2f} to {ci_high:.2f}")
    if p_value is not None:
        extra.append(format_p(p_value))
    sentence = f"{head}: {numbers_}" + (f" ({', '.join(extra)})" if extra else "") + "."
    if ci_low is not None and ci_high is not None and ci_low < 0 < ci_high:
        sentence += (f" The interval includes 0: too few {units} to be sure that there is any "
                     "agreement at all.")
    return sentence


# --------------------------------------------------------------------------------------------
# Repeat runs: does the judge give the same score when asked again?
# --------------------------------------------------------------------------------------------

#: Krippendorff's (2004) threshold below which agreement allows only tentative conclusions.
STABILITY_THRESHOLD = 0.667


@dataclass(frozen=True)
class UnitSpread:
    """One unit's scores over the repeats: ``sd`` is the sample standard deviation and
    ``range`` max - min over the repeats that gave a score (None with fewer than 2)."""

    unit: str
    scores: tuple[float | None, ...]
    n: int  #: repeats that gave a score
    mean: float | None
    sd: float | None
    range: float | None


@dataclass(frozen=True)
class RepeatStability:
    """How alike a judge's scores are when the same calls are made again (repeat runs).

    ``alpha`` is Krippendorff's alpha (interval level) with the repeats as raters and the units
    as units; ``flagged`` is True when it is below :data:`STABILITY_THRESHOLD`; ``sentence``
    says it in plain words."""

    units: tuple[UnitSpread, ...]
    alpha: AlphaResult
    n_repeats: int
    who: str
    threshold: float = STABILITY_THRESHOLD
    unit_name: str = "unit"

    @property
    def flagged(self) -> bool:
        return self.alpha.value is not None and self.alpha.value < self.threshold

    @property
    def mean_sd(self) -> float | None:
        sds = [u.sd for u in self.units if u.sd is not None]
        return float(np.mean(sds)) if sds else None

    @property
    def max_range(self) -> float | None:
        ranges = [u.range for u in self.units if u.range is not None]
        return max(ranges) if ranges else None

    @property
    def sentence(self) -> str:
        who = _sentence(self.who)
        if self.n_repeats < 2:
            return f"{who} was asked once: repeat the calls (2 or more times) to see if it " \
                   "gives the same scores when asked again."
        a = self.alpha
        if a.value is None:
            return (f"How alike the {self.n_repeats} repeats are cannot be said: "
                    f"{a.reason or 'no value'}.")
        units = f"{a.n_units} {self.unit_name}{'s' if a.n_units != 1 else ''}"
        if self.flagged:
            return (f"{who} gives different scores when asked again (agreement between "
                    f"repeats {a.value:.2f} over {units}, below {self.threshold:.3g}): treat "
                    "single scores with care.")
        return (f"{who} gives much the same scores when asked again (agreement between "
                f"repeats {a.value:.2f} over {units}, {self.n_repeats} repeats).")

    def rows(self) -> list[dict[str, Any]]:
        """One row per unit: its scores per repeat, mean, SD and range."""
        out = []
        for u in self.units:
            row: dict[str, Any] = {"unit": u.unit}
            for k, value in enumerate(u.scores):
                row[f"repeat {k}"] = value
            row.update({"repeats scored": u.n, "mean": u.mean, "sd": u.sd, "range": u.range})
            out.append(row)
        return out


def repeat_stability(scores_by_repeat: Mapping[Any, Sequence[Any]] | Sequence[Sequence[Any]],
                     *, who: str = "the judge", threshold: float = STABILITY_THRESHOLD,
                     unit_name: str = "unit") -> RepeatStability:
    """The stability of scores over repeat runs. ``scores_by_repeat`` is a table unit x repeat:
    a mapping unit -> the scores of repeats 0..N-1, or a list of such rows (units named by
    their position). None, NaN and text that is not a number are missing (a failed call), never
    a score. Per unit: sample SD and range over its scores; overall: Krippendorff's alpha at
    the interval level with the repeats as raters (:func:`krippendorff_alpha`). ``who`` and
    ``unit_name`` ("item", "text") are the words of the plain sentence."""
    if isinstance(scores_by_repeat, Mapping):
        named = [(str(k), list(v)) for k, v in scores_by_repeat.items()]
    else:
        named = [(str(i + 1), list(v)) for i, v in enumerate(scores_by_repeat)]
    n_repeats = max((len(v) for _, v in named), default=0)
    units = []
    matrix = []
    for name, values in named:
        numbers_: list[float | None] = []
        for value in [*values, *([None] * (n_repeats - len(values)))]:
            numbers_.append(None if _is_missing(value) else _maybe_number(value))
        matrix.append(numbers_)
        present = np.array([v for v in numbers_ if v is not None], dtype=float)
        units.append(UnitSpread(
            unit=name, scores=tuple(numbers_), n=int(present.size),
            mean=float(present.mean()) if present.size else None,
            sd=float(present.std(ddof=1)) if present.size >= 2 else None,
            range=float(present.max() - present.min()) if present.size >= 2 else None))
    raters = [[row[k] for row in matrix] for k in range(n_repeats)]
    alpha = krippendorff_alpha(raters if raters and matrix else [[None]], "interval")
    return RepeatStability(tuple(units), alpha, n_repeats, who, threshold, unit_name)


def _maybe_number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def stability_columns(n_repeats: int) -> list[str]:
    """The columns of :func:`stability_rows` for ``n_repeats`` repeats."""
    return ["condition", "dimension", "unit", *[f"repeat {k}" for k in range(n_repeats)],
            "repeats scored", "mean", "sd", "range", "alpha", "n", "note"]


def stability_rows(entries: Iterable[tuple[str, str, RepeatStability]], *,
                   unit_name: str = "item") -> list[dict[str, Any]]:
    """The rows of a "Stability" sheet for ``(condition, dimension, stability)`` entries: first a
    row per condition and dimension with Krippendorff's alpha (interval) across the repeats,
    its number of units and the plain sentence; then one row per unit with its scores per
    repeat, mean, SD and range (empty = that repeat failed or the spread needs 2 scores)."""
    summary, units = [], []
    for condition, dimension, result in entries:
        summary.append({"condition": condition, "dimension": dimension,
                        "unit": f"all {unit_name}s: Krippendorff's alpha (interval) across "
                                f"{result.n_repeats} repeats",
                        "alpha": result.alpha.value, "n": result.alpha.n_units,
                        "note": result.sentence})
        for row in result.rows():
            unit = row.pop("unit")
            units.append({"condition": condition, "dimension": dimension, "unit": unit, **row})
    return summary + units
