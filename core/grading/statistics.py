"""The numbers reviewers ask for, computed from the judge check's ratings with
:mod:`core.reliability` (nothing here re-implements a statistic):

* :func:`agreement_blocks` - per dimension and per checklist question, agreement **between the
  people** (every statistic that fits, the one to report first and why, each with its 95%
  interval and n: :func:`core.reliability.reliability_report`) and **between the judge and the
  people** (the judge against the grade compared with: one rater, the raters' mean, or the
  agreed grades), each in one plain sentence.
* :func:`corrected_means` - per dimension (and per condition or group when there are some) the
  judge's raw mean beside its mean corrected by the people's grades on a random sample
  (:func:`core.reliability.corrected_mean`), with the sample-only interval and how much
  narrower the corrected one is.
* :func:`label_rows` - every label of every item with its origin: the judge (which model), a
  person (which rater, blind or not) or adjudicated (who decided, from which grades).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.judge_check import AGREED, JudgeData, Rating

if TYPE_CHECKING:  # pragma: no cover
    from core.reliability import CorrectedMean, Reliability, ReliabilityReport
    from core.runs import CancelToken

__all__ = [
    "AGREEMENT_COLUMNS",
    "CORRECTED_COLUMNS",
    "JUDGE",
    "LABEL_COLUMNS",
    "PEOPLE",
    "AgreementBlock",
    "CorrectedRow",
    "agreement_blocks",
    "compared_value",
    "corrected_means",
    "label_rows",
]

PEOPLE = "between people"
JUDGE = "between the judge and people"
YES, NO = "Yes", "No"

AGREEMENT_COLUMNS = ("dimension", "question", "between", "raters", "statistic", "value",
                     "ci_low", "ci_high", "n", "n_raters", "report_first", "meaning",
                     "which_to_report", "note")
CORRECTED_COLUMNS = ("dimension", "judge", "group", "judge_mean", "judge_ci_low",
                     "judge_ci_high", "corrected_mean", "corrected_ci_low", "corrected_ci_high",
                     "sample_mean", "sample_ci_low", "sample_ci_high", "narrower_by",
                     "n_items", "n_graded_at_random", "n_graded_not_random", "in_words")
LABEL_COLUMNS = ("item", "dimension", "question", "label", "origin", "by", "blind", "at",
                 "decided_from", "note")


# ------------------------------------------------------------------------ compared grades
def _human(ratings: Sequence[Rating]) -> list[Rating]:
    return [r for r in ratings if not r.adjudicated and not r.empty]


def compared_value(ratings: Sequence[Rating], dimension: str, question: str = "",
                   ) -> float | bool | None:
    """The grade an item is compared with, from its ``ratings``: an agreed grade when one is
    among them, else the raters' mean (their majority for a Yes/No question; None on a tie)."""
    for r in ratings:
        if r.adjudicated:
            value = (r.answers.get(dimension, {}).get(question) if question
                     else r.scores.get(dimension))
            if value is not None:
                return value
    people = _human(ratings)
    if question:
        votes = [r.answers.get(dimension, {}).get(question) for r in people]
        yes, no = votes.count(True), votes.count(False)
        return None if yes == no else yes > no
    values = [r.scores[dimension] for r in people if dimension in r.scores]
    return sum(values) / len(values) if values else None


def _chosen(ratings: Iterable[Rating], adjudications: Iterable[Rating],
            compare: str | None) -> dict[str, list[Rating]]:
    """Item -> the ratings it is compared with: one rater's (``compare`` a name), everyone's
    (None: their mean), or the agreed grade with everyone's (:data:`AGREED`)."""
    out: dict[str, list[Rating]] = {}
    for r in ratings:
        if r.empty or r.adjudicated:
            continue
        if compare in (None, AGREED) or r.rater == compare:
            out.setdefault(r.item_id, []).append(r)
    if compare == AGREED:
        for r in adjudications:
            if r.adjudicated and not r.empty:
                out.setdefault(r.item_id, []).insert(0, r)
    return out


def _compared_words(compare: str | None) -> str:
    if compare is None:
        return "the mean of the raters"
    if compare == AGREED:
        return "the agreed grades (the raters' mean where none was agreed)"
    return compare


