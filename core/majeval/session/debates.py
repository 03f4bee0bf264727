"""MAJ-Eval's debates in the project (stage 3): the run of the current choices started or
resumed (each finished debate kept at once, so a cancelled or crashed run goes on where it
stopped), its estimate before, its progress per debate while it runs, and its results read back
without a model call (None when the personas, items or options changed since)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from core.llm.context import limits_of
from core.llm.estimate import Estimate, Latency, StagePlan, estimate, measured_latency
from core.llm.identity import model_differences
from core.llm.repeats import with_repeat
from core.majeval.aggregation import combine_groups
from core.majeval.estimate import plan_for_state
from core.majeval.model import (
    DebateSettings,
    Dimension,
    GroupResult,
    JsonLLM,
    Persona,
    RunModel,
    Scale,
    persona_problem,
    personas_fingerprint,
)
from core.majeval.pipeline import (
    METHOD,
    RESULT_KIND,
    STEP_DEBATE,
    EvaluationRun,
    debate_prompts,
    evaluate,
    groups_of,
    refused_items,
    run_settings,
    simple_roles_text,
    unit_key,
)
from core.majeval.session.choices import MajEvalChoices, save_choices
from core.majeval.session.items import items_source
from core.majeval.session.personas import group_descriptions, load_personas
from core.project.inputs import fingerprint
from core.project.units import RunUnits
from core.runs import CancelToken, Progress
from core.settings import ModelProfile

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project, Result, Run

__all__ = [
    "ESTIMATE_ARTEFACT",
    "DebateUnits",
    "check_ready",
    "current_run",
    "estimate_run",
    "keep_estimate",
    "kept_estimate",
    "load_run",
    "open_evaluation_run",
    "repeat_settings",
    "run_debates",
    "run_differences",
    "run_progress",
    "unit_keys",
    "unit_statuses",
]


def repeat_settings(settings: dict[str, Any], repeat: int) -> dict[str, Any]:
    """A run's settings for repeat ``repeat`` (repeat 0: unchanged, so earlier runs are
    repeat 0; see :mod:`core.llm.repeats`)."""
    return {**settings, "repeat": int(repeat)} if repeat else settings


def open_evaluation_run(project: Project, task: str, dimensions: Sequence[Dimension],
                        scale: Scale, settings: DebateSettings, model: RunModel, *,
                        repeat: int = 0) -> int:
    """Start (or, with identical settings, reopen) the project run :func:`evaluate` commits to.
    Call it first when the gateway should log its calls under this run. ``repeat`` k > 0: the
    run of repeat k (its own run; every call uses repeat index k)."""
    return project.start_run(METHOD, STEP_DEBATE, repeat_settings(
        run_settings(task, dimensions, scale, settings, model), repeat), resume=True)


def check_ready(project: Project, choices: MajEvalChoices) -> list[Persona]:
    """The personas of a run; ``ValueError`` saying what is missing first (personas, complete
    ones, items)."""
    personas = load_personas(project)
    if not personas:
        raise ValueError("There are no personas yet: create them (page 3) or import them "
                         "(page 4) first.")
    incomplete = [f"{p.name or 'a persona without a name'} ({p.group}): {persona_problem(p)}"
                  for p in personas if persona_problem(p)]
    if incomplete:
        raise ValueError("These personas are not complete, so they cannot take part in a debate: "
                         + "; ".join(incomplete[:5])
                         + ("; and more" if len(incomplete) > 5 else "")
                         + ". Fill them in on the personas page (page 4), or delete them.")
    if not choices.item_list:
        raise ValueError("There are no items: choose the items file and its columns (page 5).")
    return personas


class DebateUnits(RunUnits):
    """The debates of a run in the project. When the project was closed under a running run
    (the user opened another one), the run's end cannot be recorded; every debate that
    finished is kept already, and the next run with the same choices resumes."""

    def end(self, status: str, message: str) -> None:
        if not getattr(self.project, "closed", False):
            super().end(status, message)


async def run_debates(
    project: Project,
    choices: MajEvalChoices,
    llm_for_run: Callable[[int], JsonLLM],
    *,
    model: RunModel = "",
    max_units: int | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    repeat: int = 0,
    live: dict[str, str] | None = None,
) -> EvaluationRun:
    """Stage 3 for every item and group with the stored personas (the engine's
    :func:`core.majeval.evaluate`, committed per debate; a resumed run repeats no finished
    debate). ``llm_for_run(run_id)`` makes the model that logs its calls under the run.
    ``repeat`` k > 0 runs repeat k: its own run, every call with repeat index k (the choices'
    ``run_id`` stays the one of repeat 0). ``live``: where each running debate is (see
    :func:`core.majeval.evaluate`; :func:`unit_statuses` shows it)."""
    personas = check_ready(project, choices)
    run_id = open_evaluation_run(project, choices.task, choices.dimensions, choices.scale,
                                 choices.settings, model, repeat=repeat)
    if not repeat:
        choices.run_id = run_id
        save_choices(project, choices)
    run = await evaluate(personas, choices.item_list, choices.task,
                         with_repeat(llm_for_run(run_id), repeat),
                         dimensions=choices.dimensions, scale=choices.scale,
                         settings=choices.settings, model=model,
                         store=DebateUnits(project, run_id, RESULT_KIND),
                         max_units=max_units, group_descriptions=group_descriptions(project),
                         progress=progress, cancel=cancel, live=live)
    run.items_source = items_source(choices)
    return run


#: The estimate made before a run (key: the run's id), shown beside what the run used.
ESTIMATE_ARTEFACT = "majeval.estimate"


def estimate_run(project: Project, choices: MajEvalChoices, profile: ModelProfile, *,
                 latency: Latency | None = None, repeats: int = 1) -> Estimate:
    """What :func:`run_debates` with ``profile`` will take (:class:`core.llm.estimate.Estimate`):
    calls, tokens, cost and time of the debates not yet kept in the project (``repeats`` N:
    of repeats 0..N-1 together). ``latency`` (a
    :class:`core.llm.estimate.Latency`, e.g. from one probe call) overrides the latency the
    project recorded for this model. Items too long for the model are listed in ``too_long``
    (the run refuses them). Raises ValueError when there are no personas or items. No model is
    called (a server may be asked its context window)."""
    personas = check_ready(project, choices)
    limits = limits_of(profile)
    descriptions = group_descriptions(project)
    plan: list[StagePlan] = []
    skipped = 0
    for repeat in range(max(1, repeats)):
        run = current_run(project, choices, profile, repeat=repeat)
        done = project.finished_keys(run.id, RESULT_KIND) if run is not None else set()
        stages, n = plan_for_state(personas, choices, descriptions, done, limits)
        for stage in stages:
            stage.name += f" (repeat {repeat})" if repeat else ""
        plan += stages
        skipped += n
    latency = latency or measured_latency(project, profile.model)
    est = estimate(plan, profile, latency=latency, done_already=skipped, done_what="debates")
    est.too_long = refused_items(personas, choices.item_list, choices.task, choices.dimensions,
                                 choices.scale, limits, settings=choices.settings,
                                 descriptions=descriptions)
    return est


def keep_estimate(project: Project, run_id: int, est: Estimate) -> None:
    """Keep the estimate made before run ``run_id`` (to show it beside the actual figures)."""
    project.put_artefact(ESTIMATE_ARTEFACT, str(run_id), asdict(est), origin="generated")


def kept_estimate(project: Project, run_id: int | None) -> dict[str, Any] | None:
    """The estimate kept for run ``run_id`` (a dict of :class:`core.llm.estimate.Estimate`'s
    fields), or None."""
    if run_id is None:
        return None
    artefact = project.get_artefact(ESTIMATE_ARTEFACT, str(run_id))
    return dict(artefact.payload) if artefact is not None else None


def current_run(project: Project, choices: MajEvalChoices, model: RunModel = None, *,
                repeat: int = 0) -> Run | None:
    """The debate run of the current choices (task, dimensions, scale, debate options, the
    prompts' versions and, when given, ``model``: the chosen profile, whose name and settings
    must be those of the run): the one :func:`run_debates` would resume; None when there is
    none. With ``model`` None, the run last started counts when its other choices are the
    current ones. ``repeat``: the run of that repeat (0: the ordinary run)."""
    if model is not None:
        return project.find_run(METHOD, STEP_DEBATE, repeat_settings(run_settings(
            choices.task, choices.dimensions, choices.scale, choices.settings, model), repeat))
    if choices.run_id is None:
        return None
    run = project.get_run(choices.run_id)
    if run is None or run.method != METHOD or run.step != STEP_DEBATE:
        return None
    recorded = dict(run.settings or {})
    if repeat:
        return current_run(project, choices, recorded, repeat=repeat)
    wanted = run_settings(choices.task, choices.dimensions, choices.scale, choices.settings,
                          recorded)
    return run if fingerprint(run.settings) == fingerprint(wanted) else None


def unit_keys(project: Project, choices: MajEvalChoices, by_group: dict[str, list[Persona]]
              ) -> dict[tuple[str, str], str]:
    """(item id, group) -> the project key of that debate with the current choices."""
    about = group_descriptions(project)
    roles = {g: simple_roles_text(members, choices.settings, about)
             for g, members in by_group.items()}
    return {(item.id, g): unit_key(item, g, members, roles[g])
            for item in choices.item_list for g, members in by_group.items()}


def run_progress(project: Project, choices: MajEvalChoices, model: RunModel = None, *,
                 repeat: int = 0) -> tuple[int, int]:
    """(debates finished, debates in all) with the current personas, items and choices
    (``model``: see :func:`current_run`; ``repeat``: of that repeat run); a run made with other
    choices counts for nothing."""
    by_group = groups_of(load_personas(project))
    total = len(choices.item_list) * len(by_group)
    run = current_run(project, choices, model, repeat=repeat)
    if run is None or not total:
        return 0, total
    done = project.finished_keys(run.id, RESULT_KIND)
    return len(set(unit_keys(project, choices, by_group).values()) & done), total


def local_time(iso: str | None) -> str:
    """An ISO moment as the local "YYYY-MM-DD HH:MM" ("" for none)."""
    if not iso:
        return ""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def load_run(project: Project, choices: MajEvalChoices, model: RunModel = None, *,
             repeat: int = 0) -> EvaluationRun | None:
    """The results of the current choices from the project, without asking any model; None
    when there is none, a debate is missing, or the personas, items or options (and, when
    given, the ``model``) changed since. ``repeat``: the results of that repeat run."""
    if not choices.item_list:
        return None
    run = current_run(project, choices, model, repeat=repeat)
    if run is None:
        return None
    settings = run.settings or {}
    personas = load_personas(project)
    by_group = groups_of(personas)
    if not by_group:
        return None
    keys = unit_keys(project, choices, by_group)
    stored = {r.key: r for r in project.get_results(run.id, RESULT_KIND)}
    results = []
    for item in choices.item_list:
        groups: list[GroupResult] = []
        for group in by_group:
            found = stored.get(keys[(item.id, group)])
            if found is None:
                return None
            try:
                groups.append(GroupResult.model_validate(found.payload))
            except ValidationError:
                return None
        results.append(combine_groups(item.id, groups, choices.dimensions))
    about = group_descriptions(project)
    return EvaluationRun(items=results, personas=personas, dimensions=list(choices.dimensions),
                         scale=choices.scale, settings=choices.settings, task=choices.task,
                         model=str(settings.get("model", "")), run_id=run.id,
                         model_settings=settings.get("model_settings"),
                         reused=len(results) * len(by_group),
                         item_inputs=list(choices.item_list),
                         group_descriptions={g: about.get(g, "") for g in by_group},
                         finished_at=local_time(run.finished_at or run.started_at),
                         items_source=items_source(choices))


def run_differences(project: Project, choices: MajEvalChoices, run: EvaluationRun,
                    model: RunModel = None) -> list[str]:
    """What differs between the choices that produced ``run`` and the current ones, in plain
    words ("the simple-roles option", "the model", "the seed (0 then, 7 now)", ...); empty when
    the run is current. ``model``: the chosen profile (None: not compared)."""
    out = []
    if run.task.strip() != choices.task.strip():
        out.append("the task description")
    if [d.model_dump() for d in run.dimensions] != [d.model_dump() for d in choices.dimensions]:
        out.append("the dimensions")
    if run.scale.model_dump() != choices.scale.model_dump():
        out.append("the scale")
    then, now = run.settings, choices.settings
    if then.rounds != now.rounds:
        out.append(f"the debate rounds ({then.rounds} then, {now.rounds} now)")
    if then.no_debate != now.no_debate:
        out.append("the no-debate option")
    if then.simple_roles != now.simple_roles:
        out.append("the simple-roles option")
    if model is not None:
        out += model_differences(run.model_used, model)
    if run.run_id is not None:
        stored = project.get_run(run.run_id)
        prompts = (stored.settings or {}).get("prompts") if stored is not None else None
        if prompts != debate_prompts():
            out.append("EvalDesk's debate prompts (changed since)" if prompts else
                       "the debate prompts' version (not recorded with these results)")
    if [(i.id, i.fingerprint(), i.human) for i in run.item_inputs] != \
            [(i.id, i.fingerprint(), i.human) for i in choices.item_list]:
        out.append("the items")
    personas = load_personas(project)
    if personas_fingerprint(run.personas) != personas_fingerprint(personas) or \
            [p.group for p in run.personas] != [p.group for p in personas]:
        out.append("the personas")
    elif now.simple_roles:
        about = group_descriptions(project)
        if any(run.group_descriptions.get(g, "") != about.get(g, "")
               for g in groups_of(personas)):
            out.append("the group descriptions (used by the simple roles)")
    return out


def unit_statuses(project: Project, choices: MajEvalChoices, model: RunModel = None,
                  live: Mapping[str, str] | None = None) -> list[dict[str, str]]:
    """One row per (item, group) debate with the current choices (``model``: see
    :func:`current_run`): "finished", "failed" (with the reason), "running" (with where it is,
    from ``live``: see :func:`run_debates`) or "waiting", for the run page's progress table."""
    by_group = groups_of(load_personas(project))
    run = current_run(project, choices, model)
    stored: dict[str, Result] = {}
    if run is not None:
        stored = {r.key: r for r in project.get_results(run.id, RESULT_KIND)}
    keys = unit_keys(project, choices, by_group)
    rows = []
    for item in choices.item_list:
        for group in by_group:
            key = keys[(item.id, group)]
            found = stored.get(key)
            if found is None and live and key in live:
                status, note = "running", live[key]
            elif found is None:
                status, note = "waiting", ""
            elif found.status == "ok":
                turns = sum(1 for t in (found.payload or {}).get("turns", [])
                            if t.get("kind") == "debate")
                status, note = "finished", f"{turns} debate turns"
            else:
                status, note = "failed", found.error or "failed"
            rows.append({"item": item.id, "group": group, "status": status, "note": note})
    return rows
