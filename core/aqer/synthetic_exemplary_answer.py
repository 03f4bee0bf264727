"""The synthetic exemplary answer (SEA): the weighted mean of the workers' embeddings per question.

Responses are stored sparsely: every answer is an index into a table of unique embeddings plus
its worker and question numbers, so a sheet where workers skipped questions needs no padding and
identical answers share one vector. Sums over workers are a sparse (question x answer) matrix
times the embedding table, so nothing of size workers x questions x dimension is ever built.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "EmbeddedResponses",
    "cosine_rows",
    "leave_one_out_similarity",
    "similarity_to_sea",
    "synthetic_exemplary_answers",
]

#: Rows per block when comparing answers with their SEA (small enough to stay in cache).
_CHUNK = 4_096
_EPS = 1e-12
#: Others shorter than this share of the whole sum (squared) are compared directly in float64.
_DIRECT = 0.25


class EmbeddedResponses:
    """N answers given by ``n_workers`` workers to ``n_questions`` questions, embedded.

    Answer k is ``vectors[row[k]]``, given by worker ``worker[k]`` to question ``question[k]``;
    at most one answer per (worker, question). The vectors are kept once, in question order
    (``sorted_vectors``), so every sum over a question's answers and every comparison with its
    SEA reads memory in sequence; results are returned in the original answer order.
    """

    def __init__(
        self,
        vectors: np.ndarray,
        row: np.ndarray,
        worker: np.ndarray,
        question: np.ndarray,
        n_workers: int | None = None,
        n_questions: int | None = None,
    ) -> None:
        self.row = np.asarray(row, dtype=np.int64)
        self.worker = np.asarray(worker, dtype=np.int64)
        self.question = np.asarray(question, dtype=np.int64)
        if not (len(self.row) == len(self.worker) == len(self.question)):
            raise ValueError("row, worker and question must have the same length")
        self.n_workers = int(n_workers if n_workers is not None else self.worker.max() + 1)
        self.n_questions = int(n_questions if n_questions is not None else self.question.max() + 1)
        self.answered_by_worker = np.bincount(self.worker, minlength=self.n_workers)
        self.answered_per_question = np.bincount(self.question, minlength=self.n_questions)
        order = np.argsort(self.question, kind="stable")
        self.order = order
        self.worker_sorted = self.worker[order]
        self.question_sorted = self.question[order]
        self.indptr = np.concatenate(([0], np.cumsum(self.answered_per_question))).astype(np.int64)
        source_rows = self.row[order]
        vectors = np.asarray(vectors)
        n = len(source_rows)
        if len(vectors) >= n and np.array_equal(source_rows, np.arange(n)):
            self.sorted_vectors = np.ascontiguousarray(vectors[:n], dtype=np.float32)
        else:
            self.sorted_vectors = np.empty((n, vectors.shape[1]), dtype=np.float32)
            for start in range(0, n, _CHUNK):
                self.sorted_vectors[start : start + _CHUNK] = vectors[
                    source_rows[start : start + _CHUNK]
                ]
        self.sorted_norms = _row_norms(self.sorted_vectors)

    def __len__(self) -> int:
        return len(self.row)

    @property
    def dimension(self) -> int:
        return int(self.sorted_vectors.shape[1])

    def answer_vectors(self) -> np.ndarray:
        """The vectors in the original answer order (a copy; for checks and benchmarks)."""
        out = np.empty_like(self.sorted_vectors)
        out[self.order] = self.sorted_vectors
        return out

    def unsort(self, values_sorted: np.ndarray) -> np.ndarray:
        """Per-answer values in question order -> the original answer order."""
        out = np.empty_like(values_sorted)
        out[self.order] = values_sorted
        return out

    def weighted_sums(
        self, weights: np.ndarray, scale: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(sum_i w_i e_ij per question as float32 (n, d), sum of w_i per question (n,)).

        ``scale`` (one factor per answer, in question order) multiplies each vector first, e.g.
        1 / its length to sum unit vectors without copying the table.
        """
        from scipy.sparse import csr_matrix

        n = len(self.worker_sorted)
        data = np.asarray(weights, dtype=np.float32)[self.worker_sorted]
        if scale is not None:
            data = data * np.asarray(scale, dtype=np.float32)
        matrix = csr_matrix(
            (data, np.arange(n, dtype=np.int64), self.indptr), shape=(self.n_questions, n)
        )
        sums = np.asarray(matrix @ self.sorted_vectors, dtype=np.float32)
        totals = np.bincount(
            self.question_sorted,
            weights=np.asarray(weights, dtype=np.float64)[self.worker_sorted],
            minlength=self.n_questions,
        )
        return sums, totals


