"""MAJ-Eval end to end: personas from documents (stages 1-2), then the debates (stage 3).

The wizard runs the stages one at a time (each a coroutine in its own module; each result can
be edited before the next); :func:`create_personas` and :func:`evaluate` run them in a row for
the CLI and tests.

:func:`evaluate` runs one unit of work per (item, stakeholder group): phase 1 of all agents
concurrently, the debate turn by turn, then phase 3. Units run concurrently (at most
``max_units`` at a time, so early items finish early and are committed), and every model call
is bounded by the gateway's own concurrency limit. With a project, each finished unit is
committed at once, so a cancelled or crashed run resumes where it stopped: finished units are
read back, unfinished ones replay their calls from the LLM cache (the project) and only the
missing calls reach the model. A unit with any failure is stored as failed (with its partial
result) and tried again on the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.majeval.aggregation import aggregate, combine_groups
from core.majeval.debate import evaluate_individually, free_debate
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
from core.majeval.persona_construction import (
    PersonaConstruction,
    construct_personas,
    simple_role,
)
from core.majeval.perspective_extraction import (
    PerspectiveExtraction,
    extract_perspectives,
    people_named,
)
from core.majeval.stakeholder_grouping import group_stakeholders
from core.runs import Cancelled, CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.documents import Document
    from core.project import Project

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
    "edit_persona",
    "evaluate",
    "evaluate_group",
    "groups_of",
    "load_groups",
    "load_personas",
    "lonely_groups",
    "open_evaluation_run",
    "save_groups",
    "save_personas",
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


async def _group_and_construct(
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
    project: Project | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> PersonaCreation:
    """Perspective extraction for every document (concurrently), stakeholder grouping, persona
    construction. ``context_window``/``answer_tokens`` default to the gateway's profile. With
    ``project``, the documents, perspectives, groups and personas are stored as artefacts
    (the LLM answers are in its cache, so a re-run makes no calls). Raises
    :class:`StageError` when no persona could be made."""
    progress = progress or Progress()
    profile = getattr(llm, "profile", None)
    window = context_window or getattr(profile, "context_window", 8192)
    answer = answer_tokens or getattr(profile, "max_tokens", 1024)
    extractions = list(await asyncio.gather(*(
        extract_perspectives(doc, task, llm, context_window=window, answer_tokens=answer,
                             progress=progress, cancel=cancel) for doc in documents)))
    failures = [f for e in extractions for f in e.failures]
    stakeholders = [s for e in extractions for s in e.stakeholders]
    groups, built = await _group_and_construct(stakeholders, failures, task, llm,
                                               progress=progress, cancel=cancel,
                                               documents=documents)
    failures += built.failures
    if project is not None:
        with project.transaction():
            for doc in documents:
                project.put_artefact(DOCUMENT_ARTEFACT, doc.name, doc.to_dict())
            for e in extractions:
                project.put_artefact(PERSPECTIVES_ARTEFACT, e.document,
                                     [s.model_dump(mode="json") for s in e.stakeholders])
            save_groups(project, groups)
            save_personas(project, built.personas)
    return PersonaCreation(extractions, groups, built.personas, failures)


def save_groups(project: Project, groups: Sequence[StakeholderGroup], *,
                origin: str = "generated") -> None:
    project.put_artefact(GROUPS_ARTEFACT, "groups",
                         [g.model_dump(mode="json") for g in groups], origin=origin)  # type: ignore[arg-type]


def load_groups(project: Project) -> list[StakeholderGroup]:
    found = project.get_artefact(GROUPS_ARTEFACT, "groups")
    return [StakeholderGroup.model_validate(g) for g in (found.payload if found else [])]


def save_personas(project: Project, personas: Sequence[Persona], *,
                  origin: str = "generated", overwrite_edits: bool = False) -> None:
    """Store each persona as an artefact (key = persona id). A persona a person has edited is
    kept as it is unless ``overwrite_edits``. A person's change goes through
    :func:`edit_persona`, which records who and when."""
    with project.transaction():
        for p in personas:
            stored = project.get_artefact(PERSONA_ARTEFACT, p.id)
            if stored is not None and stored.edited and not overwrite_edits:
                continue
            project.put_artefact(PERSONA_ARTEFACT, p.id, p.model_dump(mode="json"),
                                 origin=origin)  # type: ignore[arg-type]


def load_personas(project: Project) -> list[Persona]:
    """The stored personas in the order first stored; ``edited``/``origin`` from the project."""
    out = []
    for artefact in project.list_artefacts(PERSONA_ARTEFACT):
        persona = Persona.model_validate(artefact.payload)
        out.append(persona.model_copy(update={"edited": artefact.edited or persona.edited,
                                              "origin": artefact.origin}))
    return out


def edit_persona(project: Project, persona: Persona, field_name: str, new: Any,
                 who: str) -> Persona:
    """A person changes one field of a stored persona (``"specialty"``, ``"group"``, ...);
    the edit is logged with who and when. Returns the updated persona."""
    artefact = project.record_edit((PERSONA_ARTEFACT, persona.id), field_name,
                                   getattr(persona, field_name), new, who)
    return Persona.model_validate(artefact.payload).model_copy(update={"edited": True})


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
    """The project key of one (item, group) debate: ids plus fingerprints of the content and
    of the group's personas (and of the one-sentence ``roles`` with the simple-role option,
    :func:`simple_roles_text`), so an edited item, persona or group description is debated
    again."""
    key = [item.id, group, item.fingerprint(), personas_fingerprint(personas)]
    if roles:
        key.append(hashlib.sha256(roles.encode("utf-8")).hexdigest()[:16])
    return json.dumps(key, ensure_ascii=False)


def _run_settings(task: str, dimensions: Sequence[Dimension], scale: Scale,
                  settings: DebateSettings, model: str) -> dict[str, Any]:
    return {
        "task": task,
        "dimensions": [d.model_dump(mode="json") for d in dimensions],
        "scale": scale.model_dump(mode="json"),
        "debate": settings.model_dump(mode="json"),
        "model": model,
    }


def open_evaluation_run(project: Project, task: str, dimensions: Sequence[Dimension],
                        scale: Scale, settings: DebateSettings, model: str) -> int:
    """Start (or, with identical settings, reopen) the project run :func:`evaluate` commits to.
    Call it first when the gateway should log its calls under this run."""
    return project.start_run(METHOD, STEP_DEBATE,
                             _run_settings(task, dimensions, scale, settings, model), resume=True)


async def evaluate_group(
    personas: Sequence[Persona],
    item: Item,
    task: str,
    dimensions: Sequence[Dimension],
    scale: Scale,
    llm: JsonLLM,
    *,
    settings: DebateSettings | None = None,
    role_descriptions: Mapping[str, str] | None = None,
    cancel: CancelToken | None = None,
) -> GroupResult:
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


async def evaluate(
    personas: Sequence[Persona],
    items: Sequence[Item],
    task: str,
    llm: JsonLLM,
    *,
    dimensions: Sequence[Dimension] | None = None,
    scale: Scale | None = None,
    settings: DebateSettings | None = None,
    model: str = "",
    project: Project | None = None,
    run_id: int | None = None,
    max_units: int | None = None,
    group_descriptions: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> EvaluationRun:
    """Every item debated by every stakeholder group (see the module docstring).

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
        concurrency = getattr(getattr(llm, "profile", None), "max_concurrency", 4)
        max_units = max(8, 4 * int(concurrency))

    done: dict[str, GroupResult] = {}
    if project is not None:
        if run_id is None:
            run_id = open_evaluation_run(project, task, dimensions, scale, settings, model)
        for stored in project.get_results(run_id, RESULT_KIND, status="ok"):
            done[stored.key] = GroupResult.model_validate(stored.payload)
    descriptions = dict(group_descriptions or {})
    roles = {g: simple_roles_text(members, settings, descriptions)
             for g, members in by_group.items()}
    keys = {(item.id, group): unit_key(item, group, by_group[group], roles[group])
            for item, group in units}
    reused = sum(1 for key in keys.values() if key in done)
    progress.start("Debating in stakeholder groups", total=len(units))
    if reused:
        progress.advance(reused, f"{reused} debates already finished in an earlier run")

    gate = asyncio.Semaphore(max(1, max_units))

    async def one(item: Item, group: str) -> GroupResult:
        async with gate:
            if cancel is not None:
                cancel.raise_if_cancelled()
            result = await evaluate_group(by_group[group], item, task, dimensions, scale, llm,
                                          settings=settings, role_descriptions=descriptions,
                                          cancel=cancel)
        if project is not None and run_id is not None:
            payload = result.model_dump(mode="json")
            if result.status == "ok":
                project.put_result(run_id, RESULT_KIND, keys[(item.id, group)], payload)
            else:
                project.put_result(run_id, RESULT_KIND, keys[(item.id, group)], payload,
                                   status="failed", error=result.error or "The debate failed.")
        turns = sum(1 for t in result.turns if t.kind == "debate")
        progress.advance(1, f"item {item.id}, {group}: "
                            + ("failed" if result.status == "failed" else f"{turns} turns"))
        return result

    todo = [(item, group) for item, group in units if keys[(item.id, group)] not in done]
    tasks = [asyncio.ensure_future(one(item, group)) for item, group in todo]
    try:
        if tasks:
            await asyncio.gather(*tasks)
    except BaseException as exc:
        for task_ in tasks:
            task_.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if project is not None and run_id is not None:
            if isinstance(exc, (Cancelled, asyncio.CancelledError)):
                project.finish_run(run_id, "cancelled", "Stopped; finished debates were kept.")
            else:
                project.finish_run(run_id, "failed", "Stopped by an unexpected error.")
        raise
    fresh = {keys[(item.id, group)]: t.result() for (item, group), t in zip(todo, tasks)}
    results: list[ItemResult] = []
    for item in items:
        groups = [fresh.get(keys[(item.id, g)]) or done[keys[(item.id, g)]] for g in by_group]
        results.append(combine_groups(item.id, groups, dimensions))
    run = EvaluationRun(items=results, personas=list(personas), dimensions=dimensions,
                        scale=scale, settings=settings, task=task, model=model, run_id=run_id,
                        reused=reused, item_inputs=list(items),
                        group_descriptions={g: descriptions.get(g, "") for g in by_group},
                        finished_at=datetime.now().strftime("%Y-%m-%d %H:%M"))
    if project is not None and run_id is not None:
        failed = len(run.failed_units)
        project.finish_run(run_id, "finished",
                           f"{len(units) - failed} debates finished, {failed} with failures")
    return run
