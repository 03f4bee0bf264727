"""Building InteractEval's checklist in a project, step by step: the models' think-aloud, then
component extraction, attribute clustering, key questions, sub-questions and the review
(validation), each on the kept (possibly edited) output of the step before, each output kept as
it is made (:mod:`core.interacteval.session.stages`). The wizard runs one step or the remaining
ones; ``evaldesk checklist build`` runs them all (:func:`build_dimension`). A step a person
edited is never run over silently: ``edits`` "keep" leaves the edit, "replace" keeps it aside.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.interacteval.attribute_clustering import cluster_attributes
from core.interacteval.component_extraction import extract_components
from core.interacteval.estimate import build_refusals, combine, plan_build
from core.interacteval.grounded import uses_grounded_path
from core.interacteval.key_questions import generate_key_questions
from core.interacteval.model import Dimension, JsonLLM, StageError, ThinkAloudResult
from core.interacteval.pipeline import ChecklistBuild
from core.interacteval.session.choices import (
    STAGE_KIND,
    InteractEvalChoices,
    person,
    save_choices,
    stage_key,
)
from core.interacteval.session.stages import (
    EDIT_CHOICES,
    attributes_of,
    edited_steps,
    get_stage,
    keep_aside,
    load_checklist,
    put_stage,
    save_checklist,
    stage_input,
)
from core.interacteval.sub_questions import generate_sub_questions
from core.interacteval.think_aloud import think_aloud
from core.interacteval.validation import checklist_from_sub_questions, validate_questions
from core.llm.context import limits_for, limits_of, refusal
from core.llm.estimate import Estimate, estimate, measured_latency
from core.runs import CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.settings import ModelProfile

__all__ = ["BUILD_KEYS", "build_dimension", "estimate_build_steps", "estimate_think_aloud",
           "run_build_step", "run_build_steps", "run_think_aloud"]

# ------------------------------------------------------------------------ building steps
#: The construction steps after the think-aloud, in order ("checklist" = the review).
BUILD_KEYS = ("components", "clusters", "key_questions", "sub_questions", "checklist")


async def run_think_aloud(project: Project, choices: InteractEvalChoices, dimension: str,
                          assessors: Mapping[str, JsonLLM], *,
                          progress: Progress | None = None,
                          cancel: CancelToken | None = None, who: str = "") -> ThinkAloudResult:
    """Every model of ``assessors`` thinks aloud about ``dimension`` over its chosen samples;
    the result is kept as the step's output (a version a person edited is kept aside first,
    see :func:`core.interacteval.session.stages.replaced_version`). Raises :class:`StageError` when no model could."""
    dim = choices.dimension(dimension) or Dimension(name=dimension)
    input_hash = stage_input(project, choices, dimension, "think_aloud")
    await _refuse_too_long(dim, choices.chosen_samples(dimension), [], assessors=assessors)
    result = await think_aloud(dim, choices.chosen_samples(dimension), assessors,
                               progress=progress, cancel=cancel)
    if not result.attributes and result.failures:
        kinds = [f.kind for f in result.failures if f.kind]
        error = StageError("No model could think aloud: " + "; ".join(
            f"{f.who}: {f.message}" for f in result.failures), stage="Think-aloud",
            dimension=dimension, kind=max(set(kinds), key=kinds.count) if kinds else "")
        error.result = result  # type: ignore[attr-defined]  # who failed, and why
        raise error
    with project.transaction():
        keep_aside(project, dimension, "think_aloud", person(who))
        put_stage(project, dimension, "think_aloud", result, input_hash=input_hash)
    return result


async def _refuse_too_long(dim: Dimension, samples: Sequence[Any], notes: Sequence[Any], *,
                           assessors: Mapping[str, Any] | None = None,
                           builder: Any = None) -> None:
    """Refuse, before any call, a build whose rated samples (for the models thinking aloud)
    or notes (for the builder) hold one too long for the model even alone
    (:func:`core.interacteval.estimate.build_refusals`): a :class:`StageError`, kind
    "too_long", naming each."""
    problems = build_refusals(
        dim, samples, notes,
        builder=await limits_for(builder) if builder is not None else None,
        assessors=[lim for llm in (assessors or {}).values()
                   if (lim := await limits_for(llm)) is not None],
        grounded=builder is not None and uses_grounded_path(builder))
    if problems:
        raise StageError(refusal(problems), stage="Inputs", dimension=dim.name,
                         kind="too_long")


def _keep_edited(project: Project, choices: InteractEvalChoices, dimension: str, key: str,
                 input_hash: str, who: str, keep_choices: bool) -> Any:
    """A person's edited output of step ``key`` stays as it is: the step is not run, and the
    output counts as made from today's inputs (recorded as ``who``'s decision)."""
    if key == "checklist":
        choices.checklist_inputs[dimension] = input_hash
        if keep_choices:
            save_choices(project, choices)
        return load_checklist(project, dimension)
    artefact = project.get_artefact(STAGE_KIND, stage_key(dimension, key))
    assert artefact is not None
    old = artefact.payload.get("input", "")
    if old != input_hash:
        project.record_edit(artefact, "input", old, input_hash, who)
    got = get_stage(project, dimension, key)
    return got.value if got is not None else None


async def run_build_step(project: Project, choices: InteractEvalChoices, dimension: str,
                         key: str, llm: JsonLLM, *, progress: Progress | None = None,
                         cancel: CancelToken | None = None, keep_choices: bool = True,
                         edits: str = "keep", who: str = "") -> Any:
    """One construction step (``key`` in :data:`BUILD_KEYS`) on the kept (possibly edited)
    output of the step before; its output is kept (the review's is the checklist). With
    ``keep_choices`` False the wizard's stored choices are left alone (the CLI's build).

    An output a person edited (:func:`edited_steps`) is never replaced silently: ``edits``
    "keep" leaves it as it is (the step is not run and the output counts as current; ``who``
    is recorded as having decided so), "replace" runs the step and keeps the edited version
    aside (:func:`replaced_version`, :func:`restore_replaced`)."""
    if key not in BUILD_KEYS:
        raise ValueError(f"unknown step {key!r}")
    if edits not in EDIT_CHOICES:
        raise ValueError(f"edits must be one of {EDIT_CHOICES}, not {edits!r}")
    dim = choices.dimension(dimension) or Dimension(name=dimension)
    builder = getattr(llm, "profile", None)
    input_hash = stage_input(project, choices, dimension, key,
                             builder if getattr(builder, "model", "") else None)
    if edits == "keep" and edited_steps(project, dimension, [key]):
        return _keep_edited(project, choices, dimension, key, input_hash, person(who),
                            keep_choices)

    def need(stage: str, what: str) -> Any:
        got = get_stage(project, dimension, stage)
        if got is None:
            raise StageError(f"{what} for {dimension} are missing: run the step before first.",
                             dimension=dimension)
        return got.value

    attributes = attributes_of(project, choices, dimension)
    if key == "components" and not attributes:
        ta = get_stage(project, dimension, "think_aloud")
        failures = ta.value.failures if ta is not None else []
        why = "; ".join(f"{f.who}: {f.message}" for f in failures) or "no notes were given"
        kinds = [f.kind for f in failures if f.kind]
        raise StageError(
            f"There are no think-aloud attributes for {dimension} ({why}). Add notes or "
            "choose a model that works.", stage="Think-aloud", dimension=dimension,
            kind=max(set(kinds), key=kinds.count) if kinds else "")
    if key == "components":
        value: Any = await extract_components(dim, attributes, llm, progress=progress,
                                              cancel=cancel)
    elif key == "clusters":
        value = await cluster_attributes(dim, need("components", "The components"),
                                         attributes, llm, progress=progress, cancel=cancel)
    elif key == "key_questions":
        value = await generate_key_questions(dim, need("clusters", "The attribute groups"),
                                             llm, progress=progress, cancel=cancel)
    elif key == "sub_questions":
        value = await generate_sub_questions(dim, need("key_questions", "The key questions"),
                                             llm, progress=progress, cancel=cancel)
    else:
        groups = need("sub_questions", "The sub-questions")
        if choices.validate_questions:
            checklist = await validate_questions(dim, groups, llm, progress=progress,
                                                 cancel=cancel)
        else:
            checklist = checklist_from_sub_questions(dim, groups)
        checklist.samples = choices.chosen_samples(dimension)  # the think-aloud's samples
        with project.transaction():
            keep_aside(project, dimension, key, person(who))
            save_checklist(project, checklist)
            choices.checklist_inputs[dimension] = input_hash
            if keep_choices:
                save_choices(project, choices)
        return checklist
    with project.transaction():
        keep_aside(project, dimension, key, person(who))
        put_stage(project, dimension, key, value, input_hash=input_hash)
    return value


async def run_build_steps(project: Project, choices: InteractEvalChoices, dimension: str,
                          keys: Sequence[str], llm: JsonLLM, *,
                          progress: Progress | None = None,
                          cancel: CancelToken | None = None, keep_choices: bool = True,
                          edits: str = "keep", who: str = "") -> Any:
    """:func:`run_build_step` for each of ``keys`` in turn (``edits``, ``who``: what to do with
    a person's edited output, see there); the last one's output."""
    result = None
    for key in keys:
        result = await run_build_step(project, choices, dimension, key, llm, progress=progress,
                                      cancel=cancel, keep_choices=keep_choices, edits=edits,
                                      who=who)
    return result


async def build_dimension(project: Project, choices: InteractEvalChoices, dimension: str,
                          assessors: Mapping[str, JsonLLM], builder: JsonLLM, *,
                          progress: Progress | None = None, cancel: CancelToken | None = None,
                          keep_choices: bool = True, edits: str = "keep",
                          who: str = "") -> ChecklistBuild:
    """Every step for ``dimension`` in a row, as the wizard runs them: think-aloud by
    ``assessors`` (none: people's notes only; when every model fails the notes go on alone),
    then the construction steps with ``builder`` (``edits``: what to do with the outputs a
    person edited, see :func:`run_build_step`). Returns the
    :class:`core.interacteval.pipeline.ChecklistBuild` (for the export's sheets)."""
    think = ThinkAloudResult(dimension=dimension)
    dim = choices.dimension(dimension) or Dimension(name=dimension)
    await _refuse_too_long(dim, choices.chosen_samples(dimension) if assessors else [],
                           list(choices.notes.get(dimension, [])), assessors=assessors,
                           builder=builder)  # before any call
    if assessors:
        try:
            think = await run_think_aloud(project, choices, dimension, assessors,
                                          progress=progress, cancel=cancel, who=who)
        except StageError as exc:
            if not choices.notes.get(dimension):
                raise
            think = getattr(exc, "result", think)
    checklist = await run_build_steps(project, choices, dimension, BUILD_KEYS, builder,
                                      progress=progress, cancel=cancel,
                                      keep_choices=keep_choices, edits=edits, who=who)

    def value(stage: str) -> Any:
        got = get_stage(project, dimension, stage)
        return got.value if got is not None else None

    return ChecklistBuild(
        dimension=choices.dimension(dimension) or Dimension(name=dimension),
        samples=choices.chosen_samples(dimension), think_aloud=think,
        notes=list(choices.notes.get(dimension, [])),
        attributes=attributes_of(project, choices, dimension), components=value("components"),
        clusters=value("clusters"), key_questions=value("key_questions"),
        sub_questions=value("sub_questions"), checklist=checklist,
        validated=choices.validate_questions)


# ------------------------------------------------------------------ estimates of building
def estimate_think_aloud(project: Project, choices: InteractEvalChoices, dimension: str,
                         profiles: Sequence[ModelProfile]) -> Estimate:
    """What :func:`run_think_aloud` on ``dimension`` takes: one call per model in
    ``profiles`` (:class:`core.llm.estimate.Estimate`, several models added up). An answer
    the project already has for the same prompt costs nothing, so this is at most."""
    dim = choices.dimension(dimension) or Dimension(name=dimension)
    samples = choices.chosen_samples(dimension)
    limits = [limits_of(p) for p in profiles]
    est = combine([estimate(plan_build(dim, samples, [], think_aloud=1, steps=(), limits=lim),
                            p, latency=measured_latency(project, p.model))
                   for p, lim in zip(profiles, limits)])
    est.too_long = build_refusals(dim, samples, [], assessors=limits)
    return est


def estimate_build_steps(project: Project, choices: InteractEvalChoices, dimension: str,
                         keys: Sequence[str], profile: ModelProfile) -> Estimate:
    """What :func:`run_build_steps` of ``keys`` on ``dimension`` with ``profile`` takes: one
    call per step, plus at most one more each (a reply that does not fit is asked again).
    The first step's prompt holds the real attributes; later ones hold what earlier steps
    will write, so their size is a rough figure."""
    dim = choices.dimension(dimension) or Dimension(name=dimension)
    limits = limits_of(profile)
    grounded = uses_grounded_path(profile)
    notes = attributes_of(project, choices, dimension)
    plan = plan_build(dim, choices.chosen_samples(dimension), notes, think_aloud=0, steps=keys,
                      validate=choices.validate_questions, limits=limits, grounded=grounded)
    for stage in plan:
        stage.maybe = [*stage.maybe, *stage.prompts]
        stage.chain = (1, 2)
    est = estimate(plan, profile, latency=measured_latency(project, profile.model))
    if "components" in keys or "clusters" in keys:
        est.too_long = build_refusals(dim, [], notes, builder=limits, grounded=grounded)
    return est
