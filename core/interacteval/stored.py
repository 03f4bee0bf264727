"""InteractEval wizard state kept in the project file, so nothing the user did is lost.

The wizard works through this module; every change is stored as soon as it is made:

    state = load_state(project)                  # dimensions, samples, notes, texts, choices
    save_state(project, state)
    put_stage(project, "Coherence", "components", ["Flow", "Order"], input_hash=...)
    edit_stage(project, "Coherence", "components", ["Flow", "Logical order"], who="Anna")
    stage = get_stage(project, "Coherence", "components")   # StageOutput (value, input, edited)
    edit_checklist(project, checklist, who="Anna")          # via project.record_edit
    run = load_run(project, state, checklists)              # reopening: no new model calls
    results_out_of_date(project, state, run, checklists, model)  # why it no longer matches

Stage outputs are artefacts of kind ``interacteval.stage`` keyed ``<dimension>/<stage>``, with
the hash of what the stage consumed (``input``), so a step whose predecessor changed is shown as
out of date. Generated outputs are stored with origin "generated"; a person's edit goes through
``project.record_edit`` (who and when are kept). The checklists are the engine's artefacts
(:func:`core.interacteval.save_checklist`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from core.interacteval._common import unique_attributes
from core.interacteval.model import (
    Attribute,
    AttributeClusters,
    Checklist,
    Dimension,
    KeyQuestion,
    ScoredSample,
    ScoringSettings,
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
    ScoringRun,
    load_checklists,
    run_settings,
    save_checklist,
)
from core.llm import LLMFactory, gateway_for

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "STAGES",
    "STAGE_KIND",
    "STATE_KIND",
    "SUMMEVAL_DIMENSIONS",
    "TEXT_ROLES",
    "LLMFactory",
    "OpenedTexts",
    "StageOutput",
    "TextsRead",
    "TextsSetup",
    "WizardState",
    "all_checklists",
    "attributes_of",
    "default_llm_factory",
    "edit_checklist",
    "edit_stage",
    "fingerprint",
    "get_stage",
    "guess_text_columns",
    "load_checklist",
    "load_run",
    "load_state",
    "open_texts",
    "put_stage",
    "read_texts",
    "results_out_of_date",
    "run_samples",
    "run_texts_line",
    "sample_folder",
    "save_state",
    "stage_input",
    "store_texts_file",
    "texts_file",
    "texts_key",
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

#: Roles of the columns of a texts sheet (role -> what the user reads in the wizard).
TEXT_ROLES = {
    "text": "Text to score",
    "source": "Source (what the text is about)",
    "source_id": "Source document id",
    "id": "Text id",
    "system": "System (who wrote it)",
}

#: The model of a run (``core.llm.LLMFactory``); the default caches every call in the project.
default_llm_factory: LLMFactory = gateway_for


def sample_folder() -> Path:
    """The folder of the sample set shipped with EvalDesk."""
    from core.paths import resources_dir

    return resources_dir() / "samples" / "interacteval"


def fingerprint(value: Any) -> str:
    """A short hash of a JSON-able value (pydantic models are dumped first)."""

    def plain(v: Any) -> Any:
        if isinstance(v, BaseModel):
            return v.model_dump(mode="json")
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        return v

    data = json.dumps(plain(value), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]


# ------------------------------------------------------------------------------ the state
class TextsSetup(BaseModel):
    """The texts to score: the file (copied into the project), sheet and column choices."""

    path: str = ""
    file_name: str = ""
    input_id: int | None = None
    sheet: str | None = None
    columns: dict[str, str | None] = Field(default_factory=dict)
    """role (see :data:`TEXT_ROLES`) -> column; None = not used."""
    human: dict[str, str | None] = Field(default_factory=dict)
    """dimension -> column with human scores; None = none."""


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
    include_samples: bool = False
    """Keep texts that are think-aloud samples in the agreement (left out by default)."""

    def dimension(self, name: str) -> Dimension | None:
        return next((d for d in self.dimensions if d.name == name), None)

    def chosen_samples(self, name: str) -> list[ScoredSample]:
        return [self.samples[i] for i in self.chosen.get(name, []) if 0 <= i < len(self.samples)]


def load_state(project: Project) -> WizardState:
    """The stored wizard state (a fresh one when there is none or it cannot be read)."""
    artefact = project.get_artefact(STATE_KIND, STATE_KEY)
    if artefact is None:
        return WizardState()
    try:
        return WizardState.model_validate(artefact.payload)
    except ValidationError:
        return WizardState()


def save_state(project: Project, state: WizardState) -> None:
    project.put_artefact(STATE_KIND, STATE_KEY, state.model_dump(mode="json"), origin="human")


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


def stage_input(project: Project, state: WizardState, dimension: str, stage: str) -> str:
    """The hash of what ``stage`` would consume now (compare with ``StageOutput.input``)."""
    dim = state.dimension(dimension) or Dimension(name=dimension)

    def value(name: str) -> Any:
        got = get_stage(project, dimension, name)
        return got.value if got is not None else None

    if stage == "think_aloud":
        return fingerprint([dim, state.chosen_samples(dimension), state.assessors])
    if stage == "components":
        return fingerprint([dim, attributes_of(project, state, dimension)])
    if stage == "clusters":
        return fingerprint([dim, value("components"), attributes_of(project, state, dimension)])
    if stage == "key_questions":
        return fingerprint([dim, value("clusters")])
    if stage == "sub_questions":
        return fingerprint([dim, value("key_questions")])
    if stage == "checklist":
        return fingerprint([dim, value("sub_questions"), state.validate_questions])
    raise ValueError(f"unknown stage {stage!r}")


# ----------------------------------------------------------------------------- checklists
def load_checklist(project: Project, dimension: str) -> Checklist | None:
    artefact = project.get_artefact(CHECKLIST_ARTEFACT, dimension)
    if artefact is None:
        return None
    return Checklist.model_validate(artefact.payload)


def edit_checklist(project: Project, checklist: Checklist, *, who: str) -> Checklist:
    """Store a person's change of a checklist (its items and definition) with who and when.
    Items whose text, component or position changed should carry ``edited_by`` already."""
    key = (CHECKLIST_ARTEFACT, checklist.dimension)
    artefact = project.get_artefact(*key)
    if artefact is None:
        save_checklist(project, checklist, origin="human")
        return checklist
    new = checklist.model_dump(mode="json")
    old = artefact.payload
    for name in ("items", "definition"):
        if old.get(name) != new[name]:
            project.record_edit(key, name, old.get(name), new[name], who)
    return checklist


# ---------------------------------------------------------------------------------- texts
def guess_text_columns(columns: Sequence[str], dimensions: Sequence[str]) -> tuple[
    dict[str, str | None], dict[str, str | None]
]:
    """Suggest the columns of a texts sheet: (role -> column, dimension -> human score column)."""
    from core.tables import guess_mapping, guess_named_column

    guessed = guess_mapping(list(columns), {
        "text": ["summary", "answer", "essay", "output", "system output", "response"],
        "source_id": ["doc id", "document id", "source id", "article id", "question id"],
        "system": ["system id", "model", "generator", "bot"],
        "source": ["article", "document", "input", "source text", "question", "prompt"],
    })
    guessed["id"] = guess_named_column(columns, {"id", "textid", "itemid", "rowid"},
                                       guessed.values())
    roles = {role: guessed.get(role) for role in TEXT_ROLES}
    human = {d: next((c for c in columns if str(c).strip().casefold() == d.casefold()), None)
             for d in dimensions}
    return roles, human


@dataclass
class TextsRead:
    """Texts read from a sheet: ``errors`` stop scoring; ``problems`` are skipped rows or
    cells (each names the row and column)."""

    items: list[TextItem] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    describe: str = ""


def read_texts(path: str | Path, setup: TextsSetup) -> TextsRead:
    """Read the texts to score with the chosen columns (every cell as text)."""
    from core.tables import TableError, cell_number, map_columns, read_table

    try:
        read = read_table(Path(path), setup.sheet)
    except TableError as exc:
        return TextsRead(errors=[exc.message])
    mapping: dict[str, str | None] = {role: setup.columns.get(role) for role in TEXT_ROLES}
    for dim, col in setup.human.items():
        mapping[f"human:{dim}"] = col
    mapped = map_columns(read, mapping, required=["text"])
    result = TextsRead(errors=[i.message for i in mapped.errors],
                       problems=[i.message for i in mapped.warnings], describe=read.describe())
    if result.errors:
        return result
    frame = mapped.frame
    seen: dict[str, int] = {}
    source_ids: dict[str, str] = {}
    for row in mapped.rows:
        text = frame.at[row, "text"]
        if not text.strip():
            result.problems.append(f"{mapped.where(row, 'text')}: no text; the row is skipped.")
            continue
        text_id = (frame.at[row, "id"].strip() if "id" in frame else "") or f"row {row}"
        if text_id in seen:
            result.errors.append(f"{mapped.where(row, 'id')}: the id “{text_id}” is also in row "
                                 f"{seen[text_id]}; every text needs its own id.")
            continue
        seen[text_id] = row
        source = frame.at[row, "source"] if "source" in frame else ""
        source_id = frame.at[row, "source_id"].strip() if "source_id" in frame else ""
        if not source_id and source.strip():
            source_id = source_ids.setdefault(source.strip(), f"source {len(source_ids) + 1}")
        human: dict[str, float] = {}
        for dim, col in setup.human.items():
            if not col:
                continue
            raw = frame.at[row, f"human:{dim}"].strip()
            if not raw:
                continue
            value = cell_number(raw)
            if value is not None:
                human[dim] = value
            else:
                result.problems.append(
                    f"{mapped.where(row, f'human:{dim}')}: “{raw}” is not a number, so this "
                    f"text has no human score for {dim}.")
        result.items.append(TextItem(
            id=text_id, text=text, source=source, source_id=source_id,
            system=frame.at[row, "system"].strip() if "system" in frame else "",
            human=human, row=row,
        ))
    if not result.items and not result.errors:
        result.errors.append(f"{read.describe()} has no texts to score.")
    return result


def store_texts_file(project: Project, setup: TextsSetup, path: str | Path) -> TextsSetup:
    """Copy the texts file into the project (so a moved file can still be read)."""
    path = Path(path)
    data = path.read_bytes()
    input_id = project.add_input(TEXTS_INPUT_KIND, path.name, data)
    return setup.model_copy(update={"path": str(path), "file_name": path.name,
                                    "input_id": input_id})


def texts_file(project: Project, setup: TextsSetup) -> Path | None:
    """The texts file: where it was chosen, or the project's copy when it moved or changed."""
    return project.input_file(setup.input_id, setup.path, setup.file_name or "texts.xlsx",
                              temp_prefix="evaldesk-texts-")


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
                      run_id=run.id, checklists=list(checklists), date=_local(run.finished_at))


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
    return fingerprint([setup.input_id, setup.sheet, setup.columns, setup.human])


