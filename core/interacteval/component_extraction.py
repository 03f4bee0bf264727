"""Stage 2.1: component extraction (paper section 3.4.1).

From the merged think-aloud attributes of one dimension, a model names at most five components
(themes that recur in the attributes), leaving out vague or overlapping ones. The result is a
plain list of names the user may edit (rename, delete, add) before attributes are clustered.

With the built-in small model (:mod:`core.interacteval.grounded`) the model does not write
names: for each note it chooses the words of that note that name what the note checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.prompts import WholeNumber
from core.interacteval._common import (
    ask,
    attribute_lines,
    dimension_values,
    exactly,
    fold,
    numbered,
    progress_or_silent,
)
from core.interacteval.grounded import note_word_groups, uses_grounded_path
from core.interacteval.model import Attribute, Dimension, JsonLLM, StageError
from core.runs import CancelToken, Progress

__all__ = ["MAX_COMPONENTS", "extract_components"]

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


async def _grounded_components(dimension: Dimension, attributes: Sequence[Attribute],
                               llm: JsonLLM, max_components: int,
                               cancel: CancelToken | None) -> list[str]:
    notes = [" ".join(a.text.split()) for a in attributes]

    def check(reply: NoteNames) -> str:
        wrong = [f"note {e.note}" for e in reply.components
                 if not 1 <= e.note <= len(notes)
                 or fold(e.name) not in {fold(g) for g in note_word_groups(notes[e.note - 1])}]
        if wrong:
            return ("each name must be words chosen from its own note; not so for "
                    + ", ".join(wrong))
        return ""

    reply = await ask(
        llm, "component_names", note_names_schema(notes),
        {
            **dimension_values(dimension),
            "attributes": numbered(notes),
            "n_notes": len(notes),
        },
        stage=STAGE, dimension=dimension.name, cancel=cancel, check=check,
    )
    names: list[str] = []
    for entry in reply.components:
        name = " ".join(entry.name.split())
        if fold(name) not in {fold(n) for n in names}:
            names.append(name)
    return names[:max_components]


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
    progress.start(f"Finding the components of {dimension.name}", total=1)
    if uses_grounded_path(llm, grounded):
        names = await _grounded_components(dimension, attributes, llm, max_components, cancel)
        progress.advance(1, ", ".join(names))
        return names
    reply = await ask(
        llm, "component_extraction", _reply_schema(max_components),
        {
            **dimension_values(dimension),
            "attributes": attribute_lines(attributes),
            "max_components": max_components,
        },
        stage=STAGE, dimension=dimension.name, cancel=cancel,
    )
    components: list[str] = []
    for name in reply.components:  # type: ignore[attr-defined]
        cleaned = " ".join(str(name).split()).strip(" .;:-")
        if cleaned and fold(cleaned) not in {fold(c) for c in components}:
            components.append(cleaned)
    if not components:
        raise StageError(
            f"{STAGE} for {dimension.name}: the model named no usable component. Run the step "
            "again, try another model, or type the components yourself.",
            stage=STAGE, dimension=dimension.name,
        )
    progress.advance(1, ", ".join(components))
    return components[:max_components]
