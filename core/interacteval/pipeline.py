"""InteractEval end to end: build a checklist (stages 1-2) and score texts with it (stage 3).

The wizard runs the stages one by one (each a coroutine in its own module, each result editable
before the next); :func:`build_checklist` runs them all in a row for the CLI and for tests.
:func:`score_texts` scores every text on every checklist concurrently (bounded by the gateway's
own concurrency limit) and, given a project, commits each scored text as it finishes, so a
cancelled or crashed run resumes without asking the model again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.interacteval._common import progress_or_silent, unique_attributes
from core.interacteval.attribute_clustering import cluster_attributes
from core.interacteval.checklist_scoring import score_text
from core.interacteval.component_extraction import MAX_COMPONENTS, extract_components
from core.interacteval.key_questions import generate_key_questions
from core.interacteval.model import (
    Attribute,
    AttributeClusters,
    Checklist,
    Dimension,
    JsonLLM,
    KeyQuestion,
    ScoredSample,
    ScoringSettings,
    StageError,
    SubQuestionGroup,
    TextItem,
    TextScore,
    ThinkAloudResult,
)
from core.interacteval.sub_questions import generate_sub_questions
from core.interacteval.think_aloud import think_aloud
from core.interacteval.validation import checklist_from_sub_questions, validate_questions
from core.runs import Cancelled, CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "CHECKLIST_ARTEFACT",
    "COPIED",
    "METHOD",
    "RESULT_KIND",
    "ChecklistBuild",
    "ScoringRun",
    "build_checklist",
    "copy_warning",
    "load_checklists",
    "open_scoring_run",
    "run_settings",
    "sample_texts",
    "save_checklist",
    "score_texts",
    "unit_key",
]

METHOD = "interacteval"
STEP_SCORE = "score"
RESULT_KIND = "text_score"
CHECKLIST_ARTEFACT = "interacteval.checklist"
#: The failure kind of a reply that repeated our instructions (``core.llm.copied_instructions``).
COPIED = "copied_instructions"


def copy_warning(kinds: Sequence[str], what: str = "texts") -> str:
    """A plain warning when most units (more than half of ``kinds``, one failure kind per unit,
    "" for a unit that worked) failed because the model repeated the instructions instead of
    answering; "" otherwise."""
    copied = sum(1 for kind in kinds if kind == COPIED)
    if not kinds or copied * 2 <= len(kinds):
        return ""
    return (f"Most {what} failed: for {copied} of {len(kinds)} the model repeated the "
            "instructions instead of answering. Try a larger model. Nothing was made up for "
            f"these {what}: they have no result.")


# ------------------------------------------------------------------------------- building
@dataclass
class ChecklistBuild:
    """Everything one checklist build produced, stage by stage (for the export and Read me)."""

    dimension: Dimension
    samples: list[ScoredSample]
    think_aloud: ThinkAloudResult
    notes: list[Attribute]
    attributes: list[Attribute]  #: merged: models' then people's, exact repeats removed
    components: list[str]
    clusters: AttributeClusters
    key_questions: list[KeyQuestion]
    sub_questions: list[SubQuestionGroup]
    checklist: Checklist
    validated: bool = True


async def build_checklist(
    dimension: Dimension,
    samples: Sequence[ScoredSample],
    *,
    assessors: Mapping[str, JsonLLM],
    builder: JsonLLM,
    notes: Sequence[Attribute] = (),
    validate: bool = True,
    max_components: int = MAX_COMPONENTS,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> ChecklistBuild:
    """Run think-aloud (``assessors``: name -> model; may be empty when ``notes`` are given),
    merge with the people's ``notes``, then component extraction, attribute clustering, key
    questions, sub-questions and (if ``validate``) validation with ``builder``.

    Raises :class:`StageError` when a step gives nothing usable (including "no attributes":
    every model failed and there are no notes)."""
    progress = progress_or_silent(progress)
    if assessors:
        ta = await think_aloud(dimension, samples, assessors, progress=progress, cancel=cancel)
    else:
        ta = ThinkAloudResult(dimension=dimension.name)
    attributes = unique_attributes(ta.merged(notes))
    if not attributes:
        why = "; ".join(f"{f.who}: {f.message}" for f in ta.failures) or "no notes were given"
        kinds = [f.kind for f in ta.failures if f.kind]
        raise StageError(
            f"There are no think-aloud attributes for {dimension.name} ({why}). Add notes or "
            "choose a model that works.",
            stage="Think-aloud", dimension=dimension.name,
            kind=max(set(kinds), key=kinds.count) if kinds else "",
        )
    components = await extract_components(dimension, attributes, builder,
                                          max_components=max_components, progress=progress,
                                          cancel=cancel)
    clusters = await cluster_attributes(dimension, components, attributes, builder,
                                        progress=progress, cancel=cancel)
    keys = await generate_key_questions(dimension, clusters, builder, progress=progress,
                                        cancel=cancel)
    subs = await generate_sub_questions(dimension, keys, builder, progress=progress,
                                        cancel=cancel)
    if validate:
        checklist = await validate_questions(dimension, subs, builder, progress=progress,
                                             cancel=cancel)
    else:
        checklist = checklist_from_sub_questions(dimension, subs)
    checklist = checklist.model_copy(update={"samples": list(samples)})
    return ChecklistBuild(
        dimension=dimension, samples=list(samples), think_aloud=ta, notes=list(notes),
        attributes=attributes, components=components, clusters=clusters, key_questions=keys,
        sub_questions=subs, checklist=checklist, validated=validate,
    )


def save_checklist(project: Project, checklist: Checklist, *, origin: str = "generated",
                   run_id: int | None = None) -> None:
    """Store a checklist in the project (artefact ``interacteval.checklist``, key = dimension).
    A person's later changes go through ``project.record_edit`` so who and when are kept."""
    project.put_artefact(CHECKLIST_ARTEFACT, checklist.dimension,
                         checklist.model_dump(mode="json"), origin=origin,  # type: ignore[arg-type]
                         run_id=run_id)


