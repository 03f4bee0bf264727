"""InteractEval's conditions side by side in a project (the paper's main result, on the user's
own texts): checklists built from the people's notes only, the models' think-aloud only and both,
each scoring the same texts, and optionally a single judge with no checklist. Each condition's
checklist is kept with the hash of what it was built from, and each scoring is a project run, so
an unchanged condition costs nothing to show again and a cancelled one resumes. The comparison
itself (statistics, the workbook's sheets) is :mod:`core.interacteval.conditions` (pure).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from core.interacteval import _prompts
from core.interacteval.checklist_scoring import refused_texts
from core.interacteval.conditions import (
    CHECKLIST_CONDITIONS,
    CONDITIONS,
    build_conditions,
    comparison_rows,
    write_comparison,
)
from core.interacteval.estimate import (
    build_refusals,
    combine,
    guessed_checklist,
    plan_build,
    plan_single_judge,
)
from core.interacteval.estimate import plan_scoring as plan_scoring_calls
from core.interacteval.grounded import uses_grounded_path
from core.interacteval.inputs import read_texts
from core.interacteval.model import (
    Checklist,
    Dimension,
    JsonLLM,
    ScoringSettings,
    TextItem,
    TextScore,
)
from core.interacteval.pipeline import METHOD, RESULT_KIND, STEP_SCORE, run_settings, unit_key
from core.interacteval.repeats import MAX_REPEATS, repeat_settings, stability, stability_sheet
from core.interacteval.session.choices import (
    InteractEvalChoices,
    person,
    texts_file,
    texts_line,
)
from core.interacteval.session.scoring import open_scoring_run, run_samples, score_texts
from core.interacteval.single_judge import TEMPLATE, judge_key, single_judge
from core.interacteval.single_judge import refused_texts as judge_refusals
from core.llm.context import Overlong, limits_of
from core.llm.estimate import Estimate, Latency, estimate, measured_latency
from core.llm.identity import model_fields
from core.llm.repeats import with_repeat
from core.project.inputs import fingerprint
from core.project.units import RunUnits
from core.runs import CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.settings import ModelProfile
    from core.stats import RepeatStability

__all__ = [
    "CONDITION_KIND",
    "SINGLE_KIND",
    "STEP_SINGLE",
    "ConditionModels",
    "ConditionRun",
    "ConditionsView",
    "compare_conditions",
    "condition_blockers",
    "condition_checklist",
    "condition_input",
    "condition_models",
    "condition_problems",
    "condition_stability",
    "condition_stability_lines",
    "condition_texts",
    "conditions_view",
    "estimate_conditions",
    "export_conditions",
    "load_condition_repeats",
    "load_conditions",
    "run_conditions",
]

#: A condition's checklist of one dimension (key ``<dimension>/<condition>``), with the hash of
#: what it was built from (``input``): a changed input means the condition must be built again.
CONDITION_KIND = "interacteval.condition"
#: The single-judge baseline's runs and their kept scores.
STEP_SINGLE = "single_judge"
SINGLE_KIND = "judge_score"


@dataclass
class ConditionModels:
    """The model strings behind a comparison of conditions: who thinks aloud (name -> model),
    who builds the checklists and who scores the texts (also the single judge).
    ``profiles``: the model profiles behind them when known (``"scorer"``, ``"builder"``,
    ``"assessor:<name>"``): their settings (server, temperature, seed, longest answer) are
    then part of what a condition was made with, so another setting is never taken for the
    same model."""

    assessors: dict[str, str]
    builder: str
    scorer: str
    profiles: dict[str, Any] = field(default_factory=dict)

    def spec(self, role: str) -> Any:
        """The profile of ``role`` when known, else its model string."""
        found = self.profiles.get(role)
        if found is not None:
            return found
        if role.startswith("assessor:"):
            return self.assessors.get(role.partition(":")[2], "")
        return {"scorer": self.scorer, "builder": self.builder}.get(role, "")


def _model_key(spec: Any) -> Any:
    """A model in a fingerprint: its string as before, or a profile's name and settings."""
    return spec if isinstance(spec, str) else model_fields(spec)


