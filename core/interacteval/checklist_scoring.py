"""Stage 3: checklist scoring (paper section 3.5, Eq. 1).

A model answers every checklist question about a text with yes or no, by default all questions
of a dimension in one call (the paper's setting; ``ScoringSettings.mode="per_question"`` asks
one question per call). The score is the paper's Eq. 1 over the whole checklist:

    score = 1 + 4 * (#yes / #questions)          on the 1-5 scale.

Every text is scored over the same questions, so a text is only scored when every question of
its checklist has a yes or no answer.

How answers are read (decided here, shown in the export's Read me):

* Case and surrounding spaces do not matter: "yes", "Yes", "YES", " yes " are all yes.
* An answer that starts with the word yes or no followed by punctuation or an explanation
  ("No, the second sentence ...") counts as that word, unless it also contains the other word
  ("yes/no" is unanswered).
* JSON booleans ``true`` / ``false`` (and the strings "true" / "false") count as yes / no: some
  providers' structured-output modes return booleans for two-valued answers.
* Anything else (missing key, empty, "maybe", a number) is **unanswered**: it is reported with
  the model's raw value, never counted as no.
* Keys the checklist does not have are ignored (and mentioned in the text's note); a reply
  that answers question numbers the checklist does not have, or none of its questions, is
  refused and asked again once (the gateway's ``check``).

Unanswered questions are asked again, once, in one call that lists only them (in
``per_question`` mode the gateway asks an unusable answer again). A text that still has
unanswered questions gets **no score**: its status is "incomplete", the note lists the
questions, and a resumed run asks them again (an unusable answer is never cached). A text the
model gave no usable answer for at all is "failed".

A checklist whose prompt, with the text and its source, does not fit the model's context window
is asked in parts of consecutive questions (:func:`question_parts`; the whole checklist in one
call whenever it fits), and the parts' answers are put together: every question is still
answered about the whole text. A text that does not fit even with one question is refused
before the run (:func:`too_long`), by name, and fails without a call if it is scored anyway.

Legacy count (``counting="legacy"``, for replicating the paper's numbers only): the authors'
code counted the case-sensitive substring "Yes" in the model's reply. Here that is done per
question: a question counts as yes when its answer holds "Yes" with a capital Y (so a
lowercase "yes" counts as no, as in that code), at most once per question, and the score is
``1 + 4 * count / #questions``, so it stays on the 1-5 scale. The same completeness rule holds.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from core.interacteval import _prompts
from core.interacteval._common import ask
from core.interacteval.model import (
    Checklist,
    JsonLLM,
    QuestionAnswer,
    ScoringSettings,
    StageError,
    TextItem,
    TextScore,
)
from core.llm import Rejection, context
from core.prompts import fence
from core.runs import CancelToken
from core.words import count as count_of

__all__ = [
    "LEGACY_RULE",
    "SCORE_RULE",
    "answers_schema",
    "checklist_score",
    "legacy_count",
    "parse_answer",
    "question_parts",
    "read_answers",
    "refused_texts",
    "score_text",
    "text_label",
    "too_long",
]

STAGE = "Checklist scoring"
#: The scoring rule in plain words (screens, Read me sheets).
SCORE_RULE = ("1 + 4 × (yes answers / questions in the checklist), from 1 to 5 (the paper's "
              "Eq. 1); a text with a question still unanswered after asking again has no score")
#: What the legacy count reproduces, in plain words.
LEGACY_RULE = ("legacy count, reproducing the authors' code: a question counts as yes only when "
               "its answer holds “Yes” with a capital Y (a lowercase “yes” counts as no); "
               "1 + 4 × (such answers / questions), from 1 to 5; for replication only")

_ANSWER_SCHEMA: dict[str, Any] = {"type": "string", "enum": ["yes", "no"]}
_LEADING = re.compile(r"^(yes|no)(?![a-z])")
_WORD = {"yes": re.compile(r"\byes\b"), "no": re.compile(r"\bno\b")}
_QUESTION_ID = re.compile(r"^q\d+$")


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
    """How many of the answer values hold the exact substring "Yes" (the authors' case-sensitive
    count, taken once per answer so it never exceeds the number of questions)."""
    return sum(1 for v in values
               if v is not None and not isinstance(v, bool) and "Yes" in str(v))


def checklist_score(yes: int, questions: int) -> float:
    """``1 + 4 * yes / questions``: paper Eq. 1, over every question of the checklist."""
    if questions <= 0:
        raise ValueError("a checklist score needs at least one question")
    if not 0 <= yes <= questions:
        raise ValueError("yes must be between 0 and the number of questions")
    return 1.0 + 4.0 * yes / questions


def _key(number: int) -> str:
    return f"q{number}"


def _folded_key(key: Any) -> str:
    folded = str(key).strip().casefold().replace(" ", "")
    return "q" + folded if folded.isdigit() else folded


@cache
def _schema_for(keys: tuple[str, ...]) -> type[BaseModel]:
    def extra(schema: dict[str, Any]) -> None:
        _tidy(schema)
        schema["required"] = list(keys)

    fields: dict[str, Any] = {
        key: (Any, Field(default=None, json_schema_extra=dict(_ANSWER_SCHEMA))) for key in keys
    }
    return create_model(
        "ChecklistAnswers",
        __config__=ConfigDict(extra="allow", json_schema_extra=extra),
        **fields,
    )


def answers_schema(n_questions: int) -> type[BaseModel]:
    """The reply schema for a checklist of ``n_questions``: keys ``q1`` .. ``qN`` with "yes" or
    "no" as far as the model is told (constrained decoding follows this), but any value and any
    extra key is accepted by validation, so our own rules decide what counts as an answer."""
    return _schema_for(tuple(_key(i) for i in range(1, n_questions + 1)))


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


def _reply_data(reply: BaseModel | dict[str, Any]) -> dict[str, Any]:
    return reply.model_dump() if isinstance(reply, BaseModel) else dict(reply)


def read_answers(reply: BaseModel | dict[str, Any], questions: Sequence[str]) -> tuple[
    list[QuestionAnswer], list[str], list[Any]
]:
    """Parse a whole-checklist reply: (answers in question order, extra keys, the raw answer
    values in question order). Keys match case-insensitively ("Q3", "3")."""
    by_key, extra = _by_key(_reply_data(reply), {_key(i) for i in range(1, len(questions) + 1)})
    answers = []
    for number, question in enumerate(questions, 1):
        raw = by_key.get(_key(number))
        answers.append(QuestionAnswer(number=number, question=question, answer=parse_answer(raw),
                                      raw=_raw_text(raw)))
    return answers, extra, [by_key.get(_key(n)) for n in range(1, len(questions) + 1)]


def _by_key(data: dict[str, Any], wanted: set[str]) -> tuple[dict[str, Any], list[str]]:
    by_key: dict[str, Any] = {}
    extra: list[str] = []
    for key, value in data.items():
        folded = _folded_key(key)
        if folded in wanted and (folded not in by_key or by_key[folded] is None):
            by_key[folded] = value
        elif value is not None and folded not in wanted:
            extra.append(str(key))
    return by_key, extra


def _raw_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _listed(numbers: Sequence[int], limit: int = 10) -> str:
    shown = ", ".join(_key(n) for n in numbers[:limit])
    return shown + (", ..." if len(numbers) > limit else "")


def _answered_twice(data: dict[str, Any]) -> str:
    """Why a reply answers one question twice, under two spellings of its label ("q1" and
    "Q1"), with different answers ("" when it does not): which one is meant is unknown."""
    seen: dict[str, tuple[str, Any]] = {}
    for key, value in data.items():
        folded = _folded_key(key)
        if value is None:
            continue
        if folded in seen and parse_answer(seen[folded][1]) != parse_answer(value):
            first, earlier = seen[folded]
            return (f'{folded} is answered twice with different answers ("{first}": '
                    f'{json.dumps(earlier)[:20]}, "{key}": {json.dumps(value)[:20]}); give each '
                    "question one answer")
        seen.setdefault(folded, (str(key), value))
    return ""


def _reply_check(asked: Sequence[int], n_questions: int, *, complete: bool):
    """The stage's check of a whole-checklist reply: the question numbers must be the
    checklist's, at least one asked question must be there, and (``complete``) every asked
    question must have a yes or no answer."""
    keys = [_key(n) for n in asked]
    checklist_keys = {_key(n) for n in range(1, n_questions + 1)}

    def check(reply: BaseModel) -> Rejection | None:
        twice = _answered_twice(_reply_data(reply))
        if twice:
            return Rejection(twice)
        data = {_folded_key(k): v for k, v in _reply_data(reply).items()}
        foreign = [k for k in data if _QUESTION_ID.match(k) and k not in checklist_keys]
        if foreign:
            return Rejection(
                f"the reply answers questions the checklist does not have ({', '.join(foreign[:5])}"
                f"); the questions are {_key(1)} to {_key(n_questions)}")
        present = [k for k in keys if data.get(k) is not None]
        if not present:
            given = ", ".join([str(k) for k, v in _reply_data(reply).items()
                               if v is not None][:5]) or "none"
            return Rejection(
                f"the reply answers none of the questions (its keys: {given}); use the labels "
                "before the questions as keys")
        if complete:
            missing = [k for k in keys if parse_answer(data.get(k)) is None]
            if missing:
                return Rejection(f"{', '.join(missing)} have no yes or no answer; answer each "
                                 "of them with yes or no")
        return None

    return check


def _single_check(reply: SingleAnswer) -> Rejection | None:
    if parse_answer(reply.answer) is None:
        return Rejection("the answer must be yes or no")
    return None


def _source_block(item: TextItem) -> str:
    """The text's source for the prompts, in its fence (:func:`core.prompts.fence`)."""
    if not item.source.strip():
        return ""
    return f"The source (what the text is about):\n{fence(item.source.strip(), 'source')}\n"


