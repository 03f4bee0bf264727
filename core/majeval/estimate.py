"""The planned calls of a MAJ-Eval run, for the estimate shown before it starts
(:mod:`core.llm.estimate`). Pure: the session passes what is stored.

Per (item, stakeholder group) debate with ``n`` agents and ``rounds`` r:

* phase 1: ``n`` calls;
* the debate: at least ``n`` turns (everyone speaks once before it can stop), at most ``r x n``,
  then at most ``n`` final evaluations at the turn limit; none with the no-debate option or a
  group of one persona;
* the aggregator's summary: 1 call.

The prompts are our templates filled with the real items and personas; the parts the model
writes during the run (its first evaluations, the discussion) are stood in for by text of the
expected length of a reply.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from core.llm.estimate import StagePlan, expected_reply_tokens
from core.majeval import _prompts
from core.majeval.aggregation import TEMPLATE as AGGREGATION
from core.majeval.aggregation import Synthesis
from core.majeval.debate import _system_values, agent_template, debate_format
from core.majeval.model import (
    DebateSettings,
    Dimension,
    Item,
    Persona,
    Scale,
    debate_reply_schema,
    evaluation_schema,
)
from core.majeval.pipeline import groups_of, simple_roles_text, unit_key

__all__ = ["plan_debates", "stand_in"]


def stand_in(tokens: int) -> str:
    """Neutral text of about ``tokens`` tokens, standing in for what a model will write."""
    return " ".join(["the reply"] * max(1, tokens // 2))


def plan_debates(personas: Sequence[Persona], items: Sequence[Item], task: str,
                 dimensions: Sequence[Dimension], scale: Scale, settings: DebateSettings,
                 descriptions: Mapping[str, str] | None = None, *,
                 done: Collection[str] = ()) -> tuple[list[StagePlan], int]:
    """(the stages of the debates still to run, debates already done). ``done``: keys
    (:func:`core.majeval.pipeline.unit_key`) of debates kept in the project."""
    descriptions = dict(descriptions or {})
    by_group = groups_of(personas)
    eval_schema = evaluation_schema(dimensions, scale)
    turn_schema = debate_reply_schema(dimensions, scale)
    reply_format = debate_format(dimensions, scale)
    eval_tokens = expected_reply_tokens(eval_schema)
    turn_tokens = expected_reply_tokens(turn_schema)
    first = agent_template("phase1")
    turn = agent_template("debate_turn")
    final = agent_template("final_evaluation")
    summary = _prompts.load(AGGREGATION)
    stages = {name: StagePlan(name, [], schema) for name, schema in (
        ("first evaluations", eval_schema), ("debate turns", turn_schema),
        ("final evaluations at the turn limit", eval_schema),
        ("group summaries", Synthesis))}
    widest = 0
    skipped = 0
    for item in items:
        for group, members in by_group.items():
            roles = simple_roles_text(members, settings, descriptions)
            if unit_key(item, group, members, roles) in done:
                skipped += 1
                continue
            n = len(members)
            systems = [_system_values(p, item, task, dimensions, scale, settings.simple_roles,
                                      descriptions) for p in members]
            for values in systems:
                stages["first evaluations"].prompts.append(first.messages(**values))
            initial = "\n".join(f"- {p.name}: {stand_in(eval_tokens)}" for p in members)
            if not settings.no_debate and n > 1:
                widest = max(widest, n)
                for k in range(settings.rounds * n):
                    speaker = members[k % n]
                    discussion = "\n".join(
                        f"Turn {j + 1}, {members[j % n].name}: {stand_in(turn_tokens)}"
                        for j in range(k)) or "(nobody has spoken yet)"
                    messages = turn.messages(**systems[k % n], name=speaker.name,
                                             initial_evaluations=initial,
                                             discussion=discussion, reply_format=reply_format)
                    (stages["debate turns"].prompts if k < n
                     else stages["debate turns"].maybe).append(messages)
                discussion = "\n".join(
                    f"Turn {j + 1}, {members[j % n].name}: {stand_in(turn_tokens)}"
                    for j in range(settings.rounds * n))
                for values in systems:
                    stages["final evaluations at the turn limit"].maybe.append(final.messages(
                        **values, initial_evaluations=initial, discussion=discussion))
            evaluations = "\n".join(f"- {p.name} (final scores): {stand_in(turn_tokens)}"
                                    for p in members)
            stages["group summaries"].prompts.append(summary.messages(
                task=task, group=group, content=item.content, evaluations=evaluations,
                means=", ".join(f"{d.name} 3.00" for d in dimensions)))
    stages["debate turns"].chain = (widest, settings.rounds * widest)
    stages["final evaluations at the turn limit"].chain = (0, 1 if widest else 0)
    return [s for s in stages.values() if s.prompts or s.maybe], skipped


def plan_for_state(personas: Sequence[Persona], state: Any, descriptions: Mapping[str, str],
                   done: Collection[str] = ()) -> tuple[list[StagePlan], int]:
    """:func:`plan_debates` with a session's choices (``core.majeval.session.WizardState``)."""
    return plan_debates(personas, state.item_list, state.task, state.dimensions, state.scale,
                        state.settings, descriptions, done=done)
