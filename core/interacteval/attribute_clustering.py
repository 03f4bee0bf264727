"""Stage 2.2: attribute clustering (paper section 3.4.2).

A model puts each attribute under the component it fits best and may leave out attributes that
are redundant or confusing. Attributes are numbered in the prompt and the model answers with
numbers, so every attribute keeps its source exactly. Left-out attributes are kept in
``AttributeClusters.left_out`` for the user to see and put back.

Components are matched by name (:func:`core.interacteval._common.align`). A reply that names
none of the components, or places no note, is refused and asked again once; an entry whose
component was renamed is not guessed from its position: its notes stay left out and a remark
names it.

With the built-in small model (:mod:`core.interacteval.grounded`) a note goes under the
component named with its own words (the first such component); the model puts only the other
notes, choosing each one's component from the listed names.

Notes that do not fit the model's context window in one prompt (with room for the reply) are
sorted in parts of consecutive notes, each part under the same components and with the notes'
own numbers; the parts' placements are put together (each note is placed by one part only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.interacteval import _prompts
from core.interacteval._common import (
    align,
    ask,
    each_part,
    exactly,
    fold,
    note_label,
    numbered,
    one_per_component,
    progress_or_silent,
    quoted,
    split_to_fit,
)
from core.interacteval.grounded import in_note, uses_grounded_path
from core.interacteval.model import (
    Attribute,
    AttributeCluster,
    AttributeClusters,
    Dimension,
    JsonLLM,
    StageError,
)
from core.llm import Rejection, context
from core.prompts import WholeNumber
from core.runs import CancelToken, Progress

__all__ = ["cluster_attributes"]

STAGE = "Attribute clustering"


class ClusterReply(BaseModel):
    component: str
    notes: list[WholeNumber] = Field(default_factory=list)


class Clusters(BaseModel):
    """The model's reply: note numbers (1-based) per component."""

    clusters: list[ClusterReply] = Field(min_length=1)


def clusters_schema(components: Sequence[str], count: int, first: int = 1) -> type[Clusters]:
    """:class:`Clusters` held (for a model with structured output) to one cluster per listed
    component, in order (:func:`one_per_component`), and to note numbers ``first`` to
    ``first + count - 1``; the reply is still checked in full, since not every server holds its
    model to the schema."""

    def tighten(schema: dict[str, Any]) -> None:
        cluster = schema["$defs"]["ClusterReply"]
        cluster["properties"]["notes"].update(
            items={"type": "integer", "enum": list(range(first, first + count))},
            minItems=1, maxItems=count)
        cluster["required"] = ["component", "notes"]
        one_per_component(schema, "clusters", "ClusterReply", components)

    return prompts.held_to(Clusters, tighten)


class Placement(BaseModel):
    note: WholeNumber
    component: str


class Placements(BaseModel):
    """The small model's reply on the grounded path: one component per note, chosen by name."""

    placements: list[Placement] = Field(min_length=1)


def placements_schema(components: Sequence[str], notes: Sequence[int]) -> type[Placements]:
    """:class:`Placements` held (for a model with structured output) to one entry per listed
    note, in order, with its number fixed and a component chosen from ``components``."""

    def tighten(schema: dict[str, Any]) -> None:
        exactly(schema, "placements", [
            {"type": "object", "required": ["note", "component"], "additionalProperties": False,
             "properties": {"note": {"const": n}, "component": {"enum": list(components)}}}
            for n in notes])

    return prompts.held_to(Placements, tighten)


