"""AQER's workbook a teacher can read (issue 13, point 7): the results page's words as headers,
numbers shown rounded with Excel number formats (the cells keep their values, and "Raw numbers"
lists every number at full precision), the expert grade beside the score, and one row per
person and question with the answer, its similarity and its grade."""

from __future__ import annotations

import pandas as pd
import pytest
from openpyxl import load_workbook

from core.aqer import aqer
from core.aqer.report import read_report, write_report
from tests.core.aqer.aqer_support import FACTS

from .test_aqer import crowd


@pytest.fixture
def graded(encoder):
    """A crowd with grades (the outlier gets 1, the others 4 or 5), an AI's answers and a blank."""
    frame = crowd()
    frame["grade"] = [
        "1" if w == "outlier" else ("5" if k % 2 else "4,5")  # a decimal comma, as typed
        for k, w in enumerate(frame["worker"])
    ]
    frame.loc[3, ["response", "grade"]] = ["", "0"]  # a graded blank
    ai = pd.DataFrame(
        [(q, "Bot", right, "") for q, (right, _) in FACTS.items()],
        columns=["question", "worker", "response", "grade"],
    )
    ai["is_llm"] = True
    ai["model"] = "Bot"
    frame["is_llm"] = False
    frame["model"] = ""
    return aqer(pd.concat([frame, ai], ignore_index=True), encoder), frame


def _sheet(book, name):
    ws = book[name]
    header = [c.value for c in ws[1]]
    return ws, header


def _column(ws, header, title):
    k = header.index(title) + 1
    return [ws.cell(row=r, column=k) for r in range(2, ws.max_row + 1)]


def test_headers_are_the_screens_words_with_the_grade_beside_the_score(tmp_path, graded):
    result, _ = graded
    out = write_report(result, tmp_path / "class.xlsx")
    book = load_workbook(out)
    assert book.sheetnames == ["Workers", "Answers", "Questions", "AI answers", "AI summary",
                               "Convergence", "Agreement", "Warnings", "Raw numbers", "Read me"]
    _, header = _sheet(book, "Workers")
    assert header[:5] == ["Rank", "Worker", "Score", "Expert grade", "Mean similarity"]
    assert "raw_score" not in header and "expert_grade" not in header
    assert {"Weight", "Answers", "Similarity to the others", "One-pass score"} <= set(header)
    assert _sheet(book, "Questions")[1][:2] == ["Question", "Mean similarity"]
    # the AI stands on the workers' scale first; its raw similarity is named so, not "score"
    assert _sheet(book, "AI summary")[1][:4] == ["AI model", "Score on the workers' 0-1 scale",
                                                 "Above % of workers", "Mean similarity"]
    assert _sheet(book, "Questions")[1][3] == "Answer closest to the class's consensus"
    assert _sheet(book, "Agreement")[1][:2] == ["Comparison", "Statistic"]


def test_numbers_are_shown_rounded_and_keep_their_values(tmp_path, graded):
    result, _ = graded
    book = load_workbook(write_report(result, tmp_path / "class.xlsx"))
    ws, header = _sheet(book, "Workers")
    scores = _column(ws, header, "Score")
    assert {c.number_format for c in scores} == {"0.000"}
    assert {c.number_format for c in _column(ws, header, "Mean similarity")} == {"0.000"}
    assert {c.number_format for c in _column(ws, header, "Expert grade")} == {"0.00"}
    assert {c.number_format for c in _column(ws, header, "Weight")} == {"0.0000"}
    assert {c.number_format for c in _column(ws, header, "Rank")} == {"0"}
    # the cell holds the full value; only the display rounds
    assert [c.value for c in _column(ws, header, "Mean similarity")] == pytest.approx(
        result.workers["raw_score"].tolist(), abs=0, rel=1e-15)
    grades = dict(zip([c.value for c in _column(ws, header, "Worker")],
                      [c.value for c in _column(ws, header, "Expert grade")]))
    expected = result.workers.set_index("worker")["expert_grade"]
    for worker, grade in grades.items():
        assert grade == pytest.approx(expected[worker])
    ws, header = _sheet(book, "Agreement")
    assert {c.number_format for c in _column(ws, header, "p")} == {'[<0.001]"< 0.001";0.000'}
    ws, header = _sheet(book, "AI summary")
    assert {c.number_format for c in _column(ws, header, "Above % of workers")} == {'0"%"'}


def test_one_row_per_person_and_question(tmp_path, graded):
    result, frame = graded
    book = load_workbook(write_report(result, tmp_path / "class.xlsx"))
    ws, header = _sheet(book, "Answers")
    assert header == ["Worker", "Question", "Answer", "Similarity", "Expert grade"]
    rows = [[c.value for c in row] for row in ws.iter_rows(min_row=2)]
    assert len(rows) == len(frame)  # every person x question of the crowd (the blank too)
    # people in the Workers sheet's order (best first), questions in the order asked
    order = list(result.workers["worker"])
    assert [order.index(r[0]) for r in rows] == sorted(order.index(r[0]) for r in rows)
    given = {(w, q): g for w, q, g in zip(frame["worker"], frame["question"], frame["grade"])}
    similarity = {(w, q): s for w, q, s in zip(result.responses["worker"],
                                               result.responses["question"],
                                               result.responses["similarity"])}
    for worker, question, answer, sim, grade in rows:
        assert grade == pytest.approx(float(given[(worker, question)].replace(",", ".")))
        assert sim == pytest.approx(similarity[(worker, question)])
    blank = next(r for r in rows if r[2] is None)
    assert blank[4] == 0  # the graded blank keeps its grade
    assert {c.number_format for c in _column(ws, header, "Similarity")} == {"0.000"}


def test_raw_numbers_hold_every_number_at_full_precision(tmp_path, graded):
    result, _ = graded
    out = write_report(result, tmp_path / "class.xlsx")
    raw = pd.read_excel(out, sheet_name="Raw numbers")
    assert list(raw.columns) == ["Sheet", "Worker or AI model", "Question", "Measure", "Value"]
    workers = raw[raw["Sheet"] == "Workers"]
    for _, row in result.workers.iterrows():
        mine = workers[workers["Worker or AI model"] == row["worker"]].set_index("Measure")
        assert mine.loc["raw_score", "Value"] == row["raw_score"]  # exactly, not rounded
        assert mine.loc["score", "Value"] == row["score"]
    answers = raw[(raw["Sheet"] == "Answers") & (raw["Measure"] == "similarity")]
    assert len(answers) == result.responses["similarity"].notna().sum()
    assert not raw["Value"].isna().any()  # a missing number is left out, never made up
    ai = raw[(raw["Sheet"] == "AI answers") & (raw["Measure"] == "score")]
    assert sorted(ai["Value"]) == sorted(result.llm_answers["score"].dropna())


def test_the_workbook_reads_back_as_the_contract(tmp_path, graded):
    result, _ = graded
    tables = read_report(write_report(result, tmp_path / "class.xlsx"))
    assert list(tables["Workers"].columns[:6]) == ["worker", "score", "raw_score", "weight",
                                                   "rank", "answered"]
    assert list(tables["Responses"].columns) == ["question", "worker", "response",
                                                 "similarity", "grade"]
    assert set(tables["LLM summary"]["model"]) == {"Bot"}


def test_without_grades_there_is_no_grade_column(tmp_path, encoder):
    result = aqer(crowd(), encoder)
    book = load_workbook(write_report(result, tmp_path / "plain.xlsx"))
    assert _sheet(book, "Answers")[1] == ["Worker", "Question", "Answer", "Similarity"]
    assert "Expert grade" not in _sheet(book, "Workers")[1]
