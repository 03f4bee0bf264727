"""De-identification in a project: the user's choices, the names the project already holds, the
one table of placeholders, and whether a model's texts are de-identified.

    choices = load_choices(project)          # the switch, keep-the-year, the names lists,
                                             # words added and false hits (with who and when)
    set_switch(project, True, who="Ana")     # every change kept with who and when
    names = known_names(project)             # students / people, and where each list came from
    applies(project, profile)                # de-identify this profile's texts in this project?
    deid = deidentifier_for(project)         # the project's de-identifier (one table, shared)
    texts = project_texts(project)           # a sample for the review page

What is kept (artefacts of kind ``privacy.deidentify``, no change to the file's format; a
project made before de-identification has none and opens as before): ``choices`` (a versioned
payload, every change logged as a person's edit with who and when) and ``mapping`` (the table
of placeholders, :class:`~core.deidentify.mapping.PlaceholderMap`'s versioned JSON: it holds
the real values, so it stays in the project, on this computer, and is never sent).

The switch's default, when nobody set it: on, unless the project already holds model calls
logged before EvalDesk de-identified texts (a project from an older version: its finished steps
keep their answers; the notice and the Privacy window say the switch is off and how to turn it
on). It applies to a model that sends texts off this computer
(:func:`core.privacy.destination`), or to any model when ``local_too`` is set (a server on this
computer that passes texts on, such as a local proxy to a service).

Names the project already holds are read from what it keeps, without importing the methods:
the AQER answers' worker column, MAJ-Eval persona names (those that read as a person's name),
InteractEval think-aloud notes written by people, and the raters of "Check the judge". A method
can add a source of its own with :func:`register_names`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from core.deidentify.engine import Deidentifier
from core.deidentify.kinds import KINDS
from core.deidentify.mapping import PlaceholderMap
from core.deidentify.names import names_from_text, person_name
from core.project.payloads import PayloadType, PayloadUnreadable, get_payload

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.settings import ModelProfile

__all__ = [
    "CHOICES",
    "KIND",
    "AddedValue",
    "DeidentifyChoices",
    "DeidentifyUnavailable",
    "KeptValue",
    "KnownNames",
    "ProjectText",
    "add_value",
    "applies",
    "deidentifier_for",
    "forget",
    "keep_value",
    "known_names",
    "load_choices",
    "load_mapping",
    "names_of_file",
    "preview_deidentifier",
    "project_texts",
    "register_names",
    "remove_value",
    "save_choices",
    "save_mapping",
    "set_names",
    "set_switch",
    "switch_on",
    "unkeep_value",
]

log = logging.getLogger(__name__)

#: The artefact kind of the choices and the table of placeholders.
KIND = "privacy.deidentify"
CHOICES_KEY = "choices"
MAPPING_KEY = "mapping"
#: The field of a logged call's request that says whether (and how) it was de-identified.
CALL_FIELD = "deidentification"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class AddedValue(BaseModel):
    """A value the user asked to replace (a school, a nickname), with who and when."""

    value: str
    kind: str = "OTHER"
    who: str = ""
    at: str = ""


class KeptValue(BaseModel):
    """A value the user marked as a false hit (never replaced), with who and when."""

    value: str
    who: str = ""
    at: str = ""


class DeidentifyChoices(BaseModel):
    """What the user chose about de-identification in this project."""

    enabled: bool | None = None
    """The switch; None = not set (the default applies: see the module)."""
    local_too: bool = False
    """Also for a model on this computer (a local server that passes texts on)."""
    keep_year: bool = False
    """Dates keep their year ("[DATE 1], 2021")."""
    students: list[str] = Field(default_factory=list)
    """Names of students (or patients) the texts may mention: ``[STUDENT n]``."""
    people: list[str] = Field(default_factory=list)
    """Names of other people (parents, staff, doctors): ``[PERSON n]``."""
    added: list[AddedValue] = Field(default_factory=list)
    kept: list[KeptValue] = Field(default_factory=list)


CHOICES: PayloadType[DeidentifyChoices] = PayloadType(
    KIND, DeidentifyChoices, version=1, label="the de-identification choices")


class DeidentifyUnavailable(ValueError):
    """The project's table of placeholders cannot be used (damaged, or from a newer EvalDesk):
    nothing may be sent, since the placeholders could not be put back."""


# ------------------------------------------------------------------------------- the choices
def load_choices(project: Project) -> DeidentifyChoices:
    """The stored choices (the defaults when there are none). Raises
    :class:`DeidentifyUnavailable` when they cannot be read (then nothing is sent)."""
    try:
        found = get_payload(project, CHOICES, CHOICES_KEY)
    except PayloadUnreadable as exc:
        raise DeidentifyUnavailable(f"{exc} Nothing was sent.") from exc
    return found if found is not None else DeidentifyChoices()


def save_choices(project: Project, choices: DeidentifyChoices, who: str) -> bool:
    """Keep ``choices`` as ``who``'s edit (who and when in the project's edit history). False
    when nothing changed."""
    who = (who or "").strip() or "unnamed person"
    new = CHOICES.dump(choices)
    current = project.get_artefact(KIND, CHOICES_KEY)
    if current is None:
        current = project.put_artefact(KIND, CHOICES_KEY, {}, origin="human")
    elif current.payload == new:
        return False
    project.record_edit(current, "", current.payload, new, who)
    forget(project)
    return True


def _change(project: Project, who: str, change: Callable[[DeidentifyChoices], None]) -> bool:
    choices = load_choices(project)
    change(choices)
    return save_choices(project, choices, who)


def set_switch(project: Project, on: bool, who: str, *, local_too: bool | None = None,
               keep_year: bool | None = None) -> bool:
    """Turn de-identification on or off for this project (and, when given, the two options)."""
    def change(c: DeidentifyChoices) -> None:
        c.enabled = bool(on)
        if local_too is not None:
            c.local_too = bool(local_too)
        if keep_year is not None:
            c.keep_year = bool(keep_year)
    return _change(project, who, change)


def set_names(project: Project, who: str, *, students: Iterable[str] | None = None,
              people: Iterable[str] | None = None) -> bool:
    """Replace the user's names list(s) (None = leave that list as it is)."""
    def clean(names: Iterable[str]) -> list[str]:
        seen: set[str] = set()
        out = []
        for name in names:
            name = " ".join(str(name).split())
            if name and name.casefold() not in seen:
                seen.add(name.casefold())
                out.append(name)
        return out

    def change(c: DeidentifyChoices) -> None:
        if students is not None:
            c.students = clean(students)
        if people is not None:
            c.people = clean(people)
    return _change(project, who, change)


