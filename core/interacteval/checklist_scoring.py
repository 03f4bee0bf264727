"""Stage 3: checklist scoring (paper section 3.5, Eq. 1).

A model answers every checklist question about a text with yes or no, by default all questions
of a dimension in one call (the paper's setting; ``ScoringSettings.mode="per_question"`` asks
one question per call). The score is

    score = 1 + 4 * (#yes / #answered)          on the 1-5 scale,

which is the paper's ``1 + 4 * #yes / #questions`` when every question is answered.

How answers are read (decided here, shown in the export's Read me):

* Case and surrounding spaces do not matter: "yes", "Yes", "YES", " yes " are all yes.
* An answer that starts with the word yes or no followed by punctuation or an explanation
  ("No, the second sentence ...") counts as that word, unless it also contains the other word
  ("yes/no" is unanswered).
* JSON booleans ``true`` / ``false`` (and the strings "true" / "false") count as yes / no: some
  providers' structured-output modes return booleans for two-valued answers.
* Anything else (missing key, empty, "maybe", a number) is **unanswered**: it is reported with
  the model's raw value, never counted as no.
* Keys the checklist does not have are ignored (and mentioned in the text's note).

Unanswered questions: the score is taken over the answered questions, and ``answered``,
``questions`` and the list of unanswered question numbers are kept beside it. When more than
``max_unanswered_share`` of the questions (default 20 %) are unanswered, or none is answered,
the text is marked failed and gets no score.

Legacy count (``counting="legacy"``, for replicating the paper's numbers only): the authors'
code counted the case-sensitive substring "Yes" in the reply text. Here the count runs over the
reply's answer values (the keys are question numbers such as "q3", which never contain "Yes"),
and the score is ``1 + 4 * count / #questions``. Lowercase "yes" is not counted and a value
with "Yes" twice counts twice, exactly as in that code; unanswered questions count as no.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from core.interacteval import _prompts
from core.interacteval.model import (
    Checklist,
    JsonLLM,
    QuestionAnswer,
    ScoringSettings,
    TextItem,
    TextScore,
)
from core.llm import LLMFailure
from core.runs import CancelToken

__all__ = [
    "answers_schema",
    "checklist_score",
    "legacy_count",
    "parse_answer",
    "read_answers",
    "score_text",
]

_ANSWER_SCHEMA = {"type": "string", "enum": ["yes", "no"]}
_LEADING = re.compile(r"^(yes|no)(?![a-z])")
_WORD = {"yes": re.compile(r"\byes\b"), "no": re.compile(r"\bno\b")}


def parse_answer(value: Any) -> Literal["yes", "no"] | None:
    """``"yes"`` / ``"no"`` for a model's answer value, None when it is neither (see the module
    docstring for the exact rules)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, str):
        return None
    text = " ".join(value.casefold().split()).strip(" \"'`*")
    if text in ("yes", "no"):
        return text  # type: ignore[return-value]
    if text in ("true", "false"):
        return "yes" if text == "true" else "no"
    match = _LEADING.match(text)
    if match:
        word = match.group(1)
        other = "no" if word == "yes" else "yes"
        if not _WORD[other].search(text[match.end():]):
            return word  # type: ignore[return-value]
    return None


def legacy_count(values: Iterable[Any]) -> int:
    """How often the exact substring "Yes" occurs in the answer values (the authors' count)."""
    return sum(str(v).count("Yes") for v in values if v is not None and not isinstance(v, bool))


def checklist_score(yes: int, answered: int) -> float:
    """``1 + 4 * yes / answered`` (paper Eq. 1 over the answered questions)."""
    if answered <= 0:
        raise ValueError("a checklist score needs at least one answered question")
    if not 0 <= yes <= answered:
        raise ValueError("yes must be between 0 and the number of answered questions")
    return 1.0 + 4.0 * yes / answered


def _key(number: int) -> str:
    return f"q{number}"


