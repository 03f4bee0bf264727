"""Does the AI judge agree with me? A person grades a sample of the items a method's judge
scored; this module keeps those ratings and compares them with the judge. Method-neutral: each
method turns its results into :class:`JudgeItem` rows (``core.majeval.judge_check``,
``core.interacteval.judge_check``) and its session stores ratings through the functions here.

    save_rating(project, "majeval", Rating("item 3", "Anna", {"Clarity": 4}, note="..."))
    ratings = load_ratings(project, "majeval")           # every rater, with when they rated
    seed = grading_seed(project, "majeval")              # kept in the project: reproducible
    item_id = next_item(judge, ratings, rater="Anna", seed=seed)   # a random order
    report = judge_report(judge, ratings, seed=seed)      # per dimension and per question
    write_report(path, report)                            # the same workbook from app and CLI
    export_ratings(path, ratings); read_ratings(path)     # Excel round trip

Ratings are artefacts of kind ``<method>.rating`` (one per rater and item) written through
``project.record_edit``, so who rated and when is in the project's edit history.

Which items are graded decides what the agreement means. Items are offered in a random order
(:func:`grading_order`, from a seed kept in the project: :func:`grading_seed`), the same for
every rater, so the items graded first are a random sample of the items the judge scored and
the agreement on them stands for all of them. :func:`describe_sampling` says how the graded
items were chosen (a random sample, all of them, a judge's highest and lowest scored, or
otherwise); the report, its workbook and the command line say it, and a sample that is not
representative is labelled so (a judge whose own extremes chose the items is not ranked best
on them: extremes inflate a correlation). Beside each dimension's agreement the report puts
the length baseline (the items' number of words against the people's ratings) and whether the
judge tells the items apart at all (``core.stats.judge_spread``). Items marked
``held_out`` (they were shown to the model inside a prompt, e.g. as think-aloud samples) are
never part of the agreement; the report counts them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import stats
from core.tables import (
    ExportReport,
    Sheet,
    TableError,
    cell_number,
    list_sheets,
    read_table,
    write_workbook,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.grading.statistics import AgreementBlock, CorrectedRow
    from core.project import Project
    from core.runs import CancelToken, Progress

__all__ = [
    "ADJUDICATED",
    "AGREED",
    "FAILS_GOOD_RATE",
    "HUMAN",
    "MIN_ITEMS",
    "ORIGIN_COLUMNS",
    "RANK_COLUMNS",
    "RATING_COLUMNS",
    "RATING_VERSION",
    "CheckResult",
    "DimensionAgreement",
    "Disagreement",
    "JudgeData",
    "JudgeItem",
    "JudgeRank",
    "JudgeReport",
    "PeopleAgreement",
    "QuestionAgreement",
    "Rating",
    "RatingsRead",
    "Sampling",
    "blind_text",
    "check_step",
    "decided_from_text",
    "describe_sampling",
    "export_ratings",
    "fair_ranking",
    "grading_order",
    "grading_seed",
    "held_out_line",
    "judge_report",
    "load_adjudications",
    "load_ratings",
    "next_item",
    "other_judges",
    "question_disagreements",
    "rank_judges",
    "rank_rows",
    "rater_names",
    "rating_kind",
    "read_ratings",
    "record_unblinding",
    "save_adjudication",
    "save_rating",
    "unblinded",
    "write_report",
    "zou_beside",
]

#: Fewer rated items than this and the report warns that the agreement is rough (as Kiln does).
MIN_ITEMS = 25
#: A question "fails good texts" when the judge says No to at least this share of the texts the
#: person said Yes to (its badge in the checklist editor).
FAILS_GOOD_RATE = 0.25
#: How the length baseline's rows of the report are named.
LENGTH_LABEL = "Text length alone"
#: The columns of the ratings workbook (one row per rating of a dimension or question).
RATING_COLUMNS = ("rater", "item", "dimension", "question", "rating", "note", "rated_at")
RATINGS_SHEET = "Ratings"
ALL_RATERS = "all raters"
#: Compare the judge with the grades raters agreed on (adjudicated), and with the raters' mean
#: where none was agreed: pass as ``rater`` to :func:`judge_report`.
AGREED = "agreed grades"


# ------------------------------------------------------------------------------ ratings
#: The kinds of rating: a person's own grade, and the grade raters agreed on after a
#: disagreement (adjudicated; who decided, when, from which grades).
HUMAN = "human"
ADJUDICATED = "adjudicated"
#: The stored shape of a rating (version 1, before several blind raters, had no version, no
#: kind and no blind mark: it reads as a person's grade whose blindness was not recorded).
RATING_VERSION = 2


@dataclass
class Rating:
    """One person's rating of one item: ``scores`` dimension -> rating on the method's scale,
    ``answers`` dimension -> question -> True (Yes) / False (No), a ``note``. ``at`` is when it
    was last saved (UTC, ISO), filled in by :func:`load_ratings`.

    ``kind`` is :data:`HUMAN` (a rater's own grade) or :data:`ADJUDICATED` (the grade agreed
    after raters disagreed: ``rater`` is who decided, ``sources`` the grades it was decided
    from). ``blind``: the rater had seen neither the judge's scores nor other raters' grades
    when saving it (None: not recorded, e.g. ratings made before EvalDesk recorded it or read
    from a file of unknown making)."""

    item_id: str
    rater: str
    scores: dict[str, float] = field(default_factory=dict)
    answers: dict[str, dict[str, bool]] = field(default_factory=dict)
    note: str = ""
    at: str = ""
    kind: str = HUMAN
    blind: bool | None = None
    sources: list[Rating] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": RATING_VERSION, "kind": self.kind, "item_id": self.item_id,
            "rater": self.rater, "scores": dict(self.scores),
            "answers": {d: dict(a) for d, a in self.answers.items()}, "note": self.note,
            "blind": self.blind}
        if self.kind == ADJUDICATED:
            out["from"] = [{**s.payload(), "at": s.at} for s in self.sources]
        return out

    @property
    def empty(self) -> bool:
        return not self.scores and not any(self.answers.values()) and not self.note.strip()

    @property
    def adjudicated(self) -> bool:
        return self.kind == ADJUDICATED

    @property
    def origin(self) -> str:
        """Where this label comes from, in words: "human (Anna)", "human (Anna, not blind)",
        "adjudicated (Cleo, from Anna and Ben)"."""
        if self.adjudicated:
            names = ", ".join(dict.fromkeys(s.rater for s in self.sources))
            return f"adjudicated ({self.rater}" + (f", from {names})" if names else ")")
        blind = {True: ", blind", False: ", not blind", None: ""}[self.blind]
        return f"human ({self.rater}{blind})"


def rating_kind(method: str) -> str:
    return f"{method}.rating"


def _key(rater: str, item_id: str) -> str:
    return json.dumps([rater, item_id], ensure_ascii=False)


def _adjudication_key(item_id: str) -> str:
    # a rater's name is never empty, so this key cannot be a person's rating
    return json.dumps(["", item_id, ADJUDICATED], ensure_ascii=False)


def _store(project: Project, method: str, key: str, rating: Rating, who: str) -> Rating:
    kind = rating_kind(method)
    current = project.get_artefact(kind, key)
    if current is None:
        current = project.put_artefact(kind, key, {}, origin="human")
    saved = project.record_edit(current, "", current.payload, rating.payload(), who)
    rating.at = saved.updated_at
    return rating


#: Leave ``blind`` to :func:`save_rating` (see there).
AUTO: Any = object()


def save_rating(project: Project, method: str, rating: Rating, *, who: str | None = None,
                blind: bool | None = AUTO) -> Rating:
    """Keep ``rating`` in the project as a person's edit (who = ``who`` or the rater, and
    when). Replaces that rater's earlier rating of the item; the old one stays in the edit
    history. Returns the rating with its time.

    ``blind``: by default True unless the project records that this rater saw the judge's
    scores or other raters' grades before now (:func:`record_unblinding`), then False; pass
    None for ratings whose making is unknown (read from someone's own file)."""
    rater = rating.rater.strip()
    if not rater:
        raise ValueError("A rating needs the name of the person who rated.")
    if blind is AUTO:
        blind = rater not in unblinded(project, method)
    rating = Rating(rating.item_id, rater, dict(rating.scores),
                    {d: dict(a) for d, a in rating.answers.items() if a}, rating.note,
                    blind=blind)
    return _store(project, method, _key(rater, rating.item_id), rating, who or rater)


def save_adjudication(project: Project, method: str, item_id: str, *, decided_by: str,
                      sources: Sequence[Rating], scores: dict[str, float] | None = None,
                      answers: dict[str, dict[str, bool]] | None = None,
                      note: str = "") -> Rating:
    """Keep the grade the raters agreed on for ``item_id`` (after they disagreed) as an
    adjudicated rating: who decided (``decided_by``), when (now), and the grades it was
    decided from (``sources``, as they were). Replaces an earlier decision on the item (kept
    in the edit history). It never replaces a rater's own grade."""
    who = decided_by.strip()
    if not who:
        raise ValueError("Say who decided the agreed grade.")
    answers = {d: dict(a) for d, a in (answers or {}).items() if a}
    if not scores and not answers:
        raise ValueError("Give the agreed grade (a rating or an answer) before recording it.")
    own = [Rating(s.item_id, s.rater, dict(s.scores), {d: dict(a) for d, a in s.answers.items()},
                  s.note, s.at, blind=s.blind) for s in sources if not s.adjudicated]
    if any(s.item_id != item_id for s in own):
        raise ValueError("The grades an agreed grade is decided from must be of the same item.")
    rating = Rating(item_id, who, dict(scores or {}), answers, note, kind=ADJUDICATED,
                    sources=own)
    return _store(project, method, _adjudication_key(item_id), rating, who)


def _rating_from(payload: dict[str, Any], at: str) -> Rating:
    p = payload
    blind = p.get("blind")
    return Rating(
        item_id=str(p["item_id"]), rater=str(p.get("rater", "")),
        scores={str(d): float(v) for d, v in (p.get("scores") or {}).items()
                if isinstance(v, int | float) and not isinstance(v, bool)},
        answers={str(d): {str(q): bool(a) for q, a in (qs or {}).items()}
                 for d, qs in (p.get("answers") or {}).items()},
        note=str(p.get("note") or ""), at=at,
        kind=ADJUDICATED if p.get("kind") == ADJUDICATED else HUMAN,
        blind=blind if isinstance(blind, bool) else None,
        sources=[_rating_from(s, str(s.get("at") or "")) for s in (p.get("from") or [])
                 if isinstance(s, dict) and "item_id" in s],
    )


def _stored(project: Project, method: str) -> list[Rating]:
    out = []
    for artefact in project.list_artefacts(rating_kind(method)):
        p = artefact.payload
        if not isinstance(p, dict) or "item_id" not in p:
            continue
        out.append(_rating_from(p, artefact.updated_at))
    return out


def load_ratings(project: Project, method: str) -> list[Rating]:
    """Every person's own rating of ``method`` (not the adjudicated ones:
    :func:`load_adjudications`), in the order they were first made. Ratings stored before
    the shape had a version read as a person's ratings whose blindness is not recorded."""
    return [r for r in _stored(project, method) if not r.adjudicated]


def load_adjudications(project: Project, method: str) -> list[Rating]:
    """The agreed grades recorded after raters disagreed, one per item (kind
    :data:`ADJUDICATED`)."""
    return [r for r in _stored(project, method) if r.adjudicated]


def _unblinded_kind(method: str) -> str:
    return f"{method}.unblinded"


def record_unblinding(project: Project, method: str, rater: str, what: str) -> None:
    """Record that ``rater`` saw the judge's scores or other raters' grades (``what``: "the
    report", "the adjudication view"): their grades saved from now on are marked not blind.
    The first time is kept (with when); later views add nothing."""
    rater = rater.strip()
    if not rater or project.get_artefact(_unblinded_kind(method), rater) is not None:
        return
    project.put_artefact(_unblinded_kind(method), rater, {"rater": rater, "saw": what},
                         origin="human")


def unblinded(project: Project, method: str) -> dict[str, str]:
    """Rater -> when they first saw the judge's scores or other raters' grades."""
    return {a.key: a.created_at for a in project.list_artefacts(_unblinded_kind(method))}


def rater_names(project: Project) -> list[str]:
    """Every person named in the project's judge checks (of any method): raters, people who
    decided agreed grades and raters a grading plan names, first seen first. For hiding
    names (de-identification) and for the raters' lists."""
    names: list[str] = []
    for artefact in project.list_artefacts():
        kind = artefact.kind
        if kind.endswith(".rating") and isinstance(artefact.payload, dict):
            names.append(str(artefact.payload.get("rater") or ""))
            names += [str(s.get("rater") or "") for s in artefact.payload.get("from") or []
                      if isinstance(s, dict)]
        elif kind.endswith(".unblinded"):
            names.append(artefact.key)
        elif kind.endswith(".grading_plan") and isinstance(artefact.payload, dict):
            names += [str(n) for n in artefact.payload.get("raters") or []]
    return [n for n in dict.fromkeys(n.strip() for n in names) if n]


# ------------------------------------------------------------------------- judge's side
@dataclass
class JudgeItem:
    """One item as the judge scored it. ``scores``: dimension -> the judge's score (None: the
    judge failed on it; never a default). ``explanation``: dimension -> the judge's rationale
    or answers in words. ``answers``: dimension -> checklist question -> True/False/None.
    ``held_out``: the item was shown to the model inside a prompt (not a fair test item)."""

    item_id: str
    text: str = ""
    context: str = ""
    scores: dict[str, float | None] = field(default_factory=dict)
    explanation: dict[str, str] = field(default_factory=dict)
    answers: dict[str, dict[str, bool | None]] = field(default_factory=dict)
    held_out: bool = False
    #: The group the item belongs to (a system, a class, a source), "" when the method gives
    #: none: the corrected mean is also given per group.
    group: str = ""

    @property
    def summary_score(self) -> float | None:
        """The mean of the judge's scores over the dimensions (None if it has none)."""
        values = [v for v in self.scores.values() if v is not None]
        return sum(values) / len(values) if values else None


@dataclass
class JudgeData:
    """What a method's judge produced, for grading and the report: the items, the dimensions
    and their checklist questions (InteractEval), the rating scale, and where it came from."""

    method: str  #: "MAJ-Eval" or "InteractEval" (for the screens and the Read me sheet)
    items: list[JudgeItem]
    dimensions: list[str]
    scale: tuple[int, int] = (1, 5)
    questions: dict[str, list[str]] = field(default_factory=dict)
    model: str = ""
    source: str = ""  #: the results it came from ("run 3, finished 2026-11-24 10:00")
    held_out_reason: str = ""  #: why items are held out ("think-aloud samples")
    #: What the judge's scores are when they are not on the rating scale (AQER: a similarity);
    #: "" = the same scale. Then the scores are compared by rank only: no mean absolute
    #: error, no alpha with the judge as a rater, disagreements by rank.
    judge_scale: str = ""
    #: The steps a person grades in (half points by default: a teacher's 3.5 is not a 3 or a
    #: 4; AQER grades in the whole points of the teacher's own scale).
    step: float = 0.5

    def grades(self) -> list[float]:
        """The grades a person may give, from the scale's low end to its high end."""
        low, high = self.scale
        n = round((high - low) / self.step)
        return [low + k * self.step for k in range(n + 1)]

    def item(self, item_id: str) -> JudgeItem | None:
        return next((i for i in self.items if i.item_id == item_id), None)


def _items(judge: JudgeData | Sequence[JudgeItem]) -> list[JudgeItem]:
    return judge.items if isinstance(judge, JudgeData) else list(judge)


def _place(seed: int, item_id: str) -> str:
    import hashlib

    return hashlib.sha256(f"{seed}\n{item_id}".encode()).hexdigest()


def grading_order(judge: JudgeData | Sequence[JudgeItem], seed: int) -> list[str]:
    """The order in which items are offered for grading: the items the judge scored in a
    random order fixed by ``seed`` (each item's place depends only on the seed and its name,
    so an item added later does not reshuffle the others), then the items it has no score for
    (they cannot count in the agreement). Held-out items (shown to the model in a prompt) are
    never offered."""
    items = [i for i in _items(judge) if not i.held_out]
    scored = sorted((i for i in items if i.summary_score is not None),
                    key=lambda i: _place(seed, i.item_id))
    unscored = sorted((i for i in items if i.summary_score is None),
                      key=lambda i: _place(seed, i.item_id))
    return [i.item_id for i in [*scored, *unscored]]


def next_item(judge: JudgeData | Sequence[JudgeItem], ratings: Iterable[Rating],
              rater: str, *, skip: Iterable[str] = (), seed: int = 0,
              order: Sequence[str] | None = None) -> str | None:
    """The next item ``rater`` should grade: the first of :func:`grading_order` (``seed``: the
    project's, :func:`grading_seed`) they have not graded nor skipped, so that the items
    graded first are a random sample of those the judge scored (the judge's own scores play
    no part in the choice). ``order``: the rater's own queue instead (their assigned items,
    a drawn sample first, or another order: :func:`core.grading.plan.rater_queue`). None
    when every item is graded."""
    done = {r.item_id for r in ratings if r.rater == rater and not r.empty}
    skipped = set(skip)
    queue = grading_order(judge, seed) if order is None else order
    return next((i for i in queue if i not in done and i not in skipped), None)


def grading_seed(project: Project, method: str, *, create: bool = True) -> int | None:
    """The seed of the project's grading order for ``method`` (kept in the project, so the
    order is the same for every rater, after reopening and on the command line); made on
    first use unless ``create`` is False (then None when there is none yet)."""
    kind = f"{method}.grading_order"
    found = project.get_artefact(kind, "seed")
    if found is not None and isinstance(found.payload, dict) \
            and isinstance(found.payload.get("seed"), int):
        return int(found.payload["seed"])
    if not create:
        return None
    import secrets

    seed = secrets.randbelow(1_000_000)
    project.put_artefact(kind, "seed", {"seed": seed, "order": "random"}, origin="generated")
    return seed


#: A graded set that shares this much more of a judge's extremes than chance (halfway from the
#: share expected by chance to all of them) counts as chosen by those extremes.
_EXTREMES_EXCESS = 0.5


def _extremes(judge: JudgeData, ids: Sequence[str], k: int) -> set[str]:
    """The ``k`` of ``ids`` an order alternating the judge's highest and lowest scored would
    offer first (what EvalDesk offered before the random order): the ceil(k/2) highest and
    floor(k/2) lowest mean scores, ties in the items' order."""
    scores = {i.item_id: i.summary_score for i in judge.items}
    scored = {i: score for i in ids if (score := scores.get(i)) is not None}
    place = {item_id: n for n, item_id in enumerate(ids)}
    ranked = [i for i in ids if i in scored]
    ranked.sort(key=lambda i: -scored[i])
    top, bottom = (k + 1) // 2, k // 2
    chosen = set(ranked[:top])
    rest = [i for i in ranked if i not in chosen]
    # the lowest: among equal scores the earlier item first, as the old order's min() did
    lowest = sorted(rest, key=lambda i: (scored[i], place[i]))[:bottom]
    return chosen | set(lowest)


@dataclass
class Sampling:
    """How the graded items were chosen, among the ``population`` items the judge scored (held
    out ones aside): ``kind`` "random" (the first ``graded`` of the random order of ``seed``),
    "all" (every one), "extremes" (mostly the highest and lowest scored by ``by``), "other"
    (none of these: skipped items, imported ratings, an earlier order) or "none" (nothing
    graded yet). ``representative``: the agreement on them stands for all of them."""

    kind: str
    graded: int
    population: int
    seed: int | None = None
    by: str = ""  #: whose extremes chose the items (kind "extremes")
    by_key: str = ""  #: that candidate's key (:func:`rank_judges`), "" for the judge itself
    overlap: int = 0  #: graded items among those extremes
    passed_over: int = 0  #: items before the last graded one in the random order, not graded
    how: str = ""  #: kind "drawn": the recorded random draw the graded items all belong to

    @property
    def representative(self) -> bool:
        return self.kind in ("random", "all", "drawn")

    @property
    def sentence(self) -> str:
        k, n = self.graded, self.population
        if self.kind == "none":
            return "No item is graded yet."
        if self.kind == "all":
            return (f"Every one of the {_plural(n, 'item')} the judge scored was graded, so the "
                    "agreement covers them all.")
        if self.kind == "random":
            return (f"The {_plural(k, 'graded item')} are a random sample of the {n} items the "
                    f"judge scored (the first {k} of a random order, seed {self.seed}), so the "
                    f"agreement on them stands for all {n}, within its interval.")
        if self.kind == "drawn":
            return (f"The {_plural(k, 'graded item')} were drawn at random ({self.how}), so "
                    f"the agreement on them stands for all {n} items the judge scored, within "
                    "its interval.")
        if self.kind == "extremes":
            return (f"Not a random sample: {self.overlap} of the {_plural(k, 'graded item')} "
                    f"are among the ones {self.by} scored highest and lowest (the order earlier "
                    "versions of EvalDesk offered). Extremes inflate a correlation: the "
                    f"agreement on them overstates the agreement on all {n} items, and a "
                    f"ranking of judges on them favours {self.by}. Grade the items in the "
                    "order the Grade tab offers now (a random sample) for a fair estimate.")
        why = (f"they are not the first {k} of the random order (seed {self.seed})"
               + (f": {_plural(self.passed_over, 'item')} before the last graded one "
                  "were passed over (skipped or left ungraded)" if self.passed_over else "")
               if self.seed is not None else
               "this project has no random grading order recorded (the ratings were imported "
               "or made before EvalDesk offered items at random)")
        return (f"Not a random sample: {why}. The agreement on the {_plural(k, 'graded item')} "
                f"may not stand for all {n} items the judge scored.")


def describe_sampling(judge: JudgeData, graded: Iterable[str], seed: int | None,
                      candidates: Sequence[tuple[str, str, JudgeData]] = ()) -> Sampling:
    """How the ``graded`` item ids were chosen among the items ``judge`` scored (held-out
    ones and ones without a score aside): see :class:`Sampling`. ``candidates``: other judges
    of the same items, whose extremes may have chosen them."""
    population = [i.item_id for i in judge.items
                  if not i.held_out and i.summary_score is not None]
    chosen = set(graded) & set(population)
    k, n = len(chosen), len(population)
    if not k:
        return Sampling("none", 0, n, seed)
    if k == n:
        return Sampling("all", k, n, seed)
    passed = 0
    if seed is not None:
        members = set(population)
        order = [i for i in grading_order(judge, seed) if i in members]
        if chosen == set(order[:k]):
            return Sampling("random", k, n, seed)
        last = max(n_ for n_, i in enumerate(order) if i in chosen)
        passed = sum(1 for i in order[:last] if i not in chosen)
    expected = k / n
    needed = expected + _EXTREMES_EXCESS * (1 - expected)
    for name, key, candidate in [*candidates,
                                 (f"the judge ({judge.model or judge.method})", "", judge)]:
        overlap = len(chosen & _extremes(candidate, population, k))
        if overlap >= needed * k and overlap > expected * k:
            return Sampling("extremes", k, n, seed, by=name, by_key=key, overlap=overlap,
                            passed_over=passed)
    return Sampling("other", k, n, seed, passed_over=passed)


# ------------------------------------------------------------------------------- report
@dataclass
class DimensionAgreement:
    """The judge against the people on one dimension. Kendall tau-b and Spearman come from
    :func:`core.stats.correlations` (undefined ones say why); ``mae`` is the mean absolute
    difference with a bootstrap CI (same resampling and seed)."""

    dimension: str
    n: int
    kendall: stats.Correlation
    spearman: stats.Correlation
    mae: float | None
    mae_ci: tuple[float | None, float | None]
    not_scored: int  #: rated items the judge has no score for (left out)
    warning: str = ""
    other_scale: str = ""  #: the judge's scale when it is not the rating scale
    #: The length baseline: the same items' number of words against the people's ratings
    #: (same statistics and bootstrap); None when the items' texts are not known.
    length: stats.CorrelationReport | None = None

    @property
    def mae_reason(self) -> str:
        if self.mae is not None:
            return ""
        if self.other_scale:
            return "the judge's scores are not on the rating scale, so only their order counts"
        return "no rated item has a score from the judge"


@dataclass
class QuestionAgreement:
    dimension: str
    number: int
    question: str
    result: stats.BinaryAgreement

    @property
    def fails_good_texts(self) -> bool:
        rate = self.result.false_fail_rate
        return rate is not None and rate >= FAILS_GOOD_RATE


@dataclass
class Disagreement:
    item_id: str
    dimension: str
    judge: float
    person: float
    explanation: str
    text: str = ""
    #: When the judge's scores are on another scale: how far apart the two put the item, as
    #: the difference of its rank among the rated items (0 to 1); None on the same scale.
    rank_gap: float | None = None

    @property
    def gap(self) -> float:
        return self.rank_gap if self.rank_gap is not None else abs(self.judge - self.person)


@dataclass
class PeopleAgreement:
    """Krippendorff's alpha (interval) among the people, and with the judge as one more rater,
    on one dimension: is the judge within the people's own disagreement?"""

    dimension: str
    people: stats.AlphaResult
    with_judge: stats.AlphaResult
    raters: int


@dataclass
class JudgeReport:
    method: str
    model: str
    source: str
    rater: str  #: whose ratings ("Anna", or "all raters" = their mean)
    raters: list[str]
    rated: int  #: items with a rating used (held-out ones not counted)
    held_out: int  #: rated items left out because they were used inside a prompt
    held_out_reason: str
    dimensions: list[DimensionAgreement]
    questions: list[QuestionAgreement]
    disagreements: list[Disagreement]
    people: list[PeopleAgreement]
    n_boot: int
    seed: int
    judge_scale: str = ""  #: the judge's own scale when it is not the rating scale
    sampling: Sampling | None = None  #: how the graded items were chosen
    #: Per dimension: does the judge tell the items apart? (over every item it scored)
    spreads: list[tuple[str, stats.JudgeSpread]] = field(default_factory=list)
    #: Agreement between people and between the judge and people, per dimension and question,
    #: with the number to report (:func:`core.grading.statistics.agreement_blocks`).
    agreement: list[AgreementBlock] = field(default_factory=list)
    #: The judge's mean corrected by a random sample of grades, per dimension (and condition).
    corrected: list[CorrectedRow] = field(default_factory=list)
    #: Which graded items count as drawn at random (for the corrected mean), in words.
    random_how: str = ""
    #: Every label with its origin (judge, human, adjudicated): the "Labels" sheet's rows.
    labels: list[dict[str, object]] = field(default_factory=list)
    adjudicated: int = 0  #: items with an agreed grade

    @property
    def fails_good(self) -> list[QuestionAgreement]:
        return [q for q in self.questions if q.fails_good_texts]

    def _compared(self) -> str:
        if self.rater == ALL_RATERS:
            return "the mean of all raters"
        if self.rater == AGREED:
            return "the agreed grades (the raters' mean where none was agreed)"
        return self.rater

    def describe(self) -> list[tuple[str, str]]:
        """Read-me lines: what was compared, from which results and ratings."""
        lines = [
            ("What this is", (f"How well the AI judge of {self.method} agrees with people who "
                             "graded a sample of the same items in EvalDesk.")),
            ("Judge", f"{self.method}, model {self.model or 'not recorded'}"
                      + (f"; {self.source}" if self.source else "")),
            ("Ratings", (f"{_plural(self.rated, 'rated item')} used; raters: "
                        f"{', '.join(self.raters) or 'none'}; compared with "
                        f"{self._compared()}")),
            ("Held out", held_out_line(self.held_out, self.held_out_reason)),
            ("Statistics", (f"Kendall tau-b and Spearman rho with {self.n_boot} bootstrap "
                           f"resamples (seed {self.seed}) for the 95% intervals; mean absolute "
                           "error on the rating scale; per checklist question Cohen's kappa, "
                           "MCC, false-pass rate (of the items the person said No, the share "
                           "the judge said Yes) and false-fail rate (of the items the person "
                           "said Yes, the share the judge said No).")),
        ]
        if self.judge_scale:
            lines.insert(2, ("Judge's scale", (
                f"{self.judge_scale}. It is not on the rating scale, so the judge is compared "
                "with the people by order only (Kendall tau-b, Spearman rho): no mean absolute "
                "error, and the biggest disagreements are the items the two rank furthest "
                "apart.")))
        if self.sampling is not None:
            lines.insert(3, ("Graded items", self.sampling.sentence))
        if self.agreement:
            lines.append(("Agreement statistics", (
                "Sheet “Reliability”: between the people and between the judge and "
                f"{self._compared()}, every statistic that fits the scale, each with its 95% "
                "interval and n, the one to report first marked with why, and what each means "
                "in one sentence.")))
        if self.corrected:
            lines.append(("Corrected mean", (
                "Sheet “Corrected mean”: the judge's mean score beside that mean corrected by "
                "the people's grades on items drawn at random (prediction-powered inference, "
                "Angelopoulos et al., Science 2023), with the interval from those grades alone. "
                f"Items counted as drawn at random: {self.random_how or 'none'}.")))
        if self.labels:
            lines.append(("Labels", (
                "Sheet “Labels”: every label of every item with its origin: judge (which "
                "model), human (which rater; blind: given without having seen the judge's "
                "scores or other raters' grades) or adjudicated (the grade agreed after raters "
                f"disagreed: who decided, from which grades). {self.adjudicated} items have an "
                "agreed grade.")))
        lines.append(("Length baseline", (
            "beside each dimension, Kendall tau-b and Spearman rho of the items' length (number "
            "of words) with the people's ratings, on the same items with the same bootstrap: "
            "a judge that agrees no better than that adds nothing beyond length.")))
        warnings = []
        if self.rated < MIN_ITEMS:
            warnings.append(_few_items(self.rated))
        if self.sampling is not None and not self.sampling.representative \
                and self.sampling.kind != "none":
            warnings.append("The graded items are not a random sample of the items the judge "
                            "scored, so this agreement may not hold for the others (how they "
                            "were chosen: see “Graded items”).")
        warnings += [spread.sentence for _d, spread in self.spreads if spread.flagged]
        if warnings:
            lines.insert(1, ("WARNING", " ".join(warnings)))
        return lines


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _few_items(n: int) -> str:
    return (f"Only {_plural(n, 'rated item')}: agreement measured on fewer than {MIN_ITEMS} "
            "items is rough. Grade more items before trusting it.")


def held_out_line(n: int, reason: str) -> str:
    if not n:
        return "No rated item was used inside a prompt; none held out."
    why = f" ({reason})" if reason else ""
    return (f"{_plural(n, 'rated item')} held out of the agreement: shown to the model inside "
            f"a prompt{why}, so not a fair test.")


def _person_score(ratings: Sequence[Rating], dimension: str) -> float | None:
    """One rater's rating; with several, their mean; an agreed grade among them wins."""
    agreed = [r.scores[dimension] for r in ratings if r.adjudicated and dimension in r.scores]
    if agreed:
        return agreed[0]
    values = [r.scores[dimension] for r in ratings if dimension in r.scores]
    return sum(values) / len(values) if values else None


def _person_answer(ratings: Sequence[Rating], dimension: str, question: str) -> bool | None:
    """One rater's answer; with several, the majority (None on a tie); an agreed answer
    among them wins."""
    for r in ratings:
        said = r.answers.get(dimension, {}).get(question) if r.adjudicated else None
        if said is not None:
            return said
    votes = [r.answers.get(dimension, {}).get(question) for r in ratings]
    votes = [v for v in votes if v is not None]
    yes, no = votes.count(True), votes.count(False)
    if yes == no:
        return None
    return yes > no


def _mae(x: Sequence[float], y: Sequence[float], n_boot: int, seed: int
         ) -> tuple[float | None, tuple[float | None, float | None]]:
    import numpy as np

    if not x:
        return None, (None, None)
    a, b = np.asarray(x, float), np.asarray(y, float)
    value = float(np.mean(np.abs(a - b)))
    if n_boot <= 0 or len(a) < 3:
        return value, (None, None)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(a), size=(n_boot, len(a)))
    boots = np.mean(np.abs(a[picks] - b[picks]), axis=1)
    return value, (float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5)))


