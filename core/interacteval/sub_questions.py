"""Stage 2.4: sub-questions (paper section 3.4.3, second half).

Each key question is broken into several precise Yes/No sub-questions: "Yes" is the good
answer, little room for personal judgement, little overlap, and flaws asked about as "does the
text avoid ...". The sub-questions (after validation) are what the checklist asks.

Entries are matched to key questions by component name. A reply that names none of the
components is refused and asked again once; an entry under a renamed component is not guessed
from its position: the component keeps its key question as its only sub-question, and its note
names what the model wrote instead.

Key questions whose prompt and reply (up to five sub-questions each) do not fit the model's
context window are asked in parts of consecutive components (:func:`key_question_parts`), and
the parts' groups are put together in the components' order.

With the built-in small model (:mod:`core.interacteval.grounded`) no model is asked: each note
of a component gives one sub-question in a fixed form that quotes it, and the group's note says
so.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.interacteval import _prompts
from core.interacteval._common import (
    QUESTION_PATTERN,
    align,
    ask,
    dimension_values,
    each_part,
    fold,
    one_per_component,
    progress_or_silent,
    quoted,
    split_to_fit,
    unmatched,
)
from core.interacteval.grounded import (
    GROUNDED_NOTE,
    NO_NOTES,
    note_question,
    uses_grounded_path,
)
from core.interacteval.model import Dimension, JsonLLM, KeyQuestion, StageError, SubQuestionGroup
from core.llm import Rejection, context
from core.runs import CancelToken, Progress

__all__ = ["generate_sub_questions"]

STAGE = "Sub-questions"


class SubQuestionReply(BaseModel):
    component: str
    sub_questions: list[str] = Field(default_factory=list)


@cache
def _reply_schema(components: tuple[str, ...]) -> type[BaseModel]:
    """One group per key question; for a model with structured output, held to the components'
    in order, names as listed (:func:`one_per_component`), and to two to five short sub-questions each (as the prompt asks)."""
    n = len(components)

    class SubQuestions(BaseModel):
        groups: list[SubQuestionReply] = Field(min_length=n, max_length=n)

    def tighten(schema: dict[str, Any]) -> None:
        entry = schema["$defs"]["SubQuestionReply"]
        entry["properties"]["sub_questions"].update(
            items={"type": "string", "pattern": QUESTION_PATTERN},
            minItems=2, maxItems=5)
        entry["required"] = ["component", "sub_questions"]
        one_per_component(schema, "groups", "SubQuestionReply", components)

    return prompts.held_to(SubQuestions, tighten)


def _format(key_questions: Sequence[KeyQuestion]) -> str:
    return "\n".join(
        f"{i}. Component: {' '.join(k.component.split())}\n"
        f"   Key question: {' '.join(k.question.split())}"
        for i, k in enumerate(key_questions, 1)
    )


#: Tokens of one component's sub-questions in a reply (its name and up to five questions).
GROUP_TOKENS = 160


def key_question_parts(dimension: Dimension, key_questions: Sequence[KeyQuestion],
                       limits: context.Limits | None) -> list[list[KeyQuestion]]:
    """The key questions in parts whose prompt and reply (up to five sub-questions each) fit
    the model: one part whenever they all fit."""
    template = _prompts.load("sub_questions")
    return split_to_fit(
        list(key_questions), lambda part: template.messages(**_values(dimension, part)), limits,
        stage=STAGE, dimension=dimension.name,
        reply_of=lambda part: 8 + GROUP_TOKENS * len(part),
        what=lambda i: f"the key question of “{key_questions[i].component}”")


def _values(dimension: Dimension, key_questions: Sequence[KeyQuestion]) -> dict[str, Any]:
    return {**dimension_values(dimension), "key_questions": _format(key_questions),
            "n_components": len(key_questions)}


async def generate_sub_questions(
    dimension: Dimension,
    key_questions: Sequence[KeyQuestion],
    llm: JsonLLM,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    grounded: bool | None = None,
) -> list[SubQuestionGroup]:
    """Sub-questions under each key question, in order (exact repeats removed). A key question
    for which the model gave no sub-question keeps the key question itself as its only
    sub-question, so no component silently disappears. ``grounded`` (default: only for the
    built-in model) asks no model: one fixed-form question per note of the component (a
    component without notes gets none, and its note says so). Raises :class:`StageError`."""
    given = list(key_questions)
    key_questions = [k for k in key_questions if k.question.strip()]
    if not key_questions:
        raise StageError(f"{STAGE} for {dimension.name} needs at least one key question.",
                         stage=STAGE, dimension=dimension.name)
    progress = progress_or_silent(progress)
    progress.start(f"Writing sub-questions for {dimension.name}", total=1)
    if uses_grounded_path(llm, grounded):
        built = []
        for key in given:
            questions = list(dict.fromkeys(note_question(a.text) for a in key.attributes))
            built.append(SubQuestionGroup(
                component=key.component, key_question=key.question, sub_questions=questions,
                attributes=list(key.attributes),
                note=GROUNDED_NOTE if questions else NO_NOTES))
        progress.advance(1, f"{sum(len(g.sub_questions) for g in built)} sub-questions")
        return built
    parts = key_question_parts(dimension, key_questions, await context.limits_for(llm))
    if len(parts) > 1:  # each part as a step of its own, the groups in the components' order
        progress.start(f"Writing sub-questions for {dimension.name}", total=len(parts))
        per_part = await each_part([generate_sub_questions(
            dimension, part, llm, cancel=cancel, grounded=False) for part in parts])
        built = [group for groups in per_part for group in groups]
        progress.advance(len(parts), f"{sum(len(g.sub_questions) for g in built)} sub-questions")
        return built
    components = [k.component for k in key_questions]

    def check(reply: BaseModel) -> Rejection | None:
        names = [e.component for e in reply.groups]  # type: ignore[attr-defined]
        if all(index is None for index in align(names, components)):
            return Rejection(
                f"the reply names none of the listed components (it named {quoted(names)}); "
                f"use the names exactly as listed: {quoted(components)}")
        return None

    reply = await ask(
        llm, "sub_questions", _reply_schema(tuple(components)),
        _values(dimension, key_questions),
        stage=STAGE, dimension=dimension.name, cancel=cancel, check=check,
    )
    entries = reply.groups  # type: ignore[attr-defined]
    found: list[list[str]] = [[] for _ in key_questions]
    positions = align([e.component for e in entries], components)
    unknown = unmatched([e.component for e in entries], positions)
    for entry, index in zip(entries, positions):
        if index is None:
            continue
        for text in entry.sub_questions:
            cleaned = " ".join(str(text).split())
            if cleaned and fold(cleaned) not in {fold(q) for q in found[index]}:
                found[index].append(cleaned)
    groups = []
    for key, subs in zip(key_questions, found):
        groups.append(
            SubQuestionGroup(
                component=key.component,
                key_question=key.question,
                sub_questions=subs or [key.question],
                attributes=list(key.attributes),
                note="" if subs else (
                    "The model gave no sub-question here, so the key question is used as the "
                    "only question. Edit it or add sub-questions."
                    + (f" (The model's reply also had sub-questions under {quoted(unknown)}, "
                       "which is not one of the components, so they were not used.)"
                       if unknown else "")
                ),
            )
        )
    progress.advance(1, f"{sum(len(g.sub_questions) for g in groups)} sub-questions")
    return groups
