"""Who grades which item, in what order, and how far each rater has got.

* **The order.** By default the items come in the project's random order
  (:func:`core.judge_check.grading_order`): the items graded first are a random sample. The
  other order, "fewer grades to a usable interval" (:func:`core.reliability.grading_order`),
  interleaves items drawn at random with items chosen by the judge's score (rare scores first)
  and by where judges disagree; it is computed once and recorded with who chose it and when
  (:func:`choose_order`), so it does not move when another model scores the items later.
* **A random sample to grade.** "Draw a random sample of N items to grade" records which items
  were drawn, from how many, with which seed, by whom and when (:func:`draw_sample`); they are
  offered first, and the corrected mean (:mod:`core.grading.statistics`) uses only them.
* **Assignment.** Each item to ``k`` of the raters (:func:`assign`): every rater gets as many
  items as the others (within one), every item at least two raters (so agreement can be
  computed), and the pairs of raters share items as evenly as possible. Kept in the project
  (:func:`make_plan`); each rater is offered only their items, in the order above.
* **Blind grading** (:func:`set_blind`): the app asks before a rater sees the report or the
  adjudication view, since their later grades are then marked not blind
  (:func:`core.judge_check.record_unblinding`).

Everything here is stored as artefacts of kind ``<method>.grading_order`` (the order, as
today's seed), ``<method>.random_sample`` and ``<method>.grading_plan``; each change is a
person's edit (who and when), so it is in the project's history.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from core import judge_check
from core.judge_check import JudgeData, Rating

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "FEWER_GRADES",
    "ORDERS",
    "RANDOM",
    "DrawnSample",
    "GradingPlan",
    "OrderChoice",
    "RaterProgress",
    "assign",
    "blind_grading",
    "choose_order",
    "clear_plan",
    "draw_sample",
    "drawn_sample",
    "graded_items",
    "item_order",
    "load_plan",
    "make_plan",
    "order_choice",
    "population",
    "random_items",
    "rater_progress",
    "rater_queue",
    "report_sample",
    "set_blind",
]

RANDOM = "random"
FEWER_GRADES = "fewer_grades"
#: The orders offered, by key, in words.
ORDERS = {
    RANDOM: "Random order (the items graded first are a random sample)",
    FEWER_GRADES: "Fewer grades to a usable interval (half at random, half by the judge's "
                  "score and where judges disagree)",
}
#: The share of the "fewer grades" order kept random (for the corrected mean).
RANDOM_SHARE = 0.5


def _order_kind(method: str) -> str:
    return f"{method}.grading_order"


def _plan_kind(method: str) -> str:
    return f"{method}.grading_plan"


def _put(project: Project, kind: str, key: str, payload: dict[str, Any], who: str) -> str:
    """Store ``payload`` as a person's edit of (kind, key); returns when."""
    current = project.get_artefact(kind, key)
    if current is None:
        current = project.put_artefact(kind, key, {}, origin="human")
    return project.record_edit(current, "", current.payload, payload, who).updated_at


def population(judge: JudgeData) -> list[str]:
    """The items that can count in the agreement: scored by the judge, not held out, in the
    judge's order."""
    return [i.item_id for i in judge.items if not i.held_out and i.summary_score is not None]


# ------------------------------------------------------------------------------ the order
@dataclass(frozen=True)
class OrderChoice:
    """The project's grading order: ``order`` (a key of :data:`ORDERS`), its ``seed``, and for
    :data:`FEWER_GRADES` the recorded order (``items``) with, per place, whether it belongs to
    the random part and why it is there."""

    seed: int
    order: str = RANDOM
    items: tuple[str, ...] = ()
    random_part: tuple[bool, ...] = ()
    why: tuple[str, ...] = ()
    random_share: float = RANDOM_SHARE
    by: str = ""
    at: str = ""

    def describe(self) -> str:
        if self.order == RANDOM:
            return (f"a random order (seed {self.seed}): the items graded first are a random "
                    "sample of all of them")
        share = f"{self.random_share * 100:.0f}%"
        return (f"the order that reaches a usable interval with fewer grades, chosen by "
                f"{self.by or 'someone'} on {self.at[:10] or 'an earlier day'} (seed "
                f"{self.seed}): {share} of the places are drawn at random, the others chosen by "
                "the judge's score (rare scores first) and where judges disagree. Agreement on "
                "the chosen items over-represents rare scores; the corrected mean uses only "
                "the random ones")