# ----------------------------------------------------------------------------- agreement
@dataclass(frozen=True)
class AgreementBlock:
    """The agreement of one comparison (``between`` :data:`PEOPLE` or :data:`JUDGE`) on one
    dimension (``question`` "") or checklist question: every statistic that fits, the one to
    report first (``report``), or why none could be computed (``reason``)."""

    dimension: str
    question: str
    between: str
    raters: str  #: who is compared, in words
    report: ReliabilityReport | None
    reason: str = ""

    @property
    def first(self) -> Reliability | None:
        return self.report.first if self.report is not None else None

    @property
    def what(self) -> str:
        return f"{self.dimension}, “{self.question}”" if self.question else self.dimension

    def sentence(self) -> str:
        """One plain sentence: the number to report with its interval and n, and why."""
        head = ("Between the people" if self.between == PEOPLE
                else "Between the judge and the people")
        if self.report is None:
            return f"{head} on {self.what}: not computed ({self.reason})."
        first = self.report.first
        if not first.defined:
            return f"{head} on {self.what}: {first.summary()}"
        return (f"{head} on {self.what} ({self.raters}): report {first.summary()[:-1]}, "
                f"because {self.report.why}. {first.meaning}")

    def rows(self) -> list[dict[str, object]]:
        base = {"dimension": self.dimension, "question": self.question,
                "between": self.between, "raters": self.raters}
        if self.report is None:
            return [{**base, "statistic": "", "value": None, "ci_low": None, "ci_high": None,
                     "n": 0, "n_raters": None, "report_first": "", "meaning": "",
                     "which_to_report": "", "note": f"Not computed: {self.reason}"}]
        out: list[dict[str, object]] = []
        for result in self.report.results:
            first = result.statistic == self.report.headline
            note = (result.note if result.defined
                    else "; ".join(p for p in (f"Not computed: {result.reason}", result.note)
                                   if p))
            out.append({**base, "statistic": result.name, "value": _round(result.value),
                        "ci_low": _round(result.ci_low), "ci_high": _round(result.ci_high),
                        "n": result.n, "n_raters": result.n_raters,
                        "report_first": f"yes: {self.report.why}" if first else "",
                        "meaning": result.meaning, "which_to_report": result.advice,
                        "note": note})
        return out


def _round(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)


def _scale_of(values: Iterable[float], grades: Sequence[float]) -> tuple[str, list[float] | None]:
    """"ordinal" over the grades when every value is one of them, else "interval"."""
    allowed = {round(g, 9) for g in grades}
    if all(round(v, 9) in allowed for v in values):
        return "ordinal", list(grades)
    return "interval", None


