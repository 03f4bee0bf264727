"""InteractEval's choices in a project and its input files: the dimensions, the rated samples
shown in the think-aloud, the people's notes, the models, the texts file and the scoring
options, kept as one versioned payload (:data:`CHOICES`), and the texts file copied into the
project.

The payload keeps the kind and key it had when it was called the wizard's state
(``interacteval.wizard`` / ``state``, version 1), so every project saved before still opens.
One that cannot be read (e.g. saved by a newer EvalDesk) is set aside in the project and
:func:`open_choices` says so; it is never saved over.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from core.interacteval.inputs import TextsSetup
from core.interacteval.model import Attribute, Dimension, ScoredSample, ScoringSettings
from core.interacteval.pipeline import CHECKLIST_ARTEFACT
from core.interacteval.samples import suggest_samples
from core.paths import resources_dir
from core.project.inputs import InputRef, fingerprint, open_input, store_input
from core.project.payloads import PayloadType, load_or_recover, put_payload

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "CHOICES",
    "CHOICES_KIND",
    "STAGES",
    "STAGE_KIND",
    "SUMMEVAL_DIMENSIONS",
    "InteractEvalChoices",
    "local_time",
    "open_choices",
    "open_texts_file",
    "person",
    "rename_dimension",
    "run_texts_line",
    "sample_folder",
    "save_choices",
    "stage_key",
    "store_texts_file",
    "texts_file",
    "texts_key",
    "texts_line",
    "use_samples",
]

#: The stored kind and key of the choices (the names they had as "the wizard's state").
CHOICES_KIND = "interacteval.wizard"
CHOICES_KEY = "state"
#: A construction step's kept output (key ``<dimension>/<step>``, see ``stages``).
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


def sample_folder() -> Path:
    """The folder of the sample set shipped with EvalDesk."""
    return resources_dir() / "samples" / "interacteval"


# ------------------------------------------------------------------------------ the choices
class InteractEvalChoices(BaseModel):
    """Everything the user chose for InteractEval in a project (the wizard's pages and the
    ``evaldesk checklist`` options alike)."""

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

    def builder_name(self) -> str:
        """The profile that builds: the one chosen, else the first model thinking aloud."""
        return self.builder or (self.assessors[0] if self.assessors else "")

    def scorer_name(self) -> str:
        """The profile that scores: the one chosen, else the one that builds."""
        return self.scorer or self.builder_name()


#: The choices, kept as one versioned payload.
CHOICES = PayloadType(CHOICES_KIND, InteractEvalChoices, version=1,
                      label="the InteractEval choices (dimensions, samples, notes and texts)")


def open_choices(project: Project) -> tuple[InteractEvalChoices, str]:
    """The stored choices (fresh ones when there are none) and a message for the user ("" when
    all is well). Choices that cannot be read (e.g. saved by a newer EvalDesk) are kept in the
    project under another key and the message says so; they are never saved over."""
    return load_or_recover(project, CHOICES, CHOICES_KEY, InteractEvalChoices)


def save_choices(project: Project, choices: InteractEvalChoices) -> None:
    put_payload(project, CHOICES, CHOICES_KEY, choices, origin="human")


def stage_key(dimension: str, stage: str) -> str:
    """The key of a step's kept output (and of its version kept aside)."""
    return f"{dimension}/{stage}"


def rename_dimension(project: Project, choices: InteractEvalChoices, old: str, new: str,
                     who: str, *, keep_choices: bool = True) -> None:
    """Rename a dimension everywhere: the people's notes, chosen samples, human-score column,
    the samples, the build steps' results and the checklist (each with its edit history; the
    checklist's new name is logged as ``who``'s edit), and save ``choices`` (unless
    ``keep_choices`` is False). Steps that read
    the name show as out of date. Results left under ``new`` by a dimension deleted earlier
    give way (their deletion is logged, with what they held)."""
    if not new or new == old:
        return
    mappings: list[dict[str, Any]] = [choices.notes, choices.chosen, choices.checklist_inputs,
                                      choices.texts.human]
    for mapping in mappings:
        if old in mapping:
            mapping[new] = mapping.pop(old)
    for sample in choices.samples:
        if sample.dimension == old:
            sample.dimension = new
    if choices.current == old:
        choices.current = new
    choices.dimensions = [d.model_copy(update={"name": new}) if d.name == old else d
                          for d in choices.dimensions]
    moves = [(STAGE_KIND, stage_key(old, stage), stage_key(new, stage)) for stage in STAGES]
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
        if keep_choices:
            save_choices(project, choices)


def use_samples(choices: InteractEvalChoices, file_name: str,
                samples: Sequence[ScoredSample]) -> None:
    """Take ``samples`` (read from ``file_name``) as the rated samples, with 4 suggested per
    dimension to span the score range (:func:`core.interacteval.samples.suggest_samples`)."""
    choices.samples = list(samples)
    choices.samples_file = file_name
    choices.chosen = {}
    for d in choices.dimensions:
        suggest_again(choices, d.name)


def suggest_again(choices: InteractEvalChoices, dimension: str) -> None:
    """Choose the suggested samples of ``dimension`` again."""
    mine = [s for s in choices.samples if s.dimension == dimension]
    picked = suggest_samples(mine)
    choices.chosen[dimension] = [i for i, s in enumerate(choices.samples)
                                 if s.dimension == dimension and any(s is p for p in picked)]


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


def texts_key(setup: TextsSetup | None) -> str:
    """What identifies the texts a run scored: the stored file (by content), its sheet and the
    column choices (the human-score columns too: they are part of the results)."""
    if setup is None:
        return ""
    header = [setup.header_row] if setup.header_row is not None else []  # a chosen header
    return fingerprint([setup.input_id, setup.sheet, setup.columns, setup.human, *header])


def texts_line(setup: TextsSetup | None, count: int) -> str:
    """The texts of a run in plain words ("texts.csv, sheet X: 12 texts")."""
    if setup is None or not setup.file_name:
        return ""
    shown = f": {count} text{'s' if count != 1 else ''}" if count else ""
    sheet = setup.sheet if setup.sheet and setup.sheet != setup.file_name else ""
    return setup.file_name + (f", sheet {sheet}" if sheet else "") + shown


def run_texts_line(choices: InteractEvalChoices) -> str:
    """The texts of the last run in plain words ("texts.csv, sheet X: 12 texts")."""
    return texts_line(choices.run_texts, choices.run_count)


def person(name: str | None) -> str:
    """Who is working, for the edit history and the exports ("unnamed person" when unset)."""
    return (name or "").strip() or "unnamed person"


def local_time(stamp: str | None) -> str:
    """A stored UTC time as local "YYYY-MM-DD HH:MM" ("" when there is none)."""
    if not stamp:
        return ""
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp
