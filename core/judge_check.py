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
    from core.project import Project
    from core.runs import CancelToken, Progress

__all__ = [
    "FAILS_GOOD_RATE",
    "MIN_ITEMS",
    "RATING_COLUMNS",
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
    "check_step",
    "describe_sampling",
    "export_ratings",
    "fair_ranking",
    "grading_order",
    "grading_seed",
    "held_out_line",
    "judge_report",
    "load_ratings",
    "next_item",
    "question_disagreements",
    "rank_judges",
    "rating_kind",
    "read_ratings",
    "save_rating",
    "write_report",
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


# ------------------------------------------------------------------------------ ratings
@dataclass
class Rating:
    """One person's rating of one item: ``scores`` dimension -> rating on the method's scale,
    ``answers`` dimension -> question -> True (Yes) / False (No), a ``note``. ``at`` is when it
    was last saved (UTC, ISO), filled in by :func:`load_ratings`."""

    item_id: str
    rater: str
    scores: dict[str, float] = field(default_factory=dict)
    answers: dict[str, dict[str, bool]] = field(default_factory=dict)
    note: str = ""
    at: str = ""

    def payload(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "rater": self.rater, "scores": dict(self.scores),
                "answers": {d: dict(a) for d, a in self.answers.items()}, "note": self.note}

    @property
    def empty(self) -> bool:
        return not self.scores and not any(self.answers.values()) and not self.note.strip()


def rating_kind(method: str) -> str:
    return f"{method}.rating"


def _key(rater: str, item_id: str) -> str:
    return json.dumps([rater, item_id], ensure_ascii=False)


def save_rating(project: Project, method: str, rating: Rating, *, who: str | None = None
                ) -> Rating:
    """Keep ``rating`` in the project as a person's edit (who = ``who`` or the rater, and
    when). Replaces that rater's earlier rating of the item; the old one stays in the edit
    history. Returns the rating with its time."""
    rater = rating.rater.strip()
    if not rater:
        raise ValueError("A rating needs the name of the person who rated.")
    rating = Rating(rating.item_id, rater, dict(rating.scores),
                    {d: dict(a) for d, a in rating.answers.items() if a}, rating.note)
    kind, key = rating_kind(method), _key(rater, rating.item_id)
    current = project.get_artefact(kind, key)
    if current is None:
        current = project.put_artefact(kind, key, {}, origin="human")
    saved = project.record_edit(current, "", current.payload, rating.payload(), who or rater)
    rating.at = saved.updated_at
    return rating


def load_ratings(project: Project, method: str) -> list[Rating]:
    """Every stored rating of ``method``, in the order they were first made."""
    out = []
    for artefact in project.list_artefacts(rating_kind(method)):
        p = artefact.payload
        if not isinstance(p, dict) or "item_id" not in p:
            continue
        out.append(Rating(
            item_id=str(p["item_id"]), rater=str(p.get("rater", "")),
            scores={str(d): float(v) for d, v in (p.get("scores") or {}).items()
                    if isinstance(v, int | float)},
            answers={str(d): {str(q): bool(a) for q, a in (qs or {}).items()}
                     for d, qs in (p.get("answers") or {}).items()},
            note=str(p.get("note") or ""), at=artefact.updated_at,
        ))
    return out


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
              rater: str, *, skip: Iterable[str] = (), seed: int = 0) -> str | None:
    """The next item ``rater`` should grade: the first of :func:`grading_order` (``seed``: the
    project's, :func:`grading_seed`) they have not graded nor skipped, so that the items
    graded first are a random sample of those the judge scored (the judge's own scores play
    no part in the choice). None when every item is graded."""
    done = {r.item_id for r in ratings if r.rater == rater and not r.empty}
    skipped = set(skip)
    return next((i for i in grading_order(judge, seed)
                 if i not in done and i not in skipped), None)


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

    @property
    def representative(self) -> bool:
        return self.kind in ("random", "all")

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

    @property
    def fails_good(self) -> list[QuestionAgreement]:
        return [q for q in self.questions if q.fails_good_texts]

    def describe(self) -> list[tuple[str, str]]:
        """Read-me lines: what was compared, from which results and ratings."""
        lines = [
            ("What this is", (f"How well the AI judge of {self.method} agrees with people who "
                             "graded a sample of the same items in EvalDesk.")),
            ("Judge", f"{self.method}, model {self.model or 'not recorded'}"
                      + (f"; {self.source}" if self.source else "")),
            ("Ratings", (f"{_plural(self.rated, 'rated item')} used; raters: "
                        f"{', '.join(self.raters) or 'none'}; compared with "
                        f"{'the mean of all raters' if self.rater == ALL_RATERS else self.rater}")),
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
    values = [r.scores[dimension] for r in ratings if dimension in r.scores]
    return sum(values) / len(values) if values else None


def _person_answer(ratings: Sequence[Rating], dimension: str, question: str) -> bool | None:
    """One rater's answer; with several, the majority (None on a tie)."""
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
                 progress: Progress | None = None, cancel: CancelToken | None = None
                 ) -> JudgeReport:
    """The judge-vs-people report. ``rater`` None compares with the mean of every rater's
    rating of an item (the majority for Yes/No answers); a name, with that person only.
    ``order_seed``: the project's grading order (:func:`grading_seed`; None: none recorded),
    to say how the graded items were chosen (:func:`describe_sampling`). ``progress`` counts
    the dimensions (and the agreement between people); ``cancel`` is checked between them."""
    ratings = [r for r in ratings if not r.empty]
    raters = list(dict.fromkeys(r.rater for r in ratings))
    chosen = ratings if rater is None else [r for r in ratings if r.rater == rater]
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
                       total=len(judge.dimensions) + (1 if len(raters) >= 2 else 0))
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
    return JudgeReport(
        method=judge.method, model=judge.model, source=judge.source,
        rater=ALL_RATERS if rater is None else rater, raters=raters, rated=len(used_ids),
        held_out=len(held), held_out_reason=judge.held_out_reason, dimensions=dims,
        questions=questions, disagreements=gaps[:top], people=people, n_boot=n_boot,
        seed=seed, judge_scale=judge.judge_scale,
        sampling=describe_sampling(judge, used_ids, order_seed),
        spreads=judge_spreads(judge),
    )


