"""Every file MAJ-Eval reads, read once, for the wizard and the command line alike.

* documents about the stakeholders (PDF, .txt, .md): :func:`read_document`;
* the items sheet (content to judge, its context, an id, human ratings): :data:`ITEM_SYNONYMS`
  (one list of column names per role), :func:`guess_item_columns`, :func:`read_items`,
  :func:`open_items`;
* a personas file (sheet ``Personas``): :func:`read_personas`;
* a dimensions sheet (name, definition, optional scale): :func:`read_dimensions`;
* the task description in a text file: :func:`task_text`.

Readers are plain functions (blocking: run them in an executor) that never touch the project;
problems name the file, sheet, row and column and say what to do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from core.documents import DEFAULT_MAX_PAGES, Document, load_document
from core.majeval.model import (
    DEFAULT_DIMENSION,
    REQUIRED_PERSONA_FIELDS,
    Dimension,
    Item,
    Persona,
    Scale,
    persona_id,
)
from core.project.inputs import SheetChoice
from core.runs import CancelToken, Progress
from core.tables import (
    HasIssues,
    MappedRow,
    RowsRead,
    TableError,
    TableIssue,
    guess_mapping,
    guess_named_column,
    keep_chosen,
    list_sheets,
    map_columns,
    open_sheet,
    read_mapped_rows,
    read_table,
)

__all__ = [
    "HUMAN_PATTERN",
    "ID_NAMES",
    "ITEM_ROLES",
    "ITEM_SYNONYMS",
    "PERSONAS_SHEET",
    "PERSONA_COLUMNS",
    "PERSONA_COLUMN_TITLES",
    "DimensionsRead",
    "ItemsRead",
    "ItemsSetup",
    "OpenedItems",
    "PersonasRead",
    "guess_item_columns",
    "open_items",
    "read_dimensions",
    "read_document",
    "read_items",
    "read_personas",
    "task_text",
]

# ----------------------------------------------------------------------------- documents


def read_document(path: str | os.PathLike[str], *, max_pages: int | None = DEFAULT_MAX_PAGES,
                  drop_references: bool = True, progress: Progress | None = None,
                  cancel: CancelToken | None = None) -> Document:
    """A document about the stakeholders, as pages of clean text (the reference list left out
    unless ``drop_references`` is False). Raises :class:`core.documents.DocumentError` with a
    plain message."""
    return load_document(Path(path), max_pages=max_pages, drop_references=drop_references,
                         progress=progress, cancel=cancel)


def task_text(text: str) -> str:
    """The task description as the method uses it, typed in the wizard or read from a file:
    without white space at either end, lines ending in a plain line break."""
    return "\n".join(line.rstrip() for line in str(text).strip().splitlines())


# ------------------------------------------------------------------------------- items
#: Roles of the columns of an items sheet (role -> what the user reads in the wizard).
ITEM_ROLES = {
    "content": "Content to judge",
    "context": "Context (story section, source text)",
    "id": "Item id",
}

#: Column names each role is guessed from, for the wizard and the command line alike (the
#: role's own name counts too; a whole-name match wins over a column that contains the words).
ITEM_SYNONYMS: dict[str, list[str]] = {
    "content": ["qa pair", "qa", "answer", "summary", "output", "generated", "response",
                "bot response", "bot", "reply", "completion", "text"],
    "context": ["story section", "story", "source", "section text", "section", "target",
                "input", "article", "passage", "prompt", "question"],
}
#: Names an id column may have (lower case, without spaces or underscores; whole names only,
#: so "system_id" is not an id).
ID_NAMES = {"id", "itemid", "item", "rowid", "questionid", "qid", "promptid", "textid",
            "summaryid", "pairid"}
#: Columns with these words are guessed to hold human ratings.
HUMAN_PATTERN = re.compile(r"rating|score|grade|human|expert", re.IGNORECASE)


class ItemsSetup(SheetChoice):
    """The items file (copied into the project), its sheet and the chosen columns (roles:
    :data:`ITEM_ROLES`)."""

    human: list[str] = Field(default_factory=list)
    """Columns with human ratings."""
    human_names: dict[str, str] = Field(default_factory=dict)
    """column -> the human dimension's name, when it is not the column's name."""

    def human_name(self, column: str) -> str:
        return self.human_names.get(column) or column


def guess_item_columns(columns: Sequence[str]) -> tuple[dict[str, str | None], list[str]]:
    """Suggest the columns of an items sheet: (role -> column, human rating columns). The id is
    guessed first (whole names only), so "Question ID" is the id, never the content."""
    columns = [str(c) for c in columns]
    item_id = guess_named_column(columns, ID_NAMES)
    rest = [c for c in columns if c != item_id]
    guessed = guess_mapping(rest, ITEM_SYNONYMS)
    guessed["id"] = item_id
    taken = {c for c in guessed.values() if c}
    human = [c for c in columns if HUMAN_PATTERN.search(c) and c not in taken]
    return {r: guessed.get(r) for r in ITEM_ROLES}, human


ItemsRead = RowsRead[Item]
"""Items read from a sheet: ``errors`` stop the run; ``problems`` are skipped rows or cells (each
names the row and column); the one reader result of :mod:`core.tables`."""


def read_items(path: str | os.PathLike[str], setup: ItemsSetup) -> ItemsRead:
    """Read the items with the chosen columns (every cell as text)."""
    mapping: dict[str, str | None] = {role: setup.columns.get(role) for role in ITEM_ROLES}
    numbers: dict[str, str] = {}
    for col in setup.human:
        mapping[f"human:{col}"] = col
        numbers[f"human:{col}"] = f"human rating for {setup.human_name(col)}"

    def make(row: MappedRow) -> Item:
        human = {setup.human_name(role.removeprefix("human:")): value
                 for role, value in row.numbers.items()}
        return Item(id=row.id, content=row.get("content"), context=row.get("context"),
                    human=human, row=row.row)

    read = read_mapped_rows(Path(path), setup.sheet, mapping, make, required="content",
                            header_row=setup.header_row,
                            numbers=numbers, what="items to evaluate")
    return read


@dataclass
class OpenedItems:
    """An items file opened for the wizard: sheets, columns, setup (guesses filled in), items."""

    sheets: list[str]
    columns: list[str]
    setup: ItemsSetup
    read: ItemsRead
    #: the sheets Excel does not show: name -> "hidden" or "very hidden"
    hidden: dict[str, str] = field(default_factory=dict)


def open_items(path: str | os.PathLike[str], setup: ItemsSetup) -> OpenedItems:
    """List the sheets, read the chosen one (the first when none is chosen), guess the columns
    not chosen yet, read the items. Problems come back in ``read.errors``."""
    try:
        opened = open_sheet(path, setup.sheet, header_row=setup.header_row)
    except TableError as exc:
        return OpenedItems([], [], setup, ItemsRead(errors=[exc.message]))
    sheets, sheet, columns = opened.sheets, opened.sheet, opened.columns
    roles, human = guess_item_columns(columns)
    chosen = {**{r: None for r in ITEM_ROLES}, **keep_chosen(setup.columns, columns, roles)}
    people = [c for c in setup.human if c in columns] if setup.columns else human
    setup = setup.model_copy(update={"sheet": sheet, "columns": chosen, "human": people})
    read = read_items(path, setup)
    if opened.hidden_note:
        read.problems.insert(0, opened.hidden_note)
    return OpenedItems(sheets, columns, setup, read, opened.hidden)


# ---------------------------------------------------------------------------- dimensions
DIMENSION_SYNONYMS: dict[str, list[str]] = {
    "dimension": ["name", "criterion", "aspect"], "definition": ["description", "rubric"],
    "min": ["minimum", "lowest"], "max": ["maximum", "highest"]}


@dataclass
class DimensionsRead:
    """The dimensions and their shared scale, or the ``errors`` that stop their use."""

    dimensions: list[Dimension] = field(default_factory=list)
    scale: Scale = field(default_factory=Scale)
    errors: list[str] = field(default_factory=list)


def read_dimensions(path: str | os.PathLike[str] | None) -> DimensionsRead:
    """Dimensions to score (columns dimension and definition; optional min and max for the scale,
    the same on every row); without a file, one "Overall quality" on a 1-5 scale."""
    if not path:
        return DimensionsRead([DEFAULT_DIMENSION], Scale())
    try:
        read = read_table(Path(path))
    except TableError as exc:
        return DimensionsRead(errors=[exc.message])
    guessed = guess_mapping(list(read.frame.columns), DIMENSION_SYNONYMS)
    mapped = map_columns(read, guessed, required=["dimension"])
    if mapped.errors:
        return DimensionsRead(errors=[i.message for i in mapped.errors])
    dims: list[Dimension] = []
    lows: set[int] = set()
    highs: set[int] = set()
    problems: list[str] = []
    for row in mapped.rows:
        name = " ".join(mapped.frame.at[row, "dimension"].split())
        if not name:
            continue
        definition = mapped.frame.at[row, "definition"] if "definition" in mapped.frame else ""
        dims.append(Dimension(name=name, definition=" ".join(definition.split())))
        for role, bucket in (("min", lows), ("max", highs)):
            raw = mapped.frame.at[row, role].strip() if role in mapped.frame else ""
            if raw:
                try:
                    bucket.add(int(float(raw)))
                except ValueError:
                    problems.append(f"{mapped.where(row, role)}: “{raw}” is not a whole number.")
    where = read.describe()
    if not problems and not dims:
        problems.append(f"{where} has no dimensions.")
    if not problems and len({d.name.casefold() for d in dims}) != len(dims):
        problems.append(f"{where}: every dimension needs its own name.")
    if not problems and (len(lows) > 1 or len(highs) > 1):
        problems.append(f"{where}: all dimensions share one scale; give the same min and max "
                        "on every row.")
    if problems:
        return DimensionsRead(errors=problems)
    low, high = (lows or {1}).pop(), (highs or {5}).pop()
    if high <= low:
        return DimensionsRead(errors=[f"{where}: max ({high}) must be larger than min ({low})."])
    labels = Scale().labels if (low, high) == (1, 5) else {}
    return DimensionsRead(dims, Scale(minimum=low, maximum=high, labels=labels))


# ------------------------------------------------------------------------------ personas
PERSONAS_SHEET = "Personas"
PERSONA_COLUMNS = ["group", "name", "demographics", "perspective", "specialty",
                   "psychological_traits", "social_relationships", "evidence", "document", "page",
                   "group_description"]
#: The Personas sheet's column titles: the words the persona editor uses. Importing accepts
#: either these titles or the column keys above (files written before the titles existed).
PERSONA_COLUMN_TITLES = {
    "group": "Group", "name": "Name", "demographics": "Who they are",
    "perspective": "Their perspective", "specialty": "Specialty",
    "psychological_traits": "Character", "social_relationships": "Relationships",
    "evidence": "Evidence", "document": "Document", "page": "Page",
    "group_description": "Group description",
}
#: The one persona rule (core.majeval.model.persona_problem) read as columns.
REQUIRED_PERSONA_COLUMNS = REQUIRED_PERSONA_FIELDS
#: Columns that may be missing without a remark (files written before they existed).
QUIET = ("group_description",)
_EXPORT_QUOTE = re.compile(r"^'(?=[=+\-@\t\r\n])")  # \r reads back as \n (XML)


@dataclass
class PersonasRead(HasIssues):
    """What :func:`read_personas` found: the personas (when there is no error) and every
    problem, each naming file, sheet, row and column."""

    personas: list[Persona] = field(default_factory=list)
    issues: list[TableIssue] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    """group -> its description (the first one given for the group)."""

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(p.group for p in self.personas))


def _clean(text: Any) -> str:
    return " ".join(_EXPORT_QUOTE.sub("", str(text)).split())


def read_personas(path: str | os.PathLike[str]) -> PersonasRead:
    """Read personas from the ``Personas`` sheet (or the only sheet) of a workbook or a CSV
    file. Raises :class:`core.tables.TableError` when the file cannot be read at all."""
    path = Path(path)
    names = list_sheets(path)
    out = PersonasRead()
    sheet = next((n for n in names if n.casefold() == PERSONAS_SHEET.casefold()), None)
    if sheet is None:
        if len(names) == 1:
            sheet = names[0]
        else:
            raise TableError(
                f'"{path.name}" has no sheet called "{PERSONAS_SHEET}". Its sheets are: '
                + ", ".join(f'"{n}"' for n in names) + ". Rename the sheet that holds the "
                "personas to Personas.", path)
    read = read_table(path, sheet)
    folded = {re.sub(r"[\s_]+", "_", str(c).strip().casefold()): c for c in read.frame.columns}
    titles = {re.sub(r"[\s_]+", "_", t.casefold()): key for key, t in PERSONA_COLUMN_TITLES.items()}
    for title, key in titles.items():
        if title in folded and key not in folded:
            folded[key] = folded[title]
    mapping = {c: folded.get(c) for c in PERSONA_COLUMNS}
    missing_required = [c for c in REQUIRED_PERSONA_COLUMNS if mapping[c] is None]
    mapped = map_columns(read, mapping, required=[])
    out.issues.extend(mapped.issues)
    where = read.describe()
    for c in missing_required:
        out.issues.append(TableIssue(
            "error", f'{where} has no column "{c}". Add it (the columns are: '
            + ", ".join(PERSONA_COLUMNS) + ").", read.sheet))
    for c in PERSONA_COLUMNS:
        if mapping[c] is None and c not in REQUIRED_PERSONA_COLUMNS and c not in QUIET:
            out.issues.append(TableIssue(
                "warning", f'{where} has no column "{c}"; it is left empty.', read.sheet))
    if missing_required:
        return out
    frame = mapped.frame
    seen: dict[tuple[str, str], int] = {}
    personas: list[Persona] = []
    for row in mapped.rows:
        values = {c: _clean(frame.at[row, c]) if c in frame else "" for c in PERSONA_COLUMNS}
        bad = False
        for c in REQUIRED_PERSONA_COLUMNS:
            if not values[c]:
                out.issues.append(mapped.issue("error", f"{c} is empty; fill it in or delete "
                                               "the row.", row=row, role=c))
                bad = True
        page: int | None = None
        if values["page"]:
            text = values["page"].removeprefix("p.").removeprefix("page").strip()
            if re.fullmatch(r"\d+", text) and int(text) >= 1:
                page = int(text)
            else:
                out.issues.append(mapped.issue(
                    "error", f"“{values['page']}” is not a page number; write a whole number "
                    "such as 4, or leave it empty.", row=row, role="page"))
                bad = True
        named = (values["group"].casefold(), values["name"].casefold())
        if values["group"] and values["name"]:
            if named in seen:
                out.issues.append(mapped.issue(
                    "error", f"{values['name']} appears twice in group {values['group']} (also "
                    f"row {seen[named]}); every persona of a group needs its own name.",
                    row=row, role="name"))
                bad = True
            else:
                seen[named] = row
        if bad:
            continue
        if values["group_description"]:
            out.descriptions.setdefault(values["group"], values["group_description"])
        personas.append(Persona(
            id=persona_id(values["group"], "", values["name"]), group=values["group"],
            name=values["name"], demographics=values["demographics"],
            perspective=values["perspective"], specialty=values["specialty"],
            psychological_traits=values["psychological_traits"],
            social_relationships=values["social_relationships"], evidence=values["evidence"],
            document=values["document"], page=page, origin="imported"))
    if not personas and not out.errors:
        out.issues.append(TableIssue("error", f"{where} has no personas.", read.sheet))
    if not out.errors:
        out.personas = personas
    return out