def names_of_file(text: str) -> tuple[list[str], list[str]]:
    """The students and the other people of a names file: one name a line (or separated by
    semicolons; cells pasted from a spreadsheet joined), students unless a line "People:" (or
    "Other people:", "Staff:", "Parents:") starts a part of other people; "Students:" (or
    "Pupils:", "Patients:") goes back to students."""
    students: list[str] = []
    people: list[str] = []
    target = students
    part: list[str] = []

    def flush() -> None:
        target.extend(n for n in names_from_text("\n".join(part)) if n not in target)
        part.clear()

    for line in text.splitlines():
        head = " ".join(line.replace("\t", " ").split()).rstrip(":").casefold()
        if line.strip().endswith(":") or head in _PART_HEADINGS:
            if head in _PEOPLE_HEADINGS:
                flush()
                target = people
                continue
            if head in _STUDENT_HEADINGS:
                flush()
                target = students
                continue
        part.append(line)
    flush()
    return students, people


_PEOPLE_HEADINGS = frozenset({"people", "other people", "staff", "parents", "teachers",
                              "doctors", "clinicians", "carers", "family", "others"})
_STUDENT_HEADINGS = frozenset({"students", "pupils", "patients", "learners", "children"})
_PART_HEADINGS = _PEOPLE_HEADINGS | _STUDENT_HEADINGS