@dataclass
class ConditionRun:
    """One condition's scores over the texts (dimension order, then text order; a text without
    a usable score is there with its reason, never a default), the checklists it scored with
    (none for the single judge) and why a dimension has no checklist (``problems``).
    ``complete``: every text has a score on every dimension that has a checklist."""

    name: str
    label: str
    scores: list[TextScore]
    checklists: list[Checklist]
    run_id: int | None
    complete: bool
    model: str
    problems: list[str]

    @property
    def failed(self) -> list[TextScore]:
        return [s for s in self.scores if s.status != "ok"]


def condition_input(choices: InteractEvalChoices, dimension: str, name: str,
                    models: ConditionModels) -> str:
    """The hash of what condition ``name``'s checklist of ``dimension`` is built from."""
    people = list(choices.notes.get(dimension, [])) if name in ("human", "combined") else []
    thinkers = {who: _model_key(models.spec(f"assessor:{who}")) for who in models.assessors} \
        if name in ("ai", "combined") else {}
    return fingerprint([name, choices.dimension(dimension) or Dimension(name=dimension),
                        choices.chosen_samples(dimension), people, thinkers,
                        _model_key(models.spec("builder")), choices.validate_questions])


def condition_blockers(choices: InteractEvalChoices, names: Sequence[str], models: ConditionModels
                       ) -> dict[str, str]:
    """The conditions among ``names`` that cannot run with the current choices, and what to
    do about it (a checklist from the models' think-aloud needs a model that thinks aloud; one
    from the people's notes needs notes)."""
    has_notes = any(choices.notes.get(d.name) for d in choices.dimensions)
    out = {}
    for name in names:
        if name == "ai" and not models.assessors:
            out[name] = ("no model thinks aloud: choose the models on the Think-aloud page "
                         "(or with --profile/--model)")
        elif name == "human" and not has_notes:
            out[name] = "no people's notes were given: add them on the Think-aloud page"
        elif name == "combined" and not has_notes and not models.assessors:
            out[name] = "there are no people's notes and no model thinks aloud"
    return out


def condition_checklist(project: Project, choices: InteractEvalChoices, dimension: str, name: str,
                        models: ConditionModels) -> Checklist | None:
    """Condition ``name``'s checklist of ``dimension`` kept in the project, if it was built
    from what is chosen now (None otherwise)."""
    artefact = project.get_artefact(CONDITION_KIND, f"{dimension}/{name}")
    if artefact is None or artefact.payload.get("input") != condition_input(
            choices, dimension, name, models):
        return None
    try:
        return Checklist.model_validate(artefact.payload["checklist"])
    except (ValidationError, KeyError, TypeError):
        return None


def condition_problems(project: Project, choices: InteractEvalChoices, name: str,
                       models: ConditionModels) -> list[str]:
    """Why condition ``name`` could not be built for some dimensions, the last time it was
    tried with the inputs chosen now (kept in the project, so reopening still says it)."""
    out = []
    for d in choices.dimensions:
        artefact = project.get_artefact(CONDITION_KIND, f"{d.name}/{name}")
        if artefact is not None and artefact.payload.get("problem") and \
                artefact.payload.get("input") == condition_input(choices, d.name, name, models):
            out.append(str(artefact.payload["problem"]))
    return out


def _single_settings(choices: InteractEvalChoices, model: Any, samples: Mapping[str, Any],
                     repeat: int = 0) -> dict[str, Any]:
    out = {"dimensions": [d.model_dump(mode="json") for d in choices.dimensions],
           **model_fields(model), "template": _load_template(TEMPLATE).template_version,
           "samples": {d: sorted(v) for d, v in samples.items() if v}}
    return {**out, "repeat": int(repeat)} if repeat else out


def _load_template(name: str) -> Any:
    return _prompts.load(name)


def _folded_samples(choices: InteractEvalChoices) -> dict[str, frozenset[str]]:
    return {d.name: frozenset(" ".join(s.text.split()).casefold()
                              for s in choices.chosen_samples(d.name) if s.text.strip())
            for d in choices.dimensions}


def _condition_scores(project: Project, run_id: int, kind: str,
                      keyed: Sequence[tuple[str, str, TextItem]]) -> tuple[list[TextScore], bool]:
    """The kept scores of run ``run_id`` for ``keyed`` (key, dimension, text), in that order,
    and whether every one finished."""
    stored = {r.key: r for r in project.get_results(run_id, kind)}
    scores, complete = [], True
    for key, _dim, _item in keyed:
        found = stored.get(key)
        if found is None:
            complete = False
            continue
        try:
            score = TextScore.model_validate(found.payload)
        except ValidationError:
            complete = False
            continue
        if found.status != "ok" or score.status != "ok":
            complete = False
        scores.append(score)
    return scores, complete