@cache
def answers_schema(n_questions: int) -> type[BaseModel]:
    """The reply schema for a checklist of ``n_questions``: keys ``q1`` .. ``qN`` with "yes" or
    "no" as far as the model is told (constrained decoding follows this), but any value and any
    extra key is accepted by validation, so our own rules decide what counts as an answer."""
    keys = [_key(i) for i in range(1, n_questions + 1)]

    def extra(schema: dict[str, Any]) -> None:
        _tidy(schema)
        schema["required"] = keys

    fields: dict[str, Any] = {
        key: (Any, Field(default=None, json_schema_extra=dict(_ANSWER_SCHEMA))) for key in keys
    }
    return create_model(  # type: ignore[call-overload]
        "ChecklistAnswers",
        __config__=ConfigDict(extra="allow", json_schema_extra=extra),
        **fields,
    )


def _tidy(schema: dict[str, Any]) -> None:
    """Keep the reply schema plain: every property required, no defaults, no extra keys."""
    schema.pop("description", None)
    schema["additionalProperties"] = False
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)
        prop.pop("title", None)
    schema["required"] = list(schema.get("properties", {}))


class SingleAnswer(BaseModel):
    """The reply to one question (``mode="per_question"``)."""

    model_config = ConfigDict(json_schema_extra=_tidy)

    answer: Any = Field(default=None, json_schema_extra=dict(_ANSWER_SCHEMA))


def read_answers(reply: BaseModel | dict[str, Any], questions: Sequence[str]) -> tuple[
    list[QuestionAnswer], list[str], list[Any]
]:
    """Parse a whole-checklist reply: (answers in question order, extra keys, every raw value
    including extra keys' for the legacy count). Keys match case-insensitively ("Q3")."""
    data = reply.model_dump() if isinstance(reply, BaseModel) else dict(reply)
    by_key: dict[str, Any] = {}
    extra: list[str] = []
    wanted = {_key(i) for i in range(1, len(questions) + 1)}
    for key, value in data.items():
        folded = str(key).strip().casefold().replace(" ", "")
        if folded.isdigit():
            folded = "q" + folded
        if folded in wanted and (folded not in by_key or by_key[folded] is None):
            by_key[folded] = value
        elif value is not None:
            extra.append(str(key))
    answers = []
    for number, question in enumerate(questions, 1):
        raw = by_key.get(_key(number))
        answers.append(QuestionAnswer(number=number, question=question, answer=parse_answer(raw),
                                      raw=_raw_text(raw)))
    return answers, extra, [v for v in data.values() if v is not None]


def _raw_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _source_block(item: TextItem) -> str:
    if not item.source.strip():
        return ""
    return f"The source (what the text is about):\n{item.source.strip()}\n"


def _values(checklist: Checklist, item: TextItem) -> dict[str, Any]:
    return {
        "dimension": checklist.dimension,
        "definition": checklist.definition.strip() or "(no definition given)",
        "source_block": _source_block(item),
        "text": item.text.strip(),
    }


async def score_text(
    checklist: Checklist,
    item: TextItem,
    llm: JsonLLM,
    *,
    settings: ScoringSettings | None = None,
    cancel: CancelToken | None = None,
) -> TextScore:
    """Score ``item`` on ``checklist.dimension``. Never raises for a model failure: the text
    comes back with ``status="failed"`` and the reason in ``note``. Raises
    ``core.runs.Cancelled`` on cancel."""
    settings = settings or ScoringSettings()
    questions = checklist.questions
    base = TextScore(
        text_id=item.id, dimension=checklist.dimension, status="failed",
        questions=len(questions), source_id=item.source_id, system=item.system,
        human=item.human.get(checklist.dimension),
    )
    if not questions:
        base.note = f"The checklist for {checklist.dimension} has no questions."
        return base
    if not item.text.strip():
        base.note = "The text is empty."
        return base
    if settings.mode == "per_question":
        answers, extra, raw_values, failure = await _ask_each(checklist, item, llm, settings,
                                                              cancel)
    else:
        answers, extra, raw_values, failure = await _ask_all(checklist, item, llm, settings,
                                                             cancel)
    if failure is not None and not any(a.answer for a in answers):
        base.answers = answers
        base.unanswered = [a.number for a in answers if a.answer is None]
        base.note = failure
        return base
    return _tally(base, answers, extra, raw_values, settings, failure)


