"""Several people grading for "Check the judge": who grades which items and in what order
(:mod:`core.grading.plan`), the Excel rating sheet made for each rater and read back with its
checks (:mod:`core.grading.sheets`), the items raters disagree on and the grades they agreed
(:mod:`core.grading.adjudication`), and the statistics reviewers ask for, computed from the
ratings: agreement between people and between the judge and people with 95% intervals, the
judge's mean corrected by a random sample of grades, every label with its origin
(:mod:`core.grading.statistics`).

Method-neutral like :mod:`core.judge_check`, whose :class:`~core.judge_check.JudgeData` and
:class:`~core.judge_check.Rating` it works on; the statistics themselves are
:mod:`core.reliability`'s.
"""

from __future__ import annotations