def load_conditions(project: Project, choices: InteractEvalChoices, names: Sequence[str],
                    items: Sequence[TextItem], models: ConditionModels,
                    settings: ScoringSettings | None = None, *, repeat: int = 0
                    ) -> dict[str, ConditionRun]:
    """The conditions among ``names`` kept in the project for the current choices, texts and
    models, without asking any model. A condition never run (or whose inputs changed since)
    is left out; one with texts still unscored or failed is in, with ``complete`` False.
    ``repeat`` k > 0: the scores of repeat k (:func:`run_conditions` with ``repeats``)."""
    settings = repeat_settings(settings or choices.scoring, repeat)
    out: dict[str, ConditionRun] = {}
    for name in names:
        if name == "single-judge":
            run = project.find_run(METHOD, STEP_SINGLE, _single_settings(
                choices, models.spec("scorer"), _folded_samples(choices), repeat))
            if run is None:
                continue
            keyed = [(judge_key(d.name, i), d.name, i) for d in choices.dimensions for i in items]
            scores, complete = _condition_scores(project, run.id, SINGLE_KIND, keyed)
            out[name] = ConditionRun(name, CONDITIONS[name], scores, [], run.id, complete,
                                     models.scorer, [])
            continue
        checklists = [c for d in choices.dimensions
                      if (c := condition_checklist(project, choices, d.name, name, models))]
        problems = condition_problems(project, choices, name, models)
        if not checklists:
            if problems:
                out[name] = ConditionRun(name, CONDITIONS[name], [], [], None, False,
                                         models.scorer, problems)
            continue
        samples = run_samples(project, choices, checklists)
        run = project.find_run(METHOD, STEP_SCORE,
                               run_settings(checklists, settings, models.spec("scorer"), samples))
        if run is None:
            continue
        keyed = [(unit_key(c, i), c.dimension, i) for c in checklists for i in items]
        scores, complete = _condition_scores(project, run.id, RESULT_KIND, keyed)
        out[name] = ConditionRun(name, CONDITIONS[name], scores, checklists, run.id,
                                 complete and len(checklists) == len(choices.dimensions),
                                 models.scorer, problems)
    return out


async def run_conditions(
    project: Project,
    choices: InteractEvalChoices,
    names: Sequence[str],
    items: Sequence[TextItem],
    models: ConditionModels,
    *,
    assessors: Mapping[str, JsonLLM],
    builder: JsonLLM,
    scorer_for_run: Callable[[int], JsonLLM],
    settings: ScoringSettings | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    repeats: int = 1,
) -> dict[str, ConditionRun]:
    """Build and score the conditions among ``names`` for every dimension of ``choices`` (the
    wizard and ``evaldesk checklist compare`` alike). A condition's checklist built from the
    same inputs before is read back (no call); its scoring run resumes (finished texts make
    no call), so an unchanged condition costs nothing. ``assessors``/``builder`` are the models
    of ``models.assessors``/``models.builder``; ``scorer_for_run(run_id)`` the scoring model
    logging under the project run. A dimension whose checklist could not be built is named in
    the condition's ``problems``. The wizard's own checklists and choices are not touched.
    ``repeats`` N > 1: each condition's scoring (and the single judge) is then made again as
    repeats 1..N-1, each with its repeat index in every call's cache key and kept as its own
    project run (:func:`load_condition_repeats`); the checklists are built once. What comes
    back is repeat 0's."""
    if not 1 <= repeats <= MAX_REPEATS:
        raise ValueError(f"Repeat each call 1 to {MAX_REPEATS} times, not {repeats}.")
    settings = settings or choices.scoring
    wanted = [n for n in names if n in CHECKLIST_CONDITIONS]
    made, problems = await _build_conditions(project, choices, wanted, models,
                                             assessors=assessors, builder=builder,
                                             progress=progress, cancel=cancel)
    for k in range(repeats):
        mine = repeat_settings(settings, k)  # repeat k: settings.repeat + k in the cache key
        for name in wanted:
            checklists = [c for c in made[name] if c.items]
            if not checklists:
                continue
            samples = run_samples(project, choices, checklists)
            run_id = open_scoring_run(project, checklists, mine, models.spec("scorer"), samples)
            await score_texts(checklists, items, scorer_for_run(run_id), project=project,
                              settings=mine, model=models.spec("scorer"), run_id=run_id,
                              samples=samples, progress=progress, cancel=cancel)
        if "single-judge" in names:
            folded = _folded_samples(choices)
            run_id = project.start_run(METHOD, STEP_SINGLE, _single_settings(
                choices, models.spec("scorer"), folded, k), resume=True)
            await single_judge(choices.dimensions, items,
                               with_repeat(scorer_for_run(run_id), k),
                               store=RunUnits(project, run_id, SINGLE_KIND), samples=folded,
                               progress=progress, cancel=cancel)
    have = load_conditions(project, choices, names, items, models, settings)
    for name in wanted:
        if problems[name] and name not in have:
            have[name] = ConditionRun(name, CONDITIONS[name], [], [], None, False,
                                      models.scorer, problems[name])
    return {n: have[n] for n in names if n in have}


