"""Scoring LLM answers against the crowd (paper section 4.5).

An LLM's answer to question j is embedded with the same model and scored by its cosine
similarity with SEA_j, the synthetic exemplary answer built from the *workers'* answers only,
with the final weights: LLM answers never enter the SEA (unless the user chose to score LLMs as
extra workers, in which case they are workers like the others). Several LLMs at once; a mean
per LLM.

Like for like: a worker's own answer is part of the SEA it is compared with, an AI's is not, so
an AI exactly as good as the workers would look worse than them. AI answers are therefore
placed among the workers by each worker's similarity to the consensus of the *other* workers
(``similarity_to_others``): ``percentile_among_workers`` is the share of workers (0-100) whose
similarity to the others is below the AI's mean score.

On the workers' scale: a worker's score runs from 0 (the weakest) to 1 (the best), an AI's mean
score is a raw similarity, so "ChatGPT 0.72" beside "Ana 0.64" compares two scales.
``score_on_workers_scale`` is the score a worker with the AI's like-for-like similarity would
have: the workers' scores read off at the AI's similarity to the others (straight lines between
neighbouring workers; the weakest worker's score below them all, the best's above).
Similarity follows wording as well as meaning, so length and style move it, not only
correctness (:data:`STYLE_WORDS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from core.aqer.model import LLM_ANSWER_COLUMNS, LLM_SUMMARY_COLUMNS
from core.aqer.synthetic_exemplary_answer import cosine_rows

__all__ = [
    "STYLE_WORDS",
    "ai_words",
    "llm_answer_tables",
    "on_workers_scale",
    "percentile_among",
    "score_llm_answers",
    "where_ai_answers_go",
]

#: The one sentence every AI comparison carries (screens, workbook, command line).
STYLE_WORDS = (
    "Similarity measures how close an answer's words and meaning come to the consensus, so "
    "length and style move it too, not only correctness: an AI that answers everything right "
    "in full sentences can land below people who answered in a few words."
)


def score_llm_answers(vectors: np.ndarray, question: np.ndarray, sea: np.ndarray) -> np.ndarray:
    """cosine(LLM answer, SEA of its question); NaN where ``question`` is -1 (no SEA)."""
    question = np.asarray(question, dtype=np.int64)
    scores = np.full(len(question), np.nan)
    has_sea = question >= 0
    if has_sea.any():
        scores[has_sea] = cosine_rows(
            np.asarray(vectors)[has_sea], np.asarray(sea)[question[has_sea]]
        )
    return scores


def percentile_among(workers: np.ndarray, value: float | None) -> float | None:
    """Share of ``workers`` (0-100) strictly below ``value``; None without a value or workers."""
    workers = np.asarray(workers, dtype=np.float64)
    workers = workers[np.isfinite(workers)]
    if value is None or not np.isfinite(value) or not len(workers):
        return None
    return float(100.0 * np.mean(workers < value))


def on_workers_scale(similarity: np.ndarray, scores: np.ndarray,
                     value: float | None) -> float | None:
    """``value`` (a similarity to the consensus, measured like the workers' ``similarity``, the
    like-for-like measure) on the workers' 0-1 score scale: ``scores`` read off at ``value``
    along the workers sorted by ``similarity`` (straight lines between neighbours; the end
    workers' scores beyond them). None without a value or workers."""
    x = np.asarray(similarity, dtype=np.float64)
    y = np.asarray(scores, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    if value is None or not np.isfinite(value) or not ok.any():
        return None
    order = np.argsort(x[ok], kind="stable")
    return float(np.interp(value, x[ok][order], y[ok][order]))


def where_ai_answers_go(layout: str) -> str:
    """How to give AQER an AI's answers, in the words of the sheet's layout (``layout`` as the
    Read me names it: "long (a row per answer)", "wide (a row per worker)", "wide (a row per
    question)"): never a column where the layout has a row."""
    if "row per worker" in layout or "row per person" in layout:
        return ("add a row for each AI (its name in the name column, its answers under the "
                "questions) and tick that row under “AI answers” on the Columns page "
                "(--llm-worker NAME)")
    if "row per question" in layout:
        return ("add a column for each AI beside the people's columns and tick it under “AI "
                "answers” on the Columns page (--llm-col COLUMN)")
    return ("mark its rows in a column called “is_llm” (yes/no) or name the model in a column "
            "called “model”, or give each AI a column beside the answer and tick it under “AI "
            "answers” on the Columns page (--llm-col COLUMN)")


def ai_words(row: Any) -> str:
    """An AI model's line of the AI summary in words, on the workers' scale first: "0.35 on
    the workers' 0-1 scale, above 30% of the workers (like for like; mean similarity 0.590
    over 10 answers)"."""

    def number(key: str) -> float | None:
        try:
            value = float(row.get(key))
        except (TypeError, ValueError):
            return None
        return value if np.isfinite(value) else None

    mean, place = number("mean_score"), number("percentile_among_workers")
    scale = number("score_on_workers_scale")
    if mean is None:
        return "not scored"
    parts = []
    if scale is not None:
        parts.append(f"{scale:.2f} on the workers' 0-1 scale")
    if place is not None:
        parts.append("above every worker" if place >= 100 else
                     "below every worker" if place <= 0 else
                     f"above {place:.0f}% of the workers")
    scored = int(row.get("scored") or 0)
    detail = (f"like for like; mean similarity {mean:.3f} over {scored} "
              f"answer{'s' if scored != 1 else ''}")
    return (", ".join(parts) + f" ({detail})") if parts else f"mean similarity {mean:.3f}"


def llm_answer_tables(
    models: list[str],
    questions: list[str],
    responses: list[str | None],
    scores: np.ndarray,
    worker_similarity: np.ndarray | None = None,
    blank: list[bool] | None = None,
    workers_by_question: dict[str, float] | None = None,
    worker_scores: np.ndarray | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``LLM answers`` frame (one row per answer, with the model's mean) and a per-model
    summary: ``mean_score`` over scored answers (counted blanks included), how many were
    ``scored`` / ``answered`` / left ``blank`` (rows where ``blank`` is true: response None,
    score the weakest answer's), and ``percentile_among_workers`` against
    ``worker_similarity`` (each worker's similarity to the others' consensus).
    ``workers_by_question`` (question -> the workers' mean similarity to the others' consensus)
    fills the answers' ``workers_similarity_to_others`` column, the like-for-like comparison.
    ``worker_scores`` (each worker's 0-1 score, in ``worker_similarity``'s order) gives
    ``score_on_workers_scale`` (:func:`on_workers_scale`)."""
    answers = pd.DataFrame(
        {"model": models, "question": questions, "response": responses, "score": scores}
    )
    is_blank = pd.Series(blank if blank is not None else [False] * len(answers), dtype=bool)
    is_blank.index = answers.index
    summary_rows = []
    for model, group in answers.groupby("model", sort=False):
        scored = group["score"].dropna()
        mean = float(scored.mean()) if len(scored) else None
        summary_rows.append(
            {
                "model": model,
                "mean_score": mean,
                "scored": len(scored),
                "answered": int((~is_blank[group.index]).sum()),
                "blank": int(is_blank[group.index].sum()),
                "percentile_among_workers": (
                    percentile_among(worker_similarity, mean)
                    if worker_similarity is not None
                    else None
                ),
                "score_on_workers_scale": (
                    on_workers_scale(worker_similarity, worker_scores, mean)
                    if worker_similarity is not None and worker_scores is not None
                    else None
                ),
            }
        )
    summary = pd.DataFrame(summary_rows, columns=LLM_SUMMARY_COLUMNS)
    means = dict(zip(summary["model"], summary["mean_score"]))
    answers["model_mean"] = [means.get(m) for m in answers["model"]]
    answers["score"] = answers["score"].astype(object).where(answers["score"].notna(), None)
    answers["workers_similarity_to_others"] = [
        (workers_by_question or {}).get(q) for q in answers["question"]
    ]
    return answers[LLM_ANSWER_COLUMNS], summary
