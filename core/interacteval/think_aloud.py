"""Stage 1: think-aloud attributes (paper section 3.3).

Models act as assessors: each reads the rubric and the rated samples and lists what to keep in
mind when rating the dimension, in general terms (:func:`think_aloud`; the paper used four
different LLMs). People's think-aloud notes are read by :mod:`core.interacteval.inputs`. Every
attribute keeps its source.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from core.interacteval._common import ask, dimension_values, progress_or_silent
from core.interacteval.model import (
    Attribute,
    Dimension,
    JsonLLM,
    ScoredSample,
    StageError,
    StageFailure,
    ThinkAloudResult,
)
from core.prompts import fence
from core.runs import CancelToken, Progress

__all__ = ["format_samples", "think_aloud"]

STAGE = "Think-aloud"


class Considerations(BaseModel):
    """A model's think-aloud reply."""

    considerations: list[str] = Field(min_length=1)


def format_samples(samples: Sequence[ScoredSample]) -> str:
    """The rated samples as the think-aloud prompt shows them: each source and text in its
    fence (:func:`core.prompts.fence`), the example's number and its score outside."""
    blocks = []
    for i, sample in enumerate(samples, 1):
        lines = [f"Example {i}"]
        if sample.source.strip():
            lines += ["The source (what the text is about):",
                      fence(sample.source.strip(), "source")]
        lines += ["The text:", fence(sample.text.strip(), "text"),
                  f"Score: {_score_text(sample.score)}"]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _score_text(score: float) -> str:
    return f"{score:g}" if abs(score - round(score)) < 1e-9 else f"{score:.2f}"


_BULLET = re.compile(r"^\s*(?:[-*•·–]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)](?=\s))\s*")


def _clean(text: str) -> str:
    return " ".join(_BULLET.sub("", str(text), count=1).split())


async def think_aloud(
    dimension: Dimension,
    samples: Sequence[ScoredSample],
    assessors: Mapping[str, JsonLLM],
    *,
    repeat: int = 0,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> ThinkAloudResult:
    """Ask each model in ``assessors`` (display name -> model) to think aloud about
    ``dimension``, concurrently. A model that fails is listed in ``failures`` and the others
    still count; the attributes come in the order of ``assessors``, each with its model's name
    as source."""
    progress = progress_or_silent(progress)
    progress.start(f"Think-aloud on {dimension.name}", total=len(assessors))
    values = {
        **dimension_values(dimension),
        "samples": format_samples(samples) if samples else "(no rated texts were given)",
    }

    async def one(name: str, llm: JsonLLM) -> list[Attribute] | StageFailure:
        try:
            reply = await ask(llm, "think_aloud", Considerations, values, stage=STAGE,
                              dimension=dimension.name, cancel=cancel, repeat=repeat)
        except StageError as exc:
            failure = exc.__cause__
            progress.advance(1, f"{name} failed")
            return StageFailure(who=name, kind=getattr(failure, "kind", ""),
                                message=getattr(failure, "message", str(exc)))
        progress.advance(1, f"{name} done")
        texts = [_clean(t) for t in reply.considerations]
        return [Attribute(text=t, source=name, source_kind="model") for t in texts if t]

    outcomes = await asyncio.gather(*(one(name, llm) for name, llm in assessors.items()))
    result = ThinkAloudResult(dimension=dimension.name)
    for outcome in outcomes:
        if isinstance(outcome, StageFailure):
            result.failures.append(outcome)
        else:
            result.attributes.extend(outcome)
    return result
