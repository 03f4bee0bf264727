"""Attack suite, section 1: hostile and awkward spreadsheets, given to every importer.

Each case gives one file to every importer of the three methods (AQER answers and grades,
MAJ-Eval items, personas and dimensions, InteractEval samples, texts, notes and checklists,
see ``conftest.IMPORTERS``) and checks what a person would see: either the data read exactly,
or a clear message naming the file (and row or cell) with what to do. Never a traceback, a hang
or a silently changed value.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.attack.conftest import (
    IMPORTERS,
    inline_row,
    raw_xlsx,
    run_importer,
    run_limited,
    sheet_for,
    sheet_xml,
    write_csv,
    write_xlsx,
)

ALL = list(IMPORTERS)
#: Importers whose main column holds free text (the grades importer reads numbers).
TEXT = [k for k in ALL if k != "aqer_grades"]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _good_xlsx(tmp_path: Path, kind: str, name: str = "data.xlsx") -> Path:
    headers, rows = sheet_for(kind, ["4", "5"] if kind == "aqer_grades" else
                              ["The first text", "The second text"])
    return write_xlsx(tmp_path / name, headers, rows)


def _assert_clear_error(outcome, name: str, *words: str) -> None:
    assert outcome.errors, f"expected an error, got texts {outcome.texts!r}"
    text = " ".join(outcome.errors)
    assert name in text, text
    assert "Traceback" not in text
    for word in words:
        assert word.lower() in text.lower(), text


# --------------------------------------------------------------------------------------------
# Files that cannot be read: a clear message from every importer
# --------------------------------------------------------------------------------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ALL)
def test_xlsx_truncated(tmp_path, kind):
    good = _good_xlsx(tmp_path, kind)
    path = tmp_path / "truncated.xlsx"
    path.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    _assert_clear_error(run_importer(kind, path), "truncated.xlsx", "damaged or incomplete")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ALL)
def test_xlsx_corrupt_sheet_xml(tmp_path, kind):
    path = raw_xlsx(tmp_path / "corrupt.xlsx", b"<worksheet><sheetData><row r='1'><c r=")
    _assert_clear_error(run_importer(kind, path), "corrupt.xlsx", "damaged")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ALL)
def test_xlsx_flipped_bytes_in_zip(tmp_path, kind):
    data = bytearray(_good_xlsx(tmp_path, kind).read_bytes())
    middle = len(data) // 2
    data[middle: middle + 64] = bytes(64)  # a block of the compressed data overwritten
    path = tmp_path / "flipped.xlsx"
    path.write_bytes(bytes(data))
    outcome = run_importer(kind, path)
    # Either the damage hits a part we need (clear error) or one we do not (data read intact).
    if outcome.errors:
        _assert_clear_error(outcome, "flipped.xlsx")
    else:
        assert len(outcome.texts) == 2


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ALL)
def test_empty_file_named_xlsx(tmp_path, kind):
    path = tmp_path / "empty.xlsx"
    path.write_bytes(b"")
    _assert_clear_error(run_importer(kind, path), "empty.xlsx")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ALL)
def test_text_file_named_xlsx(tmp_path, kind):
    path = tmp_path / "answers.xlsx"
    path.write_text("question,worker,answer\nQ1,w1,yes\n", encoding="utf-8")
    _assert_clear_error(run_importer(kind, path), "answers.xlsx", "rename it to end in .csv")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ALL)
def test_xls_renamed_xlsx(tmp_path, kind):
    xlwt = pytest.importorskip("xlwt")
    headers, rows = sheet_for(kind, ["4", "5"] if kind == "aqer_grades" else
                              ["Olé, first", "second"])
    book = xlwt.Workbook()
    sheet = book.add_sheet("Sheet1")
    for r, cells in enumerate([list(headers), *rows]):
        for c, value in enumerate(cells):
            sheet.write(r, c, value)
    path = tmp_path / "old.xlsx"  # an Excel 97-2003 file whose name says .xlsx
    book.save(str(path))
    outcome = run_importer(kind, path)
    assert not outcome.errors, outcome.errors
    expected = ["4.0", "5.0"] if kind == "aqer_grades" else ["Olé, first", "second"]
    assert outcome.texts == expected


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ALL)
def test_xlsx_password_protected(tmp_path, kind):
    msoffcrypto = pytest.importorskip("msoffcrypto")
    from msoffcrypto.format.ooxml import OOXMLFile

    plain = _good_xlsx(tmp_path, kind, "plain.xlsx")
    path = tmp_path / "locked.xlsx"
    with open(plain, "rb") as src, open(path, "wb") as out:
        OOXMLFile(src).encrypt("secret", out)
    assert msoffcrypto  # the package is there
    _assert_clear_error(run_importer(kind, path), "locked.xlsx", "password")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ALL)
def test_zip_that_is_not_a_workbook(tmp_path, kind):
    path = tmp_path / "archive.xlsx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("notes/readme.txt", "hello")
    _assert_clear_error(run_importer(kind, path), "archive.xlsx", "zip archive")


# --------------------------------------------------------------------------------------------
# Zip bombs: refused from the sizes in the zip, before parsing, memory bounded
# --------------------------------------------------------------------------------------------


def _bomb(path: Path, megabytes: int, *, declared_small: bool = False) -> Path:
    """A workbook whose one shared string is ``megabytes`` MB of "A" (a few hundred KB on
    disk). With ``declared_small`` the zip's directory claims the part is tiny."""
    shared_head = (b'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.'
                   b'openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1">'
                   b"<si><t>")
    shared_tail = b"</t></si></sst>"
    sheet = sheet_xml('<row r="1"><c r="A1" t="s"><v>0</v></c></row>')
    raw_xlsx(path, sheet, shared=b"<sst/>")
    # Rebuild with the huge shared-strings part streamed in (never held in memory).
    rebuilt = path.with_suffix(".tmp")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(rebuilt, "w", zipfile.ZIP_DEFLATED,
                                                       compresslevel=9) as dst:
        for info in src.infolist():
            if info.filename == "xl/sharedStrings.xml":
                with dst.open("xl/sharedStrings.xml", "w", force_zip64=True) as out:
                    out.write(shared_head)
                    chunk = b"A" * (1 << 20)
                    for _ in range(megabytes):
                        out.write(chunk)
                    out.write(shared_tail)
            else:
                dst.writestr(info.filename, src.read(info.filename))
    rebuilt.replace(path)
    if declared_small:
        data = bytearray(path.read_bytes())
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo("xl/sharedStrings.xml")
        # patch the uncompressed size in the central directory entry (and local header)
        true_size = info.file_size
        import struct

        for marker, offset in ((b"PK\x01\x02", 24), (b"PK\x03\x04", 22)):
            start = 0
            while True:
                at = data.find(marker, start)
                if at < 0:
                    break
                name_len = struct.unpack_from("<H", data, at + (28 if marker == b"PK\x01\x02"
                                                                else 26))[0]
                name_at = at + (46 if marker == b"PK\x01\x02" else 30)
                if data[name_at: name_at + name_len] == b"xl/sharedStrings.xml":
                    size = struct.unpack_from("<I", data, at + offset)[0]
                    if size in (true_size, 0xFFFFFFFF):
                        struct.pack_into("<I", data, at + offset, 1000)
                start = at + 4
        path.write_bytes(bytes(data))
    return path


