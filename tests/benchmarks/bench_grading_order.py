"""How many graded texts each grading order needs before Cohen's kappa between the judge and
a person on a 10-question Yes/No checklist is known to +-0.10 (95% interval half-width).

Simulated, seeded: 300 texts, 10 questions whose pass rates run from 60% to 95% (most texts
pass, as in real checklists); the judge passes too easily (it answers Yes to 20% of the
questions a person fails and No to 4% of those a person passes); a second judge (or condition)
makes its own mistakes, which is where the two disagree. One grade = one text with all 10
answers; kappa is pooled over the answers. Orders:

* random           - the texts in a random order (every grade also counts for the corrected mean)
* judge's score    - round-robin over strata of the judge's score, rarest first
* disagreement     - where the two judges disagree most first
* half random+score - grading_order(random_share=0.5): half random, half by score strata
* half random+both  - the same with a second judge: within a stratum, disagreements first

"kappa - true" is how far the kappa measured at that point sits from the kappa over all 300
texts (mean over runs): targeted orders measure agreement on the texts they picked, which is
why grading_order() keeps a random part and the corrected mean uses only that part.
No order may stop before MIN_TEXTS texts: the large-sample interval of a handful of texts that
all agree has no width.

    .venv/bin/python tests/benchmarks/bench_grading_order.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.reliability import cohen_kappa
from core.reliability.grading_order import grading_order, width_after_each_grade

TEXTS, QUESTIONS, RUNS, TARGET = 300, 10, 40, 0.10
#: An interval from fewer texts is not trusted (a large-sample interval on 2 or 3 texts that
#: all agree has no width at all), so no order may stop before this many.
MIN_TEXTS = 10


def simulate(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pass_rate = np.linspace(0.60, 0.95, QUESTIONS)
    quality = rng.normal(0, 1, TEXTS)[:, None]
    person = (rng.random((TEXTS, QUESTIONS)) < 1 / (1 + np.exp(-(quality + np.log(
        pass_rate / (1 - pass_rate)))))).astype(int)

    def judge_of(false_pass: float, false_fail: float) -> np.ndarray:
        u = rng.random(person.shape)
        return np.where(person == 1, (u >= false_fail).astype(int), (u < false_pass).astype(int))

    return person, judge_of(0.20, 0.04), judge_of(0.15, 0.08)


def needed(judge: np.ndarray, person: np.ndarray, order) -> tuple[int | None, float | None]:
    for step in width_after_each_grade(judge.tolist(), person.tolist(), order):
        hw = step.half_width
        if hw is not None and 0 < hw <= TARGET and step.n_graded >= MIN_TEXTS:
            return step.n_graded, step.result.value
    return None, None


def main() -> None:
    rng = np.random.default_rng(2024)
    results: dict[str, list[tuple[int | None, float | None, float]]] = {}
    start = time.perf_counter()
    for run in range(RUNS):
        person, judge, other = simulate(rng)
        true = cohen_kappa(np.vstack([judge.ravel(), person.ravel()])).value
        dispute = np.abs(judge - other).sum(axis=1)
        orders = {
            "random": [int(i) for i in rng.permutation(TEXTS)],
            "judge's score": list(grading_order(judge.tolist(), random_share=0.0,
                                                seed=run).order),
            "disagreement": [int(i) for i in np.lexsort((rng.random(TEXTS), -dispute))],
            "half random+score": list(grading_order(judge.tolist(), random_share=0.5,
                                                    seed=run).order),
            "half random+both": list(grading_order(judge.tolist(), others=[other.tolist()],
                                                   random_share=0.5, seed=run).order),
        }
        for name, order in orders.items():
            count, value = needed(judge, person, order)
            results.setdefault(name, []).append((count, value, true))
    print(f"Texts graded until kappa (judge vs person) is known to +-{TARGET:.2f}: "
          f"{TEXTS} texts x {QUESTIONS} Yes/No questions, {RUNS} simulated studies")
    print(f"{'order':<19} {'median':>7} {'mean':>7} {'10%-90%':>11} {'never':>6} "
          f"{'kappa - true':>13}")
    for name, rows in results.items():
        counts = np.array([c for c, _, _ in rows if c is not None], dtype=float)
        bias = np.mean([v - t for c, v, t in rows if c is not None]) if len(counts) else np.nan
        never = sum(1 for c, _, _ in rows if c is None)
        spread = (f"{np.percentile(counts, 10):.0f}-{np.percentile(counts, 90):.0f}"
                  if len(counts) else "-")
        print(f"{name:<19} {np.median(counts):>7.0f} {counts.mean():>7.1f} {spread:>11} "
              f"{never:>6} {bias:>+13.3f}")
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