async def _build_conditions(
    project: Project, choices: InteractEvalChoices, wanted: Sequence[str],
    models: ConditionModels, *, assessors: Mapping[str, JsonLLM], builder: JsonLLM,
    progress: Progress | None, cancel: CancelToken | None,
) -> tuple[dict[str, list[Checklist]], dict[str, list[str]]]:
    """Each condition's checklist of every dimension (kept ones read back, the others built
    and kept, each with what it was built from), and why a dimension's could not be built."""
    made: dict[str, list[Checklist]] = {n: [] for n in wanted}
    problems: dict[str, list[str]] = {n: [] for n in wanted}
    for dim in choices.dimensions:
        todo = []
        for name in wanted:
            kept = condition_checklist(project, choices, dim.name, name, models)
            if kept is not None:
                made[name].append(kept)
            else:
                todo.append(name)
        if not todo:
            continue
        builds = await build_conditions(
            dim, choices.chosen_samples(dim.name), todo, assessors=assessors, builder=builder,
            notes=choices.notes.get(dim.name, []), validate=choices.validate_questions,
            progress=progress, cancel=cancel)
        for name, build in builds.items():
            if isinstance(build, Exception):
                problem = str(getattr(build, "message", build))
                problems[name].append(problem)
                project.put_artefact(CONDITION_KIND, f"{dim.name}/{name}", {
                    "input": condition_input(choices, dim.name, name, models),
                    "problem": problem}, origin="generated")
                continue
            checklist = build.checklist
            checklist.samples = choices.chosen_samples(dim.name)
            project.put_artefact(CONDITION_KIND, f"{dim.name}/{name}", {
                "input": condition_input(choices, dim.name, name, models),
                "checklist": checklist.model_dump(mode="json")}, origin="generated")
            made[name].append(checklist)
    return made, problems


def load_condition_repeats(project: Project, choices: InteractEvalChoices,
                           names: Sequence[str], items: Sequence[TextItem], models: ConditionModels, repeats: int,
                           settings: ScoringSettings | None = None
                           ) -> dict[str, list[ConditionRun]]:
    """Per condition among ``names`` that scored texts: its kept repeats 0..``repeats``-1 (no
    model call), as far as they go (the list stops at the first repeat not run yet, so it
    may be shorter than ``repeats``). A text that failed in a repeat is there with its
    reason, never a score."""
    out: dict[str, list[ConditionRun]] = {}
    for k in range(max(1, repeats)):
        have = load_conditions(project, choices, names, items, models, settings, repeat=k)
        for name in names:
            if k and len(out.get(name, [])) < k:
                continue  # an earlier repeat is missing
            run = have.get(name)
            if run is not None and run.scores:
                out.setdefault(name, []).append(run)
    return {n: out[n] for n in names if n in out}


def condition_stability(by_condition: Mapping[str, Sequence[ConditionRun]]
                        ) -> list[tuple[str, str, Any]]:
    """How alike each condition's repeats are, per dimension (``(condition label, dimension,
    core.stats.RepeatStability)``; conditions with fewer than 2 repeats kept are left out)."""
    out = []
    for name, runs in by_condition.items():
        if len(runs) < 2:
            continue
        label = runs[0].label
        who = "the single judge" if name == "single-judge" else f"the judge ({label})"
        out += stability(runs, condition=label, who=who)
    return out


