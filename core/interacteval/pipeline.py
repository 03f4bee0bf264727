"""InteractEval end to end: build a checklist (stages 1-2) and score texts with it (stage 3).

Pure composition of the paper's stages; nothing here touches a project (that is
:mod:`core.interacteval.session`). The wizard runs the stages one by one (each a coroutine in
its own module, each result editable before the next); :func:`build_checklist` runs them all in
a row for the CLI and for tests. :func:`score_texts` scores every text on every checklist
concurrently (four texts per call the model may have in flight, the gateway keeping its own
limit on the calls), keeping each scored text in the
given unit store as it finishes, so a cancelled or crashed run resumes without asking again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core import runs
from core.interacteval._common import progress_or_silent, unique_attributes
from core.interacteval.attribute_clustering import cluster_attributes
from core.interacteval.checklist_scoring import refused_texts, score_text
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
from core.llm import context
from core.runs import CancelToken, Progress, UnitStore, run_units, units_at_once

__all__ = [
    "CHECKLIST_ARTEFACT",
    "COPIED",
    "METHOD",
    "RESULT_KIND",
    "ChecklistBuild",
    "ScoringRun",
    "build_checklist",
    "copy_warning",
    "run_settings",
    "sample_texts",
    "score_texts",
    "scoring_prompts",
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
    grounded: bool | None = None,
) -> ChecklistBuild:
    """Run think-aloud (``assessors``: name -> model; may be empty when ``notes`` are given),
    merge with the people's ``notes``, then component extraction, attribute clustering, key
    questions, sub-questions and (if ``validate``) validation with ``builder``. ``grounded``
    (default: only when ``builder`` is the built-in model) takes the grounded path of
    :mod:`core.interacteval.grounded` in every build step.

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
                                          cancel=cancel, grounded=grounded)
    clusters = await cluster_attributes(dimension, components, attributes, builder,
                                        progress=progress, cancel=cancel, grounded=grounded)
    keys = await generate_key_questions(dimension, clusters, builder, progress=progress,
                                        cancel=cancel, grounded=grounded)
    subs = await generate_sub_questions(dimension, keys, builder, progress=progress,
                                        cancel=cancel, grounded=grounded)
    if validate:
        checklist = await validate_questions(dimension, subs, builder, progress=progress,
                                             cancel=cancel, grounded=grounded)
    else:
        checklist = checklist_from_sub_questions(dimension, subs)
    checklist = checklist.model_copy(update={"samples": list(samples)})
    return ChecklistBuild(
        dimension=dimension, samples=list(samples), think_aloud=ta, notes=list(notes),
        attributes=attributes, components=components, clusters=clusters, key_questions=keys,
        sub_questions=subs, checklist=checklist, validated=validate,
    )


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
    model_settings: dict[str, Any] | None = None
    """Everything else of the model that decides its answers (server, temperature, seed,
    longest answer: :func:`core.llm.identity.answer_settings`); None when not recorded."""

    @property
    def model_used(self) -> dict[str, Any]:
        """The model as the run's settings name it (:func:`core.llm.identity.model_fields`):
        what finds the run's repeats and compares it with the model chosen now."""
        from core.llm.identity import model_fields

        return model_fields({"model": self.model, "model_settings": self.model_settings})

    @property
    def model_text(self) -> str:
        """The model and its settings in plain words."""
        from core.llm.identity import describe_model

        return describe_model(self.model_used)

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
    """The key of one scored text (:func:`core.runs.unit_key`): dimension, text id and a hash
    of what was scored, so an edited text is scored again. Keys stored before the one keying
    scheme were the same JSON list, so earlier runs resume without a migration."""
    digest = hashlib.sha256(json.dumps([item.text, item.source], ensure_ascii=False)
                            .encode("utf-8")).hexdigest()[:12]
    return runs.unit_key(checklist.dimension, item.id, digest)


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


def scoring_prompts() -> dict[str, str]:
    """The versions of the scoring prompts (part of what a scoring run depends on)."""
    from core.interacteval import _prompts

    return {name: _prompts.load(name).template_version
            for name in ("checklist_scoring", "question_scoring")}


