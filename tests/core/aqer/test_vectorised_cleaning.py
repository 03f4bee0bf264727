"""Checking the answers a whole column at a time (issue 17): no Python call per cell for the
text cells a sheet is read as, while every message still names its row and cell."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from core.aqer import pipeline, responses
from core.aqer.pipeline import aqer
from core.aqer.responses import cell_text, prepare_responses


def text_frame(rows, header, first_row=2):
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    frame.index = pd.Index(range(first_row, first_row + len(rows)), name="row")
    return frame


def big_frame(workers=30, questions=20):
    rows = [
        [f"Question {q}", f"worker {w}", f"answer of {w} to {q} " + "word " * (w % 4), "3,5"]
        for q in range(questions)
        for w in range(workers)
    ]
    return text_frame(rows, ["question", "worker", "response", "grade"])


def test_text_cells_are_checked_without_a_python_call_per_cell(count_calls):
    calls = count_calls(responses, "cell_text")
    frame = big_frame()
    prepared = prepare_responses(frame)
    assert len(prepared.frame) == 600
    assert len(calls) < 20  # headers at most, never the 2,400 cells


def test_grades_are_read_without_a_python_call_per_answer(count_calls, encoder):
    calls = count_calls(pipeline, "cell_number")
    result = aqer(prepare_responses(big_frame(), grade_col="grade"), encoder, baselines=False)
    assert len(calls) < 20
    graded = result.responses["grade"].dropna()
    assert len(graded) == 600 and (graded == 3.5).all()  # the decimal comma still read


def test_cell_texts_equals_cell_text_for_every_kind_of_cell():
    from core.aqer.responses import cell_texts

    values = [
        "  text  ", 3.0, 2.5, 1e20, float("nan"), None, pd.NA, pd.NaT, 7, True,
        dt.date(2024, 5, 1), dt.datetime(2024, 5, 1, 9, 30), pd.Timestamp("2024-05-01"), "",
    ]
    for column in (
        pd.Series(values, dtype=object),
        pd.Series(["a", " b ", ""], dtype=object),
        pd.Series([1, 2, 30], dtype="int64"),
        pd.Series([1, None], dtype="Int64"),
        pd.Series(["x", None], dtype="string"),
        pd.Series([], dtype=object),
    ):
        expected = [cell_text(v) for v in column]
        assert cell_texts(column).tolist() == expected
        assert cell_texts(column, strip=True).tolist() == [e.strip() for e in expected]


def test_every_message_still_names_its_row_and_cell():
    frame = text_frame(
        [
            ["Q1", "ann", "a real answer"],          # row 2
            ["Q1", "bob", "   "],                    # row 3: empty answer (cell C3)
            ["", "cat", "no question"],              # row 4: no question
            ["Q2", "", "no worker"],                 # row 5: no worker
            ["Q2", "ann", "N/A"],                    # row 6: read as blank (cell C6)
            ["Q2", "bob", "first"],                  # row 7
            ["Q2", "bob", "second"],                 # row 8: duplicate, left out (cell C8)
            ["Q1", "cat", "answer"],                 # row 9
            ["Q2", "cat", "another"],                # row 10
        ],
        ["question", "worker", "response"],
    )
    prepared = prepare_responses(frame, duplicates="first", blank_tokens=["n/a"])
    messages = {n.topic: (n.message, n.row) for n in prepared.notices}
    assert messages["Row without a question"] == (
        ("1 row(s) have no question in column A and were left out (rows 4). Fill in the "
         "question to include them."),
        4,
    )
    assert messages["Answer without a worker"] == (
        ("1 answer(s) have no worker name in column B and were left out (rows 5). Fill in who "
         "wrote them to include them."),
        5,
    )
    assert messages["Read as blank"][0].startswith(
        "1 answer say there is no answer and was read as blank: cell C6 ('N/A')."
    )
    empty = [n for n in prepared.notices if n.topic == "Empty answer"]
    assert [(n.message, n.row, n.worker) for n in empty] == [
        ("No answer from worker 'bob' to 'Q1' (cell C3): left blank.", 3, "bob"),
        ("No answer from worker 'ann' to 'Q2' (cell C6): left blank.", 6, "ann"),
    ]
    assert messages["Duplicate answer"] == (
        ("'bob' answered 'Q2' more than once; the first answer was kept and this one (cell C8) "
         "left out."),
        8,
    )
    assert prepared.frame["cell"].tolist() == ["C2", "C7", "C9", "C10"]
    assert prepared.frame["row"].tolist() == [2, 7, 9, 10]
    assert prepared.blanks["cell"].tolist() == ["C3", "C6"]


def test_a_duplicate_is_still_an_error_naming_its_rows():
    frame = text_frame(
        [["Q1", "ann", "x"], ["Q1", "ann", "y"], ["Q2", "ann", "z"]],
        ["question", "worker", "response"],
    )
    with pytest.raises(responses.AqerInputError, match=r"'ann' answered 'Q1' 2 times \(rows 2, 3\)"):
        prepare_responses(frame)


def test_mixed_cells_of_a_plain_frame_are_read_as_the_user_sees_them(encoder):
    frame = pd.DataFrame(
        {
            "question": [1.0, 1.0, 2.0, 2.0],
            "worker": ["ann", "bob", "ann", "bob"],
            "response": ["yes it is", dt.date(2024, 5, 1), "no", 42],
            "grade": ["4", "x", 3, np.nan],
            "row": [2, 3, 4, 5],
        }
    )
    prepared = responses.clean_responses(frame)
    assert prepared.frame["question"].tolist() == ["1", "1", "2", "2"]
    assert prepared.frame["response"].tolist() == ["yes it is", "2024-05-01", "no", "42"]
    assert prepared.frame["grade"].tolist() == ["4", "x", "3", ""]
    result = aqer(prepared, encoder, baselines=False)
    grade_notice = [n for n in result.warnings if n.topic == "Grade is not a number"]
    assert len(grade_notice) == 1 and "(rows 3)" in grade_notice[0].message