def judge_report(judge: JudgeData, ratings: Iterable[Rating], *, rater: str | None = None,
                 n_boot: int = 1000, seed: int = 0, top: int = 10,
                 order_seed: int | None = None,
                 progress: Progress | None = None, cancel: CancelToken | None = None,
                 adjudications: Sequence[Rating] = (),
                 random_items: Iterable[str] | None = None, random_how: str = "",
                 candidates: Sequence[tuple[str, str, JudgeData]] = ()
                 ) -> JudgeReport:
    """The judge-vs-people report. ``rater`` None compares with the mean of every rater's
    rating of an item (the majority for Yes/No answers); a name, with that person only;
    :data:`AGREED`, with the agreed grade (``adjudications``) where there is one, else the
    mean. ``order_seed``: the project's grading order (:func:`grading_seed`; None: none
    recorded), to say how the graded items were chosen (:func:`describe_sampling`).
    ``progress`` counts the dimensions (and the agreement between people and the corrected
    means); ``cancel`` is checked between them.

    Beside the correlations: the agreement statistics between people and between the judge and
    the people (``agreement``), the judge's mean corrected by the grades on ``random_items``
    (the graded items drawn at random, ``random_how`` saying how; by default the graded items
    at the start of the random order of ``order_seed``) for the judge and each of
    ``candidates`` (``corrected``), and every label with its origin (``labels``)."""
    from core.grading import statistics as grading_stats

    everything = [r for r in ratings if not r.empty]
    ratings = [r for r in everything if not r.adjudicated]
    agreed = [r for r in [*adjudications, *everything] if r.adjudicated and not r.empty]
    agreed = list({r.item_id: r for r in agreed}.values())
    raters = list(dict.fromkeys(r.rater for r in ratings))
    if rater is None:
        chosen = ratings
    elif rater == AGREED:
        chosen = [*agreed, *ratings]
    else:
        chosen = [r for r in ratings if r.rater == rater]
    by_item: dict[str, list[Rating]] = {}
    for r in chosen:
        if judge.item(r.item_id) is not None:
            by_item.setdefault(r.item_id, []).append(r)
    held = [i for i in by_item if judge.item(i).held_out]  # type: ignore[union-attr]
    used_ids = [i.item_id for i in judge.items if i.item_id in by_item and i.item_id not in held]
    dims: list[DimensionAgreement] = []
    gaps: list[Disagreement] = []
    if progress is not None:
        progress.start("Comparing the judge with the ratings",
                       total=len(judge.dimensions) + (1 if len(raters) >= 2 else 0) + 2)
    for dim in judge.dimensions:
        if cancel is not None:
            cancel.raise_if_cancelled()
        x: list[float] = []
        y: list[float] = []
        dim_gaps: list[Disagreement] = []
        missing = 0
        for item_id in used_ids:
            person = _person_score(by_item[item_id], dim)
            if person is None:
                continue
            item = judge.item(item_id)
            assert item is not None
            score = item.scores.get(dim)
            if score is None:
                missing += 1
                continue
            x.append(score)
            y.append(person)
            if score != person or judge.judge_scale:
                dim_gaps.append(Disagreement(item_id, dim, score, person,
                                             item.explanation.get(dim, ""), item.text))
        gaps += _rank_gaps(dim_gaps, x, y) if judge.judge_scale else dim_gaps
        report = stats.correlations(x, y, n_boot=n_boot, seed=seed,
                                    x_name="the judge's scores", y_name="the people's ratings")
        mae, ci = _mae(x, y, n_boot, seed) if not judge.judge_scale else (None, (None, None))
        texts = [judge.item(i).text for i in used_ids  # type: ignore[union-attr]
                 if _person_score(by_item[i], dim) is not None
                 and judge.item(i).scores.get(dim) is not None]  # type: ignore[union-attr]
        length = stats.correlations(
            [stats.word_count(t) for t in texts], y, n_boot=n_boot, seed=seed,
            x_name="the items' lengths", y_name="the people's ratings") \
            if texts and all(texts) else None
        dims.append(DimensionAgreement(
            dimension=dim, n=len(x), kendall=report.kendall, spearman=report.spearman,
            mae=mae, mae_ci=ci, not_scored=missing,
            warning=_few_items(len(x)) if len(x) < MIN_ITEMS else "",
            other_scale=judge.judge_scale, length=length,
        ))
        if progress is not None:
            progress.advance(1, detail=dim)
    questions: list[QuestionAgreement] = []
    for dim, texts in judge.questions.items():
        for number, question in enumerate(texts, start=1):
            j, h = [], []
            for item_id in used_ids:
                person = _person_answer(by_item[item_id], dim, question)
                if person is None:
                    continue
                item = judge.item(item_id)
                j.append(item.answers.get(dim, {}).get(question))  # type: ignore[union-attr]
                h.append(person)
            if h:
                questions.append(QuestionAgreement(dim, number, question,
                                                   stats.binary_agreement(j, h)))
    gaps.sort(key=lambda d: -d.gap)
    if cancel is not None:
        cancel.raise_if_cancelled()
    people = _people_agreement(judge, ratings, raters, held) if len(raters) >= 2 else []
    if people and progress is not None:
        progress.advance(1, detail="agreement between the people")
    compare = None if rater is None else rater
    agreement = grading_stats.agreement_blocks(
        judge, ratings, compare=compare, adjudications=agreed, n_boot=n_boot, seed=seed,
        cancel=cancel)
    if progress is not None:
        progress.advance(1, detail="agreement statistics")
    sampling = describe_sampling(judge, used_ids, order_seed)
    if random_items is None:
        random_items, random_how = _random_start(judge, used_ids, order_seed)
    else:  # a recorded draw: the graded items are a random sample when all are in it
        random_items = set(random_items)
        if used_ids and set(used_ids) <= random_items and not sampling.representative:
            sampling = Sampling("drawn", sampling.graded, sampling.population, order_seed,
                                how=random_how)
    corrected = grading_stats.corrected_means(
        judge, ratings, random=random_items, random_how=random_how, compare=compare,
        adjudications=agreed, candidates=candidates)
    if progress is not None:
        progress.advance(1, detail="corrected means")
    return JudgeReport(
        method=judge.method, model=judge.model, source=judge.source,
        rater=ALL_RATERS if rater is None else rater, raters=raters, rated=len(used_ids),
        held_out=len(held), held_out_reason=judge.held_out_reason, dimensions=dims,
        questions=questions, disagreements=gaps[:top], people=people, n_boot=n_boot,
        seed=seed, judge_scale=judge.judge_scale,
        sampling=sampling,
        spreads=judge_spreads(judge), agreement=agreement, corrected=corrected,
        random_how=random_how, labels=grading_stats.label_rows(judge, ratings, agreed),
        adjudicated=len({r.item_id for r in agreed}),
    )