#: An answer in a pattern of answers ("YYN?"): "?" when there is none.
_LETTER: dict[bool | None, str] = {True: "Y", False: "N"}


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
}


def write_report(path: str | Path, report: JudgeReport,
                 readme: Sequence[tuple[str, str]] = ()) -> ExportReport:
    """Write the judge-vs-people report to an Excel workbook (app and CLI alike)."""
    sheets = [Sheet(name, frame, description=_SHEET_ABOUT[name])
              for name, frame in report_frames(report).items()]
    return write_workbook(path, sheets, [*report.describe(), *readme])


def export_ratings(path: str | Path, ratings: Sequence[Rating], *,
                   readme: Sequence[tuple[str, str]] = ()) -> ExportReport:
    """Write ratings to a workbook that :func:`read_ratings` reads back: one row per rating of
    a dimension (``question`` empty, ``rating`` a number) or of a checklist question
    (``rating`` Yes or No)."""
    import pandas as pd

    rows = []
    for r in ratings:
        first = True
        for dim, value in r.scores.items():
            rows.append({"rater": r.rater, "item": r.item_id, "dimension": dim, "question": "",
                         "rating": value, "note": r.note if first else "", "rated_at": r.at})
            first = False
        for dim, answers in r.answers.items():
            for question, yes in answers.items():
                rows.append({"rater": r.rater, "item": r.item_id, "dimension": dim,
                             "question": question, "rating": "Yes" if yes else "No",
                             "note": r.note if first else "", "rated_at": r.at})
                first = False
        if first and r.note:
            rows.append({"rater": r.rater, "item": r.item_id, "dimension": "", "question": "",
                         "rating": None, "note": r.note, "rated_at": r.at})
    frame = pd.DataFrame(rows, columns=list(RATING_COLUMNS))
    about = ("One row per rating: a dimension's rating (question empty) or a checklist "
             "question's Yes/No. Add rows for more people (one name per rater) and load the "
             "file again.")
    return write_workbook(path, [Sheet(RATINGS_SHEET, frame, description=about)],
                          [("What this is", ("People's ratings of items, for checking an AI "
                                            "judge in EvalDesk.")), *readme])


@dataclass
class RatingsRead:
    ratings: list[Rating] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  #: rows skipped, each with why
    errors: list[str] = field(default_factory=list)  #: the file cannot be used


def read_ratings(path: str | Path, *, scale: tuple[int, int] | None = None,
                 items: Iterable[str] | None = None,
                 dimensions: Iterable[str] | None = None) -> RatingsRead:
    """Read a ratings workbook (the columns of :data:`RATING_COLUMNS`; ``rated_at`` optional).
    Rows that cannot be used are skipped and named (row, column, what to do): a rating outside
    ``scale``, an item not in ``items``, a dimension not in ``dimensions``."""
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
    found: dict[tuple[str, str], Rating] = {}

    def cell(row: int, name: str) -> str:
        column = columns.get(name)
        return str(table.frame.at[row, column]).strip() if column else ""

    for row in table.rows:
        rater, item, dim = cell(row, "rater"), cell(row, "item"), cell(row, "dimension")
        question, raw, note = cell(row, "question"), cell(row, "rating"), cell(row, "note")
        if not any((rater, item, dim, question, raw, note)):
            continue
        where = table.where(row)
        if not rater or not item:
            out.problems.append(f"{where}: no {'rater' if not rater else 'item'}; fill it in "
                                "or delete the row. The row is skipped.")
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
        rating = found.setdefault((rater, item), Rating(item, rater))
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
        rating.scores[dim] = value
    out.ratings = [r for r in found.values() if not r.empty]
    if not out.ratings and not out.errors:
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
    chosen = [r for r in ratings if not r.empty and (rater is None or r.rater == rater)]
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
            if progress is not None:
                progress.advance(1, detail=rank.name)
    return [r for r, _ in ranks]


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
               progress: Progress | None = None, cancel: CancelToken | None = None
               ) -> CheckResult:
    """The report and the ranking in one plain step (the app runs it in the background:
    the bootstraps take seconds with hundreds of rated items). ``report`` False: only the
    ranking (another statistic chosen). ``order_seed``: the project's grading order
    (:func:`grading_seed`)."""
    ratings = list(ratings)
    out = CheckResult(None, [])
    if report:
        out.report = judge_report(judge, ratings, rater=rater, order_seed=order_seed,
                                  progress=progress, cancel=cancel)
    if len(candidates) >= 2:
        out.ranks = rank_judges(candidates, ratings, method=method, rater=rater,
                                progress=progress, cancel=cancel)
        graded = {r.item_id for r in ratings if not r.empty
                  and (rater is None or r.rater == rater)}
        out.sampling = describe_sampling(judge, graded, order_seed, candidates)
    return out
