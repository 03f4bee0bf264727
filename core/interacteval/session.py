"""InteractEval in a project: the ONLY code that touches the project for this method. The wizard
and the ``evaldesk checklist`` command both call it, so they read, run, keep and export alike:

    state, problem = open_state(project)         # dimensions, samples, notes, texts, choices
    save_state(project, state)
    await run_think_aloud(project, state, "Coherence", {"GPT-4o": llm})   # kept as a step result
    await run_build_steps(project, state, "Coherence", ["components", ...], llm)
    edit_stage(project, "Coherence", "components", ["Flow", "Logical order"], who="Anna")
    edit_checklist(project, checklist, who="Anna")          # via project.record_edit
    job = plan_scoring(project, state, items, model)       # the run, its checklists and samples
    run = await score_texts(checklists, items, llm, project=project, run_id=job.run_id, ...)
    run = load_run(project, state, checklists)              # reopening: no new model calls
    results_out_of_date(project, state, run, checklists, model)  # why it no longer matches
    export_results(project, run, path, texts=..., include_samples=...)

The wizard state is a versioned payload (:data:`STATE`); one that cannot be read is set aside
in the project and :func:`open_state` says so. Step outputs are artefacts of kind
``interacteval.stage`` keyed ``<dimension>/<stage>``, with the hash of what the step consumed
(``input``), so a step whose predecessor changed is shown as out of date. Generated outputs are
stored with origin "generated"; a person's edit goes through ``project.record_edit`` (who and
when are kept). Scored texts are the units of a project run (``core.project.units.RunUnits``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from core import privacy
from core.interacteval._common import unique_attributes
from core.interacteval.inputs import (
    TEXT_ROLES,
    OpenedTexts,
    TextsRead,
    TextsSetup,
    guess_text_columns,
    open_texts,
    read_texts,
)
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
from core.interacteval.pipeline import (
    CHECKLIST_ARTEFACT,
    METHOD,
    RESULT_KIND,
    STEP_SCORE,
    SampleTexts,
    ScoringRun,
    run_settings,
)
from core.interacteval.pipeline import score_texts as _score_texts
from core.llm import LLMFactory, gateway_for
from core.project.inputs import InputRef, fingerprint, open_input, store_input
from core.project.payloads import PayloadType, load_or_recover, put_payload
from core.runs import CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "BUILD_KEYS",
    "STAGES",
    "STAGE_KIND",
    "STATE",
    "STATE_KIND",
    "SUMMEVAL_DIMENSIONS",
    "TEXT_ROLES",
    "LLMFactory",
    "OpenedTexts",
    "ScoringJob",
    "StageOutput",
    "TextsRead",
    "TextsSetup",
    "WizardState",
    "all_checklists",
    "attributes_of",
    "build_dimension",
    "checklist_origin",
    "default_llm_factory",
    "deleted_lines",
    "deleted_questions",
    "edit_checklist",
    "edit_stage",
    "edited_steps",
    "export_checklists",
    "export_results",
    "fingerprint",
    "get_stage",
    "guess_text_columns",
    "import_checklists",
    "judge_to_check",
    "judges_to_compare",
    "load_checklist",
    "load_checklists",
    "load_run",
    "load_state",
    "open_scoring_run",
    "open_state",
    "open_texts",
    "open_texts_file",
    "person",
    "plan_scoring",
    "put_stage",
    "questions_failing_good_texts",
    "read_texts",
    "replaced_version",
    "restore_replaced",
    "results_out_of_date",
    "run_build_step",
    "run_build_steps",
    "run_samples",
    "run_texts_line",
    "run_think_aloud",
    "sample_folder",
    "save_checklist",
    "save_state",
    "score_texts",
    "stage_input",
    "store_texts_file",
    "texts_file",
    "texts_key",
    "texts_line",
]

STATE_KIND = "interacteval.wizard"
STATE_KEY = "state"
STAGE_KIND = "interacteval.stage"
TEXTS_INPUT_KIND = "interacteval_texts"

#: The construction steps whose output is stored (the checklist itself is the engine's artefact).
STAGES = ("think_aloud", "components", "clusters", "key_questions", "sub_questions")

#: SummEval's four dimensions, defined in our own words (a template on the first page).
SUMMEVAL_DIMENSIONS = [
    Dimension(name="Coherence", definition=(
        "How well the summary hangs together as a whole: its sentences follow on from one "
        "another in a sensible order and build a clear picture of the topic, rather than a "
        "heap of loosely related facts.")),
    Dimension(name="Consistency", definition=(
        "Whether everything the summary says is backed by the source document: it adds no "
        "facts, names, numbers or claims that the source does not support.")),
    Dimension(name="Fluency", definition=(
        "How well each sentence is written on its own: correct grammar, spelling and "
        "punctuation, natural word order, and nothing that makes it hard to read.")),
    Dimension(name="Relevance", definition=(
        "Whether the summary keeps the most important points of the source and leaves out "
        "minor details, repetition and information that does not matter.")),
]

#: The model of a run (``core.llm.LLMFactory``); the default caches every call in the project.
default_llm_factory: LLMFactory = gateway_for


def sample_folder() -> Path:
    """The folder of the sample set shipped with EvalDesk."""
    from core.paths import resources_dir

    return resources_dir() / "samples" / "interacteval"


# ------------------------------------------------------------------------------ the state
class WizardState(BaseModel):
    """Everything the user chose in the InteractEval wizard (artefact ``interacteval.wizard``)."""

    page: str = "dimensions"
    dimensions: list[Dimension] = Field(default_factory=list)
    current: str = ""
    """The dimension shown on the per-dimension pages."""
    samples_file: str = ""
    samples: list[ScoredSample] = Field(default_factory=list)
    """Every rated sample read from the samples sheet."""
    chosen: dict[str, list[int]] = Field(default_factory=dict)
    """dimension -> indices into ``samples`` shown in the think-aloud."""
    assessors: list[str] = Field(default_factory=list)
    """Model profiles that think aloud."""
    builder: str = ""
    """The model profile that builds the checklist ("" = the first assessor / default)."""
    notes: dict[str, list[Attribute]] = Field(default_factory=dict)
    """dimension -> people's think-aloud notes."""
    validate_questions: bool = True
    checklist_inputs: dict[str, str] = Field(default_factory=dict)
    """dimension -> hash of the sub-questions the checklist was made from."""
    texts: TextsSetup = Field(default_factory=TextsSetup)
    scorer: str = ""
    scoring: ScoringSettings = Field(default_factory=ScoringSettings)
    run_id: int | None = None
    """The scoring run last started (its finished texts are kept in the project)."""
    text_order: list[str] = Field(default_factory=list)
    """Text ids in the order of the texts sheet of that run."""
    run_texts: TextsSetup | None = None
    """The texts file, sheet and columns of that run (results of other texts are not current)."""
    run_count: int = 0
    """How many texts that run scored."""
    repeats: int = Field(default=1, ge=1)
    """How many times each scoring call is made (repeat runs; 1 = once, as before)."""
    condition_repeats: int = Field(default=1, ge=1)
    """How many times each condition's scoring calls are made (the Conditions tab's choice)."""
    include_samples: bool = False
    """Keep texts that are think-aloud samples in the agreement (left out by default)."""

    def dimension(self, name: str) -> Dimension | None:
        return next((d for d in self.dimensions if d.name == name), None)

    def chosen_samples(self, name: str) -> list[ScoredSample]:
        return [self.samples[i] for i in self.chosen.get(name, []) if 0 <= i < len(self.samples)]


#: The wizard's choices, kept as one versioned payload.
STATE = PayloadType(STATE_KIND, WizardState, version=1,
                    label="the InteractEval choices (dimensions, samples, notes and texts)")


def open_state(project: Project) -> tuple[WizardState, str]:
    """The stored wizard state (a fresh one when there is none) and a message for the user
    ("" when all is well). A state that cannot be read (e.g. saved by a newer EvalDesk) is kept
    in the project under another key and the message says so; it is never saved over."""
    return load_or_recover(project, STATE, STATE_KEY, WizardState)


