"""A teacher's gradebook (one row per student, a column per question, the average grade beside
them or on a second sheet): the layout is guessed, the grade column is never scored as an
answer, "n/a"-like answers are blanks, and the agreement uses one grade per person."""

from __future__ import annotations

import pytest
from scipy import stats as scipy_stats

from core.aqer.inputs import check_answers, guess_layout, guess_roles, read_answers
from core.aqer.model import AqerChoices
from core.aqer.pipeline import aqer
from tests.core.aqer.gradebook import QUESTIONS, STUDENTS, gradebook, grades_by_student


@pytest.fixture
def with_column(tmp_path):
    return gradebook(tmp_path / "exam.xlsx", grades="column")


@pytest.fixture
def with_sheet(tmp_path):
    return gradebook(tmp_path / "exam sheet.xlsx", grades="sheet")


def guessed(path):
    sheets, read = read_answers(path)
    return guess_roles(read, sheets), read


def test_the_layout_is_guessed_from_column_a_and_said_why(with_column):
    out, read = guessed(with_column)
    s = out.roles
    assert (s.format, s.wide_rows, s.worker_col) == ("wide", "worker", "Student")
    assert "row per person" in out.notes[0] and "'Student'" in out.notes[0]
    # a row per question when column A holds the questions
    from core.tables import read_table

    assert guess_layout(read).format == "wide"
    long = read_table(with_column)  # same file, other headers: checked on a long-looking frame
    long.frame.columns = ["Question ID", "Worker", "Answer", *long.frame.columns[3:]]
    assert guess_layout(long).format == "long"


def test_the_average_grade_column_is_not_an_answer_but_the_grades(with_column):
    out, read = guessed(with_column)
    s = out.roles
    assert s.grade_col == "Average grade"
    assert out.numeric == {"Average grade": (30, 30)}
    assert any("mostly numbers (30 of 30 filled cells)" in n and "expert grades" in n
               for n in out.notes)
    check = check_answers(read, AqerChoices(columns=s))
    assert check.ok, [i.message for i in check.errors]
    prepared = check.prepared
    assert sorted(set(prepared.frame["question"])) == sorted(QUESTIONS)  # 10, not 11
    assert prepared.person_grades == pytest.approx(grades_by_student())
    # ignored instead of used as grades: still never an answer
    ignored = s.model_copy(update={"grade_col": None, "ignore_cols": ["Average grade"]})
    prepared = check_answers(read, AqerChoices(columns=ignored)).prepared
    assert "Average grade" not in set(prepared.frame["question"])
    assert prepared.person_grades == {}
    # and the user may leave out any column
    fewer = s.model_copy(update={"ignore_cols": ["Q10. What melts ice?"]})
    assert len(set(check_answers(read, AqerChoices(columns=fewer)).prepared.frame["question"])) == 9


def test_no_answer_words_are_blanks_named_by_cell(with_column):
    out, read = guessed(with_column)
    check = check_answers(read, AqerChoices(columns=out.roles))
    notes = [i.message for i in check.warnings if "read as blank" in i.message]
    assert len(notes) == 1
    for cell in ("D5 ('n/a')", "G9 ('-')", "B14 ('?')", "K22 ('not answered')", "F27 ('N/A')"):
        assert cell in notes[0]
    assert len(check.prepared.blanks) == 6  # the five words and the empty cell
    assert check.blank_rule.rule == "worst"  # a class test: the existing rule applies
    # the list is the user's: without "?" that answer is an answer
    fewer = AqerChoices(columns=out.roles, blank_tokens=["n/a", "-", "not answered"])
    assert len(check_answers(read, fewer).prepared.blanks) == 5


def test_agreement_is_computed_from_one_grade_per_person(with_column, encoder):
    out, read = guessed(with_column)
    prepared = check_answers(read, AqerChoices(columns=out.roles)).prepared
    result = aqer(prepared, encoder, baselines=False)
    rows = result.agreement
    assert "AQER similarity to the SEA vs expert grade (per answer)" not in set(
        rows["comparison"])  # no answer has a grade of its own: none is invented
    row = rows[(rows["comparison"] == "AQER score vs expert grade (per worker)")
               & (rows["statistic"] == "Spearman rho")].iloc[0]
    workers = result.workers.set_index("worker")
    grades = grades_by_student()
    expected = scipy_stats.spearmanr([workers.loc[n, "score"] for n in STUDENTS],
                                     [grades[n] for n in STUDENTS]).statistic
    assert row["value"] == pytest.approx(expected) and row["n"] == 30
    assert workers.loc["Ana Lopez", "expert_grade"] == pytest.approx(grades["Ana Lopez"])


def test_a_grades_sheet_is_joined_by_name_and_unmatched_names_are_listed(with_sheet):
    out, read = guessed(with_sheet)
    s = out.roles
    assert s.grades_sheet == "Grades" and s.grade_col is None
    assert any("'Grades' looks like a list of grades" in n for n in out.notes)
    check = check_answers(read, AqerChoices(columns=s))
    assert check.ok
    grades = check.prepared.person_grades
    assert len(grades) == 28  # 30 students, one misspelt, one missing
    assert grades["Ben Smith"] == pytest.approx(grades_by_student()["Ben Smith"])
    text = " ".join(i.message for i in check.warnings)
    assert "'Emma Rosi' (row 6)" in text and "matches no one" in text
    assert "No grade for 2 people: 'Dina Haddad', 'Emma Rossi'" in text


def test_a_typo_in_a_header_is_matched_as_the_cli_does(tmp_path):
    import pandas as pd

    path = tmp_path / "long.xlsx"
    pd.DataFrame({"Qestion": ["a", "a", "b", "b"], "Worker": ["x", "y", "x", "y"],
                  "Answer": ["1 one", "1 uno", "2 two", "2 dos"]}).to_excel(path, index=False)
    sheets, read = read_answers(path)
    out = guess_roles(read, sheets)
    assert out.roles.format == "long" and out.roles.question_col == "Qestion"
    assert any("is it 'Qestion'" in n for n in out.notes)