@pytest.mark.timeout(90)
def test_xlsx_zip_bomb_refused_for_every_importer(tmp_path):
    """The issue's case: a ~400 KB workbook holding one 400 MB cell. Before: 5 minutes and all
    the machine's memory. Now: refused from the zip's sizes, in a child limited to 1.5 GB."""
    path = _bomb(tmp_path / "bomb.xlsx", 400)
    assert path.stat().st_size < 2_000_000
    child = run_limited(f"""
        import time
        from pathlib import Path
        from tests.attack.conftest import IMPORTERS, run_importer
        for kind in IMPORTERS:
            run_importer(kind, Path({str(path)!r}))  # the first call loads the method's code
            t = time.monotonic()
            o = run_importer(kind, Path({str(path)!r}))
            result[kind] = {{"errors": o.errors, "texts": len(o.texts),
                             "seconds": time.monotonic() - t}}
    """, memory_mb=1500, timeout=80)
    assert child.returncode == 0, child.stderr
    for kind, seen in child.output.items():
        assert seen["texts"] == 0, kind
        message = " ".join(seen["errors"])
        assert "bomb.xlsx" in message and "MB" in message and "too large" in message, (kind,
                                                                                     message)
    assert set(child.output) == set(IMPORTERS)
    slowest = max(seen["seconds"] for seen in child.output.values())
    print(f"zip bomb ({path.stat().st_size / 1024:.0f} KB, 400 MB unpacked): refused by all "
          f"9 importers, each in at most {slowest * 1000:.0f} ms once its code is loaded, peak "
          f"memory {child.peak_mb:.0f} MB")
    assert child.peak_mb < 600, f"peak memory {child.peak_mb:.0f} MB"


