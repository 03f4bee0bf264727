"""MAJ-Eval's choices in a project (:class:`MajEvalChoices`), stored as a versioned payload,
and the examples the first page offers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from core.documents import DEFAULT_MAX_PAGES
from core.majeval.inputs import ItemsSetup
from core.majeval.model import (
    DEFAULT_DIMENSION,
    DebateSettings,
    Dimension,
    Item,
    Scale,
    StageFailure,
)
from core.paths import resources_dir
from core.project.payloads import PayloadType, load_or_recover, put_payload

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "CHOICES",
    "CHOICES_KIND",
    "EXAMPLE_TASKS",
    "MajEvalChoices",
    "load_choices",
    "open_choices",
    "sample_folder",
    "save_choices",
]

#: The stored choices: their kind and key (named "wizard" and "state" when the wizard alone kept
#: them; existing projects keep these names).
CHOICES_KIND = "majeval.wizard"
CHOICES_KEY = "state"


#: The paper's two tasks (appendix A.2) as templates, in our own words.
EXAMPLE_TASKS = {
    "Children's story questions": (
        "Judge question-and-answer pairs that an AI wrote to help a young child (about 3 to 8 "
        "years old) understand a story being read with them. A good pair fits the part of the "
        "story it comes from, is worded so the child can follow it, has a correct answer, and "
        "helps the child think about and enjoy the story."),
    "Medical evidence summaries": (
        "Judge summaries that an AI wrote of several medical studies on the same question, as "
        "used in a systematic review. A good summary states the evidence correctly, with the "
        "right population, treatment and outcomes, the right direction of the effect and the "
        "right strength of the claim, and is clear for the clinicians and patients who read it."),
}


def sample_folder() -> Path:
    """The folder of the sample set shipped with EvalDesk."""
    return resources_dir() / "samples" / "majeval"


class MajEvalChoices(BaseModel):
    """MAJ-Eval's choices in a project: everything chosen in the wizard or on the command line
    (artefact ``majeval.wizard``, key ``state``)."""

    page: str = "task"
    task: str = ""
    max_pages: int = DEFAULT_MAX_PAGES
    keep_references: bool = False
    """Keep each document's reference list (dropped by default: it names people who are not
    stakeholders)."""
    documents: list[str] = Field(default_factory=list)
    """Document names (artefact keys) in the order added."""
    profile: str = ""
    """The model profile ("" = the default profile)."""
    extracted: dict[str, str] = Field(default_factory=dict)
    """document -> fingerprint of the task and text its stored perspectives were read from."""
    personas_basis: str = ""
    """Fingerprint of the task and every document's text when the personas were made ("" = none
    made here, or made before EvalDesk kept it)."""
    personas_task: str = ""
    """The task description the personas were made with."""
    personas_model: dict[str, Any] | None = None
    """The model (and its settings) that read the documents and wrote the personas
    (:func:`core.llm.identity.model_fields`; None: not recorded)."""
    failures: list[StageFailure] = Field(default_factory=list)
    """What failed in the last persona creation."""
    too_little: str = ""
    """The warning of the last persona creation when the model found far fewer kinds of
    stakeholders than the documents name (:func:`core.majeval.pipeline.too_little`)."""
    items: ItemsSetup = Field(default_factory=ItemsSetup)
    item_list: list[Item] = Field(default_factory=list)
    """The items read with the chosen columns (kept, so reopening needs no file)."""
    dimensions: list[Dimension] = Field(default_factory=lambda: [DEFAULT_DIMENSION])
    scale: Scale = Field(default_factory=Scale)
    settings: DebateSettings = Field(default_factory=DebateSettings)
    run_id: int | None = None
    """The debate run last started (its finished debates are in the project)."""
    repeats: int = Field(default=1, ge=1)
    """How many times each call of the debates is made (repeat runs; 1 = once, as before)."""


#: The stored choices (one per project, key ``state``; version 1, as the wizard kept them).
CHOICES: PayloadType[MajEvalChoices] = PayloadType(
    CHOICES_KIND, MajEvalChoices, version=1,
    label="the MAJ-Eval choices (task, documents, items, dimensions and debate options)")


def open_choices(project: Project) -> tuple[MajEvalChoices, str]:
    """The stored choices, and "" or a message saying they could not be read (then the stored
    version is kept aside in the project, never saved over, and the choices start afresh)."""
    return load_or_recover(project, CHOICES, CHOICES_KEY, MajEvalChoices)


def load_choices(project: Project) -> MajEvalChoices:
    """The stored choices (fresh ones when there are none; see :func:`open_choices`)."""
    return open_choices(project)[0]


def save_choices(project: Project, choices: MajEvalChoices) -> None:
    """Keep ``choices`` in the project (a person's choice: origin "human")."""
    put_payload(project, CHOICES, CHOICES_KEY, choices, origin="human")