#: An answer in a pattern of answers ("YYN?"): "?" when there is none.
_LETTER: dict[bool | None, str] = {True: "Y", False: "N"}


def _random_start(judge: JudgeData, graded: Sequence[str], seed: int | None
                  ) -> tuple[set[str], str]:
    """The graded items that were drawn at random when nothing else is recorded: the first
    ones of the random order of ``seed`` (every item when every item is graded)."""
    from core.grading.plan import OrderChoice, random_items

    scored = {i.item_id for i in judge.items if not i.held_out and i.summary_score is not None}
    done = set(graded) & scored
    if scored and done == scored:
        return done, f"every one of the {len(scored)} items the judge scored is graded"
    if seed is None:
        return set(), ("none: this project has no random grading order recorded (the ratings "
                       "were imported or made before EvalDesk offered items at random)")
    from core.grading.plan import RANDOM

    return random_items(judge, OrderChoice(seed, RANDOM), None, done)


def judge_spreads(judge: JudgeData) -> list[tuple[str, stats.JudgeSpread]]:
    """Per dimension: does the judge tell the items apart? Over every item it scored (held
    out or not): the most common score, the most common answers to its checklist questions,
    the questions answered alike for every item, and how closely its scores follow the items'
    length (``core.stats.judge_spread``, no bootstrap)."""
    out = []
    for dim in judge.dimensions:
        scored = [i for i in judge.items if i.scores.get(dim) is not None]
        questions = judge.questions.get(dim, [])
        patterns = None
        asked: dict[str, list[Any]] = {}
        if questions:
            patterns = ["".join(_LETTER.get(i.answers.get(dim, {}).get(q), "?")
                                for q in questions) for i in scored]
            asked = {f"question {k} ({q})": [i.answers.get(dim, {}).get(q) for i in scored]
                     for k, q in enumerate(questions, start=1)}
        texts = [i.text for i in scored]
        out.append((dim, stats.judge_spread(
            [i.scores[dim] for i in scored], patterns=patterns,
            lengths=[stats.word_count(t) for t in texts] if texts and all(texts) else None,
            questions=asked, who=f"the judge on {dim}", units="items", n_boot=0)))
    return out