def add_value(project: Project, value: str, who: str, kind: str = "OTHER") -> bool:
    """Replace ``value`` wherever it stands (a school, a nickname, a ward); also takes it off the
    false hits."""
    value = " ".join(str(value).split())
    if not value:
        raise ValueError("Type the word or words to replace.")
    if kind not in KINDS:
        raise ValueError(f"unknown kind of identifier: {kind!r}")

    def change(c: DeidentifyChoices) -> None:
        c.kept = [k for k in c.kept if k.value.casefold() != value.casefold()]
        if not any(a.value.casefold() == value.casefold() for a in c.added):
            c.added.append(AddedValue(value=value, kind=kind, who=_who(who), at=_now()))
    return _change(project, who, change)


def remove_value(project: Project, value: str, who: str) -> bool:
    def change(c: DeidentifyChoices) -> None:
        c.added = [a for a in c.added if a.value.casefold() != value.casefold()]
    return _change(project, who, change)


def keep_value(project: Project, value: str, who: str) -> bool:
    """Mark ``value`` as a false hit: never replaced in this project (unless added again)."""
    value = " ".join(str(value).split())
    if not value:
        raise ValueError("Choose the word to keep.")

    def change(c: DeidentifyChoices) -> None:
        c.added = [a for a in c.added if a.value.casefold() != value.casefold()]
        if not any(k.value.casefold() == value.casefold() for k in c.kept):
            c.kept.append(KeptValue(value=value, who=_who(who), at=_now()))
    return _change(project, who, change)


def unkeep_value(project: Project, value: str, who: str) -> bool:
    def change(c: DeidentifyChoices) -> None:
        c.kept = [k for k in c.kept if k.value.casefold() != value.casefold()]
    return _change(project, who, change)


def _who(who: str) -> str:
    return (who or "").strip() or "unnamed person"


# ---------------------------------------------------------------------------- the switch
def switch_on(project: Project, choices: DeidentifyChoices | None = None) -> bool:
    """The switch as it stands: the user's choice, else the default (on, unless the project
    holds calls logged before EvalDesk de-identified texts)."""
    choices = choices if choices is not None else load_choices(project)
    if choices.enabled is not None:
        return choices.enabled
    return not _older_calls(project)


def _older_calls(project: Project) -> bool:
    state = _state(project)
    if state.older_calls is None:
        try:
            state.older_calls = any(note is None for _run, note in
                                    project.llm_call_notes(CALL_FIELD))
        except Exception:
            log.warning("Could not read the project's call log", exc_info=True)
            return False
    return state.older_calls


Reason = Literal["on", "off", "this_computer", "no_project"]


def applies(project: Project | None, profile: ModelProfile) -> bool:
    """Whether the texts sent with ``profile`` in ``project`` are de-identified."""
    return why(project, profile) == "on"


def why(project: Project | None, profile: ModelProfile) -> Reason:
    """"on"; or why not: "off" (the project's switch), "this_computer" (the model runs here),
    "no_project"."""
    if project is None or getattr(project, "closed", False):
        return "no_project"
    from core.privacy import destination

    leaves = destination(profile).leaves_computer
    try:
        choices = load_choices(project)
    except DeidentifyUnavailable:
        if not leaves:
            return "this_computer"
        raise
    if not switch_on(project, choices):
        return "off"
    if not leaves and not choices.local_too:
        return "this_computer"
    return "on"


# ---------------------------------------------------------------------------- known names
@dataclass
class KnownNames:
    """The names to hide: students (``[STUDENT n]``) and other people (``[PERSON n]``), each
    list in a stable order, and where they came from (source -> names) for the review page."""

    students: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)

    def add(self, source: str, names: Iterable[str], kind: str = "PERSON") -> None:
        target = self.students if kind == "STUDENT" else self.people
        listed = self.sources.setdefault(source, [])
        for name in names:
            name = " ".join(str(name).split())
            if not name:
                continue
            if name not in listed:
                listed.append(name)
            if name not in self.students and name not in self.people:
                target.append(name)
        if not listed:
            del self.sources[source]


#: Extra sources of names: source label -> function(project) -> [(name, "STUDENT"|"PERSON")].
_SOURCES: dict[str, Callable[[Project], Iterable[tuple[str, str]]]] = {}