def run_texts_line(state: WizardState) -> str:
    """The texts of the last run in plain words ("texts.csv, sheet X: 12 texts")."""
    setup = state.run_texts
    if setup is None or not setup.file_name:
        return ""
    count = f": {state.run_count} text{'s' if state.run_count != 1 else ''}" \
        if state.run_count else ""
    sheet = setup.sheet if setup.sheet and setup.sheet != setup.file_name else ""
    return setup.file_name + (f", sheet {sheet}" if sheet else "") + count


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
                        checklists: Sequence[Checklist], model: str) -> list[str]:
    """Why ``run`` no longer matches the current choices, in plain words (empty: it is
    current): a checklist edited, added or removed, other scoring options, another model, other
    think-aloud samples, or another texts file, sheet or columns."""
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
    if then.get("model") != now["model"]:
        reasons.append(f"another model is chosen ({now['model'] or 'none'}; these results are "
                       f"from {then.get('model') or 'an unnamed model'})")
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


@dataclass
class OpenedTexts:
    """A texts file opened for the wizard: its sheets, the chosen sheet's columns, the setup
    (with guessed columns filled in) and the texts read with it."""

    sheets: list[str]
    columns: list[str]
    setup: TextsSetup
    read: TextsRead


def open_texts(path: str | Path, setup: TextsSetup, dimensions: Sequence[str]) -> OpenedTexts:
    """List the sheets, read the chosen one, guess the columns not chosen yet, read the texts.
    A plain function (run it in an executor); problems come back in ``read.errors``."""
    from core.tables import TableError, list_sheets, read_table

    try:
        sheets = list_sheets(Path(path))
        sheet = setup.sheet if setup.sheet in sheets else sheets[0]
        table = read_table(Path(path), sheet)
    except TableError as exc:
        return OpenedTexts([], [], setup, TextsRead(errors=[exc.message]))
    columns = [str(c) for c in table.frame.columns]
    roles, human = guess_text_columns(columns, dimensions)
    chosen = {r: (c if c in columns else None) for r, c in setup.columns.items()}
    if not any(chosen.values()):
        chosen = roles
    people = {d: (setup.human.get(d) if setup.human.get(d) in columns else None)
              for d in dimensions}
    if not setup.human:
        people = human
    setup = setup.model_copy(update={"sheet": sheet, "columns": chosen, "human": people})
    return OpenedTexts(sheets, columns, setup, read_texts(path, setup))
