"""RASA (Li & Fukumoto 2019), the paper's strongest baseline without an LLM, from its formula.

Worker reliabilities beta start at 1. Each round: the aggregate answer of task t is the
beta-weighted mean of the embeddings, ê_t = sum_k beta_k e_tk / sum_k beta_k; then
beta_k = chi2.isf(alpha / 2, n_k) / sum_t ||e_tk - ê_t||^2 with n_k the number of tasks worker k
did. Stop when the aggregates move by less than ``tolerance`` (squared change relative to their
squared size) or after ``max_iterations`` rounds. A higher ``skill`` means a more reliable worker.

RASA measures squared Euclidean distances, so it runs on L2-normalised embeddings (each answer
divided by its length; a zero vector stays zero): models whose vectors are not normalised (the
paper's stsb-roberta-large) would otherwise let the length of a vector, not its meaning, decide.
AQER itself compares by cosine, which ignores length. Counted blanks (a dense design) add, per
blank, the squared distance of an answer unrelated to the aggregate (a unit vector at right
angles to it: 1 + ||ê_t||^2), or the question's largest real distance if that is larger, and
count as a task done.
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


def _unit_scale(responses: EmbeddedResponses) -> np.ndarray:
    """1 / length of every answer vector (question order); 0 for a zero vector."""
    norms = responses.sorted_norms
    return np.where(norms > 0, 1.0 / np.maximum(norms, 1e-300), 0.0)


def _squared_distances(
    responses: EmbeddedResponses,
    aggregate: np.ndarray,
    scale: np.ndarray,
    blank_worker: np.ndarray,
    blank_question: np.ndarray,
) -> np.ndarray:
    """Per worker, the sum over their (unit) answers of ||e - ê||^2, plus their blanks."""
    vectors, questions = responses.sorted_vectors, responses.question_sorted
    per_answer = np.empty(len(responses), dtype=np.float64)
    for start in range(0, len(responses), _CHUNK):
        stop = start + _CHUNK
        unit = vectors[start:stop].astype(np.float64) * scale[start:stop, None]
        diff = unit - aggregate[questions[start:stop]]
        per_answer[start:stop] = np.einsum("ij,ij->i", diff, diff)
    out = np.bincount(responses.worker_sorted, weights=per_answer, minlength=responses.n_workers)
    if len(blank_worker):
        size = np.einsum("ij,ij->i", aggregate, aggregate).astype(np.float64)
        largest = np.zeros(responses.n_questions, dtype=np.float64)
        np.maximum.at(largest, questions, per_answer)
        blank = np.maximum(1.0 + size, largest)[blank_question]
        out += np.bincount(blank_worker, weights=blank, minlength=responses.n_workers)
    return out


def rasa_skills(
    responses: EmbeddedResponses,
    alpha: float = 0.05,
    max_iterations: int = 100,
    tolerance: float = 1e-9,
    cancel: CancelToken | None = None,
    blank_worker: np.ndarray | None = None,
    blank_question: np.ndarray | None = None,
) -> RasaOutcome:
    """Estimate every worker's RASA reliability on the same embeddings AQER uses (normalised
    to unit length here), counting ``blank_worker[k]``'s blank to ``blank_question[k]``."""
    from scipy.stats import chi2

    blank_worker = np.asarray(blank_worker if blank_worker is not None else [], dtype=np.int64)
    blank_question = np.asarray(
        blank_question if blank_question is not None else [], dtype=np.int64
    )
    tasks = responses.answered_by_worker + np.bincount(
        blank_worker, minlength=responses.n_workers
    )
    prior = chi2.isf(alpha / 2, tasks.astype(np.float64))
    scale = _unit_scale(responses)
    skill = np.ones(responses.n_workers, dtype=np.float64)
    previous = None
    aggregate = None
    converged = False
    iteration = 0
    for iteration in range(1, max_iterations + 1):
        if cancel is not None:
            cancel.raise_if_cancelled()
        sums, totals = responses.weighted_sums(skill, scale=scale)
        aggregate = (sums / np.maximum(totals, 1e-300)[:, None]).astype(np.float32)
        distances = np.maximum(
            _squared_distances(responses, aggregate, scale, blank_worker, blank_question),
            _MIN_DISTANCE,
        )
        skill = prior / distances
        if previous is not None:
            change = float(np.sum((aggregate.astype(np.float64) - previous) ** 2))
            size = float(np.sum(aggregate.astype(np.float64) ** 2))
            if size > 0 and change / size < tolerance:
                converged = True
                break
        previous = aggregate.astype(np.float64)
    if aggregate is None:  # no round ran
        raise ValueError("RASA needs at least one iteration (max_iterations >= 1)")
    return RasaOutcome(skill=skill, aggregate=aggregate, iterations=iteration, converged=converged)