async def _grounded_clusters(dimension: Dimension, components: list[str],
                             attributes: Sequence[Attribute], llm: JsonLLM,
                             cancel: CancelToken | None,
                             limits: context.Limits | None) -> AttributeClusters:
    result = AttributeClusters(clusters=[AttributeCluster(component=c) for c in components])
    others: list[int] = []  # 1-based numbers of notes that hold no component's name
    for number, attribute in enumerate(attributes, 1):
        index = next((i for i, c in enumerate(components) if in_note(c, attribute.text)), None)
        if index is None:
            others.append(number)
        else:
            result.clusters[index].attributes.append(attribute)
    if others:
        by_name = {fold(c): i for i, c in reversed(list(enumerate(components)))}

        def check(reply: Placements) -> str:
            names = [p.component for p in reply.placements]
            if all(fold(n) not in by_name for n in names):
                return (f"the reply names none of the listed components (it named "
                        f"{quoted(names)}); use the names exactly as listed")
            return ""

        def values(numbers: Sequence[int]) -> dict[str, Any]:
            return {
                "dimension": dimension.name,
                "components": numbered(components),
                "attributes": "\n".join(f"{n}. {' '.join(attributes[n - 1].text.split())}"
                                        for n in numbers),
                "n_notes": len(numbers),
            }

        longest = max(components, key=len)
        template = _prompts.load("note_placement")
        parts = split_to_fit(
            others, lambda part: template.messages(**values(part)), limits, stage=STAGE,
            dimension=dimension.name, what=lambda i: note_label(attributes, others[i] - 1),
            reply_of=lambda part: context.reply_tokens({"placements": [
                {"note": n, "component": longest} for n in part]}),
            shorten="shorten that note (one attribute per line)")

        async def place(part: Sequence[int]) -> Placements:
            return await ask(llm, "note_placement", placements_schema(components, part),
                             values(part), stage=STAGE, dimension=dimension.name,
                             cancel=cancel, check=check)

        placed: set[int] = set()
        for reply in await each_part([place(part) for part in parts]):
            for entry in reply.placements:  # by exact name: several notes may share one
                index = by_name.get(fold(entry.component))
                if index is None or entry.note not in others or entry.note in placed:
                    continue
                placed.add(entry.note)
                result.clusters[index].attributes.append(attributes[entry.note - 1])
        result.left_out = [attributes[n - 1] for n in others if n not in placed]
        if result.left_out:
            result.remarks.append(
                f"The model put {len(result.left_out)} of the notes under no listed component; "
                "they are among the left-out attributes. Put them under a component by hand.")
    # keep every note's order as given within each component
    order = {id(a): i for i, a in enumerate(attributes)}
    for cluster in result.clusters:
        cluster.attributes.sort(key=lambda a: order[id(a)])
    return result


async def cluster_attributes(
    dimension: Dimension,
    components: Sequence[str],
    attributes: Sequence[Attribute],
    llm: JsonLLM,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    grounded: bool | None = None,
) -> AttributeClusters:
    """Group ``attributes`` under ``components`` (one cluster per component, in order, possibly
    empty). An attribute the model places twice stays under the first component. ``grounded``
    (default: only for the built-in model) places a note under the component named with its own
    words and asks the model only about the others. Raises :class:`StageError`."""
    components = [c for c in (" ".join(str(c).split()) for c in components) if c]
    if not components:
        raise StageError(f"{STAGE} for {dimension.name} needs at least one component.",
                         stage=STAGE, dimension=dimension.name)
    if not attributes:
        raise StageError(f"{STAGE} for {dimension.name} needs think-aloud attributes.",
                         stage=STAGE, dimension=dimension.name)
    progress = progress_or_silent(progress)
    limits = await context.limits_for(llm)
    if uses_grounded_path(llm, grounded):
        progress.start(f"Grouping the attributes of {dimension.name}", total=1)
        grouped = await _grounded_clusters(dimension, components, attributes, llm, cancel,
                                           limits)
        count = len(attributes) - len(grouped.left_out)
        if not count:
            raise StageError(
                f"{STAGE} for {dimension.name}: the model placed no attribute under any "
                "component. Run the step again, try another model, or group them yourself.",
                stage=STAGE, dimension=dimension.name, kind="rejected_output",
            )
        progress.advance(1, f"{count} of {len(attributes)} attributes placed")
        return grouped

    numbers = list(range(1, len(attributes) + 1))
    template = _prompts.load("attribute_clustering")
    parts = split_to_fit(
        numbers, lambda part: template.messages(**_values(dimension, components, attributes,
                                                          part)),
        limits, stage=STAGE, dimension=dimension.name,
        reply_of=lambda part: context.reply_tokens({"clusters": [
            {"component": c, "notes": list(part) if i == 0 else []}
            for i, c in enumerate(components)]}),
        what=lambda i: note_label(attributes, i),
        shorten="shorten that note (one attribute per line)")
    progress.start(f"Grouping the attributes of {dimension.name}", total=len(parts))

    async def one(part: Sequence[int]) -> Clusters:
        reply = await _cluster_part(dimension, components, attributes, part, llm, cancel)
        if len(parts) > 1:
            progress.advance(1, f"notes {part[0]} to {part[-1]} sorted")
        return reply

    replies = await each_part([one(part) for part in parts])
    result = AttributeClusters(clusters=[AttributeCluster(component=c) for c in components])
    placed: set[int] = set()
    for part, reply in zip(parts, replies):
        positions = align([c.component for c in reply.clusters], components)
        for entry, index in zip(reply.clusters, positions):
            if index is None:
                notes = ", ".join(str(n) for n in entry.notes) or "none"
                result.remarks.append(
                    f"The model named a component that is not in the list "
                    f"({quoted([entry.component])}), so its notes (numbers {notes}) were not "
                    "placed: they are among the left-out attributes. Put them under a "
                    "component by hand, or run the step again."
                )
                continue
            for number in entry.notes:
                if number not in part:
                    result.remarks.append(
                        f"The model referred to note {number}, but there are only "
                        f"{len(attributes)} notes; it was ignored." if len(parts) == 1 else
                        f"The model referred to note {number}, but the notes it was given were "
                        f"numbered {part[0]} to {part[-1]}; it was ignored."
                    )
                    continue
                if number - 1 in placed:
                    continue
                placed.add(number - 1)
                result.clusters[index].attributes.append(attributes[number - 1])
    if len(parts) > 1:  # in the notes' order, whichever part placed them
        order = {id(a): i for i, a in enumerate(attributes)}
        for cluster in result.clusters:
            cluster.attributes.sort(key=lambda a: order[id(a)])
    result.left_out = [a for i, a in enumerate(attributes) if i not in placed]
    if not placed:
        raise StageError(
            f"{STAGE} for {dimension.name}: the model placed no attribute under any component. "
            "Run the step again, try another model, or group them yourself.",
            stage=STAGE, dimension=dimension.name,
        )
    progress.advance(1, f"{len(placed)} of {len(attributes)} attributes placed")
    return result


