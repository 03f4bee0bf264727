"""MAJ-Eval's session: the only code that touches the project for MAJ-Eval. The wizard and
the command line (``evaldesk majeval``) both work through it, so the same inputs give the same
results by either route.

    state, problem = open_state(project)            # the choices; problem: what could not be read
    doc = add_document(project, state, path)        # read (executor), copy into the project
    doc = edit_page(project, doc.name, 3, text, who="Anna")     # a person's correction
    made = await create_personas_stored(project, state, llm)    # stages 1-2, resumable
    state.items = store_items_file(project, state.items, path)  # then open_items / read_items
    run = await run_debates(project, state, llm_for_run)        # stage 3, resumable
    run = load_run(project, state)                  # reopening: results without model calls
    export_results(project, run, path)              # the results workbook

Kept in the project (each a typed artefact, see :mod:`core.project.payloads`):

* ``majeval.wizard`` / ``state``: :class:`WizardState` (:data:`STATE`);
* ``majeval.document`` / file name: a document's pages; a corrected page is recorded with
  ``project.record_edit`` (field ``pages.<i>``), so who changed which page is kept;
* ``majeval.perspectives`` / file name: :class:`DocumentPerspectives` (:data:`PERSPECTIVES`), the
  stakeholders found with the fingerprint of the task and text they were read from (one shape;
  the list an older command line kept is brought up to it by a migration);
* ``majeval.groups`` and ``majeval.persona``: groups and personas (:func:`save_personas`,
  :func:`edit_persona` keeps who and when);
* each debate: a result of the run's units (:class:`core.project.units.RunUnits`), keyed by
  :func:`core.majeval.pipeline.unit_key`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from core import privacy
from core.documents import DEFAULT_MAX_PAGES, Document
from core.llm import LLMFactory, gateway_for
from core.llm.identity import model_fields
from core.majeval.aggregation import combine_groups
from core.majeval.inputs import (
    ITEM_ROLES,
    ItemsRead,
    ItemsSetup,
    OpenedItems,
    guess_item_columns,
    open_items,
    read_document,
    read_items,
)
from core.majeval.model import (
    DEFAULT_DIMENSION,
    REQUIRED_PERSONA_FIELDS,
    DebateSettings,
    Dimension,
    GroupResult,
    Item,
    Persona,
    Scale,
    StageError,
    StageFailure,
    Stakeholder,
    StakeholderGroup,
    persona_problem,
    personas_fingerprint,
)
from core.majeval.persona_construction import persona_id
from core.majeval.perspective_extraction import extract_perspectives
from core.majeval.pipeline import (
    DOCUMENT_ARTEFACT,
    GROUPS_ARTEFACT,
    METHOD,
    PERSONA_ARTEFACT,
    PERSPECTIVES_ARTEFACT,
    RESULT_KIND,
    STEP_DEBATE,
    EvaluationRun,
    _group_and_construct,
    _run_settings,
    evaluate,
    groups_of,
    simple_roles_text,
    unit_key,
)
from core.project.inputs import InputRef, fingerprint, open_input, store_input
from core.project.payloads import PayloadType, load_or_recover, put_payload
from core.project.payloads import get_payload as _get_payload
from core.project.units import RunUnits
from core.runs import CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "BOOTSTRAP_SAMPLES",
    "EXAMPLE_TASKS",
    "ITEM_ROLES",
    "PERSPECTIVES",
    "STATE",
    "STATE_KIND",
    "DocumentPerspectives",
    "ItemsRead",
    "ItemsSetup",
    "LLMFactory",
    "OpenedItems",
    "PersonasMade",
    "WizardState",
    "add_document",
    "add_persona",
    "agreement",
    "condition_choice",
    "corrected_pages",
    "create_personas_stored",
    "current_run",
    "default_llm_factory",
    "delete_persona",
    "edit_page",
    "edit_persona",
    "estimate_run",
    "evidence_span",
    "export_personas",
    "export_results",
    "extraction_fingerprint",
    "group_descriptions",
    "guess_item_columns",
    "items_file",
    "items_source",
    "judge_to_check",
    "judges_to_compare",
    "keep_estimate",
    "kept_estimate",
    "load_documents",
    "load_groups",
    "load_personas",
    "load_run",
    "load_state",
    "open_evaluation_run",
    "open_items",
    "open_state",
    "personas_made_by",
    "personas_out_of_date",
    "read_items",
    "remove_document",
    "replace_personas",
    "restore_persona",
    "revert_page",
    "run_debates",
    "run_differences",
    "run_progress",
    "sample_folder",
    "save_groups",
    "save_personas",
    "save_state",
    "store_items_file",
    "stored_perspectives",
    "unit_statuses",
]

STATE_KIND = "majeval.wizard"
STATE_KEY = "state"
DOCUMENT_INPUT_KIND = "majeval_document"
ITEMS_INPUT_KIND = "majeval_items"

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

#: The model of a run (``core.llm.LLMFactory``); the default caches every call in the project.
default_llm_factory: LLMFactory = gateway_for


def sample_folder() -> Path:
    """The folder of the sample set shipped with EvalDesk."""
    from core.paths import resources_dir

    return resources_dir() / "samples" / "majeval"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _hash(value: Any) -> str:
    return fingerprint(value)


# ------------------------------------------------------------------------------ the state
class WizardState(BaseModel):
    """Everything the user chose in the MAJ-Eval wizard (artefact ``majeval.wizard``)."""

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


#: The wizard's choices (one per project, key ``state``).
STATE: PayloadType[WizardState] = PayloadType(
    STATE_KIND, WizardState, version=1,
    label="the MAJ-Eval choices (task, documents, items, dimensions and debate options)")


def open_state(project: Project) -> tuple[WizardState, str]:
    """The stored choices, and "" or a message saying they could not be read (then the stored
    version is kept aside in the project, never saved over, and the choices start afresh)."""
    return load_or_recover(project, STATE, STATE_KEY, WizardState)


def load_state(project: Project) -> WizardState:
    """The stored choices (fresh ones when there are none; see :func:`open_state`)."""
    return open_state(project)[0]


def save_state(project: Project, state: WizardState) -> None:
    put_payload(project, STATE, STATE_KEY, state, origin="human")


# --------------------------------------------------------------------------- perspectives
class DocumentPerspectives(BaseModel):
    """The stakeholders stage 1 found in one document, with the fingerprint of what they were
    read from (:func:`extraction_fingerprint`; "" when not known)."""

    fingerprint: str = ""
    stakeholders: list[Stakeholder] = Field(default_factory=list)


def _perspectives_from_v1(old: Any) -> dict[str, Any]:
    """Version 1 had two shapes: the wizard's ``{"fingerprint", "stakeholders"}`` and the
    command line's bare list of stakeholders (no fingerprint: the document is read again,
    from the cache)."""
    if isinstance(old, list):
        return {"fingerprint": "", "stakeholders": old}
    return old


#: The perspectives found per document (key = document name).
PERSPECTIVES: PayloadType[DocumentPerspectives] = PayloadType(
    PERSPECTIVES_ARTEFACT, DocumentPerspectives, version=2,
    migrations={1: _perspectives_from_v1}, label="the stakeholders found in a document")


def stored_perspectives(project: Project, name: str) -> DocumentPerspectives | None:
    """The perspectives kept for document ``name`` (None when there are none or they cannot be
    read: then the document is read again, from the cache)."""
    from core.project.payloads import PayloadUnreadable

    try:
        return _get_payload(project, PERSPECTIVES, name)
    except PayloadUnreadable:
        return None


# ------------------------------------------------------------------------------ documents
def add_document(project: Project, state: WizardState, path: str | Path, *,
                 progress: Progress | None = None, cancel: CancelToken | None = None
                 ) -> Document:
    """Read a PDF/.txt/.md file (blocking: run it in an executor), keep a copy of the file and
    the extracted pages in the project, and list it in ``state`` (saved). A document of the same
    name is replaced. Raises :class:`core.documents.DocumentError` with a plain message."""
    path = Path(path)
    doc = read_document(path, max_pages=state.max_pages,
                        drop_references=not state.keep_references, progress=progress,
                        cancel=cancel)
    with project.transaction():
        store_input(project, DOCUMENT_INPUT_KIND, path)
        project.put_artefact(DOCUMENT_ARTEFACT, doc.name, doc.to_dict(), origin="imported")
        if doc.name not in state.documents:
            state.documents.append(doc.name)
        state.extracted.pop(doc.name, None)
        save_state(project, state)
    return doc


def corrected_pages(project: Project) -> list[str]:
    """Each correction of a document's text in the Documents page's words and numbers
    ("report.pdf page 4 by Ann", "notes.md section 3 by Ann"), oldest first."""
    out = []
    for e in project.list_edits(kind=DOCUMENT_ARTEFACT):
        if not e.field.startswith("pages."):
            continue
        page = e.new if isinstance(e.new, dict) else e.old if isinstance(e.old, dict) else {}
        number = page.get("number")
        artefact = project.get_artefact(DOCUMENT_ARTEFACT, e.key)
        kind = artefact.payload.get("kind") if artefact is not None else None
        unit = "page" if kind == "pdf" or (kind is None and e.key.lower().endswith(".pdf")) \
            else "section"
        out.append(f"{e.key} {unit} {number if number is not None else '?'} by {e.who}")
    return out


def remove_document(project: Project, state: WizardState, name: str, who: str) -> None:
    """Take a document out of the wizard (its artefact is deleted with who and when)."""
    with project.transaction():
        if project.get_artefact(DOCUMENT_ARTEFACT, name) is not None:
            project.delete_artefact((DOCUMENT_ARTEFACT, name), who or "unknown")
        if name in state.documents:
            state.documents.remove(name)
        state.extracted.pop(name, None)
        save_state(project, state)


def load_documents(project: Project, state: WizardState) -> list[Document]:
    """The wizard's documents (with the user's corrections) in the order added."""
    out = []
    for name in state.documents:
        artefact = project.get_artefact(DOCUMENT_ARTEFACT, name)
        if artefact is None:
            continue
        try:
            out.append(Document.from_dict(artefact.payload))
        except ValidationError:
            continue
    return out


def edit_page(project: Project, name: str, number: int, text: str, who: str) -> Document:
    """A person corrected the text of page ``number`` of document ``name``: stored with who and
    when (``project.record_edit``); returns the updated document."""
    artefact = project.get_artefact(DOCUMENT_ARTEFACT, name)
    if artefact is None:
        raise KeyError(f"The document {name} is not in the project.")
    doc = Document.from_dict(artefact.payload)
    index = next(i for i, p in enumerate(doc.pages) if p.number == number)
    if doc.pages[index].text == text:
        return doc
    updated = doc.with_page_text(number, text)
    project.record_edit((DOCUMENT_ARTEFACT, name), f"pages.{index}",
                        artefact.payload["pages"][index],
                        updated.pages[index].model_dump(mode="json"), who or "unknown")
    return updated


def revert_page(project: Project, name: str, number: int, who: str) -> Document | None:
    """Put page ``number`` of document ``name`` back as it was extracted from the file (recorded
    as an edit too, so it can be followed); None when it was never corrected."""
    artefact = project.get_artefact(DOCUMENT_ARTEFACT, name)
    if artefact is None:
        raise KeyError(f"The document {name} is not in the project.")
    doc = Document.from_dict(artefact.payload)
    index = next(i for i, p in enumerate(doc.pages) if p.number == number)
    edits = [e for e in project.list_edits((DOCUMENT_ARTEFACT, name))
             if e.field == f"pages.{index}"]
    if not edits or not isinstance(edits[0].old, dict):
        return None
    original = dict(edits[0].old)
    if doc.pages[index].text == original.get("text") and not doc.pages[index].edited:
        return doc
    project.record_edit((DOCUMENT_ARTEFACT, name), f"pages.{index}",
                        artefact.payload["pages"][index], original, who or "unknown")
    return Document.from_dict(project.get_artefact(DOCUMENT_ARTEFACT, name).payload)


def extraction_fingerprint(task: str, doc: Document, model: Any = None) -> str:
    """What stage 1's result for a document depends on: the task, the pages' text and the model
    that reads them (``model``: a profile, or the recorded model of earlier personas; None when
    not known). Another model, or the same one with other settings, reads the documents again
    (issue 28: a capable model chosen after the built-in one only regrouped the built-in
    model's stakeholders)."""
    parts: list[Any] = [task.strip(), doc.name, [(p.number, p.text) for p in doc.pages]]
    if model is not None:
        fields = model_fields(model)
        if fields["model"]:
            parts.append(fields)
    return _hash(parts)


def evidence_span(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` is in a page's ``text`` (character start, end) for highlighting: its
    sentence when the quote stands in the text word for word (only the quote itself when that
    "sentence" is a long block, as a table's cells read from a PDF are); else the sentence, or
    two neighbouring sentences, sharing the most of the quote's words (at least half of them)
    and not much longer than the quote; None when there is none."""
    words = re.findall(r"\w+", quote.casefold())
    if not words or not text:
        return None
    longest = 2 * len(words) + 8  # a highlight longer than this is no longer the quote's
    sentences = [(m.start(), m.end()) for m in re.finditer(r"[^.!?\n]+[.!?]*", text)]
    tokens = [(m.start(), m.end(), m.group().casefold()) for m in re.finditer(r"\w+", text)]
    for i in range(len(tokens) - len(words) + 1):
        if all(tokens[i + k][2] == w for k, w in enumerate(words)):
            start, stop = tokens[i][0], tokens[i + len(words) - 1][1]
            around = next(((a, b) for a, b in sentences if a <= start < b), None)
            if around is not None and around[1] >= stop and \
                    len(re.findall(r"\w+", text[around[0]:around[1]])) <= longest:
                start, stop = around
            while start < stop and text[start].isspace():
                start += 1
            return start, stop
    wanted = set(words)
    best: tuple[float, int, int] | None = None
    for i, (start, end) in enumerate(sentences):
        for j in (i, i + 1):
            if j >= len(sentences):
                continue
            stop = sentences[j][1]
            span_words = re.findall(r"\w+", text[start:stop].casefold())
            if len(span_words) > longest:
                continue
            found = set(span_words)
            share = len(wanted & found) / len(wanted)
            extra = len(found - wanted) / max(1, len(found))
            score = share - 0.1 * extra
            if best is None or score > best[0] + 1e-9:
                best = (score, start, stop)
    if best is None or best[0] < 0.5:
        return None
    start, stop = best[1], best[2]
    while start < stop and text[start].isspace():
        start += 1
    return start, stop


# ---------------------------------------------------------------------- persona creation
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
    state: WizardState,
    llm: Any,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> PersonasMade:
    """Stages 1-2 for the wizard: perspectives per document (a document whose text and task
    are unchanged is not read again; each finished document is stored at once), then grouping
    and personas. Personas a person edited are kept; other earlier personas are replaced.
    Raises :class:`StageError` when no persona could be made."""
    progress = progress or Progress()
    docs = load_documents(project, state)
    if not docs:
        raise StageError("Add at least one document about the stakeholders first.",
                         stage="Perspective extraction")
    if not state.task.strip():
        raise StageError("Write the task description first (page 1).", stage="Task")
    profile = getattr(llm, "profile", None)
    model = profile if profile is not None and getattr(profile, "model", "") else None
    made = PersonasMade(personas=[])
    stakeholders: list[Stakeholder] = []
    failures: list[StageFailure] = []

    async def one(doc: Document) -> None:
        wanted = extraction_fingerprint(state.task, doc, model)
        if state.extracted.get(doc.name) == wanted:
            made.reused.append(doc.name)
            return
        found = await extract_perspectives(doc, state.task, llm, progress=progress,
                                           cancel=cancel)
        read_now[doc.name] = found
        made.units += found.chunks
        failures.extend(found.failures)
        if found.failures:  # read again next time (the finished chunks come from the cache)
            return
        put_payload(project, PERSPECTIVES, doc.name,
                    DocumentPerspectives(fingerprint=wanted, stakeholders=found.stakeholders),
                    origin="generated")
        state.extracted[doc.name] = wanted
        save_state(project, state)
        made.read.append(doc.name)

    read_now: dict[str, Any] = {}
    for doc in docs:  # one after the other, so the progress reads per document
        await one(doc)
    for doc in docs:
        kept = stored_perspectives(project, doc.name) \
            if state.extracted.get(doc.name) == extraction_fingerprint(state.task, doc, model) \
            else None  # another model's stakeholders are never used
        if kept is not None:
            stakeholders.extend(kept.stakeholders)
        elif doc.name in read_now:  # failed chunks: what the other chunks found just now
            stakeholders.extend(read_now[doc.name].stakeholders)
        else:  # read before with failures: the finished chunks come from the cache
            found = await extract_perspectives(doc, state.task, llm, cancel=cancel)
            stakeholders.extend(found.stakeholders)
    from core.majeval.pipeline import too_little

    little = too_little(stakeholders, docs)
    groups, built = await _group_and_construct(stakeholders, failures, state.task, llm,
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
        state.failures = failures
        state.too_little = little
        state.personas_model = None if model is None else model_fields(model)
        state.personas_basis = _basis(state, docs, state.personas_model)
        state.personas_task = state.task
        save_state(project, state)
    made.personas = load_personas(project)
    made.failures = failures
    made.too_little = little
    made.groups = list(groups)
    made.units += len(groups)
    made.perspectives = sum(len(s.perspectives) for s in stakeholders)
    return made


def personas_made_by(project: Project, state: WizardState) -> dict[str, Any] | None:
    """The model that found the stakeholders and wrote the stored personas (as
    :func:`core.llm.identity.model_fields` records it); None when not known or the personas
    were imported."""
    personas = project.list_artefacts(PERSONA_ARTEFACT)
    if not personas or any(a.origin == "imported" for a in personas):
        return None
    return state.personas_model


def personas_out_of_date(project: Project, state: WizardState) -> str:
    """Why the personas no longer match the task or the documents they were written from ("" when
    they do, when there are none, or when they were imported rather than made here)."""
    personas = project.list_artefacts(PERSONA_ARTEFACT)
    if not state.personas_basis or not personas or any(a.origin == "imported" for a in personas):
        return ""
    if _basis(state, load_documents(project, state), state.personas_model) == \
            state.personas_basis:
        return ""
    if state.personas_task.strip() != state.task.strip():
        return "The task description changed after these personas were written."
    return "The documents changed (added, removed or corrected) after these personas were written."


def _basis(state: WizardState, docs: Sequence[Document], model: Any = None) -> str:
    return _hash(sorted((d.name, extraction_fingerprint(state.task, d, model)) for d in docs))


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
        save_groups(project, [StakeholderGroup(name=g, description=given.get(g) or before.get(g, ""))
                              for g in groups_of(personas)], origin="imported")
    return load_personas(project)


# ------------------------------------------------------------------- groups and personas
def save_groups(project: Project, groups: Sequence[StakeholderGroup], *,
                origin: str = "generated") -> None:
    project.put_artefact(GROUPS_ARTEFACT, "groups",
                         [g.model_dump(mode="json") for g in groups], origin=origin)  # type: ignore[arg-type]


def load_groups(project: Project) -> list[StakeholderGroup]:
    found = project.get_artefact(GROUPS_ARTEFACT, "groups")
    return [StakeholderGroup.model_validate(g) for g in (found.payload if found else [])]


def save_personas(project: Project, personas: Sequence[Persona], *,
                  origin: str = "generated", overwrite_edits: bool = False) -> None:
    """Store each persona as an artefact (key = persona id). A persona a person has edited is
    kept as it is unless ``overwrite_edits``. A person's change goes through
    :func:`edit_persona`, which records who and when."""
    with project.transaction():
        for p in personas:
            stored = project.get_artefact(PERSONA_ARTEFACT, p.id)
            if stored is not None and stored.edited and not overwrite_edits:
                continue
            project.put_artefact(PERSONA_ARTEFACT, p.id, p.model_dump(mode="json"),
                                 origin=origin)  # type: ignore[arg-type]


def load_personas(project: Project) -> list[Persona]:
    """The stored personas in the order first stored; ``edited``/``origin`` from the project."""
    out = []
    for artefact in project.list_artefacts(PERSONA_ARTEFACT):
        persona = Persona.model_validate(artefact.payload)
        out.append(persona.model_copy(update={"edited": artefact.edited or persona.edited,
                                              "origin": artefact.origin}))
    return out


def edit_persona(project: Project, persona: Persona, field_name: str, new: Any,
                 who: str) -> Persona:
    """A person changes one field of a stored persona (``"specialty"``, ``"group"``, ...);
    the edit is logged with who and when. Returns the updated persona. Raises ``ValueError``
    (nothing stored) when the edit would break the one persona rule (:func:`persona_problem`):
    a required field cannot be emptied."""
    if field_name in REQUIRED_PERSONA_FIELDS and not str(new or "").strip():
        problem = persona_problem(persona.model_copy(update={field_name: ""}))
        raise ValueError(f"{_sentence(problem)}; the old {field_name} of {persona.name} was kept.")
    artefact = project.record_edit((PERSONA_ARTEFACT, persona.id), field_name,
                                   getattr(persona, field_name), new, who)
    return Persona.model_validate(artefact.payload).model_copy(update={"edited": True})



def _repeat_settings(settings: dict[str, Any], repeat: int) -> dict[str, Any]:
    """A run's settings for repeat ``repeat`` (repeat 0: unchanged, so earlier runs are
    repeat 0; see :mod:`core.llm.repeats`)."""
    return {**settings, "repeat": int(repeat)} if repeat else settings


def open_evaluation_run(project: Project, task: str, dimensions: Sequence[Dimension],
                        scale: Scale, settings: DebateSettings, model: Any, *,
                        repeat: int = 0) -> int:
    """Start (or, with identical settings, reopen) the project run :func:`evaluate` commits to.
    Call it first when the gateway should log its calls under this run. ``repeat`` k > 0: the
    run of repeat k (its own run; every call uses repeat index k)."""
    return project.start_run(METHOD, STEP_DEBATE, _repeat_settings(
        _run_settings(task, dimensions, scale, settings, model), repeat), resume=True)


def group_descriptions(project: Project) -> dict[str, str]:
    """group -> description of the stored groups (the simple-role option uses them)."""
    return {g.name: g.description for g in load_groups(project)}


# ---------------------------------------------------------------------------------- items
def store_items_file(project: Project, setup: ItemsSetup, path: str | Path) -> ItemsSetup:
    """Copy the items file into the project (so a moved file can still be read)."""
    ref = store_input(project, ITEMS_INPUT_KIND, path)
    return setup.model_copy(update={"path": ref.path, "file_name": ref.file_name,
                                    "input_id": ref.input_id, "content_hash": ref.content_hash,
                                    "sheet": None, "columns": {}, "human": [],
                                    "human_names": {}, "header_row": None})


def items_file(project: Project, setup: ItemsSetup) -> Path | None:
    """The items file: where it was chosen, or the project's copy when it is gone (None when
    neither is there). A file that changed since it was chosen is read as it is now."""
    if not setup.path and setup.input_id is None:
        return None
    ref = InputRef(path=setup.path, file_name=setup.file_name, content_hash=setup.content_hash,
                   input_id=setup.input_id)
    try:
        return open_input(project, ITEMS_INPUT_KIND, ref).path
    except FileNotFoundError:
        return None


# ----------------------------------------------------------------------------- the debates
def _check_ready(project: Project, state: WizardState) -> list[Persona]:
    personas = load_personas(project)
    if not personas:
        raise ValueError("There are no personas yet: create them (page 3) or import them "
                         "(page 4) first.")
    incomplete = [f"{p.name or 'a persona without a name'} ({p.group}): {persona_problem(p)}"
                  for p in personas if persona_problem(p)]
    if incomplete:
        raise ValueError("These personas are not complete, so they cannot take part in a debate: "
                         + "; ".join(incomplete[:5])
                         + ("; and more" if len(incomplete) > 5 else "")
                         + ". Fill them in on the personas page (page 4), or delete them.")
    if not state.item_list:
        raise ValueError("There are no items: choose the items file and its columns (page 5).")
    return personas


class _DebateUnits(RunUnits):
    """The debates of a run in the project. When the project was closed under a running run
    (the user opened another one), the run's end cannot be recorded; every debate that
    finished is kept already, and the next run with the same choices resumes."""

    def end(self, status: str, message: str) -> None:
        if not getattr(self.project, "closed", False):
            super().end(status, message)


async def run_debates(
    project: Project,
    state: WizardState,
    llm_for_run: Callable[[int], Any],
    *,
    model: Any = "",
    max_units: int | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    repeat: int = 0,
    live: dict[str, str] | None = None,
) -> EvaluationRun:
    """Stage 3 for every item and group with the stored personas (the engine's
    :func:`core.majeval.evaluate`, committed per debate; a resumed run repeats no finished
    debate). ``llm_for_run(run_id)`` makes the model that logs its calls under the run.
    ``repeat`` k > 0 runs repeat k: its own run, every call with repeat index k (the choices'
    ``run_id`` stays the one of repeat 0). ``live``: where each running debate is (see
    :func:`core.majeval.evaluate`; :func:`unit_statuses` shows it)."""
    from core.llm.repeats import with_repeat

    personas = _check_ready(project, state)
    run_id = open_evaluation_run(project, state.task, state.dimensions, state.scale,
                                 state.settings, model, repeat=repeat)
    if not repeat:
        state.run_id = run_id
        save_state(project, state)
    run = await evaluate(personas, state.item_list, state.task,
                         with_repeat(llm_for_run(run_id), repeat),
                         dimensions=state.dimensions, scale=state.scale,
                         settings=state.settings, model=model,
                         store=_DebateUnits(project, run_id, RESULT_KIND),
                         max_units=max_units, group_descriptions=group_descriptions(project),
                         progress=progress, cancel=cancel, live=live)
    run.items_source = items_source(state)
    return run


ESTIMATE_ARTEFACT = "majeval.estimate"


def estimate_run(project: Project, state: WizardState, profile: Any, *,
                 latency: Any = None, repeats: int = 1) -> Any:
    """What :func:`run_debates` with ``profile`` will take (:class:`core.llm.estimate.Estimate`):
    calls, tokens, cost and time of the debates not yet kept in the project (``repeats`` N:
    of repeats 0..N-1 together). ``latency`` (a
    :class:`core.llm.estimate.Latency`, e.g. from one probe call) overrides the latency the
    project recorded for this model. Items too long for the model are listed in ``too_long``
    (the run refuses them). Raises ValueError when there are no personas or items. No model is
    called (a server may be asked its context window)."""
    from core.llm.context import limits_of
    from core.llm.estimate import estimate, measured_latency
    from core.majeval.estimate import plan_for_state
    from core.majeval.pipeline import refused_items

    personas = _check_ready(project, state)
    limits = limits_of(profile)
    descriptions = group_descriptions(project)
    plan, skipped = [], 0
    for repeat in range(max(1, repeats)):
        run = current_run(project, state, profile, repeat=repeat)
        done = project.finished_keys(run.id, RESULT_KIND) if run is not None else set()
        stages, n = plan_for_state(personas, state, descriptions, done, limits)
        for stage in stages:
            stage.name += f" (repeat {repeat})" if repeat else ""
        plan += stages
        skipped += n
    latency = latency or measured_latency(project, profile.model)
    est = estimate(plan, profile, latency=latency, done_already=skipped, done_what="debates")
    est.too_long = refused_items(personas, state.item_list, state.task, state.dimensions,
                                 state.scale, limits, settings=state.settings,
                                 descriptions=descriptions)
    return est


def keep_estimate(project: Project, run_id: int, est: Any) -> None:
    """Keep the estimate made before run ``run_id`` (to show it beside the actual figures)."""
    from dataclasses import asdict

    project.put_artefact(ESTIMATE_ARTEFACT, str(run_id), asdict(est), origin="generated")


def kept_estimate(project: Project, run_id: int | None) -> dict[str, Any] | None:
    """The estimate kept for run ``run_id`` (a dict of :class:`core.llm.estimate.Estimate`'s
    fields), or None."""
    if run_id is None:
        return None
    artefact = project.get_artefact(ESTIMATE_ARTEFACT, str(run_id))
    return dict(artefact.payload) if artefact is not None else None


def items_source(state: WizardState) -> str:
    """The items file and sheet, as the results name them."""
    setup = state.items
    name = setup.file_name or Path(setup.path).name
    if not name:
        return ""
    return f"{name}, sheet {setup.sheet}" if setup.sheet else name


def current_run(project: Project, state: WizardState, model: Any = None, *,
                repeat: int = 0) -> Any:
    """The debate run of the current choices (task, dimensions, scale, debate options, the
    prompts' versions and, when given, ``model``: the chosen profile, whose name and settings
    must be those of the run): the one :func:`run_debates` would resume; None when there is
    none. With ``model`` None, the run last started counts when its other choices are the
    current ones. ``repeat``: the run of that repeat (0: the ordinary run)."""
    if model is not None:
        return project.find_run(METHOD, STEP_DEBATE, _repeat_settings(_run_settings(
            state.task, state.dimensions, state.scale, state.settings, model), repeat))
    if state.run_id is None:
        return None
    run = project.get_run(state.run_id)
    if run is None or run.method != METHOD or run.step != STEP_DEBATE:
        return None
    model = dict(run.settings or {})
    if repeat:
        return current_run(project, state, model, repeat=repeat)
    wanted = _run_settings(state.task, state.dimensions, state.scale, state.settings, model)
    return run if _hash(run.settings) == _hash(wanted) else None


def _unit_keys(project: Project, state: WizardState, by_group: dict[str, list[Persona]]
               ) -> dict[tuple[str, str], str]:
    """(item id, group) -> the project key of that debate with the current choices."""
    about = group_descriptions(project)
    roles = {g: simple_roles_text(members, state.settings, about)
             for g, members in by_group.items()}
    return {(item.id, g): unit_key(item, g, members, roles[g])
            for item in state.item_list for g, members in by_group.items()}


def run_progress(project: Project, state: WizardState, model: Any = None, *,
                 repeat: int = 0) -> tuple[int, int]:
    """(debates finished, debates in all) with the current personas, items and choices
    (``model``: see :func:`current_run`; ``repeat``: of that repeat run); a run made with other
    choices counts for nothing."""
    by_group = groups_of(load_personas(project))
    total = len(state.item_list) * len(by_group)
    run = current_run(project, state, model, repeat=repeat)
    if run is None or not total:
        return 0, total
    done = project.finished_keys(run.id, RESULT_KIND)
    return len(set(_unit_keys(project, state, by_group).values()) & done), total


def _local_time(iso: str | None) -> str:
    if not iso:
        return ""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def load_run(project: Project, state: WizardState, model: Any = None, *,
             repeat: int = 0) -> EvaluationRun | None:
    """The results of the current choices from the project, without asking any model; None
    when there is none, a debate is missing, or the personas, items or options (and, when
    given, the ``model``) changed since. ``repeat``: the results of that repeat run."""
    if not state.item_list:
        return None
    run = current_run(project, state, model, repeat=repeat)
    if run is None:
        return None
    settings = run.settings or {}
    personas = load_personas(project)
    by_group = groups_of(personas)
    if not by_group:
        return None
    keys = _unit_keys(project, state, by_group)
    stored = {r.key: r for r in project.get_results(run.id, RESULT_KIND)}
    results = []
    for item in state.item_list:
        groups: list[GroupResult] = []
        for group in by_group:
            found = stored.get(keys[(item.id, group)])
            if found is None:
                return None
            try:
                groups.append(GroupResult.model_validate(found.payload))
            except ValidationError:
                return None
        results.append(combine_groups(item.id, groups, state.dimensions))
    about = group_descriptions(project)
    return EvaluationRun(items=results, personas=personas, dimensions=list(state.dimensions),
                         scale=state.scale, settings=state.settings, task=state.task,
                         model=str(settings.get("model", "")), run_id=run.id,
                         model_settings=settings.get("model_settings"),
                         reused=len(results) * len(by_group), item_inputs=list(state.item_list),
                         group_descriptions={g: about.get(g, "") for g in by_group},
                         finished_at=_local_time(run.finished_at or run.started_at),
                         items_source=items_source(state))


def run_differences(project: Project, state: WizardState, run: EvaluationRun,
                    model: Any = None) -> list[str]:
    """What differs between the choices that produced ``run`` and the current ones, in plain
    words ("the simple-roles option", "the model", "the seed (0 then, 7 now)", ...); empty when
    the run is current. ``model``: the chosen profile (None: not compared)."""
    from core.llm.identity import model_differences
    from core.majeval.pipeline import debate_prompts

    out = []
    if run.task.strip() != state.task.strip():
        out.append("the task description")
    if [d.model_dump() for d in run.dimensions] != [d.model_dump() for d in state.dimensions]:
        out.append("the dimensions")
    if run.scale.model_dump() != state.scale.model_dump():
        out.append("the scale")
    then, now = run.settings, state.settings
    if then.rounds != now.rounds:
        out.append(f"the debate rounds ({then.rounds} then, {now.rounds} now)")
    if then.no_debate != now.no_debate:
        out.append("the no-debate option")
    if then.simple_roles != now.simple_roles:
        out.append("the simple-roles option")
    if model is not None:
        out += model_differences(run.model_used, model)
    if run.run_id is not None:
        stored = project.get_run(run.run_id)
        then = (stored.settings or {}).get("prompts") if stored is not None else None
        if then != debate_prompts():
            out.append("EvalDesk's debate prompts (changed since)" if then else
                       "the debate prompts' version (not recorded with these results)")
    if [(i.id, i.fingerprint(), i.human) for i in run.item_inputs] != \
            [(i.id, i.fingerprint(), i.human) for i in state.item_list]:
        out.append("the items")
    personas = load_personas(project)
    if personas_fingerprint(run.personas) != personas_fingerprint(personas) or \
            [p.group for p in run.personas] != [p.group for p in personas]:
        out.append("the personas")
    elif now.simple_roles:
        about = group_descriptions(project)
        if any(run.group_descriptions.get(g, "") != about.get(g, "")
               for g in groups_of(personas)):
            out.append("the group descriptions (used by the simple roles)")
    return out


#: Bootstrap resamples for the correlations' confidence intervals (screen and workbook alike).
BOOTSTRAP_SAMPLES = 1000


def agreement(run: EvaluationRun, n_boot: int = BOOTSTRAP_SAMPLES) -> tuple[list[Any], list[Any]]:
    """Krippendorff's alpha within each group and the correlations with the human ratings
    (``n_boot`` 0: no confidence intervals). Blocking: run it in an executor."""
    from core.majeval.agreement import human_agreement, within_group_alpha

    return list(within_group_alpha(run)), list(human_agreement(run, n_boot=n_boot))


def export_results(project: Project, run: EvaluationRun, path: str | Path,
                   progress: Progress | None = None, cancel: CancelToken | None = None, *,
                   n_boot: int = BOOTSTRAP_SAMPLES, state: WizardState | None = None,
                   repeats: Sequence[Any] = ()) -> Path:
    """Write the results workbook (:func:`core.majeval.report.write_results`) with the agreement
    statistics, the model calls kept for the run, and the people's corrections. With ``state``
    (the wizard's choices) it also has the sheets "Comparison" and "Condition scores" of the
    conditions kept in the project for the run's model, made by the same function as the
    command line's ``--conditions`` workbook (:func:`core.majeval.conditions.comparison_sheets`).
    ``repeats`` (:func:`core.majeval.repeats.load_repeats`, 2 or more) add the Stability sheet;
    the scores are ``run``'s (repeat 0). Blocking: run it in an executor. Raises
    :class:`core.tables.TableError` when it cannot be written."""
    from core.majeval import conditions as cd
    from core.majeval.report import write_results

    progress = progress or Progress()
    progress.start("Computing agreement", total=3 if state is not None else 2)
    alphas, humans = agreement(run, n_boot)
    if cancel is not None:
        cancel.raise_if_cancelled()
    sheets: list[Any] = []
    notes: list[tuple[str, str]] = []
    if state is not None:
        progress.advance(1, "Comparing the conditions kept in the project")
        kept = cd.load_conditions(project, state, list(cd.CONDITIONS), run.model_used)
        if kept:
            dims = [d.name for d in state.dimensions]
            rows = cd.comparison_rows(kept, state.item_list, dims,
                                      n_boot=cd.COMPARISON_BOOT if n_boot else 0)
            sheets = cd.comparison_sheets(kept, state.item_list, dims, rows)
            notes = cd.comparison_notes(kept, rows)
            missing = [label for name, label in cd.CONDITIONS.items() if name not in kept]
            if missing:
                notes.append(("Conditions not run", "; ".join(missing)
                              + " (run them on the results' Conditions tab)"))
        if cancel is not None:
            cancel.raise_if_cancelled()
    progress.advance(1, "Writing the workbook")
    readme: list[tuple[str, str]] = []
    if run.run_id is not None:
        usage = project.llm_usage(run.run_id)
        readme.append(("Model calls", (f"{usage.calls} calls stored, {usage.prompt_tokens:,} "
                                      f"tokens in, {usage.completion_tokens:,} out")))
    if not n_boot:
        readme.append(("Confidence intervals", "not computed (no bootstrap)"))
    edits = [e for e in project.list_edits(kind=PERSONA_ARTEFACT)]
    if edits:
        who = sorted({e.who for e in edits})
        readme.append(("Persona edits", f"{len(edits)} changes by " + ", ".join(who)))
    corrections = corrected_pages(project)
    if corrections:
        readme.append(("Document corrections", "; ".join(corrections[:20])))
    if len(repeats) >= 2:
        from core.majeval.repeats import stability, stability_sheet

        entries = stability(list(repeats), run.item_inputs, [d.name for d in run.dimensions])
        sheets.append(stability_sheet(entries))
        readme.append(("Repeats", (f"each call made {len(repeats)} times (repeats 0 to "
                                   f"{len(repeats) - 1}); the scores shown are repeat 0's, the "
                                   "Stability sheet compares the repeats")))
        readme += [(f"Stability: {label}, {dim}", s.sentence) for label, dim, s in entries]
    sheets += privacy.deidentification_sheets(project)  # what was replaced, never values
    target = Path(path)
    write_results(target, run, alphas=alphas, humans=humans, readme=[*readme, *notes],
                  extra_sheets=sheets)
    progress.advance(1, f"Saved {target.name}")
    return target


def export_personas(project: Project, state: WizardState, path: str | Path, *,
                    readme: Sequence[tuple[str, str]] = ()) -> Path:
    """Write the stored personas and their groups' descriptions to a Personas workbook that
    can be edited and imported again (by the wizard or ``evaldesk majeval run``), saying which
    documents and task they were made from (``readme``: more lines first, e.g. a warning and the
    model). Raises :class:`core.tables.TableError` when it cannot be written."""
    from core.llm.identity import DEMO_NOTE, describe_model, is_demo_model
    from core.majeval.personas_io import write_personas

    docs = load_documents(project, state)
    made_by = personas_made_by(project, state)
    demo = [("Demo model", DEMO_NOTE)] if made_by and is_demo_model(made_by) else []
    notes = [*demo, *readme, ("Documents", ", ".join(d.name for d in docs)),
             ("Task", state.personas_task or state.task),
             *([("Personas written by", describe_model(made_by))] if made_by else []),
             *privacy.deidentification_readme(project)]
    target = Path(path)
    write_personas(target, load_personas(project), readme=notes,
                   descriptions=group_descriptions(project))
    return target


def unit_statuses(project: Project, state: WizardState, model: Any = None,
                  live: Mapping[str, str] | None = None) -> list[dict[str, str]]:
    """One row per (item, group) debate with the current choices (``model``: see
    :func:`current_run`): "finished", "failed" (with the reason), "running" (with where it is,
    from ``live``: see :func:`run_debates`) or "waiting", for the run page's progress table."""
    by_group = groups_of(load_personas(project))
    run = current_run(project, state, model)
    stored = {}
    if run is not None:
        stored = {r.key: r for r in project.get_results(run.id, RESULT_KIND)}
    keys = _unit_keys(project, state, by_group)
    rows = []
    for item in state.item_list:
        for group in by_group:
            key = keys[(item.id, group)]
            found = stored.get(key)
            if found is None and live and key in live:
                status, note = "running", live[key]
            elif found is None:
                status, note = "waiting", ""
            elif found.status == "ok":
                turns = sum(1 for t in (found.payload or {}).get("turns", [])
                            if t.get("kind") == "debate")
                status, note = "finished", f"{turns} debate turns"
            else:
                status, note = "failed", found.error or "failed"
            rows.append({"item": item.id, "group": group, "status": status, "note": note})
    return rows


# ------------------------------------------------------------------------ check the judge
def judge_to_check(project: Project, state: WizardState) -> tuple[Any, str]:
    """The current results as the judge a person checks (:mod:`core.judge_check`); (None,
    why) when there are none."""
    from core.majeval.judge_check import judge_data

    run = load_run(project, state)
    if run is None:
        return None, ("There are no debate results to check yet: run the debates first (every "
                      "item must have finished with the current personas and options).")
    return judge_data(run), ""


def judges_to_compare(project: Project, state: WizardState) -> list[tuple[str, str, Any]]:
    """Every condition (:data:`core.majeval.conditions.CONDITIONS`: full personas after and
    before the debate, simple roles, a single judge) of every model that has scored the
    current items with the current personas, as ``(name, key, judge)`` for
    :func:`core.judge_check.rank_judges`; ``key`` is ``"<condition>:<model>"`` (see
    :func:`condition_choice`). Nothing is run: only what the project holds."""
    from core.majeval.conditions import CONDITIONS, load_conditions
    from core.majeval.judge_check import condition_judge

    base, _ = judge_to_check(project, state)
    if base is None:
        return []
    from core.llm.identity import describe_model

    models = _run_models(project)
    names = [f["model"] for f in models.values()]
    out = []
    for key, fields in models.items():
        model = fields["model"]
        # two profiles of one model are told apart by their settings
        shown = describe_model(fields) if names.count(model) > 1 else \
            (model or "model not recorded")
        for name, found in load_conditions(project, state, list(CONDITIONS), fields).items():
            label = found.label if len(models) == 1 else f"{found.label} ({shown})"
            out.append((label, f"{name}:{model}" if names.count(model) == 1 else
                        f"{name}:{model}#{key}", condition_judge(base, found)))
    return out


def _run_models(project: Project) -> dict[str, dict[str, Any]]:
    """The models of the finished debate and single-judge runs, as their settings name them
    (:func:`core.llm.identity.model_fields`), by a hash of that."""
    from core.majeval.conditions import STEP_SINGLE

    models: dict[str, dict[str, Any]] = {}
    for step in (STEP_DEBATE, STEP_SINGLE):
        for r in project.list_runs(METHOD, step):
            if r.status == "finished":
                fields = model_fields(r.settings or {})
                models.setdefault(_hash(fields), fields)
    return models


def estimate_personas(project: Project, state: WizardState, profile: Any) -> Any:
    """What :func:`create_personas_stored` with ``profile`` takes (calls and time; no model is
    called): one call per part of each document not read yet, the grouping, and one call per
    stakeholder group (2 to 6 assumed). None without documents or task."""
    from core.llm.context import limits_of
    from core.llm.estimate import estimate, measured_latency
    from core.majeval.estimate import plan_personas

    docs = load_documents(project, state)
    if not docs or not state.task.strip():
        return None
    done = {d.name for d in docs
            if state.extracted.get(d.name) == extraction_fingerprint(state.task, d, profile)}
    limits = limits_of(profile)
    try:
        plan, skipped = plan_personas(docs, state.task, context_window=limits.window,
                                      answer_tokens=limits.answer, done=done)
    except ValueError:
        return None  # the model's window is too small: the run itself says so
    return estimate(plan, profile, latency=measured_latency(project, profile.model),
                    done_already=skipped, done_what="documents read already")


def condition_choice(project: Project, state: WizardState, key: str
                     ) -> tuple[WizardState | None, str, str]:
    """What making the condition ``key`` (``"<condition>:<model>"``, from
    :func:`judges_to_compare`) the project's judge means: the choices to keep (None when the
    wizard cannot score that way), the model to score with (as its runs recorded it:
    :func:`core.llm.identity.model_fields`; the model string alone when none ran), and what it
    does in words. The model's profile is chosen by the caller
    (:func:`core.llm.identity.profiles_of`)."""
    from core.majeval.conditions import CONDITIONS, load_conditions

    name, _, model = key.partition(":")
    model, _, wanted = model.partition("#")
    models = _run_models(project)
    fields: Any = models.get(wanted) or next(
        (f for f in models.values() if f["model"] == model), model)
    if name not in CONDITIONS:
        return None, fields, f"“{key}” is not one of MAJ-Eval's conditions."
    label = CONDITIONS[name]
    if name == "single-judge":
        return None, fields, (
            f"“{label}” agrees best with you, but MAJ-Eval always scores with the personas, "
            "so it cannot be the project's judge here. Its scores are in the Conditions tab "
            "of the Results page (and its export).")
    settings = state.settings.model_copy(update={
        "no_debate": name == "pre", "simple_roles": name == "simple"})
    chosen = state.model_copy(update={"settings": settings}, deep=True)
    found = load_conditions(project, state, [name], fields).get(name)
    if name != "pre" and found is not None and found.run_id is not None:
        chosen.run_id = found.run_id  # its debates are stored: shown without a new run
        then = "Its debates are already in the project, so its results are shown now."
    elif name == "pre":
        then = ("The next run asks each persona for its scores without the debate (fewer "
                "calls); start it on the Run page. The debates already run are kept.")
    else:
        then = "Start the run on the Run page."
    how = {"full": "full personas with the debate",
           "pre": "the personas' own scores, without the debate",
           "simple": "one-sentence roles with the debate"}[name]
    return chosen, fields, f"The project now scores with {how} (“{label}”). {then}"
