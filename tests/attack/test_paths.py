"""Attack suite, section 7: paths and names.

Files are read and written, and projects created and saved, in folders with spaces, accents,
other scripts and emoji, in very deep folders, and on a network-style path (``//host/...``).
A name Windows cannot hold (``< > : " / \\ | ? *``, control characters, a dot or space at the
end, a device name such as CON, more than 255 bytes) is refused before anything is written, with
a message that says which character and what to do, for every export and for the project's
New and Save As.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from core.paths import file_name_problem
from core.project import Project, ProjectError
from core.tables import Sheet, TableError, write_workbook
from tests.attack.conftest import files_in, run_importer, sheet_for, write_csv, write_xlsx

ODD_FOLDERS = {
    "spaces": "my  answers 2024 ",
    "accents": "Données élèves — résumé",
    "cjk": "評価データ",
    "rtl": "بيانات التقييم",
    "emoji": "results 😀👍🏽",
    "dots_and_quotes": "it's a 'test' (v1.2) & more",
}


def _sheet() -> list[Sheet]:
    return [Sheet("Data", pd.DataFrame({"answer": ["text"]}))]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("folder", list(ODD_FOLDERS.values()), ids=list(ODD_FOLDERS))
def test_odd_folder_names_read_write_and_project(tmp_path, folder):
    where = tmp_path / folder / folder
    where.mkdir(parents=True)
    headers, rows = sheet_for("majeval_items", ["first", "second"])
    for suffix, write in (("xlsx", write_xlsx), ("csv", write_csv)):
        source = write(where / f"{folder.strip()} items.{suffix}", headers, rows)
        outcome = run_importer("majeval_items", source)
        assert outcome.texts == ["first", "second"] and not outcome.errors
    out = where / f"{folder.strip()} export.xlsx"
    write_workbook(out, _sheet())
    assert out.exists()
    project = Project.create(where / f"{folder.strip()} project.evaldesk", method="majeval")
    try:
        project.save_as(where / f"{folder.strip()} copy.evaldesk")
    finally:
        project.close()
    assert (where / f"{folder.strip()} copy.evaldesk").exists()


@pytest.mark.timeout(30)
def test_very_long_path(tmp_path):
    """A folder chain about 3,500 bytes deep (Linux allows 4,096), names of 200 characters."""
    where = tmp_path
    while len(str(where).encode()) < 3_400:
        where = where / ("é" * 60 + "x" * 80)
    os.makedirs(where)
    headers, rows = sheet_for("ie_samples", ["one", "two"])
    source = write_csv(where / ("s" * 120 + ".csv"), headers, rows)
    assert run_importer("ie_samples", source).texts == ["one", "two"]
    out = where / ("r" * 150 + ".xlsx")
    write_workbook(out, _sheet())
    assert out.exists()


@pytest.mark.timeout(30)
def test_file_name_longer_than_255_bytes_refused_before_writing(tmp_path):
    out = tmp_path / ("é" * 130 + ".xlsx")  # 130 characters, 265 bytes
    with pytest.raises(TableError) as err:
        write_workbook(out, _sheet())
    assert "too long" in err.value.message and "255" in err.value.message
    assert files_in(tmp_path) == []
    with pytest.raises(ProjectError, match="too long"):
        Project.create(tmp_path / ("p" * 250 + ".evaldesk"))
    assert files_in(tmp_path) == []


@pytest.mark.timeout(30)
def test_network_style_path(tmp_path):
    """A path written as a network share (two leading slashes) works like any other."""
    share = Path("//" + str(tmp_path).lstrip("/")) / "share"
    share.mkdir()
    headers, rows = sheet_for("ie_notes", ["checks facts", "checks tone"])
    source = write_xlsx(share / "notes.xlsx", headers, rows)
    assert run_importer("ie_notes", source).texts == ["checks facts", "checks tone"]
    write_workbook(share / "out.xlsx", _sheet())
    project = Project.create(share / "p.evaldesk", method="interacteval")
    project.close()
    assert Project.open(share / "p.evaldesk") is not None


FORBIDDEN = {
    "less_than": "a<b", "greater_than": "a>b", "colon": "results: final", "quote": 'the "best"',
    "backslash": "a\\b", "pipe": "a|b", "question_mark": "why?", "star": "all*",
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("stem", list(FORBIDDEN.values()), ids=list(FORBIDDEN))
def test_windows_forbidden_characters_refused_for_exports(tmp_path, stem):
    with pytest.raises(TableError) as err:
        write_workbook(tmp_path / f"{stem}.xlsx", _sheet())
    bad = next(ch for ch in stem if ch in '<>:"\\|?*')
    assert bad in err.value.message and "Windows does not allow" in err.value.message
    assert files_in(tmp_path) == []  # nothing written, no temporary file


@pytest.mark.timeout(30)
@pytest.mark.parametrize("stem", list(FORBIDDEN.values()), ids=list(FORBIDDEN))
def test_windows_forbidden_characters_refused_for_new_project_and_save_as(tmp_path, stem):
    with pytest.raises(ProjectError) as err:
        Project.create(tmp_path / f"{stem}.evaldesk")
    assert "Windows does not allow" in str(err.value)
    assert files_in(tmp_path) == []
    project = Project.create(tmp_path / "fine.evaldesk")
    try:
        with pytest.raises(ProjectError, match="Windows does not allow"):
            project.save_as(tmp_path / f"{stem}.evaldesk")
        assert project.path == tmp_path / "fine.evaldesk"  # still working in the first file
    finally:
        project.close()
    assert [n for n in files_in(tmp_path) if not n.startswith(".")] == [
        "fine.evaldesk"]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name,words", [
    pytest.param("CON.xlsx", "device", id="reserved_con"),
    pytest.param("lpt1.xlsx", "device", id="reserved_lpt1"),
    pytest.param("nul.results.xlsx", "device", id="reserved_nul_with_dots"),
    pytest.param("report .xlsx", None, id="space_before_extension_allowed"),
    pytest.param("report.", "ends with a dot", id="trailing_dot"),
    pytest.param("report ", "ends with a dot or a space", id="trailing_space"),
    pytest.param("line\nbreak.xlsx", "control character", id="newline_in_name"),
    pytest.param("tab\there.xlsx", "control character", id="tab_in_name"),
    pytest.param("résumé 😀.xlsx", None, id="accents_and_emoji_allowed"),
    pytest.param("CONSOLE.xlsx", None, id="con_prefix_allowed"),
])
def test_windows_name_rules(tmp_path, name, words):
    problem = file_name_problem(name)
    if words is None:
        assert problem is None
        write_workbook(tmp_path / name, _sheet())
        return
    assert problem is not None and words in problem
    with pytest.raises(TableError):
        write_workbook(tmp_path / name, _sheet())
    assert files_in(tmp_path) == []


@pytest.mark.timeout(30)
def test_forbidden_name_refused_by_every_method_export(tmp_path):
    """The method exporters all go through write_workbook: each refuses the name."""
    from core.interacteval import Checklist, ChecklistItem, write_checklists
    from core.majeval import write_personas
    from tests.core.majeval.majeval_support import persona

    with pytest.raises(TableError, match="Windows does not allow"):
        write_personas(tmp_path / "personas?.xlsx", [persona("G", "N")])
    with pytest.raises(TableError, match="Windows does not allow"):
        write_checklists(tmp_path / "check|list.xlsx",
                         [Checklist(dimension="C", items=[ChecklistItem(question="q?")])])
    assert files_in(tmp_path) == []


@pytest.mark.timeout(30)
def test_inputs_with_windows_forbidden_names_are_still_read(tmp_path):
    """Only names we write are refused: a file someone else named "answers: v2?.csv" on a
    Mac or Linux is read as usual."""
    headers, rows = sheet_for("aqer_answers", ["yes", "no"])
    source = write_csv(tmp_path / "answers: v2?.csv", headers, rows)
    assert run_importer("aqer_answers", source).texts == ["yes", "no"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("output,words", [
    pytest.param("results?.xlsx", "Windows does not allow", id="forbidden_name"),
    pytest.param("answers.xlsx", "answers.xlsx itself", id="output_is_the_input"),
])
def test_aqer_cli_refuses_the_output_before_scoring(tmp_path, capsys, monkeypatch, output,
                                                     words):
    """``evaldesk aqer answers.xlsx -o ...``: a name Windows cannot hold, or the answers file
    itself, is refused before the answers are embedded; the answers file is untouched."""
    from core import cli

    def never(*a, **k):
        raise AssertionError("the answers were scored before the output was checked")

    monkeypatch.setattr("core.aqer.session.AqerSession.run", never)
    headers, rows = sheet_for("aqer_answers", ["yes", "no"])
    source = write_xlsx(tmp_path / "answers.xlsx", headers, rows)
    before = source.read_bytes()
    assert cli.main(["aqer", str(source), "-o", str(tmp_path / output)]) == 1
    err = capsys.readouterr().err
    assert words in err, err
    assert source.read_bytes() == before
    assert files_in(tmp_path) == ["answers.xlsx"]


@pytest.mark.timeout(30)
def test_aqer_template_with_forbidden_name_refused(tmp_path):
    from core.aqer.session import copy_template

    with pytest.raises(TableError, match="Windows does not allow"):
        copy_template(tmp_path / "template: answers?.xlsx")
    assert files_in(tmp_path) == []
    assert copy_template(tmp_path / "template answers.xlsx").exists()
