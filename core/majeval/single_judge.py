"""MAJ-Eval's single-judge baseline (the paper's comparison, Section 5): one model, the same
dimensions, scale and items as the debates, one call per item with the dimensions'
definitions and fixed evaluation steps (in the style of G-Eval; our own wording, template
``resources/prompts/majeval/single_judge.txt``). A reply that repeats our instructions is
refused like every other MAJ-Eval reply (``core.prompts.ask``); a failed item is failed, never a
default score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from core import prompts
from core.llm import LLMFailure, Rejection, context
from core.majeval import _prompts
from core.majeval.debate import SHORTEN_ITEM, evaluation_format, item_label
from core.majeval.model import Dimension, Item, JsonLLM, Scale, evaluation_schema, scores_of
from core.runs import CancelToken, Progress, UnitStore, run_units, units_at_once
from core.runs import unit_key as runs_unit_key

__all__ = ["TEMPLATE", "JudgeResult", "judge_item", "judge_key", "judge_values", "refused_items",
           "single_judge"]

TEMPLATE = "single_judge"
#: Placeholders holding our own wording built in code.
OWN_WORDS = ("evaluation_format", "scale")


class JudgeResult(BaseModel):
    """The single judge's verdict on one item: scores by dimension and its reasons, or why it
    failed (``status`` "failed", no scores)."""

    item_id: str
    status: str = "ok"
    scores: dict[str, int] = {}
    rationale: str = ""
    error: str = ""
    error_kind: str = ""


def judge_values(item: Item, task: str, dimensions: Sequence[Dimension], scale: Scale
                 ) -> dict[str, str]:
    """The template's values for ``item``."""
    return {"task": task, "content": item.content,
            "context": item.context.strip() or "(none given)",
            "dimensions": "\n".join(f"- {d.name}: {d.definition}" if d.definition
                                    else f"- {d.name}" for d in dimensions),
            "scale": scale.describe(), "evaluation_format": evaluation_format(dimensions, scale)}


def judge_key(item: Item) -> str:
    """The key of one item's verdict: its id and a fingerprint of its content."""
    return runs_unit_key(item.id, item.fingerprint())


def _check(reply: Any) -> Rejection | None:
    if not " ".join(str(reply.rationale).split()):
        return Rejection("the rationale is empty: give your reasons for the scores")
    return None


async def judge_item(item: Item, task: str, dimensions: Sequence[Dimension], scale: Scale,
                     llm: JsonLLM, *, cancel: CancelToken | None = None) -> JudgeResult:
    """One call: the judge's scores for ``item`` (a failure is returned as a failed result)."""
    try:
        reply = await prompts.ask(llm, _prompts.load(TEMPLATE),
                                  evaluation_schema(dimensions, scale),
                                  judge_values(item, task, dimensions, scale), check=_check,
                                  own_words=OWN_WORDS, cancel=cancel)
    except LLMFailure as failure:
        return JudgeResult(item_id=item.id, status="failed",
                           error=f"The single judge failed on item {item.id}: "
                                 f"{failure.message}", error_kind=failure.kind)
    said: str = reply.rationale  # type: ignore[attr-defined]  # a schema made at run time
    return JudgeResult(item_id=item.id, scores=scores_of(reply), rationale=" ".join(said.split()))


def refused_items(items: Sequence[Item], task: str, dimensions: Sequence[Dimension],
                  scale: Scale, limits: Any) -> list[Any]:
    """The items too long for the single judge with a model of
    ``limits`` (the prompt with the item and its context does not fit), before any call."""
    if limits is None:
        return []
    template = _prompts.load(TEMPLATE)
    out = []
    for item in items:
        tokens = context.prompt_tokens(template.messages(**judge_values(item, task, dimensions,
                                                                        scale)))
        if tokens > limits.prompt:
            what = f"{item_label(item)}{' with its context' if item.context.strip() else ''}, " \
                   "for the single judge"
            out.append(limits.overlong(what, tokens, shorten=SHORTEN_ITEM))
    return out


async def single_judge(items: Sequence[Item], task: str, dimensions: Sequence[Dimension],
                       scale: Scale, llm: JsonLLM, *, store: UnitStore | None = None,
                       progress: Progress | None = None, cancel: CancelToken | None = None
                       ) -> list[JudgeResult]:
    """Every item judged once (kept in ``store`` one by one; a resumed run repeats no finished
    item). Results in item order."""
    refused = refused_items(items, task, dimensions, scale, await context.limits_for(llm))
    if refused:  # before any call: an item longer than the model reads cannot be judged
        raise context.TooLong(context.refusal(refused))
    outcomes = await run_units(
        [(judge_key(item), item) for item in items],
        lambda item: judge_item(item, task, dimensions, scale, llm, cancel=cancel),
        judge=lambda r: (r.status == "ok", r.error or "The single judge failed."),
        dump=lambda r: r.model_dump(mode="json"),
        load=lambda payload, _item: JudgeResult.model_validate(payload),
        store=store, limit=units_at_once(llm, 2), title="Single judge",
        describe=lambda item, r: f"item {item.id}: " + (
            "failed" if r.status != "ok" else "scored"),
        what="items", progress=progress, cancel=cancel)
    return [o.value for o in outcomes]
