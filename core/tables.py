"""Spreadsheet import (xlsx, xlsm, xls, csv/tsv/txt) and styled Excel export.

Import
    Every cell comes back as the text a person sees, never silently converted:

    * empty cells are ``""`` (never ``None`` or NaN); text is kept exactly (no stripping);
    * whole numbers read as ``"3"`` (not ``"3.0"``); other numbers with up to 15 significant
      digits, as Excel shows them in the formula bar (``"0.3"``, ``"0.00001"``), never in
      exponent form for ordinary magnitudes; number *formats* are not applied (a cell shown as
      ``25%`` reads ``"0.25"``, a cell shown as ``3.50`` reads ``"3.5"``);
    * dates read as ISO text: ``"2024-03-05"``, with a time ``"2024-03-05 14:30"`` (seconds only
      when not zero), times alone ``"14:30"``; TRUE/FALSE as ``"TRUE"``/``"FALSE"``; Excel error
      values as their code (``"#N/A"``) with a warning.

    The frame's index holds the spreadsheet row number of each data row (the header is row 1
    unless the sheet starts lower), so a message can say "row 14": ``read.frame.index`` /
    ``read.rows``. Completely empty rows are skipped (with a warning when data follows them).
    Problems the user can fix are :class:`TableIssue` items in ``read.issues`` (plain sentences
    naming file, sheet, row and column); files that cannot be read at all raise
    :class:`TableError`.

Export
    :func:`write_workbook` writes one styled workbook (bold frozen header, filters, wrapped text,
    sensible widths, numbers as numbers) with a "Read me" sheet, atomically. Text Excel cannot
    hold is changed visibly and listed in the :class:`ExportReport` and on the Read me sheet:
    characters Excel rejects are removed; text starting with ``= + - @`` (or a tab / carriage
    return) gets a leading apostrophe ``'`` that stays visible, so Excel, and any CSV saved from
    the workbook, shows it as text and never runs it as a formula (text that is just a number,
    such as ``"-3.5"``, is left alone); cells over 32,767 characters keep what fits, end with a
    marker, and their full text is split over rows of a "Long texts" sheet.

pandas, openpyxl, xlrd and charset-normalizer are imported inside the functions that need them,
so importing this module is cheap.
"""

from __future__ import annotations

import codecs
import csv
import difflib
import errno
import io
import math
import numbers
import os
import posixpath
import re
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from core import paths

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "EXCEL_CELL_LIMIT",
    "XLSX_PART_LIMIT",
    "XLSX_TOTAL_LIMIT",
    "CutCell",
    "ExportReport",
    "HasIssues",
    "MappedRow",
    "MappedTable",
    "OpenedSheet",
    "RowsRead",
    "Sheet",
    "TableError",
    "TableIssue",
    "TableRead",
    "cell_number",
    "check_export_target",
    "find_header_row",
    "guess_mapping",
    "guess_named_column",
    "is_missing",
    "keep_chosen",
    "list_sheets",
    "map_columns",
    "open_sheet",
    "preview",
    "read_mapped_rows",
    "read_table",
    "sheet_states",
    "write_workbook",
]

#: The most characters Excel keeps in one cell.
EXCEL_CELL_LIMIT = 32_767
#: The most one part of an .xlsx (a sheet, the shared texts) may unpack to (bytes).
XLSX_PART_LIMIT = 200 * 2**20
#: The most all parts of an .xlsx together may unpack to (bytes).
XLSX_TOTAL_LIMIT = 500 * 2**20

Severity = Literal["error", "warning"]
T = TypeVar("T")

#: How many issues of one kind are listed one by one before the rest are summed up.
_ISSUES_PER_KIND = 20

_TEXT_SUFFIXES = {".csv", ".tsv", ".tab", ".txt"}
_EXCEL_SUFFIXES = {".xlsx", ".xlsm", ".xls"}
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ERROR_CODES = {
    "#NULL!",
    "#DIV/0!",
    "#VALUE!",
    "#REF!",
    "#NAME?",
    "#NUM!",
    "#N/A",
    "#GETTING_DATA",
    "#SPILL!",
    "#CALC!",
    "#FIELD!",
    "#BLOCKED!",
    "#UNKNOWN!",
    "#CONNECT!",
    "#BUSY!",
}
_README_NAME = "Read me"
_LONG_TEXTS_NAME = "Long texts"


# --------------------------------------------------------------------------------------------
# Public data types
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableIssue:
    """One problem found in a table, in plain language.

    ``message`` is complete on its own (it names file, sheet, row and column). ``row`` is the
    row number as the spreadsheet shows it; ``column`` is the letter plus header, e.g.
    ``C ("answer")``; ``column_name`` is the header itself (the frame column), for highlighting.
    """

    severity: Severity
    message: str
    sheet: str | None = None
    row: int | None = None
    column: str | None = None
    column_name: str | None = None

    def __str__(self) -> str:
        return self.message


class TableError(Exception):
    """A file that cannot be read or written at all; the message says what to do."""

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None):
        super().__init__(message)
        self.message = message
        self.path = Path(path) if path is not None else None


class HasIssues:
    """Something read with a list of ``issues``: its errors, warnings and whether it is ok."""

    issues: list[TableIssue]

    @property
    def errors(self) -> list[TableIssue]:
        """Issues that stop the table from being used as it is."""
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[TableIssue]:
        return [i for i in self.issues if i.severity == "warning"]

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not self.errors

    def raise_for_errors(self) -> None:
        """Raise :class:`TableError` listing every error (for the CLI); do nothing if ok."""
        errors = self.errors
        if errors:
            lines = "\n".join(f"- {e.message}" for e in errors)
            raise TableError(
                f"The table cannot be used as it is:\n{lines}", getattr(self, "path", None)
            )


@dataclass
class TableRead(HasIssues):
    """A sheet read as text.

    ``frame``: one column per header, every cell a ``str`` (empty cells ``""``), index = the
    spreadsheet row number of each data row (named ``"row"``). ``letters`` maps each frame
    column to its spreadsheet column letter. ``encoding`` / ``delimiter`` are set for text
    files (CSV/TSV) and ``None`` for workbooks; for text files ``sheet`` is the file name.
    """

    frame: pd.DataFrame
    path: Path
    sheet: str
    header_row: int | None
    letters: dict[str, str]
    encoding: str | None = None
    delimiter: str | None = None
    issues: list[TableIssue] = field(default_factory=list)
    header_note: str = ""
    """Which row was read as the header when rows above it were not (a title, a note), and
    whether it was found or chosen; "" when the header is the first filled row."""

    @property
    def rows(self) -> list[int]:
        """The spreadsheet row number of each data row, in frame order."""
        return [int(r) for r in self.frame.index]

    @property
    def is_text_file(self) -> bool:
        return self.delimiter is not None

    def column_label(self, column: str) -> str:
        """``C ("answer")`` for the frame column ``answer``."""
        letter = self.letters.get(column)
        return f'{letter} ("{column}")' if letter else f'"{column}"'

    def where(self, row: int | None = None, column: str | None = None) -> str:
        """``answers.xlsx, sheet "Data", row 14, column C ("answer")`` (parts left out if None)."""
        parts = [self.path.name]
        if not self.is_text_file:
            parts.append(f'sheet "{self.sheet}"')
        if row is not None:
            parts.append(f"row {row}")
        if column is not None:
            parts.append(f"column {self.column_label(column)}")
        return ", ".join(parts)

    def describe(self) -> str:
        """``sheet "Data" of answers.xlsx`` or ``answers.csv``: the table, for sentences."""
        if self.is_text_file:
            return f'"{self.path.name}"'
        return f'sheet "{self.sheet}" of {self.path.name}'

    def issue(
        self, severity: Severity, text: str, *, row: int | None = None, column: str | None = None
    ) -> TableIssue:
        """Make an issue located in this table (methods use it for their own content checks)."""
        return TableIssue(
            severity,
            f"{self.where(row, column)}: {text}",
            self.sheet,
            row,
            self.column_label(column) if column is not None else None,
            column,
        )


@dataclass
class MappedTable(HasIssues):
    """A table with its columns assigned to a method's roles.

    ``frame`` has one column per mapped role (named by the role, text cells, same row-number
    index as the source); ``mapping`` is role -> header for the roles that were mapped;
    ``issues`` holds the source's issues followed by the mapping's.
    """

    frame: pd.DataFrame
    mapping: dict[str, str]
    source: TableRead
    issues: list[TableIssue] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.source.path

    @property
    def rows(self) -> list[int]:
        return [int(r) for r in self.frame.index]

    def column_label(self, role: str) -> str:
        """``C ("Answer")``: where the role's column is in the file."""
        return self.source.column_label(self.mapping.get(role, role))

    def where(self, row: int | None = None, role: str | None = None) -> str:
        return self.source.where(row, self.mapping.get(role, role) if role is not None else None)

    def issue(
        self, severity: Severity, text: str, *, row: int | None = None, role: str | None = None
    ) -> TableIssue:
        """An issue located by row and role, e.g. for "the score in row 14 is not a number"."""
        column = self.mapping.get(role, role) if role is not None else None
        return self.source.issue(severity, text, row=row, column=column)


@dataclass
class Sheet:
    """One sheet to export. ``widths`` (characters) and ``number_formats`` (Excel codes such as
    ``"0.000"``) are keyed by column name; ``wrap`` wraps text columns."""

    name: str
    frame: pd.DataFrame
    description: str = ""
    widths: Mapping[str, float] | None = None
    wrap: bool = True
    number_formats: Mapping[str, str] | None = None


@dataclass(frozen=True)
class CutCell:
    """A cell whose text was longer than Excel allows; its full text is on ``full_text_at``."""

    sheet: str
    cell: str
    column: str
    length: int
    kept: int
    full_text_at: str


@dataclass
class ExportReport:
    """What :func:`write_workbook` wrote and everything it had to change."""

    path: Path
    sheets: list[str]
    renamed: dict[str, str] = field(default_factory=dict)
    cut_cells: list[CutCell] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Cell values -> text
# --------------------------------------------------------------------------------------------


def _float_text(x: float) -> str:
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    text = f"{x:.15g}"
    if "e" in text and 1e-10 <= abs(x) < 1e15:
        text = format(Decimal(text), "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
    return text


def _time_text(t: time) -> str:
    if t.microsecond >= 500_000:
        t = (datetime.combine(date(2000, 1, 1), t) + timedelta(seconds=1)).time()
    return t.strftime("%H:%M:%S" if t.second else "%H:%M")


def _datetime_text(d: datetime) -> str:
    if d.microsecond:
        d = (d + timedelta(microseconds=500_000)).replace(microsecond=0)
    if d.hour == d.minute == d.second == 0:
        return d.date().isoformat()
    return f"{d.date().isoformat()} {_time_text(d.time())}"


def _timedelta_text(td: timedelta) -> str:
    seconds = round(td.total_seconds())
    sign = "-" if seconds < 0 else ""
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours}:{minutes:02d}:{secs:02d}"


