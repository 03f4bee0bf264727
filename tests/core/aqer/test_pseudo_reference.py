"""F1 and BLEU-1 against the other workers' answers: hand-computed cases and the fast path."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.aqer.pseudo_reference import (
    bleu1,
    pseudo_reference_scores,
    reference_pairs,
    token_f1,
    tokens,
)


def test_tokens_lowercase_and_drop_punctuation():
    assert tokens("The Cat, the hat!") == ["the", "cat", "the", "hat"]


def test_token_f1_by_hand():
    # overlap {the, cat} = 2; precision 2/3, recall 2/4 -> F1 = 2*(2/3*1/2)/(2/3+1/2) = 4/7
    assert token_f1("the cat sat", "the cat is here") == pytest.approx(4 / 7)
    assert token_f1("a a b", "a c") == pytest.approx(2 * (1 / 3 * 1 / 2) / (1 / 3 + 1 / 2))
    assert token_f1("x", "y") == 0.0
    assert token_f1("", "y") == 0.0


def test_bleu1_by_hand():
    # candidate "the the the cat" (4 tokens); refs: "the cat" and "the the dog"
    # clipped: the -> min(3, max(1, 2)) = 2, cat -> 1 => 3/4; c=4 > closest r (3) => BP 1
    assert bleu1("the the the cat", ["the cat", "the the dog"]) == pytest.approx(0.75)
    # candidate shorter than the closest reference: c=2, refs lengths 4 and 5 -> r=4
    # precision 2/2, BP = exp(1 - 4/2) = e^-1
    assert bleu1("big dog", ["a big dog here", "one two three four five"]) == pytest.approx(
        math.exp(-1)
    )
    # closest-length tie (3 and 5 around c=4) takes the shorter: r = 3 < c => BP 1
    assert bleu1("a b c d", ["a b c", "a b c d e"]) == pytest.approx(1.0)
    assert bleu1("", ["a"]) == 0.0


def naive_scores(question, worker, texts, m):
    per_worker = {i: ([], []) for i in range(m)}
    for k, (j, i, text) in enumerate(zip(question, worker, texts)):
        others = [texts[h] for h in range(len(texts)) if question[h] == j and h != k]
        if not others:
            continue
        per_worker[i][0].append(max(token_f1(text, o) for o in others))
        per_worker[i][1].append(bleu1(text, others))
    f1 = np.array([np.mean(v[0]) if v[0] else np.nan for v in per_worker.values()])
    bl = np.array([np.mean(v[1]) if v[1] else np.nan for v in per_worker.values()])
    return f1, bl


def test_fast_path_equals_the_definition():
    rng = np.random.default_rng(0)
    words = ["paris", "france", "capital", "the", "is", "city", "lyon", "big", "a"]
    question, worker, texts = [], [], []
    for j in range(5):
        for i in range(6):
            if (i + j) % 4 == 3:
                continue
            question.append(j)
            worker.append(i)
            texts.append(" ".join(rng.choice(words, size=rng.integers(1, 7))))
    question.append(5)  # a question with one answer: no reference, does not count
    worker.append(0)
    texts.append("alone")
    f1, bl, counted = pseudo_reference_scores(np.array(question), np.array(worker), texts, 6)
    ref_f1, ref_bl = naive_scores(question, worker, texts, 6)
    np.testing.assert_allclose(f1, ref_f1, rtol=1e-9)
    np.testing.assert_allclose(bl, ref_bl, rtol=1e-9)
    assert counted[0] == sum(1 for j, i in zip(question, worker) if i == 0 and j < 5)


def test_reference_pairs():
    assert reference_pairs(np.array([0, 0, 0, 1, 1, 2])) == 3 * 2 + 2 * 1
