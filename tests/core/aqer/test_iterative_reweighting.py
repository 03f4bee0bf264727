"""AQER's loop (Algorithm 1) on embeddings: checked against a plain re-statement of the spec."""

from __future__ import annotations

import numpy as np
import pytest

from core.aqer.iterative_reweighting import iterative_reweighting, min_max
from core.aqer.synthetic_exemplary_answer import (
    EmbeddedResponses,
    similarity_to_sea,
    synthetic_exemplary_answers,
)
from core.runs import Cancelled, CancelToken, Progress


def naive_aqer(answers: dict[tuple[int, int], np.ndarray], m: int, n: int, rounds=100, tol=1e-6):
    """The spec, literally: loops over workers and questions, dicts for sparse answers."""
    w = np.full(m, 1 / m)
    trace = []
    for t in range(1, rounds + 1):
        sea = {}
        for j in range(n):
            num = sum(w[i] * e for (i, jj), e in answers.items() if jj == j)
            den = sum(w[i] for (i, jj) in answers if jj == j)
            sea[j] = num / den
        raw = np.zeros(m)
        for i in range(m):
            sims = [
                float(e @ sea[j] / (np.linalg.norm(e) * np.linalg.norm(sea[j])))
                for (ii, j), e in answers.items()
                if ii == i
            ]
            raw[i] = np.mean(sims)
        score = (raw - raw.min()) / (raw.max() - raw.min())
        new = score / score.sum()
        rmse = float(np.sqrt(np.mean((new - w) ** 2)))
        trace.append(rmse)
        w = new
        if rmse < tol:
            break
    return score, raw, w, trace


def random_sparse(seed: int, m: int = 9, n: int = 7, d: int = 16, skip: float = 0.25):
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(n, d))
    noise = np.linspace(0.3, 3.0, m)
    answers = {}
    for i in range(m):
        for j in range(n):
            if rng.random() < skip and j > 1 and i > 1:
                continue
            answers[(i, j)] = (truth[j] + noise[i] * rng.normal(size=d)).astype(np.float32)
    return answers