def _rank_gaps(gaps: list[Disagreement], x: Sequence[float], y: Sequence[float]
               ) -> list[Disagreement]:
    """Scores on two scales (one gap per pair of ``x``, ``y``): how far apart the judge and
    the people put each item, as the difference of its mid-rank among the rated items scaled
    to 0-1. The items both put at the same rank are no disagreement and are left out."""
    from scipy.stats import rankdata

    if len(x) < 2:
        return []
    rx, ry = rankdata(x), rankdata(y)
    for g, a, b in zip(gaps, rx, ry, strict=True):
        g.rank_gap = float(abs(a - b) / (len(x) - 1))
    return [g for g in gaps if g.rank_gap]


def _people_agreement(judge: JudgeData, ratings: Sequence[Rating], raters: Sequence[str],
                      held: Sequence[str]) -> list[PeopleAgreement]:
    ids = [i.item_id for i in judge.items if i.item_id not in held]
    own = {(r.rater, r.item_id): r for r in ratings}
    out = []
    for dim in judge.dimensions:
        table = [[own[(who, i)].scores.get(dim) if (who, i) in own else None for i in ids]
                 for who in raters]
        judge_row = [judge.item(i).scores.get(dim) for i in ids]  # type: ignore[union-attr]
        # only items some person rated take part, for both alphas
        keep = [k for k in range(len(ids)) if any(row[k] is not None for row in table)]
        table = [[row[k] for k in keep] for row in table]
        judge_row = [judge_row[k] for k in keep]
        if not keep:  # the raters answered only its checklist questions
            none = stats.AlphaResult(None, "interval", 0, 0, 0, len(raters),
                                     reason=f"nobody rated {dim} itself")
            out.append(PeopleAgreement(dimension=dim, people=none, with_judge=none,
                                       raters=len(raters)))
            continue
        people = stats.krippendorff_alpha(table, "interval")
        with_judge = stats.krippendorff_alpha([*table, judge_row], "interval")
        if judge.judge_scale:  # a similarity is no rating: the judge cannot be one more rater
            with_judge = stats.AlphaResult(
                None, "interval", 0, 0, 0, len(raters) + 1,
                reason="the judge's scores are not on the rating scale")
        out.append(PeopleAgreement(dimension=dim, people=people, with_judge=with_judge,
                                   raters=len(raters)))
    return out


