"""The Personas sheet: round trip, editing in Excel, import errors with row and column."""

from __future__ import annotations

import pandas as pd
import pytest

from core.majeval import PERSONA_COLUMNS, read_personas, write_personas
from core.majeval.inputs import PERSONA_COLUMN_TITLES
from core.tables import TableError

from .majeval_support import persona


def test_round_trip_keeps_every_field(tmp_path):
    people = [persona("Parents", "Dana Ray", evidence="Parents said so.", document="a.pdf",
                      page=3),
              persona("Parents", "Eli Stone", perspective="=SUM(A1) is not a formula"),
              persona("Teachers", "Ms Amy Lee")]
    path = tmp_path / "personas.xlsx"
    write_personas(path, people, descriptions={"Parents": "Mothers and fathers of pupils."})
    assert list(pd.read_excel(path, sheet_name="Personas").columns) == [
        PERSONA_COLUMN_TITLES[c] for c in PERSONA_COLUMNS]  # the editor's words
    got = read_personas(path)
    assert not got.issues
    assert got.groups == ["Parents", "Teachers"]
    assert got.descriptions == {"Parents": "Mothers and fathers of pupils."}
    fields = [c for c in PERSONA_COLUMNS if c != "group_description"]
    assert [[getattr(p, c) for c in fields] for p in got.personas] == \
        [[getattr(p, c) for c in fields] for p in people]
    assert all(p.origin == "imported" for p in got.personas)
    assert len({p.id for p in got.personas}) == 3


def test_rows_edited_in_excel_are_read_back(tmp_path):
    path = tmp_path / "personas.xlsx"
    write_personas(path, [persona("Parents", "Dana Ray")])
    frame = pd.read_excel(path, sheet_name="Personas", dtype=str, keep_default_na=False)
    frame.loc[1] = ["Clinicians", "Dr Omar Haddad", "A GP.", "Wants facts first.", "", "", "",
                    "", "", "", "Doctors in general practice."]
    frame.to_excel(path, sheet_name="Personas", index=False)
    got = read_personas(path)
    assert [p.name for p in got.personas] == ["Dana Ray", "Dr Omar Haddad"]
    assert got.groups == ["Parents", "Clinicians"]
    assert got.descriptions == {"Clinicians": "Doctors in general practice."}


def test_import_errors_name_row_and_column(tmp_path):
    path = tmp_path / "p.xlsx"
    pd.DataFrame({
        "Group": ["Parents", "Parents", "", "Parents"],
        "Name": ["Dana Ray", "dana ray", "Eli", "Fay"],
        "Perspective": ["x", "y", "z", ""],
        "Page": ["4", "p. 5", "four", ""],
    }).to_excel(path, sheet_name="Personas", index=False)
    got = read_personas(path)
    messages = [e.message for e in got.errors]
    assert not got.personas
    assert any('row 3, column B ("Name"): dana ray appears twice in group Parents (also row 2)'
               in m for m in messages)
    assert any('row 4, column A ("Group"): group is empty' in m for m in messages)
    assert any('row 4, column D ("Page"): “four” is not a page number' in m for m in messages)
    assert any('row 5, column C ("Perspective"): perspective is empty' in m for m in messages)
    assert any('no column "specialty"' in w.message for w in got.warnings)
    assert not any("group_description" in w.message for w in got.warnings)  # optional


def test_missing_required_column_and_wrong_sheet(tmp_path):
    path = tmp_path / "p.xlsx"
    pd.DataFrame({"group": ["A"], "name": ["B"]}).to_excel(path, sheet_name="Personas",
                                                          index=False)
    got = read_personas(path)
    assert [e.message for e in got.errors] == [
        'sheet "Personas" of p.xlsx has no column "perspective". Add it (the columns are: '
        + ", ".join(PERSONA_COLUMNS) + ")."]
    two = tmp_path / "two.xlsx"
    with pd.ExcelWriter(two) as writer:
        pd.DataFrame({"a": [1]}).to_excel(writer, sheet_name="One")
        pd.DataFrame({"a": [1]}).to_excel(writer, sheet_name="Two")
    with pytest.raises(TableError, match='no sheet called "Personas"'):
        read_personas(two)