def load_checklists(project: Project) -> list[Checklist]:
    """The checklists stored in the project, in the order they were first stored."""
    return [Checklist.model_validate(a.payload)
            for a in project.list_artefacts(CHECKLIST_ARTEFACT)]


# -------------------------------------------------------------------------------- scoring
@dataclass
class ScoringRun:
    """The scores of one scoring run: one :class:`TextScore` per checklist and text, in
    checklist order then text order. ``reused`` counts scores taken from the project (a
    resumed run); ``run_id`` is the project run (None without a project)."""

    scores: list[TextScore]
    settings: ScoringSettings
    model: str = ""
    run_id: int | None = None
    reused: int = 0
    checklists: list[Checklist] = field(default_factory=list)
    date: str = ""  #: when the run finished ("YYYY-MM-DD HH:MM", local time)

    @property
    def copy_warning(self) -> str:
        """The warning when most texts failed because the model repeated the instructions
        (shown as a banner and in the Read me sheet); "" otherwise."""
        return copy_warning([s.failure_kind if s.status != "ok" else "" for s in self.scores])

    @property
    def failed(self) -> list[TextScore]:
        """Texts without a score: failed or incomplete."""
        return [s for s in self.scores if s.status != "ok"]

    @property
    def incomplete(self) -> list[TextScore]:
        """Texts with questions still unanswered (no score; asked again on resume)."""
        return [s for s in self.scores if s.status == "incomplete"]

    @property
    def scored(self) -> list[TextScore]:
        return [s for s in self.scores if s.status == "ok"]


def unit_key(checklist: Checklist, item: TextItem) -> str:
    """The project key of one scored text: dimension, text id and a hash of what was scored,
    so an edited text is scored again."""
    digest = hashlib.sha256(json.dumps([item.text, item.source], ensure_ascii=False)
                            .encode("utf-8")).hexdigest()[:12]
    return json.dumps([checklist.dimension, item.id, digest], ensure_ascii=False)


def _fold_text(text: str) -> str:
    return " ".join(str(text).split()).casefold()


SampleTexts = Mapping[str, Sequence[ScoredSample | str]]


def sample_texts(checklists: Sequence[Checklist],
                 samples: SampleTexts | None = None) -> dict[str, set[str]]:
    """Per dimension, the think-aloud sample texts (folded: case and spacing ignored) that a
    scored text is compared with: ``samples[dimension]`` when given, else the checklist's own
    :attr:`Checklist.samples`."""
    out: dict[str, set[str]] = {}
    for checklist in checklists:
        given = (samples.get(checklist.dimension) if samples is not None else None)
        chosen = checklist.samples if given is None else given
        texts = {_fold_text(s.text if isinstance(s, ScoredSample) else s) for s in chosen}
        out[checklist.dimension] = {t for t in texts if t}
    return out


def _samples_key(texts: Mapping[str, set[str]]) -> dict[str, str]:
    return {dimension: hashlib.sha256(json.dumps(sorted(found), ensure_ascii=False)
                                      .encode("utf-8")).hexdigest()[:16]
            for dimension, found in texts.items() if found}


def run_settings(checklists: Sequence[Checklist], settings: ScoringSettings, model: str,
                 samples: SampleTexts | None = None) -> dict[str, Any]:
    """What a scoring run depends on (the project run's settings): the checklists, the model,
    the scoring options and the think-aloud samples (which texts are flagged)."""
    out: dict[str, Any] = {
        "checklists": {c.dimension: c.fingerprint() for c in checklists},
        "model": model,
        "scoring": settings.model_dump(mode="json"),
    }
    flagged = _samples_key(sample_texts(checklists, samples))
    if flagged:
        out["samples"] = flagged
    return out


