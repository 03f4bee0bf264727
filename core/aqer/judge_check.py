"""AQER's scores of the AI answers as the judge to check (:mod:`core.judge_check`): a person
grades some of the AI (LLM) answers of an AQER project, and the report says how well AQER's
score of each answer (its similarity to the consensus of the workers' answers) agrees with the
person's grades.

AQER's score is a similarity, not a grade: it is compared with the grades by rank (Kendall
tau-b, Spearman rho), never by difference, so the mean absolute error and the agreement with
the judge counted as one more rater are undefined, and the biggest disagreements are the
answers the two rank furthest apart. AI answers are never part of the consensus they are
compared with (unless scored as extra workers: then there are no AI answers to check), so none
is held out.

    judge = judge_data(result, finished_at)        # an AqerResult and when it was scored
    ratings, notes = file_ratings(prepared, result, judge, rater)   # grades in the answers file
    report = judge_report(judge, ratings)          # core.judge_check

Pure: the project (the stored result, the ratings kept) is ``core.aqer.session``'s.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.judge_check import JudgeData, JudgeItem, Rating
from core.tables import cell_number

if TYPE_CHECKING:  # pragma: no cover
    from core.aqer.model import AqerResult
    from core.aqer.responses import PreparedResponses

__all__ = ["DIMENSION", "JUDGE_SCALE", "METHOD", "file_ratings", "item_id", "judge_data",
           "rating_scale"]

METHOD = "aqer"
#: The one dimension a person grades an AI answer on.
DIMENSION = "Answer quality"
JUDGE_SCALE = ("AQER score: the answer's similarity to the consensus of the workers' answers "
               "(cosine, up to 1)")
#: The grading scale when the answers file has no grades to take it from.
DEFAULT_SCALE = (1, 5)


def _number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _when(iso: str) -> str:
    """A stored time (ISO, UTC) as local time to the minute; as it is when unreadable."""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def item_id(model: str, number: int, question: str, response: str) -> str:
    """The item name of ``model``'s answer ``response`` to question ``number`` (1-based, the
    results' order of questions), ending in a short mark of the question and answer texts: a
    grade kept in the project stays with the answer it was given to, and an answer file
    changed since (another question at that number, another answer) does not inherit it."""
    mark = hashlib.sha256(f"{question}\n{response}".encode()).hexdigest()[:6]
    return f"{model}, question {number} ({mark})"


def rating_scale(result: AqerResult) -> tuple[int, int]:
    """The scale a person grades on: the range of the grades in the answers file when it has
    whole-number grades over at most 11 steps (the teacher's own scale), else 1 to 5."""
    responses = result.responses
    if "grade" not in responses:
        return DEFAULT_SCALE
    grades = [g for g in (_number(v) for v in responses["grade"]) if g is not None]
    if len(grades) < 2 or any(g != int(g) for g in grades):
        return DEFAULT_SCALE
    low, high = int(min(grades)), int(max(grades))
    return (low, high) if 1 <= high - low <= 10 else DEFAULT_SCALE


def judge_data(result: AqerResult, finished_at: str = "") -> JudgeData:
    """One :class:`JudgeItem` per AI answer of ``result`` (blank answers are not offered:
    there is nothing to read), with AQER's score (None where it could not score the answer,
    e.g. too few workers answered the question) and what it was compared with; scored at
    ``finished_at`` (ISO, UTC; "" when not known)."""
    numbers = {str(q): k for k, q in enumerate(result.questions.get("question", []), start=1)}
    items = []
    for _, row in result.llm_answers.iterrows():
        response = row.get("response")
        if response is None or (isinstance(response, float) and math.isnan(response)) \
                or not str(response).strip():
            continue
        question, model = str(row["question"]), str(row["model"])
        number = numbers.setdefault(question, len(numbers) + 1)
        score = _number(row.get("score"))
        workers = _number(row.get("workers_similarity_to_others"))
        if score is None:
            said = ("No AQER score: fewer than 2 workers answered this question, so there is "
                    "no consensus to compare it with.")
        else:
            said = f"AQER score {score:.3f} (similarity to the consensus of the workers' answers)"
            if workers is not None:
                said += (f"; the workers' own answers come to {workers:.3f} on average, "
                         "measured the same way")
            said += "."
        items.append(JudgeItem(
            item_id=item_id(model, number, question, str(response)), text=str(response),
            context=f"Question {number}: {question}\nAnswered by the AI model {model}.",
            scores={DIMENSION: score}, explanation={DIMENSION: said}))
    # in words, never the project's internal run number
    source = (f"the AQER results scored {_when(finished_at)}" if finished_at
              else "the AQER results")
    return JudgeData(method="AQER", items=items, dimensions=[DIMENSION], step=1.0,
                     scale=rating_scale(result),
                     model=result.embedding_model,
                     source=source, judge_scale=JUDGE_SCALE)


def file_ratings(prepared: PreparedResponses, result: AqerResult, judge: JudgeData,
                 rater: str) -> tuple[list[Rating], list[str]]:
    """The grades the answers file (read as ``prepared``) gives the AI answers of ``judge``
    (:func:`judge_data` of ``result``), as the ratings of one ``rater``, so that the report
    compares AQER with them without grading again; and what was left out, in words (a grade
    that is not a number, or outside the grading scale)."""
    frame = prepared.frame
    ai = frame[frame["is_llm"]] if "grade" in frame else frame.iloc[0:0]
    order = list(result.questions.get("question", []))
    numbers = {str(q): k for k, q in enumerate(order, start=1)}
    low, high = judge.scale
    ratings, notes = [], []
    for _, row in ai.iterrows():
        raw = row.get("grade")
        if raw is None or not str(raw).strip():
            continue
        number = numbers.get(str(row["question"]))
        wanted = item_id(str(row["model"]), number, str(row["question"]),
                         str(row["response"])) if number is not None else ""
        if judge.item(wanted) is None:
            continue
        value = cell_number(raw)
        where = f"the grade of {wanted}"
        if value is None:
            notes.append(f"{where} (“{raw}”) is not a number; left out.")
        elif not low <= value <= high:
            notes.append(f"{where} ({value:g}) is outside the scale {low} to {high}; left out.")
        else:
            ratings.append(Rating(wanted, rater, {DIMENSION: float(value)}))
    return ratings, notes