def question_disagreements(judge: JudgeData, ratings: Iterable[Rating], dimension: str,
                           question: str, *, rater: str | None = None) -> list[Disagreement]:
    """The items where the judge said No to ``question`` but the person said Yes (the judge
    failed a good text), then those where it said Yes and the person No. ``judge``/``person``
    are 1 for Yes and 0 for No."""
    chosen = [r for r in ratings if rater is None or r.rater == rater]
    by_item: dict[str, list[Rating]] = {}
    for r in chosen:
        by_item.setdefault(r.item_id, []).append(r)
    fails: list[Disagreement] = []
    passes: list[Disagreement] = []
    for item in judge.items:
        if item.item_id not in by_item or item.held_out:
            continue
        person = _person_answer(by_item[item.item_id], dimension, question)
        said = item.answers.get(dimension, {}).get(question)
        if person is None or said is None or person == said:
            continue
        row = Disagreement(item.item_id, dimension, float(said), float(person),
                           item.explanation.get(dimension, ""), item.text)
        (fails if person else passes).append(row)
    return fails + passes


# ---------------------------------------------------------------------------- workbooks
def _fmt(value: float | None) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else round(value, 4)


def report_frames(report: JudgeReport) -> dict[str, Any]:
    """The report as tables (sheet name -> DataFrame), the same on screen and in Excel."""
    import pandas as pd

    from core.grading.statistics import AGREEMENT_COLUMNS, CORRECTED_COLUMNS, LABEL_COLUMNS

    dims = []
    for d in report.dimensions:
        for c in (d.kendall, d.spearman):
            dims.append({"dimension": d.dimension, "statistic": c.statistic,
                         "value": _fmt(c.value), "ci_low": _fmt(c.ci_low),
                         "ci_high": _fmt(c.ci_high), "n": d.n,
                         "note": _note(c.reason and f"undefined: {c.reason}", d)})
        dims.append({"dimension": d.dimension, "statistic": "Mean absolute error",
                     "value": _fmt(d.mae), "ci_low": _fmt(d.mae_ci[0]),
                     "ci_high": _fmt(d.mae_ci[1]), "n": d.n,
                     "note": _note(d.mae_reason and f"undefined: {d.mae_reason}", d)})
        if d.length is not None:
            for c in (d.length.kendall, d.length.spearman):
                dims.append({
                    "dimension": d.dimension, "statistic": f"{LENGTH_LABEL}: {c.statistic}",
                    "value": _fmt(c.value), "ci_low": _fmt(c.ci_low),
                    "ci_high": _fmt(c.ci_high), "n": c.n,
                    "note": f"undefined: {c.reason}" if c.reason else
                    "the baseline: the items' number of words against the people's ratings"})
    questions = [{
        "dimension": q.dimension, "number": q.number, "question": q.question,
        "kappa": _fmt(q.result.kappa), "mcc": _fmt(q.result.mcc),
        "false_pass_rate": _fmt(q.result.false_pass_rate),
        "false_fail_rate": _fmt(q.result.false_fail_rate), "n": q.result.n,
        "fails_good_texts": "yes" if q.fails_good_texts else "",
        "note": "; ".join(f"{k}: undefined, {v}" for k, v in q.result.reasons.items()),
    } for q in report.questions]
    gaps = [{"item": g.item_id, "dimension": g.dimension, "judge": _fmt(g.judge),
             "person": _fmt(g.person),
             "difference": _fmt(g.judge - g.person) if g.rank_gap is None else None,
             "judge_explanation": g.explanation, "text": g.text}
            for g in report.disagreements]
    people = []
    for p in report.people:
        for who, a in (("people only", p.people), ("people and the judge", p.with_judge)):
            people.append({"dimension": p.dimension, "raters": who, "alpha": _fmt(a.value),
                           "items": a.n_units,
                           "note": f"undefined: {a.reason}" if a.value is None else ""})
    return {
        "Dimensions": pd.DataFrame(dims, columns=["dimension", "statistic", "value", "ci_low",
                                                  "ci_high", "n", "note"]),
        "Questions": pd.DataFrame(questions, columns=[
            "dimension", "number", "question", "kappa", "mcc", "false_pass_rate",
            "false_fail_rate", "n", "fails_good_texts", "note"]),
        "Disagreements": pd.DataFrame(gaps, columns=["item", "dimension", "judge", "person",
                                                     "difference", "judge_explanation", "text"]),
        "People": pd.DataFrame(people, columns=["dimension", "raters", "alpha", "items",
                                                "note"]),
        "Reliability": pd.DataFrame([row for block in report.agreement for row in block.rows()],
                                    columns=list(AGREEMENT_COLUMNS)),
        "Corrected mean": pd.DataFrame([c.row() for c in report.corrected],
                                       columns=list(CORRECTED_COLUMNS)),
        "Labels": pd.DataFrame(report.labels, columns=list(LABEL_COLUMNS)),
    }


