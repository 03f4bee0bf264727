"""Best-response selection (paper 6.3.2): per question, the answer closest to its SEA."""

from __future__ import annotations

import numpy as np

__all__ = ["best_responses"]


def best_responses(question: np.ndarray, similarity: np.ndarray, n_questions: int) -> np.ndarray:
    """Index of the most similar answer per question (-1 where a question has no answer).

    On a tie the earlier answer wins.
    """
    question = np.asarray(question, dtype=np.int64)
    similarity = np.asarray(similarity, dtype=np.float64)
    best = np.full(n_questions, -1, dtype=np.int64)
    if len(question) == 0:
        return best
    # Grouped by question (a stable sort keeps each group's answers in their order), each
    # group's highest similarity, then the first answer of the group that has it.
    order = np.argsort(question, kind="stable")
    grouped = question[order]
    values = np.where(np.isnan(similarity), -np.inf, similarity)[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    highest = np.maximum.reduceat(values, starts)
    group = np.cumsum(np.r_[False, grouped[1:] != grouped[:-1]])
    hits = np.flatnonzero(values == highest[group])
    first_hit = hits[np.r_[True, group[hits][1:] != group[hits][:-1]]]
    best[grouped[first_hit]] = order[first_hit]
    return best
