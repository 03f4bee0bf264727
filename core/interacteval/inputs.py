"""Every reader of InteractEval's files into its model types, used by the wizard and the CLI
alike: the texts to score (:func:`read_texts`), the rated samples (:func:`read_samples`), people's
think-aloud notes (:func:`read_notes`, :func:`parse_notes`) and checklist files
(:func:`read_checklists`).

Columns are found by name with ONE list of synonyms per role (:data:`TEXT_SYNONYMS`,
:data:`SAMPLE_SYNONYMS`, :data:`NOTE_SYNONYMS`); the user (or a command-line option) may choose
another column. Problems name the file, row and column.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from core.interacteval.model import (
    CHECKLIST_COLUMNS,
    Attribute,
    Checklist,
    ChecklistItem,
    ScoredSample,
    TextItem,
)
from core.interacteval.report import (
    _EXPORT_QUOTE,
    CHECKLIST_SHEET,
    DIMENSIONS_SHEET,
    SAMPLES_SHEET,
    parse_attributes,
)
from core.interacteval.think_aloud import _clean
from core.project.inputs import SheetChoice
from core.tables import RowsRead

__all__ = [
    "NOTE_SYNONYMS",
    "SAMPLE_SYNONYMS",
    "TEXT_ROLES",
    "TEXT_SYNONYMS",
    "ChecklistRead",
    "NotesRead",
    "OpenedTexts",
    "SamplesRead",
    "TextsRead",
    "TextsSetup",
    "guess_human_columns",
    "guess_text_columns",
    "open_texts",
    "parse_notes",
    "read_checklists",
    "read_notes",
    "read_samples",
    "read_texts",
]

#: Roles of the columns of a texts sheet (role -> what the user reads in the wizard).
TEXT_ROLES = {
    "text": "Text to score",
    "source": "Source (what the text is about)",
    "source_id": "Source document id",
    "id": "Text id",
    "system": "System (who wrote it)",
}

#: Column names that suggest each role of a texts sheet (the role's own name counts too; roles
#: earlier here choose first). The text id is only found by its exact name (see
#: :data:`TEXT_ID_NAMES`): "system_id" or "question id" are not text ids.
TEXT_SYNONYMS: dict[str, list[str]] = {
    "text": ["summary", "answer", "essay", "output", "system output", "response", "reply",
             "completion", "generated text"],
    "source_id": ["doc id", "document id", "source id", "article id", "question id",
                  "prompt id", "input id"],
    "system": ["system id", "model", "generator", "bot", "chatbot", "assistant"],
    "source": ["article", "document", "input", "source text", "question", "prompt"],
}
TEXT_ID_NAMES = {"id", "textid", "itemid", "rowid"}

#: Column names that suggest each role of a rated samples sheet (the score column is also
#: found by the dimension's name).
SAMPLE_SYNONYMS: dict[str, list[str]] = {
    "text": ["summary", "answer", "essay", "output", "system output", "response", "reply",
             "completion"],
    "source": ["article", "document", "input", "prompt", "source text", "question"],
    "score": ["scores", "rating", "human score", "grade"],
    "dimension": ["criterion", "aspect"],
}

#: Column names that suggest each role of a notes sheet.
NOTE_SYNONYMS: dict[str, list[str]] = {
    "attribute": ["attributes", "note", "notes", "consideration", "text", "thought"],
    "author": ["name", "person", "expert", "who", "source"],
}


# ---------------------------------------------------------------------------------- texts
class TextsSetup(SheetChoice):
    """The texts to score: the file (copied into the project), sheet and column choices (roles:
    :data:`TEXT_ROLES`)."""

    human: dict[str, str | None] = Field(default_factory=dict)
    """dimension -> column with human scores; None = none."""


def guess_human_columns(columns: Sequence[str],
                        dimensions: Sequence[str]) -> dict[str, str | None]:
    """dimension -> the column named like it (case and spaces ignored), None when none is."""
    return {d: next((c for c in columns if str(c).strip().casefold() == d.casefold()), None)
            for d in dimensions}


def guess_text_columns(columns: Sequence[str], dimensions: Sequence[str]) -> tuple[
    dict[str, str | None], dict[str, str | None]
]:
    """Suggest the columns of a texts sheet: (role -> column, dimension -> human score column)."""
    from core.tables import guess_mapping, guess_named_column

    guessed = guess_mapping(list(columns), TEXT_SYNONYMS)
    guessed["id"] = guess_named_column(columns, TEXT_ID_NAMES, guessed.values())
    roles = {role: guessed.get(role) for role in TEXT_ROLES}
    return roles, guess_human_columns(columns, dimensions)


TextsRead = RowsRead[TextItem]
"""Texts read from a sheet: ``errors`` stop scoring; ``problems`` are skipped rows or cells (each
names the row and column); the one reader result of :mod:`core.tables`."""


def read_texts(path: str | os.PathLike[str], setup: TextsSetup) -> TextsRead:
    """Read the texts to score with the chosen columns (every cell as text). A text without an
    id gets "row N"; a text without a source id is grouped with the texts of the same source."""
    from core.tables import MappedRow, read_mapped_rows

    mapping: dict[str, str | None] = {role: setup.columns.get(role) for role in TEXT_ROLES}
    numbers: dict[str, str] = {}
    for dim, col in setup.human.items():
        if col:
            mapping[f"human:{dim}"] = col
            numbers[f"human:{dim}"] = f"human score for {dim}"
    source_ids: dict[str, str] = {}

    def make(row: MappedRow) -> TextItem:
        source = row.get("source")
        source_id = row.get("source_id").strip()
        if not source_id and source.strip():
            source_id = source_ids.setdefault(source.strip(), f"source {len(source_ids) + 1}")
        return TextItem(
            id=row.id, text=row.get("text"), source=source, source_id=source_id,
            system=row.get("system").strip(),
            human={role.split(":", 1)[1]: value for role, value in row.numbers.items()},
            row=row.row,
        )

    got = read_mapped_rows(path, setup.sheet, mapping, make, required="text", id_role="id",
                           header_row=setup.header_row,
                           numbers=numbers, what="texts to score", one="text", empty="no text")
    return got


@dataclass
class OpenedTexts:
    """A texts file opened for the wizard: its sheets, the chosen sheet's columns, the setup
    (with guessed columns filled in) and the texts read with it."""

    sheets: list[str]
    columns: list[str]
    setup: TextsSetup
    read: TextsRead
    note: str = ""
    """Said about the file itself (e.g. the project's copy was read: the file is gone)."""
    hidden: dict[str, str] = field(default_factory=dict)
    """The sheets Excel does not show: name -> "hidden" or "very hidden"."""


def open_texts(path: str | os.PathLike[str], setup: TextsSetup,
               dimensions: Sequence[str]) -> OpenedTexts:
    """List the sheets, read the chosen one, guess the columns not chosen yet, read the texts.
    A plain function (run it in an executor); problems come back in ``read.errors``."""
    from core.tables import TableError, keep_chosen, open_sheet

    try:
        opened = open_sheet(path, setup.sheet, header_row=setup.header_row)
    except TableError as exc:
        return OpenedTexts([], [], setup, TextsRead(errors=[exc.message]))
    sheets, sheet, columns = opened.sheets, opened.sheet, opened.columns
    roles, human = guess_text_columns(columns, dimensions)
    chosen = keep_chosen(setup.columns, columns, roles)
    people = {d: (setup.human.get(d) if setup.human.get(d) in columns else None)
              for d in dimensions}
    if not setup.human:
        people = human
    setup = setup.model_copy(update={"sheet": sheet, "columns": chosen, "human": people})
    read = read_texts(path, setup)
    if opened.hidden_note:
        read.problems.insert(0, opened.hidden_note)
    return OpenedTexts(sheets, columns, setup, read, hidden=opened.hidden)


# -------------------------------------------------------------------------------- samples
@dataclass
class SamplesRead:
    """Samples read from a sheet; ``errors`` stop its use, ``problems`` are skipped rows."""

    samples: list[ScoredSample] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def read_samples(
    path: str | os.PathLike[str],
    *,
    sheet: str | None = None,
    text_col: str | None = None,
    source_col: str | None = None,
    score_col: str | None = None,
    dimension_col: str | None = None,
    dimension: str | None = None,
) -> SamplesRead:
    """Read rated samples. Columns not given are found by name: ``text`` (also "summary",
    "answer", "essay", "output"), ``source`` ("article", "document", "input", "prompt"),
    ``score`` (or a column named like ``dimension``), ``dimension`` (optional). A row whose
    score is not a number is skipped and named in ``problems``."""
    from core.tables import TableError, cell_number, guess_mapping, map_columns, read_table

    try:
        read = read_table(Path(path), sheet)
    except TableError as exc:
        return SamplesRead(errors=[exc.message])
    columns = list(read.frame.columns)
    score_names = list(SAMPLE_SYNONYMS["score"])
    if dimension:
        score_names.insert(0, dimension)
    guessed = guess_mapping(columns, {**SAMPLE_SYNONYMS, "score": score_names})
    mapping = {
        "text": text_col or guessed["text"],
        "source": source_col or guessed["source"],
        "score": score_col or guessed["score"],
        "dimension": dimension_col or guessed["dimension"],
    }
    mapped = map_columns(read, mapping, required=["text", "score"])
    result = SamplesRead(errors=[i.message for i in mapped.errors],
                         problems=[i.message for i in mapped.warnings])
    if result.errors:
        return result
    frame = mapped.frame
    for row in mapped.rows:
        text = frame.at[row, "text"]
        if not text.strip():
            continue
        raw = frame.at[row, "score"].strip()
        score = cell_number(raw)
        if score is None:
            what = "has no score" if not raw else f"has a score that is not a number (“{raw}”)"
            result.problems.append(f"{mapped.where(row, 'score')}: the sample {what}; skipped.")
            continue
        result.samples.append(ScoredSample(
            source=frame.at[row, "source"] if "source" in frame else "",
            text=text,
            score=score,
            dimension=(frame.at[row, "dimension"].strip() if "dimension" in frame else ""),
            row=row,
        ))
    if not result.samples:
        result.errors.append(f"{read.describe()} holds no sample with a text and a score.")
    return result

# ---------------------------------------------------------------------------------- notes
def parse_notes(text: str, author: str) -> list[Attribute]:
    """Typed or pasted notes: one attribute per non-empty line (bullets and numbers removed)."""
    author = author.strip() or "unnamed person"
    out = []
    for line in str(text).splitlines():
        cleaned = _clean(line)
        if cleaned:
            out.append(Attribute(text=cleaned, source=author, source_kind="person"))
    return out


@dataclass
class NotesRead:
    """Attributes read from a notes file; ``problems`` are plain sentences (file, row, column)
    about rows that were skipped; ``errors`` stop the file from being used."""

    attributes: list[Attribute] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


_LINE_FILES = {".txt", ".md", ".text", ""}


def read_notes(path: str | os.PathLike[str], *, author: str | None = None) -> NotesRead:
    """Human think-aloud notes from a file.

    * ``.txt`` / ``.md``: one attribute per line; the author is ``author`` or else the file
      name without its extension ("anna.txt" -> "anna").
    * ``.xlsx`` / ``.xls`` / ``.csv`` / ``.tsv``: a sheet with an ``attribute`` column (also
      "note", "consideration", "text") and optionally an ``author`` column (also "name",
      "person", "expert"); rows without an author get ``author`` or the file name.
    """
    path = Path(path)
    default_author = (author or path.stem).strip() or "unnamed person"
    if path.suffix.lower() in _LINE_FILES:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            return NotesRead(errors=[f'The notes file "{path}" cannot be read ({exc.strerror}).'])
        text = _decode(raw)
        nul_lines = [n for n, line in enumerate(text.splitlines(), start=1) if "\x00" in line]
        attributes = parse_notes(text.replace("\x00", ""), default_author)
        result = NotesRead(attributes=attributes)
        if nul_lines:
            shown = ", ".join(str(n) for n in nul_lines[:10])
            more = f" and {len(nul_lines) - 10} more" if len(nul_lines) > 10 else ""
            result.problems.append(
                f'The notes file "{path.name}", line{"s" if len(nul_lines) > 1 else ""} '
                f"{shown}{more}: NUL characters (invisible zero bytes, often a sign of a damaged "
                "file) were removed; check that these notes are complete.")
        if not attributes:
            result.errors.append(f'The notes file "{path.name}" holds no notes (it is empty).')
        return result
    return _read_notes_sheet(path, default_author)


def _decode(raw: bytes) -> str:
    for encoding in ("utf-8-sig", "utf-16"):
        try:
            if encoding == "utf-16" and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                continue
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    from charset_normalizer import from_bytes

    best = from_bytes(raw).best()
    return str(best) if best is not None else raw.decode("latin-1")


def _read_notes_sheet(path: Path, default_author: str) -> NotesRead:
    from core.tables import TableError, guess_mapping, map_columns, read_table

    try:
        read = read_table(path)
    except TableError as exc:
        return NotesRead(errors=[exc.message])
    mapping = guess_mapping(list(read.frame.columns), NOTE_SYNONYMS)
    mapped = map_columns(read, mapping, required=["attribute"])
    result = NotesRead(errors=[i.message for i in mapped.errors],
                       problems=[i.message for i in mapped.warnings])
    if result.errors:
        return result
    frame = mapped.frame
    for row, attribute_text in zip(mapped.rows, frame["attribute"]):
        who = frame.at[row, "author"].strip() if "author" in frame else ""
        text = _clean(attribute_text)
        if not text:
            if who:
                result.problems.append(
                    f"{mapped.where(row, 'attribute')}: no attribute, so the row was skipped."
                )
            continue
        result.attributes.append(
            Attribute(text=text, source=who or default_author, source_kind="person")
        )
    if not result.attributes:
        result.errors.append(f"{read.describe()} holds no attributes.")
    return result

# ----------------------------------------------------------------------------- checklists
@dataclass
class ChecklistRead:
    """Checklists read from a file. ``errors`` (plain sentences naming sheet, row and column)
    stop the file from being used; ``problems`` are warnings."""

    checklists: list[Checklist] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors and bool(self.checklists)


def _unquote(text: str) -> str:
    return _EXPORT_QUOTE.sub("", text.strip())


def read_checklists(path: str | os.PathLike[str]) -> ChecklistRead:
    """Read a checklist file written by :func:`write_checklists` (and perhaps edited in Excel).

    The ``Checklist`` sheet is required (for a workbook with one sheet, that sheet), with at
    least the columns ``dimension`` and ``question``. A row with a question but no dimension,
    or with a dimension but no question, is an error naming its row and column. Repeated
    questions within a dimension and dimensions without a definition are warnings."""
    from core.tables import TableError, list_sheets, map_columns

    path = Path(path)
    result = ChecklistRead()
    try:
        sheets = list_sheets(path)
    except TableError as exc:
        result.errors.append(exc.message)
        return result
    folded = {s.casefold(): s for s in sheets}
    # "Checklists" is the sheet of a results workbook: it can be read back too
    sheet = folded.get(CHECKLIST_SHEET.casefold()) or folded.get("checklists")
    if sheet is None:
        if len(sheets) == 1:
            sheet = sheets[0]
        else:
            result.errors.append(
                f'{path.name} has no sheet called "{CHECKLIST_SHEET}" (its sheets: '
                + ", ".join(f'"{s}"' for s in sheets) + "). Rename the sheet that holds the "
                "questions to Checklist."
            )
            return result
    read = _sheet_or_message(path, sheet, result.errors)
    if read is None:
        return result
    columns = {str(c).strip().casefold().replace(" ", "_"): c for c in read.frame.columns}
    mapping = {role: columns.get(role) for role in CHECKLIST_COLUMNS}
    mapped = map_columns(read, mapping, required=["dimension", "question"])
    result.errors += [i.message for i in mapped.errors]
    result.problems += [i.message for i in mapped.warnings]
    if mapped.errors:
        return result
    frame = mapped.frame
    order: list[str] = []
    by_dimension: dict[str, Checklist] = {}
    for row in mapped.rows:
        cells = {role: _unquote(frame.at[row, role]) if role in frame else ""
                 for role in CHECKLIST_COLUMNS}
        dimension, question = cells["dimension"], " ".join(cells["question"].split())
        if not dimension and not question:
            if any(cells.values()):
                result.problems.append(
                    f"{mapped.where(row)}: the row has no dimension and no question; skipped.")
            continue
        if not dimension:
            result.errors.append(
                f"{mapped.where(row, 'dimension')}: the question has no dimension. Write the "
                "dimension it belongs to (e.g. Coherence).")
            continue
        if not question:
            result.errors.append(
                f"{mapped.where(row, 'question')}: there is no question in this row. Write the "
                "question or delete the row.")
            continue
        key = dimension.casefold()
        if key not in by_dimension:
            by_dimension[key] = Checklist(dimension=dimension)
            order.append(key)
        checklist = by_dimension[key]
        if question.casefold() in {q.casefold() for q in checklist.questions}:
            result.problems.append(
                f"{mapped.where(row, 'question')}: the same question appears twice for "
                f"{dimension}; both are asked.")
        checklist.items.append(ChecklistItem(
            component=cells["component"],
            key_question=cells["key_question"],
            question=question,
            source_attributes=parse_attributes(cells["source_attributes"]),
            edited_by=cells["edited_by"],
        ))
    definitions = _read_definitions(path, sheets, result)
    samples = _read_samples(path, sheets, result)
    for key in order:
        checklist = by_dimension[key]
        definition = definitions.get(key, "")
        if not definition:
            result.problems.append(
                f'{path.name}: no definition for {checklist.dimension} (sheet "{DIMENSIONS_SHEET}"'
                "); the scoring prompt will only name the dimension.")
        checklist.definition = definition
        checklist.samples = samples.get(key, [])
        result.checklists.append(checklist)
    if not result.checklists and not result.errors:
        result.errors.append(f'{read.describe()} holds no questions.')
    return result


def _sheet_or_message(path: Path, sheet: str, messages: list[str]) -> Any:
    """``read_table(path, sheet)``, or None with the reason added to ``messages``."""
    from core.tables import TableError, read_table

    try:
        return read_table(path, sheet)
    except TableError as exc:
        messages.append(exc.message)
        return None


def _optional_sheet(path: Path, sheets: list[str], name: str, needed: tuple[str, ...],
                    result: ChecklistRead, lost: str) -> tuple[Any, dict[str, Any]] | None:
    """The optional sheet ``name`` of a checklist workbook and its columns by folded header, or
    None when there is none or it cannot be used (then a problem says what ``lost`` means)."""
    sheet = {s.casefold(): s for s in sheets}.get(name.casefold())
    read = None if sheet is None else _sheet_or_message(path, sheet, result.problems)
    if read is None:
        return None
    columns = {str(c).strip().casefold(): c for c in read.frame.columns}
    if any(n not in columns for n in needed):
        wanted = " and ".join(f'"{n}"' for n in needed)
        result.problems.append(f"{read.describe()}: needs the columns {wanted}; {lost}")
        return None
    return read, columns


def _read_samples(path: Path, sheets: list[str],
                  result: ChecklistRead) -> dict[str, list[ScoredSample]]:
    """The optional Samples sheet: dimension (folded) -> the think-aloud samples. A row that
    cannot be read is a warning naming it (it only decides which texts are flagged)."""
    from core.tables import cell_number

    found = _optional_sheet(path, sheets, SAMPLES_SHEET, ("dimension", "text"), result,
                            "the think-aloud samples were not read, so no scored text will be "
                            "flagged as one.")
    if found is None:
        return {}
    read, columns = found
    out: dict[str, list[ScoredSample]] = {}
    frame = read.frame
    for row in read.rows:
        dimension = frame.at[row, columns["dimension"]].strip()
        text = _unquote(frame.at[row, columns["text"]])
        if not dimension or not text:
            continue
        score = cell_number(frame.at[row, columns["score"]]) if "score" in columns else None
        source = _unquote(frame.at[row, columns["source"]]) if "source" in columns else ""
        number = cell_number(frame.at[row, columns["row"]]) if "row" in columns else None
        out.setdefault(dimension.casefold(), []).append(ScoredSample(
            source=source, text=text, score=score if score is not None else float("nan"),
            dimension=dimension, row=int(number) if number is not None else None))
    return out


def _read_definitions(path: Path, sheets: list[str], result: ChecklistRead) -> dict[str, str]:
    found = _optional_sheet(path, sheets, DIMENSIONS_SHEET, ("dimension", "definition"), result,
                            "the definitions were not read.")
    if found is None:
        return {}
    read, columns = found
    out = {}
    for row in read.rows:
        name = read.frame.at[row, columns["dimension"]].strip()
        if name:
            out[name.casefold()] = _unquote(read.frame.at[row, columns["definition"]])
    return out
