"""Stage 1: think-aloud attributes (paper section 3.3).

Models act as assessors: each reads the rubric and the rated samples and lists what to keep in
mind when rating the dimension, in general terms (:func:`think_aloud`; the paper used four
different LLMs). People's think-aloud notes are read by :mod:`core.interacteval.inputs`. Every
attribute keeps its source.

Rated samples that do not fit a model's context window in one prompt are shown to it in parts
(:func:`sample_parts`; every sample in one prompt whenever they fit), one call per part, and the
parts' considerations are put together (repeats once).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from core.interacteval import _prompts
from core.interacteval._common import (
    ask,
    dimension_values,
    each_part,
    fold,
    progress_or_silent,
    split_to_fit,
)
from core.interacteval.model import (
    Attribute,
    Dimension,
    JsonLLM,
    ScoredSample,
    StageError,
    StageFailure,
    ThinkAloudResult,
)
from core.llm import context
from core.prompts import fence
from core.runs import CancelToken, Progress

__all__ = ["CANNOT_THINK_ALOUD", "can_think_aloud", "format_samples", "sample_parts",
           "think_aloud"]

STAGE = "Think-aloud"
#: Why the built-in demo model is not asked to think aloud. Measured with it: it repeats one
#: phrase ("keep it clean") until its answer is cut off, every time; a longer answer only took
#: longer to fail (3 min 57 s, then 11 min 23 s with more tokens allowed).
CANNOT_THINK_ALOUD = (
    "The built-in demo model cannot think aloud: it repeats one phrase until its answer is cut "
    "off, and allowing longer answers only makes it fail later. Choose a larger model for the "
    "think-aloud (Settings → Models), or write the notes yourself.")


def can_think_aloud(model: object) -> bool:
    """Whether ``model`` (a model, or a model profile) is offered the think-aloud: every model
    but the built-in demo one (:data:`CANNOT_THINK_ALOUD`)."""
    from core.interacteval.grounded import uses_grounded_path

    return not uses_grounded_path(model)


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


def _values(dimension: Dimension, samples: Sequence[ScoredSample]) -> dict[str, str]:
    return {**dimension_values(dimension),
            "samples": format_samples(samples) if samples else "(no rated texts were given)"}


def sample_label(samples: Sequence[ScoredSample], index: int) -> str:
    """"the rated sample in row 4": which sample, for a message."""
    row = getattr(samples[index], "row", None)
    return f"the rated sample in row {row}" if row else f"rated sample {index + 1}"


def sample_parts(dimension: Dimension, samples: Sequence[ScoredSample],
                 limits: context.Limits | None) -> list[list[ScoredSample]]:
    """The rated samples in parts whose think-aloud prompt fits the model: one part (every
    sample in one prompt, the paper's setting) whenever they fit. Raises :class:`StageError`
    (kind "too_long") naming a sample too long for the model even alone."""
    if not samples:
        return [[]]
    template = _prompts.load("think_aloud")
    return split_to_fit(
        list(samples), lambda part: template.messages(**_values(dimension, part)), limits,
        stage=STAGE, dimension=dimension.name, what=lambda i: sample_label(samples, i),
        shorten="choose a shorter sample (or shorten its text or source)")


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

    async def one(name: str, llm: JsonLLM) -> list[Attribute] | StageFailure:
        if not can_think_aloud(llm):  # never asked: it cannot (see CANNOT_THINK_ALOUD)
            progress.advance(1, f"{name}: not asked (the built-in model cannot think aloud)")
            return StageFailure(who=name, kind="too_small", message=CANNOT_THINK_ALOUD)
        try:
            parts = sample_parts(dimension, samples, await context.limits_for(llm))
            replies = await each_part([
                ask(llm, "think_aloud", Considerations, _values(dimension, part), stage=STAGE,
                    dimension=dimension.name, cancel=cancel, repeat=repeat)
                for part in parts])
        except StageError as exc:
            failure = exc.__cause__
            progress.advance(1, f"{name} failed")
            return StageFailure(who=name, kind=getattr(failure, "kind", "") or exc.kind,
                                message=getattr(failure, "message", str(exc)))
        progress.advance(1, f"{name} done")
        texts: list[str] = []
        for reply in replies:  # the parts' considerations together, repeats once
            for text in (_clean(t) for t in reply.considerations):
                if text and fold(text) not in {fold(t) for t in texts}:
                    texts.append(text)
        return [Attribute(text=t, source=name, source_kind="model") for t in texts]

    outcomes = await asyncio.gather(*(one(name, llm) for name, llm in assessors.items()))
    result = ThinkAloudResult(dimension=dimension.name)
    for outcome in outcomes:
        if isinstance(outcome, StageFailure):
            result.failures.append(outcome)
        else:
            result.attributes.extend(outcome)
    return result
