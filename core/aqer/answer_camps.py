"""Questions whose answers split into camps of similar size (not in the paper; EvalDesk's rule).

A consensus method cannot know the truth: where 13 people wrote "secretary of state" and 11
"speaker of the house", the consensus answer is usually the larger camp's, right or wrong, and
the other camp scores lower. Such a question is worth checking by hand, so each scored
question's answers are grouped by their embeddings (identical answers counted once with their number, every vector
scaled to length 1): split in two along the direction in which the answers differ most (the
first principal direction; the cut that best separates the two sides), then the larger side
split the same way for a third camp, each time refined by a few rounds of spherical k-means
(three camps are named when all three hold a similar share, else two).
No random start: the same answers always give the same camps. The question is flagged when:

* at least two camps are of similar size: the second largest holds at least
  :data:`SIMILAR_SIZE` of the largest, at least :data:`MIN_CAMP` answers and at least
  :data:`MIN_SHARE` of all answers;
* the camps mean different things: the cosine between their centres is at most
  :data:`MAX_CENTRE_COSINE` (two spellings of one answer are closer than that), and the
  answers sit clearly in their own camp (mean simplified silhouette, each answer's distance to
  its own centre against the nearest other centre, at least :data:`MIN_SEPARATION`);
* the two largest camps' typical answers do not say the same words at different lengths
  ("population" and "they have a higher population" are one answer): the words of the shorter
  (but for little words such as "the", "of"; a misspelt word counts as the word) are not
  all in the longer.

Each camp is named by its most typical answer (the one closest to its centre) and its size.
A question whose answers nearly all agree is passed over at once: when the mean of the answers'
unit vectors is longer than :data:`ONE_BLOB` no two camps as far apart as above can hold the
shares above (the longest it can then be is about 0.97).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

__all__ = [
    "MAX_CENTRE_COSINE",
    "MAX_DISTINCT",
    "MIN_CAMP",
    "MIN_SEPARATION",
    "MIN_SHARE",
    "ONE_BLOB",
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
MAX_CENTRE_COSINE = 0.65
#: The answers' mean simplified silhouette is at least this.
MIN_SEPARATION = 0.3
#: The mean of a question's unit answer vectors longer than this: the answers nearly all agree.
ONE_BLOB = 0.975
#: Rounds of spherical k-means refining each split.
_ROUNDS = 6
#: Distinct answers a question's camps are found from at most (evenly spaced through the
#: answers, so every camp that holds a fifth of them is among them); every answer is then
#: counted in the camp of the nearest centre.
MAX_DISTINCT = 150


@dataclass(frozen=True)
class Camp:
    """Answers that say much the same thing: how many, and the most typical one."""

    size: int
    example: str


_LITTLE = frozenset(["a", "an", "the", "of", "to", "and", "or", "is", "are", "was", "were", "be", "it", "its", "they", "their", "there", "have", "has", "had", "by", "in", "on", "for", "that", "this", "with", "as", "at", "from", "because"])


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[^\W_]+", text.casefold()) if w not in _LITTLE}


def _same_words(one: str, other: str) -> bool:
    """True when every word of the shorter answer (little words aside) is in the longer, a
    misspelt word counting as the word ("religeous" is "religious")."""
    from difflib import SequenceMatcher

    a, b = _words(one), _words(other)
    if not (a and b):
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return all(any(w == v or SequenceMatcher(None, w, v).ratio() >= 0.8 for v in long_)
               for w in short)


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def _refine(points: np.ndarray, counts: np.ndarray, labels: np.ndarray,
            k: int) -> tuple[np.ndarray, np.ndarray]:
    """A few rounds of spherical k-means from ``labels``: (labels, unit centres)."""
    weighted = points * counts[:, None].astype(points.dtype)
    eye = np.eye(k, dtype=points.dtype)
    centres = np.zeros((k, points.shape[1]), dtype=points.dtype)
    for _ in range(_ROUNDS):
        sums = eye[labels].T @ weighted  # each camp's weighted sum, one product
        norms = np.linalg.norm(sums, axis=1)
        filled = norms > 0
        centres[filled] = sums[filled] / norms[filled, None]
        new = np.argmax(points @ centres.T, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
    return labels, centres


def _halves(points: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """0/1 per point: the two sides of the cut along the direction in which the points differ
    most (power iteration from the point farthest from their mean), at the place that best
    separates the weighted projections (the largest between-sides variance)."""
    share = counts / counts.sum()
    centred = points - share @ points
    direction = centred[np.argmax(np.einsum("ij,ij->i", centred, centred))].copy()
    for _ in range(12):
        nxt = (centred @ direction * share) @ centred
        norm = float(np.linalg.norm(nxt))
        if norm == 0:
            break
        nxt /= norm
        if float(abs(nxt @ direction)) > 1 - 1e-4:
            direction = nxt
            break
        direction = nxt
    projection = centred @ direction
    order = np.argsort(projection, kind="stable")
    w = share[order]
    below = np.cumsum(w)[:-1]
    sums = np.cumsum(w * projection[order])[:-1]
    total = float(share @ projection)
    above = 1.0 - below
    with np.errstate(divide="ignore", invalid="ignore"):
        between = sums ** 2 / below + (total - sums) ** 2 / above
    between[~np.isfinite(between)] = -np.inf
    cut = int(np.argmax(between)) + 1 if len(between) else 1
    out = np.ones(len(points), dtype=np.int64)
    out[order[:cut]] = 0
    return out


def _third(points: np.ndarray, counts: np.ndarray, halves: np.ndarray) -> np.ndarray:
    """``halves`` with the larger side cut in two the same way: labels 0, 1 and 2."""
    sizes = np.bincount(halves, weights=counts, minlength=2)
    inside = np.flatnonzero(halves == int(np.argmax(sizes)))
    labels = halves.copy()
    if len(inside) >= 2:
        labels[inside[_halves(points[inside], counts[inside]) == 1]] = 2
    return labels


def _camps(points: np.ndarray, counts: np.ndarray, centres: np.ndarray, n: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Each point's camp under ``centres`` and whether the camps hold (the module's rules on
    sizes, centres and separation; ``counts`` scaled to ``n`` answers): (labels, sizes, order
    of the camps by size, closeness to each centre), or None."""
    closeness = points @ centres.T
    labels = np.argmax(closeness, axis=1)
    sizes = np.bincount(labels, weights=counts, minlength=len(centres)) * (n / counts.sum())
    order = np.argsort(-sizes, kind="stable")
    big, second = sizes[order[0]], sizes[order[1]]
    if second < max(MIN_CAMP, MIN_SHARE * n, SIMILAR_SIZE * big):
        return None
    if float(centres[order[0]] @ centres[order[1]]) > MAX_CENTRE_COSINE:
        return None
    rows = np.arange(len(points))
    own = closeness[rows, labels]
    others = closeness.copy()
    others[rows, labels] = -np.inf
    a, b = 1.0 - own, 1.0 - others.max(axis=1)
    widest = np.maximum(a, b)
    silhouette = np.where(widest > 0, (b - a) / np.where(widest > 0, widest, 1.0), 0.0)
    if float((silhouette * counts).sum() / counts.sum()) < MIN_SEPARATION:
        return None
    return labels, sizes, order, closeness


