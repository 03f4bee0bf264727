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
from core.reliability.corrected_mean import CorrectedMean, corrected_mean
from core.reliability.correlation_difference import zou_difference
from core.reliability.grading_order import (
    GradingOrder,
    RandomSample,
    draw_random_sample,
    grading_order,
    width_after_each_grade,
)
from core.reliability.icc import ICC_FORMS, icc
from core.reliability.report import ReliabilityReport, reliability_report

__all__ = [
    "GUIDES",
    "ICC_FORMS",
    "RELIABILITY_COLUMNS",
    "CorrectedMean",
    "GradingOrder",
    "RandomSample",
    "Reliability",
    "ReliabilityReport",
    "StatisticGuide",
    "bootstrap_indices",
    "cohen_kappa",
    "corrected_mean",
    "draw_random_sample",
    "fleiss_kappa",
    "grading_order",
    "gwet_ac1",
    "icc",
    "krippendorff_alpha_ci",
    "percent_agreement",
    "reliability_report",
    "width_after_each_grade",
    "zou_difference",
]
