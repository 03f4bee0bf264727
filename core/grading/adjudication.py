"""The items raters disagree on, side by side, and the grade they agree on.

:func:`disputes` lists the items where the raters' grades of a dimension lie further apart than
a threshold the user sets (or where they answered a checklist question differently), with
every rater's grades and notes of the item; :func:`adjudicate` records the agreed grade as its
own kind of rating (:data:`core.judge_check.ADJUDICATED`: who decided, when, from which grades,
never over a rater's own grade). The report and the exports can then compare the judge with
the agreed grades (:data:`core.judge_check.AGREED`) and mark each label's origin.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core import judge_check
from core.judge_check import JudgeData, Rating

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = ["DEFAULT_THRESHOLD", "Dispute", "ItemDisputes", "adjudicate", "disputes"]

#: Raters disagree on a dimension when their grades lie more than this many points apart.
DEFAULT_THRESHOLD = 1.0


@dataclass(frozen=True)
class Dispute:
    """One dimension's grade (``question`` "") or one checklist question on which the raters
    of an item disagree: each rater's grade (a number, or True/False for Yes/No) and how far
    apart they are (``spread``: highest minus lowest grade; 1 for a split Yes/No)."""

    dimension: str
    question: str
    grades: tuple[tuple[str, float | bool], ...]
    spread: float
    agreed: float | bool | None = None  #: the grade recorded as agreed, if any

    @property
    def what(self) -> str:
        return f"{self.dimension}: {self.question}" if self.question else self.dimension


@dataclass
class ItemDisputes:
    """An item the raters disagree on: its disputes, every rater's rating of it (with their
    notes), and the agreed grade recorded so far (None: not decided yet)."""

    item_id: str
    text: str
    context: str
    disputes: list[Dispute]
    ratings: list[Rating]
    adjudication: Rating | None = None
    judge_hidden: bool = True  #: the judge's scores are not part of this view
    notes: list[tuple[str, str]] = field(default_factory=list)  #: (rater, note)

    @property
    def spread(self) -> float:
        return max((d.spread for d in self.disputes), default=0.0)

    @property
    def decided(self) -> bool:
        """Every dispute of the item has an agreed grade."""
        return self.adjudication is not None and all(d.agreed is not None
                                                     for d in self.disputes)


def _agreed(adjudication: Rating | None, dimension: str, question: str) -> float | bool | None:
    if adjudication is None:
        return None
    if question:
        return adjudication.answers.get(dimension, {}).get(question)
    return adjudication.scores.get(dimension)


def disputes(judge: JudgeData, ratings: Iterable[Rating], *,
             threshold: float = DEFAULT_THRESHOLD, questions: bool = True,
             adjudications: Iterable[Rating] = ()) -> list[ItemDisputes]:
    """The items where at least two raters graded a dimension more than ``threshold`` points
    apart (``questions``: or answered one of its checklist questions differently), biggest
    disagreement first (then in the judge's order). Held-out items are left out. An item
    already decided stays listed with its agreed grade."""
    if threshold < 0:
        raise ValueError(f"The threshold must be 0 or more points (got {threshold:g}).")
    by_item: dict[str, list[Rating]] = {}
    for r in ratings:
        if not r.empty and not r.adjudicated:
            by_item.setdefault(r.item_id, []).append(r)
    decided = {r.item_id: r for r in adjudications if r.adjudicated}
    out: list[ItemDisputes] = []
    for item in judge.items:
        rated = by_item.get(item.item_id, [])
        if item.held_out or len(rated) < 2:
            continue
        adj = decided.get(item.item_id)
        found: list[Dispute] = []
        for dim in judge.dimensions:
            grades = tuple((r.rater, r.scores[dim]) for r in rated if dim in r.scores)
            if len(grades) >= 2:
                values = [g for _, g in grades]
                spread = float(max(values) - min(values))
                if spread > threshold + 1e-9:
                    found.append(Dispute(dim, "", grades, spread, _agreed(adj, dim, "")))
            if not questions:
                continue
            for question in judge.questions.get(dim, []):
                said = tuple((r.rater, r.answers[dim][question]) for r in rated
                             if question in r.answers.get(dim, {}))
                if len(said) >= 2 and len({a for _, a in said}) > 1:
                    found.append(Dispute(dim, question, said, 1.0,
                                         _agreed(adj, dim, question)))
        if found:
            out.append(ItemDisputes(item.item_id, item.text, item.context, found, rated, adj,
                                    notes=[(r.rater, r.note) for r in rated if r.note]))
    order = {i.item_id: k for k, i in enumerate(judge.items)}
    out.sort(key=lambda d: (-d.spread, order[d.item_id]))
    return out


def adjudicate(project: Project, method: str, item: ItemDisputes, *, decided_by: str,
               scores: dict[str, float] | None = None,
               answers: dict[str, dict[str, bool]] | None = None, note: str = "",
               allowed: Sequence[float] | None = None) -> Rating:
    """Record the agreed grade of ``item`` (decided by ``decided_by`` now, from the raters'
    grades shown: ``item.ratings``). ``allowed``: the grades a person may give (the judge's
    scale), checked."""
    for dim, value in (scores or {}).items():
        if allowed is not None and round(float(value), 9) not in {round(a, 9) for a in allowed}:
            raise ValueError(f"{value:g} is not one of the grades of {dim}.")
    return judge_check.save_adjudication(project, method, item.item_id, decided_by=decided_by,
                                         sources=item.ratings, scores=scores,
                                         answers=answers, note=note)