@pytest.mark.timeout(90)
def test_xlsx_zip_bomb_lying_about_its_size(tmp_path):
    """The zip's directory claims the huge part is 1000 bytes: reading stops there (the data
    fail their checksum) and the file is reported damaged; memory stays bounded."""
    path = _bomb(tmp_path / "liar.xlsx", 200, declared_small=True)
    child = run_limited(f"""
        from pathlib import Path
        from tests.attack.conftest import run_importer
        o = run_importer("aqer_answers", Path({str(path)!r}))
        result["errors"] = o.errors
        result["texts"] = o.texts
    """, memory_mb=1500, timeout=80)
    assert child.returncode == 0, child.stderr
    assert child.output["errors"] and not child.output["texts"]
    assert "liar.xlsx" in child.output["errors"][0]
    assert child.peak_mb < 600


@pytest.mark.timeout(60)
def test_xlsx_many_parts_adding_up(tmp_path):
    """Three parts of 180 MB: each is under the part limit, together they are too much."""
    path = raw_xlsx(tmp_path / "parts.xlsx", sheet_xml(inline_row(1, ["id", "content"])))
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        block = b" " * (1 << 20)
        for k in range(3):
            with zf.open(f"xl/media/filler{k}.xml", "w") as out:
                for _ in range(180):
                    out.write(block)
    outcome = run_importer("majeval_items", path)
    _assert_clear_error(outcome, "parts.xlsx", "too large")


# --------------------------------------------------------------------------------------------
# Odd but genuine sheets: read, with what was changed said plainly
# --------------------------------------------------------------------------------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", TEXT)
def test_csv_nul_byte_in_one_cell(tmp_path, kind):
    """The issue's case: one NUL byte in one cell used to make the whole file "not a
    spreadsheet". Now the file is read, the NUL removed and the cell named."""
    headers, rows = sheet_for(kind, ["First text", "Sec\x00ond text", "Third text"])
    path = write_csv(tmp_path / "nul.csv", headers, rows)
    outcome = run_importer(kind, path)
    assert not outcome.errors, outcome.errors
    assert [_norm(t) for t in outcome.texts] == ["First text", "Second text", "Third text"]
    column = headers.index(next(h for h, v in zip(headers, rows[1]) if "\x00" in v))
    letter = "ABC"[column]
    note = next((w for w in outcome.warnings if "NUL" in w), None)
    if kind in ("majeval_dimensions",):  # this reader returns only errors
        from core.tables import read_table

        note = next(w.message for w in read_table(path).warnings if "NUL" in w.message)
    assert note is not None, outcome.warnings
    assert "nul.csv" in note and f"{letter}3" in note, note