def clusters_part_prompts(dimension: Dimension, attributes: Sequence[Attribute],
                          limits: context.Limits | None, *, grounded: bool = False,
                          components: Sequence[str] = ()) -> list[Any]:
    """The prompts sorting ``attributes`` under ``components`` (five stand-ins when not known
    yet), one per part that fits the model: for the estimate before a run."""
    components = list(components) or [f"(component {i})" for i in range(1, 6)]
    numbers = list(range(1, len(attributes) + 1))
    if grounded:
        template = _prompts.load("note_placement")

        def prompt_of(part: Sequence[int]) -> Any:
            return template.messages(
                dimension=dimension.name, components=numbered(components),
                attributes="\n".join(f"{n}. {' '.join(attributes[n - 1].text.split())}"
                                     for n in part), n_notes=len(part))

        reply_of = (lambda part: context.reply_tokens({"placements": [
            {"note": n, "component": max(components, key=len)} for n in part]}))
    else:
        template = _prompts.load("attribute_clustering")

        def prompt_of(part: Sequence[int]) -> Any:
            return template.messages(**_values(dimension, components, attributes, part))

        reply_of = (lambda part: context.reply_tokens({"clusters": [
            {"component": c, "notes": list(part) if i == 0 else []}
            for i, c in enumerate(components)]}))
    parts = split_to_fit(numbers, prompt_of, limits, stage=STAGE, dimension=dimension.name,
                         reply_of=reply_of, what=lambda i: note_label(attributes, i))
    return [prompt_of(part) for part in parts]


def _values(dimension: Dimension, components: Sequence[str], attributes: Sequence[Attribute],
            numbers: Sequence[int]) -> dict[str, Any]:
    return {
        "dimension": dimension.name,
        "components": numbered(components),
        "n_components": len(components),
        "attributes": "\n".join(f"{n}. {' '.join(attributes[n - 1].text.split())}"
                                for n in numbers),
    }


async def _cluster_part(dimension: Dimension, components: list[str],
                        attributes: Sequence[Attribute], numbers: Sequence[int], llm: JsonLLM,
                        cancel: CancelToken | None) -> Clusters:
    """One call sorting the notes numbered ``numbers`` (consecutive) under ``components``."""

    def check(reply: Clusters) -> Rejection | None:
        names = [c.component for c in reply.clusters]
        if all(index is None for index in align(names, components)):
            return Rejection(
                f"the reply names none of the listed components (it named {quoted(names)}); "
                f"use the names exactly as listed: {quoted(components)}")
        if not any(n in numbers for c in reply.clusters for n in c.notes):
            return Rejection(f"the reply puts no note under any component; give the numbers "
                             f"of the notes ({numbers[0]} to {numbers[-1]}) under each "
                             "component")
        return None

    return await ask(
        llm, "attribute_clustering", clusters_schema(components, len(numbers), numbers[0]),
        _values(dimension, components, attributes, numbers),
        stage=STAGE, dimension=dimension.name, cancel=cancel, check=check,
    )