def condition_stability_lines(entries: Sequence[tuple[str, str, Any]]) -> list[str]:
    """One plain line per condition (:func:`condition_stability`): with one dimension its
    sentence; with several, the agreement between repeats per dimension and, when any is
    below the threshold, which dimensions are flagged."""
    by_condition: dict[str, list[tuple[str, Any]]] = {}
    for condition, dim, result in entries:
        by_condition.setdefault(condition, []).append((dim, result))
    out = []
    for parts in by_condition.values():
        first = parts[0][1]
        if len(parts) == 1 and first.alpha.value is not None:
            out.append(first.sentence)
            continue
        who = first.who[:1].upper() + first.who[1:]
        values = "; ".join(
            f"{d} {r.alpha.value:.2f}" if r.alpha.value is not None
            else f"{d} cannot be said ({r.alpha.reason or 'no value'})" for d, r in parts)
        flagged = [d for d, r in parts if r.flagged]
        repeats = max(r.n_repeats for _, r in parts)
        if flagged:
            out.append(f"{who} gives different scores when asked again on "
                       f"{', '.join(flagged)} (agreement between repeats: {values}; below "
                       f"{first.threshold:.3g} is flagged): treat single scores with care.")
        elif len(parts) == 1:
            out.append(f"How alike the {repeats} repeats of {first.who} are cannot be said: "
                       f"{first.alpha.reason or 'no value'}.")
        elif all(r.alpha.value is None for _, r in parts):
            out.append(f"How alike the {repeats} repeats of {first.who} are cannot be said: "
                       f"{values}.")
        else:
            out.append(f"{who} gives much the same scores when asked again (agreement "
                       f"between repeats: {values}; {repeats} repeats).")
    return out


