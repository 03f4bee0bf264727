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
    order = np.lexsort((np.arange(len(question)), -similarity, question))
    firsts = order[np.r_[True, np.diff(question[order]) != 0]]
    best[question[firsts]] = firsts
    return best
