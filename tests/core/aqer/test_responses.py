"""Long and wide layouts to one checked long table (the wizard reuses these)."""

from __future__ import annotations

import pandas as pd
import pytest

from core.aqer.responses import (
    AqerInputError,
    clean_responses,
    column_letter,
    prepare_responses,
)


def text_frame(rows: list[list[str]], header: list[str], first_row: int = 2) -> pd.DataFrame:
    """What core.tables gives: text cells, index = spreadsheet row numbers named "row"."""
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    frame.index = pd.Index(range(first_row, first_row + len(rows)), name="row")
    return frame


def test_column_letters():
    assert [column_letter(i) for i in (0, 25, 26, 27, 701, 702)] == [
        "A",
        "Z",
        "AA",
        "AB",
        "ZZ",
        "AAA",
    ]


def test_long_with_llm_rows_marked_by_is_llm_and_model():
    frame = text_frame(
        [
            ["Q1", "ann", "a", "2", "no", ""],
            ["Q1", "GPT", "b", "", "yes", ""],
            ["Q2", "", "c", "", "", "Claude"],
            ["Q2", "ann", "d", "1", "", ""],
        ],
        ["Question", "Worker", "Response", "grade", "is_llm", "model"],
    )
    out = prepare_responses(frame, format="long", grade_col="grade").frame
    assert out[["question", "worker", "is_llm", "model"]].values.tolist() == [
        ["Q1", "ann", False, ""],
        ["Q1", "GPT", True, "GPT"],
        ["Q2", "Claude", True, "Claude"],
        ["Q2", "ann", False, ""],
    ]
    assert out["row"].tolist() == [2, 3, 4, 5]
    assert out["grade"].tolist() == ["2", "", "", "1"]


def test_long_with_llm_answer_columns_and_named_llm_workers():
    frame = text_frame(
        [
            ["Q1", "ann", "a", "llm one"],
            ["Q1", "bob", "b", "llm one"],
            ["Q2", "ann", "c", "x"],
            ["Q2", "bot", "d", ""],
        ],
        ["question", "worker", "response", "GPT answer"],
    )
    out = prepare_responses(frame, llm_cols=["GPT answer"], llm_workers=["bot"]).frame
    llm = out[out["is_llm"]]
    assert sorted(zip(llm["model"], llm["question"], llm["response"])) == [
        ("GPT answer", "Q1", "llm one"),
        ("GPT answer", "Q2", "x"),
        ("bot", "Q2", "d"),
    ]


def test_long_llm_column_with_two_answers_to_one_question_is_an_error():
    frame = text_frame(
        [["Q1", "ann", "a", "one"], ["Q1", "bob", "b", "two"]],
        ["question", "worker", "response", "GPT"],
    )
    with pytest.raises(AqerInputError, match=r"'GPT'.*column D.*rows 2 and 3"):
        prepare_responses(frame, llm_cols=["GPT"], source="x.xlsx")


def test_wide_row_per_worker():
    frame = text_frame(
        [["ann", "Paris", "4"], ["bob", "", "four"]], ["worker", "Capital?", "Legs?"]
    )
    prepared = prepare_responses(frame, format="wide")
    out = prepared.frame
    assert out[["question", "worker", "response"]].values.tolist() == [
        ["Capital?", "ann", "Paris"],
        ["Legs?", "ann", "4"],
        ["Legs?", "bob", "four"],
    ]
    assert out["cell"].tolist() == ["B2", "C2", "C3"]
    assert [n.topic for n in prepared.notices] == ["Empty answer"]
    assert "cell B3" in prepared.notices[0].message


def test_wide_row_per_question_with_llm_columns():
    frame = text_frame(
        [["Q1", "a", "b", "m"], ["Q2", "c", "d", "n"]], ["Question", "ann", "bob", "GPT"]
    )
    out = prepare_responses(frame, format="wide", question_col="Question", llm_cols=["GPT"]).frame
    assert set(out.loc[out["is_llm"], "model"]) == {"GPT"}
    assert sorted(out.loc[~out["is_llm"], "worker"].unique()) == ["ann", "bob"]