def order_choice(project: Project, method: str, *, create: bool = True) -> OrderChoice | None:
    """The project's grading order (the random one, its seed made on first use, unless
    another was chosen with :func:`choose_order`). ``create`` False: None when the project has
    no grading order yet (nothing is written)."""
    seed = judge_check.grading_seed(project, method, create=create)
    if seed is None:
        return None
    found = project.get_artefact(_order_kind(method), "seed")
    p = found.payload if found is not None and isinstance(found.payload, dict) else {}
    if p.get("order") != FEWER_GRADES or not isinstance(p.get("items"), list):
        return OrderChoice(seed)
    items = tuple(str(i) for i in p["items"])
    random_part = tuple(bool(r) for r in p.get("random") or [])
    why = tuple(str(w) for w in p.get("why") or [])
    if len(random_part) != len(items):
        random_part = (False,) * len(items)
    if len(why) != len(items):
        why = ("",) * len(items)
    edits = project.list_edits((_order_kind(method), "seed"))
    return OrderChoice(seed, FEWER_GRADES, items, random_part, why,
                       float(p.get("random_share", RANDOM_SHARE)),
                       by=edits[-1].who if edits else "", at=edits[-1].at if edits else "")


def choose_order(project: Project, method: str, judge: JudgeData, order: str, *, who: str,
                 others: Sequence[JudgeData] = (),
                 random_share: float = RANDOM_SHARE) -> OrderChoice:
    """Make ``order`` the project's grading order (recorded with who and when). For
    :data:`FEWER_GRADES` the order is computed now from the judge's scores and ``others``
    (other judges or conditions of the same items: where they disagree comes early) and kept
    as it is. The seed stays the project's, so the random part is drawn from it."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)} (got {order!r})")
    seed = judge_check.grading_seed(project, method)
    assert seed is not None
    if order == RANDOM:
        _put(project, _order_kind(method), "seed", {"seed": seed, "order": RANDOM}, who)
        return _choice(project, method)
    from core.reliability import grading_order

    ids = population(judge)
    if not ids:
        raise ValueError("The judge scored no item that can be graded, so there is nothing to "
                         "order.")
    scores = [_score(judge, i) for i in ids]
    other_scores = [[_score(o, i) for i in ids] for o in others]
    made = grading_order(scores, others=other_scores, random_share=random_share, seed=seed)
    payload = {"seed": seed, "order": FEWER_GRADES, "random_share": random_share,
               "items": [ids[k] for k in made.order], "random": list(made.random_part),
               "why": list(made.why)}
    _put(project, _order_kind(method), "seed", payload, who)
    return _choice(project, method)


def _choice(project: Project, method: str) -> OrderChoice:
    choice = order_choice(project, method)
    assert choice is not None
    return choice


def _score(judge: JudgeData, item_id: str) -> float | None:
    item = judge.item(item_id)
    return item.summary_score if item is not None else None


def item_order(judge: JudgeData, choice: OrderChoice) -> list[str]:
    """Every item offered for grading, in the order of ``choice``: the recorded order's items
    (those still gradable), then any item it does not hold (scored later), in the random
    order."""
    base = judge_check.grading_order(judge, choice.seed)
    if choice.order == RANDOM:
        return base
    offered = set(base)
    recorded = [i for i in choice.items if i in offered]
    taken = set(recorded)
    return recorded + [i for i in base if i not in taken]


# -------------------------------------------------------------------------- random sample
@dataclass(frozen=True)
class DrawnSample:
    """A recorded draw of items to grade at random."""

    items: tuple[str, ...]
    seed: int
    population: int
    drawn_by: str = ""
    drawn_at: str = ""

    @property
    def size(self) -> int:
        return len(self.items)

    def describe(self) -> str:
        when = f" on {self.drawn_at[:10]}" if self.drawn_at else ""
        by = f" by {self.drawn_by}" if self.drawn_by else ""
        return (f"{self.size} of {self.population} items drawn at random{by}{when} (seed "
                f"{self.seed}; the same seed draws the same items)")


def _sample_kind(method: str) -> str:
    return f"{method}.random_sample"


def draw_sample(project: Project, method: str, judge: JudgeData, size: int, *, who: str,
                seed: int | None = None) -> DrawnSample:
    """Draw ``size`` of the gradable items at random (:func:`core.reliability.draw_random_sample`
    over :func:`population`) and record the draw (which items, seed, by whom, when). A new
    draw replaces the last one (kept in the edit history)."""
    from core.reliability import draw_random_sample

    ids = population(judge)
    if not ids:
        raise ValueError("The judge scored no item that can be graded, so nothing can be "
                         "drawn.")
    if not 0 < size <= len(ids):
        raise ValueError(f"Draw between 1 and {len(ids)} items (asked for {size}).")
    if seed is None:
        import secrets

        seed = secrets.randbelow(1_000_000)
    drawn = draw_random_sample(len(ids), size, seed=seed)
    chosen = [ids[k] for k in drawn.positions]
    payload = {"version": 1, "seed": int(seed), "population": len(ids), "items": chosen}
    at = _put(project, _sample_kind(method), "sample", payload, who)
    return DrawnSample(tuple(chosen), int(seed), len(ids), who, at)


def drawn_sample(project: Project, method: str) -> DrawnSample | None:
    """The last recorded draw, or None."""
    found = project.get_artefact(_sample_kind(method), "sample")
    if found is None or not isinstance(found.payload, dict) or not found.payload.get("items"):
        return None
    p = found.payload
    edits = project.list_edits(found)
    return DrawnSample(tuple(str(i) for i in p["items"]), int(p.get("seed", 0)),
                       int(p.get("population", 0)), edits[-1].who if edits else "",
                       found.updated_at)


def random_items(judge: JudgeData, choice: OrderChoice, sample: DrawnSample | None,
                 graded: Iterable[str]) -> tuple[set[str], str]:
    """Which of the ``graded`` items were drawn at random (the only ones that may correct the
    judge's mean), and how, in words.

    With a recorded draw: the graded items of the draw. Otherwise the longest run of graded
    items at the start of the random order (the first m of a random order are a random
    sample; an item passed over ends the run), counting in the "fewer grades" order only its
    places drawn at random."""
    done = set(graded)
    if sample is not None:
        drawn = {i for i in sample.items if i in done}
        return drawn, f"{len(drawn)} graded of the {sample.describe()}"
    ids = set(population(judge))
    if choice.order == RANDOM:
        queue = [i for i in judge_check.grading_order(judge, choice.seed) if i in ids]
        what = f"the random order (seed {choice.seed})"
    else:
        order = item_order(judge, choice)
        flags = dict(zip(choice.items, choice.random_part, strict=True))
        queue = [i for i in order if i in ids and flags.get(i, False)]
        what = f"the places drawn at random in the recorded order (seed {choice.seed})"
    got: set[str] = set()
    for item in queue:
        if item not in done:
            break
        got.add(item)
    return got, f"the first {len(got)} items of {what}, all graded"


def report_sample(project: Project, method: str, judge: JudgeData,
                  graded: Iterable[str]) -> tuple[set[str], str] | None:
    """The graded items that count as drawn at random for the corrected mean, from what the
    project records (a drawn sample, the chosen order: :func:`random_items`); None when it
    records no grading order (the report then says the ratings' sampling is unknown)."""
    choice = order_choice(project, method, create=False)
    if choice is None:
        return None
    return random_items(judge, choice, drawn_sample(project, method), graded)


def graded_items(ratings: Iterable[Rating], *, rater: str | None = None,
                 adjudications: Iterable[Rating] = ()) -> set[str]:
    """The items with a grade to compare the judge with: ``rater``'s (a name), anyone's (None)
    or, for :data:`core.judge_check.AGREED`, anyone's and the agreed ones."""
    out = {r.item_id for r in ratings if not r.empty and not r.adjudicated
           and (rater in (None, judge_check.AGREED) or r.rater == rater)}
    if rater == judge_check.AGREED:
        out |= {r.item_id for r in adjudications if not r.empty}
    return out


# ----------------------------------------------------------------------------- assignment
def assign(items: Sequence[str], raters: Sequence[str], k: int, *,
           seed: int) -> dict[str, list[str]]:
    """Each of ``items`` to ``k`` of ``raters``, balanced and overlapping: for each item (in
    the given order) the ``k`` raters with the fewest items so far, ties broken by the fewest
    items shared with the raters already chosen for it, then at random (``seed``). Every rater
    ends with as many items as the others, within one; each rater's items keep the given
    order."""
    names = [r.strip() for r in raters]
    if any(not n for n in names):
        raise ValueError("Every rater needs a name.")
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"A rater is named twice: {', '.join(twice)}.")
    if len(names) < 2:
        raise ValueError("Name at least two raters: agreement needs two people on the same "
                         "items.")
    if not 2 <= k <= len(names):
        raise ValueError(f"Each item needs from 2 to {len(names)} raters (asked for {k}): "
                         "with one rater per item no agreement can be computed.")
    if len(set(items)) != len(items):
        raise ValueError("An item is listed twice.")
    rng = np.random.default_rng(seed)
    load = dict.fromkeys(names, 0)
    shared: dict[frozenset[str], int] = {}
    out: dict[str, list[str]] = {n: [] for n in names}
    for item in items:
        chance = dict(zip(names, rng.random(len(names)), strict=True))
        chosen: list[str] = []
        for _ in range(k):
            best = min((n for n in names if n not in chosen), key=lambda n: (
                load[n], sum(shared.get(frozenset((n, c)), 0) for c in chosen), chance[n]))
            chosen.append(best)
        for n in chosen:
            load[n] += 1
            out[n].append(item)
        for a in range(len(chosen)):
            for b in range(a + 1, len(chosen)):
                pair = frozenset((chosen[a], chosen[b]))
                shared[pair] = shared.get(pair, 0) + 1
    return out


@dataclass(frozen=True)
class GradingPlan:
    """The items each rater grades (``items``: rater -> item ids in grading order), ``k``
    raters per item, made by ``made_by`` at ``made_at`` with ``seed``."""

    raters: tuple[str, ...]
    k: int
    items: dict[str, tuple[str, ...]] = field(default_factory=dict)
    seed: int = 0
    made_by: str = ""
    made_at: str = ""

    def items_of(self, rater: str) -> tuple[str, ...] | None:
        """The items of ``rater``, None when the plan does not name them."""
        return self.items.get(rater)

    def raters_of(self, item_id: str) -> list[str]:
        return [r for r in self.raters if item_id in self.items.get(r, ())]

    @property
    def all_items(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.raters:
            seen.update(dict.fromkeys(self.items.get(r, ())))
        return list(seen)

    def shared(self) -> dict[tuple[str, str], int]:
        """Items each pair of raters shares (the overlap agreement is computed on)."""
        out = {}
        for a in range(len(self.raters)):
            for b in range(a + 1, len(self.raters)):
                x, y = self.raters[a], self.raters[b]
                out[(x, y)] = len(set(self.items.get(x, ())) & set(self.items.get(y, ())))
        return out

    def describe(self) -> str:
        n = len(self.all_items)
        loads = sorted({len(v) for v in self.items.values()})
        each = f"{loads[0]}" if len(loads) == 1 else f"{loads[0]} to {loads[-1]}"
        pairs = self.shared().values()
        overlap = (f"; every two raters share {min(pairs)} to {max(pairs)} items"
                   if pairs and min(pairs) != max(pairs) else
                   f"; every two raters share {min(pairs)} items" if pairs else "")
        when = f" on {self.made_at[:10]}" if self.made_at else ""
        by = f" by {self.made_by}" if self.made_by else ""
        return (f"{n} items, each for {self.k} of {len(self.raters)} raters "
                f"({', '.join(self.raters)}): {each} items each{overlap}. Made{by}{when} "
                f"(seed {self.seed}).")


def make_plan(project: Project, method: str, judge: JudgeData, raters: Sequence[str], k: int,
              *, who: str, items: Sequence[str] | None = None,
              seed: int | None = None) -> GradingPlan:
    """Assign ``items`` (default: the drawn sample if there is one, else every gradable item),
    in the project's grading order, to ``k`` of ``raters`` each (:func:`assign`) and keep the
    plan in the project (who and when). Replaces an earlier plan (kept in the edit history);
    grades already given stay."""
    choice = _choice(project, method)
    order = item_order(judge, choice)
    if items is None:
        sample = drawn_sample(project, method)
        wanted = set(sample.items) if sample is not None else set(population(judge))
    else:
        wanted = set(items)
        unknown = sorted(wanted - set(order))
        if unknown:
            raise ValueError(f"Not items to grade: {', '.join(unknown[:5])}"
                             + (" …" if len(unknown) > 5 else ""))
    ordered = [i for i in order if i in wanted]
    if not ordered:
        raise ValueError("There is no item to hand out.")
    if seed is None:
        seed = choice.seed
    given = assign(ordered, raters, k, seed=seed)
    names = tuple(given)
    payload = {"version": 1, "raters": list(names), "k": k, "seed": int(seed),
               "items": {r: list(v) for r, v in given.items()}}
    blind = project.get_artefact(_plan_kind(method), "plan")
    if blind is not None and isinstance(blind.payload, dict) and "blind" in blind.payload:
        payload["blind"] = bool(blind.payload["blind"])
    else:
        payload["blind"] = True
    at = _put(project, _plan_kind(method), "plan", payload, who)
    return GradingPlan(names, k, {r: tuple(v) for r, v in given.items()}, int(seed), who, at)


def load_plan(project: Project, method: str) -> GradingPlan | None:
    """The project's assignment of items to raters, or None."""
    found = project.get_artefact(_plan_kind(method), "plan")
    if found is None or not isinstance(found.payload, dict) or not found.payload.get("raters"):
        return None
    p = found.payload
    edits = project.list_edits(found)
    raters = tuple(str(r) for r in p["raters"])
    items = {str(r): tuple(str(i) for i in v) for r, v in (p.get("items") or {}).items()}
    return GradingPlan(raters, int(p.get("k", 2)), items, int(p.get("seed", 0)),
                       edits[-1].who if edits else "", found.updated_at)


def clear_plan(project: Project, method: str, *, who: str) -> None:
    """No assignment any more: every rater is offered every item (grades stay)."""
    found = project.get_artefact(_plan_kind(method), "plan")
    if found is None:
        return
    blind = bool(found.payload.get("blind", False)) if isinstance(found.payload, dict) else False
    _put(project, _plan_kind(method), "plan", {"version": 1, "raters": [], "blind": blind},
         who)


def set_blind(project: Project, method: str, on: bool, *, who: str) -> None:
    """Blind grading on or off (recorded): when on, the app asks before a rater sees the judge's
    scores or other raters' grades."""
    found = project.get_artefact(_plan_kind(method), "plan")
    payload = dict(found.payload) if found is not None and isinstance(found.payload, dict) \
        else {"version": 1, "raters": []}
    payload["blind"] = bool(on)
    _put(project, _plan_kind(method), "plan", payload, who)


def blind_grading(project: Project, method: str) -> bool:
    """Whether blind grading is on (off until someone switches it on or makes a plan)."""
    found = project.get_artefact(_plan_kind(method), "plan")
    return bool(found is not None and isinstance(found.payload, dict)
                and found.payload.get("blind", False))


def rater_queue(judge: JudgeData, choice: OrderChoice, *, rater: str,
                plan: GradingPlan | None = None,
                sample: DrawnSample | None = None) -> list[str]:
    """The items ``rater`` is offered, in order: the project's order (``choice``), the drawn
    sample's items first, only the rater's own items when the plan names them."""
    order = item_order(judge, choice)
    if sample is not None:
        drawn = set(sample.items)
        order = [i for i in order if i in drawn] + [i for i in order if i not in drawn]
    mine = plan.items_of(rater) if plan is not None else None
    if mine is not None:
        own = set(mine)
        order = [i for i in order if i in own]
    return order


@dataclass(frozen=True)
class RaterProgress:
    """How far one rater has got: of their ``assigned`` items (every gradable item without a
    plan), ``graded``; ``outside``: items they graded that were not theirs; ``not_blind``:
    their grades saved after they saw the judge's scores or other raters' grades."""

    rater: str
    assigned: int
    graded: int
    outside: int = 0
    not_blind: int = 0

    @property
    def remaining(self) -> int:
        return self.assigned - self.graded

    @property
    def share(self) -> float:
        return self.graded / self.assigned if self.assigned else 0.0

    def sentence(self) -> str:
        text = f"{self.rater}: {self.graded} of {self.assigned} graded"
        if self.outside:
            text += f", {self.outside} more outside their items"
        if self.not_blind:
            text += f", {self.not_blind} not blind"
        return text


def rater_progress(judge: JudgeData, ratings: Iterable[Rating],
                   plan: GradingPlan | None = None) -> list[RaterProgress]:
    """Each rater's progress (the plan's raters first, then anyone else who graded)."""
    gradable = set(judge_check.grading_order(judge, 0))
    own: dict[str, set[str]] = {}
    not_blind: dict[str, int] = {}
    for r in ratings:
        if r.empty or r.adjudicated or r.item_id not in gradable:
            continue
        own.setdefault(r.rater, set()).add(r.item_id)
        if r.blind is False:
            not_blind[r.rater] = not_blind.get(r.rater, 0) + 1
    names = list(plan.raters) if plan is not None else []
    names += [n for n in own if n not in names]
    out = []
    for name in names:
        done = own.get(name, set())
        mine = plan.items_of(name) if plan is not None else None
        if mine is None:
            out.append(RaterProgress(name, len(gradable), len(done),
                                     not_blind=not_blind.get(name, 0)))
            continue
        theirs = set(mine) & gradable
        out.append(RaterProgress(name, len(theirs), len(done & theirs), len(done - theirs),
                                 not_blind.get(name, 0)))
    return out