def _values(checklist: Checklist, item: TextItem) -> dict[str, Any]:
    return {
        "dimension": checklist.dimension,
        "definition": checklist.definition.strip() or "(no definition given)",
        "source_block": _source_block(item),
        "text": item.text.strip(),
    }


class _Asked:
    """What the model said about one text: answers in question order, their raw values, extra
    keys, and why questions got no answer (message, failure kind)."""

    def __init__(self, questions: Sequence[str]) -> None:
        self.answers = [QuestionAnswer(number=i, question=q) for i, q in enumerate(questions, 1)]
        self.raw: list[Any] = [None] * len(questions)
        self.extra: list[str] = []
        self.failures: list[tuple[str, str]] = []

    def take(self, number: int, value: Any) -> None:
        self.raw[number - 1] = value
        answer = self.answers[number - 1]
        answer.answer = parse_answer(value)
        answer.raw = _raw_text(value)

    @property
    def unanswered(self) -> list[int]:
        return [a.number for a in self.answers if a.answer is None]


async def score_text(
    checklist: Checklist,
    item: TextItem,
    llm: JsonLLM,
    *,
    settings: ScoringSettings | None = None,
    cancel: CancelToken | None = None,
) -> TextScore:
    """Score ``item`` on ``checklist.dimension``. Never raises for a model failure: the text
    comes back "failed" or "incomplete" with the reason in ``note`` and no score. Raises
    ``core.runs.Cancelled`` on cancel."""
    settings = settings or ScoringSettings()
    questions = checklist.questions
    base = TextScore(
        text_id=item.id, dimension=checklist.dimension, status="failed",
        questions=len(questions), source_id=item.source_id, system=item.system,
        human=item.human.get(checklist.dimension), text=item.text,
    )
    if not questions:
        base.note = f"The checklist for {checklist.dimension} has no questions."
        return base
    if not item.text.strip():
        base.note = "The text is empty."
        return base
    if settings.mode == "per_question":
        asked = await _ask_each(checklist, item, llm, settings, cancel)
    else:
        asked = await _ask_all(checklist, item, llm, settings, cancel)
    return _tally(base, asked, settings)


