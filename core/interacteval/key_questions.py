"""Stage 2.3: key questions (paper section 3.4.3, first half).

For each component a model writes one Yes/No key question built from what the component's
attributes have in common, with "Yes" as the good answer. Key questions become the headings of
the checklist; they are not asked when scoring.

Entries are matched to components by name; a reply that leaves a component without a question
(a renamed component is not guessed from its position) is refused and asked again once, then the
step fails naming what could not be matched.

Components whose notes do not fit the model's context window in one prompt (with room for the
reply) are asked in parts of consecutive components, each with its own notes
(:func:`cluster_parts`); a component whose notes do not fit even alone is shown with as many of
its first notes as fit.

With the built-in small model (:mod:`core.interacteval.grounded`) no model is asked: a
component's key question is the fixed-form question of its first note, and a component without
notes gets none (it is left out of the later steps, and the checklist says so).
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
    one_per_component,
    progress_or_silent,
    quoted,
    split_to_fit,
    unmatched,
)
from core.interacteval.grounded import note_question, uses_grounded_path
from core.interacteval.model import (
    AttributeCluster,
    AttributeClusters,
    Dimension,
    JsonLLM,
    KeyQuestion,
    StageError,
)
from core.llm import Rejection, context
from core.runs import CancelToken, Progress

__all__ = ["cluster_parts", "format_clusters", "generate_key_questions"]

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


def _values(dimension: Dimension, part: Sequence[AttributeCluster]) -> dict[str, Any]:
    return {**dimension_values(dimension),
            "clusters": format_clusters(AttributeClusters(clusters=list(part))),
            "n_components": len(part)}


def _check_part(reply: BaseModel, names: Sequence[str]) -> Rejection | None:
    entries = reply.key_questions  # type: ignore[attr-defined]
    positions = align([e.component for e in entries], names)
    found = {i for i, e in zip(positions, entries) if i is not None and e.question.strip()}
    missing = [n for i, n in enumerate(names) if i not in found]
    if not missing:
        return None
    return Rejection(_missing_text(missing, unmatched([e.component for e in entries], positions))
                     + "; write each component's name exactly as listed")


#: Tokens of one key question in a reply (a component's name and one question).
QUESTION_TOKENS = 60


def cluster_parts(dimension: Dimension, clusters: Sequence[AttributeCluster],
                  limits: context.Limits | None) -> list[list[AttributeCluster]]:
    """The components (with their notes) in parts whose prompt and reply fit the model: one
    part whenever they all fit. A component whose notes do not fit even alone is shown to the
    model with as many of its first notes as fit (its key question sums them up; the
    component keeps all its notes)."""
    template = _prompts.load("key_questions")

    def prompt_of(part: Sequence[AttributeCluster]) -> Any:
        return template.messages(**_values(dimension, part))

    def reply_of(part: Sequence[AttributeCluster]) -> int:
        return 8 + QUESTION_TOKENS * len(part)

    shown = []
    for cluster in clusters:
        if limits is None or limits.fits(prompt_of([cluster]), reply_of([cluster])):
            shown.append(cluster)
            continue
        low, high = 0, len(cluster.attributes)  # the most first notes that fit
        while low < high:
            middle = (low + high + 1) // 2
            trial = cluster.model_copy(update={"attributes": cluster.attributes[:middle]})
            if limits.fits(prompt_of([trial]), reply_of([trial])):
                low = middle
            else:
                high = middle - 1
        shown.append(cluster.model_copy(update={"attributes": cluster.attributes[:low]}))
    return split_to_fit(shown, prompt_of, limits, stage=STAGE, dimension=dimension.name,
                        reply_of=reply_of,
                        what=lambda i: f"the component “{shown[i].component}”")


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

    parts = cluster_parts(dimension, clusters.clusters, await context.limits_for(llm))

    async def one(part: list[AttributeCluster]) -> list[KeyQuestionReply]:
        names = [c.component for c in part]

        def check_part(reply: BaseModel) -> Rejection | None:
            return check(reply) if len(parts) == 1 else _check_part(reply, names)

        reply = await ask(llm, "key_questions", _reply_schema(tuple(names)),
                          _values(dimension, part), stage=STAGE, dimension=dimension.name,
                          cancel=cancel, check=check_part)
        return list(reply.key_questions)  # type: ignore[attr-defined]

    entries = [e for found in await each_part([one(part) for part in parts]) for e in found]
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