def estimate_conditions(project: Project, choices: InteractEvalChoices, names: Sequence[str],
                        items: Sequence[TextItem], models: ConditionModels,
                        profiles: Mapping[str, ModelProfile], *,
                        latency: Latency | None = None,
                        settings: ScoringSettings | None = None, repeats: int = 1) -> Estimate:
    """What :func:`run_conditions` will take (:class:`core.llm.estimate.Estimate`): the
    think-aloud and construction calls of each checklist not kept yet (the models'
    think-aloud is asked once for "ai" and "combined"), the scoring of the texts not scored
    yet (a checklist not built yet is counted with a stand-in of 10 questions), and one
    single-judge call per text and dimension not judged yet. ``profiles``: name -> profile
    of every model in ``models`` (the think-aloud models by name; the builder and scorer are
    found by their model string). A condition that cannot run (:func:`condition_blockers`)
    is not counted. ``repeats`` N: the scoring and single-judge calls of repeats 0..N-1
    (the checklists are built once). No model is called."""
    settings = settings or choices.scoring
    blocked = condition_blockers(choices, names, models)
    names = [n for n in names if n not in blocked]
    by_model = {p.model: p for p in profiles.values()}
    scorer = models.profiles.get("scorer") or by_model.get(models.scorer) or \
        next(iter(profiles.values()))
    builder = models.profiles.get("builder") or by_model.get(models.builder) or scorer
    builder_limits, scorer_limits = limits_of(builder), limits_of(scorer)
    too_long: list[str | Overlong] = []
    builder_plan: list[Any] = []
    scoring_plan: list[Any] = []
    thinking: list[Dimension] = []  # the dimensions whose models' think-aloud is asked
    skipped = 0
    wanted = [n for n in names if n in CHECKLIST_CONDITIONS]
    for dim in choices.dimensions:
        asked_models = False
        for name in wanted:
            kept = condition_checklist(project, choices, dim.name, name, models)
            if kept is not None:
                skipped += 1
                continue
            people = choices.notes.get(dim.name, []) if name in ("human", "combined") else []
            if name in ("ai", "combined") and not asked_models:
                asked_models = True
                thinking.append(dim)
            builder_plan += plan_build(dim, choices.chosen_samples(dim.name), people,
                                       think_aloud=0, validate=choices.validate_questions,
                                       label=name, limits=builder_limits,
                                       grounded=uses_grounded_path(builder))
            too_long += build_refusals(dim, [], people, builder=builder_limits,
                                       grounded=uses_grounded_path(builder))
    for k, name in [(k, n) for k in range(max(1, repeats)) for n in wanted]:
        mine = repeat_settings(settings, k)
        checklists = []
        for dim in choices.dimensions:
            kept = condition_checklist(project, choices, dim.name, name, models)
            checklists.append(kept or guessed_checklist(dim))
        samples = run_samples(project, choices, checklists)
        run = project.find_run(METHOD, STEP_SCORE,
                               run_settings(checklists, mine, models.spec("scorer"), samples))
        done = project.finished_keys(run.id, RESULT_KIND) if run is not None else set()
        stages, n = plan_scoring_calls(checklists, items, mine, done=done,
                                       limits=scorer_limits)
        too_long += refused_texts(checklists, items, mine, scorer_limits)
        for stage in stages:
            stage.name = f"{name}: scoring, {stage.name}" + (f" (repeat {k})" if k else "")
        scoring_plan += stages
        skipped += n
    for k in range(max(1, repeats)) if "single-judge" in names else ():
        run = project.find_run(METHOD, STEP_SINGLE, _single_settings(
            choices, models.spec("scorer"), _folded_samples(choices), k))
        done = project.finished_keys(run.id, SINGLE_KIND) if run is not None else set()
        stages, n = plan_single_judge(choices.dimensions, items, done=done)
        refused = judge_refusals(choices.dimensions, items, scorer_limits)
        too_long += refused
        for stage in stages if not refused else ():  # a refused run makes no call
            stage.name += f" (repeat {k})" if k else ""
            scoring_plan.append(stage)
        skipped += n
    parts = []
    for who in models.assessors:
        if thinking and who in profiles:
            profile = profiles[who]
            limits = limits_of(profile)
            plan = [stage for dim in thinking
                    for stage in plan_build(dim, choices.chosen_samples(dim.name), [],
                                            think_aloud=1, steps=(), label=who,
                                            limits=limits)]
            too_long += [p for dim in thinking for p in build_refusals(
                dim, choices.chosen_samples(dim.name), [], assessors=[limits])]
            parts.append(estimate(plan, profile,
                                  latency=measured_latency(project, profile.model)))
    if builder_plan:
        parts.append(estimate(builder_plan, builder,
                              latency=measured_latency(project, builder.model)))
    latency = latency or measured_latency(project, scorer.model)
    parts.append(estimate(scoring_plan, scorer, latency=latency, done_already=skipped,
                          done_what="checklists built and texts scored"))
    est = combine(parts)
    est.too_long = list(dict.fromkeys(too_long))
    return est


def condition_models(choices: InteractEvalChoices, profile_of: Any
                     ) -> tuple[ConditionModels, dict[str, Any]] | None:
    """The wizard's models for the conditions (``profile_of(name)`` gives a model profile or
    None): who thinks aloud, builds and scores, and the profiles by name; None when there is
    no profile to score with."""
    builder_name = choices.builder or (choices.assessors[0] if choices.assessors else "")
    scorer = profile_of(choices.scorer or builder_name)
    builder = profile_of(builder_name) or scorer
    if scorer is None or builder is None:
        return None
    thinkers = {n: p for n in choices.assessors if (p := profile_of(n)) is not None}
    profiles = {**thinkers, builder.name: builder, scorer.name: scorer}
    return ConditionModels(
        assessors={n: p.model for n, p in thinkers.items()}, builder=builder.model,
        scorer=scorer.model,
        profiles={"scorer": scorer, "builder": builder,
                  **{f"assessor:{n}": p for n, p in thinkers.items()}}), profiles


def condition_texts(project: Project, choices: InteractEvalChoices) -> list[TextItem]:
    """The texts the conditions score: those of the texts file chosen on the Score page
    (empty when none is chosen or it cannot be read)."""
    setup = choices.texts
    path = texts_file(project, setup) if setup and (setup.path or setup.input_id) else None
    if path is None:
        return []
    got = read_texts(path, setup)
    return [] if got.errors else list(got.items)