@pytest.mark.timeout(30)
def test_csv_nul_bytes_in_many_cells_summed_up(tmp_path):
    headers, rows = sheet_for("majeval_items", [f"text {k}\x00" for k in range(50)])
    path = write_csv(tmp_path / "nuls.csv", headers, rows)
    from core.tables import read_table

    read = read_table(path)
    assert read.ok
    notes = [w.message for w in read.warnings if "NUL" in w.message]
    assert len(notes) == 1 and "50 cells" in notes[0] and "B2" in notes[0], notes
    assert list(read.frame["content"])[:2] == ["text 0", "text 1"]


@pytest.mark.timeout(60)
def test_xlsx_used_range_claims_million_rows(tmp_path):
    """A sheet whose dimension says A1:C1048576 (and whose last row is a formatted empty cell)
    but holds 50 rows: read quickly as 50 rows, no million empty rows."""
    rows = [inline_row(1, ["id", "content"])]
    rows += [inline_row(n, [f"i{n}", f"text {n}"]) for n in range(2, 52)]
    rows.append('<row r="1048576"><c r="C1048576" s="0"/></row>')
    path = raw_xlsx(tmp_path / "tall.xlsx", sheet_xml("".join(rows), "A1:C1048576"))
    child = run_limited(f"""
        from pathlib import Path
        from tests.attack.conftest import run_importer
        o = run_importer("majeval_items", Path({str(path)!r}))
        result["n"] = len(o.texts)
        result["errors"] = o.errors
        result["warnings"] = o.warnings
    """, memory_mb=1500, timeout=50)
    assert child.returncode == 0, child.stderr
    assert child.output["n"] == 50 and not child.output["errors"]
    print(f"used range of 1,048,576 rows holding 50: peak memory {child.peak_mb:.0f} MB")
    assert child.peak_mb < 500, child.peak_mb


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", TEXT)
def test_xlsx_merged_header_cells(tmp_path, kind):
    from openpyxl import Workbook

    headers, rows = sheet_for(kind, ["one", "two"])
    wb = Workbook()
    ws = wb.active
    ws.append(["Survey 2024"] + [None] * (len(headers) - 1))
    ws.merge_cells(start_row=1, start_column=1, end_row=1, end_column=len(headers))
    ws.append(list(headers))
    for row in rows:
        ws.append(row)
    path = tmp_path / "merged.xlsx"
    wb.save(path)
    from core.tables import read_table

    read = read_table(path)
    assert any("merged" in w.message and "merged.xlsx" in w.message for w in read.warnings)
    outcome = run_importer(kind, path)
    # the title row is taken as the header: the importer cannot find its columns and says so
    assert outcome.errors or outcome.texts == ["one", "two"]
    if outcome.errors:
        assert "merged.xlsx" in " ".join(outcome.errors)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", TEXT)