def load_state(project: Project) -> WizardState:
    """The stored wizard state (see :func:`open_state`, which also says what went wrong)."""
    return open_state(project)[0]


def save_state(project: Project, state: WizardState) -> None:
    put_payload(project, STATE, STATE_KEY, state, origin="human")


def rename_dimension(project: Project, state: WizardState, old: str, new: str, who: str) -> None:
    """Rename a dimension everywhere: the people's notes, chosen samples, human-score column,
    the samples, the build steps' results and the checklist (each with its edit history; the
    checklist's new name is logged as ``who``'s edit), and save ``state``. Steps that read the
    name show as out of date. Results left under ``new`` by a dimension deleted earlier give
    way (their deletion is logged, with what they held)."""
    if not new or new == old:
        return
    for mapping in (state.notes, state.chosen, state.checklist_inputs, state.texts.human):
        if old in mapping:
            mapping[new] = mapping.pop(old)  # type: ignore[index]
    for sample in state.samples:
        if sample.dimension == old:
            sample.dimension = new
    if state.current == old:
        state.current = new
    state.dimensions = [d.model_copy(update={"name": new}) if d.name == old else d
                        for d in state.dimensions]
    moves = [(STAGE_KIND, _stage_key(old, stage), _stage_key(new, stage))
             for stage in _STAGE_TYPES]
    moves.append((CHECKLIST_ARTEFACT, old, new))
    with project.transaction():
        for kind, before, after in moves:
            leftover = project.get_artefact(kind, after)
            if leftover is not None:
                project.delete_artefact(leftover, who)
            if project.get_artefact(kind, before) is not None:
                project.rename_artefact((kind, before), after)
        checklist = project.get_artefact(CHECKLIST_ARTEFACT, new)
        if checklist is not None and checklist.payload.get("dimension") == old:
            project.record_edit(checklist, "dimension", old, new, who)
        save_state(project, state)


# ------------------------------------------------------------------------ stage outputs
_STAGE_TYPES: dict[str, Any] = {
    "think_aloud": ThinkAloudResult,
    "components": list[str],
    "clusters": AttributeClusters,
    "key_questions": list[KeyQuestion],
    "sub_questions": list[SubQuestionGroup],
}


@dataclass
class StageOutput:
    """One stored step result: ``value`` (typed), the hash of what it consumed, and whether a
    person edited it (``edited_by`` names who, last)."""

    value: Any
    input: str
    edited: bool = False
    edited_by: str = ""