# ------------------------------------------------------------------ inputs that fit the model
def text_label(item: TextItem) -> str:
    """"the text “a12” (row 14)" ("the text in row 14" when it has no id of its own): which
    text, for a message."""
    if item.row and item.id in (f"row {item.row}", str(item.row)):
        return f"the text in row {item.row}"
    return f"the text “{item.id}”" + (f" (row {item.row})" if item.row else "")


def _listed_questions(questions: Sequence[str], numbers: Sequence[int]) -> str:
    return "\n".join(f"{_key(i)}. {' '.join(questions[i - 1].split())}" for i in numbers)


def _answers_tokens(numbers: Sequence[int]) -> int:
    return context.reply_tokens({_key(n): "yes" for n in numbers})


def question_parts(checklist: Checklist, item: TextItem, limits: context.Limits | None,
                   numbers: Sequence[int] | None = None) -> list[list[int]]:
    """The checklist's question numbers (or ``numbers``) in parts whose prompt, with the text
    and its source, fits the model: one part (the whole checklist in one call, the paper's
    setting) whenever it fits; otherwise each part is asked in its own call and the answers
    are put together (every question is answered about the same whole text). Raises
    :class:`core.llm.context.TooLong` when the text with its source does not fit even with one
    question."""
    questions = checklist.questions
    numbers = list(numbers) if numbers is not None else list(range(1, len(questions) + 1))
    template = _prompts.load("checklist_scoring")
    values = _values(checklist, item)
    try:
        return context.split_items(
            numbers, lambda part: template.messages(
                **values, questions=_listed_questions(questions, part)), limits,
            reply_of=_answers_tokens)
    except context.TooLong as exc:
        raise _text_too_long(checklist, item, limits, exc.needed) from None


