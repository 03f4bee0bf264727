"""Every statistic that fits a kind of rating, and which one to put first, with why: what the
agreement screens and exports show for one question or dimension."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.reliability._common import Reliability, code_table
from core.reliability.agreement import (
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha_ci,
    percent_agreement,
)
from core.reliability.icc import ICC_FORMS, icc

__all__ = ["DOMINANT_SHARE", "SCALES", "ReliabilityReport", "reliability_report"]

#: The kinds of rating: answers without an order (Yes/No, categories), an ordered scale
#: (marks 1-5), numbers (scores).
SCALES = ("nominal", "ordinal", "interval")
#: When one answer is at least this share of all ratings, kappa and alpha understate agreement:
#: Gwet's AC1/AC2 goes first.
DOMINANT_SHARE = 0.8


@dataclass(frozen=True)
class ReliabilityReport:
    """The statistics in display order, the one to report first (``headline``, a statistic
    key) and why, in plain words."""

    results: tuple[Reliability, ...]
    headline: str
    why: str
    dominant_share: float  #: share of the most common answer among all ratings

    def __getitem__(self, key: str) -> Reliability:
        for result in self.results:
            if result.statistic == key:
                return result
        raise KeyError(key)

    @property
    def first(self) -> Reliability:
        return self[self.headline]

    def to_rows(self, comparison: str = "") -> list[dict[str, Any]]:
        rows = []
        for result in self.results:
            row = result.to_row(comparison=comparison)
            row["report_first"] = result.statistic == self.headline
            rows.append(row)
        return rows


def reliability_report(ratings: Any, scale: str = "nominal", *,
                       categories: Sequence[Any] | None = None, ci: float = 0.95,
                       n_boot: int = 1000, seed: int = 0) -> ReliabilityReport:
    """Every statistic for ``scale`` ("nominal", "ordinal" or "interval") on ``ratings`` (rows
    = raters, columns = units), with the one to report first."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)} (got {scale!r})")
    coded = code_table(ratings, categories=categories, numbers_only=scale == "interval")
    used = coded.codes[coded.codes >= 0]
    share = float(np.bincount(used).max() / used.shape[0]) if used.shape[0] else 0.0
    two = coded.n_raters == 2
    dominant = share >= DOMINANT_SHARE
    results: list[Reliability] = [percent_agreement(ratings, categories=categories, ci=ci)]
    if scale == "nominal":
        kappa = (cohen_kappa(ratings, categories=categories, ci=ci) if two
                 else fleiss_kappa(ratings, categories=categories, ci=ci))
        results += [kappa, gwet_ac1(ratings, categories=categories, ci=ci)]
        if dominant:
            headline, why = "gwet_ac1", _dominant_why(share)
        else:
            headline = kappa.statistic
            why = ("two raters and answers without an order: Cohen's kappa is the usual number"
                   if two else "three or more raters and answers without an order: Fleiss' "
                   "kappa is the usual number")
    elif scale == "ordinal":
        if two:
            results += [cohen_kappa(ratings, categories=categories, weights=w, ci=ci)
                        for w in ("quadratic", "linear")]
        results += [gwet_ac1(ratings, categories=categories, weights=w, ci=ci)
                    for w in ("quadratic", "linear")]
        if coded.numeric:
            results += [icc(ratings, form, ci=ci) for form in ICC_FORMS]
        if dominant:
            headline, why = "gwet_ac2_quadratic", _dominant_why(share)
        elif two:
            headline = "weighted_kappa_quadratic"
            why = "two raters on an ordered scale: quadratic weighted kappa is the usual number"
        elif coded.numeric:
            headline = "icc_2_1"
            why = ("three or more raters on a numbered scale: journals ask for ICC(2,1), "
                   "absolute agreement of a single rater")
        else:
            headline = "gwet_ac2_quadratic"
            why = "three or more raters on an ordered scale without numbers"
    else:
        results += [icc(ratings, form, ci=ci) for form in ICC_FORMS]
        headline = "icc_2_1"
        why = ("numeric scores: journals ask for ICC(2,1), absolute agreement of a single "
               "rater")
    results.append(krippendorff_alpha_ci(ratings, scale, n_boot=n_boot, seed=seed, ci=ci))
    report = ReliabilityReport(tuple(results), headline, why, share)
    if not report.first.defined:  # fall back to the first defined chance-corrected number
        for result in results[1:]:
            if result.defined:
                return ReliabilityReport(
                    tuple(results), result.statistic,
                    f"{report.first.name} is not defined here ({report.first.reason})", share)
    return report


def _dominant_why(share: float) -> str:
    return (f"one answer is {share * 100:.0f}% of all ratings: kappa and alpha understate "
            "agreement when one answer dominates, Gwet's coefficient does not")
