"""Questions whose answers split into camps of similar size (not in the paper; EvalDesk's rule).

A consensus method cannot know the truth: where 13 people wrote "secretary of state" and 11
"speaker of the house", the consensus answer is usually the larger camp's, right or wrong, and
the other camp scores lower. Such a question is worth checking by hand, so each scored question's answers
are grouped by their embeddings (spherical k-means with k = 2, then 3, on the answers' unit
vectors, identical answers counted once with their number) and the question is flagged when:

* at least two camps are of similar size: the second largest holds at least
  :data:`SIMILAR_SIZE` of the largest, at least :data:`MIN_CAMP` answers and at least
  :data:`MIN_SHARE` of all answers;
* the camps mean different things: the cosine between their centres is at most
  :data:`MAX_CENTRE_COSINE` (two spellings of one answer are closer than that), and the
  answers sit clearly in their own camp (mean simplified silhouette, each answer's distance to
  its own centre against the nearest other centre, at least :data:`MIN_SEPARATION`);
* the two largest camps' typical answers do not say the same words at different lengths
  ("population" and "they have a higher population" are one answer): the words of the shorter
  (but for little words such as "the", "of") are not all in the longer.

Each camp is named by its most typical answer (the one closest to its centre) and its size.
Deterministic: the starts of k-means come from a fixed seed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = [
    "MAX_CENTRE_COSINE",
    "MIN_CAMP",
    "MIN_SEPARATION",
    "MIN_SHARE",
    "SIMILAR_SIZE",
    "Camp",
    "camps_of",
    "describe_camps",
    "split_questions",
]

#: The second camp holds at least this share of the largest.
SIMILAR_SIZE = 0.5
#: A camp holds at least this many answers ...
MIN_CAMP = 3
#: ... and at least this share of the question's answers.
MIN_SHARE = 0.2
#: The camps' centres are at most this similar (cosine).
MAX_CENTRE_COSINE = 0.7
#: The answers' mean simplified silhouette is at least this.
MIN_SEPARATION = 0.3
#: Distinct answers clustered per question at most (a fixed-seed sample beyond; all answers
#: are then counted by their nearest centre).
MAX_DISTINCT = 400
_STARTS = 4
_ROUNDS = 25


@dataclass(frozen=True)
class Camp:
    """Answers that say much the same thing: how many, and the most typical one."""

    size: int
    example: str


_LITTLE = frozenset("a an the of to and or is are was were be it its they their there have has "
                    "had by in on for that this with as at from because".split())


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[^\W_]+", text.casefold()) if w not in _LITTLE}


def _same_words(one: str, other: str) -> bool:
    """True when every word of the shorter answer (little words aside) is in the longer."""
    a, b = _words(one), _words(other)
    return bool(a and b) and (a <= b or b <= a)


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def _kmeans(points: np.ndarray, counts: np.ndarray, k: int,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """Spherical k-means of unit ``points`` weighted by ``counts``: (labels, unit centres,
    weighted cosine to the own centre); the best of :data:`_STARTS` k-means++ starts."""
    best: tuple[np.ndarray, np.ndarray, float] | None = None
    n = len(points)
    share = counts / counts.sum()
    for _ in range(_STARTS):
        chosen = [int(rng.choice(n, p=share))]
        for _ in range(1, k):
            closeness = np.max(points @ points[chosen].T, axis=1)
            far = np.clip(1.0 - closeness, 0.0, None) * counts
            if far.sum() <= 0:
                break
            chosen.append(int(rng.choice(n, p=far / far.sum())))
        if len(chosen) < k:
            continue
        centres = points[chosen].copy()
        labels = np.full(n, -1)
        for _ in range(_ROUNDS):
            new = np.argmax(points @ centres.T, axis=1)
            if np.array_equal(new, labels):
                break
            labels = new
            for c in range(k):
                inside = labels == c
                if inside.any():
                    total = (points[inside] * counts[inside, None]).sum(axis=0)
                    norm = np.linalg.norm(total)
                    centres[c] = total / norm if norm > 0 else centres[c]
        fit = float((np.sum(points * centres[labels], axis=1) * counts).sum())
        if best is None or fit > best[2]:
            best = (labels, centres, fit)
    if best is None:
        return np.zeros(n, dtype=int), points[:1].copy(), 0.0
    return best


def camps_of(vectors: np.ndarray, texts: list[str], seed: int = 0) -> list[Camp]:
    """The camps of one question's answers (``vectors`` one per answer, ``texts`` their words),
    largest first, when they split as the module says; [] otherwise."""
    n = len(texts)
    if n < 2 * MIN_CAMP:
        return []
    keys, first, inverse, counts = np.unique(np.asarray(texts, dtype=object), return_index=True,
                                             return_inverse=True, return_counts=True)
    points = _unit(np.asarray(vectors)[first])
    counts = counts.astype(np.float64)
    rng = np.random.default_rng(seed)
    sample = np.arange(len(points))
    if len(points) > MAX_DISTINCT:
        sample = np.sort(rng.choice(len(points), size=MAX_DISTINCT, replace=False))
    for k in (2, 3):
        if len(sample) < k:
            break
        _labels, centres, _fit = _kmeans(points[sample], counts[sample], k, rng)
        if len(centres) < k:
            continue
        closeness = points @ centres.T
        labels = np.argmax(closeness, axis=1)
        sizes = np.bincount(labels, weights=counts, minlength=k)
        order = np.argsort(-sizes, kind="stable")
        big, second = sizes[order[0]], sizes[order[1]]
        if second < max(MIN_CAMP, MIN_SHARE * n, SIMILAR_SIZE * big):
            continue
        if float(centres[order[0]] @ centres[order[1]]) > MAX_CENTRE_COSINE:
            continue
        own = closeness[np.arange(len(points)), labels]
        others = closeness.copy()
        others[np.arange(len(points)), labels] = -np.inf
        a, b = 1.0 - own, 1.0 - others.max(axis=1)
        widest = np.maximum(a, b)
        silhouette = np.where(widest > 0, (b - a) / np.where(widest > 0, widest, 1.0), 0.0)
        if float((silhouette * counts).sum() / counts.sum()) < MIN_SEPARATION:
            continue
        typical = []
        for c in order[:2]:
            inside = np.flatnonzero(labels == c)
            typical.append(str(keys[inside[np.argmax(closeness[inside, c])]]))
        if _same_words(*typical):
            continue
        camps = []
        for c in order:
            if sizes[c] < max(MIN_CAMP, MIN_SHARE * n, SIMILAR_SIZE * big):
                continue
            inside = np.flatnonzero(labels == c)
            typical = inside[np.argmax(closeness[inside, c] + 1e-9 * counts[inside])]
            camps.append(Camp(int(round(sizes[c])), str(keys[typical])))
        return camps
    return []


def split_questions(vectors: np.ndarray, rows: np.ndarray, question: np.ndarray,
                    texts: list[str], n_questions: int, seed: int = 0) -> dict[int, list[Camp]]:
    """Question number -> its camps, for each question whose answers split (the module's
    rule). Answer k is ``texts[k]``, its vector ``vectors[rows[k]]``, its question
    ``question[k]``."""
    question = np.asarray(question, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    order = np.argsort(question, kind="stable")
    starts = np.searchsorted(question[order], np.arange(n_questions + 1))
    out: dict[int, list[Camp]] = {}
    for j in range(n_questions):
        idx = order[starts[j]:starts[j + 1]]
        if len(idx) < 2 * MIN_CAMP:
            continue
        camps = camps_of(vectors[rows[idx]], [texts[i] for i in idx], seed=seed + j)
        if camps:
            out[j] = camps
    return out


def describe_camps(camps: list[Camp], total: int) -> str:
    """"13 answers like “secretary of state”, 11 like “speaker of the house” (5 others)"."""
    parts = []
    for k, camp in enumerate(camps):
        example = " ".join(camp.example.split())
        example = example if len(example) <= 60 else example[:59] + "…"
        noun = "answers " if k == 0 else ""
        parts.append(f"{camp.size} {noun}like “{example}”")
    rest = total - sum(c.size for c in camps)
    return ", ".join(parts) + (f" ({rest} other{'s' if rest != 1 else ''})" if rest > 0 else "")