def _stage_key(dimension: str, stage: str) -> str:
    return f"{dimension}/{stage}"


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _load(stage: str, raw: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(_STAGE_TYPES[stage]).validate_python(raw)


def get_stage(project: Project, dimension: str, stage: str) -> StageOutput | None:
    """The stored output of ``stage`` for ``dimension`` (None when not run yet)."""
    artefact = project.get_artefact(STAGE_KIND, _stage_key(dimension, stage))
    if artefact is None:
        return None
    try:
        value = _load(stage, artefact.payload["value"])
    except (ValidationError, KeyError, TypeError):
        return None
    who = ""
    if artefact.edited:
        edits = project.list_edits((STAGE_KIND, artefact.key))
        who = edits[-1].who if edits else ""
    return StageOutput(value=value, input=str(artefact.payload.get("input", "")),
                       edited=artefact.edited, edited_by=who)


def put_stage(project: Project, dimension: str, stage: str, value: Any, *,
              input_hash: str, run_id: int | None = None) -> None:
    """Store a generated step result (replacing the previous one)."""
    if stage not in _STAGE_TYPES:
        raise ValueError(f"unknown stage {stage!r}")
    project.put_artefact(STAGE_KIND, _stage_key(dimension, stage),
                         {"input": input_hash, "value": _dump(value)}, origin="generated",
                         run_id=run_id)


def edit_stage(project: Project, dimension: str, stage: str, value: Any, *, who: str) -> None:
    """A person changed a step result: stored with who and when (``project.record_edit``)."""
    key = (STAGE_KIND, _stage_key(dimension, stage))
    artefact = project.get_artefact(*key)
    if artefact is None:  # typed in before the step ever ran
        project.put_artefact(key[0], key[1], {"input": "", "value": _dump(value)},
                             origin="human")
        artefact = project.get_artefact(*key)
        assert artefact is not None
    new = _dump(value)
    if artefact.payload.get("value") == new:
        return
    project.record_edit(key, "value", artefact.payload.get("value"), new, who)


def attributes_of(project: Project, state: WizardState, dimension: str) -> list[Attribute]:
    """The merged think-aloud attributes of ``dimension``: models' first, then people's notes,
    exact repeats removed (what component extraction reads)."""
    stored = get_stage(project, dimension, "think_aloud")
    models = stored.value.attributes if stored is not None else []
    return unique_attributes([*models, *state.notes.get(dimension, [])])


def stage_input(project: Project, state: WizardState, dimension: str, stage: str,
                model: Any = None) -> str:
    """The hash of what ``stage`` would consume now (compare with ``StageOutput.input``).
    ``model``: the profile that builds (a construction step made by another model, or the same
    model with another server, seed, temperature or answer length, is not current; None: not
    counted, as for a stand-in model without a profile)."""
    dim = state.dimension(dimension) or Dimension(name=dimension)

    def value(name: str) -> Any:
        got = get_stage(project, dimension, name)
        return got.value if got is not None else None

    def hashed(parts: list[Any]) -> str:
        if model is not None:
            from core.llm.identity import model_fields

            fields = model_fields(model)
            if fields["model"]:
                parts.append(fields)
        return fingerprint(parts)

    if stage == "think_aloud":
        return fingerprint([dim, state.chosen_samples(dimension), state.assessors])
    if stage == "components":
        return hashed([dim, attributes_of(project, state, dimension)])
    if stage == "clusters":
        return hashed([dim, value("components"), attributes_of(project, state, dimension)])
    if stage == "key_questions":
        return hashed([dim, value("clusters")])
    if stage == "sub_questions":
        return hashed([dim, value("key_questions")])
    if stage == "checklist":
        return hashed([dim, value("sub_questions"), state.validate_questions])
    raise ValueError(f"unknown stage {stage!r}")


# ----------------------------------------------------------------------------- checklists
def load_checklist(project: Project, dimension: str) -> Checklist | None:
    artefact = project.get_artefact(CHECKLIST_ARTEFACT, dimension)
    if artefact is None:
        return None
    return Checklist.model_validate(artefact.payload)


def checklist_origin(project: Project, dimension: str) -> tuple[str, bool]:
    """Where the checklist of ``dimension`` came from ("generated", "imported", "human"; ""
    when there is none) and whether a person edited it since."""
    artefact = project.get_artefact(CHECKLIST_ARTEFACT, dimension)
    if artefact is None:
        return "", False
    return str(artefact.origin), bool(artefact.edited)


def edit_checklist(project: Project, checklist: Checklist, *, who: str) -> Checklist:
    """Store a person's change of a checklist (its items, definition and components without
    questions yet) with who and when. Items whose text, component or position changed should
    carry ``edited_by`` already."""
    key = (CHECKLIST_ARTEFACT, checklist.dimension)
    artefact = project.get_artefact(*key)
    if artefact is None:
        save_checklist(project, checklist, origin="human")
        return checklist
    new = checklist.model_dump(mode="json")
    old = artefact.payload
    for name in ("items", "definition", "empty_components"):
        if old.get(name, [] if name == "empty_components" else None) != new[name]:
            project.record_edit(key, name, old.get(name), new[name], who)
    return checklist


# ---------------------------------------------------------------------------------- texts
def store_texts_file(project: Project, setup: TextsSetup, path: str | Path) -> TextsSetup:
    """Copy the texts file into the project (so a moved file can still be read)."""
    ref = store_input(project, TEXTS_INPUT_KIND, path)
    return setup.model_copy(update={"path": ref.path, "file_name": ref.file_name,
                                    "input_id": ref.input_id, "content_hash": ref.content_hash})


def open_texts_file(project: Project, setup: TextsSetup) -> tuple[Path | None, TextsSetup, str]:
    """The texts file to read (``core.project.inputs.open_input``: where it was chosen, a new
    version when it changed, the project's copy when it is gone), the setup (updated when a
    new version was read) and a note for the user; (None, setup, why) when there is none."""
    if not setup.path and setup.input_id is None:
        return None, setup, ""
    ref = InputRef(path=setup.path, file_name=setup.file_name, content_hash=setup.content_hash,
                   input_id=setup.input_id)
    try:
        opened = open_input(project, TEXTS_INPUT_KIND, ref)
    except FileNotFoundError as exc:
        return None, setup, str(exc)
    if opened.ref != ref:
        setup = setup.model_copy(update={"input_id": opened.ref.input_id,
                                         "content_hash": opened.ref.content_hash})
    return opened.path, setup, opened.note


def texts_file(project: Project, setup: TextsSetup) -> Path | None:
    """The texts file to read (see :func:`open_texts_file`), None when there is none."""
    return open_texts_file(project, setup)[0]


# -------------------------------------------------------------------------------- results
def load_run(project: Project, state: WizardState,
             checklists: Sequence[Checklist]) -> ScoringRun | None:
    """The scores of the last scoring run from the project, without asking any model; None
    when there is none, it did not finish, or the checklists changed since."""
    if state.run_id is None:
        return None
    run = project.get_run(state.run_id)
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
    order = state.text_order or sorted({t for _, t in by_key})
    scores = [by_key[(c.dimension, t)] for c in checklists for t in order
              if (c.dimension, t) in by_key]
    if not scores:
        return None
    settings = ScoringSettings.model_validate((run.settings or {}).get("scoring") or {})
    return ScoringRun(scores=scores, settings=settings, model=(run.settings or {}).get("model", ""),
                      run_id=run.id, checklists=list(checklists), date=_local(run.finished_at),
                      model_settings=(run.settings or {}).get("model_settings"))


def _local(stamp: str | None) -> str:
    """A stored UTC time as local "YYYY-MM-DD HH:MM" ("" when there is none)."""
    if not stamp:
        return ""
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


def texts_key(setup: TextsSetup | None) -> str:
    """What identifies the texts a run scored: the stored file (by content), its sheet and the
    column choices (the human-score columns too: they are part of the results)."""
    if setup is None:
        return ""
    header = [setup.header_row] if setup.header_row is not None else []  # a chosen header
    return fingerprint([setup.input_id, setup.sheet, setup.columns, setup.human, *header])


def run_texts_line(state: WizardState) -> str:
    """The texts of the last run in plain words ("texts.csv, sheet X: 12 texts")."""
    return texts_line(state.run_texts, state.run_count)


def run_samples(project: Project, state: WizardState,
                checklists: Sequence[Checklist]) -> dict[str, list[ScoredSample]]:
    """Per dimension, the think-aloud samples a scored text is compared with: the samples
    chosen for the dimension now and those its checklist was built from (repeats removed)."""
    out: dict[str, list[ScoredSample]] = {}
    for checklist in checklists:
        seen: set[str] = set()
        samples = []
        for sample in [*state.chosen_samples(checklist.dimension), *checklist.samples]:
            key = " ".join(sample.text.split()).casefold()
            if key and key not in seen:
                seen.add(key)
                samples.append(sample)
        out[checklist.dimension] = samples
    return out


def results_out_of_date(project: Project, state: WizardState, run: ScoringRun | None,
                        checklists: Sequence[Checklist], model: Any) -> list[str]:
    """Why ``run`` no longer matches the current choices, in plain words (empty: it is
    current): a checklist edited, added or removed, other scoring options, another model or the
    same model with other settings (``model``: the chosen profile; see
    :func:`core.llm.identity.model_differences`), other prompts, other think-aloud samples, or
    another texts file, sheet or columns."""
    from core.llm.identity import model_differences
    if run is None:
        return []
    stored = project.get_run(run.run_id) if run.run_id is not None else None
    then = (stored.settings if stored is not None else None) or {}
    now = run_settings(checklists, state.scoring, model,
                       run_samples(project, state, checklists))
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
    if state.run_texts is None:
        reasons.append("the texts file of these results was not recorded")
    elif texts_key(state.run_texts) != texts_key(state.texts):
        reasons.append("another texts file, sheet or column choice is chosen")
    return reasons


def all_checklists(project: Project, state: WizardState) -> list[Checklist]:
    """The stored checklists of the wizard's dimensions, in the dimensions' order."""
    stored = {c.dimension: c for c in load_checklists(project)}
    return [stored[d.name] for d in state.dimensions if d.name in stored and stored[d.name].items]


# ------------------------------------------------------------------------ checklists kept
def save_checklist(project: Project, checklist: Checklist, *, origin: str = "generated",
                   run_id: int | None = None) -> None:
    """Store a checklist in the project (artefact ``interacteval.checklist``, key = dimension).
    A person's later changes go through :func:`edit_checklist` so who and when are kept."""
    project.put_artefact(CHECKLIST_ARTEFACT, checklist.dimension,
                         checklist.model_dump(mode="json"), origin=origin,  # type: ignore[arg-type]
                         run_id=run_id)


def load_checklists(project: Project) -> list[Checklist]:
    """The checklists stored in the project, in the order they were first stored."""
    return [Checklist.model_validate(a.payload)
            for a in project.list_artefacts(CHECKLIST_ARTEFACT)]


def import_checklists(project: Project, state: WizardState, path: str | Path) -> Any:
    """Read a checklist workbook (:func:`core.interacteval.inputs.read_checklists`); its
    checklists replace those of the same dimensions (matched ignoring case; new dimensions are
    added to ``state``, which is saved). Returns what was read (its ``errors`` mean nothing was
    imported)."""
    from core.interacteval.inputs import read_checklists

    got = read_checklists(path)
    if got.errors:
        return got
    dims = list(state.dimensions)
    with project.transaction():
        for checklist in got.checklists:
            existing = next((d for d in dims if d.name.casefold() ==
                             checklist.dimension.casefold()), None)
            if existing is None:
                dims.append(Dimension(name=checklist.dimension,
                                      definition=checklist.definition))
            else:
                checklist = checklist.model_copy(update={
                    "dimension": existing.name,
                    "definition": checklist.definition or existing.definition})
            save_checklist(project, checklist, origin="imported")
        state.dimensions = dims
        save_state(project, state)
    return got


def deleted_questions(project: Project, dimension: str) -> list[tuple[str, str, str]]:
    """The questions a person deleted from the checklist of ``dimension`` and that are not in
    it now, as ``(question, who, when)`` (issue 28: a deleted question was nowhere in the
    export)."""
    edits = project.list_edits((CHECKLIST_ARTEFACT, dimension))
    artefact = project.get_artefact(CHECKLIST_ARTEFACT, dimension)
    now = {str(i.get("question", "")) for i in (artefact.payload.get("items") or [])} \
        if artefact is not None else set()
    out: dict[str, tuple[str, str, str]] = {}
    for e in edits:
        if e.field != "items" or not isinstance(e.old, list) or not isinstance(e.new, list):
            continue
        before = [str(i.get("question", "")) for i in e.old if isinstance(i, dict)]
        after = {str(i.get("question", "")) for i in e.new if isinstance(i, dict)}
        missing = [q for q in before if q not in after]
        # one change at a time in the editor: a question reworded is missing too, but then the
        # list keeps its length; only as many as the list lost were deleted
        if missing and len(missing) <= len(before) - len(after):
            for question in missing:
                out[question] = (question, e.who, _local(e.at))
        for question in after:
            out.pop(question, None)  # put back later
    return [v for q, v in out.items() if q and q not in now]


def deleted_lines(project: Project, dimensions: Sequence[str]) -> list[tuple[str, str]]:
    """The Read me lines of the deleted questions (:func:`deleted_questions`)."""
    lines = []
    for dimension in dimensions:
        gone = deleted_questions(project, dimension)
        if gone:
            lines.append((f"{dimension}: questions deleted", "; ".join(
                f"“{q}” (by {who}, {when})" for q, who, when in gone)))
    return lines


def export_checklists(project: Project, state: WizardState, path: str | Path, *,
                      who: str = "") -> Any:
    """Write every checklist of the wizard's dimensions to a workbook (with the questions a
    person deleted, in the Read me)."""
    from core.interacteval.report import write_checklists

    readme = [("Made by", who)] if who else []
    checklists = all_checklists(project, state)
    readme += deleted_lines(project, [c.dimension for c in checklists])
    readme += privacy.deidentification_readme(project)
    return write_checklists(path, checklists, readme=readme)


# ------------------------------------------------------------------------ building steps
#: The construction steps after the think-aloud, in order ("checklist" = the review).
BUILD_KEYS = ("components", "clusters", "key_questions", "sub_questions", "checklist")


async def run_think_aloud(project: Project, state: WizardState, dimension: str,
                          assessors: Mapping[str, JsonLLM], *,
                          progress: Progress | None = None,
                          cancel: CancelToken | None = None, who: str = "") -> ThinkAloudResult:
    """Every model of ``assessors`` thinks aloud about ``dimension`` over its chosen samples;
    the result is kept as the step's output (a version a person edited is kept aside first,
    see :func:`replaced_version`). Raises :class:`StageError` when no model could."""
    from core.interacteval.think_aloud import think_aloud

    dim = state.dimension(dimension) or Dimension(name=dimension)
    input_hash = stage_input(project, state, dimension, "think_aloud")
    await _refuse_too_long(dim, state.chosen_samples(dimension), [], assessors=assessors)
    result = await think_aloud(dim, state.chosen_samples(dimension), assessors,
                               progress=progress, cancel=cancel)
    if not result.attributes and result.failures:
        kinds = [f.kind for f in result.failures if f.kind]
        error = StageError("No model could think aloud: " + "; ".join(
            f"{f.who}: {f.message}" for f in result.failures), stage="Think-aloud",
            dimension=dimension, kind=max(set(kinds), key=kinds.count) if kinds else "")
        error.result = result  # type: ignore[attr-defined]  # who failed, and why
        raise error
    with project.transaction():
        _keep_aside(project, dimension, "think_aloud", person(who))
        put_stage(project, dimension, "think_aloud", result, input_hash=input_hash)
    return result


async def _refuse_too_long(dim: Dimension, samples: Sequence[Any], notes: Sequence[Any], *,
                           assessors: Mapping[str, Any] | None = None,
                           builder: Any = None) -> None:
    """Refuse, before any call, a build whose rated samples (for the models thinking aloud)
    or notes (for the builder) hold one too long for the model even alone
    (:func:`core.interacteval.estimate.build_refusals`): a :class:`StageError`, kind
    "too_long", naming each."""
    from core.interacteval.estimate import build_refusals
    from core.interacteval.grounded import uses_grounded_path
    from core.llm.context import limits_for, refusal

    problems = build_refusals(
        dim, samples, notes,
        builder=await limits_for(builder) if builder is not None else None,
        assessors=[lim for llm in (assessors or {}).values()
                   if (lim := await limits_for(llm)) is not None],
        grounded=builder is not None and uses_grounded_path(builder))
    if problems:
        raise StageError(refusal(problems), stage="Inputs", dimension=dim.name,
                         kind="too_long")


#: Kept versions a person edited that a new run of their step replaced (key
#: ``<dimension>/<step>``, the latest one): "keep both, with the edit recorded".
REPLACED_KIND = "interacteval.replaced"
#: What a step does with an output a person edited: keep it (the step is not run; later steps
#: read it) or replace it (the edited version is kept aside, see :data:`REPLACED_KIND`).
EDIT_CHOICES = ("keep", "replace")


def edited_steps(project: Project, dimension: str, keys: Sequence[str]) -> list[tuple[str, str]]:
    """The steps among ``keys`` whose kept output a person changed (edited, typed in, or an
    imported checklist), as ``(step, who)``: running them again would replace that work, so
    they are never run without asking (issue 28: "Run all remaining steps" overwrote edited
    components with no warning)."""
    out = []
    for key in keys:
        if key == "checklist":
            artefact = project.get_artefact(CHECKLIST_ARTEFACT, dimension)
            if artefact is None or not (artefact.edited or artefact.origin != "generated"):
                continue
            kind_key = (CHECKLIST_ARTEFACT, dimension)
        else:
            artefact = project.get_artefact(STAGE_KIND, _stage_key(dimension, key))
            if artefact is None or not (artefact.edited or artefact.origin == "human"):
                continue
            kind_key = (STAGE_KIND, artefact.key)
        edits = project.list_edits(kind_key)
        who = edits[-1].who if edits else ("imported" if artefact.origin == "imported" else "")
        out.append((key, who))
    return out


def replaced_version(project: Project, dimension: str, key: str) -> dict[str, Any] | None:
    """The edited version of step ``key`` that a new run replaced (``value``, ``edited_by``,
    ``replaced_by``, ``replaced_at``), or None."""
    artefact = project.get_artefact(REPLACED_KIND, _stage_key(dimension, key))
    return dict(artefact.payload) if artefact is not None else None


def restore_replaced(project: Project, dimension: str, key: str, *, who: str) -> Any:
    """Put back the edited version of step ``key`` that a new run replaced (recorded as
    ``who``'s edit); returns it, or None when there is none."""
    kept = replaced_version(project, dimension, key)
    if kept is None:
        return None
    if key == "checklist":
        checklist = Checklist.model_validate(kept["value"])
        edit_checklist(project, checklist, who=who)
        value: Any = checklist
    else:
        value = _load(key, kept["value"])
        edit_stage(project, dimension, key, value, who=who)
    project.delete_artefact((REPLACED_KIND, _stage_key(dimension, key)), who)
    return value


def _keep_aside(project: Project, dimension: str, key: str, who: str) -> None:
    """Keep the edited output of step ``key`` before a new run replaces it."""
    from datetime import datetime

    edited = dict(edited_steps(project, dimension, [key]))
    if key not in edited:
        return
    if key == "checklist":
        artefact = project.get_artefact(CHECKLIST_ARTEFACT, dimension)
        value = artefact.payload if artefact is not None else None
    else:
        artefact = project.get_artefact(STAGE_KIND, _stage_key(dimension, key))
        value = artefact.payload.get("value") if artefact is not None else None
    project.put_artefact(REPLACED_KIND, _stage_key(dimension, key), {
        "value": value, "edited_by": edited[key], "replaced_by": who,
        "replaced_at": datetime.now().strftime("%Y-%m-%d %H:%M")}, origin="human")


def _keep_edited(project: Project, state: WizardState, dimension: str, key: str,
                 input_hash: str, who: str, keep_state: bool) -> Any:
    """A person's edited output of step ``key`` stays as it is: the step is not run, and the
    output counts as made from today's inputs (recorded as ``who``'s decision)."""
    if key == "checklist":
        state.checklist_inputs[dimension] = input_hash
        if keep_state:
            save_state(project, state)
        return load_checklist(project, dimension)
    artefact = project.get_artefact(STAGE_KIND, _stage_key(dimension, key))
    assert artefact is not None
    old = artefact.payload.get("input", "")
    if old != input_hash:
        project.record_edit(artefact, "input", old, input_hash, who)
    got = get_stage(project, dimension, key)
    return got.value if got is not None else None


async def run_build_step(project: Project, state: WizardState, dimension: str, key: str,
                         llm: JsonLLM, *, progress: Progress | None = None,
                         cancel: CancelToken | None = None, keep_state: bool = True,
                         edits: str = "keep", who: str = "") -> Any:
    """One construction step (``key`` in :data:`BUILD_KEYS`) on the kept (possibly edited)
    output of the step before; its output is kept (the review's is the checklist). With
    ``keep_state`` False the wizard's stored choices are left alone (the CLI's build).

    An output a person edited (:func:`edited_steps`) is never replaced silently: ``edits``
    "keep" leaves it as it is (the step is not run and the output counts as current; ``who``
    is recorded as having decided so), "replace" runs the step and keeps the edited version
    aside (:func:`replaced_version`, :func:`restore_replaced`)."""
    from core.interacteval.attribute_clustering import cluster_attributes
    from core.interacteval.component_extraction import extract_components
    from core.interacteval.key_questions import generate_key_questions
    from core.interacteval.sub_questions import generate_sub_questions
    from core.interacteval.validation import (
        checklist_from_sub_questions,
        validate_questions,
    )

    if key not in BUILD_KEYS:
        raise ValueError(f"unknown step {key!r}")
    if edits not in EDIT_CHOICES:
        raise ValueError(f"edits must be one of {EDIT_CHOICES}, not {edits!r}")
    dim = state.dimension(dimension) or Dimension(name=dimension)
    builder = getattr(llm, "profile", None)
    input_hash = stage_input(project, state, dimension, key,
                             builder if getattr(builder, "model", "") else None)
    if edits == "keep" and edited_steps(project, dimension, [key]):
        return _keep_edited(project, state, dimension, key, input_hash, person(who),
                            keep_state)

    def need(stage: str, what: str) -> Any:
        got = get_stage(project, dimension, stage)
        if got is None:
            raise StageError(f"{what} for {dimension} are missing: run the step before first.",
                             dimension=dimension)
        return got.value

    attributes = attributes_of(project, state, dimension)
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
        if state.validate_questions:
            checklist = await validate_questions(dim, groups, llm, progress=progress,
                                                 cancel=cancel)
        else:
            checklist = checklist_from_sub_questions(dim, groups)
        checklist.samples = state.chosen_samples(dimension)  # the think-aloud's samples
        with project.transaction():
            _keep_aside(project, dimension, key, person(who))
            save_checklist(project, checklist)
            state.checklist_inputs[dimension] = input_hash
            if keep_state:
                save_state(project, state)
        return checklist
    with project.transaction():
        _keep_aside(project, dimension, key, person(who))
        put_stage(project, dimension, key, value, input_hash=input_hash)
    return value


async def run_build_steps(project: Project, state: WizardState, dimension: str,
                          keys: Sequence[str], llm: JsonLLM, *,
                          progress: Progress | None = None,
                          cancel: CancelToken | None = None, keep_state: bool = True,
                          edits: str = "keep", who: str = "") -> Any:
    """:func:`run_build_step` for each of ``keys`` in turn (``edits``, ``who``: what to do with
    a person's edited output, see there); the last one's output."""
    result = None
    for key in keys:
        result = await run_build_step(project, state, dimension, key, llm, progress=progress,
                                      cancel=cancel, keep_state=keep_state, edits=edits,
                                      who=who)
    return result


async def build_dimension(project: Project, state: WizardState, dimension: str,
                          assessors: Mapping[str, JsonLLM], builder: JsonLLM, *,
                          progress: Progress | None = None, cancel: CancelToken | None = None,
                          keep_state: bool = True, edits: str = "keep", who: str = "") -> Any:
    """Every step for ``dimension`` in a row, as the wizard runs them: think-aloud by
    ``assessors`` (none: people's notes only; when every model fails the notes go on alone),
    then the construction steps with ``builder`` (``edits``: what to do with the outputs a
    person edited, see :func:`run_build_step`). Returns the
    :class:`core.interacteval.pipeline.ChecklistBuild` (for the export's sheets)."""
    from core.interacteval.pipeline import ChecklistBuild

    think = ThinkAloudResult(dimension=dimension)
    dim = state.dimension(dimension) or Dimension(name=dimension)
    await _refuse_too_long(dim, state.chosen_samples(dimension) if assessors else [],
                           list(state.notes.get(dimension, [])), assessors=assessors,
                           builder=builder)  # before any call
    if assessors:
        try:
            think = await run_think_aloud(project, state, dimension, assessors,
                                          progress=progress, cancel=cancel, who=who)
        except StageError as exc:
            if not state.notes.get(dimension):
                raise
            think = getattr(exc, "result", think)
    checklist = await run_build_steps(project, state, dimension, BUILD_KEYS, builder,
                                      progress=progress, cancel=cancel, keep_state=keep_state,
                                      edits=edits, who=who)

    def value(stage: str) -> Any:
        got = get_stage(project, dimension, stage)
        return got.value if got is not None else None

    return ChecklistBuild(
        dimension=state.dimension(dimension) or Dimension(name=dimension),
        samples=state.chosen_samples(dimension), think_aloud=think,
        notes=list(state.notes.get(dimension, [])),
        attributes=attributes_of(project, state, dimension), components=value("components"),
        clusters=value("clusters"), key_questions=value("key_questions"),
        sub_questions=value("sub_questions"), checklist=checklist,
        validated=state.validate_questions)


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
    from core.project.units import RunUnits

    settings = settings or ScoringSettings()
    if run_id is None:
        run_id = open_scoring_run(project, checklists, settings, model, samples)
    return await _score_texts(checklists, items, llm, settings=settings, model=model,
                              store=RunUnits(project, run_id, RESULT_KIND), run_id=run_id,
                              samples=samples, progress=progress, cancel=cancel)


def estimate_scoring(project: Project, checklists: Sequence[Checklist],
                     items: Sequence[TextItem], settings: ScoringSettings, profile: Any, *,
                     samples: SampleTexts | None = None, latency: Any = None,
                     repeats: int = 1) -> Any:
    """What :func:`score_texts` with ``profile`` will take (:class:`core.llm.estimate.Estimate`):
    calls, tokens, cost and time of the texts not yet scored in the project with these
    checklists, options and model (``repeats`` N: of repeats 0..N-1 together, see
    :mod:`core.interacteval.repeats`). ``latency`` (e.g. from one probe call) overrides the
    latency the project recorded for this model. Texts too long for the model are listed in
    ``too_long`` (the run refuses them). No model is called (a server may be asked its
    context window)."""
    from core.interacteval.checklist_scoring import refused_texts
    from core.interacteval.estimate import plan_scoring
    from core.interacteval.repeats import repeat_settings
    from core.llm.context import limits_of
    from core.llm.estimate import estimate, measured_latency

    limits = limits_of(profile)
    plan, skipped = [], 0
    for k in range(max(1, repeats)):
        mine = repeat_settings(settings, k)
        run = project.find_run(METHOD, STEP_SCORE,
                               run_settings(checklists, mine, profile, samples))
        done = project.finished_keys(run.id, RESULT_KIND) if run is not None else set()
        stages, n = plan_scoring(checklists, items, mine, done=done, limits=limits)
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


def plan_scoring(project: Project, state: WizardState, items: Sequence[TextItem],
                 model: Any) -> ScoringJob:
    """Open the scoring run of the wizard's checklists over ``items`` with ``model`` and
    remember it in ``state`` (saved): which run, the texts' order, file and count."""
    checklists = all_checklists(project, state)
    samples = run_samples(project, state, checklists)
    run_id = open_scoring_run(project, checklists, state.scoring, model, samples)
    state.run_id = run_id
    state.text_order = [i.id for i in items]
    state.run_texts = state.texts.model_copy(deep=True)
    state.run_count = len(items)
    save_state(project, state)
    return ScoringJob(run_id, checklists, list(items), state.scoring, model, samples)


def texts_line(setup: TextsSetup | None, count: int) -> str:
    """The texts of a run in plain words ("texts.csv, sheet X: 12 texts")."""
    if setup is None or not setup.file_name:
        return ""
    shown = f": {count} text{'s' if count != 1 else ''}" if count else ""
    sheet = setup.sheet if setup.sheet and setup.sheet != setup.file_name else ""
    return setup.file_name + (f", sheet {sheet}" if sheet else "") + shown


def person(name: str | None) -> str:
    """Who is working, for the edit history and the exports ("unnamed person" when unset)."""
    return (name or "").strip() or "unnamed person"


def export_results(project: Project, run: ScoringRun, path: str | Path, *, texts: str = "",
                   include_samples: bool = False, who: str = "",
                   agreement: Sequence[Any] | None = None, repeats: Sequence[Any] = ()) -> Any:
    """Write the results workbook of ``run`` (the app and the CLI alike): the agreement with
    the human scores (computed here unless given), who scored and the model calls stored for
    the run in the Read me sheet. ``repeats`` (the runs of repeats 0..N-1, N >= 2) add the
    Stability sheet (:mod:`core.interacteval.repeats`); the scores are repeat 0's."""
    from core.interacteval.agreement import human_agreement
    from core.interacteval.report import write_results

    if agreement is None:
        agreement = human_agreement(run.scores, include_samples=include_samples)
    lines = [("Scored by", person(who))]
    lines += deleted_lines(project, [c.dimension for c in run.checklists])
    if run.run_id is not None:
        usage = project.llm_usage(run.run_id)
        lines.append(("Model calls", (f"{usage.calls} calls stored, {usage.prompt_tokens:,} "
                                      f"tokens in, {usage.completion_tokens:,} out")))
    extra = []
    if len(repeats) >= 2:
        from core.interacteval.repeats import stability, stability_sheet

        entries = stability(repeats)
        extra.append(stability_sheet(entries))
        lines.append(("Repeats", (f"each call made {len(repeats)} times (repeats 0 to "
                                  f"{len(repeats) - 1}); the scores shown are repeat 0's, the "
                                  "Stability sheet compares the repeats")))
        lines += [(f"Stability: {dim}", s.sentence) for _, dim, s in entries]
    extra += privacy.deidentification_sheets(project)  # what was replaced, never values
    return write_results(path, run, agreement=agreement, readme=lines,
                         texts=texts, include_samples=include_samples, extra_sheets=extra)


# ------------------------------------------------------------------------ check the judge
def judge_to_check(project: Project, state: WizardState, *, texts: bool = True
                   ) -> tuple[Any, str]:
    """The last scoring run as the judge a person checks (:mod:`core.judge_check`), with the
    texts read from the project's copy of the texts file (``texts`` False: without them);
    (None, why) when there is no finished run."""
    from core.interacteval.judge_check import judge_data

    checklists = all_checklists(project, state)
    run = load_run(project, state, checklists)
    if run is None and state.run_id is None:  # scored from the command line: no wizard state
        run = _last_finished_run(project)
    if run is None:
        return None, ("There are no current checklist scores to check: score the texts first "
                      "(the last scoring run must have finished with the current checklists; "
                      "after a checklist was edited, score again).")
    items: list[TextItem] = []
    setup = state.run_texts or state.texts
    path = texts_file(project, setup) if setup and texts else None
    if path is not None:
        items = list(read_texts(path, setup).items)
    return judge_data(run, items), ""


def questions_failing_good_texts(project: Project, state: WizardState, dimension: str
                                 ) -> dict[str, str]:
    """The questions of ``dimension`` that say No to texts people rated Yes (the checklist
    editor's badge; see :data:`core.judge_check.FAILS_GOOD_RATE`): question -> why, in
    words. Empty when nobody answered the questions on the Check the judge page."""
    from core import judge_check

    ratings = judge_check.load_ratings(project, METHOD)
    if not any(r.answers.get(dimension) for r in ratings):
        return {}
    judge, _ = judge_to_check(project, state, texts=False)
    if judge is None:
        return {}
    report = judge_check.judge_report(judge, ratings, n_boot=0)
    return {q.question: (f"Of the {q.result.both_yes + q.result.judge_no_person_yes} texts "
                         f"people said Yes to, the judge said No to "
                         f"{q.result.judge_no_person_yes} ({q.result.false_fail_rate:.0%}). "
                         "Click to see them.")
            for q in report.fails_good if q.dimension == dimension}


def _kept_scores(project: Project, run_id: int) -> list[TextScore]:
    """The scores a run kept in the project (one that no longer reads as a score is left out)."""
    scores = []
    for result in project.get_results(run_id, RESULT_KIND):
        try:
            scores.append(TextScore.model_validate(result.payload))
        except ValidationError:
            continue
    return scores


def _is_repeat(run: Any) -> bool:
    """A run of repeat k > 0 (``core.interacteval.repeats``): not a judge of its own."""
    return bool(((run.settings or {}).get("scoring") or {}).get("repeat"))


def _last_finished_run(project: Project) -> ScoringRun | None:
    """The scores of the project's last finished scoring run, whatever the wizard's state (a
    project scored with ``evaldesk checklist score --project`` has no wizard state)."""
    finished = [r for r in project.list_runs(METHOD, STEP_SCORE)
                if r.status == "finished" and not _is_repeat(r)]
    if not finished:
        return None
    run = finished[-1]
    scores = _kept_scores(project, run.id)
    if not scores:
        return None
    settings = ScoringSettings.model_validate((run.settings or {}).get("scoring") or {})
    return ScoringRun(scores=scores, settings=settings, model=(run.settings or {}).get("model", ""),
                      run_id=run.id, date=_local(run.finished_at),
                      model_settings=(run.settings or {}).get("model_settings"))


def judges_to_compare(project: Project, state: WizardState) -> list[tuple[str, str, Any]]:
    """Every finished scoring run, as ``(name, model, judge)`` for
    :func:`core.judge_check.rank_judges` (the latest run of each model and checklists)."""
    from core.interacteval.judge_check import judge_data

    seen: dict[str, Any] = {}
    for run in project.list_runs(METHOD, STEP_SCORE):
        if run.status != "finished" or _is_repeat(run):
            continue
        settings = run.settings or {}
        label = str(settings.get("model", "")) or "model not recorded"
        key = json.dumps([label, settings.get("model_settings"), settings.get("checklists"),
                          settings.get("scoring")], sort_keys=True)
        seen[key] = run  # a later run with the same choices replaces an earlier one
    out = []
    for run in seen.values():
        scores = _kept_scores(project, run.id)
        if not scores:
            continue
        settings = run.settings or {}
        scoring = ScoringRun(
            scores=scores, model=str(settings.get("model", "")), run_id=run.id,
            settings=ScoringSettings.model_validate(settings.get("scoring") or {}),
            date=_local(run.finished_at), model_settings=settings.get("model_settings"))
        model = scoring.model or "model not recorded"
        out.append((f"{model} (run {run.id}, {scoring.date})", scoring.model,
                    judge_data(scoring)))
    return out


# ------------------------------------------------------------------------------ conditions
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
    from core.llm.identity import model_fields

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


def condition_input(state: WizardState, dimension: str, name: str,
                    models: ConditionModels) -> str:
    """The hash of what condition ``name``'s checklist of ``dimension`` is built from."""
    people = list(state.notes.get(dimension, [])) if name in ("human", "combined") else []
    thinkers = {who: _model_key(models.spec(f"assessor:{who}")) for who in models.assessors} \
        if name in ("ai", "combined") else {}
    return fingerprint([name, state.dimension(dimension) or Dimension(name=dimension),
                        state.chosen_samples(dimension), people, thinkers,
                        _model_key(models.spec("builder")), state.validate_questions])


def condition_blockers(state: WizardState, names: Sequence[str], models: ConditionModels
                       ) -> dict[str, str]:
    """The conditions among ``names`` that cannot run with the current choices, and what to
    do about it (a checklist from the models' think-aloud needs a model that thinks aloud; one
    from the people's notes needs notes)."""
    has_notes = any(state.notes.get(d.name) for d in state.dimensions)
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


def condition_checklist(project: Project, state: WizardState, dimension: str, name: str,
                        models: ConditionModels) -> Checklist | None:
    """Condition ``name``'s checklist of ``dimension`` kept in the project, if it was built
    from what is chosen now (None otherwise)."""
    artefact = project.get_artefact(CONDITION_KIND, f"{dimension}/{name}")
    if artefact is None or artefact.payload.get("input") != condition_input(
            state, dimension, name, models):
        return None
    try:
        return Checklist.model_validate(artefact.payload["checklist"])
    except (ValidationError, KeyError, TypeError):
        return None


def condition_problems(project: Project, state: WizardState, name: str,
                       models: ConditionModels) -> list[str]:
    """Why condition ``name`` could not be built for some dimensions, the last time it was
    tried with the inputs chosen now (kept in the project, so reopening still says it)."""
    out = []
    for d in state.dimensions:
        artefact = project.get_artefact(CONDITION_KIND, f"{d.name}/{name}")
        if artefact is not None and artefact.payload.get("problem") and \
                artefact.payload.get("input") == condition_input(state, d.name, name, models):
            out.append(str(artefact.payload["problem"]))
    return out


def _single_settings(state: WizardState, model: Any, samples: Mapping[str, Any],
                     repeat: int = 0) -> dict[str, Any]:
    from core.interacteval.single_judge import TEMPLATE
    from core.llm.identity import model_fields

    out = {"dimensions": [d.model_dump(mode="json") for d in state.dimensions],
           **model_fields(model), "template": _load_template(TEMPLATE).template_version,
           "samples": {d: sorted(v) for d, v in samples.items() if v}}
    return {**out, "repeat": int(repeat)} if repeat else out


def _load_template(name: str) -> Any:
    from core.interacteval import _prompts

    return _prompts.load(name)


def _folded_samples(state: WizardState) -> dict[str, frozenset[str]]:
    return {d.name: frozenset(" ".join(s.text.split()).casefold()
                              for s in state.chosen_samples(d.name) if s.text.strip())
            for d in state.dimensions}


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


def load_conditions(project: Project, state: WizardState, names: Sequence[str],
                    items: Sequence[TextItem], models: ConditionModels,
                    settings: ScoringSettings | None = None, *, repeat: int = 0
                    ) -> dict[str, ConditionRun]:
    """The conditions among ``names`` kept in the project for the current choices, texts and
    models, without asking any model. A condition never run (or whose inputs changed since)
    is left out; one with texts still unscored or failed is in, with ``complete`` False.
    ``repeat`` k > 0: the scores of repeat k (:func:`run_conditions` with ``repeats``)."""
    from core.interacteval.conditions import CONDITIONS
    from core.interacteval.pipeline import unit_key
    from core.interacteval.repeats import repeat_settings

    settings = repeat_settings(settings or state.scoring, repeat)
    out: dict[str, ConditionRun] = {}
    for name in names:
        if name == "single-judge":
            from core.interacteval.single_judge import judge_key

            run = project.find_run(METHOD, STEP_SINGLE, _single_settings(
                state, models.spec("scorer"), _folded_samples(state), repeat))
            if run is None:
                continue
            keyed = [(judge_key(d.name, i), d.name, i) for d in state.dimensions for i in items]
            scores, complete = _condition_scores(project, run.id, SINGLE_KIND, keyed)
            out[name] = ConditionRun(name, CONDITIONS[name], scores, [], run.id, complete,
                                     models.scorer, [])
            continue
        checklists = [c for d in state.dimensions
                      if (c := condition_checklist(project, state, d.name, name, models))]
        problems = condition_problems(project, state, name, models)
        if not checklists:
            if problems:
                out[name] = ConditionRun(name, CONDITIONS[name], [], [], None, False,
                                         models.scorer, problems)
            continue
        samples = run_samples(project, state, checklists)
        run = project.find_run(METHOD, STEP_SCORE,
                               run_settings(checklists, settings, models.spec("scorer"), samples))
        if run is None:
            continue
        keyed = [(unit_key(c, i), c.dimension, i) for c in checklists for i in items]
        scores, complete = _condition_scores(project, run.id, RESULT_KIND, keyed)
        out[name] = ConditionRun(name, CONDITIONS[name], scores, checklists, run.id,
                                 complete and len(checklists) == len(state.dimensions),
                                 models.scorer, problems)
    return out


async def run_conditions(
    project: Project,
    state: WizardState,
    names: Sequence[str],
    items: Sequence[TextItem],
    models: ConditionModels,
    *,
    assessors: Mapping[str, JsonLLM],
    builder: JsonLLM,
    scorer_for_run: Any,
    settings: ScoringSettings | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    repeats: int = 1,
) -> dict[str, ConditionRun]:
    """Build and score the conditions among ``names`` for every dimension of ``state`` (the
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
    from core.interacteval.conditions import CHECKLIST_CONDITIONS, CONDITIONS, build_conditions
    from core.interacteval.repeats import MAX_REPEATS, repeat_settings
    from core.interacteval.single_judge import single_judge
    from core.llm.repeats import with_repeat
    from core.project.units import RunUnits

    if not 1 <= repeats <= MAX_REPEATS:
        raise ValueError(f"Repeat each call 1 to {MAX_REPEATS} times, not {repeats}.")
    settings = settings or state.scoring
    wanted = [n for n in names if n in CHECKLIST_CONDITIONS]
    made: dict[str, list[Checklist]] = {n: [] for n in wanted}
    problems: dict[str, list[str]] = {n: [] for n in wanted}
    for dim in state.dimensions:
        todo = []
        for name in wanted:
            kept = condition_checklist(project, state, dim.name, name, models)
            if kept is not None:
                made[name].append(kept)
            else:
                todo.append(name)
        if not todo:
            continue
        builds = await build_conditions(
            dim, state.chosen_samples(dim.name), todo, assessors=assessors, builder=builder,
            notes=state.notes.get(dim.name, []), validate=state.validate_questions,
            progress=progress, cancel=cancel)
        for name, build in builds.items():
            if isinstance(build, Exception):
                problem = str(getattr(build, "message", build))
                problems[name].append(problem)
                project.put_artefact(CONDITION_KIND, f"{dim.name}/{name}", {
                    "input": condition_input(state, dim.name, name, models),
                    "problem": problem}, origin="generated")
                continue
            checklist = build.checklist
            checklist.samples = state.chosen_samples(dim.name)
            project.put_artefact(CONDITION_KIND, f"{dim.name}/{name}", {
                "input": condition_input(state, dim.name, name, models),
                "checklist": checklist.model_dump(mode="json")}, origin="generated")
            made[name].append(checklist)
    for k in range(repeats):
        mine = repeat_settings(settings, k)  # repeat k: settings.repeat + k in the cache key
        for name in wanted:
            checklists = [c for c in made[name] if c.items]
            if not checklists:
                continue
            samples = run_samples(project, state, checklists)
            run_id = open_scoring_run(project, checklists, mine, models.spec("scorer"), samples)
            await score_texts(checklists, items, scorer_for_run(run_id), project=project,
                              settings=mine, model=models.spec("scorer"), run_id=run_id,
                              samples=samples, progress=progress, cancel=cancel)
        if "single-judge" in names:
            folded = _folded_samples(state)
            run_id = project.start_run(METHOD, STEP_SINGLE, _single_settings(
                state, models.spec("scorer"), folded, k), resume=True)
            await single_judge(state.dimensions, items,
                               with_repeat(scorer_for_run(run_id), k),
                               store=RunUnits(project, run_id, SINGLE_KIND), samples=folded,
                               progress=progress, cancel=cancel)
    have = load_conditions(project, state, names, items, models, settings)
    for name in wanted:
        if problems[name] and name not in have:
            have[name] = ConditionRun(name, CONDITIONS[name], [], [], None, False,
                                      models.scorer, problems[name])
    return {n: have[n] for n in names if n in have}


def load_condition_repeats(project: Project, state: WizardState, names: Sequence[str],
                           items: Sequence[TextItem], models: ConditionModels, repeats: int,
                           settings: ScoringSettings | None = None
                           ) -> dict[str, list[ConditionRun]]:
    """Per condition among ``names`` that scored texts: its kept repeats 0..``repeats``-1 (no
    model call), as far as they go (the list stops at the first repeat not run yet, so it
    may be shorter than ``repeats``). A text that failed in a repeat is there with its
    reason, never a score."""
    out: dict[str, list[ConditionRun]] = {}
    for k in range(max(1, repeats)):
        have = load_conditions(project, state, names, items, models, settings, repeat=k)
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
    from core.interacteval.repeats import stability

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


def estimate_conditions(project: Project, state: WizardState, names: Sequence[str],
                        items: Sequence[TextItem], models: ConditionModels,
                        profiles: Mapping[str, Any], *, latency: Any = None,
                        settings: ScoringSettings | None = None, repeats: int = 1) -> Any:
    """What :func:`run_conditions` will take (:class:`core.llm.estimate.Estimate`): the
    think-aloud and construction calls of each checklist not kept yet (the models'
    think-aloud is asked once for "ai" and "combined"), the scoring of the texts not scored
    yet (a checklist not built yet is counted with a stand-in of 10 questions), and one
    single-judge call per text and dimension not judged yet. ``profiles``: name -> profile
    of every model in ``models`` (the think-aloud models by name; the builder and scorer are
    found by their model string). A condition that cannot run (:func:`condition_blockers`)
    is not counted. ``repeats`` N: the scoring and single-judge calls of repeats 0..N-1
    (the checklists are built once). No model is called."""
    from core.interacteval.checklist_scoring import refused_texts
    from core.interacteval.conditions import CHECKLIST_CONDITIONS
    from core.interacteval.estimate import (
        build_refusals,
        combine,
        guessed_checklist,
        plan_build,
        plan_single_judge,
    )
    from core.interacteval.estimate import (
        plan_scoring as plan_scoring_calls,
    )
    from core.interacteval.grounded import uses_grounded_path
    from core.interacteval.repeats import repeat_settings
    from core.interacteval.single_judge import refused_texts as judge_refusals
    from core.llm.context import limits_of
    from core.llm.estimate import estimate, measured_latency

    settings = settings or state.scoring
    blocked = condition_blockers(state, names, models)
    names = [n for n in names if n not in blocked]
    by_model = {p.model: p for p in profiles.values()}
    scorer = models.profiles.get("scorer") or by_model.get(models.scorer) or \
        next(iter(profiles.values()))
    builder = models.profiles.get("builder") or by_model.get(models.builder) or scorer
    builder_limits, scorer_limits = limits_of(builder), limits_of(scorer)
    too_long: list[str] = []
    builder_plan: list[Any] = []
    scoring_plan: list[Any] = []
    thinking: list[Dimension] = []  # the dimensions whose models' think-aloud is asked
    skipped = 0
    wanted = [n for n in names if n in CHECKLIST_CONDITIONS]
    for dim in state.dimensions:
        asked_models = False
        for name in wanted:
            kept = condition_checklist(project, state, dim.name, name, models)
            if kept is not None:
                skipped += 1
                continue
            people = state.notes.get(dim.name, []) if name in ("human", "combined") else []
            if name in ("ai", "combined") and not asked_models:
                asked_models = True
                thinking.append(dim)
            builder_plan += plan_build(dim, state.chosen_samples(dim.name), people,
                                       think_aloud=0, validate=state.validate_questions,
                                       label=name, limits=builder_limits,
                                       grounded=uses_grounded_path(builder))
            too_long += build_refusals(dim, [], people, builder=builder_limits,
                                       grounded=uses_grounded_path(builder))
    for k, name in [(k, n) for k in range(max(1, repeats)) for n in wanted]:
        mine = repeat_settings(settings, k)
        checklists = []
        for dim in state.dimensions:
            kept = condition_checklist(project, state, dim.name, name, models)
            checklists.append(kept or guessed_checklist(dim))
        samples = run_samples(project, state, checklists)
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
            state, models.spec("scorer"), _folded_samples(state), k))
        done = project.finished_keys(run.id, SINGLE_KIND) if run is not None else set()
        stages, n = plan_single_judge(state.dimensions, items, done=done)
        refused = judge_refusals(state.dimensions, items, scorer_limits)
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
                    for stage in plan_build(dim, state.chosen_samples(dim.name), [],
                                            think_aloud=1, steps=(), label=who,
                                            limits=limits)]
            too_long += [p for dim in thinking for p in build_refusals(
                dim, state.chosen_samples(dim.name), [], assessors=[limits])]
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


def condition_models(state: WizardState, profile_of: Any
                     ) -> tuple[ConditionModels, dict[str, Any]] | None:
    """The wizard's models for the conditions (``profile_of(name)`` gives a model profile or
    None): who thinks aloud, builds and scores, and the profiles by name; None when there is
    no profile to score with."""
    builder_name = state.builder or (state.assessors[0] if state.assessors else "")
    scorer = profile_of(state.scorer or builder_name)
    builder = profile_of(builder_name) or scorer
    if scorer is None or builder is None:
        return None
    thinkers = {n: p for n in state.assessors if (p := profile_of(n)) is not None}
    profiles = {**thinkers, builder.name: builder, scorer.name: scorer}
    return ConditionModels(
        assessors={n: p.model for n, p in thinkers.items()}, builder=builder.model,
        scorer=scorer.model,
        profiles={"scorer": scorer, "builder": builder,
                  **{f"assessor:{n}": p for n, p in thinkers.items()}}), profiles


def condition_texts(project: Project, state: WizardState) -> list[TextItem]:
    """The texts the conditions score: those of the texts file chosen on the Score page
    (empty when none is chosen or it cannot be read)."""
    setup = state.texts
    path = texts_file(project, setup) if setup and (setup.path or setup.input_id) else None
    if path is None:
        return []
    got = read_texts(path, setup)
    return [] if got.errors else list(got.items)


def condition_judges(project: Project, state: WizardState, models: ConditionModels
                     ) -> list[tuple[str, str, Any]]:
    """The conditions kept in the project as judges to rank (:func:`core.judge_check.
    rank_judges`): ``(label, "condition:<name>", judge)`` for each one that scored texts."""
    from core.interacteval.conditions import CONDITIONS
    from core.interacteval.judge_check import judge_data

    items = condition_texts(project, state)
    if not items:
        return []
    out = []
    for name, run in load_conditions(project, state, list(CONDITIONS), items, models).items():
        if not run.scores:
            continue
        scoring = ScoringRun(scores=run.scores, settings=state.scoring, model=run.model,
                             run_id=run.run_id, checklists=run.checklists)
        out.append((f"Condition: {run.label}", f"condition:{name}", judge_data(scoring, items)))
    return out


# ------------------------------------------------------------------ estimates of building
def estimate_think_aloud(project: Project, state: WizardState, dimension: str,
                         profiles: Sequence[Any]) -> Any:
    """What :func:`run_think_aloud` on ``dimension`` takes: one call per model in
    ``profiles`` (:class:`core.llm.estimate.Estimate`, several models added up). An answer
    the project already has for the same prompt costs nothing, so this is at most."""
    from core.interacteval.estimate import build_refusals, combine, plan_build
    from core.llm.context import limits_of
    from core.llm.estimate import estimate, measured_latency

    dim = state.dimension(dimension) or Dimension(name=dimension)
    samples = state.chosen_samples(dimension)
    limits = [limits_of(p) for p in profiles]
    est = combine([estimate(plan_build(dim, samples, [], think_aloud=1, steps=(), limits=lim),
                            p, latency=measured_latency(project, p.model))
                   for p, lim in zip(profiles, limits)])
    est.too_long = build_refusals(dim, samples, [], assessors=limits)
    return est


def estimate_build_steps(project: Project, state: WizardState, dimension: str,
                         keys: Sequence[str], profile: Any) -> Any:
    """What :func:`run_build_steps` of ``keys`` on ``dimension`` with ``profile`` takes: one
    call per step, plus at most one more each (a reply that does not fit is asked again).
    The first step's prompt holds the real attributes; later ones hold what earlier steps
    will write, so their size is a rough figure."""
    from core.interacteval.estimate import build_refusals, plan_build
    from core.interacteval.grounded import uses_grounded_path
    from core.llm.context import limits_of
    from core.llm.estimate import estimate, measured_latency

    dim = state.dimension(dimension) or Dimension(name=dimension)
    limits = limits_of(profile)
    grounded = uses_grounded_path(profile)
    notes = attributes_of(project, state, dimension)
    plan = plan_build(dim, state.chosen_samples(dimension), notes, think_aloud=0, steps=keys,
                      validate=state.validate_questions, limits=limits, grounded=grounded)
    for stage in plan:
        stage.maybe = [*stage.maybe, *stage.prompts]
        stage.chain = (1, 2)
    est = estimate(plan, profile, latency=measured_latency(project, profile.model))
    if "components" in keys or "clusters" in keys:
        est.too_long = build_refusals(dim, [], notes, builder=limits, grounded=grounded)
    return est