def register_names(source: str,
                   names: Callable[[Project], Iterable[tuple[str, str]]]) -> None:
    """Let a method add the names it holds (``names(project)`` gives (name, kind) pairs, kind
    "STUDENT" or "PERSON"), under ``source`` (plain words: "raters of Check the judge")."""
    _SOURCES[source] = names


SOURCE_STUDENTS = "your list of students"
SOURCE_PEOPLE = "your list of other people"
SOURCE_WORKERS = "the worker column of the answers"
SOURCE_PERSONAS = "persona names"
SOURCE_ASSESSORS = "people who wrote think-aloud notes"
SOURCE_RATERS = "raters in Check the judge"


def known_names(project: Project, choices: DeidentifyChoices | None = None) -> KnownNames:
    """Every name the project holds that must not leave the computer: the user's lists first,
    then the worker column, persona names, think-aloud authors and raters (read from the
    project's artefacts and input files, without the methods' code)."""
    choices = choices if choices is not None else load_choices(project)
    names = KnownNames()
    names.add(SOURCE_STUDENTS, choices.students, "STUDENT")
    names.add(SOURCE_PEOPLE, choices.people, "PERSON")
    workers: list[str] = []
    personas: list[str] = []
    authors: list[str] = []
    raters: list[str] = []
    for artefact in project.list_artefacts():
        kind, payload = artefact.kind, artefact.payload
        if kind.startswith("privacy.") or kind.endswith(".unreadable"):
            continue
        if kind == "aqer_setup" and isinstance(payload, dict):
            workers.extend(_worker_names(project, payload))
        if kind == "majeval.persona" and isinstance(payload, dict):
            found = person_name(str(payload.get("name") or ""))
            if found:
                personas.append(found)
        if kind.endswith(".rating") and isinstance(payload, dict):
            rater = str(payload.get("rater") or "").strip()
            if rater:
                raters.append(rater)
        authors.extend(_note_authors(payload))
    names.add(SOURCE_WORKERS, workers, "STUDENT")
    names.add(SOURCE_PERSONAS, personas, "PERSON")
    names.add(SOURCE_ASSESSORS, authors, "PERSON")
    names.add(SOURCE_RATERS, raters, "PERSON")
    for source, function in list(_SOURCES.items()):
        try:
            pairs = list(function(project))
        except Exception:
            log.warning("Names from %s could not be read", source, exc_info=True)
            continue
        names.add(source, [n for n, k in pairs if k == "STUDENT"], "STUDENT")
        names.add(source, [n for n, k in pairs if k != "STUDENT"], "PERSON")
    return names


def _note_authors(payload: Any) -> Iterator[str]:
    """People named as the source of a note ({"source": "Anna", "source_kind": "person"})."""
    if isinstance(payload, dict):
        if payload.get("source_kind") == "person" and isinstance(payload.get("source"), str):
            yield payload["source"]
        for value in payload.values():
            yield from _note_authors(value)
    elif isinstance(payload, list):
        for value in payload:
            yield from _note_authors(value)


def _worker_names(project: Project, setup: dict[str, Any]) -> list[str]:
    """The worker names of the AQER answers file kept in the project (its worker column, or in
    the wide layout with a column per worker, those columns' names)."""
    input_id = setup.get("input_id")
    if not isinstance(input_id, int):
        return []
    try:
        table = _input_table(project, input_id, setup.get("sheet"), setup.get("header_row"))
    except Exception:
        log.info("The answers file could not be read for its worker names", exc_info=True)
        return []
    if table is None:
        return []
    worker = setup.get("worker_col")
    wide_by_question = setup.get("format") == "wide" and setup.get("wide_rows") != "worker"
    if wide_by_question:
        skip = {setup.get("question_col"), setup.get("grade_col"),
                *(setup.get("ignore_cols") or []), *(setup.get("llm_cols") or [])}
        return [str(c) for c in table.columns if c not in skip]
    if worker and worker in table.columns:
        return list(dict.fromkeys(str(v).strip() for v in table[worker] if str(v).strip()))
    return []


