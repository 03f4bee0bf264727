"""MAJ-Eval wizard state kept in the project file, so nothing the user did is lost.

The wizard works through this module; every change is stored as soon as it is made:

    state = load_state(project)                     # task, documents, items, options, run id
    doc = add_document(project, state, path)        # read (executor), copy into the project
    doc = edit_page(project, doc.name, 3, text, who="Anna")     # a person's correction
    made = await create_personas_stored(project, state, llm)    # stages 1-2, resumable
    run = await run_debates(project, state, llm)    # stage 3, resumable (engine's evaluate)
    run = load_run(project, state)                  # reopening: results without model calls

Documents are the engine's artefacts ``majeval.document`` (key = file name); a corrected page is
recorded with ``project.record_edit`` (field ``pages.<i>``), so who changed which page is kept.
Perspectives per document are stored with the fingerprint of what they were read from (task and
page text), so a document whose text changed is read again and the others are not. Personas and
groups are the engine's artefacts (:func:`core.majeval.save_personas`, ``edit_persona``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from core.documents import DEFAULT_MAX_PAGES, Document, load_document
from core.llm import LLMFactory, gateway_for
from core.majeval.aggregation import combine_groups
from core.majeval.model import (
    DEFAULT_DIMENSION,
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
    personas_fingerprint,
)
from core.majeval.persona_construction import persona_id
from core.majeval.perspective_extraction import extract_perspectives
from core.majeval.pipeline import (
    DOCUMENT_ARTEFACT,
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
    load_groups,
    load_personas,
    open_evaluation_run,
    save_groups,
    save_personas,
    simple_roles_text,
    unit_key,
)
from core.runs import CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "EXAMPLE_TASKS",
    "ITEM_ROLES",
    "STATE_KIND",
    "ItemsRead",
    "ItemsSetup",
    "LLMFactory",
    "OpenedItems",
    "PersonasMade",
    "WizardState",
    "add_document",
    "add_persona",
    "create_personas_stored",
    "current_run",
    "default_llm_factory",
    "delete_persona",
    "edit_page",
    "evidence_span",
    "export_results",
    "extraction_fingerprint",
    "group_descriptions",
    "items_file",
    "items_source",
    "load_documents",
    "load_run",
    "load_state",
    "open_items",
    "read_items",
    "remove_document",
    "run_debates",
    "run_differences",
    "run_progress",
    "sample_folder",
    "save_state",
    "store_items_file",
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

#: Roles of the columns of an items sheet (role -> what the user reads in the wizard).
ITEM_ROLES = {
    "content": "Content to judge",
    "context": "Context (story section, source text)",
    "id": "Item id",
}

#: The model of a run (``core.llm.LLMFactory``); the default caches every call in the project.
default_llm_factory: LLMFactory = gateway_for


def sample_folder() -> Path:
    """The folder of the sample set shipped with EvalDesk."""
    from core.paths import resources_dir

    return resources_dir() / "samples" / "majeval"


def _hash(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ------------------------------------------------------------------------------ the state
class ItemsSetup(BaseModel):
    """The items file (copied into the project), its sheet and the chosen columns."""

    path: str = ""
    file_name: str = ""
    input_id: int | None = None
    sheet: str | None = None
    columns: dict[str, str | None] = Field(default_factory=dict)
    """role (see :data:`ITEM_ROLES`) -> column; None = not used."""
    human: list[str] = Field(default_factory=list)
    """Columns with human ratings (the human dimension is the column's name)."""


class WizardState(BaseModel):
    """Everything the user chose in the MAJ-Eval wizard (artefact ``majeval.wizard``)."""

    page: str = "task"
    task: str = ""
    max_pages: int = DEFAULT_MAX_PAGES
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
    failures: list[StageFailure] = Field(default_factory=list)
    """What failed in the last persona creation."""
    items: ItemsSetup = Field(default_factory=ItemsSetup)
    item_list: list[Item] = Field(default_factory=list)
    """The items read with the chosen columns (kept, so reopening needs no file)."""
    dimensions: list[Dimension] = Field(default_factory=lambda: [DEFAULT_DIMENSION])
    scale: Scale = Field(default_factory=Scale)
    settings: DebateSettings = Field(default_factory=DebateSettings)
    run_id: int | None = None
    """The debate run last started (its finished debates are in the project)."""


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


# ------------------------------------------------------------------------------ documents
def add_document(project: Project, state: WizardState, path: str | Path, *,
                 progress: Progress | None = None, cancel: CancelToken | None = None
                 ) -> Document:
    """Read a PDF/.txt/.md file (blocking: run it in an executor), keep a copy of the file and
    the extracted pages in the project, and list it in ``state`` (saved). A document of the same
    name is replaced. Raises :class:`core.documents.DocumentError` with a plain message."""
    path = Path(path)
    doc = load_document(path, max_pages=state.max_pages, progress=progress, cancel=cancel)
    with project.transaction():
        project.add_input(DOCUMENT_INPUT_KIND, path.name, path.read_bytes())
        project.put_artefact(DOCUMENT_ARTEFACT, doc.name, doc.to_dict(), origin="imported")
        if doc.name not in state.documents:
            state.documents.append(doc.name)
        state.extracted.pop(doc.name, None)
        save_state(project, state)
    return doc


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


def extraction_fingerprint(task: str, doc: Document) -> str:
    """What stage 1 reads from a document: the task and the pages' text."""
    return _hash([task.strip(), doc.name, [(p.number, p.text) for p in doc.pages]])


def evidence_span(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` is in a page's ``text`` (character start, end) for highlighting: the
    sentence, or two neighbouring sentences, sharing the most of the quote's words (at least
    half of them); None when no sentence does."""
    words = re.findall(r"\w+", quote.casefold())
    if not words or not text:
        return None
    wanted = set(words)
    sentences = [(m.start(), m.end()) for m in re.finditer(r"[^.!?\n]+[.!?]*", text)]
    best: tuple[float, int, int] | None = None
    for i, (start, end) in enumerate(sentences):
        for j in (i, i + 1):
            if j >= len(sentences):
                continue
            stop = sentences[j][1]
            found = set(re.findall(r"\w+", text[start:stop].casefold()))
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


def _stored_stakeholders(project: Project, name: str) -> list[Stakeholder]:
    artefact = project.get_artefact(PERSPECTIVES_ARTEFACT, name)
    if artefact is None:
        return []
    payload = artefact.payload
    rows = payload.get("stakeholders", []) if isinstance(payload, dict) else payload
    return [Stakeholder.model_validate(s) for s in rows]


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
    window = getattr(profile, "context_window", None) or 8192
    answer = getattr(profile, "max_tokens", None) or 1024
    made = PersonasMade(personas=[])
    stakeholders: list[Stakeholder] = []
    failures: list[StageFailure] = []

    async def one(doc: Document) -> None:
        wanted = extraction_fingerprint(state.task, doc)
        if state.extracted.get(doc.name) == wanted:
            made.reused.append(doc.name)
            return
        found = await extract_perspectives(doc, state.task, llm, context_window=window,
                                           answer_tokens=answer, progress=progress,
                                           cancel=cancel)
        failures.extend(found.failures)
        if found.failures:  # read again next time (the finished chunks come from the cache)
            return
        project.put_artefact(PERSPECTIVES_ARTEFACT, doc.name,
                             {"fingerprint": wanted,
                              "stakeholders": [s.model_dump(mode="json")
                                               for s in found.stakeholders]})
        state.extracted[doc.name] = wanted
        save_state(project, state)
        made.read.append(doc.name)

    for doc in docs:  # one after the other, so the progress reads per document
        await one(doc)
    for doc in docs:
        if state.extracted.get(doc.name):
            stakeholders.extend(_stored_stakeholders(project, doc.name))
        else:  # failed chunks: use what the other chunks found (from the cache, no calls)
            found = await extract_perspectives(doc, state.task, llm, context_window=window,
                                               answer_tokens=answer, cancel=cancel)
            stakeholders.extend(found.stakeholders)
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
        state.personas_basis = _basis(state, docs)
        state.personas_task = state.task
        save_state(project, state)
    made.personas = load_personas(project)
    made.failures = failures
    return made


def personas_out_of_date(project: Project, state: WizardState) -> str:
    """Why the personas no longer match the task or the documents they were written from ("" when
    they do, when there are none, or when they were imported rather than made here)."""
    personas = project.list_artefacts(PERSONA_ARTEFACT)
    if not state.personas_basis or not personas or any(a.origin == "imported" for a in personas):
        return ""
    if _basis(state, load_documents(project, state)) == state.personas_basis:
        return ""
    if state.personas_task.strip() != state.task.strip():
        return "The task description changed after these personas were written."
    return "The documents changed (added, removed or corrected) after these personas were written."


def _basis(state: WizardState, docs: Sequence[Document]) -> str:
    return _hash(sorted((d.name, extraction_fingerprint(state.task, d)) for d in docs))


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
    """Imported personas replace all stored ones (the old ones are deleted with who/when).
    The groups become those of the imported personas, with ``descriptions`` (group ->
    description, from the sheet) or the description a group of that name had before."""
    with project.transaction():
        before = {g.name: g.description for g in load_groups(project)}
        for artefact in project.list_artefacts(PERSONA_ARTEFACT):
            project.delete_artefact(artefact, who)
        save_personas(project, personas, origin="imported", overwrite_edits=True)
        given = descriptions or {}
        save_groups(project, [StakeholderGroup(name=g, description=given.get(g) or before.get(g, ""))
                              for g in groups_of(personas)], origin="imported")
    return load_personas(project)


def group_descriptions(project: Project) -> dict[str, str]:
    """group -> description of the stored groups (the simple-role option uses them)."""
    return {g.name: g.description for g in load_groups(project)}


# ---------------------------------------------------------------------------------- items
def guess_item_columns(columns: Sequence[str]) -> tuple[dict[str, str | None], list[str]]:
    """Suggest the columns of an items sheet: (role -> column, human rating columns)."""
    from core.tables import guess_mapping, guess_named_column

    guessed = guess_mapping(list(columns), {
        "content": ["qa pair", "qa", "answer", "summary", "output", "generated", "response",
                    "text", "question"],
        "context": ["story section", "story", "source", "section", "target", "input",
                    "article", "passage"],
    })
    guessed["id"] = guess_named_column(columns, {"id", "itemid", "item", "rowid"},
                                       guessed.values())
    human = [c for c in columns if re.search(r"rating|score|grade|human|expert", str(c),
                                             re.IGNORECASE) and c not in guessed.values()]
    return {r: guessed.get(r) for r in ITEM_ROLES}, human


@dataclass
class ItemsRead:
    """Items read from a sheet: ``errors`` stop the run; ``problems`` are skipped rows or
    cells (each names the row and column)."""

    items: list[Item] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    describe: str = ""


def read_items(path: str | Path, setup: ItemsSetup) -> ItemsRead:
    """Read the items with the chosen columns (every cell as text)."""
    from core.tables import TableError, cell_number, map_columns, read_table

    try:
        read = read_table(Path(path), setup.sheet)
    except TableError as exc:
        return ItemsRead(errors=[exc.message])
    mapping: dict[str, str | None] = {role: setup.columns.get(role) for role in ITEM_ROLES}
    for col in setup.human:
        mapping[f"human:{col}"] = col
    mapped = map_columns(read, mapping, required=["content"])
    result = ItemsRead(errors=[i.message for i in mapped.errors],
                       problems=[i.message for i in mapped.warnings], describe=read.describe())
    if result.errors:
        return result
    frame = mapped.frame
    seen: dict[str, int] = {}
    for row in mapped.rows:
        content = frame.at[row, "content"]
        if not content.strip():
            result.problems.append(f"{mapped.where(row, 'content')}: empty; the row is skipped.")
            continue
        item_id = (frame.at[row, "id"].strip() if "id" in frame else "") or f"row {row}"
        if item_id in seen:
            result.errors.append(f"{mapped.where(row, 'id')}: the id “{item_id}” is also in row "
                                 f"{seen[item_id]}; every item needs its own id.")
            continue
        seen[item_id] = row
        human: dict[str, float] = {}
        for col in setup.human:
            raw = frame.at[row, f"human:{col}"].strip()
            if not raw:
                continue
            value = cell_number(raw)
            if value is not None:
                human[col] = value
            else:
                result.problems.append(
                    f"{mapped.where(row, f'human:{col}')}: “{raw}” is not a number, so this "
                    f"item has no human rating for {col}.")
        result.items.append(Item(id=item_id, content=content,
                                 context=frame.at[row, "context"] if "context" in frame else "",
                                 human=human, row=row))
    if not result.items and not result.errors:
        result.errors.append(f"{read.describe()} has no items to evaluate.")
    return result


@dataclass
class OpenedItems:
    """An items file opened for the wizard: sheets, columns, setup (guesses filled in), items."""

    sheets: list[str]
    columns: list[str]
    setup: ItemsSetup
    read: ItemsRead


def open_items(path: str | Path, setup: ItemsSetup) -> OpenedItems:
    """List the sheets, read the chosen one, guess the columns not chosen yet, read the items.
    A plain function (run it in an executor); problems come back in ``read.errors``."""
    from core.tables import TableError, list_sheets, read_table

    try:
        sheets = list_sheets(Path(path))
        sheet = setup.sheet if setup.sheet in sheets else sheets[0]
        table = read_table(Path(path), sheet)
    except TableError as exc:
        return OpenedItems([], [], setup, ItemsRead(errors=[exc.message]))
    columns = [str(c) for c in table.frame.columns]
    roles, human = guess_item_columns(columns)
    chosen = {r: (c if c in columns else None) for r, c in setup.columns.items()}
    if not any(chosen.values()):
        chosen = roles
    people = [c for c in setup.human if c in columns] if setup.columns else human
    setup = setup.model_copy(update={"sheet": sheet, "columns": chosen, "human": people})
    return OpenedItems(sheets, columns, setup, read_items(path, setup))


def store_items_file(project: Project, setup: ItemsSetup, path: str | Path) -> ItemsSetup:
    """Copy the items file into the project (so a moved file can still be read)."""
    path = Path(path)
    input_id = project.add_input(ITEMS_INPUT_KIND, path.name, path.read_bytes())
    return setup.model_copy(update={"path": str(path), "file_name": path.name,
                                    "input_id": input_id, "sheet": None, "columns": {},
                                    "human": []})


def items_file(project: Project, setup: ItemsSetup) -> Path | None:
    """The items file: where it was chosen, or the project's copy when it moved or changed."""
    return project.input_file(setup.input_id, setup.path, setup.file_name or "items.xlsx",
                              temp_prefix="evaldesk-items-")


# ----------------------------------------------------------------------------- the debates
def _check_ready(project: Project, state: WizardState) -> list[Persona]:
    personas = load_personas(project)
    if not personas:
        raise ValueError("There are no personas yet: create them (page 3) or import them "
                         "(page 4) first.")
    if not state.item_list:
        raise ValueError("There are no items: choose the items file and its columns (page 5).")
    return personas


async def run_debates(
    project: Project,
    state: WizardState,
    llm_for_run: Callable[[int], Any],
    *,
    model: str = "",
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> EvaluationRun:
    """Stage 3 for every item and group with the stored personas (the engine's
    :func:`core.majeval.evaluate`, committed per debate; a resumed run repeats no finished
    debate). ``llm_for_run(run_id)`` makes the model that logs its calls under the run."""
    personas = _check_ready(project, state)
    run_id = open_evaluation_run(project, state.task, state.dimensions, state.scale,
                                 state.settings, model)
    state.run_id = run_id
    save_state(project, state)
    run = await evaluate(personas, state.item_list, state.task, llm_for_run(run_id),
                         dimensions=state.dimensions, scale=state.scale,
                         settings=state.settings, model=model, project=project,
                         run_id=run_id, group_descriptions=group_descriptions(project),
                         progress=progress, cancel=cancel)
    run.items_source = items_source(state)
    return run


def items_source(state: WizardState) -> str:
    """The items file and sheet, as the results name them."""
    setup = state.items
    name = setup.file_name or Path(setup.path).name
    if not name:
        return ""
    return f"{name}, sheet {setup.sheet}" if setup.sheet else name


def current_run(project: Project, state: WizardState, model: str | None = None) -> Any:
    """The debate run of the current choices (task, dimensions, scale, debate options and, when
    given, ``model``): the one :func:`run_debates` would resume; None when there is none. With
    ``model`` None, the run last started counts when its other choices are the current ones."""
    if model is not None:
        return project.find_run(METHOD, STEP_DEBATE, _run_settings(
            state.task, state.dimensions, state.scale, state.settings, model))
    if state.run_id is None:
        return None
    run = project.get_run(state.run_id)
    if run is None or run.method != METHOD or run.step != STEP_DEBATE:
        return None
    wanted = _run_settings(state.task, state.dimensions, state.scale, state.settings,
                           str((run.settings or {}).get("model", "")))
    return run if _hash(run.settings) == _hash(wanted) else None


def _unit_keys(project: Project, state: WizardState, by_group: dict[str, list[Persona]]
               ) -> dict[tuple[str, str], str]:
    """(item id, group) -> the project key of that debate with the current choices."""
    about = group_descriptions(project)
    roles = {g: simple_roles_text(members, state.settings, about)
             for g, members in by_group.items()}
    return {(item.id, g): unit_key(item, g, members, roles[g])
            for item in state.item_list for g, members in by_group.items()}


def run_progress(project: Project, state: WizardState, model: str | None = None
                 ) -> tuple[int, int]:
    """(debates finished, debates in all) with the current personas, items and choices
    (``model``: see :func:`current_run`); a run made with other choices counts for nothing."""
    by_group = groups_of(load_personas(project))
    total = len(state.item_list) * len(by_group)
    run = current_run(project, state, model)
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


def load_run(project: Project, state: WizardState, model: str | None = None
             ) -> EvaluationRun | None:
    """The results of the current choices from the project, without asking any model; None
    when there is none, a debate is missing, or the personas, items or options (and, when
    given, the ``model``) changed since."""
    if not state.item_list:
        return None
    run = current_run(project, state, model)
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
                         reused=len(results) * len(by_group), item_inputs=list(state.item_list),
                         group_descriptions={g: about.get(g, "") for g in by_group},
                         finished_at=_local_time(run.finished_at or run.started_at),
                         items_source=items_source(state))


def run_differences(project: Project, state: WizardState, run: EvaluationRun,
                    model: str | None = None) -> list[str]:
    """What differs between the choices that produced ``run`` and the current ones, in plain
    words ("the simple-roles option", "the model", ...); empty when the run is current."""
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
    if model is not None and run.model != model:
        out.append(f"the model ({run.model or 'not recorded'} then, {model} now)")
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


def export_results(project: Project, run: EvaluationRun, path: str | Path,
                   progress: Progress | None = None, cancel: CancelToken | None = None) -> Path:
    """Write the results workbook (the engine's :func:`core.majeval.write_results`) with the
    agreement statistics and the model usage. Blocking: run it in an executor."""
    from core.majeval.agreement import human_agreement, within_group_alpha
    from core.majeval.report import write_results

    progress = progress or Progress()
    progress.start("Computing agreement", total=2)
    alphas = within_group_alpha(run)
    humans = human_agreement(run, n_boot=200)
    progress.advance(1, "Writing the workbook")
    readme: list[tuple[str, str]] = []
    if run.run_id is not None:
        usage = project.llm_usage(run.run_id)
        readme.append(("Model calls", (f"{usage.calls} calls stored, {usage.prompt_tokens:,} "
                                      f"tokens in, {usage.completion_tokens:,} out")))
    edits = [e for e in project.list_edits(kind=PERSONA_ARTEFACT)]
    if edits:
        who = sorted({e.who for e in edits})
        readme.append(("Persona edits", f"{len(edits)} changes by " + ", ".join(who)))
    page_edits = project.list_edits(kind=DOCUMENT_ARTEFACT)
    if page_edits:
        readme.append(("Document corrections", "; ".join(
            f"{e.key} ({e.field.replace('pages.', 'page index ')}) by {e.who}"
            for e in page_edits[:20])))
    target = Path(path)
    write_results(target, run, alphas=alphas, humans=humans, readme=readme)
    progress.advance(1, f"Saved {target.name}")
    return target


def unit_statuses(project: Project, state: WizardState, model: str | None = None
                  ) -> list[dict[str, str]]:
    """One row per (item, group) debate with the current choices (``model``: see
    :func:`current_run`): "finished", "failed" (with the reason) or "waiting", for the run
    page's progress table."""
    by_group = groups_of(load_personas(project))
    run = current_run(project, state, model)
    stored = {}
    if run is not None:
        stored = {r.key: r for r in project.get_results(run.id, RESULT_KIND)}
    keys = _unit_keys(project, state, by_group)
    rows = []
    for item in state.item_list:
        for group in by_group:
            found = stored.get(keys[(item.id, group)])
            if found is None:
                status, note = "waiting", ""
            elif found.status == "ok":
                turns = sum(1 for t in (found.payload or {}).get("turns", [])
                            if t.get("kind") == "debate")
                status, note = "finished", f"{turns} debate turns"
            else:
                status, note = "failed", found.error or "failed"
            rows.append({"item": item.id, "group": group, "status": status, "note": note})
    return rows
