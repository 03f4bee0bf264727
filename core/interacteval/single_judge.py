"""InteractEval's optional single-judge baseline: one model, one call per text and dimension,
with the dimension's definition and fixed evaluation steps (G-Eval-like; our own wording,
``resources/prompts/interacteval/single_judge.txt``) and a whole score from 1 to 5 -- no
checklist. It answers "is the checklist better than simply asking a model for a score?".

A reply must hold a score from 1 to 5 and reasons of its own (not a copy of our template:
``core.prompts.ask``); otherwise the gateway asks once more and the text is marked failed, never
given a default score. Results are :class:`core.interacteval.model.TextScore` (``yes`` and
``questions`` 0), so the comparison treats them like checklist scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.interacteval import _prompts
from core.interacteval._common import dimension_values
from core.interacteval.checklist_scoring import SHORTEN_TEXT, _source_block, text_label
from core.interacteval.model import Dimension, JsonLLM, TextItem, TextScore
from core.interacteval.pipeline import _fold_text
from core.llm import LLMFailure, Rejection, context
from core.prompts import WholeNumber
from core.runs import CancelToken, Progress, UnitStore, run_units, units_at_once
from core.runs import unit_key as runs_unit_key

__all__ = ["TEMPLATE", "JudgeReply", "judge_key", "judge_text", "judge_values", "refused_texts",
           "single_judge"]

TEMPLATE = "single_judge"


class JudgeReply(BaseModel):
    """The judge's reply: its reasons, then a whole score from 1 to 5."""

    reasons: str = Field(description="what the judge noticed in this text, in its own words")
    score: WholeNumber = Field(ge=1, le=5, description="a whole number from 1 to 5")


def judge_values(dimension: Dimension, item: TextItem) -> dict[str, str]:
    """The template's values for one text and dimension."""
    return {**dimension_values(dimension), "source_block": _source_block(item),
            "text": item.text.strip()}


def judge_key(dimension: str, item: TextItem) -> str:
    """The key of one judged text: dimension, text id and a fingerprint of the text and
    source (an edited text is judged again)."""
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps([item.text, item.source], ensure_ascii=False)
                            .encode("utf-8")).hexdigest()[:12]
    return runs_unit_key("single-judge", dimension, item.id, digest)


def _check(reply: JudgeReply) -> Rejection | None:
    if not 1 <= reply.score <= 5:
        return Rejection(f"the score {reply.score} is outside 1 to 5: give a whole number "
                         "from 1 to 5")
    if not " ".join(str(reply.reasons).split()):
        return Rejection("the reasons are empty: say what you noticed in this text")
    return None


async def judge_text(dimension: Dimension, item: TextItem, llm: JsonLLM, *,
                     samples: frozenset[str] = frozenset(),
                     cancel: CancelToken | None = None) -> TextScore:
    """One call: the judge's 1-5 score of ``item`` on ``dimension`` (a failure comes back as a
    failed score with the reason, never a default)."""
    base: dict[str, Any] = {"text_id": item.id, "dimension": dimension.name, "source_id": item.source_id,
            "system": item.system, "human": item.human.get(dimension.name),
            "think_aloud_sample": _fold_text(item.text) in samples, "text": item.text}
    if not item.text.strip():
        return TextScore(**base, status="failed", note="The text is empty.")
    try:
        reply = await prompts.ask(llm, _prompts.load(TEMPLATE), JudgeReply,
                                  judge_values(dimension, item), check=_check, cancel=cancel)
    except LLMFailure as failure:
        return TextScore(**base, status="failed", failure_kind=failure.kind,
                         note=f"The single judge failed on text {item.id}: {failure.message}")
    return TextScore(**base, status="ok", score=float(reply.score),
                     note=" ".join(reply.reasons.split()))


def refused_texts(dimensions: Sequence[Dimension], items: Sequence[TextItem],
                  limits: context.Limits | None) -> list[context.Overlong]:
    """The texts too long for the single judge with a model of
    ``limits`` (the prompt with the text and its source does not fit), before any call."""
    if limits is None:
        return []
    template = _prompts.load(TEMPLATE)
    out = []
    for dimension in dimensions:
        for item in items:
            if not item.text.strip():
                continue
            tokens = context.prompt_tokens(template.messages(**judge_values(dimension, item)))
            if tokens > limits.prompt:
                what = (f"{text_label(item)}{' with its source' if item.source.strip() else ''}"
                        f", judged on {dimension.name}")
                out.append(limits.overlong(what, tokens, shorten=SHORTEN_TEXT))
    return out


async def single_judge(dimensions: Sequence[Dimension], items: Sequence[TextItem],
                       llm: JsonLLM, *, store: UnitStore | None = None,
                       samples: dict[str, frozenset[str]] | None = None,
                       progress: Progress | None = None, cancel: CancelToken | None = None
                       ) -> list[TextScore]:
    """Every text judged once per dimension (kept in ``store`` one by one, so a resumed run
    repeats no finished text). ``samples``: per dimension, the folded think-aloud sample texts
    (flagged as in checklist scoring). Results in dimension order, then text order."""
    samples = samples or {}
    refused = refused_texts(dimensions, items, await context.limits_for(llm))
    if refused:  # before any call: a text longer than the model reads cannot be judged
        raise context.TooLong(context.refusal(refused))
    units = [(judge_key(d.name, item), (d, item)) for d in dimensions for item in items]
    outcomes = await run_units(
        units,
        lambda unit: judge_text(unit[0], unit[1], llm,
                                samples=samples.get(unit[0].name, frozenset()), cancel=cancel),
        judge=lambda s: (s.status == "ok", s.note or "The single judge failed."),
        dump=lambda s: s.model_dump(mode="json"),
        load=lambda payload, _unit: TextScore.model_validate(payload),
        store=store, limit=units_at_once(llm, 2), title="Single judge",
        describe=lambda unit, s: f"{unit[0].name}, text {unit[1].id}: "
        + ("scored" if s.status == "ok" else "failed"),
        what="texts", progress=progress, cancel=cancel)
    return [o.value for o in outcomes]