def agreement_blocks(judge: JudgeData, ratings: Sequence[Rating], *,
                     compare: str | None = None, adjudications: Sequence[Rating] = (),
                     n_boot: int = 1000, seed: int = 0,
                     cancel: CancelToken | None = None) -> list[AgreementBlock]:
    """Per dimension, then per checklist question: agreement between the people (with two
    raters or more) and between the judge and ``compare`` (see :func:`_chosen`). Held-out
    items take no part. Every statistic comes from :func:`core.reliability.reliability_report`
    (ordered scale over the judge's grades; numbers when the values are not all grades, e.g.
    the raters' mean; Yes/No for questions)."""
    from core.reliability import reliability_report

    items = [i for i in judge.items if not i.held_out]
    people = _human(ratings)
    raters = list(dict.fromkeys(r.rater for r in people))
    own = {(r.rater, r.item_id): r for r in people}
    chosen = _chosen(people, adjudications, compare)
    grades = judge.grades()
    versus = _compared_words(compare)
    model = judge.model or judge.method
    out: list[AgreementBlock] = []

    def people_block(dim: str, question: str, table: list[list[object]],
                     scale: str, categories: list[object] | None) -> AgreementBlock:
        keep = [k for k in range(len(items)) if any(row[k] is not None for row in table)]
        rows = [[row[k] for k in keep] for row in table]
        names = ", ".join(raters)
        if len(raters) < 2:
            return AgreementBlock(dim, question, PEOPLE, names, None,
                                  "one rater only: agreement between people needs two raters "
                                  "who graded the same items")
        if not keep:
            return AgreementBlock(dim, question, PEOPLE, names, None, "no item is graded")
        return AgreementBlock(dim, question, PEOPLE, names, reliability_report(
            rows, scale, categories=categories, n_boot=n_boot, seed=seed))

    def judge_block(dim: str, question: str, pairs: Sequence[tuple[object, object]],
                    scale: str, categories: list[object] | None) -> AgreementBlock:
        who = f"{model} against {versus}"
        if judge.judge_scale:
            return AgreementBlock(dim, question, JUDGE, who, None,
                                  f"the judge's scores are not grades on your scale "
                                  f"({judge.judge_scale}), so they are compared by order only")
        if not pairs:
            return AgreementBlock(dim, question, JUDGE, who, None,
                                  "no graded item has a score from the judge")
        table = [[a for a, _ in pairs], [b for _, b in pairs]]
        return AgreementBlock(dim, question, JUDGE, who, reliability_report(
            table, scale, categories=categories, n_boot=n_boot, seed=seed))

    for dim in judge.dimensions:
        if cancel is not None:
            cancel.raise_if_cancelled()
        table: list[list[object]] = [
            [own[(who, i.item_id)].scores.get(dim) if (who, i.item_id) in own else None
             for i in items] for who in raters]
        values = [v for row in table for v in row if isinstance(v, float)]
        scale, categories = _scale_of(values, grades)
        out.append(people_block(dim, "", table, scale,
                                list(categories) if categories is not None else None))
        pairs: list[tuple[float, float]] = []
        for item in items:
            score = item.scores.get(dim)
            person = compared_value(chosen.get(item.item_id, []), dim)
            if score is not None and isinstance(person, float | int):
                pairs.append((float(score), float(person)))
        scale, categories = _scale_of([v for p in pairs for v in p], grades)
        out.append(judge_block(dim, "", pairs, scale,
                               list(categories) if categories is not None else None))
    for dim, questions in judge.questions.items():
        for question in questions:
            if cancel is not None:
                cancel.raise_if_cancelled()
            answers: list[list[object]] = [
                [_yes_no(own[(who, i.item_id)].answers.get(dim, {}).get(question))
                 if (who, i.item_id) in own else None for i in items] for who in raters]
            if not any(v is not None for row in answers for v in row):
                continue
            out.append(people_block(dim, question, answers, "nominal", [NO, YES]))
            said: list[tuple[object, object]] = []
            for item in items:
                j = item.answers.get(dim, {}).get(question)
                p = compared_value(chosen.get(item.item_id, []), dim, question)
                if j is not None and isinstance(p, bool):
                    said.append((_yes_no(j), _yes_no(p)))
            out.append(judge_block(dim, question, said, "nominal", [NO, YES]))
    return out


def _yes_no(value: bool | None) -> str | None:
    return None if value is None else (YES if value else NO)


# ------------------------------------------------------------------------- corrected mean
@dataclass(frozen=True)
class CorrectedRow:
    """The corrected mean of one dimension for one judge (the project's, or a condition) over
    one group of items ("" = all)."""

    dimension: str
    judge: str
    group: str
    result: CorrectedMean
    random_how: str = ""  #: which graded items count as drawn at random, in words

    def sentence(self) -> str:
        where = f" ({self.group})" if self.group else ""
        who = "" if self.judge == "the judge" else f" by {self.judge}"
        return f"{self.dimension}{where}{who}: " + self.result.sentence("mean score")

    def row(self) -> dict[str, object]:
        r = self.result

        def ends(ci: tuple[float, float] | None) -> tuple[float | None, float | None]:
            return (None, None) if ci is None else (_round(ci[0]), _round(ci[1]))

        judge_low, judge_high = ends(r.judge_ci)
        low, high = ends(r.corrected_ci)
        sample_low, sample_high = ends(r.sample_ci)
        return {"dimension": self.dimension, "judge": self.judge, "group": self.group or "all",
                "judge_mean": _round(r.judge_mean), "judge_ci_low": judge_low,
                "judge_ci_high": judge_high, "corrected_mean": _round(r.corrected),
                "corrected_ci_low": low, "corrected_ci_high": high,
                "sample_mean": _round(r.sample_mean), "sample_ci_low": sample_low,
                "sample_ci_high": sample_high, "narrower_by": _round(r.narrower_by),
                "n_items": r.n_items, "n_graded_at_random": r.n_graded,
                "n_graded_not_random": r.n_graded_not_random, "in_words": self.sentence()}


