"""RASA (Li & Fukumoto 2019), the paper's strongest baseline without an LLM, from its formula.

Worker reliabilities beta start at 1. Each round: the aggregate answer of task t is the
beta-weighted mean of the embeddings, ê_t = sum_k beta_k e_tk / sum_k beta_k; then
beta_k = chi2.isf(alpha / 2, n_k) / sum_t ||e_tk - ê_t||^2 with n_k the number of tasks worker k
did. Stop when the aggregates move by less than ``tolerance`` (squared change relative to their
squared size) or after ``max_iterations`` rounds. A higher ``skill`` means a more reliable worker.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.aqer.synthetic_exemplary_answer import EmbeddedResponses
from core.runs import CancelToken

__all__ = ["RasaOutcome", "rasa_skills"]

_CHUNK = 4_096
#: Smallest total distance (a worker identical to the aggregate would get infinite skill).
_MIN_DISTANCE = 1e-5


@dataclass
class RasaOutcome:
    skill: np.ndarray
    aggregate: np.ndarray
    iterations: int
    converged: bool


def _squared_distances(responses: EmbeddedResponses, aggregate: np.ndarray) -> np.ndarray:
    """Per worker, the sum over their answers of ||e - ê||^2."""
    vectors, questions = responses.sorted_vectors, responses.question_sorted
    per_answer = np.empty(len(responses), dtype=np.float64)
    for start in range(0, len(responses), _CHUNK):
        stop = start + _CHUNK
        diff = vectors[start:stop] - aggregate[questions[start:stop]]
        per_answer[start:stop] = np.einsum("ij,ij->i", diff, diff)
    return np.bincount(responses.worker_sorted, weights=per_answer, minlength=responses.n_workers)


def rasa_skills(
    responses: EmbeddedResponses,
    alpha: float = 0.05,
    max_iterations: int = 100,
    tolerance: float = 1e-9,
    cancel: CancelToken | None = None,
) -> RasaOutcome:
    """Estimate every worker's RASA reliability on the same embeddings AQER uses."""
    from scipy.stats import chi2

    prior = chi2.isf(alpha / 2, responses.answered_by_worker.astype(np.float64))
    skill = np.ones(responses.n_workers, dtype=np.float64)
    previous = None
    aggregate = None
    converged = False
    iteration = 0
    for iteration in range(1, max_iterations + 1):
        if cancel is not None:
            cancel.raise_if_cancelled()
        sums, totals = responses.weighted_sums(skill)
        aggregate = (sums / np.maximum(totals, 1e-300)[:, None]).astype(np.float32)
        distances = np.maximum(_squared_distances(responses, aggregate), _MIN_DISTANCE)
        skill = prior / distances
        if previous is not None:
            change = float(np.sum((aggregate.astype(np.float64) - previous) ** 2))
            size = float(np.sum(aggregate.astype(np.float64) ** 2))
            if size > 0 and change / size < tolerance:
                converged = True
                break
        previous = aggregate.astype(np.float64)
    return RasaOutcome(skill=skill, aggregate=aggregate, iterations=iteration, converged=converged)
