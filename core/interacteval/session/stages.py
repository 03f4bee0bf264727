"""InteractEval's checklist construction as kept in a project: each step's output (think-aloud,
components, attribute groups, key questions, sub-questions), the checklists, and what a person
changed in them.

A step's output is an artefact of kind ``interacteval.stage`` keyed ``<dimension>/<step>``, with
the hash of what the step consumed (``input``), so a step whose predecessor changed is shown as
out of date (:func:`stage_input`). Generated outputs are stored with origin "generated"; a
person's edit goes through ``project.record_edit`` (who and when are kept). A step run again
over a person's edit keeps the edited version aside first (:data:`REPLACED_KIND`), so it can be
put back (:func:`restore_replaced`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from core.interacteval._common import unique_attributes
from core.interacteval.inputs import ChecklistRead, read_checklists
from core.interacteval.model import (
    Attribute,
    AttributeClusters,
    Checklist,
    Dimension,
    KeyQuestion,
    SubQuestionGroup,
    ThinkAloudResult,
)
from core.interacteval.pipeline import CHECKLIST_ARTEFACT
from core.interacteval.session.choices import (
    STAGE_KIND,
    InteractEvalChoices,
    local_time,
    save_choices,
    stage_key,
)
from core.llm.identity import model_fields
from core.project.inputs import fingerprint

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "EDIT_CHOICES",
    "REPLACED_KIND",
    "StageOutput",
    "all_checklists",
    "attributes_of",
    "checklist_origin",
    "deleted_lines",
    "deleted_questions",
    "edit_checklist",
    "edit_stage",
    "edited_steps",
    "get_stage",
    "import_checklists",
    "keep_aside",
    "load_checklist",
    "load_checklists",
    "put_stage",
    "replaced_version",
    "restore_replaced",
    "save_checklist",
    "stage_input",
]

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


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _load(stage: str, raw: Any) -> Any:
    return TypeAdapter(_STAGE_TYPES[stage]).validate_python(raw)


def get_stage(project: Project, dimension: str, stage: str) -> StageOutput | None:
    """The stored output of ``stage`` for ``dimension`` (None when not run yet)."""
    artefact = project.get_artefact(STAGE_KIND, stage_key(dimension, stage))
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
    project.put_artefact(STAGE_KIND, stage_key(dimension, stage),
                         {"input": input_hash, "value": _dump(value)}, origin="generated",
                         run_id=run_id)


def edit_stage(project: Project, dimension: str, stage: str, value: Any, *, who: str) -> None:
    """A person changed a step result: stored with who and when (``project.record_edit``)."""
    key = (STAGE_KIND, stage_key(dimension, stage))
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


def attributes_of(project: Project, choices: InteractEvalChoices,
                  dimension: str) -> list[Attribute]:
    """The merged think-aloud attributes of ``dimension``: models' first, then people's notes,
    exact repeats removed (what component extraction reads)."""
    stored = get_stage(project, dimension, "think_aloud")
    models = stored.value.attributes if stored is not None else []
    return unique_attributes([*models, *choices.notes.get(dimension, [])])


def stage_input(project: Project, choices: InteractEvalChoices, dimension: str, stage: str,
                model: Any = None) -> str:
    """The hash of what ``stage`` would consume now (compare with ``StageOutput.input``).
    ``model``: the profile that builds (a construction step made by another model, or the same
    model with another server, seed, temperature or answer length, is not current; None: not
    counted, as for a stand-in model without a profile)."""
    dim = choices.dimension(dimension) or Dimension(name=dimension)

    def value(name: str) -> Any:
        got = get_stage(project, dimension, name)
        return got.value if got is not None else None

    def hashed(parts: list[Any]) -> str:
        if model is not None:
            fields = model_fields(model)
            if fields["model"]:
                parts.append(fields)
        return fingerprint(parts)

    if stage == "think_aloud":
        return fingerprint([dim, choices.chosen_samples(dimension), choices.assessors])
    if stage == "components":
        return hashed([dim, attributes_of(project, choices, dimension)])
    if stage == "clusters":
        return hashed([dim, value("components"), attributes_of(project, choices, dimension)])
    if stage == "key_questions":
        return hashed([dim, value("clusters")])
    if stage == "sub_questions":
        return hashed([dim, value("key_questions")])
    if stage == "checklist":
        return hashed([dim, value("sub_questions"), choices.validate_questions])
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


def all_checklists(project: Project, choices: InteractEvalChoices) -> list[Checklist]:
    """The stored checklists of the wizard's dimensions, in the dimensions' order."""
    stored = {c.dimension: c for c in load_checklists(project)}
    return [stored[d.name] for d in choices.dimensions if d.name in stored and stored[d.name].items]


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


def import_checklists(project: Project, choices: InteractEvalChoices, path: str | Path, *,
                      keep_choices: bool = True) -> ChecklistRead:
    """Read a checklist workbook (:func:`core.interacteval.inputs.read_checklists`); its
    checklists replace those of the same dimensions (matched ignoring case; new dimensions are
    added to ``choices``, which is saved unless ``keep_choices`` is False). Returns what was
    read (its ``errors`` mean nothing was imported)."""
    got = read_checklists(path)
    if got.errors:
        return got
    dims = list(choices.dimensions)
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
        choices.dimensions = dims
        if keep_choices:
            save_choices(project, choices)
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
                out[question] = (question, e.who, local_time(e.at))
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


#: Kept versions a person edited that a new run of their step replaced (key
#: ``<dimension>/<step>``, the latest one): "keep both, with the edit recorded".
REPLACED_KIND = "interacteval.replaced"
#: What a step does with an output a person edited: keep it (the step is not run; later steps
#: read it) or replace it (the edited version is kept aside, see :data:`REPLACED_KIND`).
EDIT_CHOICES = ("keep", "replace")


def edited_steps(project: Project, dimension: str,
                 keys: Sequence[str]) -> list[tuple[str, str]]:
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
            artefact = project.get_artefact(STAGE_KIND, stage_key(dimension, key))
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
    artefact = project.get_artefact(REPLACED_KIND, stage_key(dimension, key))
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
    project.delete_artefact((REPLACED_KIND, stage_key(dimension, key)), who)
    return value


def keep_aside(project: Project, dimension: str, key: str, who: str) -> None:
    """Keep the edited output of step ``key`` before a new run replaces it."""
    edited = dict(edited_steps(project, dimension, [key]))
    if key not in edited:
        return
    if key == "checklist":
        artefact = project.get_artefact(CHECKLIST_ARTEFACT, dimension)
        value = artefact.payload if artefact is not None else None
    else:
        artefact = project.get_artefact(STAGE_KIND, stage_key(dimension, key))
        value = artefact.payload.get("value") if artefact is not None else None
    project.put_artefact(REPLACED_KIND, stage_key(dimension, key), {
        "value": value, "edited_by": edited[key], "replaced_by": who,
        "replaced_at": datetime.now().strftime("%Y-%m-%d %H:%M")}, origin="human")


