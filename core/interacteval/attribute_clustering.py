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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.prompts import WholeNumber
from core.interacteval._common import (
    align,
    ask,
    exactly,
    fold,
    numbered,
    one_per_component,
    progress_or_silent,
    quoted,
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
from core.llm import Rejection
from core.runs import CancelToken, Progress

__all__ = ["cluster_attributes"]

STAGE = "Attribute clustering"


class ClusterReply(BaseModel):
    component: str
    notes: list[WholeNumber] = Field(default_factory=list)


class Clusters(BaseModel):
    """The model's reply: note numbers (1-based) per component."""

    clusters: list[ClusterReply] = Field(min_length=1)


def clusters_schema(components: Sequence[str], count: int) -> type[Clusters]:
    """:class:`Clusters` held (for a model with structured output) to one cluster per listed
    component, in order (:func:`one_per_component`), and to note numbers 1 to ``count``; the reply is still checked in
    full, since not every server holds its model to the schema."""

    def tighten(schema: dict[str, Any]) -> None:
        cluster = schema["$defs"]["ClusterReply"]
        cluster["properties"]["notes"].update(
            items={"type": "integer", "enum": list(range(1, count + 1))},
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
                             cancel: CancelToken | None) -> AttributeClusters:
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

        reply = await ask(
            llm, "note_placement", placements_schema(components, others),
            {
                "dimension": dimension.name,
                "components": numbered(components),
                "attributes": "\n".join(f"{n}. {' '.join(attributes[n - 1].text.split())}"
                                        for n in others),
                "n_notes": len(others),
            },
            stage=STAGE, dimension=dimension.name, cancel=cancel, check=check,
        )
        placed: set[int] = set()
        for entry in reply.placements:  # by exact name: several notes may share a component
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
    progress.start(f"Grouping the attributes of {dimension.name}", total=1)
    if uses_grounded_path(llm, grounded):
        grouped = await _grounded_clusters(dimension, components, attributes, llm, cancel)
        count = len(attributes) - len(grouped.left_out)
        if not count:
            raise StageError(
                f"{STAGE} for {dimension.name}: the model placed no attribute under any "
                "component. Run the step again, try another model, or group them yourself.",
                stage=STAGE, dimension=dimension.name, kind="rejected_output",
            )
        progress.advance(1, f"{count} of {len(attributes)} attributes placed")
        return grouped

    def check(reply: Clusters) -> Rejection | None:
        names = [c.component for c in reply.clusters]
        if all(index is None for index in align(names, components)):
            return Rejection(
                f"the reply names none of the listed components (it named {quoted(names)}); "
                f"use the names exactly as listed: {quoted(components)}")
        if not any(1 <= n <= len(attributes) for c in reply.clusters for n in c.notes):
            return Rejection(f"the reply puts no note under any component; give the numbers "
                             f"of the notes (1 to {len(attributes)}) under each component")
        return None

    reply = await ask(
        llm, "attribute_clustering", clusters_schema(components, len(attributes)),
        {
            "dimension": dimension.name,
            "components": numbered(components),
            "n_components": len(components),
            "attributes": numbered([a.text for a in attributes]),
        },
        stage=STAGE, dimension=dimension.name, cancel=cancel, check=check,
    )
    result = AttributeClusters(clusters=[AttributeCluster(component=c) for c in components])
    placed: set[int] = set()
    positions = align([c.component for c in reply.clusters], components)
    for entry, index in zip(reply.clusters, positions):
        if index is None:
            notes = ", ".join(str(n) for n in entry.notes) or "none"
            result.remarks.append(
                f"The model named a component that is not in the list ({quoted([entry.component])}"
                f"), so its notes (numbers {notes}) were not placed: they are among the "
                "left-out attributes. Put them under a component by hand, or run the step again."
            )
            continue
        for number in entry.notes:
            if not 1 <= number <= len(attributes):
                result.remarks.append(
                    f"The model referred to note {number}, but there are only {len(attributes)} "
                    "notes; it was ignored."
                )
                continue
            if number - 1 in placed:
                continue
            placed.add(number - 1)
            result.clusters[index].attributes.append(attributes[number - 1])
    result.left_out = [a for i, a in enumerate(attributes) if i not in placed]
    if not placed:
        raise StageError(
            f"{STAGE} for {dimension.name}: the model placed no attribute under any component. "
            "Run the step again, try another model, or group them yourself.",
            stage=STAGE, dimension=dimension.name,
        )
    progress.advance(1, f"{len(placed)} of {len(attributes)} attributes placed")
    return result
