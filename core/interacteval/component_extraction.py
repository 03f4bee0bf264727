"""Stage 2.1: component extraction (paper section 3.4.1).

From the merged think-aloud attributes of one dimension, a model names at most five components
(themes that recur in the attributes), leaving out vague or overlapping ones. The result is a
plain list of names the user may edit (rename, delete, add) before attributes are clustered.

With the built-in small model (:mod:`core.interacteval.grounded`) the model does not write
names: for each note it chooses the words of that note that name what the note checks.

Notes that do not fit the model's context window in one prompt (with room for the reply) are
split into parts of consecutive notes (:func:`note_parts`). Each part gives its components;
when all parts together name more than ``max_components``, one more call chooses those that
recur among the parts' names (``component_merge``, each name with how many parts named it). On
the grounded path the parts' names are taken in the notes' order, as with one part.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.interacteval import _prompts
from core.interacteval._common import (
    ask,
    attribute_lines,
    dimension_values,
    each_part,
    exactly,
    fold,
    note_label,
    numbered,
    progress_or_silent,
    split_to_fit,
)
from core.interacteval.grounded import note_word_groups, uses_grounded_path
from core.interacteval.model import Attribute, Dimension, JsonLLM, StageError
from core.llm import context
from core.prompts import WholeNumber
from core.runs import CancelToken, Progress

__all__ = ["MAX_COMPONENTS", "extract_components", "grounded_parts", "note_parts"]

STAGE = "Component extraction"
#: The paper's limit: more components overlap and add noise.
MAX_COMPONENTS = 5
#: Longest component name a model with structured output may write (a name, not a sentence).
MAX_NAME_CHARS = 60


@cache
def _reply_schema(max_components: int) -> type[BaseModel]:
    class Components(BaseModel):
        components: list[str] = Field(min_length=1, max_length=max_components)

    def tighten(schema: dict[str, Any]) -> None:  # a component is a short name
        schema["properties"]["components"]["items"]["maxLength"] = MAX_NAME_CHARS

    return prompts.held_to(Components, tighten)


class NoteName(BaseModel):
    note: WholeNumber
    name: str = Field(min_length=1)


class NoteNames(BaseModel):
    """The small model's reply on the grounded path: per note, words chosen from it."""

    components: list[NoteName] = Field(min_length=1)


def note_names_schema(notes: Sequence[str]) -> type[NoteNames]:
    """:class:`NoteNames` held (for a model with structured output) to one entry per note, in
    order, each with its note's number fixed and a name chosen from that note's own word groups
    (:func:`core.interacteval.grounded.note_word_groups`)."""

    def tighten(schema: dict[str, Any]) -> None:
        exactly(schema, "components", [
            {"type": "object", "required": ["note", "name"], "additionalProperties": False,
             "properties": {"note": {"const": i}, "name": {"enum": note_word_groups(text)}}}
            for i, text in enumerate(notes, 1)])

    return prompts.held_to(NoteNames, tighten)


def _grounded_values(dimension: Dimension, notes: Sequence[str]) -> dict[str, Any]:
    return {**dimension_values(dimension), "attributes": numbered(notes), "n_notes": len(notes)}


def _grounded_reply_tokens(notes: Sequence[str]) -> int:
    """Tokens of the reply for ``notes`` on the grounded path: one entry per note, with the
    longest name the note allows."""
    return context.reply_tokens({"components": [
        {"note": i, "name": max(note_word_groups(text) or [""], key=len)}
        for i, text in enumerate(notes, 1)]})


def grounded_parts(dimension: Dimension, attributes: Sequence[Attribute],
                   limits: context.Limits | None) -> list[list[Attribute]]:
    """The notes of the grounded path in parts whose prompt and reply (one entry per note) fit
    the model (one part when they all fit)."""
    template = _prompts.load("component_names")
    return split_to_fit(
        attributes, lambda part: template.messages(**_grounded_values(
            dimension, [" ".join(a.text.split()) for a in part])),
        limits, stage=STAGE, dimension=dimension.name,
        reply_of=lambda part: _grounded_reply_tokens([" ".join(a.text.split()) for a in part]),
        what=lambda i: note_label(attributes, i), shorten=SHORTEN_NOTE)


async def _grounded_names(dimension: Dimension, part: Sequence[Attribute], llm: JsonLLM,
                          cancel: CancelToken | None) -> list[str]:
    notes = [" ".join(a.text.split()) for a in part]

    def check(reply: NoteNames) -> str:
        wrong = [f"note {e.note}" for e in reply.components
                 if not 1 <= e.note <= len(notes)
                 or fold(e.name) not in {fold(g) for g in note_word_groups(notes[e.note - 1])}]
        if wrong:
            return ("each name must be words chosen from its own note; not so for "
                    + ", ".join(wrong))
        return ""

    reply = await ask(
        llm, "component_names", note_names_schema(notes), _grounded_values(dimension, notes),
        stage=STAGE, dimension=dimension.name, cancel=cancel, check=check,
    )
    return [" ".join(entry.name.split()) for entry in reply.components]


