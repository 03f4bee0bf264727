"""Questions whose answers split into camps of similar size (core.aqer.answer_camps), on vectors
made here: camps of answers around directions a known cosine apart."""

from __future__ import annotations

import numpy as np
import pytest

from core.aqer.answer_camps import camps_of, describe_camps, split_questions


def around(centre: np.ndarray, n: int, spread: float, rng) -> np.ndarray:
    """``n`` unit vectors scattered around ``centre`` (``spread``: the noise's size)."""
    out = centre + spread * rng.standard_normal((n, centre.shape[0]))
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def directions(cosine: float, k: int = 2, dim: int = 64) -> list[np.ndarray]:
    """``k`` unit directions, each pair ``cosine`` alike."""
    basis = np.eye(dim)
    shared = basis[0]
    return [np.sqrt(cosine) * shared + np.sqrt(1 - cosine) * basis[j + 1] for j in range(k)]


def answers(sizes, cosine, spread=0.05, seed=0, words=None):
    rng = np.random.default_rng(seed)
    centres = directions(cosine, len(sizes))
    names = words or ["secretary of state", "speaker of the house", "the treasurer"]
    vectors, texts = [], []
    for c, (n, name) in enumerate(zip(sizes, names)):
        vectors.append(around(centres[c], n, spread, rng))
        texts += [f"{name}" if k % 3 else f"{name}." for k in range(n)]
    return np.vstack(vectors), texts


def test_two_camps_of_similar_size_are_named_largest_first():
    vectors, texts = answers([13, 11], cosine=0.3)
    camps = camps_of(vectors, texts)
    assert [c.size for c in camps] == [13, 11]
    assert camps[0].example.startswith("secretary of state")
    assert camps[1].example.startswith("speaker of the house")
    assert describe_camps(camps, 24) == ("13 answers like “" + camps[0].example + "”, 11 like “"
                                         + camps[1].example + "”")


def test_three_camps_and_the_others_are_counted():
    vectors, texts = answers([10, 10, 9], cosine=0.2)
    camps = camps_of(vectors, texts)
    assert sorted(c.size for c in camps) == [9, 10, 10]
    assert describe_camps(camps[:2], 29).endswith("(9 others)")


@pytest.mark.parametrize(("sizes", "cosine", "why"), [
    ([25, 4], 0.3, "one camp is small"),
    ([13, 11], 0.8, "the camps mean much the same"),
    ([3, 2], 0.1, "too few answers"),
])
def test_no_split_is_flagged_when_it_does_not_hold(sizes, cosine, why):
    vectors, texts = answers(sizes, cosine)
    assert camps_of(vectors, texts) == [], why


def test_everyone_alike_is_passed_over():
    vectors, texts = answers([30], cosine=0.0, spread=0.01)
    assert camps_of(vectors, texts) == []


@pytest.mark.parametrize("words", [
    ["population", "they have a higher population"],  # the same answer, longer
    ["religious freedom", "to find religeous freedom"],  # and misspelt
])
def test_the_same_words_at_another_length_are_one_answer(words):
    vectors, texts = answers([13, 11], cosine=0.3, words=words)
    assert camps_of(vectors, texts) == []


def test_the_same_answers_in_another_order_give_the_same_camps():
    vectors, texts = answers([13, 11], cosine=0.3, seed=4)
    order = np.random.default_rng(1).permutation(len(texts))
    again = camps_of(vectors[order], [texts[i] for i in order])
    assert again == camps_of(vectors, texts) and again


def test_split_questions_flags_each_question_on_its_own():
    split, texts_a = answers([13, 11], cosine=0.3, seed=1)
    alike, texts_b = answers([24], cosine=0.0, spread=0.01, seed=2)
    vectors = np.vstack([split, alike])
    texts = texts_a + texts_b
    question = np.array([0] * len(texts_a) + [1] * len(texts_b))
    rows = np.arange(len(texts))
    out = split_questions(vectors, rows, question, texts, 2)
    assert list(out) == [0] and [c.size for c in out[0]] == [13, 11]
