"""The ``Personas`` sheet: export personas and groups to Excel, edit them there, import them.

Columns (one row per persona; its group in the first column): ``group``, ``name``,
``demographics``, ``perspective``, ``specialty``, ``psychological_traits``,
``social_relationships``, ``evidence``, ``document``, ``page``, ``group_description`` (one
sentence on who the group's members are; the simple-role option builds each agent's role from
it; optional). ``group``, ``name`` and ``perspective`` must be filled in; ``page`` is empty or a
page number. Import checks every row
and names the file, sheet, row and column of each problem; imported personas have origin
"imported". The reader is :func:`core.majeval.inputs.read_personas` (also importable from here).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from core.majeval.inputs import (
    PERSONA_COLUMN_TITLES,
    PERSONA_COLUMNS,
    PERSONAS_SHEET,
    PersonasRead,
    read_personas,
)
from core.majeval.model import Persona
from core.words import count

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
    frame = frame.rename(columns=PERSONA_COLUMN_TITLES)  # the editor's words
    edited = [f"{p.name} ({p.group})" for p in personas if p.edited]
    notes = [
        *readme,
        ("Personas", (f"{count(len(personas), 'persona')} in "
                      f"{count(len({p.group for p in personas}), 'stakeholder group')}.")),
        ("How to edit", ("Change any cell, add rows (one per persona) or delete rows, then import "
                        "the file again. Group, Name and Their perspective must be filled in; Page "
                        "is empty or a whole number, the one the Documents page shows (a page "
                        "of a PDF, a section of a .txt or .md file). Personas of one group debate together. "
                        "Group description (optional) says who the group's members are; the "
                        "simple-role option builds each persona's one-sentence role from it and "
                        "the persona's specialty.")),
    ]
    if edited:
        notes.append(("Changed by a person", "; ".join(edited)))
    widths = {"group": 22, "name": 22, "evidence": 60, "document": 28, "page": 8,
              "group_description": 45}
    widths.update({c: 45 for c in ("demographics", "perspective", "specialty",
                                   "psychological_traits", "social_relationships")})
    widths = {PERSONA_COLUMN_TITLES[c]: w for c, w in widths.items()}
    return write_workbook(path, [Sheet(PERSONAS_SHEET, frame, "one row per persona; the group "
                                       "is in the first column", widths=widths)], notes)
