"""Scoring texts with InteractEval's checklists in a project: the scoring run (one project run
per checklists, model, options and think-aloud samples; each scored text kept as it finishes, so
a cancelled run resumes), its repeats (repeat k > 0 is its own project run, every call with
repeat index k: :mod:`core.interacteval.repeats`), the estimate before any call, the results
reloaded without a call, and why they no longer match the choices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from core.interacteval.checklist_scoring import refused_texts
from core.interacteval.estimate import plan_scoring as plan_scoring_calls
from core.interacteval.model import (
    Checklist,
    JsonLLM,
    ScoredSample,
    ScoringSettings,
    TextItem,
    TextScore,
)
from core.interacteval.pipeline import (
    METHOD,
    RESULT_KIND,
    STEP_SCORE,
    SampleTexts,
    ScoringRun,
    run_settings,
)
from core.interacteval.pipeline import score_texts as _score_texts
from core.interacteval.repeats import MAX_REPEATS, repeat_settings
from core.interacteval.session.choices import (
    InteractEvalChoices,
    local_time,
    save_choices,
    texts_key,
)
from core.interacteval.session.stages import all_checklists
from core.llm.context import limits_of
from core.llm.estimate import Estimate, Latency, estimate, measured_latency
from core.llm.identity import model_differences, model_name
from core.project.units import RunUnits
from core.runs import CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project, Run

__all__ = [
    "ScoringJob",
    "estimate_scoring",
    "is_repeat",
    "kept_scores",
    "load_repeats",
    "load_run",
    "open_scoring_run",
    "plan_scoring",
    "results_out_of_date",
    "run_samples",
    "score_repeats",
    "score_texts",
]

# -------------------------------------------------------------------------------- results
def load_run(project: Project, choices: InteractEvalChoices,
             checklists: Sequence[Checklist]) -> ScoringRun | None:
    """The scores of the last scoring run from the project, without asking any model; None
    when there is none, it did not finish, or the checklists changed since."""
    if choices.run_id is None:
        return None
    run = project.get_run(choices.run_id)
    if run is None or run.method != METHOD or run.step != STEP_SCORE or run.status != "finished":
        return None
    wanted = {c.dimension: c.fingerprint() for c in checklists}
    if (run.settings or {}).get("checklists") != wanted:
        return None
    by_key: dict[tuple[str, str], TextScore] = {}
    for result in project.get_results(run.id, RESULT_KIND):
        try:
            score = TextScore.model_validate(result.payload)
        except ValidationError:
            continue
        by_key[(score.dimension, score.text_id)] = score
    order = choices.text_order or sorted({t for _, t in by_key})
    scores = [by_key[(c.dimension, t)] for c in checklists for t in order
              if (c.dimension, t) in by_key]
    if not scores:
        return None
    settings = ScoringSettings.model_validate((run.settings or {}).get("scoring") or {})
    return ScoringRun(scores=scores, settings=settings, model=(run.settings or {}).get("model", ""),
                      run_id=run.id, checklists=list(checklists), date=local_time(run.finished_at),
                      model_settings=(run.settings or {}).get("model_settings"))


def run_samples(project: Project, choices: InteractEvalChoices,
                checklists: Sequence[Checklist]) -> dict[str, list[ScoredSample]]:
    """Per dimension, the think-aloud samples a scored text is compared with: the samples
    chosen for the dimension now and those its checklist was built from (repeats removed)."""
    out: dict[str, list[ScoredSample]] = {}
    for checklist in checklists:
        seen: set[str] = set()
        samples = []
        for sample in [*choices.chosen_samples(checklist.dimension), *checklist.samples]:
            key = " ".join(sample.text.split()).casefold()
            if key and key not in seen:
                seen.add(key)
                samples.append(sample)
        out[checklist.dimension] = samples
    return out


def results_out_of_date(project: Project, choices: InteractEvalChoices, run: ScoringRun | None,
                        checklists: Sequence[Checklist], model: Any) -> list[str]:
    """Why ``run`` no longer matches the current choices, in plain words (empty: it is
    current): a checklist edited, added or removed, other scoring options, another model or the
    same model with other settings (``model``: the chosen profile; see
    :func:`core.llm.identity.model_differences`), other prompts, other think-aloud samples, or
    another texts file, sheet or columns."""
    if run is None:
        return []
    stored = project.get_run(run.run_id) if run.run_id is not None else None
    then = (stored.settings if stored is not None else None) or {}
    now = run_settings(checklists, choices.scoring, model,
                       run_samples(project, choices, checklists))
    reasons: list[str] = []
    before, after = then.get("checklists", {}), now["checklists"]
    for dimension, key in after.items():
        if dimension not in before:
            reasons.append(f"{dimension} has a checklist that these results do not cover")
        elif before[dimension] != key:
            reasons.append(f"the checklist of {dimension} was changed")
    for dimension in before:
        if dimension not in after:
            reasons.append(f"the checklist of {dimension} is no longer there")
    if then.get("scoring") != now["scoring"]:
        reasons.append("the scoring options were changed")
    reasons += [f"another model or model setting is chosen: {what}"
                for what in model_differences(then, now)]
    if then.get("prompts") != now.get("prompts"):
        reasons.append("EvalDesk's scoring prompts changed since these results"
                       if then.get("prompts") else
                       "the scoring prompts' version was not recorded with these results")
    if then.get("samples", {}) != now.get("samples", {}):
        reasons.append("the think-aloud samples were changed")
    if choices.run_texts is None:
        reasons.append("the texts file of these results was not recorded")
    elif texts_key(choices.run_texts) != texts_key(choices.texts):
        reasons.append("another texts file, sheet or column choice is chosen")
    return reasons


# -------------------------------------------------------------------------------- scoring
def open_scoring_run(project: Project, checklists: Sequence[Checklist],
                     settings: ScoringSettings, model: Any,
                     samples: SampleTexts | None = None) -> int:
    """Start (or, with identical checklists, model, settings and samples, reopen) the project
    run that :func:`score_texts` keeps its scored texts in. Call it first when the gateway
    should log its calls under this run; pass the same ``samples`` as to
    :func:`score_texts`."""
    return project.start_run(METHOD, STEP_SCORE,
                             run_settings(checklists, settings, model, samples), resume=True)


async def score_texts(
    checklists: Sequence[Checklist],
    items: Sequence[TextItem],
    llm: JsonLLM,
    *,
    project: Project,
    settings: ScoringSettings | None = None,
    model: Any = "",
    run_id: int | None = None,
    samples: SampleTexts | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> ScoringRun:
    """Score every text with every checklist (``core.interacteval.pipeline.score_texts``),
    keeping each scored text in project run ``run_id`` (opened here when None) as soon as it
    is done: scores kept by an identical earlier run are reused, failed ones tried again."""
    settings = settings or ScoringSettings()
    if run_id is None:
        run_id = open_scoring_run(project, checklists, settings, model, samples)
    return await _score_texts(checklists, items, llm, settings=settings, model=model,
                              store=RunUnits(project, run_id, RESULT_KIND), run_id=run_id,
                              samples=samples, progress=progress, cancel=cancel)


def estimate_scoring(project: Project, checklists: Sequence[Checklist],
                     items: Sequence[TextItem], settings: ScoringSettings, profile: Any, *,
                     samples: SampleTexts | None = None, latency: Latency | None = None,
                     repeats: int = 1) -> Estimate:
    """What :func:`score_texts` with ``profile`` will take (:class:`core.llm.estimate.Estimate`):
    calls, tokens, cost and time of the texts not yet scored in the project with these
    checklists, options and model (``repeats`` N: of repeats 0..N-1 together, see
    :mod:`core.interacteval.repeats`). ``latency`` (e.g. from one probe call) overrides the
    latency the project recorded for this model. Texts too long for the model are listed in
    ``too_long`` (the run refuses them). No model is called (a server may be asked its
    context window)."""
    limits = limits_of(profile)
    plan, skipped = [], 0
    for k in range(max(1, repeats)):
        mine = repeat_settings(settings, k)
        run = project.find_run(METHOD, STEP_SCORE,
                               run_settings(checklists, mine, profile, samples))
        done = project.finished_keys(run.id, RESULT_KIND) if run is not None else set()
        stages, n = plan_scoring_calls(checklists, items, mine, done=done, limits=limits)
        for stage in stages:
            stage.name += f" (repeat {k})" if k else ""
        plan += stages
        skipped += n
    latency = latency or measured_latency(project, profile.model)
    est = estimate(plan, profile, latency=latency, done_already=skipped,
                   done_what="texts scored on a dimension")
    est.too_long = refused_texts(checklists, items, settings, limits)
    return est


@dataclass
class ScoringJob:
    """A scoring run about to start: its project run, what it scores and with which options."""

    run_id: int
    checklists: list[Checklist]
    items: list[TextItem]
    settings: ScoringSettings
    model: Any
    """The scoring profile (or a model string)."""
    samples: dict[str, list[ScoredSample]]


def plan_scoring(project: Project, choices: InteractEvalChoices, items: Sequence[TextItem],
                 model: Any, *, checklists: Sequence[Checklist] | None = None,
                 keep_choices: bool = True) -> ScoringJob:
    """Open the scoring run of the checklists over ``items`` with ``model`` and remember it in
    ``choices`` (saved unless ``keep_choices`` is False): which run, the texts' order, file and
    count. ``checklists``: those to score (default: the project's checklists of the
    choices' dimensions)."""
    checklists = list(checklists) if checklists is not None else all_checklists(project, choices)
    samples = run_samples(project, choices, checklists)
    run_id = open_scoring_run(project, checklists, choices.scoring, model, samples)
    choices.run_id = run_id
    choices.text_order = [i.id for i in items]
    choices.run_texts = choices.texts.model_copy(deep=True)
    choices.run_count = len(items)
    if keep_choices:
        save_choices(project, choices)
    return ScoringJob(run_id, checklists, list(items), choices.scoring, model, samples)


def kept_scores(project: Project, run_id: int) -> list[TextScore]:
    """The scores a run kept in the project (one that no longer reads as a score is left out)."""
    scores = []
    for result in project.get_results(run_id, RESULT_KIND):
        try:
            scores.append(TextScore.model_validate(result.payload))
        except ValidationError:
            continue
    return scores


def is_repeat(run: Run) -> bool:
    """A run of repeat k > 0 (``core.interacteval.repeats``): not a judge of its own."""
    return bool(((run.settings or {}).get("scoring") or {}).get("repeat"))


# -------------------------------------------------------------------------------- repeats
async def score_repeats(
    project: Project,
    checklists: Sequence[Checklist],
    items: Sequence[TextItem],
    llm_for_run: Callable[[int], JsonLLM],
    repeats: int,
    *,
    settings: ScoringSettings,
    model: Any,
    samples: SampleTexts | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    first: ScoringRun | None = None,
) -> list[ScoringRun]:
    """Repeats 0..``repeats``-1 of the scoring (:func:`score_texts`); ``first``: repeat 0
    when it was just run. ``llm_for_run(run_id)`` makes the model that logs under the run."""
    if not 1 <= repeats <= MAX_REPEATS:
        raise ValueError(f"Repeat each call 1 to {MAX_REPEATS} times, not {repeats}.")
    runs = [first] if first is not None else []
    for k in range(len(runs), repeats):
        mine = repeat_settings(settings, k)
        run_id = open_scoring_run(project, checklists, mine, model, samples)
        runs.append(await score_texts(
            checklists, items, llm_for_run(run_id), project=project, settings=mine,
            model=model, run_id=run_id, samples=samples, progress=progress, cancel=cancel))
    return runs


def load_repeats(project: Project, checklists: Sequence[Checklist], settings: ScoringSettings,
                 model: Any, repeats: int, *, samples: SampleTexts | None = None,
                 order: Sequence[str] = ()) -> list[ScoringRun]:
    """The finished repeats kept in the project (no model call), as far as they go: the list
    stops at the first repeat that is missing (then fewer than ``repeats`` come back).
    ``order``: the texts' order (default: as kept)."""
    out = []
    for k in range(repeats):
        mine = repeat_settings(settings, k)
        run = project.find_run(METHOD, STEP_SCORE, run_settings(checklists, mine, model,
                                                                samples))
        if run is None or run.status != "finished":
            break
        scores = kept_scores(project, run.id)
        if order:
            place = {t: i for i, t in enumerate(order)}
            scores.sort(key=lambda s: place.get(s.text_id, len(place)))
        if not scores:
            break
        out.append(ScoringRun(scores=scores, settings=mine, model=model_name(model),
                              run_id=run.id, checklists=list(checklists),
                              model_settings=(run.settings or {}).get("model_settings")))
    return out
