"""Agreement of AQER (and the baselines) with expert grades, when the sheet has them.

A worker's expert grade is the mean grade of their graded answers among those AQER scored (the
paper's Table 3 compares each worker's score with it), or, when the teacher gave one grade per
person (a grade column of a wide sheet, or a grades sheet), that grade as it is. The answer-level row compares each
answer's similarity to its SEA with that answer's grade. Grades on AI answers (the paper's
Fig. 3) are compared with the AI answers' AQER scores, per answer: all models pooled, and each
model on its own when there are several. Statistics come from ``core.stats.correlations`` (Pearson, Spearman,
Kendall with p-values and bootstrap intervals; undefined values say why).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

__all__ = ["N_BOOT", "SEED", "agreement_table"]

#: Above this many pairs the answer-level comparison skips its bootstrap interval (slow).
_BOOTSTRAP_LIMIT = 2_000
#: Bootstrap resamples and seed of every per-worker interval, here and on the Comparison sheet
#: (``core.aqer.comparison``): one number, one interval, wherever it is shown.
N_BOOT = 2000
SEED = 0


def agreement_table(
    worker_scores: Mapping[str, Any],
    expert_grade: Any,
    answer_similarity: Any = None,
    answer_grade: Any = None,
    ai_answers: Mapping[str, tuple[Any, Any]] | None = None,
    per_person: bool = False,
    lengths: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Rows of the ``Agreement`` sheet (columns ``core.stats.ROW_COLUMNS``).

    ``worker_scores`` maps a method's name ("AQER score", "RASA skill", ...) to per-worker values
    paired with ``expert_grade``; None entries are missing and are counted, not guessed.
    ``ai_answers`` maps a model's name ("" for all models pooled) to (AQER scores, grades) of
    its answers. ``per_person``: ``expert_grade`` is one grade given to each person (a grade
    column or a grades sheet), not the mean of their answers' grades. ``lengths`` (the length
    baseline, a row after each comparison with the same statistics): "worker" -> each
    worker's mean number of words per answer, "answer" -> each answer's, "ai:<model>" -> the
    AI answers' ("ai:" for all models).
    """
    from core import stats

    reports: dict[str, Any] = {}
    lengths = lengths or {}
    baseline = f"Answer length alone ({stats.LENGTH_NAME.split('(')[1].rstrip(')')})"
    grade = "expert grade" if per_person else "mean expert grade"
    for name, values in worker_scores.items():
        reports[f"{name} vs {grade} (per worker)"] = stats.correlations(
            list(values),
            list(expert_grade),
            x_name=f"the {name} values",
            y_name=f"the workers' {grade}s",
            label="per worker",
            n_boot=N_BOOT,
            seed=SEED,
        )
    if worker_scores and lengths.get("worker") is not None:
        reports[f"{baseline} vs {grade} (per worker, baseline)"] = stats.correlations(
            list(lengths["worker"]), list(expert_grade), x_name="the workers' answer lengths",
            y_name=f"the workers' {grade}s", label="per worker")

    def per_answer(x: Any, y: Any, x_name: str, y_name: str, label: str) -> Any:
        x, y = list(x), list(y)
        return stats.correlations(x, y, n_boot=1000 if len(x) <= _BOOTSTRAP_LIMIT else 0,
                                  x_name=x_name, y_name=y_name, label=label)

    if answer_similarity is not None and answer_grade is not None:
        reports["AQER similarity to the SEA vs expert grade (per answer)"] = per_answer(
            answer_similarity, answer_grade, "the answers' similarities",
            "the answers' expert grades", "per answer")
        if lengths.get("answer") is not None:
            reports[f"{baseline} vs expert grade (per answer, baseline)"] = per_answer(
                lengths["answer"], answer_grade, "the answers' lengths",
                "the answers' expert grades", "per answer")
    for model, (scores, grades) in (ai_answers or {}).items():
        name = (
            "AI answers, all models: AQER score vs expert grade (per answer)"
            if not model
            else f"AI answers of {model}: AQER score vs expert grade (per answer)"
        )
        reports[name] = per_answer(scores, grades, "the AI answers' AQER scores",
                                   "the AI answers' expert grades", "AI answers, per answer")
        if lengths.get(f"ai:{model}") is not None:
            reports[name.replace("AQER score", baseline.lower()).replace(
                "(per answer)", "(per answer, baseline)")] = per_answer(
                lengths[f"ai:{model}"], grades, "the AI answers' lengths",
                "the AI answers' expert grades", "AI answers, per answer")
    rows = stats.agreement_rows(reports)
    return pd.DataFrame(rows, columns=list(stats.ROW_COLUMNS))
