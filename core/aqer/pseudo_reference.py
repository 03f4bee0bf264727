"""Pseudo-reference baselines (paper endnote 22): every *other* worker's answer is a reference.

For each answer, token F1 is its best F1 against any other answer to the same question (as in
SQuAD-style multi-reference F1) and BLEU-1 is the multi-reference sentence BLEU with unigrams
only (counts clipped by the largest count in any one reference; brevity penalty against the
reference length closest to the answer's, the shorter one on a tie). A worker's baseline score is
the mean over their answers. Tokens: lower-cased runs of letters and digits.

Both are computed question by question with small count matrices, so no Python loop runs over
pairs of answers.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from core.runs import CancelToken

__all__ = ["bleu1", "pseudo_reference_scores", "reference_pairs", "token_f1", "tokens"]

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, underscore); punctuation dropped."""
    return _TOKEN.findall(str(text).lower())


def token_f1(candidate: str, reference: str) -> float:
    """Token-overlap F1 of ``candidate`` against one ``reference`` (0 when either is empty)."""
    a, b = Counter(tokens(candidate)), Counter(tokens(reference))
    overlap = sum((a & b).values())
    if overlap == 0:
        return 0.0
    precision = overlap / sum(a.values())
    recall = overlap / sum(b.values())
    return 2 * precision * recall / (precision + recall)


def bleu1(candidate: str, references: Sequence[str]) -> float:
    """Sentence BLEU-1 of ``candidate`` against several ``references`` (Papineni et al. 2002)."""
    cand = tokens(candidate)
    refs = [tokens(r) for r in references]
    if not cand or not refs:
        return 0.0
    counts = Counter(cand)
    max_ref: Counter[str] = Counter()
    for ref in refs:
        for tok, n in Counter(ref).items():
            max_ref[tok] = max(max_ref[tok], n)
    clipped = sum(min(n, max_ref[tok]) for tok, n in counts.items())
    c = len(cand)
    r = min((abs(len(ref) - c), len(ref)) for ref in refs)[1]
    penalty = 1.0 if c > r else math.exp(1 - r / c)
    return penalty * clipped / c


def reference_pairs(question: np.ndarray) -> int:
    """How many (answer, other answer) pairs the baselines would compare."""
    counts = np.bincount(np.asarray(question, dtype=np.int64))
    return int(np.sum(counts.astype(np.int64) * np.maximum(counts - 1, 0)))


def _question_scores(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per answer in one question: best F1 and BLEU-1 against the other answers."""
    toks = [tokens(t) for t in texts]
    vocab: dict[str, int] = {}
    for ts in toks:
        for t in ts:
            vocab.setdefault(t, len(vocab))
    m = len(texts)
    counts = np.zeros((m, max(1, len(vocab))), dtype=np.int32)
    for i, ts in enumerate(toks):
        for t in ts:
            counts[i, vocab[t]] += 1
    lengths = counts.sum(axis=1).astype(np.float64)

    # Overlap sum_t min(a_t, b_t) = sum_k [a_t >= k][b_t >= k]: matrix products, no pair loop.
    overlap = np.zeros((m, m), dtype=np.float64)
    for k in range(1, int(counts.max(initial=0)) + 1):
        present = (counts >= k).astype(np.float32)
        overlap += present @ present.T
    denominator = lengths[:, None] + lengths[None, :]
    f1_pairs = np.divide(
        2 * overlap, denominator, out=np.zeros_like(overlap), where=denominator > 0
    )
    np.fill_diagonal(f1_pairs, -np.inf)
    f1 = f1_pairs.max(axis=1)

    # BLEU-1: clip each token by its largest count among the *other* answers.
    top = counts.max(axis=0)
    top_row = counts.argmax(axis=0)
    if m > 1:
        second = np.partition(counts, m - 2, axis=0)[m - 2]
    else:
        second = np.zeros_like(top)
    others_max = np.where(np.arange(m)[:, None] == top_row[None, :], second[None, :], top[None, :])
    clipped = np.minimum(counts, others_max).sum(axis=1).astype(np.float64)
    gap = np.abs(lengths[:, None] - lengths[None, :])
    key = gap * (lengths.max(initial=0) + 1) + lengths[None, :]
    np.fill_diagonal(key, np.inf)
    closest = lengths[np.argmin(key, axis=1)]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        penalty = np.where(lengths > closest, 1.0, np.exp(1 - closest / np.maximum(lengths, 1)))
        bleu = np.where(lengths > 0, penalty * clipped / np.maximum(lengths, 1), 0.0)
    return f1, bleu


def pseudo_reference_scores(
    question: np.ndarray,
    worker: np.ndarray,
    texts: Sequence[str],
    n_workers: int,
    cancel: CancelToken | None = None,
    blank_worker: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per worker: mean F1, mean BLEU-1 and how many answers counted.

    Answers to questions nobody else answered have no reference and do not count; a worker
    with no counted answer gets NaN (the caller shows it as "not computed"). Each entry of
    ``blank_worker`` is a counted blank (a dense design) of that worker: it scores 0 on both,
    as an empty answer shares no word with any reference.
    """
    question = np.asarray(question, dtype=np.int64)
    worker = np.asarray(worker, dtype=np.int64)
    f1 = np.zeros(len(question))
    bleu = np.zeros(len(question))
    counted = np.zeros(len(question), dtype=bool)
    order = np.argsort(question, kind="stable")
    bounds = np.flatnonzero(np.diff(question[order])) + 1
    for group in np.split(order, bounds):
        if cancel is not None:
            cancel.raise_if_cancelled()
        if len(group) < 2:
            continue
        f1[group], bleu[group] = _question_scores([texts[i] for i in group])
        counted[group] = True
    n = np.bincount(worker[counted], minlength=n_workers)
    if blank_worker is not None and len(blank_worker):
        n = n + np.bincount(np.asarray(blank_worker, dtype=np.int64), minlength=n_workers)
    with np.errstate(divide="ignore", invalid="ignore"):
        f1_mean = np.bincount(worker[counted], weights=f1[counted], minlength=n_workers) / n
        bleu_mean = np.bincount(worker[counted], weights=bleu[counted], minlength=n_workers) / n
    return f1_mean, bleu_mean, n
