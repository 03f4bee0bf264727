"""Stage 2.5: question validation (paper section 3.4.4), giving the final checklist.

A model reviews all sub-questions: it merges questions that ask about nearly the same thing,
drops irrelevant ones and rewords problematic ones. Draft questions are numbered ("2.3" =
component 2, sub-question 3) and the model says which drafts each final question comes from, so
every final question keeps its component and its source attributes. A reference that is a
component's name instead of a draft number counts as that component. A reply none of whose
questions can be traced to a draft is refused and asked again once (then the step fails); a
single question that cannot be traced goes under "(no component)" with a remark.

:func:`checklist_from_sub_questions` turns the sub-questions into a checklist without this step
(the user may skip it, or validate by hand).

Sub-questions whose review prompt and reply do not fit the model's context window are reviewed
in parts of consecutive components (:func:`group_parts`), and the parts' checklists are put
together in the components' order (questions of different parts are not merged).

With the built-in small model (:mod:`core.interacteval.grounded`) the model writes nothing: for
each numbered question it only says keep or not, and the checklist says how it was built
(:data:`core.interacteval.grounded.GROUNDED_REMARK`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.interacteval import _prompts
from core.interacteval._common import (
    QUESTION_PATTERN,
    ask,
    dimension_values,
    each_part,
    fold,
    progress_or_silent,
    split_to_fit,
    unique_attributes,
)
from core.interacteval.grounded import (
    GROUNDED_NOTE,
    GROUNDED_REMARK,
    NO_NOTES,
    note_question,
    uses_grounded_path,
)
from core.interacteval.model import (
    Attribute,
    Checklist,
    ChecklistItem,
    Dimension,
    JsonLLM,
    StageError,
    SubQuestionGroup,
)
from core.llm import Rejection, context
from core.runs import CancelToken, Progress
from core.words import count

__all__ = ["checklist_from_sub_questions", "validate_questions"]

STAGE = "Question validation"
UNASSIGNED = "(no component)"


class ValidatedQuestion(BaseModel):
    question: str = Field(min_length=1)
    based_on: list[str] = Field(default_factory=list)


class ValidatedQuestions(BaseModel):
    questions: list[ValidatedQuestion] = Field(min_length=1)


def checklist_from_sub_questions(
    dimension: Dimension, groups: Sequence[SubQuestionGroup]
) -> Checklist:
    """The sub-questions as a checklist, unvalidated (one item per sub-question; a question
    built from one note on the grounded path carries that note only)."""
    items = [
        ChecklistItem(component=g.component, key_question=g.key_question, question=q,
                      source_attributes=_evidence(g, q))
        for g in groups
        for q in g.sub_questions
        if q.strip()
    ]
    checklist = Checklist(dimension=dimension.name, definition=dimension.definition, items=items)
    if any(g.note in (GROUNDED_NOTE, NO_NOTES) for g in groups):
        checklist.remarks.append(GROUNDED_REMARK)
    checklist.remarks += _without_notes(groups)
    return checklist


def _without_notes(groups: Sequence[SubQuestionGroup]) -> list[str]:
    """Remarks on the grounded path's components that got no question (they have no notes)."""
    return [f"The component “{g.component}” has no notes, so no question was built for it."
            for g in groups if g.note == NO_NOTES]


def _evidence(group: SubQuestionGroup, question: str) -> list[Attribute]:
    """The attributes a question of ``group`` comes from: on the grounded path, the note it
    quotes; otherwise all of the group's attributes."""
    if group.note == GROUNDED_NOTE:
        quoting = [a for a in group.attributes if note_question(a.text) == question]
        if quoting:
            return quoting
    return list(group.attributes)


class Decision(BaseModel):
    """The small model's reply on the grounded path, for one question: keep it or not."""

    keep: bool


