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

    judge = judge_data(stored)                     # stored: session.load_result(project, setup)
    save_rating(project, Rating(...)); ratings = load_ratings(project)
    report = judge_report(judge, ratings)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from core import judge_check
from core.judge_check import JudgeData, JudgeItem, Rating

if TYPE_CHECKING:  # pragma: no cover
    from core.aqer.session import StoredResult
    from core.project import Project

__all__ = ["DIMENSION", "JUDGE_SCALE", "METHOD", "item_id", "judge_data", "load_ratings",
           "rating_scale", "save_rating"]

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
    from datetime import datetime

    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def item_id(model: str, number: int, question: str, response: str) -> str:
    """The item name of ``model``'s answer ``response`` to question ``number`` (1-based, the
    results' order of questions), ending in a short mark of the question and answer texts: a
    grade kept in the project stays with the answer it was given to, and an answer file
    changed since (another question at that number, another answer) does not inherit it."""
    import hashlib

    mark = hashlib.sha256(f"{question}\n{response}".encode()).hexdigest()[:6]
    return f"{model}, question {number} ({mark})"


def rating_scale(stored: StoredResult) -> tuple[int, int]:
    """The scale a person grades on: the range of the grades in the answers file when it has
    whole-number grades over at most 11 steps (the teacher's own scale), else 1 to 5."""
    responses = stored.result.responses
    if "grade" not in responses:
        return DEFAULT_SCALE
    grades = [g for g in (_number(v) for v in responses["grade"]) if g is not None]
    if len(grades) < 2 or any(g != int(g) for g in grades):
        return DEFAULT_SCALE
    low, high = int(min(grades)), int(max(grades))
    return (low, high) if 1 <= high - low <= 10 else DEFAULT_SCALE


def judge_data(stored: StoredResult) -> JudgeData:
    """One :class:`JudgeItem` per AI answer of ``stored`` (blank answers are not offered:
    there is nothing to read), with AQER's score (None where it could not score the answer,
    e.g. too few workers answered the question) and what it was compared with."""
    result = stored.result
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
    source = (f"the AQER results scored {_when(stored.finished_at)}" if stored.finished_at
              else "the AQER results")
    return JudgeData(method="AQER", items=items, dimensions=[DIMENSION], step=1.0,
                     scale=rating_scale(stored),
                     model=result.embedding_model,
                     source=source, judge_scale=JUDGE_SCALE)


def save_rating(project: Project, rating: Rating, *, who: str | None = None) -> Rating:
    return judge_check.save_rating(project, METHOD, rating, who=who)


def load_ratings(project: Project) -> list[Rating]:
    return judge_check.load_ratings(project, METHOD)