def synthetic_exemplary_answers(
    responses: EmbeddedResponses, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """SEA_j = sum_i w_i e_ij / sum_i w_i over the workers who answered question j.

    Returns ``(sea, fallback)``: the (n, d) float32 SEAs and a boolean mask of questions whose
    answering workers all had weight 0; those get the plain (unweighted) mean instead, the limit
    of the weighted mean as the weights become equal.
    """
    sums, totals = responses.weighted_sums(weights)
    fallback = totals <= 0
    if fallback.any():
        plain_sums, plain_totals = responses.weighted_sums(np.ones(responses.n_workers))
        sums[fallback] = plain_sums[fallback]
        totals = np.where(fallback, plain_totals, totals)
    with np.errstate(invalid="ignore", divide="ignore"):
        sea = sums / np.maximum(totals, _EPS).astype(np.float32)[:, None]
    return sea.astype(np.float32, copy=False), fallback


def similarity_to_sea(responses: EmbeddedResponses, sea: np.ndarray) -> np.ndarray:
    """Cosine similarity of every answer with its question's SEA, as float64 (N,).

    A zero vector (which real models do not produce) has similarity 0 with everything.
    """
    sea = np.asarray(sea, dtype=np.float32)
    sea_norms = _row_norms(sea)
    vectors, questions = responses.sorted_vectors, responses.question_sorted
    out = np.empty(len(responses), dtype=np.float64)
    for start in range(0, len(responses), _CHUNK):
        stop = start + _CHUNK
        q = questions[start:stop]
        dots = np.einsum("ij,ij->i", vectors[start:stop], sea[q])
        denominators = responses.sorted_norms[start:stop] * sea_norms[q]
        out[start:stop] = np.where(denominators > _EPS, dots / np.maximum(denominators, _EPS), 0.0)
    return responses.unsort(out)


def leave_one_out_similarity(responses: EmbeddedResponses, weights: np.ndarray) -> np.ndarray:
    """Cosine of every answer with the consensus of the *other* workers' answers, (N,) float64.

    The consensus of the others is the SEA without the answer itself, with the same
    ``weights``: (sum_k w_k e_kj - w_i e_ij) / (sum_k w_k - w_i). It is what an answer from
    outside the crowd (an AI's) is compared with, so a worker measured this way is measured like
    for like. When every other answer has weight 0, their plain mean is used (as the SEA does).

    Without building the others' sum per answer: with S the weighted sum of the question's
    answers (float64) and d = e . S, the dot product with the others is d - w |e|^2 and their
    squared length |S|^2 - 2 w d + w^2 |e|^2. Only d is computed in float32 (one pass over the
    vectors, as :func:`similarity_to_sea`). Where the others are small beside S (an answer that
    carries most of its question's weight) that expansion loses digits, so those answers, and
    those whose others all have weight 0, are computed directly in float64.
    """
    weights = np.asarray(weights, dtype=np.float64)
    n_q = responses.n_questions
    vectors, questions = responses.sorted_vectors, responses.question_sorted
    w = weights[responses.worker_sorted]
    totals = np.bincount(questions, weights=w, minlength=n_q)
    nobody = totals[questions] - w <= 1e-12 * np.maximum(totals[questions], 1e-300)
    sums = _question_sums(responses, w)
    sums32 = sums.astype(np.float32)
    d = np.empty(len(responses), dtype=np.float64)
    for start in range(0, len(responses), _CHUNK):
        stop = start + _CHUNK
        d[start:stop] = np.einsum("ij,ij->i", vectors[start:stop], sums32[questions[start:stop]])
    own = responses.sorted_norms**2
    whole = np.einsum("ij,ij->i", sums, sums)[questions]
    dots = d - w * own
    others = np.maximum(whole - 2.0 * w * d + w * w * own, 0.0)
    lengths = responses.sorted_norms * np.sqrt(others)
    out = np.where(lengths > _EPS, dots / np.maximum(lengths, _EPS), 0.0)
    redo = np.flatnonzero(nobody | (others < _DIRECT * whole))
    if len(redo):
        plain = _question_sums(responses, np.ones(len(responses))) if nobody.any() else None
        for start in range(0, len(redo), _CHUNK):
            k = redo[start : start + _CHUNK]
            block = vectors[k].astype(np.float64)
            q = questions[k]
            rest = sums[q] - w[k, None] * block
            alone = nobody[k]
            if plain is not None and alone.any():
                rest[alone] = plain[q[alone]] - block[alone]
            dots = np.einsum("ij,ij->i", block, rest)
            lengths = responses.sorted_norms[k] * np.sqrt(np.einsum("ij,ij->i", rest, rest))
            out[k] = np.where(lengths > _EPS, dots / np.maximum(lengths, _EPS), 0.0)
    return responses.unsort(out)


def _question_sums(responses: EmbeddedResponses, factor: np.ndarray) -> np.ndarray:
    """sum of factor_k * e_k over each question's answers (in question order), float64 (n, d),
    block by block: nothing of size N x d is built."""
    from scipy.sparse import csr_matrix

    questions = responses.question_sorted
    out = np.zeros((responses.n_questions, responses.dimension), dtype=np.float64)
    for start in range(0, len(responses), _CHUNK):
        stop = min(start + _CHUNK, len(responses))
        q = questions[start:stop]
        first = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
        matrix = csr_matrix(
            (
                np.asarray(factor[start:stop], dtype=np.float64),
                np.arange(stop - start),
                np.append(first, stop - start),
            ),
            shape=(len(first), stop - start),
        )
        out[q[first]] += matrix @ responses.sorted_vectors[start:stop].astype(np.float64)
    return out


def _row_norms(vectors: np.ndarray) -> np.ndarray:
    """Euclidean length of every row, as float64, computed block by block."""
    out = np.empty(vectors.shape[0], dtype=np.float64)
    for start in range(0, vectors.shape[0], _CHUNK):
        block = vectors[start : start + _CHUNK]
        out[start : start + _CHUNK] = np.einsum("ij,ij->i", block, block)
    return np.sqrt(out)


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two (k, d) arrays (0 where a row is a zero vector)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    dots = np.einsum("ij,ij->i", a, b)
    denominators = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.where(denominators > _EPS, dots / np.maximum(denominators, _EPS), 0.0)