def _note(first: str, d: DimensionAgreement) -> str:
    parts = [first] if first else []
    if d.not_scored:
        parts.append(f"{_plural(d.not_scored, 'rated item')} without a judge's score left out")
    if d.warning:
        parts.append(d.warning)
    return "; ".join(parts)


_SHEET_ABOUT = {
    "Dimensions": "Per dimension: Kendall tau-b, Spearman rho and mean absolute error between "
                  "the judge's scores and the people's ratings, with 95% bootstrap intervals; "
                  "beside them the same for the items' length alone (the baseline).",
    "Questions": "Per checklist question: the judge's Yes/No against the people's.",
    "Disagreements": "The items where the judge and the people differ most, with the judge's "
                     "explanation.",
    "People": "Krippendorff's alpha among the people, and with the judge added as one more "
              "rater (only with two or more raters).",
    "Reliability": "Agreement between the people and between the judge and the people, per "
                   "dimension and checklist question: every statistic that fits the scale with "
                   "its 95% interval and n (texts), the one to report first (report_first, with "
                   "why), what it means and when to report it. Empty values are not computed: "
                   "the note says why.",
    "Corrected mean": "Per dimension (and per condition or group): the judge's mean score, the "
                      "mean corrected by the people's grades on items drawn at random (valid "
                      "whatever the judge's bias), and the mean of those grades alone, each with "
                      "its 95% interval; narrower_by: how much narrower the corrected interval "
                      "is than the grades-alone one (0.3 = 30%).",
    "Labels": "Every label of every item with its origin: judge (by: the model), human (by: the "
              "rater; blind: given without having seen the judge's scores or other raters' "
              "grades) or adjudicated (by: who decided; decided_from: the raters' grades).",
}


#: The columns of the "Judges" sheet (:func:`rank_rows`).
RANK_COLUMNS = ("rank", "judge", "statistic", "value", "items", "ratings", "behind_best_by",
                "bootstrap_ci_low", "bootstrap_ci_high", "bootstrap_p_value", "zou_ci_low",
                "zou_ci_high", "zou_note", "note")


def rank_rows(ranks: Sequence[JudgeRank], method: str = "kendall") -> list[dict[str, Any]]:
    """The ranking of the judges as rows: each judge's agreement with the people and its
    difference from the best with the paired bootstrap's interval and Zou's beside it."""
    rows = []
    for k, r in enumerate(ranks, start=1):
        d, z = r.versus_best, r.zou
        rows.append({
            "rank": k, "judge": r.name, "statistic": stats.STATISTIC_NAMES[method],
            "value": _fmt(r.value), "items": r.items, "ratings": r.n,
            "behind_best_by": _fmt(d.difference) if d is not None else None,
            "bootstrap_ci_low": _fmt(d.ci_low) if d is not None else None,
            "bootstrap_ci_high": _fmt(d.ci_high) if d is not None else None,
            "bootstrap_p_value": _fmt(d.p_value) if d is not None else None,
            "zou_ci_low": _fmt(z.ci_low) if z is not None else None,
            "zou_ci_high": _fmt(z.ci_high) if z is not None else None,
            "zou_note": (z.note if z.defined else f"undefined: {z.reason}") if z is not None
            else "",
            "note": ("the best" if d is None and r.value is not None else
                     f"undefined: {r.reason}" if r.value is None else
                     d.note if d is not None and d.defined else
                     f"undefined: {d.reason}" if d is not None else ""),
        })
    return rows


def write_report(path: str | Path, report: JudgeReport,
                 readme: Sequence[tuple[str, str]] = (), *,
                 ranks: Sequence[JudgeRank] = (), rank_method: str = "kendall"
                 ) -> ExportReport:
    """Write the judge-vs-people report to an Excel workbook (app and CLI alike); with
    ``ranks`` (two judges or more), a "Judges" sheet ranks them."""
    import pandas as pd

    sheets = [Sheet(name, frame, description=_SHEET_ABOUT[name])
              for name, frame in report_frames(report).items()]
    if len(ranks) >= 2:
        sheets.append(Sheet("Judges", pd.DataFrame(rank_rows(ranks, rank_method),
                                                   columns=list(RANK_COLUMNS)), description=(
            "The models or conditions that scored the same items, ranked by agreement with the "
            "people's ratings; each compared with the best by a paired bootstrap (interval, "
            "p-value) and by Zou's (2007) interval, which needs no resampling. When an interval "
            "includes 0 the difference could be chance.")))
    return write_workbook(path, sheets, [*report.describe(), *readme])


