"""The ``Personas`` sheet: export personas and groups to Excel, edit them there, import them.

Columns (one row per persona; its group in the first column): ``group``, ``name``,
``demographics``, ``perspective``, ``specialty``, ``psychological_traits``,
``social_relationships``, ``evidence``, ``document``, ``page``, ``group_description`` (one
sentence on who the group's members are; the simple-role option builds each agent's role from
it; optional). ``group``, ``name`` and ``perspective`` must be filled in; ``page`` is empty or a
page number. Import checks every row
and names the file, sheet, row and column of each problem; imported personas have origin
"imported".
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.majeval.model import Persona
from core.majeval.persona_construction import persona_id
from core.tables import TableError, TableIssue, list_sheets, map_columns, read_table

if TYPE_CHECKING:  # pragma: no cover
    from core.tables import ExportReport

__all__ = [
    "PERSONAS_SHEET",
    "PERSONA_COLUMNS",
    "PersonasRead",
    "persona_rows",
    "read_personas",
    "write_personas",
]

PERSONAS_SHEET = "Personas"
PERSONA_COLUMNS = ["group", "name", "demographics", "perspective", "specialty",
                   "psychological_traits", "social_relationships", "evidence", "document", "page",
                   "group_description"]
REQUIRED = ("group", "name", "perspective")
#: Columns that may be missing without a remark (files written before they existed).
QUIET = ("group_description",)
_EXPORT_QUOTE = re.compile(r"^'(?=[=+\-@\t\r])")


@dataclass
class PersonasRead:
    """What :func:`read_personas` found: the personas (when there is no error) and every
    problem, each naming file, sheet, row and column."""

    personas: list[Persona] = field(default_factory=list)
    issues: list[TableIssue] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    """group -> its description (the first one given for the group)."""

    @property
    def errors(self) -> list[TableIssue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[TableIssue]:
        return [i for i in self.issues if i.severity == "warning"]

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(p.group for p in self.personas))


def persona_rows(personas: Sequence[Persona], descriptions: Mapping[str, str] | None = None
                 ) -> list[dict[str, object]]:
    """The personas as rows of the Personas sheet (``descriptions``: group -> description)."""
    about = descriptions or {}
    return [{c: about.get(p.group, "") if c == "group_description" else getattr(p, c)
             for c in PERSONA_COLUMNS} for p in personas]


def write_personas(path: str | os.PathLike[str], personas: Sequence[Persona], *,
                   readme: Sequence[tuple[str, str]] = (),
                   descriptions: Mapping[str, str] | None = None) -> ExportReport:
    """Write the Personas sheet (and a Read me) to an .xlsx file; ``descriptions`` (group ->
    one sentence on who they are) fill the ``group_description`` column."""
    import pandas as pd

    from core.tables import Sheet, write_workbook

    frame = pd.DataFrame(persona_rows(personas, descriptions), columns=PERSONA_COLUMNS)
    frame["page"] = frame["page"].astype("object")
    edited = [f"{p.name} ({p.group})" for p in personas if p.edited]
    notes = [
        *readme,
        ("Personas", (f"{len(personas)} personas in {len({p.group for p in personas})} "
                     "stakeholder groups.")),
        ("How to edit", ("Change any cell, add rows (one per persona) or delete rows, then import "
                        "the file again. group, name and perspective must be filled in; page is "
                        "empty or a page number. Personas of one group debate together. "
                        "group_description (optional) says who the group's members are; the "
                        "simple-role option builds each persona's one-sentence role from it and "
                        "the persona's specialty.")),
    ]
    if edited:
        notes.append(("Changed by a person", "; ".join(edited)))
    widths = {"group": 22, "name": 22, "evidence": 60, "document": 28, "page": 8,
              "group_description": 45}
    widths.update({c: 45 for c in ("demographics", "perspective", "specialty",
                                   "psychological_traits", "social_relationships")})
    return write_workbook(path, [Sheet(PERSONAS_SHEET, frame, "one row per persona; the group "
                                       "is in the first column", widths=widths)], notes)


def _clean(text: str) -> str:
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
    mapping = {c: folded.get(c) for c in PERSONA_COLUMNS}
    missing_required = [c for c in REQUIRED if mapping[c] is None]
    mapped = map_columns(read, mapping, required=[])
    out.issues.extend(mapped.issues)
    where = read.describe()
    for c in missing_required:
        out.issues.append(TableIssue(
            "error", f'{where} has no column "{c}". Add it (the columns are: '
            + ", ".join(PERSONA_COLUMNS) + ").", read.sheet))
    for c in PERSONA_COLUMNS:
        if mapping[c] is None and c not in REQUIRED and c not in QUIET:
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
        for c in REQUIRED:
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
        key = (values["group"].casefold(), values["name"].casefold())
        if values["group"] and values["name"]:
            if key in seen:
                out.issues.append(mapped.issue(
                    "error", f"{values['name']} appears twice in group {values['group']} (also "
                    f"row {seen[key]}); every persona of a group needs its own name.",
                    row=row, role="name"))
                bad = True
            else:
                seen[key] = row
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
