"""MAJ-Eval end to end: personas from documents (stages 1-2), then the debates (stage 3).

The stages are coroutines in their own modules (each result can be edited before the next);
this module composes them: :func:`create_personas` runs stages 1-2 in a row, :func:`evaluate`
runs stage 3. It never writes the project: what is kept, and where, is
:mod:`core.majeval.session`, which the wizard and the command line both call.

:func:`evaluate` runs one unit of work per (item, stakeholder group): phase 1 of all agents
concurrently, the debate turn by turn, then phase 3. The units run through
:func:`core.runs.run_units` (at most ``max_units`` at a time, so early items finish early and are
kept), and every model call is bounded by the gateway's own concurrency limit. With a ``store``
(the session passes one over the project), each finished unit is kept at once, so a cancelled or
crashed run resumes where it stopped: finished units are read back, unfinished ones replay their
calls from the LLM cache and only the missing calls reach the model. A unit with any failure is
kept as failed (with its partial result) and tried again on the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.llm import context
from core.majeval.aggregation import aggregate, combine_groups
from core.majeval.debate import evaluate_individually, free_debate
from core.majeval.debate import too_long as debate_too_long
from core.majeval.model import (
    COPIED,
    DEFAULT_DIMENSION,
    DebateSettings,
    Dimension,
    GroupResult,
    Item,
    ItemResult,
    JsonLLM,
    Persona,
    Scale,
    StageError,
    StageFailure,
    Stakeholder,
    StakeholderGroup,
    personas_fingerprint,
)
from core.majeval.persona_construction import PersonaConstruction, construct_personas, simple_role
from core.majeval.perspective_extraction import (
    PerspectiveExtraction,
    extract_perspectives,
    people_named,
)
from core.majeval.stakeholder_grouping import group_stakeholders
from core.runs import CancelToken, Progress, UnitStore, run_units, units_at_once
from core.runs import unit_key as runs_unit_key

if TYPE_CHECKING:  # pragma: no cover
    from core.documents import Document

__all__ = [
    "DOCUMENT_ARTEFACT",
    "GROUPS_ARTEFACT",
    "METHOD",
    "PERSONA_ARTEFACT",
    "PERSPECTIVES_ARTEFACT",
    "RESULT_KIND",
    "EvaluationRun",
    "PersonaCreation",
    "copied_most",
    "create_personas",
    "evaluate",
    "evaluate_group",
    "group_and_construct",
    "groups_of",
    "lonely_groups",
    "run_settings",
    "simple_roles_text",
    "unit_key",
]

METHOD = "majeval"
STEP_DEBATE = "debate"
RESULT_KIND = "group_result"
DOCUMENT_ARTEFACT = "majeval.document"
PERSPECTIVES_ARTEFACT = "majeval.perspectives"
GROUPS_ARTEFACT = "majeval.groups"
PERSONA_ARTEFACT = "majeval.persona"


# ------------------------------------------------------------------------- persona creation
@dataclass
class PersonaCreation:
    """Stages 1-2: perspectives per document, groups, personas, and what failed on the way."""

    extractions: list[PerspectiveExtraction]
    groups: list[StakeholderGroup]
    personas: list[Persona]
    failures: list[StageFailure] = field(default_factory=list)


def copied_most(failures: Sequence[StageFailure], units: int) -> bool:
    """Whether most of ``units`` model steps failed because the model repeated our instructions
    instead of answering (then the outcome says so, and the CLI exits with 3)."""
    copied = sum(1 for f in failures if f.kind == COPIED)
    return copied > 0 and copied * 2 > max(units, copied)


def nothing_found(failures: Sequence[StageFailure], documents: Sequence[Document] = ()
                  ) -> str:
    """Why no stakeholder perspective came out of stage 1, blaming the right thing: the
    model's unusable answers (``failures``; copies of our instructions said so), a model that
    found nobody in documents that plainly name people, or documents that name nobody."""
    if failures:
        why = "; ".join(f"{f.where}: {f.message}" for f in failures[:3])
        text = (f"No stakeholder perspectives were found: the model's answer could not be used "
                f"for {len(failures)} part{'s' if len(failures) != 1 else ''} of the "
                "documents.")
        if copied_most(failures, len(failures)):
            text += (" The model repeated the instructions instead of answering: it is too "
                     "small for this step; try a larger model.")
        return text + f" Failed parts: {why}"
    people = people_named(documents)
    if people:
        named = ", ".join(f"{word} ({n} time{'s' if n != 1 else ''})" for word, n in people[:3])
        return ("No stakeholder perspectives came back from the model, although the documents "
                f"plainly name people: {named}. The model found nothing in them; it may be "
                "too small for this step: try a larger model. Check also that the task "
                "description says what is judged and for whom.")
    return ("No stakeholder perspectives relevant to the task were found in the documents, "
            "and they hardly name any people. Check that the documents talk about the people "
            "the task concerns.")


def too_little(stakeholders: Sequence[Stakeholder], documents: Sequence[Document]) -> str:
    """A plain warning when stage 1 found far fewer kinds of stakeholders than the documents
    plainly name (at least 4 kinds of people, each named twice or more, and fewer than half as
    many stakeholders found): the model found too little to go on ("" otherwise). Seen with the
    built-in model: 3 "stakeholders" ("Glaucoma", "A", "patient") from papers naming 8 kinds
    of people."""
    kinds: dict[str, int] = {}
    for word, n in people_named(documents):
        singular = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
        singular = {"children": "child", "families": "family", "people": "person"}.get(
            word, singular)
        kinds[singular] = kinds.get(singular, 0) + n
    named = sorted((w for w, n in kinds.items() if n >= 2), key=lambda w: -kinds[w])
    if len(named) < 4 or len(stakeholders) * 2 >= len(named):
        return ""
    found = ", ".join(f"“{s.name}”" for s in stakeholders[:6]) or "none"
    return (f"The model found {len(stakeholders)} kind{'s' if len(stakeholders) != 1 else ''} "
            f"of stakeholder ({found}), but the documents name at least {len(named)} kinds of "
            f"people ({', '.join(named[:8])}): it found too little to go on. Choose a larger "
            "model and find the stakeholders again, or add the missing personas yourself.")


async def group_and_construct(
    stakeholders: list[Stakeholder],
    failures: Sequence[StageFailure],
    task: str,
    llm: JsonLLM,
    *,
    progress: Progress,
    cancel: CancelToken | None,
    documents: Sequence[Document] = (),
) -> tuple[list[StakeholderGroup], PersonaConstruction]:
    """Stages 1b-2 on the perspectives found: grouping, then personas. Raises
    :class:`StageError` when there is no perspective (saying why: :func:`nothing_found`) or no
    persona could be written (both with the ``failures``)."""
    if not stakeholders:
        raise StageError(nothing_found(failures, documents), stage="Perspective extraction",
                         failures=failures)
    groups = await group_stakeholders(stakeholders, task, llm, progress=progress, cancel=cancel)
    built = await construct_personas(groups, task, llm, progress=progress, cancel=cancel)
    if not built.personas:
        why = "; ".join(f"{f.where}: {f.message}" for f in built.failures[:3])
        raise StageError(f"No persona could be written. {why}".strip(),
                         stage="Persona construction", failures=[*failures, *built.failures])
    return groups, built


async def create_personas(
    documents: Sequence[Document],
    task: str,
    llm: JsonLLM,
    *,
    context_window: int | None = None,
    answer_tokens: int | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> PersonaCreation:
    """Perspective extraction for every document (concurrently), stakeholder grouping, persona
    construction. ``context_window``/``answer_tokens`` default to the model's
    (``core.llm.context``; keeping them is the session's work: :func:`core.majeval.session.create_personas_stored`). Raises
    :class:`StageError` when no persona could be made."""
    progress = progress or Progress()
    extractions = list(await asyncio.gather(*(
        extract_perspectives(doc, task, llm, context_window=context_window,
                             answer_tokens=answer_tokens, progress=progress, cancel=cancel)
        for doc in documents)))
    failures = [f for e in extractions for f in e.failures]
    stakeholders = [s for e in extractions for s in e.stakeholders]
    groups, built = await group_and_construct(stakeholders, failures, task, llm,
                                               progress=progress, cancel=cancel,
                                               documents=documents)
    failures += built.failures
    return PersonaCreation(extractions, groups, built.personas, failures)


def groups_of(personas: Sequence[Persona]) -> dict[str, list[Persona]]:
    """Personas by group, groups in order of first appearance."""
    out: dict[str, list[Persona]] = {}
    for p in personas:
        out.setdefault(p.group, []).append(p)
    return out


def lonely_groups(personas: Sequence[Persona]) -> list[str]:
    """The groups with a single persona: they cannot debate (their persona's own evaluation is
    the group's score; the change and the agreement within the group are undefined)."""
    return [g for g, members in groups_of(personas).items() if len(members) == 1]


# ------------------------------------------------------------------------------ evaluation
@dataclass
class EvaluationRun:
    """The results of :func:`evaluate`: one :class:`ItemResult` per item, in item order."""

    items: list[ItemResult]
    personas: list[Persona]
    dimensions: list[Dimension]
    scale: Scale
    settings: DebateSettings
    task: str
    model: str = ""
    run_id: int | None = None
    reused: int = 0
    item_inputs: list[Item] = field(default_factory=list)
    group_descriptions: dict[str, str] = field(default_factory=dict)
    """group -> description (the one-sentence roles of the simple-role option use it)."""
    finished_at: str = ""
    """When the run's last debate finished ("YYYY-MM-DD HH:MM", local time)."""
    items_source: str = ""
    """Where the items came from (file and sheet), for the results' description."""
    model_settings: dict[str, Any] | None = None
    """Everything else of the model that decides its answers (server, temperature, seed,
    longest answer: :func:`core.llm.identity.answer_settings`); None when not recorded."""

    @property
    def model_used(self) -> dict[str, Any]:
        """The model as the run's settings name it (:func:`core.llm.identity.model_fields`)."""
        from core.llm.identity import model_fields

        return model_fields({"model": self.model, "model_settings": self.model_settings})

    @property
    def model_text(self) -> str:
        """The model and its settings in plain words."""
        from core.llm.identity import describe_model

        return describe_model(self.model_used)

    @property
    def groups(self) -> list[GroupResult]:
        return [g for item in self.items for g in item.groups]

    @property
    def failed_units(self) -> list[GroupResult]:
        return [g for g in self.groups if g.status != "ok"]

    @property
    def copied_units(self) -> list[GroupResult]:
        """Debates with a failure because the model repeated the instructions."""
        return [g for g in self.groups if g.copied]


def simple_roles_text(personas: Sequence[Persona], settings: DebateSettings,
                      descriptions: Mapping[str, str] | None = None) -> str:
    """What the agents of a group are told with the simple-role option (their one-sentence
    roles, one a line); "" without it."""
    if not settings.simple_roles:
        return ""
    return "\n".join(simple_role(p, (descriptions or {}).get(p.group, "")) for p in personas)


def unit_key(item: Item, group: str, personas: Sequence[Persona], roles: str = "") -> str:
    """The key of one (item, group) debate (:func:`core.runs.unit_key`, the one keying scheme):
    ids plus fingerprints of the content and of the group's personas (and of the one-sentence
    ``roles`` with the simple-role option, :func:`simple_roles_text`), so an edited item,
    persona or group description is debated again. Keys are the same as those kept before the
    runs module had them, so an older project resumes its debates."""
    parts = [item.id, group, item.fingerprint(), personas_fingerprint(personas)]
    if roles:
        parts.append(hashlib.sha256(roles.encode("utf-8")).hexdigest()[:16])
    return runs_unit_key(*parts)


DEBATE_PROMPTS = ("agent", "phase1", "debate_turn", "debate_shared", "final_evaluation",
                  "aggregation")


def debate_prompts() -> dict[str, str]:
    """The versions of the debates' prompts (part of what a debate run depends on)."""
    from core.majeval import _prompts

    return {name: _prompts.load(name).template_version for name in DEBATE_PROMPTS}


def run_settings(task: str, dimensions: Sequence[Dimension], scale: Scale,
                 settings: DebateSettings, model: Any) -> dict[str, Any]:
    """What a debate run depends on. ``model``: a ``ModelProfile`` (its name and every setting
    that changes an answer, :func:`core.llm.identity.model_fields`), a model string (the name
    only) or the settings of an earlier run (its model taken as recorded)."""
    from core.llm.identity import model_fields

    return {
        "task": task,
        "dimensions": [d.model_dump(mode="json") for d in dimensions],
        "scale": scale.model_dump(mode="json"),
        "debate": settings.model_dump(mode="json"),
        **model_fields(model),
        "prompts": debate_prompts(),
    }


def refused_items(personas: Sequence[Persona], items: Sequence[Item], task: str,
                  dimensions: Sequence[Dimension], scale: Scale, limits: Any, *,
                  settings: DebateSettings | None = None,
                  descriptions: Mapping[str, str] | None = None) -> list[Any]:
    """The items too long for a model with ``limits`` (an agent's standing instructions with
    the item do not fit), one ``core.llm.context.Overlong`` per item and group; empty when
    every item fits (:func:`core.majeval.debate.too_long`)."""
    if limits is None:
        return []
    return [why for item in items for members in groups_of(personas).values()
            if (why := debate_too_long(members, item, task, dimensions, scale, limits,
                                       settings=settings, descriptions=descriptions))]


async def evaluate_group(personas: Sequence[Persona], item: Item, task: str,
                         dimensions: Sequence[Dimension], scale: Scale, llm: JsonLLM, *,
                         settings: DebateSettings | None = None,
                         role_descriptions: Mapping[str, str] | None = None,
                         cancel: CancelToken | None = None) -> GroupResult:
    """Phases 1-3 for one group (its ``personas``) and one item. ``role_descriptions``
    (group -> description) make the one-sentence roles of the simple-role option."""
    settings = settings or DebateSettings()
    agents = await evaluate_individually(personas, item, task, dimensions, scale, llm,
                                         simple_roles=settings.simple_roles,
                                         role_descriptions=role_descriptions, cancel=cancel)
    debated = await free_debate(personas, item, task, dimensions, scale, llm, agents,
                                settings=settings, role_descriptions=role_descriptions,
                                cancel=cancel)
    return await aggregate(debated, item, task, dimensions, llm, cancel=cancel)


class _Watched:
    """One debate's model: after every answer it writes where the debate is into ``live``."""

    def __init__(self, llm: Any, live: dict[str, str], key: str, agents: int,
                 settings: DebateSettings) -> None:
        self._llm, self._live, self._key = llm, live, key
        self._agents = agents
        self._cap = 0 if settings.no_debate or agents < 2 else settings.rounds * agents
        self._done: dict[str, int] = {}
        self._asked: dict[str, int] = {}
        live[key] = f"judging alone: 0 of {agents}"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    async def complete_json(self, messages: Any, schema: Any, **options: Any) -> Any:
        version = str(options.get("template_version", ""))
        step = next((s for s in ("phase1", "debate_turn", "final_evaluation", "aggregation")
                     if s in version), "")
        asked = self._asked[step] = self._asked.get(step, 0) + 1
        at_most = f" of at most {self._cap}" if self._cap else ""
        if step == "debate_turn":
            self._live[self._key] = f"debating: turn {asked}{at_most}"
        elif step == "final_evaluation":
            self._live[self._key] = f"final evaluations at the turn limit: {asked}"
        elif step == "aggregation":
            self._live[self._key] = "summing up the views"
        reply = await self._llm.complete_json(messages, schema, **options)
        done = self._done[step] = self._done.get(step, 0) + 1
        if step == "phase1":
            self._live[self._key] = f"judging alone: {done} of {self._agents}"
        return reply


async def evaluate(
    personas: Sequence[Persona],
    items: Sequence[Item],
    task: str,
    llm: JsonLLM,
    *,
    dimensions: Sequence[Dimension] | None = None,
    scale: Scale | None = None,
    settings: DebateSettings | None = None,
    model: Any = "",
    store: UnitStore | None = None,
    max_units: int | None = None,
    group_descriptions: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    live: dict[str, str] | None = None,
) -> EvaluationRun:
    """Every item debated by every stakeholder group (see the module docstring).

    ``live`` (unit key -> a line for people): while a debate runs, where it is ("debating:
    turn 4 of at most 9"), updated after every answer and removed when the debate ends, so a
    table of the debates can show each one's progress (issue 28: a debate table read "waiting,
    0 of 6" for 14 minutes while the turns ran).

    ``group_descriptions`` (group -> one sentence on who they are; the grouping stage writes
    them) make the one-sentence roles of the simple-role option.

    ``max_units``: (item, group) units in flight at once (default: four times the gateway's
    concurrency, at least 8: a debate has one call out at a time, so fewer leaves slots idle;
    the benchmark measured 1.6 x the ideal wall time at twice, 1.1 x at four times). On cancel the unfinished units stop, the run is marked cancelled
    and :class:`core.runs.Cancelled` is raised; what finished is kept."""
    dimensions = list(dimensions or [DEFAULT_DIMENSION])
    scale = scale or Scale()
    settings = settings or DebateSettings()
    progress = progress or Progress()
    if not personas:
        raise ValueError("There are no personas: create or import them first.")
    if not items:
        raise ValueError("There are no items to evaluate.")
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        repeated = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise ValueError("Each item needs its own id; repeated: " + ", ".join(repeated))
    names = [d.name for d in dimensions]
    if len(set(names)) != len(names):
        raise ValueError("Each dimension needs its own name.")
    by_group = groups_of(personas)
    units = [(item, group) for item in items for group in by_group]
    if max_units is None:
        max_units = units_at_once(llm, 4, least=8)

    descriptions = dict(group_descriptions or {})
    refused = refused_items(personas, items, task, dimensions, scale,
                            await context.limits_for(llm), settings=settings,
                            descriptions=descriptions)
    if refused:  # before any call: an item longer than the model reads cannot be debated
        raise context.TooLong(context.refusal(refused))
    roles = {g: simple_roles_text(members, settings, descriptions)
             for g, members in by_group.items()}
    keys = {(item.id, group): unit_key(item, group, by_group[group], roles[group])
            for item, group in units}

    async def work(unit: tuple[Item, str]) -> GroupResult:
        item, group = unit
        members = by_group[group]
        if live is None:
            return await evaluate_group(members, item, task, dimensions, scale, llm,
                                        settings=settings, role_descriptions=descriptions,
                                        cancel=cancel)
        key = keys[(item.id, group)]
        watched = _Watched(llm, live, key, len(members), settings)
        try:
            return await evaluate_group(members, item, task, dimensions, scale, watched,
                                        settings=settings, role_descriptions=descriptions,
                                        cancel=cancel)
        finally:
            live.pop(key, None)

    def describe(unit: tuple[Item, str], result: GroupResult) -> str:
        turns = sum(1 for t in result.turns if t.kind == "debate")
        return f"item {unit[0].id}, {unit[1]}: " + (
            "failed" if result.status == "failed" else f"{turns} turns")

    outcomes = await run_units(
        [(keys[(item.id, group)], (item, group)) for item, group in units], work,
        judge=lambda r: (r.status == "ok", r.error or "The debate failed."),
        dump=lambda r: r.model_dump(mode="json"),
        load=lambda payload, _unit: GroupResult.model_validate(payload),
        store=store, limit=max(1, max_units), title="Debating in stakeholder groups",
        describe=describe, what="debates", progress=progress, cancel=cancel)
    found = {o.key: o.value for o in outcomes}
    results: list[ItemResult] = []
    for item in items:
        groups = [found[keys[(item.id, g)]] for g in by_group]
        results.append(combine_groups(item.id, groups, dimensions))
    from core.llm.identity import model_fields

    used = model_fields(model)
    run = EvaluationRun(items=results, personas=list(personas), dimensions=dimensions,
                        scale=scale, settings=settings, task=task, model=used["model"],
                        model_settings=used.get("model_settings"),
                        run_id=getattr(store, "run_id", None),
                        reused=sum(1 for o in outcomes if o.reused), item_inputs=list(items),
                        group_descriptions={g: descriptions.get(g, "") for g in by_group},
                        finished_at=datetime.now().strftime("%Y-%m-%d %H:%M"))
    return run