#: What to do with a text too long for the model.
SHORTEN_TEXT = "shorten the text (or its source) in the file, or leave it out"


def _overlong(checklist: Checklist, item: TextItem, limits: context.Limits,
              needed: int) -> context.Overlong:
    what = (f"{text_label(item)}{' with its source' if item.source.strip() else ''}, scored on "
            f"{checklist.dimension}")
    return limits.overlong(what, needed, shorten=SHORTEN_TEXT)


def _text_too_long(checklist: Checklist, item: TextItem, limits: context.Limits | None,
                   needed: int) -> context.TooLong:
    if limits is None:
        return context.TooLong(text_label(item), needed=needed)
    overlong = _overlong(checklist, item, limits, needed)
    error = context.TooLong(str(overlong), needed=needed, room=limits.prompt)
    error.overlong = overlong  # type: ignore[attr-defined]
    return error


def too_long(checklist: Checklist, item: TextItem, limits: context.Limits | None,
             settings: ScoringSettings | None = None) -> context.Overlong | None:
    """Why ``item`` cannot be scored on ``checklist`` by a model with ``limits`` (its prompt
    does not fit even with a single question; ``str()`` says so in a sentence), or None."""
    if limits is None or not item.text.strip() or not checklist.questions:
        return None
    settings = settings or ScoringSettings()
    questions = checklist.questions
    if settings.mode == "per_question":
        template = _prompts.load("question_scoring")
        values = _values(checklist, item)
        longest = max(questions, key=len)
        messages = template.messages(**values, question=" ".join(longest.split()))
        if context.prompt_tokens(messages) <= limits.prompt:
            return None
        return _overlong(checklist, item, limits, context.prompt_tokens(messages))
    try:
        question_parts(checklist, item, limits)
    except context.TooLong as exc:
        return getattr(exc, "overlong", None) or _overlong(checklist, item, limits, exc.needed)
    return None


def refused_texts(checklists: Sequence[Checklist], items: Sequence[TextItem],
                  settings: ScoringSettings | None, limits: context.Limits | None
                  ) -> list[context.Overlong]:
    """:func:`too_long` of every text on every checklist: those that cannot be scored by a
    model with ``limits`` (empty when all can)."""
    if limits is None:
        return []
    return [why for checklist in checklists for item in items
            if (why := too_long(checklist, item, limits, settings))]


async def _ask_checklist(checklist: Checklist, item: TextItem, llm: JsonLLM, numbers: list[int],
                         settings: ScoringSettings, cancel: CancelToken | None, *,
                         complete: bool) -> BaseModel:
    questions = checklist.questions
    listed = _listed_questions(questions, numbers)
    return await ask(
        llm, "checklist_scoring", _schema_for(tuple(_key(i) for i in numbers)),
        {**_values(checklist, item), "questions": listed},
        stage=STAGE, dimension=checklist.dimension, cancel=cancel, repeat=settings.repeat,
        check=_reply_check(numbers, len(questions), complete=complete),
        refuse_loops=False,  # answers are short words; the legacy count reads "Yes Yes" as is
    )