def corrected_means(judge: JudgeData, ratings: Sequence[Rating], *, random: Iterable[str],
                    random_how: str = "", compare: str | None = None,
                    adjudications: Sequence[Rating] = (),
                    candidates: Sequence[tuple[str, str, JudgeData]] = ()) -> list[CorrectedRow]:
    """Per dimension: the judge's raw mean over every item it scored (held out ones aside)
    beside that mean corrected by the grade compared with (``compare``, see
    :func:`agreement_blocks`) on the graded items in ``random`` (drawn at random; any other
    graded item is counted, not used). Then the same per group of items (when the items have
    groups) and for each of ``candidates`` (other judges or conditions: "name", key, judge)."""
    from core.reliability import CorrectedMean, corrected_mean

    drawn = set(random)
    chosen = _chosen(ratings, adjudications, compare)
    out: list[CorrectedRow] = []
    judges = [("the judge", judge), *[(name, j) for name, _key, j in candidates]]
    groups = sorted({i.group for i in judge.items if i.group})
    for name, current in judges:
        for dim in judge.dimensions:
            for group in ["", *groups]:
                items = [i for i in current.items if not i.held_out
                         and (not group or _group_of(judge, i.item_id) == group)]
                if current.judge_scale:
                    result = CorrectedMean(
                        None, None, None, None, None, None, len(items), 0, reason=(
                            f"the judge's scores are not grades on your scale "
                            f"({current.judge_scale}), so your grades cannot correct their "
                            "mean"))
                    out.append(CorrectedRow(dim, name, group, result, random_how))
                    continue
                f = [np.nan if (s := i.scores.get(dim)) is None else float(s) for i in items]
                y: list[float] = []
                for i in items:
                    v = compared_value(chosen.get(i.item_id, []), dim)
                    y.append(float(v) if isinstance(v, float | int) else np.nan)
                mask = [i.item_id in drawn for i in items]
                if not items:
                    continue
                result = corrected_mean(f, y, random_sample=mask)
                out.append(CorrectedRow(dim, name, group, result, random_how))
    return out


def _group_of(judge: JudgeData, item_id: str) -> str:
    item = judge.item(item_id)
    return item.group if item is not None else ""


# --------------------------------------------------------------------------------- labels
def label_rows(judge: JudgeData, ratings: Sequence[Rating],
               adjudications: Sequence[Rating] = ()) -> list[dict[str, object]]:
    """Every label of every item: the judge's score (origin "judge", by the model) and answers,
    each person's grade (origin "human", by the rater, blind or not) and the agreed grade
    (origin "adjudicated", by who decided, from which grades), item by item in the judge's
    order."""
    from core.judge_check import blind_text, decided_from_text

    by_item: dict[str, list[Rating]] = {}
    for r in [*ratings, *adjudications]:
        if not r.empty:
            by_item.setdefault(r.item_id, []).append(r)
    model = judge.model or judge.method
    rows: list[dict[str, object]] = []
    for item in judge.items:
        held = " (held out of the agreement: shown to the model in a prompt)" \
            if item.held_out else ""
        for dim in judge.dimensions:
            score = item.scores.get(dim)
            rows.append({"item": item.item_id, "dimension": dim, "question": "",
                         "label": score, "origin": "judge", "by": model, "blind": "",
                         "at": "", "decided_from": "",
                         "note": ("no score: the judge failed on it" if score is None else "")
                         + held})
            for question in judge.questions.get(dim, []):
                said = item.answers.get(dim, {}).get(question)
                rows.append({"item": item.item_id, "dimension": dim, "question": question,
                             "label": _yes_no(said), "origin": "judge", "by": model,
                             "blind": "", "at": "", "decided_from": "",
                             "note": ("no answer" if said is None else "") + held})
        for r in by_item.get(item.item_id, []):
            common = {"item": item.item_id, "origin": r.kind, "by": r.rater,
                      "blind": "" if r.adjudicated else blind_text(r.blind), "at": r.at,
                      "decided_from": decided_from_text(r) if r.adjudicated else ""}
            first = True
            for dim, value in r.scores.items():
                rows.append({**common, "dimension": dim, "question": "", "label": value,
                             "note": r.note if first else ""})
                first = False
            for dim, answers in r.answers.items():
                for question, yes in answers.items():
                    rows.append({**common, "dimension": dim, "question": question,
                                 "label": _yes_no(yes), "note": r.note if first else ""})
                    first = False
    return rows