#: The columns :func:`export_ratings` adds to :data:`RATING_COLUMNS`: where each label comes
#: from (human or adjudicated), whether the rater graded blind, and the grades an agreed grade
#: was decided from.
ORIGIN_COLUMNS = ("origin", "blind", "decided_from")


def blind_text(blind: bool | None) -> str:
    return {True: "yes", False: "no", None: "not recorded"}[blind]


def decided_from_text(rating: Rating) -> str:
    """"Anna: Clarity 3, Q1 Yes; Ben: Clarity 5" (the grades an agreed grade came from)."""
    parts = []
    for s in rating.sources:
        marks = [f"{d} {v:g}" for d, v in s.scores.items()]
        marks += [f"{q} {'Yes' if a else 'No'}" for qs in s.answers.values()
                  for q, a in qs.items()]
        parts.append(f"{s.rater}: {', '.join(marks) or 'no grade'}")
    return "; ".join(parts)


def export_ratings(path: str | Path, ratings: Sequence[Rating], *,
                   adjudicated: Sequence[Rating] = (),
                   readme: Sequence[tuple[str, str]] = ()) -> ExportReport:
    """Write ratings to a workbook that :func:`read_ratings` reads back: one row per rating of
    a dimension (``question`` empty, ``rating`` a number) or of a checklist question
    (``rating`` Yes or No). Each row says where the label comes from (``origin``: human, or
    adjudicated for the ``adjudicated`` grades, whose ``rater`` is who decided), whether a
    person's grade was given blind, and what an agreed grade was decided from."""
    import pandas as pd

    rows = []
    for r in [*ratings, *adjudicated]:
        extra = {"origin": r.kind, "blind": "" if r.adjudicated else blind_text(r.blind),
                 "decided_from": decided_from_text(r) if r.adjudicated else ""}
        first = True
        for dim, value in r.scores.items():
            rows.append({"rater": r.rater, "item": r.item_id, "dimension": dim, "question": "",
                         "rating": value, "note": r.note if first else "", "rated_at": r.at,
                         **extra})
            first = False
        for dim, answers in r.answers.items():
            for question, yes in answers.items():
                rows.append({"rater": r.rater, "item": r.item_id, "dimension": dim,
                             "question": question, "rating": "Yes" if yes else "No",
                             "note": r.note if first else "", "rated_at": r.at, **extra})
                first = False
        if first and r.note:
            rows.append({"rater": r.rater, "item": r.item_id, "dimension": "", "question": "",
                         "rating": None, "note": r.note, "rated_at": r.at, **extra})
    frame = pd.DataFrame(rows, columns=[*RATING_COLUMNS, *ORIGIN_COLUMNS])
    about = ("One row per rating: a dimension's rating (question empty) or a checklist "
             "question's Yes/No. origin: human (a rater's own grade; blind: given without "
             "having seen the judge's scores or other raters' grades) or adjudicated (the "
             "grade agreed after raters disagreed; rater: who decided; decided_from: the "
             "grades it was decided from). Add rows for more people (one name per rater) and "
             "load the file again.")
    return write_workbook(path, [Sheet(RATINGS_SHEET, frame, description=about)],
                          [("What this is", ("People's ratings of items, for checking an AI "
                                            "judge in EvalDesk.")), *readme])


@dataclass
class RatingsRead:
    ratings: list[Rating] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  #: rows skipped, each with why
    errors: list[str] = field(default_factory=list)  #: the file cannot be used
    #: Agreed grades (rows whose origin says "adjudicated"), kept apart from people's own.
    adjudicated: list[Rating] = field(default_factory=list)
    #: The rater a rating sheet was made for ("" when the file does not say).
    made_for: str = ""


def _fmt_grade(value: float) -> str:
    return f"{value:g}"


def read_ratings(path: str | Path, *, scale: tuple[int, int] | None = None,
                 items: Iterable[str] | None = None,
                 dimensions: Iterable[str] | None = None,
                 grades: Sequence[float] | None = None,
                 questions: dict[str, list[str]] | None = None,
                 rater: str | None = None) -> RatingsRead:
    """Read a ratings workbook (the columns of :data:`RATING_COLUMNS`; ``rated_at`` optional).
    Rows that cannot be used are skipped and named (row, column, what to do): a rating outside
    ``scale`` or not one of ``grades`` (the steps a person may give), an item not in
    ``items``, a dimension not in ``dimensions``, a question not among the dimension's
    ``questions``, a row naming another rater than ``rater`` (the one a rating sheet was made
    for), and a second row rating the same thing (both rows named; the first is kept).
    Rows whose ``origin`` column says "adjudicated" are agreed grades: they go to
    ``adjudicated``, not among the people's own ratings."""
    path = Path(path)
    out = RatingsRead()
    try:
        sheets = list_sheets(path) if path.suffix.lower() in (".xlsx", ".xlsm", ".xls") else []
        sheet = RATINGS_SHEET if RATINGS_SHEET in sheets else None
        table = read_table(path, sheet)
    except TableError as exc:
        out.errors.append(exc.message)
        return out
    columns = {c.strip().casefold(): c for c in table.frame.columns}
    needed = ("rater", "item", "dimension", "rating")
    absent = [c for c in needed if c not in columns]
    if absent:
        out.errors.append(f"{table.describe()} has no column {', '.join(absent)}. A ratings file "
                          f"needs the columns {', '.join(RATING_COLUMNS[:-1])} (export one from "
                          "EvalDesk to see the layout).")
        return out
    known_items = set(items) if items is not None else None
    known_dims = {d.casefold(): d for d in dimensions} if dimensions is not None else None
    known_questions = ({d: {q.casefold(): q for q in qs} for d, qs in questions.items()}
                       if questions is not None else None)
    allowed = {round(float(g), 9) for g in grades} if grades is not None else None
    found: dict[tuple[str, str], Rating] = {}
    agreed: dict[tuple[str, str], Rating] = {}
    first_row: dict[tuple[str, str, str, str, bool], int] = {}

    def cell(row: int, name: str) -> str:
        column = columns.get(name)
        return str(table.frame.at[row, column]).strip() if column else ""

    for row in table.rows:
        who, item, dim = cell(row, "rater"), cell(row, "item"), cell(row, "dimension")
        question, raw, note = cell(row, "question"), cell(row, "rating"), cell(row, "note")
        if not any((who, item, dim, question, raw, note)):
            continue
        where = table.where(row)
        is_agreed = cell(row, "origin").casefold().startswith(ADJUDICATED)
        if not who or not item:
            out.problems.append(f"{where}: no {'rater' if not who else 'item'}; fill it in "
                                "or delete the row. The row is skipped.")
            continue
        if rater is not None and not is_agreed and who.casefold() != rater.casefold():
            out.problems.append(f"{table.where(row, columns['rater'])}: the rater is “{who}”, "
                                f"but this sheet was made for {rater}. Each rater fills in "
                                "the sheet made for them; the row is skipped.")
            continue
        if known_items is not None and item not in known_items:
            out.problems.append(f"{where}: the item “{item}” is not among the judged items; "
                                "the row is skipped.")
            continue
        if dim and known_dims is not None:
            if dim.casefold() not in known_dims:
                out.problems.append(f"{where}: the dimension “{dim}” is not one of "
                                    f"{', '.join(known_dims.values())}; the row is skipped.")
                continue
            dim = known_dims[dim.casefold()]
        if question and dim and known_questions is not None:
            asked = known_questions.get(dim, {})
            if question.casefold() not in asked:
                out.problems.append(f"{where}: “{question}” is not one of the checklist "
                                    f"questions of {dim}; the row is skipped.")
                continue
            question = asked[question.casefold()]
        if raw and dim:
            key = (who.casefold(), item, dim, question.casefold(), is_agreed)
            if key in first_row:
                what = f"question “{question}” of {dim}" if question else dim
                out.problems.append(
                    f"{table.describe()}, rows {first_row[key]} and {row} both rate item "
                    f"“{item}” on {what} for {who}: row {row} is skipped (the first is kept); "
                    "keep one row per rating.")
                continue
            first_row[key] = row
        pool = agreed if is_agreed else found
        rating = pool.setdefault((who, item), Rating(
            item, who, kind=ADJUDICATED if is_agreed else HUMAN))
        if note and not rating.note:
            rating.note = note
        if not raw:
            continue
        if not dim:
            out.problems.append(f"{where}: a rating without a dimension; the row is skipped.")
            continue
        if question:
            answer = {"yes": True, "y": True, "1": True, "no": False, "n": False, "0": False
                      }.get(raw.casefold())
            if answer is None:
                out.problems.append(f"{table.where(row, columns['rating'])}: “{raw}” is not "
                                    "Yes or No; the row is skipped.")
                continue
            rating.answers.setdefault(dim, {})[question] = answer
            continue
        value = cell_number(raw)
        if value is None or (scale and not scale[0] <= value <= scale[1]):
            bounds = f" from {scale[0]} to {scale[1]}" if scale else ""
            out.problems.append(f"{table.where(row, columns['rating'])}: “{raw}” is not a "
                                f"rating{bounds}; the row is skipped.")
            continue
        if allowed is not None and round(value, 9) not in allowed:
            steps = ", ".join(_fmt_grade(g) for g in sorted(allowed))
            out.problems.append(f"{table.where(row, columns['rating'])}: “{raw}” is not one of "
                                f"the grades ({steps}); the row is skipped.")
            continue
        rating.scores[dim] = value
    out.ratings = [r for r in found.values() if not r.empty]
    for r in agreed.values():
        if r.empty:
            continue
        r.sources = [o for o in out.ratings if o.item_id == r.item_id]
        out.adjudicated.append(r)
    if not out.ratings and not out.adjudicated and not out.errors:
        out.errors.append(f"{table.describe()} has no usable rating.")
    return out