async def _ask_all(
    checklist: Checklist, item: TextItem, llm: JsonLLM, settings: ScoringSettings,
    cancel: CancelToken | None,
) -> _Asked:
    questions = checklist.questions
    asked = _Asked(questions)
    limits = await context.limits_for(llm)
    try:
        parts = question_parts(checklist, item, limits)
    except context.TooLong as exc:  # refused before the run; said here too, without a call
        asked.failures.append((exc.message, "too_long"))
        return asked

    async def ask_part(numbers: list[int], complete: bool) -> None:
        try:
            reply = await _ask_checklist(checklist, item, llm, numbers, settings, cancel,
                                         complete=complete)
        except StageError as exc:
            asked.failures.append((exc.message, exc.kind))
            return
        by_key, extra = _by_key(_reply_data(reply), {_key(n) for n in numbers})
        if not complete:
            asked.extra += [k for k in extra if k not in asked.extra]
        for number in numbers:
            asked.take(number, by_key.get(_key(number)))

    await asyncio.gather(*(ask_part(part, False) for part in parts))
    missing = asked.unanswered
    if missing and len(missing) < len(questions):
        # ask the unanswered questions again, alone; the gateway asks once more if any is
        # still without yes or no, and never caches that answer (so a resumed run asks again)
        again = question_parts(checklist, item, limits, missing)
        await asyncio.gather(*(ask_part(part, True) for part in again))
    return asked


async def _ask_each(
    checklist: Checklist, item: TextItem, llm: JsonLLM, settings: ScoringSettings,
    cancel: CancelToken | None,
) -> _Asked:
    questions = checklist.questions
    asked = _Asked(questions)
    values = _values(checklist, item)
    refused = too_long(checklist, item, await context.limits_for(llm), settings)
    if refused:  # refused before the run; said here too, without a call
        asked.failures.append((str(refused), "too_long"))
        return asked

    async def one(number: int, question: str) -> tuple[int, Any, StageError | None]:
        try:
            reply = await ask(
                llm, "question_scoring", SingleAnswer,
                {**values, "question": " ".join(question.split())},
                stage=STAGE, dimension=checklist.dimension, cancel=cancel,
                repeat=settings.repeat, check=_single_check, refuse_loops=False,
            )
        except StageError as exc:
            return number, None, exc
        return number, reply.answer, None

    results = await asyncio.gather(*(one(i, q) for i, q in enumerate(questions, 1)))
    for number, value, error in results:
        if error is None:
            asked.take(number, value)
        else:
            asked.answers[number - 1].raw = f"(no answer: {error.kind or 'failed'})"
            asked.failures.append((error.message, error.kind))
    return asked


def _tally(score: TextScore, asked: _Asked, settings: ScoringSettings) -> TextScore:
    n = len(asked.answers)
    score.answers = asked.answers
    score.yes = sum(1 for a in asked.answers if a.answer == "yes")
    score.answered = sum(1 for a in asked.answers if a.answer is not None)
    score.unanswered = asked.unanswered
    if asked.failures:
        kinds = Counter(kind for _message, kind in asked.failures if kind)
        score.failure_kind = kinds.most_common(1)[0][0] if kinds else ""
    notes: list[str] = []
    if asked.extra:
        notes.append("the reply also had keys that are not questions, ignored: "
                     + ", ".join(asked.extra[:5]) + (", ..." if len(asked.extra) > 5 else ""))
    if score.answered == 0:
        score.status = "failed"
        reason = asked.failures[0][0] if asked.failures else (
            "no question was answered yes or no")
        notes.insert(0, f"{reason.rstrip('.')}; there is no score")
    elif score.unanswered:
        score.status = "incomplete"
        notes.insert(0, (
            f"{len(score.unanswered)} of {count_of(n, 'question')} still unanswered after asking again "
            f"({_listed(score.unanswered)}), so there is no score; scoring again asks them again"))
        if asked.failures:
            notes.append(f"the model's last answer: {asked.failures[0][0].rstrip('.')}")
    else:
        score.status = "ok"
        count = legacy_count(asked.raw)
        score.legacy_score = checklist_score(count, n)
        if settings.counting == "legacy":
            score.score = score.legacy_score
            notes.append(f"legacy count as in the authors' code: “Yes” (capital Y) in {count} of "
                         f"{count_of(n, 'answer')}")
        else:
            score.score = checklist_score(score.yes, n)
    score.note = "; ".join(notes)
    if score.note:
        score.note = score.note[0].upper() + score.note[1:] + "."
    return score