async def _ask_all(
    checklist: Checklist, item: TextItem, llm: JsonLLM, settings: ScoringSettings,
    cancel: CancelToken | None,
) -> tuple[list[QuestionAnswer], list[str], list[Any], str | None]:
    questions = checklist.questions
    prompt = _prompts.load("checklist_scoring")
    listed = "\n".join(f"{_key(i)}. {' '.join(q.split())}" for i, q in enumerate(questions, 1))
    first = ", ".join(f'"{_key(i)}": "{a}"' for i, a in zip((1, 2), ("yes", "no"))
                      if i <= len(questions))
    messages = prompt.messages(**_values(checklist, item), questions=listed, first_keys=first)
    try:
        reply = await llm.complete_json(
            messages, answers_schema(len(questions)), repeat=settings.repeat,
            template_version=prompt.template_version, cancel=cancel,
        )
    except LLMFailure as failure:
        empty = [QuestionAnswer(number=i, question=q) for i, q in enumerate(questions, 1)]
        return empty, [], [], failure.message
    answers, extra, raw_values = read_answers(reply, questions)
    return answers, extra, raw_values, None


async def _ask_each(
    checklist: Checklist, item: TextItem, llm: JsonLLM, settings: ScoringSettings,
    cancel: CancelToken | None,
) -> tuple[list[QuestionAnswer], list[str], list[Any], str | None]:
    prompt = _prompts.load("question_scoring")
    values = _values(checklist, item)

    async def one(number: int, question: str) -> tuple[QuestionAnswer, Any, str | None]:
        messages = prompt.messages(**values, question=" ".join(question.split()))
        try:
            reply = await llm.complete_json(
                messages, SingleAnswer, repeat=settings.repeat,
                template_version=prompt.template_version, cancel=cancel,
            )
        except LLMFailure as failure:
            answer = QuestionAnswer(number=number, question=question,
                                    raw=f"(no answer: {failure.kind})")
            return answer, None, failure.message
        raw = reply.answer
        answer = QuestionAnswer(number=number, question=question, answer=parse_answer(raw),
                                raw=_raw_text(raw))
        return answer, raw, None

    results = await asyncio.gather(*(one(i, q) for i, q in enumerate(checklist.questions, 1)))
    answers = [r[0] for r in results]
    raw_values = [r[1] for r in results if r[1] is not None]
    failures = [r[2] for r in results if r[2]]
    failure = None
    if failures:
        failure = (f"{len(failures)} of {len(results)} questions got no answer from the model: "
                   f"{failures[0]}")
    return answers, [], raw_values, failure


def _tally(
    score: TextScore, answers: list[QuestionAnswer], extra: list[str], raw_values: list[Any],
    settings: ScoringSettings, failure: str | None,
) -> TextScore:
    n = len(answers)
    score.answers = answers
    score.yes = sum(1 for a in answers if a.answer == "yes")
    score.answered = sum(1 for a in answers if a.answer is not None)
    score.unanswered = [a.number for a in answers if a.answer is None]
    notes = []
    if failure:
        notes.append(failure)
    if score.unanswered:
        listed = ", ".join(_key(i) for i in score.unanswered[:10])
        if len(score.unanswered) > 10:
            listed += ", ..."
        notes.append(f"{len(score.unanswered)} of {n} questions unanswered ({listed})")
    if extra:
        notes.append("the reply also had keys that are not questions, ignored: "
                     + ", ".join(extra[:5]) + (", ..." if len(extra) > 5 else ""))
    count = legacy_count(raw_values)
    score.legacy_score = 1.0 + 4.0 * count / n
    if settings.counting == "legacy":
        score.status = "ok"
        score.score = score.legacy_score
        notes.append(f"legacy count: “Yes” found {count} times in the reply")
    elif score.answered == 0:
        score.status = "failed"
        notes.insert(0, "no question was answered yes or no, so there is no score")
    elif len(score.unanswered) / n > settings.max_unanswered_share:
        score.status = "failed"
        notes.insert(0, f"too many questions unanswered (more than "
                        f"{settings.max_unanswered_share:.0%} allowed), so there is no score")
    else:
        score.status = "ok"
        score.score = checklist_score(score.yes, score.answered)
        if score.unanswered:
            notes.append(f"score over the {score.answered} answered questions")
    score.note = "; ".join(notes)
    if score.note:
        score.note = score.note[0].upper() + score.note[1:] + "."
    return score