def camps_of(vectors: np.ndarray, texts: list[str],
             same: np.ndarray | None = None) -> list[Camp]:
    """The camps of one question's answers (``vectors`` one per answer, ``texts`` their words),
    largest first, when they split as the module says; [] otherwise. ``same``: a number per
    answer, equal for identical answers (each distinct answer is clustered once, with its
    count); by default the texts themselves tell."""
    if len(texts) < 2 * MIN_CAMP:
        return []
    if same is None:
        same = np.unique(np.asarray(texts, dtype=object), return_inverse=True)[1]
    _, first, counts = np.unique(np.asarray(same), return_index=True, return_counts=True)
    vectors = np.asarray(vectors)
    return _distinct_camps(lambda at: vectors[first[at]], counts, lambda i: texts[first[i]],
                           len(texts))


def _distinct_camps(vectors_of: Callable[[np.ndarray], np.ndarray], counts: np.ndarray,
                    text_of: Callable[[int], str], n: int) -> list[Camp]:
    """:func:`camps_of` on a question's distinct answers: ``vectors_of(positions)`` their
    vectors, ``counts`` how many gave each, ``text_of(position)`` its words, ``n`` answers in
    all. The camps are found, and first judged, on at most :data:`MAX_DISTINCT` of them; a
    split that holds there is judged again on all of them."""
    counts = np.asarray(counts, dtype=np.float64)
    if len(counts) < 2:
        return []
    everyone = np.arange(len(counts))
    sample = everyone
    if len(counts) > MAX_DISTINCT:
        sample = np.linspace(0, len(counts) - 1, MAX_DISTINCT).round().astype(np.int64)
    some, weights = _unit(vectors_of(sample)), counts[sample]
    if float(np.linalg.norm(weights @ some)) > ONE_BLOB * weights.sum():
        return []  # (nearly) everyone wrote the same thing
    points: np.ndarray | None = some if len(sample) == len(counts) else None
    halves = _halves(some, weights)
    found: list[Camp] = []
    for k in (2, 3):
        if len(sample) < k:
            break
        start = halves if k == 2 else _third(some, weights, halves)
        _labels, centres = _refine(some, weights, start, k)
        if _camps(some, weights, centres, n) is None:
            continue
        if points is None:  # every distinct answer now
            points = _unit(vectors_of(everyone))
        judged = _camps(points, counts, centres, n)
        if judged is None:
            continue
        labels, sizes, order, closeness = judged

        def typical(c: int, labels=labels, closeness=closeness) -> str:
            inside = np.flatnonzero(labels == c)
            return text_of(int(inside[np.argmax(closeness[inside, c] + 1e-9 * counts[inside])]))

        if _same_words(typical(order[0]), typical(order[1])):
            continue
        camps = [Camp(round(sizes[c]), typical(c)) for c in order
                 if sizes[c] >= max(MIN_CAMP, MIN_SHARE * n, SIMILAR_SIZE * sizes[order[0]])]
        if any(_same_words(x.example, y.example) for i, x in enumerate(camps)
               for y in camps[i + 1:]):
            continue  # two of the camps say the same words: not a split into these camps
        if len(camps) > len(found):  # three camps of similar size beat two (one of them two)
            found = camps
    return found


