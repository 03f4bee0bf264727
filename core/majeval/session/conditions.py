"""MAJ-Eval's conditions in the project (the paper's Section 5 on the user's own data): the
debate conditions are debates with other options (:mod:`core.majeval.session.debates`), the
single judge is a run of its own; what is kept is read back without a call, and the stored
choices are never replaced by a condition's options. The comparison itself is pure
(:mod:`core.majeval.conditions`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import ValidationError

from core.llm.context import Overlong, limits_of
from core.llm.estimate import Estimate, Latency, StagePlan, estimate, measured_latency
from core.llm.repeats import with_repeat
from core.majeval import _prompts
from core.majeval.conditions import (
    SINGLE_KIND,
    STEP_SINGLE,
    ConditionResult,
    debate_settings,
    from_debates,
    from_judge,
    single_settings,
)
from core.majeval.estimate import plan_for_state
from core.majeval.model import JsonLLM, RunModel, evaluation_schema
from core.majeval.pipeline import METHOD, RESULT_KIND, refused_items
from core.majeval.session.choices import MajEvalChoices, save_choices
from core.majeval.session.debates import current_run, load_run, run_debates
from core.majeval.session.personas import group_descriptions, load_personas
from core.majeval.single_judge import TEMPLATE as JUDGE_TEMPLATE
from core.majeval.single_judge import JudgeResult, judge_key, judge_values, single_judge
from core.majeval.single_judge import refused_items as refused_for_judge
from core.project.units import RunUnits
from core.runs import CancelToken, Progress
from core.settings import ModelProfile

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "estimate_conditions",
    "load_conditions",
    "missing_conditions",
    "run_conditions",
    "with_settings",
]

def with_settings(choices: MajEvalChoices, simple: bool) -> MajEvalChoices:
    """A copy of ``choices`` with the debate options of a debate condition (``simple``: the
    simple roles); ``choices`` itself is not changed."""
    return choices.model_copy(update={"settings": debate_settings(choices.settings, simple)},
                              deep=True)


def _debates(names: Sequence[str]) -> list[bool]:
    """The debate runs the conditions ``names`` need (False: full personas, True: simple
    roles); ``pre`` comes with ``full``'s debates."""
    out = []
    if "full" in names or "pre" in names:
        out.append(False)
    if "simple" in names:
        out.append(True)
    return out


def stored_judge(project: Project, choices: MajEvalChoices, model: RunModel, repeat: int = 0
                 ) -> ConditionResult | None:
    """The single judge's results of every item kept in the project for ``model``; None when
    an item has none."""
    run = project.find_run(METHOD, STEP_SINGLE, single_settings(
        choices.task, choices.dimensions, choices.scale, model, repeat))
    if run is None:
        return None
    stored = {r.key: r for r in project.get_results(run.id, SINGLE_KIND)}
    results = []
    for item in choices.item_list:
        found = stored.get(judge_key(item))
        if found is None:
            return None
        try:
            result = JudgeResult.model_validate(found.payload)
        except ValidationError:
            return None
        if found.status != "ok" and result.status == "ok":
            result = result.model_copy(update={"status": "failed", "scores": {},
                                               "error": found.error or "failed"})
        results.append(result)
    out = from_judge(choices.dimensions, results, run.id, model)
    out.complete = not out.failed
    return out


def load_conditions(project: Project, choices: MajEvalChoices, names: Sequence[str],
                    model: RunModel, *, repeat: int = 0) -> dict[str, ConditionResult]:
    """The conditions among ``names`` with a result for every item in the project with the
    current choices and ``model`` (no model call); a condition not yet run (or changed since)
    is left out; one whose items partly failed is in, with ``complete`` False and the
    failures (they are never given a score). ``repeat``: the results of that repeat run."""
    out: dict[str, ConditionResult] = {}
    for name in names:
        if name in ("full", "pre", "simple"):
            run = load_run(project, with_settings(choices, name == "simple"), model,
                           repeat=repeat)
            if run is not None:
                out[name] = from_debates(name, run, before=name == "pre")
                out[name].complete = not run.failed_units
        elif name == "single-judge":
            found = stored_judge(project, choices, model, repeat)
            if found is not None:
                out[name] = found
    return out


def missing_conditions(project: Project, choices: MajEvalChoices, names: Sequence[str],
                       model: RunModel) -> list[str]:
    """The conditions among ``names`` that still need a run (never run, or items failed)."""
    have = load_conditions(project, choices, names, model)
    return [n for n in names if n not in have or not have[n].complete]


