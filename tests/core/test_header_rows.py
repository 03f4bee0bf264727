"""Which row is the header (issue 27): a title and a blank row above a teacher's table are not
the header; the row that reads like one above the rows of data is, and the reader says which.
Every file is made here, in tmp_path."""

from __future__ import annotations

import csv

import pytest

from core.tables import find_header_row, open_sheet, read_mapped_rows, read_table
from tests.core.test_tables import make_xlsx

TITLE = "Civics unit test - Period 3 (Mr Lee, marked 12 March)"
HEADER = ["Student", "Q1. Bill of Rights?", "Q2. A First Amendment freedom?", "Q3. Branches?",
          "Total", "Comments"]
DATA = [["Ana Lopez", "bill of rights", "speech", "congress", 3, None],
        ["Ben Smith", "the constitution", "religion", "courts", 2, "extra time (IEP)"],
        ["Chloe Martin", "bill of rights", "press", "president", 3, None]]


def rows_of(*rows):
    """``find_header_row``'s input: the filled rows with their numbers (empty ones left out)."""
    out = []
    for n, row in enumerate(rows, start=1):
        cells = ["" if v is None else str(v) for v in row]
        if any(c.strip() for c in cells):
            out.append((n, cells))
    return out


def test_a_title_and_a_blank_row_above_the_header_are_not_the_header(tmp_path):
    path = make_xlsx(tmp_path / "class.xlsx", [[TITLE], [], HEADER, *DATA], sheet="Period 3")
    read = read_table(path)
    assert read.header_row == 3
    assert list(read.frame.columns) == HEADER
    assert read.rows == [4, 5, 6]
    assert read.frame.loc[5, "Comments"] == "extra time (IEP)"
    # it says which row it used, and why the one above is not read
    assert "Row 3 is read as the header" in read.header_note
    assert "Civics unit test - Period 3" in read.header_note
    note = next(i for i in read.warnings if "read as the header" in i.message)
    assert 'class.xlsx, sheet "Period 3"' in note.message
    # nothing tells the teacher to type a name into B1 any more
    assert not any("B1" in i.message for i in read.issues)


def test_the_header_row_can_still_be_chosen_and_a_bad_choice_is_said(tmp_path):
    path = make_xlsx(tmp_path / "class.xlsx", [[TITLE], [], HEADER, *DATA])
    chosen = read_table(path, header_row=3)
    assert list(chosen.frame.columns) == HEADER
    assert chosen.header_note.startswith("Row 3 is the header (as chosen)")
    assert not any("header" in i.message for i in chosen.warnings)
    title = read_table(path, header_row=1)  # the user's choice wins, even a poor one
    assert next(iter(title.frame.columns)) == TITLE
    empty = read_table(path, header_row=2)
    assert not empty.ok
    assert "Row 2 cannot be the header row: row 2 is empty" in empty.errors[0].message
    beyond = read_table(path, header_row=40)
    assert "the sheet ends at row 6" in beyond.errors[0].message


def test_a_title_above_a_csv_file_and_a_two_column_items_sheet(tmp_path):
    path = tmp_path / "items.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Feedback texts to evaluate (spring term)"])
        writer.writerow([])
        writer.writerow(["id", "text"])
        writer.writerow(["a1", "Good work on the essay, but the ending is weak."])
        writer.writerow(["a2", "The argument holds; cite your sources."])
    read = read_table(path)
    assert read.header_row == 3 and list(read.frame.columns) == ["id", "text"]
    opened = open_sheet(path)
    assert opened.columns == ["id", "text"]
    items = read_mapped_rows(path, None, {"id": "id", "content": "text"},
                             lambda row: (row.id, row.get("content")), required="content")
    assert items.errors == []
    assert [i for i, _ in items.items] == ["a1", "a2"]
    assert any("Row 3 is read as the header" in p for p in items.problems)
    chosen = read_mapped_rows(path, None, {"id": "Feedback texts to evaluate (spring term)",
                                           "content": "Feedback texts to evaluate (spring term)"},
                              lambda row: row.id, required="content", header_row=1)
    assert chosen.errors == [] or "spring term" in " ".join(chosen.errors)


@pytest.mark.parametrize(("rows", "header"), [
    # no title: the first row, as before
    ((HEADER, *DATA), 1),
    # a title, then the header at once (no blank row)
    (([TITLE], HEADER, *DATA), 2),
    # a title and a line of notes ("Teacher: ..." in two cells) above a wide table
    (([TITLE], ["Teacher: Mr Lee", None, None, "Date: 12 March"], [], HEADER, *DATA), 4),
    # a header with gaps (two names missing) is still the header
    ((["Student", "Q1", None, None, "Total", "Comments"], *DATA), 1),
    # merged title cells read as one cell: still a title
    (([TITLE, None, None, None, None, None], [], HEADER, *DATA), 3),
    # a one-column sheet: a title cannot be told from a header, so the first row
    ((["Answers"], ["text"], ["a"], ["b"], ["c"]), 1),
    # a title above rows of numbers only: no header to find, the first row as before
    (([TITLE], [1, 2, 3], [4, 5, 6], [7, 8, 9]), 1),
    # the header only, no data
    ((HEADER,), 1),
])
def test_find_header_row(rows, header):
    assert find_header_row(rows_of(*rows)) == header


def test_find_header_row_of_nothing():
    assert find_header_row([]) is None