def _vectors_at(vectors: np.ndarray, rows: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The vectors of the distinct answers at positions ``at`` (their rows ``rows[at]``)."""
    return vectors[rows[at]]


def _text_at(texts: list[str], answer: np.ndarray, position: int) -> str:
    """The words of the distinct answer at ``position`` (answer ``answer[position]``)."""
    return texts[int(answer[position])]


def split_questions(vectors: np.ndarray, rows: np.ndarray, question: np.ndarray,
                    texts: list[str], n_questions: int) -> dict[int, list[Camp]]:
    """Question number -> its camps, for each question whose answers split (the module's
    rule). Answer k is ``texts[k]``, its vector ``vectors[rows[k]]`` (identical answers share
    a row), its question ``question[k]``."""
    question = np.asarray(question, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    order = np.argsort(question, kind="stable")
    starts = np.searchsorted(question[order], np.arange(n_questions + 1))
    out: dict[int, list[Camp]] = {}
    for j in range(n_questions):
        idx = order[starts[j]:starts[j + 1]]
        if len(idx) < 2 * MIN_CAMP:
            continue
        table_rows, first, counts = np.unique(rows[idx], return_index=True, return_counts=True)
        answer = idx[first]
        camps = _distinct_camps(partial(_vectors_at, vectors, table_rows), counts,
                                partial(_text_at, texts, answer), len(idx))
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
