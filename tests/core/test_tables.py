"""Spreadsheet import and export (core/tables.py).

Every fixture file is made here, in tmp_path, with openpyxl / csv / xlwt; nothing binary is kept
in the repository. Files written by the export are read back with openpyxl and pandas.
"""

from __future__ import annotations

import datetime as dt
import errno
import math
import re
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from core import tables
from core.tables import (
    EXCEL_CELL_LIMIT,
    Sheet,
    TableError,
    TableRead,
    guess_mapping,
    list_sheets,
    map_columns,
    preview,
    read_table,
    write_workbook,
)

# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def make_xlsx(path: Path, rows, sheet: str = "Data", merges=(), more_sheets=None) -> Path:
    """Write ``rows`` (lists; None = empty cell) from A1 on, then merge the given ranges."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = sheet
    for r, row in enumerate(rows, start=1):
        for c, value in enumerate(row, start=1):
            if value is not None:
                ws.cell(row=r, column=c, value=value)
    for ref in merges:
        ws.merge_cells(ref)
    for name, more in (more_sheets or {}).items():
        other = wb.create_sheet(name)
        for row in more:
            other.append(row)
    wb.save(path)
    return path


def texts(issues) -> str:
    return "\n".join(i.message for i in issues)


def rewrite_member(path: Path, member: str, change) -> None:
    """Rewrite one part inside an xlsx zip with ``change(bytes) -> bytes``."""
    with zipfile.ZipFile(path) as zf:
        parts = {name: zf.read(name) for name in zf.namelist()}
    parts[member] = change(parts[member])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in parts.items():
            zf.writestr(name, data)


# ---------------------------------------------------------------------------------------------
# xlsx import: values as text, row numbers
# ---------------------------------------------------------------------------------------------


def test_xlsx_cells_come_back_as_the_text_a_person_sees(tmp_path):
    path = make_xlsx(
        tmp_path / "values.xlsx",
        [
            ["text", "int", "float", "small", "date", "datetime", "time", "bool", "empty"],
            [
                "  keep  spaces ",
                3,
                0.1 + 0.2,
                0.00001,
                dt.date(2024, 3, 5),
                dt.datetime(2024, 3, 5, 14, 30),
                dt.time(9, 5),
                True,
                None,
            ],
            [
                "x",
                -42,
                2.5,
                1234.5678,
                dt.datetime(2024, 12, 31),
                dt.datetime(2024, 1, 2, 3, 4, 5),
                dt.time(23, 59, 30),
                False,
                None,
            ],
        ],
    )
    read = read_table(path)
    assert read.sheet == "Data"
    assert read.encoding is None and read.delimiter is None
    first = read.frame.loc[2].to_dict()
    assert first == {
        "text": "  keep  spaces ",
        "int": "3",
        "float": "0.3",
        "small": "0.00001",
        "date": "2024-03-05",
        "datetime": "2024-03-05 14:30",
        "time": "09:05",
        "bool": "TRUE",
        "empty": "",
    }
    second = read.frame.loc[3].to_dict()
    assert second["int"] == "-42"
    assert second["float"] == "2.5"
    assert second["small"] == "1234.5678"
    assert second["date"] == "2024-12-31"
    assert second["datetime"] == "2024-01-02 03:04:05"
    assert second["time"] == "23:59:30"
    assert second["bool"] == "FALSE"
    assert all(isinstance(v, str) for v in read.frame.to_numpy().ravel())
    assert read.rows == [2, 3]
    assert read.frame.index.name == "row"
    assert read.header_row == 1
    assert read.ok and read.issues == []


def test_float_text_rules():
    assert tables._float_text(3.0) == "3"
    assert tables._float_text(-0.0) == "0"
    assert tables._float_text(0.1 + 0.2) == "0.3"
    assert tables._float_text(1e-05) == "0.00001"
    assert tables._float_text(123456789.125) == "123456789.125"
    assert tables._float_text(1e20) == "1e+20"


def test_header_lower_down_and_empty_rows_are_skipped_with_row_numbers(tmp_path):
    path = make_xlsx(
        tmp_path / "gaps.xlsx",
        [
            [],
            [],
            ["question", "answer"],
            ["Q1", "a"],
            [],
            ["Q2", "b"],
            [None, None],
            [],
            [],
            ["Q3", "c"],
            [],
            [],
        ],
    )
    read = read_table(path)
    assert read.header_row == 3
    assert read.rows == [4, 6, 10]
    assert list(read.frame["answer"]) == ["a", "b", "c"]
    warnings = [i for i in read.warnings if "empty" in i.message]
    assert len(warnings) == 1
    assert "Rows 5, 7–9 are empty and were skipped" in warnings[0].message
    assert warnings[0].row == 5
    # trailing empty rows (11, 12) are not reported: nothing follows them
    assert "11" not in warnings[0].message


def test_header_row_can_be_chosen(tmp_path):
    path = make_xlsx(
        tmp_path / "title.xlsx", [["Class 5 results"], [], ["name", "score"], ["A", 1]]
    )
    read = read_table(path, header_row=3)
    assert list(read.frame.columns) == ["name", "score"]
    assert read.rows == [4]


def test_blank_header_is_named_and_reported(tmp_path):
    path = make_xlsx(
        tmp_path / "blank.xlsx",
        [["question", "answer", None, None, "score"], ["Q1", "a", None, "note", 3]],
    )
    read = read_table(path)
    # column C is empty everywhere: dropped; column D has data but no header
    assert list(read.frame.columns) == ["question", "answer", "Column D", "score"]
    assert read.letters == {"question": "A", "answer": "B", "Column D": "D", "score": "E"}
    issue = next(i for i in read.issues if "no header" in i.message)
    assert issue.severity == "warning"
    assert "Column D has no header" in issue.message
    assert issue.column == 'D ("Column D")'
    assert 'sheet "Data"' in issue.message and "blank.xlsx" in issue.message


def test_duplicate_headers_are_told_apart(tmp_path):
    path = make_xlsx(tmp_path / "dup.xlsx", [["answer", "question", "answer"], ["a1", "q", "a2"]])
    read = read_table(path)
    assert list(read.frame.columns) == ["answer (A)", "question", "answer (C)"]
    assert read.frame.loc[2, "answer (C)"] == "a2"
    issue = next(i for i in read.issues if "header" in i.message)
    assert issue.severity == "warning"
    assert 'Columns A, C all have the header "answer"' in issue.message


def test_merged_header_and_merged_data_cells_are_reported(tmp_path):
    path = make_xlsx(
        tmp_path / "merged.xlsx",
        [["Answers", None, "score"], ["a", "b", 1], ["c", "d", 2], ["e", "f", 3]],
        merges=["A1:B1", "C3:C4"],
    )
    read = read_table(path)
    messages = texts(read.issues)
    assert "Header cells A1:B1 are merged" in messages
    assert "Unmerge them in Excel" in messages
    assert "Cells C3:C4 are merged: only C3 holds the value" in messages
    assert read.frame.loc[4, "score"] == ""  # the merged-away cell really is empty


def test_formula_without_cached_value_is_an_error(tmp_path):
    path = make_xlsx(
        tmp_path / "formula.xlsx", [["a", "b", "sum"], [1, 2, "=A2+B2"], [3, 4, "=A3+B3"]]
    )
    read = read_table(path)
    formula_errors = [i for i in read.errors if "formula" in i.message]
    assert [i.row for i in formula_errors] == [2, 3]
    assert "Cell C2 holds a formula whose result was never saved" in formula_errors[0].message
    assert "Open the file in Excel and save it again" in formula_errors[0].message
    assert formula_errors[0].column == 'C ("sum")'
    assert not read.ok


def test_formula_with_saved_result_is_read_without_complaint(tmp_path):
    path = make_xlsx(
        tmp_path / "cached.xlsx", [["a", "b", "sum", "label"], [1, 2, "=A2+B2", '=""']]
    )

    def save_results(xml: bytes) -> bytes:
        # what Excel writes: the formula plus its saved result (an empty text result has t="str")
        xml = re.sub(
            rb'<c r="C2"([^>]*)><f>A2\+B2</f><v\s*/>', rb'<c r="C2"\1><f>A2+B2</f><v>3</v>', xml
        )
        xml = re.sub(
            rb'<c r="D2"([^>]*)><f>""</f><v\s*/>', rb'<c r="D2"\1 t="str"><f>""</f><v></v>', xml
        )
        return xml

    rewrite_member(path, "xl/worksheets/sheet1.xml", save_results)
    read = read_table(path)
    assert read.frame.loc[2, "sum"] == "3"
    assert not [i for i in read.issues if "formula" in i.message]


def test_excel_error_values_are_kept_and_reported(tmp_path):
    path = make_xlsx(tmp_path / "err.xlsx", [["score"], ["#N/A"], [4]])
    read = read_table(path)
    assert read.frame.loc[2, "score"] == "#N/A"
    assert any('Excel error "#N/A"' in i.message and i.row == 2 for i in read.warnings)


def test_long_cell_is_read_in_full_with_a_warning(tmp_path):
    long_text = "x" * 40_000
    path = make_xlsx(
        tmp_path / "long.xlsx", [["id", "transcript"], ["1", "PLACEHOLDER"], ["2", "short"]]
    )
    # openpyxl cuts text to 32,767 characters when it writes, other programs do not
    rewrite_member(
        path,
        "xl/worksheets/sheet1.xml",
        lambda xml: xml.replace(b"PLACEHOLDER", long_text.encode()),
    )
    read = read_table(path)
    assert read.frame.loc[2, "transcript"] == long_text
    issue = next(i for i in read.warnings if "characters" in i.message)
    assert issue.row == 2 and issue.column == 'B ("transcript")'
    assert "40,000 characters" in issue.message and "32,767" in issue.message
    # a lower, method-chosen limit
    read = read_table(path, max_cell_chars=3)
    assert {i.row for i in read.warnings if "characters" in i.message} == {1, 2, 3}  # header too


def test_many_issues_of_one_kind_are_summed_up(tmp_path):
    rows = [["score"]] + [["#DIV/0!"] for _ in range(30)]
    read = read_table(make_xlsx(tmp_path / "many.xlsx", rows))
    errors = [i for i in read.warnings if 'the Excel error "#DIV/0!"' in i.message]
    assert len(errors) == tables._ISSUES_PER_KIND
    assert any("and 10 more cells show Excel errors" in i.message for i in read.warnings)


def test_empty_sheet_and_header_only_sheet_are_errors(tmp_path):
    path = make_xlsx(
        tmp_path / "empty.xlsx", [], sheet="Nothing", more_sheets={"Header": [["a", "b"]]}
    )
    empty = read_table(path, "Nothing")
    assert not empty.ok and empty.frame.empty
    assert 'sheet "Nothing"' in empty.errors[0].message
    assert "empty" in empty.errors[0].message
    header_only = read_table(path, "Header")
    assert list(header_only.frame.columns) == ["a", "b"] and len(header_only.frame) == 0
    assert "no data rows" in header_only.errors[0].message


def test_sheets_are_listed_and_chosen_by_name(tmp_path):
    path = make_xlsx(
        tmp_path / "book.xlsx",
        [["a"], ["1"]],
        sheet="First",
        more_sheets={"Data": [["q", "r"], ["x", "y"]], "Other": [["z"], ["9"]]},
    )
    assert list_sheets(path) == ["First", "Data", "Other"]
    assert read_table(path).sheet == "First"
    assert list(read_table(path, "Data").frame.columns) == ["q", "r"]
    assert read_table(path, "data").sheet == "Data"  # Excel sheet names ignore case
    with pytest.raises(TableError) as info:
        read_table(path, "Answers")
    message = str(info.value)
    assert 'There is no sheet "Answers" in "book.xlsx"' in message
    assert '"First", "Data", "Other"' in message


def test_preview_is_the_first_rows_as_text(tmp_path):
    rows = [["n", "sq"]] + [[i, i * i] for i in range(1, 101)]
    path = make_xlsx(tmp_path / "big.xlsx", rows)
    frame = preview(path, n=5)
    assert list(frame.index) == [2, 3, 4, 5, 6]
    assert list(frame["sq"]) == ["1", "4", "9", "16", "25"]
    csv_path = tmp_path / "big.csv"
    csv_path.write_text("n,sq\n" + "".join(f"{i},{i * i}\n" for i in range(1, 101)))
    assert list(preview(csv_path, n=3)["n"]) == ["1", "2", "3"]


# ---------------------------------------------------------------------------------------------
# CSV / text import
# ---------------------------------------------------------------------------------------------

WESTERN_ROWS = [
    ["question", "answer", "score"],
    ["What is a café?", "A place for “coffee” – about €3", "4"],
    ["Naïve?", "Straße, Ölfeld; déjà vu", "5"],
]


def write_delimited(path: Path, rows, delimiter: str, encoding: str) -> Path:
    lines = []
    for row in rows:
        cells = []
        for cell in row:
            if delimiter in cell or '"' in cell or "\n" in cell:
                cell = '"' + cell.replace('"', '""') + '"'
            cells.append(cell)
        lines.append(delimiter.join(cells))
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode(encoding))
    return path


@pytest.mark.parametrize(
    ("encoding", "delimiter", "expected_encoding", "guessed"),
    [
        ("cp1252", ";", "cp1252", True),
        ("utf-8-sig", ";", "utf-8-sig", False),
        ("utf-8", "\t", "utf-8", False),
        ("utf-16", "\t", "utf-16", False),
        ("utf-16", ",", "utf-16", False),
        ("cp1252", "\t", "cp1252", True),
    ],
)
def test_csv_encodings_and_delimiters(tmp_path, encoding, delimiter, expected_encoding, guessed):
    path = write_delimited(tmp_path / "answers.csv", WESTERN_ROWS, delimiter, encoding)
    read = read_table(path)
    assert read.encoding == expected_encoding
    assert read.delimiter == delimiter
    assert read.sheet == "answers.csv"
    assert list(read.frame.columns) == WESTERN_ROWS[0]
    assert read.frame.values.tolist() == WESTERN_ROWS[1:]
    assert read.rows == [2, 3]
    encoding_notes = [i for i in read.warnings if "UTF-8" in i.message]
    assert bool(encoding_notes) == guessed
    if guessed:
        assert "Windows-1252" in encoding_notes[0].message


def test_latin1_csv_reads_the_right_letters(tmp_path):
    rows = [["nom", "remarque"], ["José", "très bien, à côté"], ["Zoë", "garçon"]]
    path = write_delimited(tmp_path / "notes.csv", rows, ";", "latin-1")
    read = read_table(path)
    assert read.frame.values.tolist() == rows[1:]
    assert read.encoding in ("cp1252", "latin-1")  # the same letters for these bytes
    assert any("was read as" in i.message for i in read.warnings)


def test_cyrillic_cp1251_is_not_mistaken_for_western(tmp_path):
    rows = [["вопрос", "ответ"], ["Что такое кофе?", "Напиток из зёрен"], ["Где?", "Здесь и там"]]
    path = write_delimited(tmp_path / "ru.csv", rows, ";", "cp1251")
    read = read_table(path)
    assert read.frame.values.tolist() == rows[1:]


def test_utf16_without_bom(tmp_path):
    path = tmp_path / "u16.txt"
    path.write_bytes("q\ta\nhé\twörld\n".encode("utf-16-le"))
    read = read_table(path)
    assert read.frame.values.tolist() == [["hé", "wörld"]]
    assert read.delimiter == "\t"


def test_csv_delimiter_is_not_fooled_by_commas_in_text(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("q;answer\nQ1;yes, and no, maybe\nQ2;one, two\nQ3;three\n", encoding="utf-8")
    read = read_table(path)
    assert read.delimiter == ";"
    assert read.frame.loc[2, "answer"] == "yes, and no, maybe"


def test_csv_pipe_and_excel_sep_hint(tmp_path):
    pipe = tmp_path / "pipe.txt"
    pipe.write_text("a|b\n1|2\n3|4\n", encoding="utf-8")
    assert read_table(pipe).delimiter == "|"
    hinted = tmp_path / "hint.csv"
    hinted.write_text("sep=;\na;b,c\n1;2,5\n", encoding="utf-8")
    read = read_table(hinted)
    assert read.delimiter == ";"
    assert list(read.frame.columns) == ["a", "b,c"]
    assert read.rows == [2]


def test_csv_row_numbers_count_records_not_lines(tmp_path):
    path = tmp_path / "multi.csv"
    path.write_text('q,answer\nQ1,"line one\nline two"\n\nQ2,x\n', encoding="utf-8", newline="")
    read = read_table(path)
    assert read.frame.loc[2, "answer"] == "line one\nline two"
    assert read.rows == [2, 4]
    assert "Row 3 is empty" in texts(read.warnings)


def test_csv_ragged_rows_and_single_column(tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1\n2,3,extra\n", encoding="utf-8")
    read = read_table(ragged)
    assert list(read.frame.columns) == ["a", "b", "Column C"]
    assert read.frame.values.tolist() == [["1", "", ""], ["2", "3", "extra"]]
    single = tmp_path / "single.csv"
    single.write_text("answer\nfirst\nsecond\n", encoding="utf-8")
    assert read_table(single).frame["answer"].tolist() == ["first", "second"]


def test_csv_long_cell_warning_and_where(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("id,text\n1," + "y" * 40_000 + "\n", encoding="utf-8")
    read = read_table(path)
    assert len(read.frame.loc[2, "text"]) == 40_000
    issue = read.warnings[0]
    assert issue.message.startswith('long.csv, row 2, column B ("text")')
    assert "sheet" not in issue.message
    assert read.where(2, "text") == 'long.csv, row 2, column B ("text")'


def test_csv_has_one_pseudo_sheet(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("x\n1\n", encoding="utf-8")
    assert list_sheets(path) == ["a.csv"]
    assert read_table(path, "a.csv").ok
    with pytest.raises(TableError, match="has no sheet"):
        read_table(path, "Sheet1")


# ---------------------------------------------------------------------------------------------
# xls import (real .xls files written with xlwt, a test-only dependency)
# ---------------------------------------------------------------------------------------------


def test_xls_values_sheets_and_merges(tmp_path):
    xlwt = pytest.importorskip("xlwt")
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Data")
    for c, h in enumerate(["question", "n", "when", "ok", "note"]):
        ws.write(0, c, h)
    ws.write(1, 0, "héllo")
    ws.write(1, 1, 3)
    ws.write(1, 2, dt.date(2024, 3, 5), xlwt.easyxf(num_format_str="YYYY-MM-DD"))
    ws.write(1, 3, True)
    ws.write(2, 0, "second")
    ws.write(2, 1, 2.5)
    ws.write_merge(3, 3, 0, 1, "merged")
    ws.write(5, 0, "after a gap")
    wb.add_sheet("Other").write(0, 0, "x")
    path = tmp_path / "old.xls"
    wb.save(str(path))

    assert list_sheets(path) == ["Data", "Other"]
    read = read_table(path)
    assert read.frame.loc[2].tolist() == ["héllo", "3", "2024-03-05", "TRUE", ""]
    assert read.frame.loc[3, "n"] == "2.5"
    assert read.rows == [2, 3, 4, 6]
    messages = texts(read.warnings)
    assert "Cells A4:B4 are merged" in messages
    assert "Row 5 is empty" in messages
    with pytest.raises(TableError, match='no sheet "Nope"'):
        read_table(path, "Nope")


# ---------------------------------------------------------------------------------------------
# files that cannot be read at all
# ---------------------------------------------------------------------------------------------


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(TableError, match="does not exist") as info:
        read_table(tmp_path / "nope.xlsx")
    assert info.value.path == tmp_path / "nope.xlsx"
    with pytest.raises(TableError, match="is a folder"):
        read_table(tmp_path)


def test_unreadable_file(tmp_path, monkeypatch):
    path = make_xlsx(tmp_path / "locked.xlsx", [["a"], [1]])
    real_open = open

    def deny(file, *args, **kwargs):
        if Path(file) == path:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(tables, "open", deny, raising=False)
    with pytest.raises(TableError, match="not allowed to read"):
        read_table(path)


def test_empty_file(tmp_path):
    path = tmp_path / "zero.xlsx"
    path.write_bytes(b"")
    with pytest.raises(TableError, match=r"is empty \(0 bytes\)"):
        read_table(path)


def test_pdf_renamed_xlsx(tmp_path):
    path = tmp_path / "report.xlsx"
    path.write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n")
    with pytest.raises(TableError, match="is a PDF document, not a spreadsheet"):
        read_table(path)
    with pytest.raises(TableError, match="PDF"):
        list_sheets(path)


def test_random_bytes_renamed_xlsx(tmp_path):
    path = tmp_path / "noise.xlsx"
    path.write_bytes(bytes(range(256)) * 20)
    with pytest.raises(TableError, match="is not a spreadsheet"):
        read_table(path)


def test_truncated_and_corrupt_xlsx(tmp_path):
    good = make_xlsx(tmp_path / "good.xlsx", [["a", "b"], [1, 2]])
    data = good.read_bytes()
    truncated = tmp_path / "truncated.xlsx"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(TableError, match="damaged or incomplete") as info:
        read_table(truncated)
    assert "truncated.xlsx" in str(info.value)
    # a valid zip whose sheet part is garbage
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(data)
    rewrite_member(broken, "xl/worksheets/sheet1.xml", lambda xml: xml[: len(xml) // 2])
    with pytest.raises(TableError, match="damaged or incomplete"):
        read_table(broken)


def test_zip_and_word_documents_are_not_workbooks(tmp_path):
    plain_zip = tmp_path / "archive.xlsx"
    with zipfile.ZipFile(plain_zip, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(TableError, match="zip archive"):
        read_table(plain_zip)
    word = tmp_path / "letter.xlsx"
    with zipfile.ZipFile(word, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("word/document.xml", "<document/>")
    with pytest.raises(TableError, match="Word or PowerPoint"):
        read_table(word)


def test_password_protected_xlsx_real(tmp_path):
    pytest.importorskip("msoffcrypto")
    from msoffcrypto.format.ooxml import OOXMLFile

    plain = make_xlsx(tmp_path / "plain.xlsx", [["a"], [1]])
    locked = tmp_path / "locked.xlsx"
    with open(plain, "rb") as src, open(locked, "wb") as out:
        OOXMLFile(src).encrypt("secret", out)
    assert locked.read_bytes()[:4] == b"\xd0\xcf\x11\xe0"
    for call in (read_table, list_sheets):
        with pytest.raises(TableError) as info:
            call(locked)
        message = str(info.value)
        assert "protected with a password" in message
        assert "File → Info → Protect Workbook" in message
        assert "locked.xlsx" in message


def test_password_protected_xlsx_ole2_container(tmp_path):
    # the shape of an encrypted workbook: an OLE2 container with an EncryptionInfo stream
    path = tmp_path / "handmade.xlsx"
    body = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
    body += "EncryptionInfo".encode("utf-16-le") + b"\x00" * 100
    path.write_bytes(body)
    with pytest.raises(TableError, match="protected with a password"):
        read_table(path)


def test_other_ole2_documents_are_not_spreadsheets(tmp_path):
    path = tmp_path / "letter.xls"
    path.write_bytes(
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504 + "WordDocument".encode("utf-16-le")
    )
    with pytest.raises(TableError, match="older Office document"):
        read_table(path)


def test_xls_that_is_really_html_or_csv(tmp_path):
    html = tmp_path / "export.xls"
    html.write_text("<html><body><table><tr><td>a</td></tr></table></body></html>")
    with pytest.raises(TableError, match=r"web page \(HTML\)") as info:
        read_table(html)
    assert "save it as an Excel Workbook (.xlsx)" in str(info.value)
    text = tmp_path / "export2.xls"
    text.write_text("a,b\n1,2\n")
    with pytest.raises(TableError, match=r"text \(CSV\) file with an Excel name"):
        read_table(text)
    xml = tmp_path / "export3.xls"
    xml.write_text(
        '<?xml version="1.0"?><Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet"/>'
    )
    with pytest.raises(TableError, match="XML"):
        read_table(xml)


def test_binary_file_named_csv(tmp_path):
    path = tmp_path / "image.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    with pytest.raises(TableError, match="not a spreadsheet or a text table"):
        read_table(path)


def test_xlsx_named_csv_is_read_as_a_workbook(tmp_path):
    path = tmp_path / "really.csv"
    make_xlsx(tmp_path / "tmp.xlsx", [["a"], ["1"]]).rename(path)
    read = read_table(path)
    assert read.frame["a"].tolist() == ["1"]


# ---------------------------------------------------------------------------------------------
# column mapping
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def answers(tmp_path) -> TableRead:
    path = make_xlsx(
        tmp_path / "answers.xlsx",
        [
            ["Q", "Student", "answer ", "notes"],
            ["q1", "ann", "yes", None],
            [None, None, None, None],
            ["q2", "bob", "no", None],
        ],
    )
    return read_table(path)


def test_map_columns_renames_to_roles_and_keeps_row_numbers(answers):
    mapped = map_columns(
        answers,
        {"question": "Q", "worker": "Student", "response": "answer "},
        ["question", "worker", "response"],
    )
    assert mapped.ok
    assert list(mapped.frame.columns) == ["question", "worker", "response"]
    assert mapped.frame.loc[4].tolist() == ["q2", "bob", "no"]
    assert mapped.rows == [2, 4]
    assert mapped.column_label("response") == 'C ("answer ")'
    issue = mapped.issue("error", "the answer is too short.", row=4, role="response")
    assert (
        issue.message
        == 'answers.xlsx, sheet "Data", row 4, column C ("answer "): the answer is too short.'
    )
    assert issue.row == 4 and issue.column == 'C ("answer ")' and issue.column_name == "answer "


def test_map_columns_reports_missing_roles_and_suggests_columns(answers):
    mapped = map_columns(
        answers,
        {"question": "Q", "worker": None, "response": "Answer", "gold": "reference"},
        ["question", "worker", "response"],
    )
    assert not mapped.ok
    messages = texts(mapped.errors)
    assert 'Choose the column that holds "worker"' in messages
    assert 'There is no column "Answer" in sheet "Data"; did you mean "answer "?' in messages
    assert 'There is no column "reference"' in messages
    assert '"Q", "Student", "answer ", "notes"' in messages
    assert list(mapped.frame.columns) == ["question"]
    with pytest.raises(TableError, match="cannot be used"):
        mapped.raise_for_errors()


def test_map_columns_empty_required_column_and_shared_column(answers):
    mapped = map_columns(
        answers, {"question": "Q", "response": "notes", "worker": "Q"}, ["question", "response"]
    )
    assert any('the column chosen for "response" is empty' in i.message for i in mapped.errors)
    assert any('is chosen for "question" and "worker"' in i.message for i in mapped.warnings)


def test_guess_mapping():
    columns = ["Question ID", "Question text", "Student", "Answer", "Score (0-5)", "Comments"]
    roles = {
        "question": ["question text", "prompt", "item"],
        "worker": ["student", "respondent", "name"],
        "response": ["answer", "response", "reply"],
        "score": ["score", "grade", "rating"],
        "model": ["model", "llm"],
    }
    assert guess_mapping(columns, roles) == {
        "question": "Question text",
        "worker": "Student",
        "response": "Answer",
        "score": "Score (0-5)",
        "model": None,
    }
    # exact matches win over partial ones, and a column serves one role only
    assert guess_mapping(["answer id", "answer"], {"id": [], "response": ["answer"]}) == {
        "id": "answer id",
        "response": "answer",
    }
    assert guess_mapping(["Answer"], {"a": ["answer"], "b": ["answer"]}) == {
        "a": "Answer",
        "b": None,
    }


# ---------------------------------------------------------------------------------------------
# export
# ---------------------------------------------------------------------------------------------


def sample_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "worker": ["ann", "bob", "cat"],
            "score": [0.75, float("nan"), -0.5],
            "rank": [1, 3, 2],
            "passed": [True, False, None],
            "when": [dt.date(2024, 3, 5), None, dt.datetime(2024, 3, 6, 10, 0)],
            "comment": ["Clear and complete.\nSecond line.", None, "failed"],
        }
    )


def test_export_round_trip_and_styling(tmp_path):
    path = tmp_path / "results.xlsx"
    report = write_workbook(
        path,
        [
            Sheet(
                "Workers", sample_frame(), "One row per worker.", number_formats={"score": "0.000"}
            ),
            Sheet("Group scores", pd.DataFrame({"group": ["a"], "mean": [0.5]}), "Means."),
        ],
        readme=[("Method", "AQER"), ("Model", "evaldesk-local/gemma"), ("Iterations", 12)],
    )
    assert report.path == path
    assert report.sheets == ["Workers", "Group scores", "Read me"]
    assert report.renamed == {} and report.cut_cells == [] and report.notes == []

    back = pd.read_excel(path, sheet_name="Workers")
    assert back["worker"].tolist() == ["ann", "bob", "cat"]
    assert back["score"].iloc[0] == 0.75 and math.isnan(back["score"].iloc[1])
    assert back["rank"].tolist() == [1, 3, 2]

    wb = openpyxl.load_workbook(path)
    ws = wb["Workers"]
    assert ws["B2"].value == 0.75 and ws["B2"].data_type == "n"
    assert ws["B2"].number_format == "0.000"
    assert ws["B3"].value is None  # NaN -> empty cell
    assert ws["B4"].value == -0.5
    assert ws["C2"].value == 1 and isinstance(ws["C2"].value, int)
    assert ws["D2"].value is True and ws["D4"].value is None
    assert ws["E2"].value == dt.datetime(2024, 3, 5) and ws["E2"].number_format == "yyyy-mm-dd"
    assert ws["E4"].number_format == "yyyy-mm-dd hh:mm:ss"
    assert ws["F2"].value == "Clear and complete.\nSecond line."
    assert ws["F4"].value == "failed"
    assert ws["A1"].font.bold and ws["F1"].font.bold
    assert ws.freeze_panes == "A2"
    assert ws.auto_filter.ref == "A1:F4"
    assert ws["F2"].alignment.wrap_text and ws["A2"].alignment.wrap_text
    assert not ws["B2"].alignment.wrap_text
    width_comment = ws.column_dimensions["F"].width
    assert 8 <= ws.column_dimensions["B"].width <= 20
    assert width_comment <= 60

    readme = wb["Read me"]
    cells = [[c.value for c in row] for row in readme.iter_rows()]
    flat = [v for row in cells for v in row if v is not None]
    assert ["Method", "AQER", None] in cells
    assert ["Iterations", 12, None] in cells
    assert ["Workers", "One row per worker.", 3] in cells
    assert ["Group scores", "Means.", 1] in cells
    assert "Export notes" in flat
    assert any("Nothing had to be changed" in str(v) for v in flat)


def test_widths_can_be_given_and_long_text_columns_are_capped(tmp_path):
    frame = pd.DataFrame({"short": ["a"], "long": ["word " * 200], "fixed": ["x"]})
    path = tmp_path / "w.xlsx"
    write_workbook(path, [Sheet("S", frame, widths={"fixed": 42}, wrap=False)])
    ws = openpyxl.load_workbook(path)["S"]
    assert ws.column_dimensions["C"].width == 42
    assert ws.column_dimensions["B"].width <= 80
    assert ws.column_dimensions["A"].width >= 8
    assert not ws["B2"].alignment.wrap_text


def test_formula_injection_is_neutralised(tmp_path):
    values = [
        "=1+1",
        "+cmd|' /C calc'!A0",
        "-2+3",
        "@SUM(A1:A2)",
        "\tx",
        "- a bullet",
        "-3.5",
        "+7",
        "-",
        "safe",
    ]
    frame = pd.DataFrame({"text": values, "number": [-3.5] * len(values)})
    path = tmp_path / "inj.xlsx"
    report = write_workbook(path, [Sheet("Responses", frame)])
    ws = openpyxl.load_workbook(path)["Responses"]
    got = [ws.cell(row=i, column=1).value for i in range(2, len(values) + 2)]
    assert got == [
        "'=1+1",
        "'+cmd|' /C calc'!A0",
        "'-2+3",
        "'@SUM(A1:A2)",
        "'\tx",
        "'- a bullet",
        "-3.5",
        "+7",
        "-",
        "safe",
    ]
    assert all(ws.cell(row=i, column=1).data_type == "s" for i in range(2, len(values) + 2))
    assert ws["B2"].value == -3.5 and ws["B2"].data_type == "n"
    note = next(n for n in report.notes if "begin with =, +, - or @" in n)
    assert "6 cell(s)" in note and "A2" in note
    # pandas reads them back as text, never as formulas or numbers
    assert pd.read_excel(path)["text"].iloc[0] == "'=1+1"


def test_illegal_characters_are_stripped_and_noted(tmp_path):
    frame = pd.DataFrame(
        {"text": ["bell\x07 and null\x00 end", "fine\ttab\nnewline"], "h\x01": [1, 2]}
    )
    path = tmp_path / "ctrl.xlsx"
    report = write_workbook(path, [Sheet("S", frame)])
    ws = openpyxl.load_workbook(path)["S"]
    assert ws["A2"].value == "bell and null end"
    assert ws["A3"].value == "fine\ttab\nnewline"
    assert ws["B1"].value == "h"
    note = next(n for n in report.notes if "control characters" in n)
    assert "A2" in note and "B1" in note
    assert any(
        "control characters" in str(c.value) for c in openpyxl.load_workbook(path)["Read me"]["B"]
    )


def test_cells_over_the_excel_limit_are_cut_visibly(tmp_path):
    long_text = "".join(f"{i:06d} " for i in range(10_000))  # 70,000 characters
    emoji_text = "😀" * 20_000  # 20,000 characters, 40,000 UTF-16 units
    frame = pd.DataFrame({"id": [1, 2, 3], "transcript": [long_text, "short", emoji_text]})
    path = tmp_path / "long.xlsx"
    report = write_workbook(path, [Sheet("Transcripts", frame, "Full transcripts.")])
    assert [c.cell for c in report.cut_cells] == ["B2", "B4"]
    cut = report.cut_cells[0]
    assert cut.sheet == "Transcripts" and cut.column == "transcript" and cut.length == 70_000
    assert cut.full_text_at == 'sheet "Long texts", rows 2–4'

    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == ["Transcripts", "Long texts", "Read me"]
    cell = wb["Transcripts"]["B2"].value
    assert len(cell) <= EXCEL_CELL_LIMIT
    assert cell.startswith(long_text[: cut.kept]) and len(cell) > 32_000
    assert cell.endswith('full text in sheet "Long texts", rows 2–4]')
    assert "[cut: " in cell
    emoji_cell = wb["Transcripts"]["B4"].value
    assert len(emoji_cell.encode("utf-16-le")) // 2 <= EXCEL_CELL_LIMIT
    assert wb["Transcripts"]["B3"].value == "short"

    long_sheet = pd.read_excel(path, sheet_name="Long texts", dtype=str)
    parts = long_sheet[long_sheet["cell"] == "B2"]
    assert parts["part"].tolist() == ["1 of 3", "2 of 3", "3 of 3"]
    assert "".join(parts["text"]) == long_text
    emoji_parts = long_sheet[long_sheet["cell"] == "B4"]
    assert "".join(emoji_parts["text"]) == emoji_text
    assert all(len(t.encode("utf-16-le")) // 2 <= EXCEL_CELL_LIMIT for t in long_sheet["text"])

    readme_text = " ".join(
        str(c.value) for row in wb["Read me"].iter_rows() for c in row if c.value
    )
    assert "cell B2" in readme_text and "70,000 characters" in readme_text
    assert "Long texts" in readme_text


def test_sheet_names_are_made_valid_and_unique(tmp_path):
    frame = pd.DataFrame({"a": [1]})
    names = [
        "LLM answers",
        "Scores: 2024/25?",
        "x" * 40,
        "llm ANSWERS",
        "Read me",
        "History",
        "'quoted'",
    ]
    report = write_workbook(
        tmp_path / "n.xlsx", [Sheet(n, frame) for n in names], readme_first=True
    )
    wb = openpyxl.load_workbook(tmp_path / "n.xlsx")
    assert wb.sheetnames == report.sheets
    assert report.sheets[0] == "Read me (2)"
    assert report.sheets[1:] == [
        "LLM answers",
        "Scores_ 2024_25_",
        "x" * 31,
        "llm ANSWERS (2)",
        "Read me",
        "History (sheet)",
        "quoted",
    ]
    assert "LLM answers" not in report.renamed
    assert report.renamed["Scores: 2024/25?"] == "Scores_ 2024_25_"
    assert all(len(n) <= 31 for n in report.sheets)
    assert any("31 characters" in n for n in report.notes)


def test_empty_frames_are_written(tmp_path):
    path = tmp_path / "empty.xlsx"
    write_workbook(
        path, [Sheet("No columns", pd.DataFrame()), Sheet("No rows", pd.DataFrame({"a": []}))]
    )
    wb = openpyxl.load_workbook(path)
    assert wb["No columns"]["A1"].value == "This sheet is empty."
    assert wb["No rows"]["A1"].value == "a" and wb["No rows"].max_row == 1


def test_export_path_rules(tmp_path):
    report = write_workbook(tmp_path / "noext", [Sheet("S", pd.DataFrame({"a": [1]}))])
    assert report.path == tmp_path / "noext.xlsx" and report.path.exists()
    with pytest.raises(TableError, match="ending in .xlsx"):
        write_workbook(tmp_path / "out.csv", [])
    with pytest.raises(TableError, match="does not exist"):
        write_workbook(tmp_path / "missing" / "out.xlsx", [])


def test_failed_replace_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "results.xlsx"
    write_workbook(path, [Sheet("Old", pd.DataFrame({"a": [1]}))])
    before = path.read_bytes()

    def locked(src, dst):
        raise PermissionError(errno.EACCES, "The process cannot access the file")

    monkeypatch.setattr(tables.os, "replace", locked)
    with pytest.raises(TableError, match="Close it in Excel and try again"):
        write_workbook(path, [Sheet("New", pd.DataFrame({"a": [2]}))])
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.xlsx"]


def test_disk_full_and_unwritable_folder(tmp_path, monkeypatch):
    path = tmp_path / "results.xlsx"
    write_workbook(path, [Sheet("S", pd.DataFrame({"a": [0]}))])  # an earlier export
    old = path.read_bytes()

    def full(self, filename):
        with open(filename, "wb") as fh:
            fh.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(openpyxl.Workbook, "save", full)
    with pytest.raises(TableError, match="disk is full"):
        write_workbook(path, [Sheet("S", pd.DataFrame({"a": [1]}))])
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.xlsx"]
    monkeypatch.undo()

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr("tempfile.mkstemp", denied)  # the temporary file beside the target
    with pytest.raises(TableError, match="may not write in the folder"):
        write_workbook(path, [Sheet("S", pd.DataFrame({"a": [1]}))])


def test_read_only_target_is_reported(tmp_path, monkeypatch):
    path = tmp_path / "ro.xlsx"
    path.write_bytes(b"old")
    monkeypatch.setattr(tables.os, "access", lambda p, mode: False)
    with pytest.raises(TableError, match="read-only or open in another program"):
        write_workbook(path, [])


def test_export_then_import_round_trip(tmp_path):
    frame = pd.DataFrame({"question": ["Q1", "Q2"], "score": [3, 0.25], "note": ["=x", ""]})
    path = tmp_path / "rt.xlsx"
    write_workbook(path, [Sheet("Scores", frame)])
    read = read_table(path, "Scores")
    assert read.frame.values.tolist() == [["Q1", "3", "'=x"], ["Q2", "0.25", ""]]
    assert read.ok


def test_numpy_and_pandas_values(tmp_path):
    import numpy as np

    frame = pd.DataFrame(
        {
            "i": np.array([1, 2], dtype="int64"),
            "f": np.array([0.5, np.nan], dtype="float32"),
            "big": [12345678901234567890, 1],
            "ts": [pd.Timestamp("2024-01-02 03:04:05"), pd.NaT],
            "na": pd.array([pd.NA, 1], dtype="Int64"),
            "inf": [float("inf"), 1.0],
        }
    )
    path = tmp_path / "np.xlsx"
    report = write_workbook(path, [Sheet("S", frame)])
    ws = openpyxl.load_workbook(path)["S"]
    assert ws["A2"].value == 1 and ws["B2"].value == 0.5 and ws["B3"].value is None
    assert ws["C2"].value == "12345678901234567890"
    assert ws["D2"].value == dt.datetime(2024, 1, 2, 3, 4, 5) and ws["D3"].value is None
    assert ws["E2"].value is None and ws["E3"].value == 1
    assert ws["F2"].value == "infinity"
    assert any("written as text" in n and "C2" in n and "F2" in n for n in report.notes)


def test_module_import_is_cheap():
    import subprocess
    import sys

    code = "import sys, core.tables; print('pandas' in sys.modules, 'openpyxl' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout.split()
    assert out == ["False", "False"]


def test_shared_data_tsv_reads(shared_data):
    path = shared_data / "powergrading" / "studentanswers_grades_100.tsv"
    if not path.exists():
        pytest.skip("powergrading data not present")
    read = read_table(path)
    assert read.delimiter == "\t"
    assert len(read.frame) > 10
    assert all(isinstance(v, str) for v in read.frame.iloc[0])


# ------------------------------------------------------------------ small shared cell helpers


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4", 4.0), (" 3.5 ", 3.5), ("3,5", 3.5), ("-2", -2.0), ("1e2", 100.0), (7, 7.0),
     ("", None), ("   ", None), ("n/a", None), ("inf", None), ("nan", None), ("1,234.5", None)],
)
def test_cell_number(text, expected):
    from core.tables import cell_number

    assert cell_number(text) == expected


def test_guess_named_column_matches_whole_names_only_and_skips_taken_columns():
    from core.tables import guess_named_column

    columns = ["system_id", "Item ID", "text", "item_id"]
    assert guess_named_column(columns, ["itemid", "id"]) == "Item ID"
    assert guess_named_column(columns, ["itemid"], taken=["Item ID"]) == "item_id"
    assert guess_named_column(columns, ["id"]) is None  # "system_id" is not an "id"


# ------------------------------------------------------------- mapped rows (every "row per item" reader)
def test_read_mapped_rows_names_rows_and_columns(tmp_path):
    from core.tables import read_mapped_rows

    path = tmp_path / "items.csv"
    path.write_text(
        "Item,Text,Rating\n"
        "a,First text,4\n"
        ",Second text,x\n"
        "c,,3\n"
        "a,Fourth text,2\n",
        encoding="utf-8",
    )
    read = read_mapped_rows(
        path, None, {"id": "Item", "text": "Text", "human": "Rating"},
        lambda row: (row.id, row.get("text"), row.numbers.get("human")),
        required="text", numbers={"human": "human rating"}, one="text", empty="no text",
    )
    assert read.items == [("a", "First text", 4.0), ("row 3", "Second text", None)]
    assert any("row 3" in p and "“x” is not a number" in p and "human rating" in p
               for p in read.problems)
    assert any("row 4" in p and "no text; the row is skipped" in p for p in read.problems)
    assert read.errors == [next(e for e in read.errors if "row 5" in e)]
    assert "also in row 2" in read.errors[0] and "every text needs its own id" in read.errors[0]


def test_read_mapped_rows_without_the_required_column_or_items(tmp_path):
    from core.tables import read_mapped_rows

    path = tmp_path / "items.csv"
    path.write_text("Item,Text\na,\n", encoding="utf-8")
    read = read_mapped_rows(path, None, {"text": None}, lambda row: row, required="text")
    assert read.errors and 'Choose the column that holds "text"' in read.errors[0]
    assert "empty" in read_mapped_rows(path, None, {"text": "Text"}, lambda row: row,
                                       required="text").errors[-1]
    path.write_text("Item,Text\na,skip me\n", encoding="utf-8")
    read = read_mapped_rows(path, None, {"text": "Text"}, lambda row: None, required="text",
                            what="texts")
    assert read.items == [] and read.errors[-1].endswith("has no texts.")
