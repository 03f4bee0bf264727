"""AQER's iterative reweighting (paper section 4.2, Algorithm 1) and its one-pass ablation.

Round t: build each question's SEA from the current weights, score every answer by its cosine
similarity with the SEA, average per worker (``raw_score``), min-max the averages across workers
(``score``: best 1, worst 0) and set the new weights to the scores divided by their sum. Stop when
the RMSE between two consecutive weight vectors is below the tolerance or after the last round.
"Simplified AQER" (the paper's multidimensional voting alone) is round 1: equal weights.

Blank answers that count (a dense design, ``core.aqer.blanks``) are given as (worker, question)
pairs: each adds the weakest possible similarity for its question to the worker's mean
(:func:`core.aqer.blanks.blank_values`) and never enters a SEA (there is nothing to embed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.aqer.blanks import blank_values
from core.aqer.synthetic_exemplary_answer import (
    EmbeddedResponses,
    similarity_to_sea,
    synthetic_exemplary_answers,
)
from core.runs import CancelToken, Progress
from core.words import plain_number

__all__ = ["TIE_TOLERANCE", "ReweightingOutcome", "iterative_reweighting", "min_max"]

#: Raw scores closer than this count as a tie (cosines are computed in float32).
TIE_TOLERANCE = 1e-7


@dataclass
class ReweightingOutcome:
    """Per worker: ``score`` (min-max), ``raw_score`` (mean cosine), ``weight`` (the final
    weights, set from the last round's scores); per answer: ``similarity`` with the last round's
    SEA ``sea`` (n, d); ``final_sea``: the SEA of the final weights (what answers from outside
    the crowd are compared with; equal to ``sea`` once converged); the ``trace`` of (round,
    RMSE); ``blank_value``: what a counted blank scored per question in the last round."""

    score: np.ndarray
    raw_score: np.ndarray
    weight: np.ndarray
    similarity: np.ndarray
    sea: np.ndarray
    simplified_score: np.ndarray
    simplified_raw_score: np.ndarray
    final_sea: np.ndarray
    blank_value: np.ndarray
    trace: list[tuple[int, float]] = field(default_factory=list)
    iterations: int = 0
    converged: bool = False
    discriminates: bool = True
    fallback_questions: np.ndarray | None = None
    """Questions whose SEA fell back to the plain mean (all their workers had weight 0)."""


def min_max(values: np.ndarray) -> tuple[np.ndarray, bool]:
    """Scale to [0, 1] (best 1, worst 0). Returns (scaled, discriminates); on a tie all are 1."""
    values = np.asarray(values, dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    if high - low <= TIE_TOLERANCE:
        return np.ones_like(values), False
    return (values - low) / (high - low), True


def worker_means(
    responses: EmbeddedResponses,
    similarity: np.ndarray,
    blank_worker: np.ndarray | None = None,
    blank_score: np.ndarray | None = None,
) -> np.ndarray:
    """Each worker's mean similarity over the questions they answered, plus the counted blanks
    (``blank_worker[k]`` left a question blank that scores ``blank_score[k]``)."""
    sums = np.bincount(responses.worker, weights=similarity, minlength=responses.n_workers)
    counts = responses.answered_by_worker.astype(np.float64)
    if blank_worker is not None and len(blank_worker):
        sums = sums + np.bincount(blank_worker, weights=blank_score, minlength=responses.n_workers)
        counts = counts + np.bincount(blank_worker, minlength=responses.n_workers)
    return sums / np.maximum(counts, 1)


def iterative_reweighting(
    responses: EmbeddedResponses,
    max_iterations: int = 100,
    tolerance: float = 1e-6,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    blank_worker: np.ndarray | None = None,
    blank_question: np.ndarray | None = None,
) -> ReweightingOutcome:
    """Run AQER to convergence on embedded responses (every worker must have an answer or a
    counted blank: ``blank_worker[k]`` left ``blank_question[k]`` blank)."""
    if responses.n_workers < 2 or responses.n_questions < 2:
        raise ValueError("AQER needs at least 2 workers and 2 questions")
    blank_worker = np.asarray(blank_worker if blank_worker is not None else [], dtype=np.int64)
    blank_question = np.asarray(
        blank_question if blank_question is not None else [], dtype=np.int64
    )
    if len(blank_worker) != len(blank_question):
        raise ValueError("blank_worker and blank_question must have the same length")
    present = responses.answered_by_worker + np.bincount(
        blank_worker, minlength=responses.n_workers
    )
    if (present == 0).any():
        raise ValueError("every worker needs at least one answer")
    m = responses.n_workers
    weights = np.full(m, 1.0 / m)
    trace: list[tuple[int, float]] = []
    fallback_any = np.zeros(responses.n_questions, dtype=bool)
    if progress is not None:
        progress.start("AQER iterations", total=max_iterations)
    simplified_score = simplified_raw = None
    score = raw = similarity = sea = blank_value = None
    converged, discriminates = False, True
    iteration = 0
    for iteration in range(1, max_iterations + 1):
        if cancel is not None:
            cancel.raise_if_cancelled()
        sea, fallback = synthetic_exemplary_answers(responses, weights)
        fallback_any |= fallback
        similarity = similarity_to_sea(responses, sea)
        blank_value = blank_values(responses.question, similarity, responses.n_questions)
        raw = worker_means(responses, similarity, blank_worker, blank_value[blank_question])
        score, discriminates = min_max(raw)
        if iteration == 1:
            simplified_score, simplified_raw = score.copy(), raw.copy()
        if not discriminates:
            # The tie guard: min = max, nothing to reweight; equal weights, equal scores.
            new_weights = np.full(m, 1.0 / m)
        else:
            new_weights = score / score.sum()
        rmse = float(np.sqrt(np.mean((new_weights - weights) ** 2)))
        trace.append((iteration, rmse))
        weights = new_weights
        if progress is not None:
            progress.advance(1, detail=f"round {iteration}: change in weights "
                                       f"{plain_number(rmse, 2)}")
        if not discriminates:
            break
        if rmse < tolerance:
            converged = True
            break
    if (score is None or raw is None or similarity is None or sea is None
            or simplified_score is None or simplified_raw is None
            or blank_value is None):  # no round ran
        raise ValueError("AQER needs at least one round (max_iterations >= 1)")
    final_sea, final_fallback = synthetic_exemplary_answers(responses, weights)
    fallback_any |= final_fallback
    return ReweightingOutcome(
        score=score,
        raw_score=raw,
        weight=weights,
        similarity=similarity,
        sea=sea,
        simplified_score=simplified_score,
        simplified_raw_score=simplified_raw,
        trace=trace,
        iterations=iteration,
        converged=converged,
        discriminates=discriminates,
        fallback_questions=fallback_any,
        final_sea=final_sea,
        blank_value=blank_value,
    )