# ----------------------------------------------------------------- pick the judge that matches
@dataclass
class JudgeRank:
    """One candidate judge (a model or condition that scored the same items) against the
    people's ratings. ``value``: the chosen coefficient (pooled over the rated items, or the
    average over dimensions when there are several), None when undefined (``reason`` says
    why). ``versus_best``: the paired bootstrap test of (best - this one) on the items both
    scored (None for the best one itself)."""

    name: str
    key: str  #: what makes it the project's judge (e.g. the model string)
    value: float | None
    n: int  #: ratings used (an item rated on two dimensions counts twice)
    reason: str = ""
    versus_best: stats.PairedDifference | None = None
    items: int = 0  #: rated items it scored (each item once)
    #: Zou's (2007) interval for the same difference (Spearman or Pearson: no resampling),
    #: beside the paired bootstrap; None for the best one itself.
    zou: stats.PairedDifference | None = None


def rank_judges(candidates: Sequence[tuple[str, str, JudgeData]], ratings: Iterable[Rating],
                *, method: str = "kendall", rater: str | None = None, n_boot: int = 2000,
                seed: int = 0, progress: Progress | None = None,
                cancel: CancelToken | None = None) -> list[JudgeRank]:
    """Rank candidate judges ``(name, key, judge)`` by agreement with the people's ratings
    (``method``: "kendall" by default, "spearman" or "pearson"), best first; undefined ones
    last. Items held out by any candidate are left out for all, so each is measured on the
    same items. ``progress`` counts the paired tests; ``cancel`` is checked between them."""
    if method not in stats.STATISTIC_NAMES:
        raise ValueError(f"method must be one of {', '.join(stats.STATISTIC_NAMES)}")
    chosen = [r for r in ratings if not r.empty
              and (rater in (None, AGREED) or r.rater == rater)
              and (rater == AGREED or not r.adjudicated)]
    by_item: dict[str, list[Rating]] = {}
    for r in chosen:
        by_item.setdefault(r.item_id, []).append(r)
    held = {i.item_id for _, _, j in candidates for i in j.items if i.held_out}
    dims: list[str] = []
    for _, _, j in candidates:
        dims += [d for d in j.dimensions if d not in dims]
    units = [(item_id, d) for item_id in by_item if item_id not in held for d in dims
             if _person_score(by_item[item_id], d) is not None]
    human = [_person_score(by_item[i], d) for i, d in units]
    groups = [d for _, d in units] if len(dims) > 1 else None

    def scores(judge: JudgeData) -> list[float]:
        out = []
        for item_id, d in units:
            item = judge.item(item_id)
            value = item.scores.get(d) if item is not None else None
            out.append(float("nan") if value is None else float(value))
        return out

    vectors = [scores(j) for _, _, j in candidates]
    ranks = []
    for (name, key, _), x in zip(candidates, vectors, strict=True):
        if groups is None:
            c = getattr(stats.correlations(x, human, n_boot=0), method)
        else:
            c = getattr(stats.grouped_correlations(x, human, groups, n_boot=0), method)
        scored = {item_id for (item_id, _d), v in zip(units, x) if not math.isnan(v)}
        ranks.append((JudgeRank(name, key, c.value, c.n, c.reason, items=len(scored)), x))
    ranks.sort(key=lambda rx: (rx[0].value is None, -(rx[0].value or 0.0)))
    if ranks and ranks[0][0].value is not None:
        best = ranks[0][1]
        if progress is not None:
            progress.start("Ranking the judges", total=len(ranks) - 1)
        for rank, x in ranks[1:]:
            if cancel is not None:
                cancel.raise_if_cancelled()
            rank.versus_best = stats.paired_correlation_difference(
                best, x, human, method=method, groups=groups, n_boot=n_boot, seed=seed)
            rank.zou = zou_beside(best, x, human, method=method, pooled=groups is not None)
            if progress is not None:
                progress.advance(1, detail=rank.name)
    return [r for r, _ in ranks]


def zou_beside(a: Sequence[float], b: Sequence[float], human: Sequence[float | None], *,
               method: str, pooled: bool = False) -> stats.PairedDifference:
    """Zou's (2007) interval for (judge ``a`` vs people) - (judge ``b`` vs people), to show
    beside the paired bootstrap: for Spearman or Pearson as ``method`` says (Kendall's tau has
    no Zou interval: Spearman's is given, and the note says so); ``pooled``: the ratings of
    several dimensions are taken together (the bootstrap averages per dimension instead)."""
    import dataclasses

    from core.reliability import zou_difference

    used = method if method in ("spearman", "pearson") else "spearman"
    result = zou_difference(a, b, [float("nan") if h is None else h for h in human],
                            method=used)
    notes = []
    if used != method:
        notes.append(f"Zou's interval exists for Spearman or Pearson, not "
                     f"{stats.STATISTIC_NAMES[method]}: this one is for Spearman rho")
    if pooled:
        notes.append("over all ratings of all dimensions pooled")
    if not notes:
        return result
    return dataclasses.replace(result, note="; ".join([*notes, result.note] if result.note
                                                      else notes))


def other_judges(judge: JudgeData, candidates: Sequence[tuple[str, str, JudgeData]]
                 ) -> list[tuple[str, str, JudgeData]]:
    """The ``candidates`` whose scores differ from ``judge``'s (the project's own judge is
    usually among them under its condition's name)."""
    def scores(j: JudgeData) -> dict[str, dict[str, float | None]]:
        return {i.item_id: dict(i.scores) for i in j.items}

    own = scores(judge)
    return [c for c in candidates if c[2] is not judge and scores(c[2]) != own]


@dataclass
class CheckResult:
    """What :func:`check_step` computed: the report (None when not asked for), the
    ranking of the candidate judges (empty with fewer than two) and how the graded items were
    chosen among the candidates' items (``sampling``: a candidate whose own extremes chose
    them is favoured by a ranking on them; see :func:`fair_ranking`)."""

    report: JudgeReport | None
    ranks: list[JudgeRank]
    sampling: Sampling | None = None


def fair_ranking(sampling: Sampling | None) -> str:
    """"" when a ranking of judges on the graded items is fair; else why it is not (the
    items were chosen by one candidate's highest and lowest scores)."""
    if sampling is None or sampling.kind != "extremes":
        return ""
    return (f"Not a fair ranking: the graded items were chosen mostly by {sampling.by}'s "
            f"highest and lowest scores ({sampling.overlap} of {sampling.graded}), which "
            f"inflates its agreement. Grade items in the random order of the Grade tab, then "
            "rank again.")


def check_step(judge: JudgeData, ratings: Sequence[Rating], *, rater: str | None = None,
               candidates: Sequence[tuple[str, str, JudgeData]] = (),
               method: str = "kendall", report: bool = True, order_seed: int | None = None,
               progress: Progress | None = None, cancel: CancelToken | None = None,
               adjudications: Sequence[Rating] = (),
               random_items: Iterable[str] | None = None, random_how: str = ""
               ) -> CheckResult:
    """The report and the ranking in one plain step (the app runs it in the background:
    the bootstraps take seconds with hundreds of rated items). ``report`` False: only the
    ranking (another statistic chosen). ``order_seed``: the project's grading order
    (:func:`grading_seed`). ``adjudications``, ``random_items``, ``random_how``: see
    :func:`judge_report`."""
    ratings = list(ratings)
    out = CheckResult(None, [])
    if report:
        out.report = judge_report(judge, ratings, rater=rater, order_seed=order_seed,
                                  progress=progress, cancel=cancel,
                                  adjudications=adjudications, random_items=random_items,
                                  random_how=random_how,
                                  candidates=other_judges(judge, candidates))
    if len(candidates) >= 2:
        out.ranks = rank_judges(candidates, [*ratings, *adjudications], method=method,
                                rater=rater, progress=progress, cancel=cancel)
        graded = {r.item_id for r in ratings if not r.empty and not r.adjudicated
                  and (rater in (None, AGREED) or r.rater == rater)}
        out.sampling = describe_sampling(judge, graded, order_seed, candidates)
    return out