def _input_table(project: Project, input_id: int, sheet: Any, header_row: Any) -> Any:
    from core.project.inputs import InputRef, open_input
    from core.tables import read_table

    stored = project.get_input(input_id)
    if stored is None or not isinstance(stored.payload, bytes):
        return None
    opened = open_input(project, stored.kind, InputRef(file_name=stored.name,
                                                       content_hash=stored.content_hash,
                                                       input_id=input_id))
    return read_table(opened.path, sheet if isinstance(sheet, str) else None,
                      header_row=header_row if isinstance(header_row, int) else None).frame


# ------------------------------------------------------------------------- the project's texts
@dataclass(frozen=True)
class ProjectText:
    """A text the project holds: where it is (plain words) and the text."""

    where: str
    text: str


#: Plain words for the artefacts whose texts are sent to models.
_PLACES = {
    "majeval.wizard": "MAJ-Eval items and task",
    "majeval.document": "MAJ-Eval document",
    "majeval.persona": "MAJ-Eval persona",
    "majeval.perspectives": "MAJ-Eval stakeholders",
    "interacteval.wizard": "InteractEval samples and notes",
    "interacteval.stage": "InteractEval checklist step",
    "interacteval.checklist": "InteractEval checklist",
}
#: Fields that never hold a text a model reads.
_NOT_TEXT = frozenset({"path", "file_name", "content_hash", "samples_file", "profile", "builder",
                       "scorer", "page", "current", "_payload_version", "input_id", "model",
                       "who", "at", "source_kind", "origin", "sheet"})


def project_texts(project: Project, *, inputs: bool = False, min_words: int = 3
                  ) -> list[ProjectText]:
    """The texts the project keeps that a step may send to a model: every text of its
    artefacts (items, documents, samples, notes, personas...) of ``min_words`` words or more;
    with ``inputs``, also the text cells of the tables it keeps (answers, items, texts to
    score), read from its copies. In the order they were stored, each text once."""
    seen: set[str] = set()
    out: list[ProjectText] = []

    def add(where: str, text: str) -> None:
        if len(text.split()) >= min_words and text not in seen:
            seen.add(text)
            out.append(ProjectText(where, text))

    for artefact in project.list_artefacts():
        if artefact.kind.startswith("privacy.") or artefact.kind.endswith(".unreadable"):
            continue
        place = _PLACES.get(artefact.kind, "Kept in the project")
        for text in _strings(artefact.payload):
            add(place, text)
    if inputs:
        state = _state(project)
        for stored in project.list_inputs():
            if not isinstance(stored.payload, bytes) or not stored.name.lower().endswith(
                    (".xlsx", ".xls", ".csv", ".tsv", ".txt", ".md")):
                continue
            with state.lock:
                found = state.input_texts.get(stored.id)
            if found is None:  # an input never changes: read once per open project
                found = list(_input_texts(project, stored))
                with state.lock:
                    state.input_texts[stored.id] = found
            for where, text in found:
                add(where, text)
    return out


def _strings(payload: Any, name: str = "") -> Iterator[str]:
    if isinstance(payload, str):
        if name not in _NOT_TEXT:
            yield payload
    elif isinstance(payload, dict):
        for key, value in payload.items():
            yield from _strings(value, str(key))
    elif isinstance(payload, list):
        for value in payload:
            yield from _strings(value, name)


def _input_texts(project: Project, stored: Any) -> Iterator[tuple[str, str]]:
    name = stored.name
    if name.lower().endswith((".txt", ".md")):
        text = bytes(stored.payload).decode("utf-8", errors="replace")
        for n, para in enumerate(p for p in text.split("\n\n") if p.strip()):
            yield f"{name}, part {n + 1}", para.strip()
        return
    try:
        table = _input_table(project, stored.id, None, None)
    except Exception:
        log.info("%s could not be read for the review sample", name, exc_info=True)
        return
    if table is None:
        return
    for column in table.columns:
        for row, value in enumerate(table[column], start=2):
            text = str(value) if value is not None else ""
            if text and text.lower() != "nan":
                yield f"{name}, row {row}, column “{column}”", text