# --------------------------------------------------------------------- what is shown and kept
@dataclass
class ConditionsView:
    """The conditions kept in the project for the current choices, as the Conditions tab shows
    them: the texts they score, each condition's scores (``runs``), those still to run
    (``missing``) and what running them takes (``estimate``), those that cannot run and why
    (``blocked``), the comparison rows and how alike each condition's repeats are."""

    items: list[TextItem]
    runs: dict[str, ConditionRun]
    missing: list[str]
    rows: list[dict[str, Any]]
    estimate: Estimate | None
    blocked: dict[str, str]
    stability: list[tuple[str, str, RepeatStability]]


def compare_conditions(project: Project, choices: InteractEvalChoices, names: Sequence[str],
                       runs: Mapping[str, ConditionRun], items: Sequence[TextItem],
                       models: ConditionModels, *, repeats: int, n_boot: int = 2000
                       ) -> tuple[list[dict[str, Any]], list[tuple[str, str, RepeatStability]]]:
    """The comparison rows of ``runs`` (:func:`core.interacteval.conditions.comparison_rows`,
    ``n_boot`` bootstrap resamples) and, with ``repeats`` > 1, how alike each condition's
    repeats kept in the project are (:func:`condition_stability`)."""
    rows = comparison_rows({n: r.scores for n, r in runs.items() if r.scores}, items,
                           n_boot=n_boot) if runs else []
    kept = load_condition_repeats(project, choices, names, items, models, repeats) \
        if repeats > 1 and items else {}
    return rows, condition_stability(kept)


def conditions_view(project: Project, choices: InteractEvalChoices, names: Sequence[str],
                    items: Sequence[TextItem], models: ConditionModels,
                    profiles: Mapping[str, ModelProfile], *, n_boot: int) -> ConditionsView:
    """What the conditions among ``names`` have kept for the current choices and texts, what
    is still to run (a condition never run, with texts unscored, or with repeats of
    ``choices.condition_repeats`` missing) and the estimate of running that. No model is
    called."""
    repeats = choices.condition_repeats
    have = load_conditions(project, choices, names, items, models) if items else {}
    blocked = condition_blockers(choices, names, models)
    missing = [n for n in names if n not in blocked and (n not in have or not have[n].complete)]
    kept = (load_condition_repeats(project, choices, names, items, models, repeats)
            if repeats > 1 and items else {})
    missing += [n for n in names if repeats > 1 and n not in blocked
                and n not in missing and (len(kept.get(n, [])) < repeats
                                          or not all(r.complete for r in kept[n]))]
    missing = [n for n in names if n in missing]
    rows = comparison_rows({n: r.scores for n, r in have.items() if r.scores}, items,
                           n_boot=n_boot) if have else []
    est = (estimate_conditions(project, choices, missing, items, models, profiles,
                               repeats=repeats)
           if missing and items else None)
    return ConditionsView(list(items), have, missing, rows, est, blocked,
                          condition_stability(kept))


def export_conditions(project: Project, choices: InteractEvalChoices, path: str | Path,
                      names: Sequence[str], runs: Mapping[str, ConditionRun],
                      items: Sequence[TextItem], models: ConditionModels, *, repeats: int,
                      who: str, n_boot: int = 2000
                      ) -> tuple[list[dict[str, Any]], list[tuple[str, str, RepeatStability]]]:
    """Write the "Comparison" workbook of ``runs`` (sheets Comparison, Checklists, Scores and,
    with repeats kept, Stability; the Read me names the dimensions, the models, the texts and
    who exported it). Returns the rows and the repeats' stability (for the summary lines)."""
    rows, entries = compare_conditions(project, choices, names, runs, items, models,
                                       repeats=repeats, n_boot=n_boot)
    readme = [("Dimensions", "; ".join(f"{d.name}: {d.definition}"
                                        for d in choices.dimensions)),
              ("Think-aloud models", ", ".join(f"{n} ({m})" for n, m in models.assessors.items())
               or "(none)"),
              ("Checklists built by", models.builder),
              ("Texts scored by", models.scorer),
              ("Texts", texts_line(choices.texts, len(items))),
              ("Exported by", person(who))]
    extra = []
    if entries:
        extra.append(stability_sheet(entries))
        readme.append(("Repeats", (
            f"each condition's scoring calls made {repeats} times (repeats 0 to "
            f"{repeats - 1}); the checklists were built once; the scores compared are "
            "repeat 0's, the Stability sheet compares the repeats")))
    write_comparison(path, dict(runs), rows, readme=readme, extra_sheets=extra)
    return rows, entries
