"""Which item to grade next: an order that reaches a usable agreement interval with fewer
grades, while keeping a random sample for the corrected mean.

* :func:`draw_random_sample` - "draw a random sample of N items to grade", recorded (seed,
  size, which items), so the corrected mean (:mod:`core.reliability.corrected_mean`) can use it.
* :func:`grading_order` - the order to grade in: random items (a prefix of one seeded random
  permutation, so any prefix of them is itself a random sample) interleaved with targeted
  items, taken round-robin from strata of the judge's score (rarest score first, so a rare
  answer is graded early) and, within a stratum, where the judges or conditions disagree most.
  Each place in the order records whether it belongs to the random part and why it was chosen.
* :func:`width_after_each_grade` - how wide the agreement interval (judge vs person) is after
  each grade, for the screen that shows progress.

Agreement measured on the targeted items describes those items (they over-represent rare
scores and disputes); the corrected mean uses only the random part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.reliability._common import Reliability
from core.reliability.agreement import cohen_kappa, gwet_ac1

__all__ = [
    "GradingOrder",
    "RandomSample",
    "WidthStep",
    "draw_random_sample",
    "grading_order",
    "width_after_each_grade",
]

RANDOM = "drawn at random (for the corrected mean)"


@dataclass(frozen=True)
class RandomSample:
    """A recorded random draw of items to grade: re-drawing with the same seed gives the same
    items."""

    positions: tuple[int, ...]  #: 0-based item positions, in the order drawn
    seed: int
    population: int  #: how many items it was drawn from

    @property
    def size(self) -> int:
        return len(self.positions)

    def mask(self) -> np.ndarray:
        """True for the drawn items (for ``corrected_mean(random_sample=...)``)."""
        out = np.zeros(self.population, dtype=bool)
        out[list(self.positions)] = True
        return out

    def describe(self) -> str:
        return (f"{self.size} of {self.population} items drawn at random (seed {self.seed}; "
                "the same seed draws the same items)")


def draw_random_sample(n_items: int, size: int, *, seed: int) -> RandomSample:
    """``size`` of ``n_items`` items drawn at random without replacement (seeded, recorded)."""
    if not 0 < size <= n_items:
        raise ValueError(f"Draw between 1 and {n_items} items (asked for {size}).")
    perm = np.random.default_rng(seed).permutation(n_items)
    return RandomSample(tuple(int(i) for i in perm[:size]), int(seed), int(n_items))


@dataclass(frozen=True)
class GradingOrder:
    """The items in the order to grade them, with why each comes where it does."""

    order: tuple[int, ...]  #: 0-based item positions
    random_part: tuple[bool, ...]  #: per place in ``order``: part of the random sample
    why: tuple[str, ...]  #: per place: "drawn at random ...", "judge's score 2 (rare) ..."
    seed: int
    random_share: float

    def random_sample(self, graded: int | None = None) -> RandomSample:
        """The random part among the first ``graded`` places (all when None), as a recorded
        random sample for the corrected mean."""
        upto = len(self.order) if graded is None else graded
        picked = tuple(i for i, r in zip(self.order[:upto], self.random_part[:upto],
                                         strict=True) if r)
        return RandomSample(picked, self.seed, len(self.order))


def _item_scores(scores: Sequence[Any]) -> tuple[np.ndarray, np.ndarray | None]:
    """(one summary score per item, answers items x questions or None)."""
    first = scores[0] if len(scores) else None
    if isinstance(first, (list, tuple, np.ndarray)):
        answers = np.array([[np.nan if v is None else float(v) for v in item] for item in scores])
        return np.nanmean(answers, axis=1), answers
    return np.array([np.nan if v is None else float(v) for v in scores]), None


def _checklist_answers(scores: Sequence[Any]) -> np.ndarray:
    """The answers items x questions of a judge compared with one that answered a checklist."""
    answers = _item_scores(scores)[1]
    if answers is None:
        raise ValueError("Every judge compared must answer the same checklist: one gave a "
                         "single score per item.")
    return answers


def _disagreement(judge: Sequence[Any], others: Sequence[Sequence[Any]]) -> np.ndarray:
    """Per item: how much the judge and the other judges/conditions disagree (0 = not at all)."""
    summary, answers = _item_scores(judge)
    if not others:
        return np.zeros(summary.shape[0])
    if answers is not None:
        stack = np.stack([answers] + [_checklist_answers(o) for o in others])
        return np.nanmean(np.nanmax(stack, axis=0) - np.nanmin(stack, axis=0), axis=1)
    stack = np.stack([summary] + [_item_scores(o)[0] for o in others])
    return np.nanmax(stack, axis=0) - np.nanmin(stack, axis=0)


def grading_order(judge: Sequence[Any], *, others: Sequence[Sequence[Any]] = (),
                  random_share: float = 0.5, strata: int = 5, seed: int = 0) -> GradingOrder:
    """The order to grade the items in (see the module).

    ``judge``: one score per item, or per item the judge's answers to every question of a
    checklist (1/0). ``others``: the same for other judges or conditions on the same items.
    ``random_share``: the share of the order kept random (0 to 1; at least the first item is
    random when it is above 0). ``strata``: how many bands of the judge's score at most.
    """
    if not 0.0 <= random_share <= 1.0:
        raise ValueError(f"random_share must be between 0 and 1 (got {random_share!r})")
    summary, _ = _item_scores(judge)
    n = int(summary.shape[0])
    rng = np.random.default_rng(seed)
    random_queue = [int(i) for i in rng.permutation(n)]
    dispute = _disagreement(judge, others)
    tiebreak = rng.random(n)

    levels = np.unique(summary[~np.isnan(summary)])
    if levels.shape[0] <= strata:
        band = np.searchsorted(levels, summary)
        labels = [f"judge's score {v:g}" for v in levels]
    else:
        edges = np.quantile(summary[~np.isnan(summary)], np.linspace(0, 1, strata + 1)[1:-1])
        band = np.searchsorted(edges, summary, side="right")
        labels = [f"judge's score band {b + 1} of {strata}" for b in range(strata)]
    band = np.where(np.isnan(summary), len(labels), band)
    labels.append("no judge's score")
    queues: list[list[int]] = []
    for b in range(len(labels)):
        members = np.flatnonzero(band == b)
        ranked = sorted(members, key=lambda i: (-dispute[i], tiebreak[i]))
        queues.append([int(i) for i in ranked])
    visit = sorted((b for b in range(len(queues)) if queues[b]), key=lambda b: len(queues[b]))
    sizes = {b: len(queues[b]) for b in visit}

    taken = np.zeros(n, dtype=bool)
    order: list[int] = []
    random_part: list[bool] = []
    why: list[str] = []
    n_random = 0
    turn = 0
    while len(order) < n:
        want_random = random_share > 0 and n_random < random_share * (len(order) + 1)
        if want_random or not any(queues[b] for b in visit):
            while taken[random_queue[0]]:
                random_queue.pop(0)
            item = random_queue.pop(0)
            n_random += 1
            order.append(item)
            random_part.append(True)
            why.append(RANDOM)
            taken[item] = True
            continue
        for _ in range(len(visit)):
            b = visit[turn % len(visit)]
            turn += 1
            while queues[b] and taken[queues[b][0]]:
                queues[b].pop(0)
            if queues[b]:
                item = queues[b].pop(0)
                rare = " (rare)" if sizes[b] * len(visit) < n / 2 else ""
                reason = f"{labels[b]}{rare}"
                if dispute[item] > 0:
                    reason += "; the judges disagree on it"
                order.append(item)
                random_part.append(False)
                why.append(reason)
                taken[item] = True
                break
        else:  # every targeted queue is empty: the rest come from the random permutation
            visit = []
    return GradingOrder(tuple(order), tuple(random_part), tuple(why), int(seed),
                        float(random_share))


@dataclass(frozen=True)
class WidthStep:
    """The agreement after ``n_graded`` grades."""

    n_graded: int
    result: Reliability

    @property
    def half_width(self) -> float | None:
        return self.result.half_width


def width_after_each_grade(judge: Sequence[Any], human: Sequence[Any], order: Sequence[int], *,
                           statistic: str = "cohen_kappa", categories: Sequence[Any] = (0, 1),
                           ci: float = 0.95) -> list[WidthStep]:
    """Agreement between the judge and the person after each grade, in ``order``.

    ``judge``/``human``: per item one answer, or per item the answers to every question of a
    checklist (pooled over the questions). Items not graded yet (None in ``human``) stop the
    list. ``statistic``: "cohen_kappa" or "gwet_ac1".
    """
    if statistic not in ("cohen_kappa", "gwet_ac1"):
        raise ValueError("statistic must be 'cohen_kappa' or 'gwet_ac1'")
    function = cohen_kappa if statistic == "cohen_kappa" else gwet_ac1
    judge_rows: list[np.ndarray] = []
    human_rows: list[np.ndarray] = []
    steps = []
    for count, item in enumerate(order, start=1):
        h = human[item]
        if h is None:
            break
        judge_rows.append(np.atleast_1d(np.asarray(judge[item], dtype=float)))
        human_rows.append(np.atleast_1d(np.asarray(h, dtype=float)))
        table = np.vstack([np.concatenate(judge_rows), np.concatenate(human_rows)])
        steps.append(WidthStep(count, function(table, categories=list(categories), ci=ci)))
    return steps