async def _grounded_components(dimension: Dimension, parts: Sequence[Sequence[Attribute]],
                               llm: JsonLLM, max_components: int, progress: Progress,
                               cancel: CancelToken | None) -> list[str]:
    async def one(part: Sequence[Attribute]) -> list[str]:
        found = await _grounded_names(dimension, part, llm, cancel)
        progress.advance(1, ", ".join(found[:3]))
        return found

    names: list[str] = []
    for found in await each_part([one(part) for part in parts]):  # in the notes' order
        for name in found:
            if fold(name) not in {fold(n) for n in names}:
                names.append(name)
    return names[:max_components]


#: What to do with a note too long for the model on its own.
SHORTEN_NOTE = "shorten that note (one attribute per line)"
#: Tokens of a reply naming the components: at most this many per component.
NAME_TOKENS = 24


def _values(dimension: Dimension, attributes: Sequence[Attribute],
            max_components: int) -> dict[str, Any]:
    return {**dimension_values(dimension), "attributes": attribute_lines(attributes),
            "max_components": max_components}


def note_parts(dimension: Dimension, attributes: Sequence[Attribute],
               limits: context.Limits | None,
               max_components: int = MAX_COMPONENTS) -> list[list[Attribute]]:
    """The notes in parts whose component-extraction prompt fits the model (one part when
    they all fit)."""
    template = _prompts.load("component_extraction")
    return split_to_fit(
        attributes, lambda part: template.messages(**_values(dimension, part, max_components)),
        limits, stage=STAGE, dimension=dimension.name,
        reply_of=lambda _part: 8 + NAME_TOKENS * max_components,
        what=lambda i: note_label(attributes, i), shorten=SHORTEN_NOTE)


async def _components_of(dimension: Dimension, attributes: Sequence[Attribute], llm: JsonLLM,
                         max_components: int, cancel: CancelToken | None,
                         template: str = "component_extraction",
                         values: dict[str, Any] | None = None) -> list[str]:
    reply = await ask(
        llm, template, _reply_schema(max_components),
        values or _values(dimension, attributes, max_components),
        stage=STAGE, dimension=dimension.name, cancel=cancel,
    )
    components: list[str] = []
    for name in reply.components:  # type: ignore[attr-defined]
        cleaned = " ".join(str(name).split()).strip(" .;:-")
        if cleaned and fold(cleaned) not in {fold(c) for c in components}:
            components.append(cleaned)
    return components


async def _merged(dimension: Dimension, found: Sequence[Sequence[str]], llm: JsonLLM,
                  max_components: int, cancel: CancelToken | None) -> list[str]:
    """The components of all parts: their names together (repeats once), and when there are
    more than ``max_components``, the model chooses those that recur (the step again, over the
    parts' names, each with how many parts named it)."""
    names: list[str] = []
    counts: dict[str, int] = {}
    for part in found:
        for name in part:
            key = fold(name)
            if key not in counts:
                names.append(name)
            counts[key] = counts.get(key, 0) + 1
    if len(names) <= max_components:
        return names
    listed = "\n".join(f"- {name} (named for {counts[fold(name)]} of {len(found)} parts)"
                        for name in names)
    chosen = await _components_of(
        dimension, [], llm, max_components, cancel, template="component_merge",
        values={**dimension_values(dimension), "candidates": listed, "n_parts": len(found),
                "max_components": max_components})
    return chosen or names[:max_components]


async def extract_components(
    dimension: Dimension,
    attributes: Sequence[Attribute],
    llm: JsonLLM,
    *,
    max_components: int = MAX_COMPONENTS,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    grounded: bool | None = None,
) -> list[str]:
    """The components of ``dimension`` that recur in ``attributes`` (at most
    ``max_components``, duplicates and empty names removed). ``grounded`` (default: only for the
    built-in model, :func:`core.interacteval.grounded.uses_grounded_path`) names each note's
    component with words chosen from the note. Raises :class:`StageError`."""
    if not attributes:
        raise StageError(
            f"{STAGE} for {dimension.name} needs think-aloud attributes; there are none. Add "
            "notes or run the think-aloud step first.",
            stage=STAGE, dimension=dimension.name,
        )
    if not 1 <= max_components <= 20:
        raise ValueError("max_components must be between 1 and 20")
    progress = progress_or_silent(progress)
    limits = await context.limits_for(llm)
    if uses_grounded_path(llm, grounded):
        parts = grounded_parts(dimension, attributes, limits)
        progress.start(f"Finding the components of {dimension.name}", total=len(parts))
        return await _grounded_components(dimension, parts, llm, max_components, progress,
                                          cancel)
    parts = note_parts(dimension, attributes, limits, max_components)
    progress.start(f"Finding the components of {dimension.name}",
                   total=len(parts) + (len(parts) > 1))

    async def one(part: Sequence[Attribute]) -> list[str]:
        found = await _components_of(dimension, part, llm, max_components, cancel)
        if len(parts) > 1:
            progress.advance(1, ", ".join(found))
        return found

    found = await each_part([one(part) for part in parts])
    components = found[0] if len(parts) == 1 else await _merged(
        dimension, found, llm, max_components, cancel)
    if not components:
        raise StageError(
            f"{STAGE} for {dimension.name}: the model named no usable component. Run the step "
            "again, try another model, or type the components yourself.",
            stage=STAGE, dimension=dimension.name,
        )
    progress.advance(1, ", ".join(components))
    return components[:max_components]
