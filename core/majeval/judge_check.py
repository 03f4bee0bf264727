"""MAJ-Eval's results as the judge to check (:mod:`core.judge_check`): each item's overall
score per dimension (the mean over the stakeholder groups after the debate) with the groups'
feedback or final rationales as the judge's explanation. MAJ-Eval never shows rated items to
the model, so none is held out.

    judge = judge_data(run)                 # the session's judge_to_check() makes it
    report = core.judge_check.judge_report(judge, ratings)
"""

from __future__ import annotations

from core.judge_check import JudgeData, JudgeItem
from core.majeval.conditions import ALL_GROUPS, ConditionResult
from core.majeval.model import ItemResult
from core.majeval.pipeline import EvaluationRun

__all__ = ["METHOD", "condition_judge", "judge_data"]

METHOD = "majeval"
_LIMIT = 1200


def _explanation(result: ItemResult, dimension: str) -> str:
    parts = []
    for group in result.groups:
        if group.status == "failed":
            parts.append(f"{group.group}: failed ({group.error or 'no score'})")
            continue
        score = group.final_mean.get(dimension)
        said = group.feedback.strip() or " ".join(
            a.final_rationale.strip() or (a.initial.rationale.strip() if a.initial else "")
            for a in group.agents).strip()
        head = f"{group.group}" + (f" ({score:.2f})" if score is not None else "")
        parts.append(f"{head}: {said}" if said else head)
    text = "\n".join(parts)
    return text if len(text) <= _LIMIT else text[:_LIMIT - 1] + "…"


def judge_data(run: EvaluationRun) -> JudgeData:
    """The items of ``run`` with the judge's overall scores (None where it failed)."""
    inputs = {i.id: i for i in run.item_inputs}
    items = []
    for result in run.items:
        given = inputs.get(result.item_id)
        items.append(JudgeItem(
            item_id=result.item_id,
            text=given.content if given else "",
            context=given.context if given else "",
            scores={d.name: (None if result.status == "failed" else result.overall.get(d.name))
                    for d in run.dimensions},
            explanation={d.name: _explanation(result, d.name) for d in run.dimensions},
        ))
    source = f"project run {run.run_id}" if run.run_id is not None else ""
    if run.finished_at:
        source += f", finished {run.finished_at}"
    return JudgeData(method="MAJ-Eval", items=items, dimensions=[d.name for d in run.dimensions],
                     scale=(run.scale.minimum, run.scale.maximum), model=run.model,
                     source=source.strip(", "))


def condition_judge(base: JudgeData, condition: ConditionResult) -> JudgeData:
    """``base``'s items (the texts graded) with the overall scores of ``condition`` (one of
    :data:`core.majeval.conditions.CONDITIONS`) instead, to rank the conditions by agreement
    with the person's ratings. An item the condition failed on, or has no result for, has
    score None (never a default)."""
    overall = condition.scores.get(ALL_GROUPS, {})
    items = []
    for item in base.items:
        scores = overall.get(item.item_id) or {}
        why = condition.failed.get(item.item_id, "")
        items.append(JudgeItem(
            item_id=item.item_id, text=item.text, context=item.context,
            scores={d: scores.get(d) for d in base.dimensions},
            explanation={d: f"{condition.label}: failed ({why})" if why else condition.label
                         for d in base.dimensions}))
    source = f"project run {condition.run_id}" if condition.run_id is not None else ""
    return JudgeData(method="MAJ-Eval", items=items, dimensions=list(base.dimensions),
                     scale=base.scale, model=condition.model, source=source)