def embed(answers: dict[tuple[int, int], np.ndarray], m: int, n: int) -> EmbeddedResponses:
    keys = list(answers)
    vectors = np.stack([answers[k] for k in keys])
    return EmbeddedResponses(
        vectors,
        np.arange(len(keys)),
        np.array([k[0] for k in keys]),
        np.array([k[1] for k in keys]),
        n_workers=m,
        n_questions=n,
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_plain_statement_of_the_algorithm_on_sparse_data(seed):
    answers = random_sparse(seed)
    score, raw, weight, trace = naive_aqer(answers, 9, 7)
    out = iterative_reweighting(embed(answers, 9, 7))
    np.testing.assert_allclose(out.raw_score, raw, atol=1e-5)
    np.testing.assert_allclose(out.score, score, atol=1e-4)
    np.testing.assert_allclose(out.weight, weight, atol=1e-5)
    assert out.iterations == len(trace)
    np.testing.assert_allclose([r for _, r in out.trace], trace, atol=1e-6)


def test_worst_worker_scores_zero_and_weights_sum_to_one():
    answers = random_sparse(5, skip=0.0)
    out = iterative_reweighting(embed(answers, 9, 7))
    assert out.converged
    assert out.score.max() == pytest.approx(1.0) and out.score.min() == pytest.approx(0.0)
    assert out.weight.sum() == pytest.approx(1.0)
    # The noisiest worker (the last) is the worst, the least noisy the best.
    assert int(np.argmin(out.score)) == 8
    assert int(np.argmax(out.score)) in (0, 1)
    assert out.weight[8] == 0.0


def test_convergence_trace_ends_below_tolerance_and_counts_rounds():
    out = iterative_reweighting(embed(random_sparse(3), 9, 7), tolerance=1e-6)
    rounds = [t for t, _ in out.trace]
    assert rounds == list(range(1, out.iterations + 1))
    assert out.trace[-1][1] < 1e-6
    assert all(r >= 1e-6 for _, r in out.trace[:-1])


def test_max_iterations_stops_unconverged():
    out = iterative_reweighting(embed(random_sparse(3), 9, 7), max_iterations=2, tolerance=1e-12)
    assert out.iterations == 2 and not out.converged


def test_simplified_is_the_first_round_with_equal_weights():
    answers = random_sparse(4)
    one = iterative_reweighting(embed(answers, 9, 7), max_iterations=1)
    full = iterative_reweighting(embed(answers, 9, 7))
    np.testing.assert_allclose(full.simplified_score, one.score)
    np.testing.assert_allclose(full.simplified_raw_score, one.raw_score)


def test_tie_guard_when_all_answers_are_identical():
    vec = np.ones((1, 8), dtype=np.float32)
    m, n = 4, 3
    responses = EmbeddedResponses(
        vec, np.zeros(m * n, int), np.repeat(np.arange(m), n), np.tile(np.arange(n), m), m, n
    )
    out = iterative_reweighting(responses)
    assert not out.discriminates
    assert out.iterations == 1
    np.testing.assert_allclose(out.score, 1.0)
    np.testing.assert_allclose(out.weight, 0.25)
    assert np.isfinite(out.similarity).all()


def test_min_max():
    scaled, ok = min_max(np.array([0.2, 0.6, 1.0]))
    assert ok
    np.testing.assert_allclose(scaled, [0.0, 0.5, 1.0])
    scaled, ok = min_max(np.array([0.5, 0.5]))
    assert not ok and list(scaled) == [1.0, 1.0]


def test_fewer_than_two_workers_or_questions_is_refused():
    vec = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError):
        iterative_reweighting(EmbeddedResponses(vec, [0, 1], [0, 0], [0, 1], 1, 2))
    with pytest.raises(ValueError):
        iterative_reweighting(EmbeddedResponses(vec, [0, 1], [0, 1], [0, 0], 2, 1))


def test_sea_is_weighted_mean_over_answering_workers_only():
    vectors = np.array([[1, 0], [0, 1], [1, 1], [3, 3]], dtype=np.float32)
    # question 0: workers 0, 1, 2; question 1: workers 0 and 2 (worker 1 skipped it)
    responses = EmbeddedResponses(vectors, [0, 1, 2, 3, 0], [0, 1, 2, 0, 2], [0, 0, 0, 1, 1], 3, 2)
    weights = np.array([0.5, 0.25, 0.25])
    sea, fallback = synthetic_exemplary_answers(responses, weights)
    np.testing.assert_allclose(sea[0], (0.5 * vectors[0] + 0.25 * vectors[1] + 0.25 * vectors[2]))
    np.testing.assert_allclose(sea[1], (0.5 * vectors[3] + 0.25 * vectors[0]) / 0.75, rtol=1e-6)
    assert not fallback.any()
    sims = similarity_to_sea(responses, sea)
    expected = vectors[0] @ sea[0] / (np.linalg.norm(vectors[0]) * np.linalg.norm(sea[0]))
    assert sims[0] == pytest.approx(expected, rel=1e-6)


def test_sea_falls_back_to_plain_mean_when_answering_weights_are_zero():
    vectors = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32)
    responses = EmbeddedResponses(vectors, [0, 1, 2, 0], [0, 1, 2, 2], [0, 0, 1, 1], 3, 2)
    sea, fallback = synthetic_exemplary_answers(responses, np.array([0.0, 0.0, 1.0]))
    assert list(fallback) == [True, False]
    np.testing.assert_allclose(sea[0], [0.5, 0.5])


def test_progress_and_cancel():
    states = []
    out = iterative_reweighting(embed(random_sparse(1), 9, 7), progress=Progress(states.append))
    assert states[0].stage == "AQER iterations" and states[-1].done == out.iterations
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        iterative_reweighting(embed(random_sparse(1), 9, 7), cancel=token)