def test_wide_llm_column_in_a_row_per_worker_sheet_is_explained():
    frame = text_frame([["ann", "a"]], ["worker", "Q1"])
    with pytest.raises(AqerInputError, match="--llm-worker"):
        prepare_responses(frame, format="wide", llm_cols=["Q1"])


def test_wide_layout_must_be_named_when_it_cannot_be_guessed():
    frame = text_frame([["ann", "a"]], ["person", "Q1"])
    with pytest.raises(AqerInputError, match="--worker-col or --question-col"):
        prepare_responses(frame, format="wide")


def test_wide_empty_header_with_answers_is_an_error_and_an_empty_column_is_ignored():
    frame = text_frame([["ann", "a", "x", ""], ["bob", "b", "y", ""]], ["worker", "Q1", "", " "])
    with pytest.raises(AqerInputError, match=r"Column C .*no header.*rows 2, 3.*C1"):
        prepare_responses(frame, format="wide", source="s.xlsx")
    frame = text_frame([["ann", "a", ""], ["bob", "b", ""]], ["worker", "Q1", ""])
    assert len(prepare_responses(frame, format="wide").frame) == 2


def test_blank_header_named_by_core_tables_is_recognised():
    frame = text_frame([["ann", "a", "x"]], ["worker", "Q1", "Column C"])
    with pytest.raises(AqerInputError, match="no header"):
        prepare_responses(frame, format="wide", unnamed={"Column C"})


def test_worker_column_entirely_empty_is_an_error():
    frame = text_frame([["Q1", "", "a"], ["Q2", " ", "b"]], ["question", "worker", "response"])
    with pytest.raises(AqerInputError, match=r"worker column 'worker' \(column B\) is empty"):
        prepare_responses(frame, source="s.xlsx")
    wide = text_frame([["", "a"], ["", "b"]], ["worker", "Q1"])
    with pytest.raises(AqerInputError, match="empty in every row"):
        prepare_responses(wide, format="wide")


def test_missing_column_lists_the_columns_and_the_option():
    frame = text_frame([["Q1", "ann", "a"]], ["question", "name", "response"])
    with pytest.raises(AqerInputError) as info:
        prepare_responses(frame, source='a.xlsx, sheet "S"')
    message = str(info.value)
    assert "'worker'" in message and "'name'" in message and "--worker-col" in message
    assert 'a.xlsx, sheet "S"' in message


def test_rows_without_worker_or_question_are_left_out_with_a_notice():
    frame = text_frame(
        [["Q1", "", "orphan"], ["", "ann", "no question"], ["Q1", "ann", "ok"]],
        ["question", "worker", "response"],
    )
    prepared = prepare_responses(frame)
    assert prepared.frame["response"].tolist() == ["ok"]
    topics = {n.topic for n in prepared.notices}
    assert {"Answer without a worker", "Row without a question"} <= topics
    assert any("rows 2" in n.message for n in prepared.notices)


def test_duplicates():
    frame = text_frame(
        [["Q1", "ann", "first"], ["Q1", "ann", "second"], ["Q2", "ann", "x"]],
        ["question", "worker", "response"],
    )
    with pytest.raises(AqerInputError, match=r"'ann' answered 'Q1' 2 times \(rows 2, 3\)"):
        prepare_responses(frame)
    assert prepare_responses(frame, duplicates="first").frame["response"].tolist() == [
        "first",
        "x",
    ]
    kept = prepare_responses(frame, duplicates="last")
    assert kept.frame["response"].tolist() == ["second", "x"]
    assert [n.row for n in kept.notices if n.topic == "Duplicate answer"] == [2]


