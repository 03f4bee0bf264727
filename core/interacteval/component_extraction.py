"""Stage 2.1: component extraction (paper section 3.4.1).

From the merged think-aloud attributes of one dimension, a model names at most five components
(themes that recur in the attributes), leaving out vague or overlapping ones. The result is a
plain list of names the user may edit (rename, delete, add) before attributes are clustered.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.interacteval._common import ask, attribute_lines, fold, progress_or_silent
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


async def extract_components(
    dimension: Dimension,
    attributes: Sequence[Attribute],
    llm: JsonLLM,
    *,
    max_components: int = MAX_COMPONENTS,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> list[str]:
    """The components of ``dimension`` that recur in ``attributes`` (at most
    ``max_components``, duplicates and empty names removed). Raises :class:`StageError`."""
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
    reply = await ask(
        llm, "component_extraction", _reply_schema(max_components),
        {
            "dimension": dimension.name,
            "definition": dimension.definition.strip() or "(no definition given)",
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
