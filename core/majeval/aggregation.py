"""Stage 3, phase 3: aggregation (paper 3.2, Table 17).

The group's score per dimension is the mean of its agents' final scores, computed here (the
model never does arithmetic for us); the pre-debate mean is kept beside it, over the same
agents (an agent that failed during the debate is left out of both, and ``note`` says so). An
aggregator call
then writes the qualitative synthesis: where the agents agree, where they disagree (who and
why), and what it means overall. :func:`combine_groups` gives an item's overall score per
dimension: the mean of the groups' final means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from core.llm import LLMFailure
from core.majeval import _prompts
from core.majeval.model import AgentResult, Dimension, GroupResult, Item, ItemResult, JsonLLM
from core.runs import CancelToken

__all__ = ["Synthesis", "aggregate", "combine_groups", "group_means", "means_note"]

TEMPLATE = "aggregation"


class Synthesis(BaseModel):
    """The aggregator's reply."""

    agreement: str
    disagreement: str
    overall: str

    def text(self) -> str:
        return (f"Agreement: {' '.join(self.agreement.split())}\n"
                f"Disagreement: {' '.join(self.disagreement.split())}\n"
                f"Overall: {' '.join(self.overall.split())}")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _both(agent: AgentResult, dimension: str) -> bool:
    return (agent.initial is not None and dimension in agent.initial.scores
            and agent.status == "ok" and agent.final is not None and dimension in agent.final)


def group_means(agents: Sequence[AgentResult], dimensions: Sequence[Dimension]
                ) -> tuple[dict[str, float], dict[str, float]]:
    """(initial mean, final mean) per dimension, both over the same agents: those with a score
    before and after the debate (an agent that failed on the way is left out of both, so the
    change is the debate's, not a change of who is counted). A dimension no agent scored is
    left out (never 0)."""
    initial: dict[str, float] = {}
    final: dict[str, float] = {}
    for d in dimensions:
        counted = [a for a in agents if _both(a, d.name)]
        if counted:
            initial[d.name] = _mean([a.initial.scores[d.name] for a in counted])  # type: ignore[union-attr]
            final[d.name] = _mean([a.final[d.name] for a in counted])  # type: ignore[index]
    return initial, final


def means_note(agents: Sequence[AgentResult]) -> str:
    """What the means of a group need said beside them: a group of one persona (no debate, no
    change, no agreement within the group), or agents left out of both means."""
    if len(agents) == 1:
        return "One agent: a group with a single persona cannot debate; its change and its " \
               "agreement within the group are undefined."
    left = [a.agent for a in agents if a.initial is not None
            and (a.status != "ok" or a.final is None)]
    if not left:
        return ""
    kept = sum(1 for a in agents if a.initial is not None and a.status == "ok"
               and a.final is not None)
    who = ", ".join(left)
    return (f"The means before and after the debate are both over the {kept} agents who "
            f"finished; {who} failed during the debate and {'is' if len(left) == 1 else 'are'} "
            "left out of both.")


def _means_text(means: Mapping[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in means.items()) or "(none)"


async def aggregate(
    result: GroupResult,
    item: Item,
    task: str,
    dimensions: Sequence[Dimension],
    llm: JsonLLM,
    *,
    cancel: CancelToken | None = None,
) -> GroupResult:
    """Phase 3 for one group and item: means (ours) and the aggregator's synthesis. Sets
    ``status`` ("failed" when no agent has final scores, "partial" when an agent or the
    synthesis failed) and ``error``."""
    out = result.model_copy(deep=True)
    out.initial_mean, out.final_mean = group_means(out.agents, dimensions)
    out.note = means_note(out.agents)
    failed = [a for a in out.agents if a.status != "ok"]
    problems = [a.error for a in failed if a.error]
    finished = [a for a in out.agents if a.status == "ok" and a.final is not None]
    if not finished:
        out.status = "failed"
        out.error = ("No agent of this group gave final scores. " + " ".join(problems)).strip()
        return out
    evaluations = "\n".join(  # one line each; the template fences the whole list
        f"- {' '.join(a.agent.split())} (final scores: "
        f"{', '.join(f'{k} {v}' for k, v in (a.final or {}).items())}): "
        f"{' '.join((a.final_rationale or (a.initial.rationale if a.initial else '')).split())}"
        for a in finished)
    try:
        synthesis = await _prompts.ask(llm, TEMPLATE, Synthesis, {
            "task": task, "group": out.group, "content": item.content,
            "evaluations": evaluations, "means": _means_text(out.final_mean)}, cancel=cancel)
        out.feedback, out.feedback_error, out.feedback_error_kind = synthesis.text(), "", ""
    except LLMFailure as failure:
        out.feedback = ""
        out.feedback_error = f"The aggregator's summary failed: {failure.message}"
        out.feedback_error_kind = failure.kind
        problems.append(out.feedback_error)
    if problems:
        out.status = "partial"
        note = (f"Mean of {len(finished)} of {len(out.agents)} agents. "
                if len(finished) < len(out.agents) else "")
        out.error = note + " ".join(problems)
    else:
        out.status, out.error = "ok", ""
    return out


def combine_groups(item_id: str, groups: Sequence[GroupResult],
                   dimensions: Sequence[Dimension]) -> ItemResult:
    """An item's result: every group, and per dimension the mean of the groups' final means.
    A failed group makes the item failed with no overall score."""
    failed = [g for g in groups if g.status == "failed"]
    out = ItemResult(item_id=item_id, groups=list(groups))
    if not groups:
        out.status, out.error = "failed", "No stakeholder group evaluated this item."
        return out
    if failed:
        out.status = "failed"
        out.error = "No overall score: " + "; ".join(
            f"group {g.group} failed ({g.error})" for g in failed)
        return out
    for d in dimensions:
        values = [g.final_mean[d.name] for g in groups if d.name in g.final_mean]
        if len(values) == len(groups):
            out.overall[d.name] = _mean(values)
    partial = [g for g in groups if g.status == "partial"]
    if partial:
        out.status = "partial"
        out.error = "; ".join(f"group {g.group}: {g.error}" for g in partial)
    return out