def _cell_text(value: Any) -> str:
    """The text a person sees for a value read from a workbook."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, datetime):
        return _datetime_text(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, time):
        return _time_text(value)
    if isinstance(value, timedelta):
        return _timedelta_text(value)
    return str(value)


def _col_letter(index0: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA."""
    n = index0 + 1
    letters = ""
    while n:
        n, rem = divmod(n - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def _col_index0(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + (ord(ch) - 64)
    return n - 1


def _ranges_text(numbers_: Sequence[int]) -> str:
    """[5, 9, 10, 11] -> '5, 9–11'."""
    parts: list[str] = []
    start: int | None = None
    prev = 0
    for n in sorted(numbers_):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            parts.append(str(start) if start == prev else f"{start}–{prev}")
            start = prev = n
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}–{prev}")
    return ", ".join(parts)


def _quoted_list(names: Iterable[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


# --------------------------------------------------------------------------------------------
# What kind of file is this?
# --------------------------------------------------------------------------------------------


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise TableError(
            f'The file "{path}" does not exist. Check the name and the folder, or choose the '
            "file again.",
            path,
        )
    if path.is_dir():
        raise TableError(f'"{path}" is a folder, not a file. Choose a spreadsheet file.', path)
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except PermissionError:
        raise TableError(
            f'EvalDesk is not allowed to read "{path}". If the file is open in another program, '
            "close it; otherwise copy it into a folder of your own (for example Documents) and "
            "choose the copy.",
            path,
        ) from None
    except OSError as exc:
        raise TableError(f'"{path}" could not be opened ({exc.strerror or exc}).', path) from None
    if path.stat().st_size == 0:
        raise TableError(
            f'The file "{path.name}" is empty (0 bytes). It may not have finished copying or '
            "downloading; get the file again.",
            path,
        )


def _utf16_pattern(head: bytes) -> bool:
    """Does ``head`` look like UTF-16 text without a byte-order mark (every other byte zero)?"""
    even = head[0::2].count(0)
    odd = head[1::2].count(0)
    half = max(len(head) // 2, 1)
    return max(even, odd) / half > 0.3 and min(even, odd) / half < 0.05


def _looks_like_text(head: bytes) -> bool:
    if head.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return True
    if b"\x00" in head:
        if _utf16_pattern(head):
            return True
        # A few stray NUL bytes in a text file (a damaged cell): still text, the NULs are
        # removed and the cells named when the table is read.
        if head.count(0) > max(2, len(head) // 10):
            return False
        head = head.replace(b"\x00", b"")
    controls = sum(1 for b in head if b < 9 or 13 < b < 32 and b != 27)
    return controls <= max(1, len(head) // 100)


def _file_kind(path: Path) -> str:
    """Return "xlsx", "xls" or "text"; raise TableError for anything else."""
    _check_readable(path)
    with open(path, "rb") as fh:
        head = fh.read(8192)
    suffix = path.suffix.lower()
    name = path.name
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "xlsx"
    if head.startswith(_OLE2_MAGIC):
        data = path.read_bytes()
        if (
            "EncryptionInfo".encode("utf-16-le") in data
            or "EncryptedPackage".encode("utf-16-le") in data
        ):
            raise _password_error(path)
        if "Workbook".encode("utf-16-le") in data or "Book".encode("utf-16-le") in data:
            return "xls"
        raise TableError(
            f'"{name}" is an older Office document (for example a Word .doc), not a '
            "spreadsheet. Open it in its program and copy the table into Excel, or choose "
            "another file.",
            path,
        )
    if head.startswith(b"%PDF"):
        raise TableError(
            f'"{name}" is a PDF document, not a spreadsheet (only its name ends in '
            f'"{path.suffix}"). Export the table to Excel or CSV and choose that file.',
            path,
        )
    text_like = _looks_like_text(head)
    if suffix in _EXCEL_SUFFIXES:
        start = head.lstrip(codecs.BOM_UTF8).lstrip().lower()
        if start.startswith((b"<!doctype html", b"<html", b"<table", b"<meta")) or (
            start.startswith(b"<") and b"<html" in head.lower()
        ):
            raise TableError(
                f'"{name}" is a web page (HTML) saved with an Excel name, not a real Excel '
                "file. Open it in Excel and save it as an Excel Workbook (.xlsx), then choose "
                "the new file.",
                path,
            )
        if start.startswith(b"<"):
            raise TableError(
                f'"{name}" is an XML file (perhaps an "XML Spreadsheet 2003") with an Excel '
                "name. Open it in Excel and save it as an Excel Workbook (.xlsx), then choose "
                "the new file.",
                path,
            )
        if text_like:
            raise TableError(
                f'"{name}" is a text (CSV) file with an Excel name. Rename it to end in .csv, '
                "or open it in Excel and save it as an Excel Workbook (.xlsx).",
                path,
            )
        raise TableError(
            f'"{name}" is not a spreadsheet EvalDesk can read (it is neither an Excel workbook '
            "nor a CSV file). If it opens in Excel, save it there as an Excel Workbook (.xlsx) "
            "and choose the new file.",
            path,
        )
    if text_like:
        return "text"
    raise TableError(
        f'"{name}" is not a spreadsheet or a text table EvalDesk can read. Choose an Excel '
        "workbook (.xlsx, .xls) or a CSV file.",
        path,
    )


def _password_error(path: Path) -> TableError:
    return TableError(
        f'"{path.name}" is protected with a password, so EvalDesk cannot read it. Remove the '
        "password in Excel (File → Info → Protect Workbook → Encrypt with Password, clear the "
        "password) and save the file again.",
        path,
    )


def _damaged_error(path: Path, detail: str = "") -> TableError:
    extra = f" ({detail})" if detail else ""
    return TableError(
        f'"{path.name}" is damaged or incomplete and cannot be read{extra}. It may not have '
        "finished copying or downloading. Get the file again, or open it in Excel; if Excel "
        "can repair it, save it again and choose the repaired file.",
        path,
    )


# --------------------------------------------------------------------------------------------
# Raw grids from each file kind
# --------------------------------------------------------------------------------------------


@dataclass
class _Grid:
    """Non-empty rows as text with their spreadsheet row numbers (1-based), before the header
    is found. Rows whose cells are all empty or blank are left out (their numbers are missing)."""

    sheet: str
    rows: list[tuple[int, list[str]]]
    issues_before: list[TableIssue] = field(default_factory=list)
    merged: list[tuple[int, int, int, int]] = field(
        default_factory=list
    )  # r1, c1, r2, c2 (1-based)
    uncached: list[tuple[int, int]] = field(default_factory=list)  # row, col0
    # row, col0, the other workbook's name: formulas that read another workbook
    linked: list[tuple[int, int, str]] = field(default_factory=list)
    encoding: str | None = None
    delimiter: str | None = None
    guessed_encoding: bool = False


def _pick_sheet(path: Path, names: list[str], sheet: str | None,
                hidden: Mapping[str, str] | None = None) -> str:
    """The sheet to read: ``sheet`` (any case), else the first one not hidden in Excel."""
    if not names:
        raise TableError(f'"{path.name}" has no worksheets with cells (only charts).', path)
    if sheet is None:
        return _first_visible(names, hidden or {})
    if sheet in names:
        return sheet
    folded = [n for n in names if n.casefold() == sheet.casefold()]
    if len(folded) == 1:
        return folded[0]
    raise TableError(
        f'There is no sheet "{sheet}" in "{path.name}". Its sheets are: {_quoted_list(names)}.',
        path,
    )


def _first_visible(names: Sequence[str], hidden: Mapping[str, str]) -> str:
    """The first sheet Excel shows (the first of all when every sheet is hidden)."""
    return next((n for n in names if n not in hidden), names[0])


def sheet_states(path: str | os.PathLike[str]) -> dict[str, str]:
    """The sheets of a workbook that Excel does not show: name -> "hidden" (Format > Unhide
    shows it again) or "very hidden" (only a macro can). Empty for text files, for workbooks
    whose sheets are all shown and for files that cannot be read (reading them says why)."""
    path = Path(path)
    try:
        kind = _file_kind(path)
    except (TableError, OSError):
        return {}
    if kind == "text":
        return {}
    if kind == "xls":
        try:
            book = _open_xls(path, formatting=False)
        except TableError:
            return {}
        try:
            states = getattr(book, "_sheet_visibility", [])
            return {name: ("very hidden" if state == 2 else "hidden")
                    for name, state in zip(book.sheet_names(), states, strict=False) if state}
        finally:
            book.release_resources()
    import xml.etree.ElementTree as ET

    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            part = "xl/workbook.xml"
            if part not in names or zf.getinfo(part).file_size > 2**24:
                return {}
            root = ET.fromstring(zf.read(part))
    except (OSError, zipfile.BadZipFile, ET.ParseError, KeyError, RuntimeError):
        return {}
    out: dict[str, str] = {}
    for el in root.iter():
        if el.tag.rpartition("}")[2] == "sheet":
            state = el.get("state", "visible")
            if state in ("hidden", "veryHidden"):
                out[el.get("name", "")] = "very hidden" if state == "veryHidden" else "hidden"
    return out


def _hidden_note(path: Path, names: Sequence[str], hidden: Mapping[str, str],
                 chosen: str, sheet: str | None) -> TableIssue | None:
    """A warning when hidden sheets matter: the first sheets were hidden and passed over (the
    sheet read is named), or a hidden sheet was chosen by name."""
    if not hidden:
        return None
    if sheet is None:
        skipped = [n for n in names[: names.index(chosen)] if n in hidden]
        if not skipped or chosen in hidden:
            return None
        listed = _quoted_list(skipped)
        return TableIssue(
            "warning",
            f'"{path.name}": read the sheet "{chosen}", the first one Excel shows. The sheet(s) '
            f"{listed} before it are hidden in Excel and were not read; to use one of them, "
            "choose it by name.", sheet=chosen)
    if chosen in hidden:
        return TableIssue(
            "warning",
            f'"{path.name}": the sheet "{chosen}" you chose is {hidden[chosen]} in Excel, so '
            "whoever sent the file may not know it is there. Check that it holds the right "
            "data.", sheet=chosen)
    return None


def _open_xlsx(path: Path):
    import openpyxl

    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            members = {i.filename for i in infos}
    except zipfile.BadZipFile:
        raise _damaged_error(path) from None
    except OSError as exc:
        raise _damaged_error(path, str(exc)) from None
    if "xl/workbook.bin" in members:
        raise TableError(
            f'"{path.name}" is an Excel Binary Workbook (.xlsb). Open it in Excel and save it as '
            "an Excel Workbook (.xlsx), then choose the new file.",
            path,
        )
    if "word/document.xml" in members or "ppt/presentation.xml" in members:
        raise TableError(
            f'"{path.name}" is a Word or PowerPoint document, not an Excel workbook. Choose the '
            "spreadsheet instead.",
            path,
        )
    if not any(m.startswith("xl/") for m in members) and "[Content_Types].xml" not in members:
        raise TableError(
            f'"{path.name}" is a zip archive, not an Excel workbook. Unpack it and choose the '
            "spreadsheet inside, or choose another file.",
            path,
        )
    _check_unpacked_size(path, infos)
    try:
        # From memory: works whatever the file is called and never keeps the file open.
        return openpyxl.load_workbook(
            io.BytesIO(path.read_bytes()), read_only=True, data_only=True
        )
    except (zipfile.BadZipFile, EOFError) as exc:
        raise _damaged_error(path, str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many kinds for broken parts
        raise _damaged_error(path, f"{type(exc).__name__}: {exc}") from None


def _mb(size: int) -> str:
    return f"{size / 2**20:,.1f} MB" if size < 10 * 2**20 else f"{size / 2**20:,.0f} MB"


def _check_unpacked_size(path: Path, infos: Sequence[zipfile.ZipInfo]) -> None:
    """Refuse a workbook whose parts unpack to more than EvalDesk reads safely.

    An .xlsx is a zip archive; its directory says how large each part is once unpacked, and
    reading never unpacks more than that (a part that holds more fails its checksum). So a
    "zip bomb" (a few hundred KB that unpack to gigabytes) is refused here, before any XML is
    parsed, instead of taking all of the computer's memory."""
    if not infos:
        return
    total = sum(i.file_size for i in infos)
    biggest = max(infos, key=lambda i: i.file_size)
    if biggest.file_size <= XLSX_PART_LIMIT and total <= XLSX_TOTAL_LIMIT:
        return
    try:
        on_disk = _mb(path.stat().st_size)
    except OSError:  # pragma: no cover
        on_disk = "much smaller"
    raise TableError(
        f'"{path.name}" is too large to read safely: the workbook is {on_disk} on disk but its '
        f"contents unpack to {_mb(total)} (the part {biggest.filename} alone to "
        f"{_mb(biggest.file_size)}). EvalDesk reads workbooks that unpack to at most "
        f"{_mb(XLSX_TOTAL_LIMIT)} ({_mb(XLSX_PART_LIMIT)} for one part), so that one file "
        "cannot take all of the computer's memory. If the workbook is genuine, open it in "
        'Excel, save the sheet you need as "CSV UTF-8" and choose that file. If you did not '
        "expect it to be this large, do not open it: it may be damaged or made to do harm.",
        path,
    )


def _xlsx_sheet_parts(zf: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> part name inside the zip (e.g. 'xl/worksheets/sheet1.xml')."""
    import xml.etree.ElementTree as ET

    def local(tag: str) -> str:
        return tag.rpartition("}")[2]

    def rels_of(part: str) -> dict[str, str]:
        folder, base = posixpath.split(part)
        rels_path = posixpath.join(folder, "_rels", base + ".rels")
        out: dict[str, str] = {}
        for el in ET.fromstring(zf.read(rels_path)).iter():
            if local(el.tag) == "Relationship":
                target = el.get("Target", "")
                if target.startswith("/"):
                    resolved = target.lstrip("/")
                else:
                    resolved = posixpath.normpath(posixpath.join(folder, target))
                out[el.get("Id", "")] = resolved
                out["type:" + el.get("Type", "").rpartition("/")[2]] = resolved
        return out

    root_rels = rels_of("")
    workbook_part = root_rels.get("type:officeDocument", "xl/workbook.xml")
    wb_rels = rels_of(workbook_part)
    parts: dict[str, str] = {}
    for el in ET.fromstring(zf.read(workbook_part)).iter():
        if local(el.tag) == "sheet":
            rid = next((v for k, v in el.attrib.items() if local(k) == "id"), None)
            if rid in wb_rels:
                parts[el.get("name", "")] = wb_rels[rid]
    return parts


_MERGE_RE = re.compile(rb'<(?:\w+:)?mergeCell\s[^>]*?ref="([A-Z]+)(\d+)(?::([A-Z]+)(\d+))?"')
_FORMULA_RE = re.compile(rb"<(?:\w+:)?f[\s>/]")
_REF_RE = re.compile(r"([A-Z]+)(\d+)")


#: A reference to another workbook in a formula as Excel stores it: "[1]Prices!B2" (the first
#: external link of the file) or, as some programs write it, "[prices.xlsx]Prices!B2".
_EXTERNAL_RE = re.compile(r"\[(\d+|[^\[\]]+\.(?:xlsx|xlsm|xlsb|xls|csv|ods))\]", re.IGNORECASE)
_LINK_TARGET_RE = re.compile(rb'Target="([^"]+)"')


def _external_workbooks(zf: zipfile.ZipFile) -> dict[str, str]:
    """The workbooks a file's formulas may read, by their number in the formulas ("1" ->
    "prices.xlsx"), from the file's external link parts."""
    from urllib.parse import unquote

    found: dict[str, str] = {}
    for member in zf.namelist():
        m = re.fullmatch(r"xl/externalLinks/_rels/externalLink(\d+)\.xml\.rels", member)
        if m is None:
            continue
        target = _LINK_TARGET_RE.search(zf.read(member))
        if target is not None:
            name = unquote(target.group(1).decode("utf-8", "replace")).replace("\\", "/")
            found[m.group(1)] = name.rstrip("/").rsplit("/", 1)[-1] or name
    return found


def _xlsx_checks(path: Path, sheet: str, grid: _Grid) -> None:
    """Find merged ranges and formulas without a saved result, straight from the sheet's XML."""
    import xml.etree.ElementTree as ET

    try:
        with zipfile.ZipFile(path) as zf:
            part = _xlsx_sheet_parts(zf).get(sheet)
            if part is None:
                return
            xml = zf.read(part)
            others = _external_workbooks(zf)
    except Exception:  # noqa: BLE001 - the data were read; these checks are a bonus on top
        return
    for m in _MERGE_RE.finditer(xml):
        c1, r1 = m.group(1).decode(), int(m.group(2))
        c2 = m.group(3).decode() if m.group(3) else c1
        r2 = int(m.group(4)) if m.group(4) else r1
        grid.merged.append((r1, _col_index0(c1) + 1, r2, _col_index0(c2) + 1))
    if not _FORMULA_RE.search(xml):
        return
    row_number = 0
    col0 = -1
    try:
        for event, el in ET.iterparse(io.BytesIO(xml), events=("start", "end")):
            tag = el.tag.rpartition("}")[2]
            if event == "start":
                if tag == "row":
                    row_number = int(el.get("r") or row_number + 1)
                    col0 = -1
                continue
            if tag != "c":
                if tag == "row":
                    el.clear()
                continue
            ref = el.get("r")
            cell_ref = _REF_RE.fullmatch(ref) if ref else None
            col0 = _col_index0(cell_ref.group(1)) if cell_ref else col0 + 1
            formula = value = None
            for child in el:
                name = child.tag.rpartition("}")[2]
                if name == "f":
                    formula = child
                elif name == "v":
                    value = child
            if formula is not None:
                kind = el.get("t", "n")
                row = int(cell_ref.group(2)) if cell_ref else row_number
                if value is None or (not value.text and kind not in ("str", "inlineStr", "s")):
                    grid.uncached.append((row, col0))
                elif (link := _EXTERNAL_RE.search(formula.text or "")) is not None:
                    name = link.group(1)
                    grid.linked.append((row, col0, others.get(name, name)))
    except ET.ParseError:
        return


def _xlsx_grid(path: Path, sheet: str | None, limit: int | None) -> _Grid:
    wb = _open_xlsx(path)
    hidden = sheet_states(path)
    try:
        names = [ws.title for ws in wb.worksheets]
        chosen = _pick_sheet(path, names, sheet, hidden)
        ws = wb[chosen]
        ws.reset_dimensions()
        rows: list[tuple[int, list[str]]] = []
        data_seen = 0
        try:
            for number, values in enumerate(ws.iter_rows(values_only=True), start=1):
                if not any(v is not None and v != "" for v in values):
                    continue
                texts = [_cell_text(v) for v in values]
                if any(t.strip() for t in texts):
                    rows.append((number, texts))
                    data_seen += 1
                    if limit is not None and data_seen > limit:
                        break
        except (zipfile.BadZipFile, EOFError, OSError) as exc:
            raise _damaged_error(path, str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - openpyxl raises many kinds for broken parts
            raise _damaged_error(path, f"{type(exc).__name__}: {exc}") from None
    finally:
        wb.close()
    grid = _Grid(chosen, rows)
    note = _hidden_note(path, names, hidden, chosen, sheet)
    if note is not None:
        grid.issues_before.append(note)
    if limit is None:
        _xlsx_checks(path, chosen, grid)
    return grid


def _open_xls(path: Path, *, formatting: bool):
    """An .xls workbook opened on demand (with cell formats when asked and the file allows);
    a password or a damaged file becomes a :class:`TableError` that says what to do."""
    import xlrd

    try:
        try:
            return xlrd.open_workbook(str(path), formatting_info=formatting, on_demand=True)
        except NotImplementedError:  # formats of this kind of .xls cannot be read
            return xlrd.open_workbook(str(path), on_demand=True)
    except xlrd.XLRDError as exc:
        if "encrypt" in str(exc).lower():
            raise _password_error(path) from None
        raise _damaged_error(path, str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - xlrd raises many kinds for broken parts
        raise _damaged_error(path, f"{type(exc).__name__}: {exc}") from None


def _xls_grid(path: Path, sheet: str | None, limit: int | None) -> _Grid:
    book = _open_xls(path, formatting=True)
    try:
        names = list(book.sheet_names())
        hidden = {name: ("very hidden" if state == 2 else "hidden") for name, state in
                  zip(names, getattr(book, "_sheet_visibility", []), strict=False) if state}
        chosen = _pick_sheet(path, names, sheet, hidden)
        sh = book.sheet_by_name(chosen)
        rows: list[tuple[int, list[str]]] = []
        data_seen = 0
        for r in range(sh.nrows):
            texts = [_xls_cell_text(book, sh.cell(r, c)) for c in range(sh.row_len(r))]
            if any(t.strip() for t in texts):
                rows.append((r + 1, texts))
                data_seen += 1
                if limit is not None and data_seen > limit:
                    break
        merged = [(rlo + 1, clo + 1, rhi, chi) for rlo, rhi, clo, chi in sh.merged_cells]
    finally:
        book.release_resources()
    grid = _Grid(chosen, rows, merged=merged)
    note = _hidden_note(path, names, hidden, chosen, sheet)
    if note is not None:
        grid.issues_before.append(note)
    return grid


def _xls_cell_text(book, cell) -> str:
    import xlrd

    kind = cell.ctype
    if kind in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return ""
    if kind == xlrd.XL_CELL_TEXT:
        return cell.value
    if kind == xlrd.XL_CELL_NUMBER:
        return _float_text(float(cell.value))
    if kind == xlrd.XL_CELL_BOOLEAN:
        return "TRUE" if cell.value else "FALSE"
    if kind == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "#N/A")
    if kind == xlrd.XL_CELL_DATE:
        value = float(cell.value)
        try:
            if 0 <= value < 1:
                moment = xlrd.xldate_as_datetime(value, book.datemode)
                return _time_text(moment.time())
            return _datetime_text(xlrd.xldate_as_datetime(value, book.datemode))
        except Exception:  # noqa: BLE001 - a date xlrd cannot convert: shown as its number
            return _float_text(value)
    return str(cell.value)


# --- text files ------------------------------------------------------------------------------

_WESTERN_EXTRA = set("ŒœŠšŽžŸƒ“”‘’‚„–—…€•™«»°£§¿¡·±²³µ¼½¾©®¢¥¨´¸ªº¬¯¶×÷\u00a0†‡‰‹›ˆ˜")


def _looks_western(text: str) -> bool:
    """Does cp1252-decoded text look like a Western European language (not mis-decoded)?"""
    non_ascii = [c for c in text if ord(c) > 127]
    if not non_ascii:
        return True
    plausible = sum(1 for c in non_ascii if "\u00c0" <= c <= "\u00ff" or c in _WESTERN_EXTRA)
    letters = sum(1 for c in text if c.isalpha())
    non_ascii_letters = sum(1 for c in non_ascii if c.isalpha())
    return plausible / len(non_ascii) >= 0.95 and non_ascii_letters <= 0.3 * max(letters, 1)


def _decode(data: bytes) -> tuple[str, str, bool]:
    """Return (text, encoding, guessed). ``guessed`` is False for BOMs and valid UTF-8."""
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(encoding), encoding, False
            except UnicodeDecodeError:
                break
    head = data[:4096]
    if b"\x00" in head and _utf16_pattern(head):  # UTF-16 without a byte-order mark
        even, odd = head[0::2].count(0), head[1::2].count(0)
        encoding = "utf-16-le" if odd > even else "utf-16-be"
        try:
            return data.decode(encoding), encoding, False
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8"), "utf-8", False
    except UnicodeDecodeError:
        pass
    import charset_normalizer

    matches = charset_normalizer.from_bytes(data)
    best = matches.best()
    names = [m.encoding for m in matches]
    if best is not None and best.encoding.startswith(("utf_16", "utf_32")):
        return str(best), best.encoding, True
    try:
        western = data.decode("cp1252")
    except UnicodeDecodeError:
        western = None
    sure_elsewhere = len(names) == 1 and names[0] != "cp1252"
    if western is not None and _looks_western(western) and not sure_elsewhere:
        return western, "cp1252", True
    if best is not None:
        try:
            return data.decode(best.encoding), best.encoding, True
        except (UnicodeDecodeError, LookupError):
            pass
    if western is not None:
        return western, "cp1252", True
    return data.decode("latin-1"), "latin-1", True


_ENCODING_NAMES = {
    "cp1252": "Windows-1252 (Western European)",
    "latin-1": "Latin-1 (Western European)",
    "latin_1": "Latin-1 (Western European)",
    "cp1250": "Windows-1250 (Central European)",
    "cp1251": "Windows-1251 (Cyrillic)",
    "utf_16": "UTF-16",
    "utf_16_le": "UTF-16",
    "utf_16_be": "UTF-16",
}

_DELIMITERS = [",", ";", "\t", "|"]
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "vertical bar"}


def _sniff_delimiter(text: str, suffix: str) -> str:
    sample = text[:65536]
    if len(text) > len(sample) and "\n" in sample:
        sample = sample[: sample.rindex("\n")]
    scores: dict[str, tuple[float, int]] = {}
    for delimiter in _DELIMITERS:
        counts = []
        for record in csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter):
            if any(cell.strip() for cell in record):
                counts.append(len(record))
            if len(counts) >= 200:
                break
        if not counts:
            continue
        mode = Counter(counts).most_common(1)[0][0]
        if mode < 2:
            continue
        scores[delimiter] = (counts.count(mode) / len(counts), mode)
    preferred = ["\t", ",", ";", "|"] if suffix in (".tsv", ".tab") else _DELIMITERS
    if not scores:
        return preferred[0]
    top = max(s[0] for s in scores.values())
    tied = [d for d in scores if scores[d][0] >= top - 1e-9]
    if len(tied) == 1:
        return tied[0]
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters="".join(_DELIMITERS)).delimiter
        if sniffed in tied:
            return sniffed
    except csv.Error:
        pass
    return next(d for d in preferred if d in tied)


def _text_grid(path: Path, sheet: str | None, limit: int | None) -> _Grid:
    if sheet is not None and sheet != path.name:
        raise TableError(
            f'"{path.name}" is a text file with a single table, so it has no sheet "{sheet}". '
            "Leave the sheet empty.",
            path,
        )
    data = path.read_bytes()
    text, encoding, guessed = _decode(data)
    issues: list[TableIssue] = []
    first_line, _, rest = text.partition("\n")
    hint = re.fullmatch(r"\ufeff?sep=(.)\r?", first_line)
    if hint:
        delimiter = hint.group(1)
        text = rest
    else:
        delimiter = _sniff_delimiter(text, path.suffix.lower())
    limit_size = csv.field_size_limit()
    if limit_size < 2**31 - 1:
        csv.field_size_limit(2**31 - 1)
    rows: list[tuple[int, list[str]]] = []
    data_seen = 0
    nul_cells: list[tuple[int, int]] = []  # (row, col0) of cells whose NULs were removed
    has_nul = "\x00" in text
    try:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        for number, record in enumerate(reader, start=1):
            if has_nul:
                for c, cell in enumerate(record):
                    if "\x00" in cell:
                        record[c] = cell.replace("\x00", "")
                        nul_cells.append((number, c))
            if any(c.strip() for c in record):
                rows.append((number, record))
                data_seen += 1
                if limit is not None and data_seen > limit:
                    break
    except csv.Error as exc:
        raise TableError(f'"{path.name}" could not be read as a table: {exc}.', path) from None
    if nul_cells:
        refs = [f"{_col_letter(c)}{r}" for r, c in nul_cells]
        if len(refs) == 1:
            r, c = nul_cells[0]
            text_ = (
                f"{path.name}, cell {refs[0]} (row {r}, column {_col_letter(c)}): it held a NUL "
                "character (an invisible zero byte, often a sign of a damaged file), which was "
                "removed. Check that the cell's text is complete."
            )
        else:
            text_ = (
                f"{path.name}: {len(refs):,} cells held NUL characters (invisible zero bytes, "
                f"often a sign of a damaged file), which were removed: {_cells_text(refs)}. "
                "Check that these cells' texts are complete."
            )
        issues.append(
            TableIssue("warning", text_, path.name, nul_cells[0][0], _col_letter(nul_cells[0][1]))
        )
    grid = _Grid(path.name, rows, issues_before=issues, encoding=encoding, delimiter=delimiter)
    grid.guessed_encoding = guessed
    return grid


# --------------------------------------------------------------------------------------------
# Grid -> TableRead, with validation
# --------------------------------------------------------------------------------------------


def _grid(path: Path, sheet: str | None, limit: int | None) -> _Grid:
    kind = _file_kind(path)
    if kind == "xlsx":
        return _xlsx_grid(path, sheet, limit)
    if kind == "xls":
        return _xls_grid(path, sheet, limit)
    return _text_grid(path, sheet, limit)


# --------------------------------------------------------------------------------------------
# Which row is the header
# --------------------------------------------------------------------------------------------

#: How many filled rows from the top may be a title or a note above the table's header.
HEADER_SEARCH_ROWS = 10
#: How many rows below a candidate header show which columns the table uses.
_HEADER_LOOKAHEAD = 30


def _filled(cells: Sequence[str]) -> set[int]:
    return {c for c, value in enumerate(cells) if value.strip()}


def find_header_row(rows: Sequence[tuple[int, Sequence[str]]]) -> int | None:
    """The spreadsheet row that reads like the header above the rows of data, from the filled
    rows ``(row number, cells)`` of a sheet; None when there are none.

    The table's columns are those filled in at least half of the rows below a row. The header
    is the first row that names more than half of them. A row above it that fills at most a
    third of them (a title such as "Civics unit test - Period 3", a line "Teacher: Lee | Date:
    12 March") is not part of the table. When nothing reads so (a one-column sheet, a row of
    numbers where the header should be, no title within the first :data:`HEADER_SEARCH_ROWS`
    rows), the first filled row is the header, as a sheet without a title has it."""
    if not rows:
        return None
    first = rows[0][0]
    for i, (number, cells) in enumerate(rows[:HEADER_SEARCH_ROWS]):
        below = rows[i + 1 : i + 1 + _HEADER_LOOKAHEAD]
        if not below:
            return number
        counts = Counter(c for _, row in below for c in _filled(row))
        columns = {c for c, k in counts.items() if 2 * k >= len(below)} or set(counts)
        if len(columns) < 2:
            return first  # a single column: a title cannot be told from a header
        mine = _filled(cells)
        if 2 * len(mine & columns) > len(columns):
            if i == 0:
                return number
            values = [cells[c] for c in mine]
            if 2 * sum(cell_number(v) is not None for v in values) > len(values):
                return first  # numbers: a row of data, so the table had no title after all
            return number
        if len(mine) > max(1, len(columns) // 3):
            return first  # it fills part of the table: a header with gaps, not a title
    return first


def _header_note(grid: _Grid, header_row: int, found: bool) -> str:
    """What a reader is told when rows above the header are not read ("" when none are)."""
    above = [(n, cells) for n, cells in grid.rows if n < header_row]
    if not above:
        return ""
    first_text = next((v.strip() for v in above[0][1] if v.strip()), "")
    shown = " ".join(first_text.split())
    shown = shown if len(shown) <= 60 else shown[:59] + "…"
    rows = _ranges_text([n for n, _ in above])
    word = "row" if len(above) == 1 else "rows"
    verb = "is" if len(above) == 1 else "are"
    if not found:
        return (f"Row {header_row} is the header (as chosen); {word} {rows} above it {verb} "
                "not read.")
    return (f"Row {header_row} is read as the header: {word} {rows} above it ({'“' + shown + '”'}"
            f"{', …' if len(above) > 1 else ''}) {verb} a title or note, not part of the "
            "table. If another row holds the column names, choose it as the header row.")


def _build(
    path: Path,
    grid: _Grid,
    *,
    header_row: int | None,
    max_cell_chars: int,
    validate: bool,
) -> TableRead:
    import pandas as pd

    is_text = grid.delimiter is not None
    where_sheet = path.name if is_text else f'{path.name}, sheet "{grid.sheet}"'
    issues: list[TableIssue] = list(grid.issues_before)

    def add(severity: Severity, text: str, row=None, letter=None, name=None, locate=True) -> None:
        """Record an issue; ``locate=False`` when ``text`` itself names the row or cell."""
        parts = [where_sheet]
        label = None
        if letter is not None:
            label = f'{letter} ("{name}")' if name is not None else letter
        if locate and row is not None:
            parts.append(f"row {row}")
        if locate and label is not None:
            parts.append(f"column {label}")
        issues.append(
            TableIssue(severity, f"{', '.join(parts)}: {text}", grid.sheet, row, label, name)
        )

    if grid.guessed_encoding and validate:
        friendly = _ENCODING_NAMES.get(grid.encoding or "", grid.encoding)
        add(
            "warning",
            f"The file is not saved as UTF-8; it was read as {friendly}. If letters such as é, "
            'ü or “ look wrong, save the file from Excel as "CSV UTF-8" and load it again.',
        )

    found = header_row is None
    if header_row is None:
        header_row = find_header_row(grid.rows)
    elif grid.rows and header_row not in {n for n, _ in grid.rows}:
        first = grid.rows[0][0]
        last = grid.rows[-1][0]
        why = (f"the {'file' if is_text else 'sheet'} ends at row {last}" if header_row > last
               else f"row {header_row} is empty")
        add("error", f"Row {header_row} cannot be the header row: {why}. Choose the row that "
            f"holds the column names (the first filled row is {first}).")
        frame = pd.DataFrame(index=pd.Index([], name="row", dtype="int64"))
        return TableRead(
            frame, path, grid.sheet, header_row, {}, grid.encoding, grid.delimiter, issues
        )
    note = _header_note(grid, header_row, found) if header_row is not None else ""
    if note and found:
        add("warning", note)
    header: list[str] = []
    data: list[tuple[int, list[str]]] = []
    for n, cells in grid.rows:
        if header_row is None or n < header_row:
            continue
        if n == header_row:
            header = list(cells)
        else:
            data.append((n, cells))

    if header_row is None or not any(h.strip() for h in header) and not data:
        if validate:
            add(
                "error",
                "The sheet is empty: there is nothing to read. Choose another sheet or file."
                if not is_text
                else "The file holds no table: there is nothing to read.",
            )
        frame = pd.DataFrame(index=pd.Index([], name="row", dtype="int64"))
        return TableRead(
            frame, path, grid.sheet, header_row, {}, grid.encoding, grid.delimiter, issues
        )

    width = max([len(header)] + [len(cells) for _, cells in data])
    keep: list[int] = []
    names: list[str] = []
    letters: dict[str, str] = {}
    raw_headers: list[str] = []
    blank_headers: list[tuple[str, str]] = []
    for c in range(width):
        h = header[c] if c < len(header) else ""
        has_data = any(c < len(cells) and cells[c].strip() for _, cells in data)
        if not h.strip() and not has_data:
            continue
        keep.append(c)
        raw_headers.append(h)
    counts = Counter(h for h in raw_headers if h.strip())
    used: set[str] = set()
    duplicates: dict[str, list[str]] = {}
    for c, h in zip(keep, raw_headers):
        letter = _col_letter(c)
        if not h.strip():
            name = f"Column {letter}"
            blank_headers.append((letter, name))
        elif counts[h] > 1:
            name = f"{h} ({letter})"
            duplicates.setdefault(h, []).append(letter)
        else:
            name = h
        base, k = name, 2
        while name in used:
            name = f"{base} ({k})"
            k += 1
        used.add(name)
        names.append(name)
        letters[name] = letter

    table = [[cells[c] if c < len(cells) else "" for c in keep] for _, cells in data]
    frame = (
        pd.DataFrame(table, columns=names, dtype=object)
        if table
        else pd.DataFrame({n: pd.Series([], dtype=object) for n in names})
    )
    frame.index = pd.Index([n for n, _ in data], name="row", dtype="int64")
    read = TableRead(
        frame, path, grid.sheet, header_row, letters, grid.encoding, grid.delimiter, issues,
        header_note=note,
    )
    if not validate:
        return read

    for letter, name in blank_headers:
        add(
            "warning",
            f'Column {letter} has no header but holds data. It is shown as "{name}"; type a '
            f"header into cell {letter}{header_row} if you want a clearer name.",
            letter=letter,
            name=name,
            locate=False,
        )
    for h, cols in duplicates.items():
        shown = " and ".join(f'"{h} ({col})"' for col in cols)
        add(
            "warning",
            f'Columns {", ".join(cols)} all have the header "{h}". They are shown as {shown}; '
            "rename them in the file if you want to tell them apart by name.",
        )
    if not data:
        add(
            "error",
            f"The {'file' if is_text else 'sheet'} has a header row (row {header_row}) but no "
            "data rows below it.",
        )
    present = {n for n, _ in data}
    gaps = [n for n in range(header_row + 1, data[-1][0]) if n not in present] if data else []
    if gaps:
        word = "Row" if len(gaps) == 1 else "Rows"
        verb = "is" if len(gaps) == 1 else "are"
        add(
            "warning",
            f"{word} {_ranges_text(gaps)} {verb} empty and "
            f"{'was' if len(gaps) == 1 else 'were'} skipped.",
            row=gaps[0],
            locate=False,
        )

    by_kind: dict[str, list[tuple[Severity, str, int | None, str | None, str | None]]] = {}

    def collect(kind, severity, text, row=None, letter=None, name=None):
        by_kind.setdefault(kind, []).append((severity, text, row, letter, name))

    name_of = dict(zip(keep, names))
    for c, h in zip(keep, raw_headers):
        if len(h) > max_cell_chars:
            collect(
                "long",
                "warning",
                _long_text(len(h), max_cell_chars),
                header_row,
                _col_letter(c),
                name_of[c],
            )
    for n, cells in data:
        for c in keep:
            if c >= len(cells):
                continue
            value = cells[c]
            if len(value) > max_cell_chars:
                collect(
                    "long",
                    "warning",
                    _long_text(len(value), max_cell_chars),
                    n,
                    _col_letter(c),
                    name_of[c],
                )
            elif not is_text and value in _ERROR_CODES:
                collect(
                    "error-value",
                    "warning",
                    f'The cell shows the Excel error "{value}"; it is read as the text '
                    f'"{value}". Fix the formula in Excel if this cell should hold a value.',
                    n,
                    _col_letter(c),
                    name_of[c],
                )
    for r1, c1, r2, c2 in grid.merged:
        ref = f"{_col_letter(c1 - 1)}{r1}:{_col_letter(c2 - 1)}{r2}"
        if r1 <= header_row <= r2:
            collect(
                "merged-header",
                "warning",
                f"Header cells {ref} are merged, so only {_col_letter(c1 - 1)}{r1} holds a header "
                "and the other columns have none. Unmerge them in Excel (Home → Merge & Center) "
                "and give each column its own header.",
                header_row,
            )
        elif r2 > header_row:
            collect(
                "merged",
                "warning",
                f"Cells {ref} are merged: only {_col_letter(c1 - 1)}{r1} holds the value and the "
                "other cells are read as empty. Unmerge them in Excel (Home → Merge & Center) "
                "and fill in each cell if they belong to different rows.",
                r1,
            )
    for row, c0 in grid.uncached:
        ref = f"{_col_letter(c0)}{row}"
        collect(
            "formula",
            "error",
            f"Cell {ref} holds a formula whose result was never saved, so its value is unknown "
            "(this happens with files made by programs other than Excel). Open the file in "
            "Excel and save it again; Excel then stores the results.",
            row,
            _col_letter(c0),
            name_of.get(c0),
        )
    for row, c0, other in grid.linked:
        ref = f"{_col_letter(c0)}{row}"
        collect(
            "linked",
            "warning",
            f"Cell {ref} holds a formula that takes its value from another workbook ({other}). "
            "EvalDesk read the value saved in this file, as Excel showed it when the file was "
            f"last saved; if {other} has changed since, open both files in Excel, save this one "
            "again and read it in again.",
            row,
            _col_letter(c0),
            name_of.get(c0),
        )
    summaries = {
        "linked": "more cells take their values from other workbooks (the values saved in "
                  "this file were read)",
        "long": "more cells are longer than {limit:,} characters",
        "error-value": "more cells show Excel errors",
        "merged-header": "more merged header ranges",
        "merged": "more merged cell ranges",
        "formula": "more formulas have no saved result; open the file in Excel and save it again",
    }
    for kind, of_kind in by_kind.items():
        for issue in of_kind[:_ISSUES_PER_KIND]:  # (severity, text, row, letter, name)
            add(*issue, locate=not kind.startswith("merged"))
        if len(of_kind) > _ISSUES_PER_KIND:
            extra = len(of_kind) - _ISSUES_PER_KIND
            add(
                of_kind[0][0],
                f"… and {extra:,} " + summaries[kind].format(limit=max_cell_chars) + ".",
            )
    return read


def _long_text(length: int, limit: int) -> str:
    text = f"The cell holds {length:,} characters, more than the limit of {limit:,}."
    if length > EXCEL_CELL_LIMIT:
        text += (
            f" It was read in full, but Excel cannot hold more than {EXCEL_CELL_LIMIT:,} "
            "characters in a cell, so an exported workbook will cut it (and say so)."
        )
    else:
        text += " It was read in full."
    return text


# --------------------------------------------------------------------------------------------
# Public import API
# --------------------------------------------------------------------------------------------


def list_sheets(path: str | os.PathLike[str]) -> list[str]:
    """The worksheet names of a workbook, in order; for a text file ``[file name]``."""
    path = Path(path)
    kind = _file_kind(path)
    if kind == "text":
        return [path.name]
    if kind == "xls":
        book = _open_xls(path, formatting=False)
        try:
            return list(book.sheet_names())
        finally:
            book.release_resources()
    wb = _open_xlsx(path)
    try:
        return [ws.title for ws in wb.worksheets]
    finally:
        wb.close()


def read_table(
    path: str | os.PathLike[str],
    sheet: str | None = None,
    *,
    header_row: int | None = None,
    max_cell_chars: int = EXCEL_CELL_LIMIT,
) -> TableRead:
    """Read one sheet (default: the first) or a CSV/TSV/text file as text, and check it.

    ``header_row`` (spreadsheet row number) overrides the default, the row that reads like the
    header above the rows of data (:func:`find_header_row`: the first filled row unless a title
    or a note sits above the table; ``read.header_note`` and a warning say so). Cells longer than ``max_cell_chars`` are read in full and reported as warnings.
    Raises :class:`TableError` when the file cannot be read at all.
    """
    path = Path(path)
    grid = _grid(path, sheet, None)
    return _build(path, grid, header_row=header_row, max_cell_chars=max_cell_chars, validate=True)


@dataclass(frozen=True)
class OpenedSheet:
    """A workbook's sheets, the sheet read (the chosen one, or the first) and its table."""

    sheets: list[str]
    sheet: str
    table: TableRead
    #: the sheets Excel does not show: name -> "hidden" or "very hidden"
    hidden: dict[str, str] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.table.frame.columns]

    @property
    def hidden_note(self) -> str:
        """The warning that hidden sheets were passed over (naming the sheet read), or ""."""
        return next((i.message for i in self.table.issues
                     if i.severity == "warning" and "hidden in Excel" in i.message), "")


def open_sheet(path: str | os.PathLike[str], sheet: str | None = None, *,
               header_row: int | None = None) -> OpenedSheet:
    """List the sheets and read ``sheet`` when the file has it (in any case), else the first
    one Excel shows (hidden sheets are passed over, with a warning that names the sheet read),
    its header in ``header_row`` (None: found, see :func:`read_table`).
    Raises :class:`TableError` when the file cannot be read at all."""
    sheets = list_sheets(path)
    hidden = sheet_states(path)
    same = [n for n in sheets if sheet is not None and n.casefold() == sheet.casefold()]
    chosen = sheet if sheet in sheets else (same[0] if len(same) == 1 else None)
    read = read_table(path, chosen, header_row=header_row)
    return OpenedSheet(sheets, read.sheet, read, hidden)


def keep_chosen(chosen: Mapping[str, str | None], columns: Sequence[str],
                guessed: Mapping[str, str | None]) -> dict[str, str | None]:
    """The user's role -> column choices that still name a column of the sheet; the guesses
    when none does (a new file, or nothing chosen yet)."""
    kept = {role: (col if col in columns else None) for role, col in chosen.items()}
    return kept if any(kept.values()) else dict(guessed)


def preview(path: str | os.PathLike[str], sheet: str | None = None, n: int = 20) -> pd.DataFrame:
    """The header and first ``n`` data rows, as text, without the checks (cheap)."""
    path = Path(path)
    grid = _grid(path, sheet, n)
    read = _build(path, grid, header_row=None, max_cell_chars=EXCEL_CELL_LIMIT, validate=False)
    return read.frame.iloc[:n]


# --------------------------------------------------------------------------------------------
# Column mapping
# --------------------------------------------------------------------------------------------


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _close_matches(wanted: str, columns: Sequence[str]) -> list[str]:
    folded = {c: _fold(c) for c in columns}
    target = _fold(wanted)
    same = [c for c, f in folded.items() if f == target]
    if same:
        return same
    close = difflib.get_close_matches(target, list(folded.values()), n=3, cutoff=0.6)
    out = [c for f in close for c, g in folded.items() if g == f]
    if target:
        out += [c for c, f in folded.items() if c not in out and (target in f or f and f in target)]
    return out[:3]


def map_columns(
    read: TableRead, mapping: Mapping[str, str | None], required: Sequence[str] = ()
) -> MappedTable:
    """Assign columns to roles (role -> header, ``None`` = not used) and check the choice.

    Errors: a required role without a column, a role naming a column that does not exist
    (with close matches suggested), a required column with no value at all. Warnings: one
    column chosen for several roles.
    """
    import pandas as pd

    columns = list(read.frame.columns)
    issues: list[TableIssue] = list(read.issues)
    where = read.describe()

    def add(severity: Severity, text: str, column: str | None = None) -> None:
        label = read.column_label(column) if column is not None else None
        issues.append(TableIssue(severity, text, read.sheet, None, label, column))

    resolved: dict[str, str] = {}
    for role in required:
        if not mapping.get(role):
            add("error", f'Choose the column that holds "{role}" in {where}.')
    for role, header in mapping.items():
        if header is None or header == "":
            continue
        if header in columns:
            resolved[role] = header
            continue
        suggestions = _close_matches(header, columns)
        if suggestions:
            hint = "did you mean " + " or ".join(f'"{s}"' for s in suggestions) + "?"
            sheet_words = f'"{read.path.name}"' if read.is_text_file else f'sheet "{read.sheet}"'
            add("error", f'There is no column "{header}" in {sheet_words}; {hint}')
        else:
            sheet_words = f'"{read.path.name}"' if read.is_text_file else f'sheet "{read.sheet}"'
            add(
                "error",
                f'There is no column "{header}" in {sheet_words} (chosen for "{role}"). Its '
                f"columns are: {_quoted_list(columns) or 'none'}.",
            )
    by_column: dict[str, list[str]] = {}
    for role, header in resolved.items():
        by_column.setdefault(header, []).append(role)
    for header, roles in by_column.items():
        if len(roles) > 1:
            add(
                "warning",
                f"{where}: column {read.column_label(header)} is chosen for "
                + " and ".join(f'"{r}"' for r in roles)
                + ". Check that this is intended.",
                header,
            )
    for role in required:
        header = resolved.get(role)
        if (
            header is not None
            and len(read.frame)
            and not any(v.strip() for v in read.frame[header])
        ):
            add(
                "error",
                f'{read.where(column=header)}: the column chosen for "{role}" is empty.',
                header,
            )
    frame = pd.DataFrame(
        {role: read.frame[header] for role, header in resolved.items()}, index=read.frame.index
    )
    return MappedTable(frame, dict(resolved), read, issues)


@dataclass
class MappedRow:
    """One row of a mapped sheet as a method's reader sees it: the spreadsheet ``row``, the
    item's ``id`` ("row 14" when the sheet has no id), role -> cell text (``text``), and the
    numeric roles that hold a number (``numbers``)."""

    row: int
    id: str
    text: dict[str, str]
    numbers: dict[str, float]

    def get(self, role: str) -> str:
        return self.text.get(role, "")


@dataclass
class RowsRead(Generic[T]):
    """Items read from a sheet: ``errors`` stop the step; ``problems`` are rows or cells that
    were skipped (each names the row and column). ``describe`` names the file and sheet."""

    items: list[T] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    describe: str = ""


def read_mapped_rows(
    path: str | os.PathLike[str],
    sheet: str | None,
    mapping: Mapping[str, str | None],
    make: Callable[[MappedRow], T | None],
    *,
    required: str,
    id_role: str | None = "id",
    numbers: Mapping[str, str] | None = None,
    what: str = "items",
    one: str = "item",
    empty: str = "empty",
    header_row: int | None = None,
) -> RowsRead[T]:
    """Read a sheet into a method's items, with row-numbered problems (every reader of "a row
    per item" sheets uses this, in the app and the CLI alike).

    ``mapping``: role -> column (None = not used). A row whose ``required`` role is empty is
    skipped with a problem (``empty`` says how: "no text"). The id comes from ``id_role``'s
    column, else "row N"; a repeated id is an error. ``numbers``: role -> what the number is
    ("human rating for Clarity"); a cell there that is not a number is a problem and the role is
    left out of that row's ``numbers``. ``make(row)`` builds the item (None skips the row).
    ``header_row``: the sheet's header row (None: found, :func:`read_table`)."""
    try:
        read = read_table(Path(path), sheet, header_row=header_row)
    except TableError as exc:
        return RowsRead(errors=[exc.message])
    mapped = map_columns(read, dict(mapping), required=[required])
    out: RowsRead[T] = RowsRead(
        errors=[i.message for i in mapped.errors],
        problems=[i.message for i in mapped.warnings],
        describe=read.describe(),
    )
    if out.errors:
        return out
    frame = mapped.frame
    texts = [t for t in frame[required] if t.strip()] if required in frame else []
    numeric = sum(1 for t in texts if cell_number(t) is not None)
    if texts and numeric >= max(3, 0.8 * len(texts)):
        out.errors.append(
            f"{read.describe()}: the column “{mapping[required]}” chosen for the {what} holds "
            f"numbers, not texts ({numeric} of {len(texts)} cells). Choose the column that "
            f"holds the {what}."
        )
        return out
    number_roles = dict(numbers or {})
    seen: dict[str, int] = {}
    for row in mapped.rows:
        cells = {role: frame.at[row, role] for role in frame.columns}
        if not cells.get(required, "").strip():
            out.problems.append(f"{mapped.where(row, required)}: {empty}; the row is skipped.")
            continue
        given = cells.get(id_role, "").strip() if id_role else ""
        item_id = given or f"row {row}"
        if item_id in seen:
            out.errors.append(
                f"{mapped.where(row, id_role)}: the id “{item_id}” is also in row "
                f"{seen[item_id]}; every {one} needs its own id."
            )
            continue
        seen[item_id] = row
        values: dict[str, float] = {}
        for role, label in number_roles.items():
            raw = cells.get(role, "").strip()
            if not raw:
                continue
            value = cell_number(raw)
            if value is None:
                out.problems.append(
                    f"{mapped.where(row, role)}: “{raw}” is not a number, so this {one} has no "
                    f"{label}."
                )
            else:
                values[role] = value
        item = make(MappedRow(row=row, id=item_id, text=cells, numbers=values))
        if item is not None:
            out.items.append(item)
    if not out.items and not out.errors:
        out.errors.append(f"{read.describe()} has no {what}.")
    return out


def _words(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", " ", text.casefold()).strip()


def guess_mapping(
    columns: Sequence[str], roles: Mapping[str, Sequence[str]]
) -> dict[str, str | None]:
    """Suggest a column for each role from its synonyms (the role name counts as one).

    Exact matches (ignoring case, spaces and punctuation) win over partial ones (a column
    whose words contain a synonym's words); each column is suggested for one role at most;
    roles earlier in ``roles`` choose first. Roles without a match map to ``None``.
    """
    folded = {c: _words(str(c)) for c in columns}
    chosen: dict[str, str | None] = {role: None for role in roles}
    used: set[str] = set()

    def names_of(role: str) -> list[str]:
        return [w for w in (_words(s) for s in [role, *roles[role]]) if w]

    for role in roles:
        for name in names_of(role):
            hit = next((c for c, f in folded.items() if c not in used and f == name), None)
            if hit is not None:
                chosen[role] = hit
                used.add(hit)
                break
    for role in roles:
        if chosen[role] is not None:
            continue
        for name in names_of(role):
            pattern = re.compile(rf"(^| ){re.escape(name)}( |$)")
            hit = next((c for c, f in folded.items() if c not in used and pattern.search(f)), None)
            if hit is not None:
                chosen[role] = hit
                used.add(hit)
                break
    return chosen


def guess_named_column(
    columns: Sequence[str], names: Iterable[str], taken: Iterable[Any] = ()
) -> str | None:
    """The first column whose name, with case, spaces and underscores ignored, is one of
    ``names`` (written in lower case without spaces or underscores, e.g. ``"itemid"``) and
    that is not in ``taken`` (columns already chosen for other roles); None if there is none.
    Unlike :func:`guess_mapping`, only whole names count: "system_id" is not an "id"."""
    wanted = set(names)
    used = list(taken)
    return next(
        (c for c in columns
         if str(c).casefold().replace("_", "").replace(" ", "") in wanted and c not in used),
        None,
    )


def cell_number(text: Any) -> float | None:
    """A cell's text as a number (a decimal comma is accepted); None when it is empty, not a
    number, infinite or NaN."""
    text = str(text).strip().replace(",", ".")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


# --------------------------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------------------------

_SHEET_NAME_BAD = re.compile(r"[\[\]:*?/\\]")
_ILLEGAL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_NUMBER_TEXT = re.compile(r"[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?%?")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_LONG_CHUNK = 32_000


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _fit(text: str, limit: int) -> str:
    """The longest prefix of ``text`` that Excel counts as at most ``limit`` characters.

    Excel counts UTF-16 units: a character outside the Basic Multilingual Plane (most emoji)
    counts twice.
    """
    cut = text[:limit]
    excess = _utf16_len(cut) - limit
    while excess > 0:
        cut = cut[: len(cut) - excess]
        excess = _utf16_len(cut) - limit
    return cut


def _sheet_name(given: str, taken: set[str]) -> tuple[str, str | None]:
    """A valid sheet name, unique in ``taken`` (which it joins), and why it differs, if it does.

    Excel's rules: at most 31 characters, none of ``[ ] : * ? / \\``, no apostrophe at the start
    or end, not "History", unique ignoring case.
    """
    reasons = []
    name = _ILLEGAL_RE.sub("", _SHEET_NAME_BAD.sub("_", str(given))).strip("'")
    if name != str(given):
        reasons.append(
            "Excel does not allow [ ] : * ? / \\ or an apostrophe at the start or end of a "
            "sheet name"
        )
    if not name.strip():
        name = "Sheet"
    if name.casefold() == "history":
        name = "History (sheet)"
        reasons.append('Excel reserves the name "History"')
    if len(name) > 31:
        name = name[:31].rstrip()
        reasons.append("Excel allows at most 31 characters")
    if name.casefold() in taken:
        base, k = name, 2
        while name.casefold() in taken:
            suffix = f" ({k})"
            name = base[: 31 - len(suffix)].rstrip() + suffix
            k += 1
        reasons.append("another sheet already has that name")
    taken.add(name.casefold())
    return name, ("; ".join(reasons) if reasons else None)


def is_missing(value: Any) -> bool:
    """Whether a cell value is empty: None, pandas' NA / NaT, or a float or numpy NaN / NaT."""
    if value is None:
        return True
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return True
    except ImportError:  # pragma: no cover
        pass
    if isinstance(value, float) and math.isnan(value):
        return True
    try:
        import numpy as np

        if isinstance(value, np.datetime64) and np.isnat(value):
            return True
        if isinstance(value, np.floating) and np.isnan(value):
            return True
    except ImportError:  # pragma: no cover
        pass
    return False


_is_missing = is_missing


class _SheetWriter:
    """Writes values into cells and records every change it had to make."""

    def __init__(self) -> None:
        self.stripped: dict[str, list[str]] = {}
        self.neutralised: dict[str, list[str]] = {}
        self.as_text: dict[str, list[str]] = {}
        self.long: list[tuple[str, str, str, str]] = []  # sheet, cell, column, full text

    def value(self, value: Any, sheet: str, coord: str, column: str) -> tuple[Any, bool]:
        """Return (value for openpyxl, is_text)."""
        if isinstance(value, str):
            return self.text(value, sheet, coord, column), True
        if _is_missing(value):
            return None, False
        try:
            import numpy as np

            if isinstance(value, np.generic):
                value = value.item()
        except ImportError:  # pragma: no cover
            pass
        if isinstance(value, bool):
            return value, False
        if isinstance(value, numbers.Integral):
            value = int(value)
            if abs(value) >= 10**15:
                self.as_text.setdefault(sheet, []).append(coord)
                return str(value), True
            return value, False
        if isinstance(value, Decimal):
            value = float(value)
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            value = float(value)
            if math.isinf(value):
                self.as_text.setdefault(sheet, []).append(coord)
                return ("infinity" if value > 0 else "minus infinity"), True
            return value, False
        if hasattr(value, "to_pydatetime"):
            value = value.to_pydatetime()
        elif hasattr(value, "to_pytimedelta"):
            value = value.to_pytimedelta()
        if isinstance(value, (datetime, time)):
            if value.tzinfo is not None:
                return self.text(
                    value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat(),
                    sheet,
                    coord,
                    column,
                ), True
            return value, False
        if isinstance(value, (date, timedelta)):
            return value, False
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        return self.text(str(value), sheet, coord, column), True

    def text(self, text: str, sheet: str, coord: str, column: str) -> str:
        if _ILLEGAL_RE.search(text):
            text = _ILLEGAL_RE.sub("", text)
            self.stripped.setdefault(sheet, []).append(coord)
        if (
            text.startswith(_FORMULA_START)
            and not _NUMBER_TEXT.fullmatch(text)
            and text.strip("-") != ""
        ):
            text = "'" + text
            self.neutralised.setdefault(sheet, []).append(coord)
        if len(text) > EXCEL_CELL_LIMIT // 2 and _utf16_len(text) > EXCEL_CELL_LIMIT:
            self.long.append((sheet, coord, column, text))
            return text  # replaced by the cut text once the "Long texts" rows are known
        return text


def _cells_text(coords: list[str]) -> str:
    shown = ", ".join(coords[:10])
    return shown + (f" and {len(coords) - 10:,} more" if len(coords) > 10 else "")


def _width(values: Iterable[Any], header: str, wrap: bool) -> float:
    longest = 0
    for v in values:
        if _is_missing(v):
            continue
        if isinstance(v, float):
            text = _float_text(v)
        else:
            text = str(v)
        line = max((len(part) for part in text.split("\n")), default=0)
        longest = max(longest, line)
    header_width = max((len(p) for p in str(header).split("\n")), default=0) + 4
    cap = 60 if wrap else 80
    return float(min(max(header_width, longest + 2, 8), cap))


def check_export_target(
    path: str | os.PathLike[str],
    *,
    inputs: Sequence[str | os.PathLike[str]] = (),
    replace_existing: bool = False,
) -> Path:
    """The exact file an export to ``path`` will write, checked before any work is done (a run
    that can only fail at its end loses the calls it made): a name without a suffix gets
    ``.xlsx``; refused with :class:`TableError` are a folder, a missing folder, another suffix,
    a name Windows cannot hold, one of the ``inputs`` (or any file EvalDesk did not write,
    unless ``replace_existing``), a read-only file and a folder EvalDesk may not write in (a
    temporary file is made there and removed). Returns the absolute path."""
    target = Path(os.path.abspath(Path(path).expanduser()))
    if target.is_dir():
        raise TableError(
            f'"{target}" is a folder. Give the name of the workbook to write, for example '
            f'"{target / "results.xlsx"}".',
            target,
        )
    target = _export_path(target, replace_existing=True)
    for given in inputs:
        if not given:
            continue
        source = Path(given)
        try:
            same = source.exists() and target.exists() and os.path.samefile(source, target)
        except OSError:
            same = False
        if same or os.path.normcase(os.path.abspath(source)) == os.path.normcase(str(target)):
            raise TableError(
                f'"{target.name}" is the input file {source} itself: writing the results there '
                "would replace it. Choose another file name for the results.",
                target,
            )
    _export_path(target, replace_existing=replace_existing)
    try:
        probe, held = paths.claim_temp_file_beside(target, prefix="~evaldesk-",
                                                   suffix=".xlsx.tmp")
        paths.let_go(held)
        probe.unlink(missing_ok=True)
    except OSError as exc:
        raise _write_error(exc, target, creating=True) from None
    return target


def _export_path(path: Path, *, replace_existing: bool) -> Path:
    """``path`` with ``.xlsx`` added to a name without a suffix, after the checks that need no
    writing (name, suffix, folder, an existing file: a folder, read-only, not ours)."""
    problem = paths.file_name_problem(path.name)
    if path.suffix == "" and problem is None and not path.is_dir():
        path = path.with_suffix(".xlsx")
        problem = paths.file_name_problem(path.name)
    if problem is not None:  # refused before anything is written
        raise TableError(problem, path)
    if path.is_dir():
        raise TableError(f'"{path}" is a folder. Choose a file name for the export.', path)
    if path.suffix.lower() != ".xlsx":
        raise TableError(
            f'"{path.name}": exports are Excel workbooks; give the file a name ending in .xlsx.',
            path,
        )
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise TableError(
            f'The folder "{folder}" does not exist. Choose an existing folder for the export.',
            path,
        )
    if path.exists() and not os.access(path, os.W_OK):
        raise TableError(
            f'"{path.name}" is read-only or open in another program. Close it in Excel and try '
            "again, or choose another file name.",
            path,
        )
    if path.exists() and not replace_existing and not _written_by_evaldesk(path):
        raise TableError(
            f'"{path.name}" already exists and was not written by EvalDesk: it may be one of '
            "your own files (the answers, items or texts you imported), and the export would "
            "replace it. Choose another file name for the export.",
            path,
        )
    return path


def write_workbook(
    path: str | os.PathLike[str],
    sheets: Sequence[Sheet],
    readme: Sequence[tuple[str, str]] | None = None,
    *,
    readme_first: bool = False,
    replace_existing: bool = False,
) -> ExportReport:
    """Write ``sheets`` to an .xlsx file with a "Read me" sheet, atomically.

    An existing file at ``path`` is replaced only when EvalDesk wrote it (an earlier export), so
    an export never destroys a person's own file, such as the answers it was made from; a
    caller that read that file and writes its content back passes ``replace_existing=True``.

    The Read me sheet holds ``readme`` (key, value) rows, a list of every sheet with its
    description and row count, and every change the export had to make. A failed export never
    leaves a half-written file over an older one. Raises :class:`TableError` with a plain message
    when the file cannot be written.
    """
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.utils import get_column_letter

    path = _export_path(Path(path), replace_existing=replace_existing)
    folder = path.parent if str(path.parent) else Path(".")
    tmp_name, held = _make_temp(folder, path)

    try:
        report = ExportReport(path=path, sheets=[])
        writer = _SheetWriter()
        wb = Workbook()
        wb.remove(wb.active)
        wb.properties.creator = _CREATOR
        taken: set[str] = set()
        bold = Font(bold=True)
        header_fill = PatternFill("solid", fgColor="E7E6E6")
        header_align = Alignment(vertical="top", wrap_text=True)
        wrap_align = Alignment(vertical="top", wrap_text=True)
        top_align = Alignment(vertical="top")
        written: list[tuple[str, Sheet, int]] = []

        for spec in sheets:
            name, why = _sheet_name(spec.name, taken)
            if why:
                report.renamed[spec.name] = name
                report.notes.append(f'The sheet "{spec.name}" is called "{name}" ({why}).')
            ws = wb.create_sheet(name)
            frame = spec.frame
            columns = [str(c) for c in frame.columns]
            if not columns:
                ws["A1"] = "This sheet is empty."
                written.append((name, spec, 0))
                continue
            formats = dict(spec.number_formats or {})
            widths = dict(spec.widths or {})
            for j, col in enumerate(columns, start=1):
                cell = ws.cell(row=1, column=j)
                cell.value = writer.text(col, name, cell.coordinate, col)
                cell.font = bold
                cell.fill = header_fill
                cell.alignment = header_align
            text_columns: set[int] = set()
            for i, row in enumerate(frame.itertuples(index=False, name=None), start=2):
                for j, raw in enumerate(row, start=1):
                    col = columns[j - 1]
                    cell = ws.cell(row=i, column=j)
                    value, is_text = writer.value(raw, name, cell.coordinate, col)
                    if value is None:
                        continue
                    cell.value = value
                    if is_text:
                        cell.data_type = "s"
                        text_columns.add(j)
                    if col in formats:
                        cell.number_format = formats[col]
                    elif isinstance(value, datetime):
                        cell.number_format = (
                            "yyyy-mm-dd hh:mm:ss"
                            if (value.hour or value.minute or value.second)
                            else "yyyy-mm-dd"
                        )
                    elif isinstance(value, date):
                        cell.number_format = "yyyy-mm-dd"
            n_rows = len(frame)
            for j, col in enumerate(columns, start=1):
                letter = get_column_letter(j)
                wrap = spec.wrap and j in text_columns
                align = wrap_align if wrap else top_align
                for i in range(2, n_rows + 2):
                    ws.cell(row=i, column=j).alignment = align
                if col in widths:
                    width = float(widths[col])
                else:
                    sample = frame.iloc[:500, j - 1].tolist()
                    width = _width(sample, col, wrap)
                ws.column_dimensions[letter].width = width
            ws.freeze_panes = "A2"
            ws.auto_filter.ref = f"A1:{get_column_letter(len(columns))}{n_rows + 1}"
            written.append((name, spec, n_rows))

        # Texts longer than a cell: cut visibly, full text on "Long texts".
        long_name = None
        if writer.long:
            long_name, _ = _sheet_name(_LONG_TEXTS_NAME, taken)
            lt = wb.create_sheet(long_name)
            for j, head in enumerate(["sheet", "cell", "column", "part", "text"], start=1):
                c = lt.cell(row=1, column=j, value=head)
                c.font = bold
                c.fill = header_fill
            next_row = 2
            for sheet_name, coord, column, text in writer.long:
                chunks = []
                rest = text
                while rest:
                    chunk = _fit(rest, _LONG_CHUNK)
                    chunks.append(chunk)
                    rest = rest[len(chunk) :]
                first, last = next_row, next_row + len(chunks) - 1
                for k, chunk in enumerate(chunks, start=1):
                    lt.cell(row=next_row, column=1, value=sheet_name)
                    lt.cell(row=next_row, column=2, value=coord)
                    lt.cell(row=next_row, column=3, value=column)
                    lt.cell(row=next_row, column=4, value=f"{k} of {len(chunks)}")
                    c = lt.cell(row=next_row, column=5, value=chunk)
                    c.data_type = "s"
                    c.quotePrefix = True  # a continuation may start with "=": keep it text
                    c.alignment = wrap_align
                    next_row += 1
                rows_text = f"row {first}" if first == last else f"rows {first}–{last}"
                at = f'sheet "{long_name}", {rows_text}'
                marker = f"… [cut: {{kept:,}} of {len(text):,} characters shown; full text in {at}]"
                room = EXCEL_CELL_LIMIT - len(marker.format(kept=EXCEL_CELL_LIMIT))
                kept_text = _fit(text, room)
                wb[sheet_name][coord].value = kept_text + marker.format(kept=len(kept_text))
                wb[sheet_name][coord].data_type = "s"
                report.cut_cells.append(
                    CutCell(sheet_name, coord, column, len(text), len(kept_text), at)
                )
                report.notes.append(
                    f'Sheet "{sheet_name}", cell {coord} (column "{column}"): {len(text):,} '
                    f"characters, more than the {EXCEL_CELL_LIMIT:,} Excel holds in a cell. The "
                    f"cell shows the first {len(kept_text):,} and ends with a [cut] mark; the "
                    f"full text is in {at}."
                )
            lt.column_dimensions["A"].width = 20
            lt.column_dimensions["B"].width = 8
            lt.column_dimensions["C"].width = 20
            lt.column_dimensions["D"].width = 8
            lt.column_dimensions["E"].width = 100
            lt.freeze_panes = "A2"
            lt.auto_filter.ref = f"A1:E{next_row - 1}"

        for sheet_name, coords in writer.stripped.items():
            report.notes.append(
                f'Sheet "{sheet_name}": {len(coords):,} cell(s) held control characters Excel '
                f"cannot store; they were removed ({_cells_text(coords)})."
            )
        for sheet_name, coords in writer.neutralised.items():
            report.notes.append(
                f'Sheet "{sheet_name}": {len(coords):,} cell(s) begin with =, +, - or @; a \' was '
                "put in front of each so that Excel shows them as text and never runs them as "
                f"formulas ({_cells_text(coords)})."
            )
        for sheet_name, coords in writer.as_text.items():
            report.notes.append(
                f'Sheet "{sheet_name}": {len(coords):,} number(s) are written as text because '
                "Excel cannot store them exactly (integers of 16 digits or more, or infinite "
                f"values) ({_cells_text(coords)})."
            )

        readme_name, _ = _sheet_name(_README_NAME, taken)
        rm = wb.create_sheet(readme_name, 0 if readme_first else None)
        _fill_readme(rm, readme or [], written, long_name, len(writer.long), report.notes, writer)
        report.sheets = list(wb.sheetnames)
        wb.save(tmp_name)
        _replace(tmp_name, path)
    except BaseException as exc:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _write_error(exc, path) from None
        raise
    finally:
        paths.let_go(held)
    return report


def _fill_readme(ws, readme, written, long_name, n_long, notes, writer: _SheetWriter) -> None:
    from openpyxl.styles import Alignment, Font

    bold = Font(bold=True)
    title = Font(bold=True, size=14)
    wrap = Alignment(vertical="top", wrap_text=True)
    top = Alignment(vertical="top")
    row = 1

    def put(r: int, c: int, value: Any, font=None, align=top):
        cell = ws.cell(row=r, column=c)
        v, is_text = writer.value(value, ws.title, cell.coordinate, "")
        if is_text and isinstance(v, str) and len(v) > EXCEL_CELL_LIMIT:
            v = _fit(v, EXCEL_CELL_LIMIT - 20) + "… [cut]"
        cell.value = v
        if is_text:
            cell.data_type = "s"
        if font is not None:
            cell.font = font
        cell.alignment = align

    put(row, 1, "About this workbook", title)
    row += 1
    for key, value in readme:
        put(row, 1, key, bold)
        put(row, 2, value, None, wrap)
        row += 1
    row += 1
    put(row, 1, "Sheet", bold)
    put(row, 2, "What it holds", bold)
    put(row, 3, "Rows", bold)
    row += 1
    for name, spec, n_rows in written:
        put(row, 1, name)
        put(row, 2, spec.description, None, wrap)
        put(row, 3, n_rows)
        row += 1
    if long_name is not None:
        put(row, 1, long_name)
        put(
            row,
            2,
            f"The full text of {n_long:,} cell(s) too long for Excel, split over rows.",
            None,
            wrap,
        )
        row += 1
    row += 1
    put(row, 1, "Export notes", bold)
    row += 1
    if not notes:
        put(
            row, 2, "Nothing had to be changed: every value is written as it was given.", None, wrap
        )
    for note in notes:
        put(row, 2, note, None, wrap)
        row += 1
    ws.column_dimensions["A"].width = 30
    ws.column_dimensions["B"].width = 100
    ws.column_dimensions["C"].width = 10


_CREATOR = "EvalDesk"


def _written_by_evaldesk(path: Path) -> bool:
    """Is the existing file at ``path`` a workbook EvalDesk exported (its author is EvalDesk,
    or, for exports made before the author was set, it has our "Read me" sheet)?"""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            core_xml = "docProps/core.xml"
            if (
                core_xml in names
                and zf.getinfo(core_xml).file_size < 65536
                and f"<dc:creator>{_CREATOR}</dc:creator>".encode() in zf.read(core_xml)
            ):
                return True
            if "xl/workbook.xml" in names and zf.getinfo("xl/workbook.xml").file_size < 2**20:
                return f'name="{_README_NAME}"'.encode() in zf.read("xl/workbook.xml")
    except (OSError, zipfile.BadZipFile, KeyError, RuntimeError, ValueError):
        return False
    return False


def _make_temp(folder: Path, path: Path) -> tuple[str, int | None]:
    """The temporary workbook the export writes (held until :func:`core.paths.let_go`), after
    removing those an EvalDesk killed during an export left in this folder."""
    try:
        name, held = paths.claim_temp_file_beside(folder / path.name, prefix="~evaldesk-",
                                                  suffix=".xlsx.tmp")
        return str(name), held
    except OSError as exc:
        raise _write_error(exc, path, creating=True) from None


def _replace(tmp_name: str, path: Path) -> None:
    try:
        os.replace(tmp_name, path)
    except PermissionError as exc:
        raise _write_error(exc, path, replacing=True) from None


def _write_error(
    exc: OSError, path: Path, *, creating: bool = False, replacing: bool = False
) -> TableError:
    folder = path.parent
    if isinstance(exc, TableError):  # pragma: no cover
        return exc
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        return TableError(
            f'"{path.name}" could not be saved: the disk is full. Free some space or choose '
            "another drive, then export again.",
            path,
        )
    if isinstance(exc, PermissionError) and replacing:
        return TableError(
            f'"{path.name}" could not be replaced: it is probably open in Excel or another '
            "program. Close it in Excel and try again, or choose another file name.",
            path,
        )
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EROFS):
        return TableError(
            f'EvalDesk may not write in the folder "{folder}". Choose another folder (for '
            "example Documents) and export again.",
            path,
        )
    return TableError(
        f'"{path.name}" could not be saved in "{folder}" ({exc.strerror or exc}). Choose '
        "another folder or file name and export again.",
        path,
    )