def open_scoring_run(project: Project, checklists: Sequence[Checklist],
                     settings: ScoringSettings, model: str,
                     samples: SampleTexts | None = None) -> int:
    """Start (or, with identical checklists, model, settings and samples, reopen) the project
    run that :func:`score_texts` commits to. Call it first when the gateway should log its calls
    under this run (``Gateway(profile, cache=project, run_id=...)``); pass the same
    ``samples`` as to :func:`score_texts`."""
    return project.start_run(METHOD, STEP_SCORE,
                             run_settings(checklists, settings, model, samples), resume=True)


async def score_texts(
    checklists: Sequence[Checklist],
    items: Sequence[TextItem],
    llm: JsonLLM,
    *,
    settings: ScoringSettings | None = None,
    model: str = "",
    project: Project | None = None,
    run_id: int | None = None,
    samples: SampleTexts | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> ScoringRun:
    """Score every item with every checklist, concurrently.

    A text that is one of its dimension's think-aloud samples (the same text, ignoring case
    and spacing; ``samples``: dimension -> samples or texts, default each checklist's own
    :attr:`Checklist.samples`) is scored as any other and flagged ``think_aloud_sample``; the
    agreement leaves it out by default.

    With ``project``, scores already stored by an identical earlier run are reused (failed ones
    are tried again) and every new score is committed as soon as it is done; ``model`` names
    the model in the run's settings. On cancel the unfinished work is stopped, the run is
    marked cancelled and :class:`core.runs.Cancelled` is raised; what finished is kept."""
    settings = settings or ScoringSettings()
    progress = progress_or_silent(progress)
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise ValueError("Each text needs its own id; repeated: " + ", ".join(duplicates))
    units = [(c, item) for c in checklists for item in items]
    done: dict[str, TextScore] = {}
    flagged = sample_texts(checklists, samples)
    if project is not None:
        if run_id is None:
            run_id = open_scoring_run(project, checklists, settings, model, samples)
        for result in project.get_results(run_id, RESULT_KIND, status="ok"):
            done[result.key] = TextScore.model_validate(result.payload)
    wanted = {unit_key(c, item) for c, item in units}
    reused = sum(1 for key in done if key in wanted)
    progress.start("Scoring texts with the checklist", total=len(units))
    if reused:
        progress.advance(reused, f"{reused} already scored in an earlier run")

    async def one(checklist: Checklist, item: TextItem) -> TextScore:
        score = await score_text(checklist, item, llm, settings=settings, cancel=cancel)
        score.think_aloud_sample = (_fold_text(item.text)
                                    in flagged.get(checklist.dimension, set()))
        if project is not None and run_id is not None:
            key = unit_key(checklist, item)
            if score.status == "ok":
                project.put_result(run_id, RESULT_KIND, key, score.model_dump(mode="json"))
            else:
                project.put_result(run_id, RESULT_KIND, key, score.model_dump(mode="json"),
                                   status="failed", error=score.note or "The text failed.")
        detail = (f"{item.id} ({checklist.dimension}): "
                  + (f"{score.score:.2f}" if score.score is not None else score.status))
        progress.advance(1, detail)
        return score

    todo = [(c, item) for c, item in units if unit_key(c, item) not in done]
    tasks = [asyncio.ensure_future(one(c, item)) for c, item in todo]
    try:
        if tasks:
            await asyncio.gather(*tasks)
    except (Cancelled, asyncio.CancelledError):
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if project is not None and run_id is not None:
            project.finish_run(run_id, "cancelled", "Stopped; finished texts were kept.")
        raise
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if project is not None and run_id is not None:
            project.finish_run(run_id, "failed", "Stopped by an unexpected error.")
        raise
    fresh = {unit_key(c, item): task.result() for (c, item), task in zip(todo, tasks)}
    scores = []
    for c, item in units:
        key = unit_key(c, item)
        # reused scores take the human score, source and system from today's sheet; every
        # score is flagged against today's think-aloud samples
        score = fresh[key] if key in fresh else done[key].model_copy(update={
            "human": item.human.get(c.dimension), "source_id": item.source_id,
            "system": item.system,
        })
        score.think_aloud_sample = _fold_text(item.text) in flagged.get(c.dimension, set())
        scores.append(score)
    run = ScoringRun(scores=scores, settings=settings, model=model, run_id=run_id,
                     reused=reused, checklists=list(checklists),
                     date=datetime.now().strftime("%Y-%m-%d %H:%M"))
    if project is not None and run_id is not None:
        project.finish_run(run_id, "finished",
                           f"{len(run.scored)} scored, {len(run.incomplete)} incomplete, "
                           f"{len(run.failed) - len(run.incomplete)} failed")
    return run