def test_an_empty_row_is_not_a_duplicate():
    frame = text_frame(
        [["Q1", "ann", ""], ["Q1", "ann", "real"]], ["question", "worker", "response"]
    )
    assert prepare_responses(frame).frame["response"].tolist() == ["real"]


def test_clean_is_idempotent():
    frame = text_frame(
        [["Q1", "ann", " a "], ["Q1", "bob", "b"], ["Q2", "GPT", "c"]],
        ["question", "worker", "response"],
    )
    once = prepare_responses(frame, llm_workers=["GPT"]).frame
    twice = clean_responses(once).frame
    pd.testing.assert_frame_equal(once, twice)
    assert once["response"].tolist()[0] == "a"


def test_a_wide_sheet_takes_one_grade_per_person_from_a_grade_column():
    frame = text_frame([["ann", "a", "3,5"], ["bob", "b", "x"]], ["worker", "Q1", "Mark"])
    prepared = prepare_responses(frame, format="wide", worker_col="worker", grade_col="Mark")
    assert prepared.person_grades == {"ann": 3.5}  # not a number: named, left out
    assert set(prepared.frame["question"]) == {"Q1"}  # the grade is not an answer
    assert any("'bob' ('x')" in n.message for n in prepared.notices)
    assert (prepared.frame["grade"] == "").all()  # never copied onto the answers
    # a row per question has no place for a grade per person
    frame = text_frame([["Q1", "a"]], ["question", "ann"])
    with pytest.raises(AqerInputError, match="each row of this sheet is a question"):
        prepare_responses(frame, format="wide", question_col="question", grade_col="ann")


def test_answers_that_say_no_answer_are_blanks_named_by_cell():
    frame = text_frame([["ann", "a", "N/A"], ["bob", " - ", "b"], ["cy", "?", "not  answered"]],
                       ["worker", "Q1", "Q2"])
    prepared = prepare_responses(frame, format="wide", worker_col="worker",
                                 blank_tokens=["not answered", "n/a", "-", "?"])
    assert len(prepared.frame) == 2 and len(prepared.blanks) == 4
    [notice] = [n for n in prepared.notices if n.topic == "Read as blank"]
    for cell in ("C2 ('N/A')", "B3 ('-')", "B4 ('?')", "C4 ('not  answered')"):
        assert cell in notice.message
    # without the list they are answers, as before
    assert len(prepare_responses(frame, format="wide", worker_col="worker").frame) == 6


def test_empty_and_duplicate_answers_are_listed_up_to_a_limit_then_counted(monkeypatch):
    from core.aqer import responses

    monkeypatch.setattr(responses, "MAX_LISTED", 2)
    rows = [[f"Q{q}", "ann", ""] for q in range(1, 4)]
    rows += [[f"Q{q}", "bob", "x"] for q in range(1, 4)] * 2
    rows += [["Q1", "GPT", "y"]]
    prepared = prepare_responses(text_frame(rows, ["question", "worker", "response"]),
                                 duplicates="first", llm_workers=["GPT"])
    empty = [n for n in prepared.notices if n.topic == "Empty answer"]
    assert [n.message for n in empty] == [
        "No answer from worker 'ann' to 'Q1' (cell C2): left blank.",
        "No answer from worker 'ann' to 'Q2' (cell C3): left blank.",
        "... and 1 more empty answers."]
    assert [(n.question, n.worker, n.row) for n in empty[:2]] == [("Q1", "ann", 2),
                                                                   ("Q2", "ann", 3)]
    dropped = [n for n in prepared.notices if n.topic == "Duplicate answer"]
    assert [n.message for n in dropped] == [
        ("'bob' answered 'Q1' more than once; the first answer was kept and this one (cell C8) "
         "left out."),
        ("'bob' answered 'Q2' more than once; the first answer was kept and this one (cell C9) "
         "left out."),
        "... and 1 more duplicate answers."]
    assert (dropped[0].question, dropped[0].worker, dropped[0].row) == ("Q1", "bob", 8)