def run_settings(checklists: Sequence[Checklist], settings: ScoringSettings, model: Any,
                 samples: SampleTexts | None = None) -> dict[str, Any]:
    """What a scoring run depends on (the project run's settings): the checklists, the model
    (a ``ModelProfile``: its name and every setting that changes an answer, see
    :func:`core.llm.identity.model_fields`; a string: the name only), the prompts' versions,
    the scoring options and the think-aloud samples (which texts are flagged)."""
    from core.llm.identity import model_fields

    out: dict[str, Any] = {
        "checklists": {c.dimension: c.fingerprint() for c in checklists},
        **model_fields(model),
        "prompts": scoring_prompts(),
        "scoring": settings.model_dump(mode="json"),
    }
    flagged = _samples_key(sample_texts(checklists, samples))
    if flagged:
        out["samples"] = flagged
    return out


async def score_texts(
    checklists: Sequence[Checklist],
    items: Sequence[TextItem],
    llm: JsonLLM,
    *,
    settings: ScoringSettings | None = None,
    model: Any = "",
    store: UnitStore | None = None,
    run_id: int | None = None,
    samples: SampleTexts | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> ScoringRun:
    """Score every item with every checklist, concurrently (one unit per checklist and text,
    keyed by :func:`unit_key`, run by :func:`core.runs.run_units`).

    A text that is one of its dimension's think-aloud samples (the same text, ignoring case
    and spacing; ``samples``: dimension -> samples or texts, default each checklist's own
    :attr:`Checklist.samples`) is scored as any other and flagged ``think_aloud_sample``; the
    agreement leaves it out by default.

    With ``store`` (the session's ``RunUnits`` of project run ``run_id``), scores already kept
    by an earlier attempt of the same run are reused (failed ones are tried again) and every
    new score is kept as soon as it is done. On cancel the unfinished work is stopped and
    :class:`core.runs.Cancelled` is raised; what finished is kept."""
    settings = settings or ScoringSettings()
    progress = progress_or_silent(progress)
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise ValueError("Each text needs its own id; repeated: " + ", ".join(duplicates))
    refused = refused_texts(checklists, items, settings, await context.limits_for(llm))
    if refused:  # before any call: a text longer than the model reads cannot be scored
        raise context.TooLong(context.refusal(refused))
    flagged = sample_texts(checklists, samples)
    units = [(unit_key(c, item), (c, item)) for c in checklists for item in items]

    async def work(unit: tuple[Checklist, TextItem]) -> TextScore:
        checklist, item = unit
        score = await score_text(checklist, item, llm, settings=settings, cancel=cancel)
        score.think_aloud_sample = _fold_text(item.text) in flagged.get(checklist.dimension, set())
        return score

    def load(payload: Any, unit: tuple[Checklist, TextItem]) -> TextScore:
        # a kept score takes the human score, source and system from today's sheet
        checklist, item = unit
        return TextScore.model_validate(payload).model_copy(update={
            "human": item.human.get(checklist.dimension), "source_id": item.source_id,
            "system": item.system,
        })

    def describe(unit: tuple[Checklist, TextItem], score: TextScore) -> str:
        checklist, item = unit
        return (f"{item.id} ({checklist.dimension}): "
                + (f"{score.score:.2f}" if score.score is not None else score.status))

    done = await run_units(
        units, work,
        judge=lambda score: (score.status == "ok", score.note or "The text failed."),
        dump=lambda score: score.model_dump(mode="json"),
        load=load, store=store, limit=units_at_once(llm, 4, least=8),
        title="Scoring texts with the checklist", describe=describe,
        what="texts", progress=progress, cancel=cancel,
    )
    scores = []
    for result, (_key, (checklist, item)) in zip(done, units):
        # every score is flagged against today's think-aloud samples
        score = result.value
        score.think_aloud_sample = _fold_text(item.text) in flagged.get(checklist.dimension, set())
        scores.append(score)
    from core.llm.identity import model_fields

    fields = model_fields(model)
    return ScoringRun(scores=scores, settings=settings, model=fields["model"], run_id=run_id,
                      reused=sum(1 for r in done if r.reused), checklists=list(checklists),
                      date=datetime.now().strftime("%Y-%m-%d %H:%M"),
                      model_settings=fields.get("model_settings"))
