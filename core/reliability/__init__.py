"""Reliability statistics reviewers ask for (issue 32): agreement among raters and between a
judge and people, each with a 95% interval and its n; Zou's interval for comparing two judges'
correlations with people; the judge's mean corrected by a random sample of human grades
(prediction-powered inference); and the order in which to grade items.

Pure functions, no project access: the screens, the exports and the CLI call them.
"""

from core.reliability._common import GUIDES, RELIABILITY_COLUMNS, Reliability, StatisticGuide
from core.reliability.agreement import (
    bootstrap_indices,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha_ci,
    percent_agreement,
)

__all__ = [
    "GUIDES",
    "RELIABILITY_COLUMNS",
    "Reliability",
    "StatisticGuide",
    "bootstrap_indices",
    "cohen_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha_ci",
    "percent_agreement",
]