def test_xlsx_formula_without_cached_value(tmp_path, kind):
    headers, _ = sheet_for(kind, [])
    row2 = sheet_for(kind, ["plain text"])[1][0]
    row3 = sheet_for(kind, ["X"])[1][0]
    text_col = row3.index("X")
    cells = []
    for j, value in enumerate(row3):
        ref = f"{chr(65 + j)}3"
        if j == text_col:
            cells.append(f'<c r="{ref}" t="str"><f>CONCAT("a","b")</f></c>')
        else:
            cells.append(f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>')
    xml = inline_row(1, list(headers)) + inline_row(2, row2) + f'<row r="3">{"".join(cells)}</row>'
    path = raw_xlsx(tmp_path / "formulas.xlsx", sheet_xml(xml))
    outcome = run_importer(kind, path)
    _assert_clear_error(outcome, "formulas.xlsx", f"{chr(65 + text_col)}3", "formula",
                        "save it again")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("encoding", ["utf-16", "cp1252", "utf-8-sig"])
@pytest.mark.parametrize("kind", TEXT)
def test_csv_encodings_with_accents(tmp_path, kind, encoding):
    texts = ["Crème brûlée à la française", "Ça coûte 5 €, naïve façade"]
    headers, rows = sheet_for(kind, texts)
    path = write_csv(tmp_path / f"accents-{encoding}.csv", headers, rows, encoding=encoding)
    outcome = run_importer(kind, path)
    assert not outcome.errors, outcome.errors
    assert outcome.texts == texts


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", TEXT)
def test_csv_embedded_newlines_and_quotes(tmp_path, kind):
    texts = ['He said "no",\nthen left.', 'A "quoted" word;\r\nand, a comma']
    headers, rows = sheet_for(kind, texts)
    path = write_csv(tmp_path / "quotes.csv", headers, rows)
    outcome = run_importer(kind, path)
    assert not outcome.errors, outcome.errors
    assert [_norm(t) for t in outcome.texts] == [_norm(t) for t in texts]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", TEXT)
def test_duplicate_and_empty_headers(tmp_path, kind):
    headers, rows = sheet_for(kind, ["one", "two"])
    headers = list(headers) + ["", headers[0]]
    rows = [r + ["extra", "dup"] for r in rows]
    path = write_csv(tmp_path / "heads.csv", headers, rows)
    from core.tables import read_table

    read = read_table(path)
    messages = " ".join(w.message for w in read.warnings)
    assert "no header" in messages and "all have the header" in messages
    outcome = run_importer(kind, path)
    assert outcome.errors == [] or "heads.csv" in " ".join(outcome.errors)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("suffix", ["csv", "xlsx"])
@pytest.mark.parametrize("kind", ALL)
def test_header_only(tmp_path, kind, suffix):
    headers, _ = sheet_for(kind, [])
    path = tmp_path / f"header.{suffix}"
    (write_csv if suffix == "csv" else write_xlsx)(path, headers, [])
    outcome = run_importer(kind, path)
    _assert_clear_error(outcome, "header.")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", [k for k in TEXT if k != "ie_notes"])  # notes drop "1." numbering
def test_numbers_where_text_expected(tmp_path, kind):
    headers, rows = sheet_for(kind, ["X", "X", "X"])
    values = [3, 0.1 + 0.2, 1e-05]
    for row, value in zip(rows, values):
        row[row.index("X")] = value
    path = write_xlsx(tmp_path / "numbers.xlsx", headers, rows)
    outcome = run_importer(kind, path)
    if kind in ("majeval_items", "ie_texts"):
        # a column of numbers is never taken as the texts to judge (issue 13): the message
        # names the column and says what to choose instead
        assert outcome.texts == []
        assert any("holds numbers, not texts" in e and "Choose the column" in e
                   for e in outcome.errors), outcome.errors
        return
    assert not outcome.errors, outcome.errors
    assert outcome.texts == ["3", "0.3", "0.00001"]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", TEXT)
def test_cell_of_40000_characters(tmp_path, kind):
    long = ("word " * 8000)[:40_000]
    headers, rows = sheet_for(kind, [long, "short"])
    path = write_csv(tmp_path / "long.csv", headers, rows)
    outcome = run_importer(kind, path)
    assert not outcome.errors, outcome.errors
    assert _norm(outcome.texts[0]) == _norm(long)  # read in full, never cut silently
    from core.tables import read_table

    assert any("40,000 characters" in w.message for w in read_table(path).warnings)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", TEXT)
def test_control_characters_in_cells(tmp_path, kind):
    texts = ["bell\x07 and escape\x1b here", "vertical\x0btab and form\x0cfeed"]
    headers, rows = sheet_for(kind, texts)
    path = write_csv(tmp_path / "controls.csv", headers, rows)
    outcome = run_importer(kind, path)
    assert not outcome.errors, outcome.errors
    assert len(outcome.texts) == 2
    assert "bell" in outcome.texts[0] and "escape" in outcome.texts[0]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("suffix", ["csv", "xlsx"])
@pytest.mark.parametrize("kind", TEXT)
def test_right_to_left_and_emoji(tmp_path, kind, suffix):
    texts = ["مرحبا بالعالم، هذا نص عربي", "שלום 👋🏽 family: 👨‍👩‍👧 flag 🇳🇱 ok"]
    headers, rows = sheet_for(kind, texts)
    path = tmp_path / f"rtl.{suffix}"
    (write_csv if suffix == "csv" else write_xlsx)(path, headers, rows)
    outcome = run_importer(kind, path)
    assert not outcome.errors, outcome.errors
    assert outcome.texts == texts


@pytest.mark.timeout(30)
def test_semicolon_csv_with_decimal_commas(tmp_path):
    path = write_csv(tmp_path / "grades.csv", ["name", "grade"], [["Ann", "4,5"], ["Bo", "3,0"]],
                     delimiter=";", encoding="cp1252")
    outcome = run_importer("aqer_grades", path)
    assert not outcome.errors, outcome.errors
    assert outcome.texts == ["4.5", "3.0"]


@pytest.mark.timeout(30)
def test_grades_that_are_not_numbers(tmp_path):
    path = write_csv(tmp_path / "grades.csv", ["name", "grade"], [["Ann", "good"], ["Bo", "4"]])
    outcome = run_importer("aqer_grades", path)
    messages = outcome.messages
    assert outcome.texts == ["4.0"]  # never a default score for Ann
    assert "good" in messages and "grades.csv" in messages, messages


@pytest.mark.timeout(120)
def test_answers_200000_rows(tmp_path):
    """200,000 AQER answer rows: read to the end in a child limited to 2 GB; peak memory is
    reported and progress is started with the file's name."""
    import csv

    path = tmp_path / "big.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "worker", "answer"])
        for k in range(200_000):
            writer.writerow([f"Q{k % 20}", f"worker {k // 20}", f"answer number {k} in words"])
    child = run_limited(f"""
        from pathlib import Path
        from core.aqer.inputs import read_answers, read_responses
        from core.aqer.model import ColumnRoles
        from core.runs import Progress
        seen = []
        class Watch(Progress):
            def start(self, label, *a, **k):
                seen.append(label)
                return super().start(label, *a, **k)
        sheets, read = read_answers(Path({str(path)!r}), progress=Watch())
        prepared = read_responses(Path({str(path)!r}), ColumnRoles(format="long",
            question_col="question", worker_col="worker", response_col="answer"))
        result["rows"] = len(read.frame)
        result["answers"] = len(prepared.frame)
        result["progress"] = seen
    """, memory_mb=2500, timeout=110)
    assert child.returncode == 0, child.stderr
    assert child.output["rows"] == 200_000 and child.output["answers"] == 200_000
    assert any("big.csv" in label for label in child.output["progress"])
    print(f"200,000 answer rows: peak memory {child.peak_mb:.0f} MB")
    assert child.peak_mb < 2000


@pytest.mark.timeout(30)
def test_notes_text_file_with_nul_and_utf16(tmp_path):
    """Notes as a .txt file (its own reader): UTF-16 with a NUL inside a line."""
    path = tmp_path / "anna.txt"
    path.write_bytes("Checks the facts\nNotes the tone\x00 of voice\n".encode("utf-16"))
    outcome = run_importer("ie_notes", path)
    assert not outcome.errors
    assert [_norm(t) for t in outcome.texts] == [
        "Checks the facts", "Notes the tone of voice"]
    assert any("anna.txt" in w and "line 2" in w and "NUL" in w for w in outcome.warnings)


def test_every_importer_is_attacked():
    assert set(IMPORTERS) == {"aqer_answers", "aqer_grades", "majeval_items", "majeval_personas",
                              "majeval_dimensions", "ie_samples", "ie_texts", "ie_notes",
                              "ie_checklists"}


