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
                 done: Collection[str] = (), limits: Any = None) -> tuple[list[StagePlan], int]:
    """(the stages of the debates still to run, debates already done). ``done``: keys
    (:func:`core.majeval.pipeline.unit_key`) of debates kept in the project. With ``limits``
    (the model's, ``core.llm.context.Limits``) a discussion longer than the model reads at
    once is counted as the debate sends it (its oldest turns left out), and an item too long
    for the model counts no call (it is refused: :func:`core.majeval.pipeline.refused_items`)."""
    from core.majeval.debate import _Window, too_long
    from core.majeval.model import AgentEvaluation, AgentResult, DebateTurn
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
            if too_long(members, item, task, dimensions, scale, limits, settings=settings,
                        descriptions=descriptions):
                continue  # refused before the run
            systems = [_system_values(p, item, task, dimensions, scale, settings.simple_roles,
                                      descriptions) for p in members]
            for values in systems:
                stages["first evaluations"].prompts.append(first.messages(**values))
            agents = [AgentResult(persona_id=p.id, agent=p.name, initial=AgentEvaluation(
                persona_id=p.id, agent=p.name, scores={d.name: 3 for d in dimensions},
                rationale=stand_in(eval_tokens))) for p in members]
            window = _Window(limits, agents)
            window.fit_initial({str(i): values for i, values in enumerate(systems)},
                               reply_format)
            initial = window.initial()
            if not settings.no_debate and n > 1:
                widest = max(widest, n)
                turns: list[DebateTurn] = []
                for k in range(settings.rounds * n):
                    speaker = members[k % n]
                    values = {**systems[k % n], "name": speaker.name,
                              "reply_format": reply_format}
                    discussion = window.discussion(turns, "debate_turn", values)
                    messages = turn.messages(**values, initial_evaluations=initial,
                                             discussion=discussion)
                    (stages["debate turns"].prompts if k < n
                     else stages["debate turns"].maybe).append(messages)
                    turns.append(DebateTurn(turn=k + 1, speaker=speaker.name,
                                            persona_id=speaker.id, reason="",
                                            message=stand_in(turn_tokens),
                                            scores={d.name: 3 for d in dimensions}))
                for values in systems:
                    window.discussion(turns, "final_evaluation", values)
                discussion = window.discussion(turns, "final_evaluation", systems[0])
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


def plan_for_state(personas: Sequence[Persona], choices: Any, descriptions: Mapping[str, str],
                   done: Collection[str] = (), limits: Any = None
                   ) -> tuple[list[StagePlan], int]:
    """:func:`plan_debates` with a session's choices
    (:class:`core.majeval.session.MajEvalChoices`)."""
    return plan_debates(personas, choices.item_list, choices.task, choices.dimensions,
                        choices.scale, choices.settings, descriptions, done=done, limits=limits)


#: Stakeholder groups assumed for the persona calls' upper bound (one call per group; how many
#: groups the model forms is known only after the grouping step).
GUESSED_GROUPS = (2, 6)


def plan_personas(documents: Sequence[Any], task: str, *, context_window: int,
                  answer_tokens: int, done: Collection[str] = ()) -> tuple[list[StagePlan], int]:
    """The calls of finding the stakeholders and writing personas (stages 1-2): one call per
    part of each document not read yet (``done``: names of documents read with the same task
    and text; their parts make no call), then one grouping call and one persona call per group
    (:data:`GUESSED_GROUPS`: how many groups there will be is not known before). Returns
    (stages, documents already read)."""
    from core.majeval.perspective_extraction import (
        TEMPLATE as EXTRACTION,
    )
    from core.majeval.perspective_extraction import (
        _pages_text,
        chunk_budget,
        document_chunks,
    )

    extraction = _prompts.load(EXTRACTION)
    chunk_budget(context_window, answer_tokens, task)  # ValueError: the window is too small
    read = StagePlan("reading the documents for stakeholders", [], reply_tokens=answer_tokens)
    skipped = 0
    for doc in documents:
        if doc.name in done:
            skipped += 1
            continue
        for chunk in document_chunks(doc, task, context_window, answer_tokens):
            read.prompts.append(extraction.messages(task=task, document=doc.name,
                                                    pages=_pages_text(chunk.pages),
                                                    text=chunk.text))
    listed = stand_in(min(answer_tokens, 600))
    grouping = _prompts.load("stakeholder_grouping").messages(task=task, stakeholders=listed)
    persona = _prompts.load("persona_construction").messages(
        task=task, group=stand_in(4), description=stand_in(40), perspectives=stand_in(200))
    low, high = GUESSED_GROUPS
    plan = [read] if read.prompts else []
    plan.append(StagePlan("grouping the stakeholders", [grouping], reply_tokens=400))
    plan.append(StagePlan("writing the personas (one call per group)", [persona] * low,
                          maybe=[persona] * (high - low), reply_tokens=500))
    return plan, skipped