async def _grounded_review(dimension: Dimension, groups: Sequence[SubQuestionGroup],
                           llm: JsonLLM, cancel: CancelToken | None) -> Checklist:
    drafts = _drafts(groups)
    kept: set[str] = set()
    for reference, (_gi, question) in drafts.items():  # one small decision per question
        reply = await ask(
            llm, "question_choice", Decision,
            {
                **dimension_values(dimension),
                "question": question,
            },
            stage=STAGE, dimension=dimension.name, cancel=cancel,
        )
        if reply.keep:
            kept.add(reference)
    checklist = Checklist(dimension=dimension.name, definition=dimension.definition,
                          remarks=[GROUNDED_REMARK])
    seen: set[str] = set()
    for reference, (gi, question) in drafts.items():  # in the drafts' order
        if reference not in kept or fold(question) in seen:
            continue
        seen.add(fold(question))
        group = groups[gi]
        checklist.items.append(ChecklistItem(
            component=group.component, key_question=group.key_question, question=question,
            source_attributes=_evidence(group, question)))
    if not checklist.items:
        raise StageError(
            f"{STAGE} for {dimension.name}: the model kept none of the questions. Run the step "
            "again, skip the review, or choose the questions yourself.",
            stage=STAGE, dimension=dimension.name, kind="rejected_output")
    for component in [g.component for g in groups
                      if g.component not in checklist.components]:
        checklist.remarks.append(
            f"No question of the component “{component}” was kept by the review.")
    return checklist


def _drafts(groups: Sequence[SubQuestionGroup]) -> dict[str, tuple[int, str]]:
    """'2.3' -> (group index, question text)."""
    return {
        f"{gi}.{qi}": (gi - 1, q)
        for gi, g in enumerate(groups, 1)
        for qi, q in enumerate(g.sub_questions, 1)
    }


def _format(groups: Sequence[SubQuestionGroup]) -> str:
    lines = []
    for gi, group in enumerate(groups, 1):
        for qi, question in enumerate(group.sub_questions, 1):
            lines.append(f"[{gi}.{qi}] ({' '.join(group.component.split())}) "
                         f"{' '.join(question.split())}")
    return "\n".join(lines)


def _reference(text: str) -> str:
    return str(text).strip().strip("[]()").strip().rstrip(".")


#: Most drafts one final question may be traced to in a model's reply (a question that merges
#: more is no longer one question).
MAX_SOURCES = 4


def _reply_schema(references: Sequence[str], components: int) -> type[ValidatedQuestions]:
    """:class:`ValidatedQuestions` held (for a model with structured output) to at most one final
    question per draft and at least one per component (the review keeps every component
    covered), each a Yes/No question based on drafts named by their numbers as listed."""

    def tighten(schema: dict[str, Any]) -> None:
        entry = schema["$defs"]["ValidatedQuestion"]
        entry["properties"]["question"]["pattern"] = QUESTION_PATTERN
        entry["properties"]["based_on"].update(
            items={"type": "string", "enum": list(references)}, minItems=1,
            maxItems=min(len(references), MAX_SOURCES))
        entry["required"] = ["question", "based_on"]
        schema["properties"]["questions"].update(
            minItems=max(1, min(components, len(references))), maxItems=max(1, len(references)))

    return prompts.held_to(ValidatedQuestions, tighten)


#: Tokens of one final question in a reply (the question and the drafts it comes from).
FINAL_TOKENS = 55


def group_parts(dimension: Dimension, groups: Sequence[SubQuestionGroup],
                limits: context.Limits | None) -> list[list[SubQuestionGroup]]:
    """The components' sub-questions in parts whose review prompt and reply fit the model: one
    part (the whole list reviewed at once) whenever they fit; otherwise consecutive
    components are reviewed together, so similar questions of one component are still
    merged."""
    template = _prompts.load("validation")
    return split_to_fit(
        list(groups), lambda part: template.messages(**dimension_values(dimension),
                                                     questions=_format(part)), limits,
        stage=STAGE, dimension=dimension.name,
        reply_of=lambda part: 8 + FINAL_TOKENS * sum(len(g.sub_questions) for g in part),
        what=lambda i: f"the sub-questions of “{groups[i].component}”")


