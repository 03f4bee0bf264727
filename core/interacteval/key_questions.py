"""Stage 2.3: key questions (paper section 3.4.3, first half).

For each component a model writes one Yes/No key question built from what the component's
attributes have in common, with "Yes" as the good answer. Key questions become the headings of
the checklist; they are not asked when scoring.

Entries are matched to components by name; a reply that leaves a component without a question
(a renamed component is not guessed from its position) is refused and asked again once, then the
step fails naming what could not be matched.

With the built-in small model (:mod:`core.interacteval.grounded`) no model is asked: a
component's key question is the fixed-form question of its first note, and a component without
notes gets none (it is left out of the later steps, and the checklist says so).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.interacteval._common import (
    QUESTION_PATTERN,
    align,
    ask,
    dimension_values,
    one_per_component,
    progress_or_silent,
    quoted,
    unmatched,
)
from core.interacteval.grounded import note_question, uses_grounded_path
from core.interacteval.model import AttributeClusters, Dimension, JsonLLM, KeyQuestion, StageError
from core.llm import Rejection
from core.runs import CancelToken, Progress

__all__ = ["format_clusters", "generate_key_questions"]

STAGE = "Key questions"


class KeyQuestionReply(BaseModel):
    component: str
    question: str = Field(min_length=1)


@cache
def _reply_schema(components: tuple[str, ...]) -> type[BaseModel]:
    """One key question per component; for a model with structured output, held to the
    components in order, names as listed (:func:`one_per_component`), and to one question
    (:data:`QUESTION_PATTERN`)."""
    n = len(components)

    class KeyQuestions(BaseModel):
        key_questions: list[KeyQuestionReply] = Field(min_length=n, max_length=n)

    def tighten(schema: dict[str, Any]) -> None:
        entry = schema["$defs"]["KeyQuestionReply"]["properties"]
        entry["question"].update(pattern=QUESTION_PATTERN)
        one_per_component(schema, "key_questions", "KeyQuestionReply", components)

    return prompts.held_to(KeyQuestions, tighten)


def _missing_text(missing: list[str], unknown: list[str]) -> str:
    text = f"the model gave no key question for {quoted(missing)}"
    if unknown:
        text += (f" (it wrote {'a question' if len(unknown) == 1 else 'questions'} under "
                 f"{quoted(unknown)}, which {'is' if len(unknown) == 1 else 'are'} not among "
                 "the components)")
    return text


def format_clusters(clusters: AttributeClusters) -> str:
    blocks = []
    for i, cluster in enumerate(clusters.clusters, 1):
        lines = [f"{i}. {' '.join(cluster.component.split())}"]
        lines += [f"   - {' '.join(a.text.split())}" for a in cluster.attributes]
        if not cluster.attributes:
            lines.append("   (no notes: use the component's name and the definition)")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


async def generate_key_questions(
    dimension: Dimension,
    clusters: AttributeClusters,
    llm: JsonLLM,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    grounded: bool | None = None,
) -> list[KeyQuestion]:
    """One key question per cluster, in the clusters' order, each carrying its cluster's
    attributes. ``grounded`` (default: only for the built-in model) writes no question with the
    model: each key question quotes the component's first note (none without notes). Raises
    :class:`StageError`."""
    components = [c.component for c in clusters.clusters]
    if not components:
        raise StageError(f"{STAGE} for {dimension.name} needs at least one component.",
                         stage=STAGE, dimension=dimension.name)
    progress = progress_or_silent(progress)
    progress.start(f"Writing key questions for {dimension.name}", total=1)
    if uses_grounded_path(llm, grounded):
        if not any(c.attributes for c in clusters.clusters):
            raise StageError(
                f"{STAGE} for {dimension.name}: no component has notes, so no question can be "
                "built from them. Group the notes under the components first.",
                stage=STAGE, dimension=dimension.name)
        progress.advance(1)
        return [KeyQuestion(component=c.component, attributes=list(c.attributes),
                            question=note_question(c.attributes[0].text) if c.attributes else "")
                for c in clusters.clusters]

    def missing_in(entries: list[KeyQuestionReply]) -> tuple[list[str], list[str]]:
        names = [e.component for e in entries]
        positions = align(names, components)
        found = {i for i, e in zip(positions, entries) if i is not None and e.question.strip()}
        return ([c for i, c in enumerate(components) if i not in found],
                unmatched(names, positions))

    def check(reply: BaseModel) -> Rejection | None:
        missing, unknown = missing_in(reply.key_questions)  # type: ignore[attr-defined]
        if not missing:
            return None
        return Rejection(_missing_text(missing, unknown)
                         + "; write each component's name exactly as listed")

    reply = await ask(
        llm, "key_questions", _reply_schema(tuple(components)),
        {
            **dimension_values(dimension),
            "clusters": format_clusters(clusters),
            "n_components": len(components),
        },
        stage=STAGE, dimension=dimension.name, cancel=cancel, check=check,
    )
    entries = reply.key_questions  # type: ignore[attr-defined]
    questions: list[str | None] = [None] * len(components)
    for entry, index in zip(entries, align([e.component for e in entries], components)):
        if index is not None and questions[index] is None:
            questions[index] = " ".join(entry.question.split())
    missing, unknown = missing_in(entries)
    if missing:  # a model object that skipped the check (tests' fakes): same plain failure
        raise StageError(
            f"{STAGE} for {dimension.name}: {_missing_text(missing, unknown)}. Run the step "
            "again or write those questions yourself.",
            stage=STAGE, dimension=dimension.name, kind="rejected_output",
        )
    progress.advance(1)
    return [
        KeyQuestion(component=c.component, question=q or "", attributes=list(c.attributes))
        for c, q in zip(clusters.clusters, questions)
    ]