async def run_conditions(
    project: Project,
    choices: MajEvalChoices,
    llm_for_run: Callable[[int], JsonLLM],
    names: Sequence[str],
    *,
    model: RunModel = "",
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    repeat: int = 0,
) -> dict[str, ConditionResult]:
    """Run the conditions among ``names`` (``pre`` comes with ``full``'s debates): what is
    already kept is read back without a call, the rest is run and kept. The stored choices
    (``choices``) are left as they were. Returns every condition asked for, complete or (when
    some of its items failed) with the failures. ``repeat`` k > 0: repeat k of every call
    (kept as its own runs; see :mod:`core.majeval.repeats`)."""
    results: dict[str, ConditionResult] = {}
    try:
        for simple in _debates(names):
            run = await run_debates(project, with_settings(choices, simple), llm_for_run,
                                    model=model, progress=progress, cancel=cancel,
                                    repeat=repeat)
            if simple:
                results["simple"] = from_debates("simple", run, before=False)
            else:
                if "full" in names:
                    results["full"] = from_debates("full", run, before=False)
                if "pre" in names:
                    results["pre"] = from_debates("pre", run, before=True)
    finally:
        save_choices(project, choices)  # the conditions' settings never replace the user's
    if "single-judge" in names:
        if not choices.item_list:
            raise ValueError("There are no items: choose the items file and its columns.")
        run_id = project.start_run(METHOD, STEP_SINGLE, single_settings(
            choices.task, choices.dimensions, choices.scale, model, repeat), resume=True)
        judged = await single_judge(choices.item_list, choices.task, choices.dimensions,
                                    choices.scale, with_repeat(llm_for_run(run_id), repeat),
                                    store=RunUnits(project, run_id, SINGLE_KIND),
                                    progress=progress, cancel=cancel)
        results["single-judge"] = from_judge(choices.dimensions, judged, run_id, model)
    return {n: results[n] for n in names if n in results}


def estimate_conditions(project: Project, choices: MajEvalChoices, names: Sequence[str],
                        profile: ModelProfile, *, latency: Latency | None = None,
                        repeats: int = 1) -> Estimate:
    """The estimate (:mod:`core.llm.estimate`) of :func:`run_conditions`: the debates still to
    run for each debate condition, and one call per item not yet judged for the single judge;
    with ``repeats`` N, of repeats 0..N-1 together (what each repeat still has to do)."""
    plan: list[StagePlan] = []
    skipped = 0
    personas = load_personas(project)
    descriptions = group_descriptions(project)
    limits = limits_of(profile)
    too_long: list[Overlong] = []
    for repeat in range(max(1, repeats)):
        for simple in _debates(names):
            copy = with_settings(choices, simple)
            run = current_run(project, copy, profile, repeat=repeat)
            done = project.finished_keys(run.id, RESULT_KIND) if run is not None else set()
            stages, n = plan_for_state(personas, copy, descriptions, done, limits)
            too_long += refused_items(personas, copy.item_list, copy.task, copy.dimensions,
                                      copy.scale, limits, settings=copy.settings,
                                      descriptions=descriptions)
            for stage in stages:
                stage.name = ("simple roles: " if simple else "full personas: ") + stage.name
                if repeat:
                    stage.name += f" (repeat {repeat})"
            plan += stages
            skipped += n
    for repeat in range(max(1, repeats)) if "single-judge" in names else ():
        run = project.find_run(METHOD, STEP_SINGLE, single_settings(
            choices.task, choices.dimensions, choices.scale, profile, repeat))
        done = project.finished_keys(run.id, SINGLE_KIND) if run is not None else set()
        template = _prompts.load(JUDGE_TEMPLATE)
        refused = refused_for_judge(choices.item_list, choices.task, choices.dimensions,
                                    choices.scale, limits)
        too_long += refused
        todo = [i for i in choices.item_list if judge_key(i) not in done]
        if refused:
            todo = []  # refused before the run
        skipped += len(choices.item_list) - len(todo)
        if todo:
            plan.append(StagePlan("single judge" + (f" (repeat {repeat})" if repeat else ""), [
                template.messages(**judge_values(i, choices.task, choices.dimensions,
                                                 choices.scale))
                for i in todo], evaluation_schema(choices.dimensions, choices.scale)))
    latency = latency or measured_latency(project, profile.model)
    est = estimate(plan, profile, latency=latency, done_already=skipped,
                   done_what="debates and judged items")
    est.too_long = list(dict.fromkeys(too_long))
    return est