async def validate_questions(
    dimension: Dimension,
    groups: Sequence[SubQuestionGroup],
    llm: JsonLLM,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    grounded: bool | None = None,
) -> Checklist:
    """The validated checklist. Each final question takes the component and key question of
    the first draft it is based on, and the attributes of all of them; a question traced to no
    draft goes under "(no component)" with a remark. Items are grouped by component in the
    components' order. ``grounded`` (default: only for the built-in model) lets the model only
    keep or drop each numbered question. Raises :class:`StageError`."""
    without_notes = _without_notes(groups)
    groups = [g for g in groups if any(q.strip() for q in g.sub_questions)]
    if not groups:
        raise StageError(f"{STAGE} for {dimension.name} needs sub-questions.",
                         stage=STAGE, dimension=dimension.name)
    progress = progress_or_silent(progress)
    progress.start(f"Reviewing the questions of {dimension.name}", total=1)
    if uses_grounded_path(llm, grounded):
        reviewed = await _grounded_review(dimension, groups, llm, cancel)
        reviewed.remarks += without_notes
        progress.advance(1, count(len(reviewed.items), "question"))
        return reviewed
    parts = group_parts(dimension, groups, await context.limits_for(llm))
    if len(parts) > 1:  # each part reviewed on its own; the checklists put together in order
        pieces = await each_part([validate_questions(dimension, part, llm, cancel=cancel,
                                                     grounded=False) for part in parts])
        checklist = Checklist(dimension=dimension.name, definition=dimension.definition)
        for part in pieces:
            checklist.items += part.items
            checklist.remarks += [r for r in part.remarks if r not in checklist.remarks]
        checklist.remarks += without_notes
        progress.advance(1, count(len(checklist.items), "question"))
        return checklist
    drafts = _drafts(groups)
    by_text = {fold(q): gi for gi, q in drafts.values()}
    by_component = {fold(g.component): gi for gi, g in enumerate(groups)}

    def sources_of(entry: ValidatedQuestion) -> list[int]:
        found = []
        for reference in map(_reference, entry.based_on):
            if reference in drafts:
                found.append(drafts[reference][0])
            elif fold(reference) in by_component:
                found.append(by_component[fold(reference)])
        if not found and fold(entry.question) in by_text:
            found = [by_text[fold(entry.question)]]
        return found

    def check(reply: ValidatedQuestions) -> Rejection | None:
        if not any(sources_of(entry) for entry in reply.questions):
            return Rejection(
                "none of the final questions names a draft question it comes from; give the "
                "numbers of the drafts, as written in the brackets, under based_on")
        return None

    reply = await ask(
        llm, "validation", _reply_schema(list(drafts), len(groups)),
        {
            **dimension_values(dimension),
            "questions": _format(groups),
        },
        stage=STAGE, dimension=dimension.name, cancel=cancel, check=check,
    )
    checklist = Checklist(dimension=dimension.name, definition=dimension.definition)
    placed: list[tuple[int, ChecklistItem]] = []
    seen: set[str] = set()
    for entry in reply.questions:
        question = " ".join(entry.question.split())
        if not question or fold(question) in seen:
            continue
        seen.add(fold(question))
        sources = sources_of(entry)
        if not sources:
            checklist.remarks.append(
                f"“{question}” could not be traced to a draft question, so it has no "
                "component. Move it under one in the checklist editor or delete it."
            )
            placed.append((len(groups), ChecklistItem(component=UNASSIGNED, question=question)))
            continue
        first = groups[sources[0]]
        attributes = unique_attributes([a for gi in dict.fromkeys(sources) for a in groups[gi].attributes])
        placed.append((sources[0], ChecklistItem(
            component=first.component, key_question=first.key_question, question=question,
            source_attributes=attributes,
        )))
    placed.sort(key=lambda pair: pair[0])  # stable: the model's order inside a component
    checklist.items = [item for _, item in placed]
    dropped = [g.component for gi, g in enumerate(groups) if gi not in {p for p, _ in placed}]
    for component in dropped:
        checklist.remarks.append(
            f"No question of the component “{component}” was kept by the review."
        )
    progress.advance(1, count(len(checklist.items), "question"))
    return checklist
