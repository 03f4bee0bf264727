"""MAJ-Eval's stakeholder groups and personas in the project: stages 1-2 run and kept
(:func:`create_personas_stored`: a document read with the same task, text and model is not read
again; personas a person edited survive a new creation), a person's edits (who and when),
imported personas, the estimate of the persona calls and the Personas workbook."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import privacy
from core.documents import Document
from core.llm.context import limits_of
from core.llm.estimate import Estimate, estimate, measured_latency
from core.llm.identity import DEMO_NOTE, describe_model, is_demo_model, model_fields
from core.majeval.estimate import plan_personas
from core.majeval.model import (
    REQUIRED_PERSONA_FIELDS,
    JsonLLM,
    Persona,
    RunModel,
    StageError,
    StageFailure,
    Stakeholder,
    StakeholderGroup,
    persona_id,
    persona_problem,
)
from core.majeval.personas_io import write_personas
from core.majeval.perspective_extraction import PerspectiveExtraction, extract_perspectives
from core.majeval.pipeline import (
    GROUPS_ARTEFACT,
    PERSONA_ARTEFACT,
    group_and_construct,
    groups_of,
    too_little,
)
from core.majeval.session.choices import MajEvalChoices, save_choices
from core.majeval.session.documents import (
    PERSPECTIVES,
    DocumentPerspectives,
    extraction_fingerprint,
    load_documents,
    stored_perspectives,
)
from core.project.inputs import fingerprint
from core.project.payloads import put_payload
from core.runs import CancelToken, Progress
from core.settings import ModelProfile

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.project._file import Origin  # the origins the project keeps (a type only)

__all__ = [
    "PersonasMade",
    "add_persona",
    "basis_of",
    "create_personas_stored",
    "delete_persona",
    "edit_persona",
    "estimate_personas",
    "export_personas",
    "group_descriptions",
    "load_groups",
    "load_personas",
    "personas_made_by",
    "personas_out_of_date",
    "replace_personas",
    "restore_persona",
    "save_groups",
    "save_personas",
]


@dataclass
class PersonasMade:
    """What :func:`create_personas_stored` did: personas, failures, documents read again."""

    personas: list[Persona]
    failures: list[StageFailure] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    kept_edited: int = 0
    groups: list[StakeholderGroup] = field(default_factory=list)
    perspectives: int = 0
    """Perspectives found in all documents."""
    units: int = 0
    """Model steps of this creation (document parts read, plus one per group)."""
    too_little: str = ""
    """The model found far fewer kinds of stakeholders than the documents name ("" if not)."""


async def create_personas_stored(
    project: Project,
    choices: MajEvalChoices,
    llm: JsonLLM,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> PersonasMade:
    """Stages 1-2: perspectives per document (a document whose text and task
    are unchanged is not read again; each finished document is stored at once), then grouping
    and personas. Personas a person edited are kept; other earlier personas are replaced.
    Raises :class:`StageError` when no persona could be made. ``choices`` is updated in place
    (and saved) as each document is read."""
    progress = progress or Progress()
    docs = load_documents(project, choices)
    if not docs:
        raise StageError("Add at least one document about the stakeholders first.",
                         stage="Perspective extraction")
    if not choices.task.strip():
        raise StageError("Write the task description first (page 1).", stage="Task")
    profile = getattr(llm, "profile", None)  # a model without a profile: a test's stand-in
    named = bool(getattr(profile, "model", "")) if profile is not None else False
    model: RunModel = profile if named else None
    made = PersonasMade(personas=[])
    stakeholders: list[Stakeholder] = []
    failures: list[StageFailure] = []

    async def one(doc: Document) -> None:
        wanted = extraction_fingerprint(choices.task, doc, model)
        if choices.extracted.get(doc.name) == wanted:
            made.reused.append(doc.name)
            return
        found = await extract_perspectives(doc, choices.task, llm, progress=progress,
                                           cancel=cancel)
        read_now[doc.name] = found
        made.units += found.chunks
        failures.extend(found.failures)
        if found.failures:  # read again next time (the finished chunks come from the cache)
            return
        put_payload(project, PERSPECTIVES, doc.name,
                    DocumentPerspectives(fingerprint=wanted, stakeholders=found.stakeholders),
                    origin="generated")
        choices.extracted[doc.name] = wanted
        save_choices(project, choices)
        made.read.append(doc.name)

    read_now: dict[str, PerspectiveExtraction] = {}
    for doc in docs:  # one after the other, so the progress reads per document
        await one(doc)
    for doc in docs:
        kept = stored_perspectives(project, doc.name) \
            if choices.extracted.get(doc.name) == extraction_fingerprint(choices.task, doc, model) \
            else None  # another model's stakeholders are never used
        if kept is not None:
            stakeholders.extend(kept.stakeholders)
        elif doc.name in read_now:  # failed chunks: what the other chunks found just now
            stakeholders.extend(read_now[doc.name].stakeholders)
        else:  # read before with failures: the finished chunks come from the cache
            found = await extract_perspectives(doc, choices.task, llm, cancel=cancel)
            stakeholders.extend(found.stakeholders)
    little = too_little(stakeholders, docs)
    groups, built = await group_and_construct(stakeholders, failures, choices.task, llm,
                                              progress=progress, cancel=cancel, documents=docs)
    failures += built.failures
    new_ids = {p.id for p in built.personas}
    with project.transaction():
        save_groups(project, groups)
        for artefact in project.list_artefacts(PERSONA_ARTEFACT):
            if artefact.key not in new_ids and not artefact.edited \
                    and artefact.origin == "generated":
                project.delete_artefact(artefact, "EvalDesk (personas made again)")
        save_personas(project, built.personas)
        made.kept_edited = sum(1 for a in project.list_artefacts(PERSONA_ARTEFACT) if a.edited)
        choices.failures = failures
        choices.too_little = little
        choices.personas_model = None if model is None else model_fields(model)
        choices.personas_basis = basis_of(choices, docs, choices.personas_model)
        choices.personas_task = choices.task
        save_choices(project, choices)
    made.personas = load_personas(project)
    made.failures = failures
    made.too_little = little
    made.groups = list(groups)
    made.units += len(groups)
    made.perspectives = sum(len(s.perspectives) for s in stakeholders)
    return made


def personas_made_by(project: Project, choices: MajEvalChoices) -> dict[str, Any] | None:
    """The model that found the stakeholders and wrote the stored personas (as
    :func:`core.llm.identity.model_fields` records it); None when not known or the personas
    were imported."""
    personas = project.list_artefacts(PERSONA_ARTEFACT)
    if not personas or any(a.origin == "imported" for a in personas):
        return None
    return choices.personas_model


def personas_out_of_date(project: Project, choices: MajEvalChoices) -> str:
    """Why the personas no longer match the task or the documents they were written from ("" when
    they do, when there are none, or when they were imported rather than made here)."""
    personas = project.list_artefacts(PERSONA_ARTEFACT)
    if not choices.personas_basis or not personas or any(a.origin == "imported" for a in personas):
        return ""
    if basis_of(choices, load_documents(project, choices), choices.personas_model) == \
            choices.personas_basis:
        return ""
    if choices.personas_task.strip() != choices.task.strip():
        return "The task description changed after these personas were written."
    return "The documents changed (added, removed or corrected) after these personas were written."


def basis_of(choices: MajEvalChoices, docs: Sequence[Document], model: RunModel = None) -> str:
    """What personas depend on: the task and every document's text, as ``model`` reads them
    (kept as the choices' ``personas_basis`` when the personas are made)."""
    return fingerprint(sorted((d.name, extraction_fingerprint(choices.task, d, model))
                              for d in docs))


def add_persona(project: Project, group: str, name: str, who: str) -> Persona:
    """A person adds an (almost empty) persona to ``group``; stored with origin "human"."""
    base = persona_id(group, "added", name)
    key, n = base, 1
    while project.get_artefact(PERSONA_ARTEFACT, key) is not None:
        n += 1
        key = f"{base}-{n}"
    persona = Persona(id=key, group=group, name=name, origin="human", edited=True)
    project.put_artefact(PERSONA_ARTEFACT, key, persona.model_dump(mode="json"), origin="human")
    project.record_edit((PERSONA_ARTEFACT, key), "edited", True, True, who)
    return persona.model_copy(update={"edited": True})


def delete_persona(project: Project, persona: Persona, who: str) -> None:
    """A person deletes a persona (logged as an edit with who and when)."""
    project.delete_artefact((PERSONA_ARTEFACT, persona.id), who)


def restore_persona(project: Project, persona: Persona, who: str) -> Persona:
    """Undo a deletion: the persona is stored again (marked as a person's edit)."""
    project.put_artefact(PERSONA_ARTEFACT, persona.id, persona.model_dump(mode="json"),
                         origin="human" if persona.origin == "generated" else persona.origin)
    project.record_edit((PERSONA_ARTEFACT, persona.id), "edited", persona.edited, True, who)
    return persona.model_copy(update={"edited": True})


def replace_personas(project: Project, personas: Sequence[Persona], who: str,
                     descriptions: dict[str, str] | None = None) -> list[Persona]:
    """Imported personas replace all stored ones (the old ones are deleted with who/when; one
    stored exactly as imported again stays, so importing the same file twice records no edit).
    The groups become those of the imported personas, with ``descriptions`` (group ->
    description, from the sheet) or the description a group of that name had before."""
    with project.transaction():
        before = {g.name: g.description for g in load_groups(project)}
        imported = {p.id: p.model_dump(mode="json") for p in personas}
        for artefact in project.list_artefacts(PERSONA_ARTEFACT):
            if imported.get(artefact.key) == artefact.payload and not artefact.edited:
                continue
            project.delete_artefact(artefact, who)
        save_personas(project, personas, origin="imported", overwrite_edits=True)
        given = descriptions or {}
        save_groups(project, [
            StakeholderGroup(name=g, description=given.get(g) or before.get(g, ""))
            for g in groups_of(personas)], origin="imported")
    return load_personas(project)


def save_groups(project: Project, groups: Sequence[StakeholderGroup], *,
                origin: Origin = "generated") -> None:
    """Keep the stakeholder groups (their names and descriptions)."""
    project.put_artefact(GROUPS_ARTEFACT, "groups",
                         [g.model_dump(mode="json") for g in groups], origin=origin)


def load_groups(project: Project) -> list[StakeholderGroup]:
    """The stakeholder groups kept in the project."""
    found = project.get_artefact(GROUPS_ARTEFACT, "groups")
    return [StakeholderGroup.model_validate(g) for g in (found.payload if found else [])]


def save_personas(project: Project, personas: Sequence[Persona], *,
                  origin: Origin = "generated", overwrite_edits: bool = False) -> None:
    """Store each persona as an artefact (key = persona id). A persona a person has edited is
    kept as it is unless ``overwrite_edits``. A person's change goes through
    :func:`edit_persona`, which records who and when."""
    with project.transaction():
        for p in personas:
            stored = project.get_artefact(PERSONA_ARTEFACT, p.id)
            if stored is not None and stored.edited and not overwrite_edits:
                continue
            project.put_artefact(PERSONA_ARTEFACT, p.id, p.model_dump(mode="json"),
                                 origin=origin)


def load_personas(project: Project) -> list[Persona]:
    """The stored personas in the order first stored; ``edited``/``origin`` from the project."""
    out = []
    for artefact in project.list_artefacts(PERSONA_ARTEFACT):
        persona = Persona.model_validate(artefact.payload)
        out.append(persona.model_copy(update={"edited": artefact.edited or persona.edited,
                                              "origin": artefact.origin}))
    return out


def edit_persona(project: Project, persona: Persona, field_name: str, new: object,
                 who: str) -> Persona:
    """A person changes one field of a stored persona (``"specialty"``, ``"group"``, ...);
    the edit is logged with who and when. Returns the updated persona. Raises ``ValueError``
    (nothing stored) when the edit would break the one persona rule (:func:`persona_problem`):
    a required field cannot be emptied."""
    if field_name in REQUIRED_PERSONA_FIELDS and not str(new or "").strip():
        problem = persona_problem(persona.model_copy(update={field_name: ""}))
        raise ValueError(f"{sentence(problem)}; the old {field_name} of {persona.name} was kept.")
    artefact = project.record_edit((PERSONA_ARTEFACT, persona.id), field_name,
                                   getattr(persona, field_name), new, who)
    return Persona.model_validate(artefact.payload).model_copy(update={"edited": True})


def group_descriptions(project: Project) -> dict[str, str]:
    """group -> description of the stored groups (the simple-role option uses them)."""
    return {g.name: g.description for g in load_groups(project)}


def estimate_personas(project: Project, choices: MajEvalChoices, profile: ModelProfile
                      ) -> Estimate | None:
    """What :func:`create_personas_stored` with ``profile`` takes (calls and time; no model is
    called): one call per part of each document not read yet, the grouping, and one call per
    stakeholder group (2 to 6 assumed). None without documents, task or model."""
    docs = load_documents(project, choices)
    if not docs or not choices.task.strip():
        return None
    done = {d.name for d in docs
            if choices.extracted.get(d.name) == extraction_fingerprint(choices.task, d, profile)}
    limits = limits_of(profile)
    if limits is None:
        return None  # no model named: there is nothing to count
    try:
        plan, skipped = plan_personas(docs, choices.task, context_window=limits.window,
                                      answer_tokens=limits.answer, done=done)
    except ValueError:
        return None  # the model's window is too small: the run itself says so
    return estimate(plan, profile, latency=measured_latency(project, profile.model),
                    done_already=skipped, done_what="documents read already")


def export_personas(project: Project, choices: MajEvalChoices, path: str | Path, *,
                    readme: Sequence[tuple[str, str]] = ()) -> Path:
    """Write the stored personas and their groups' descriptions to a Personas workbook that
    can be edited and imported again (by the wizard or ``evaldesk majeval run``), saying which
    documents and task they were made from (``readme``: more lines first, e.g. a warning and the
    model). Raises :class:`core.tables.TableError` when it cannot be written."""
    docs = load_documents(project, choices)
    made_by = personas_made_by(project, choices)
    demo = [("Demo model", DEMO_NOTE)] if made_by and is_demo_model(made_by) else []
    notes = [*demo, *readme, ("Documents", ", ".join(d.name for d in docs)),
             ("Task", choices.personas_task or choices.task),
             *([("Personas written by", describe_model(made_by))] if made_by else []),
             *privacy.deidentification_readme(project)]
    target = Path(path)
    write_personas(target, load_personas(project), readme=notes,
                   descriptions=group_descriptions(project))
    return target


def sentence(text: str) -> str:
    """``text`` with its first letter capitalised."""
    return text[:1].upper() + text[1:]