# ------------------------------------------------------------------- the table, the de-identifier
@dataclass
class _State:
    mapping: PlaceholderMap | None = None
    saved: int = 0
    fingerprint: str = ""
    deid: Deidentifier | None = None
    older_calls: bool | None = None
    input_texts: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)


_STATES: weakref.WeakKeyDictionary[Any, _State] = weakref.WeakKeyDictionary()
_STATES_LOCK = threading.Lock()


def _state(project: Project) -> _State:
    with _STATES_LOCK:
        state = _STATES.get(project)
        if state is None:
            state = _STATES[project] = _State()
        return state


def forget(project: Project) -> None:
    """Drop the de-identifier made for ``project`` (its choices changed): the next call makes it
    anew over the same table of placeholders."""
    state = _state(project)
    with state.lock:
        state.deid = None
        state.fingerprint = ""


def load_mapping(project: Project) -> PlaceholderMap:
    """The project's one table of placeholders (read once, then shared by every model call of
    this open project). Raises :class:`DeidentifyUnavailable` when it cannot be read."""
    state = _state(project)
    with state.lock:
        if state.mapping is None:
            artefact = project.get_artefact(KIND, MAPPING_KEY)
            if artefact is None:
                state.mapping, state.saved = PlaceholderMap(), 0
            else:
                try:
                    state.mapping = PlaceholderMap.from_json(artefact.payload)
                except ValueError as exc:
                    raise DeidentifyUnavailable(
                        f"The project's table of placeholders cannot be used: {exc} Texts are "
                        "not sent while it cannot be read.") from exc
                state.saved = len(state.mapping)
        return state.mapping


def save_mapping(project: Project) -> None:
    """Keep the table in the project when it has new entries (before a text that uses them is
    sent, so that every logged reply can be put back). A project opened read-only keeps it in
    memory for this session."""
    state = _state(project)
    with state.lock:
        mapping = state.mapping
        if mapping is None or len(mapping) == state.saved:
            return
        if getattr(project, "read_only", False):
            return
        project.put_artefact(KIND, MAPPING_KEY, mapping.to_json(), origin="generated")
        state.saved = len(mapping)


def deidentifier_for(project: Project) -> Deidentifier:
    """The project's de-identifier: its table of placeholders, the names it holds, the user's
    words to replace and false hits, and the names titles and greetings point to in every text
    it keeps, its tables' cells too (learnt first, so that the order of the calls changes
    nothing). Made again when
    any of these changed. Raises :class:`DeidentifyUnavailable`."""
    state = _state(project)
    with state.lock:
        mapping = load_mapping(project)
        choices = load_choices(project)
        names = known_names(project, choices)
        texts = [t.text for t in project_texts(project, inputs=True, min_words=1)]
        fingerprint = _fingerprint(choices, names, texts)
        if state.deid is not None and fingerprint == state.fingerprint:
            return state.deid
        deid = _make(mapping, choices, names)
        deid.learn(texts)
        state.deid, state.fingerprint = deid, fingerprint
        return deid


def preview_deidentifier(project: Project, choices: DeidentifyChoices | None = None
                         ) -> Deidentifier:
    """A de-identifier for the review page: like :func:`deidentifier_for`, over a copy of the
    table (what a preview finds gets numbers, but nothing is kept)."""
    mapping = PlaceholderMap.from_json(load_mapping(project).to_json())
    choices = choices if choices is not None else load_choices(project)
    deid = _make(mapping, choices, known_names(project, choices))
    deid.learn(t.text for t in project_texts(project, inputs=True, min_words=1))
    return deid


def _make(mapping: PlaceholderMap, choices: DeidentifyChoices, names: KnownNames
          ) -> Deidentifier:
    return Deidentifier(mapping, students=names.students, people=names.people,
                        extra=[(a.value, a.kind) for a in choices.added],
                        keep=[k.value for k in choices.kept], keep_year=choices.keep_year)


def _fingerprint(choices: DeidentifyChoices, names: KnownNames, texts: list[str]) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps([CHOICES.dump(choices), names.students, names.people],
                             ensure_ascii=False, sort_keys=True).encode("utf-8"))
    for text in texts:
        digest.update(b"\0" + text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()
