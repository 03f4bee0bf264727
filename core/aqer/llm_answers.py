"""Scoring LLM answers against the crowd (paper section 4.5).

An LLM's answer to question j is embedded with the same model and scored by its cosine
similarity with SEA_j, the synthetic exemplary answer built from the *workers'* answers only:
LLM answers never enter the SEA (unless the user chose to score LLMs as extra workers, in which
case they are workers like the others). Several LLMs at once; a mean per LLM.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.aqer.model import LLM_ANSWER_COLUMNS, LLM_SUMMARY_COLUMNS
from core.aqer.synthetic_exemplary_answer import cosine_rows

__all__ = ["llm_answer_tables", "score_llm_answers"]


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


def llm_answer_tables(
    models: list[str], questions: list[str], responses: list[str], scores: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``LLM answers`` frame (one row per answer, with the model's mean) and a per-model
    summary (``mean_score`` over scored answers, how many were ``scored`` / ``answered``)."""
    answers = pd.DataFrame(
        {"model": models, "question": questions, "response": responses, "score": scores}
    )
    summary_rows = []
    for model, group in answers.groupby("model", sort=False):
        scored = group["score"].dropna()
        summary_rows.append(
            {
                "model": model,
                "mean_score": float(scored.mean()) if len(scored) else None,
                "scored": int(len(scored)),
                "answered": int(len(group)),
            }
        )
    summary = pd.DataFrame(summary_rows, columns=LLM_SUMMARY_COLUMNS)
    means = dict(zip(summary["model"], summary["mean_score"]))
    answers["model_mean"] = [means.get(m) for m in answers["model"]]
    answers["score"] = answers["score"].astype(object).where(answers["score"].notna(), None)
    return answers[LLM_ANSWER_COLUMNS], summary
