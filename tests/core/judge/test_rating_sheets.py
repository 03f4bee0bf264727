"""The Excel rating sheet made for one rater (core.grading.sheets): only their items, no judge's
score and no other rater's grade, a drop-down of the grades; filled in as a person does in
Excel (openpyxl, cells typed over, rows copied) and read back with every bad row named."""

from __future__ import annotations

import pandas as pd
import pytest
from openpyxl import load_workbook

from core.grading import plan as gp
from core.grading.sheets import MADE_FOR, read_rating_sheet, sheet_name, write_rating_sheet
from core.judge_check import (
    JudgeData,
    JudgeItem,
    Rating,
    export_ratings,
    load_ratings,
    read_ratings,
    save_rating,
)
from core.project import Project

QUESTION = "Does it answer the question asked?"


def _judge(n: int = 30) -> JudgeData:
    items = [JudgeItem(item_id=f"Q{k:02d}", text=f"Answer {k}: the bill of rights\nsecond line",
                       context=f"Question {k % 10}", scores={"Correctness": float(k % 5 + 1)},
                       answers={"Correctness": {QUESTION: k % 4 != 0}}) for k in range(n)]
    items.append(JudgeItem(item_id="SAMPLE", text="shown to the model", held_out=True,
                           scores={"Correctness": 3.0}))
    return JudgeData(method="InteractEval", items=items, dimensions=["Correctness"],
                     questions={"Correctness": [QUESTION]}, model="secret-judge-9000",
                     source="project run 1")


@pytest.fixture
def project(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as p:
        yield p


def _rows(path):
    return pd.read_excel(path, sheet_name="Ratings", dtype=str, keep_default_na=False)


def test_a_sheet_holds_only_its_raters_items_and_no_judge_or_other_grades(project, tmp_path):
    judge = _judge()
    plan = gp.make_plan(project, "interacteval", judge, ["Anna", "Ben", "Cleo"], 2, who="Lead")
    mine = plan.items["Anna"]
    # Ben graded some of Anna's items already, and Anna one of them
    save_rating(project, "interacteval", Rating(mine[0], "Ben", {"Correctness": 1.5},
                                                note="BEN'S NOTE"))
    save_rating(project, "interacteval", Rating(mine[0], "Anna", {"Correctness": 4.5},
                                                {"Correctness": {QUESTION: False}}, "mine"))
    path = tmp_path / sheet_name("Anna", "interacteval")
    assert path.name == "interacteval-rating-sheet-Anna.xlsx"
    write_rating_sheet(path, judge, "Anna", mine, own=load_ratings(project, "interacteval"))
    rows = _rows(path)
    assert list(rows.columns) == ["rater", "item", "dimension", "question", "rating", "note",
                                  "context", "text"]
    assert list(dict.fromkeys(rows["item"])) == list(mine)  # her items, in the order given
    assert set(rows["rater"]) == {"Anna"} and len(rows) == 2 * len(mine)
    first = rows[rows["item"] == mine[0]]
    assert list(first["rating"]) == ["4.5", "No"] and first["note"].iloc[0] == "mine"
    assert first["text"].iloc[0].startswith(f"Answer {int(mine[0][1:])}")
    everything = " ".join(" ".join(map(str, r)) for r in pd.read_excel(
        path, sheet_name=None, dtype=str, keep_default_na=False)["Ratings"].values)
    assert "1.5" not in everything and "BEN'S NOTE" not in everything
    for sheet in load_workbook(path, read_only=True).worksheets:  # no judge anywhere
        text = " ".join(str(c) for row in sheet.iter_rows(values_only=True) for c in row if c)
        assert "secret-judge-9000" not in text
    book = load_workbook(path)
    assert book.sheetnames[0] == "Read me"
    readme = {r[0]: r[1] for r in book["Read me"].iter_rows(values_only=True) if r and r[0]}
    assert readme[MADE_FOR] == "Anna"
    rules = book["Ratings"].data_validations.dataValidation
    lists = sorted(r.formula1 for r in rules)
    assert lists == ['"1,1.5,2,2.5,3,3.5,4,4.5,5"', '"Yes,No"']
    grade_cells = next(r for r in rules if "Yes" not in r.formula1).sqref
    assert "E2" in grade_cells and "E3" not in grade_cells  # row 3 is the Yes/No question


def test_a_filled_sheet_is_read_back_with_every_bad_row_named(project, tmp_path):
    judge = _judge()
    ids = [i.item_id for i in judge.items if not i.held_out]
    path = tmp_path / "anna.xlsx"
    write_rating_sheet(path, judge, "Anna", ids[:10])
    book = load_workbook(path)
    ws = book["Ratings"]
    # as a person fills it in: grades typed as numbers or text, Yes/no in any case
    for row in range(2, ws.max_row + 1):
        ws.cell(row, 5).value = (3 if row % 2 == 0 else "yes")
    ws.cell(4, 5).value = "4,5"  # a decimal comma
    ws.cell(6, 5).value = 7  # off the scale (row 6)
    ws.cell(8, 5).value = 3.3  # between the grades (row 8)
    ws.cell(10, 1).value = "Ben"  # another rater's name typed in Anna's sheet (row 10)
    ws.cell(12, 2).value = "Q99"  # an item the judge never scored (row 12)
    ws.cell(13, 5).value = "maybe"  # not Yes or No (row 13)
    ws.append([ws.cell(14, c).value for c in range(1, 9)])  # row 14 copied to row 22
    ws.cell(22, 5).value = 5
    ws.cell(14, 6).value = "a note"
    book.save(path)
    got = read_rating_sheet(path, judge)
    assert got.made_for == "Anna" and not got.errors
    text = "\n".join(got.problems)
    assert 'row 6, column E ("rating"): “7” is not a rating from 1 to 5' in text
    assert 'row 8, column E ("rating"): “3.3” is not one of the grades (1, 1.5' in text
    assert 'row 10, column A ("rater"): the rater is “Ben”, but this sheet was made for Anna' \
        in text
    assert "row 12: the item “Q99” is not among the judged items" in text
    assert "row 13, column E (\"rating\"): “maybe” is not Yes or No" in text
    assert f"rows 14 and 22 both rate item “{ids[6]}” on Correctness for Anna: row 22 is " \
        "skipped" in text
    assert len(got.problems) == 6
    scores = {r.item_id: r.scores.get("Correctness") for r in got.ratings}
    assert scores[ids[1]] == 4.5 and scores[ids[6]] == 3.0  # the first of the two rows kept
    assert scores[ids[2]] is None and scores[ids[3]] is None  # rows 6 and 8 skipped
    assert {r.rater for r in got.ratings} == {"Anna"}
    answers = {r.item_id: r.answers for r in got.ratings}
    assert answers[ids[0]] == {"Correctness": {QUESTION: True}}
    # read as someone else's sheet: refused, naming both
    wrong = read_rating_sheet(path, judge, rater="Ben")
    assert wrong.errors == [("anna.xlsx was made for Anna, not for Ben: read it as Anna's "
                             "ratings, or give Ben their own sheet.")]


def test_items_outside_the_plan_and_a_held_out_item_are_said(project, tmp_path):
    judge = _judge()
    plan = gp.make_plan(project, "interacteval", judge, ["Anna", "Ben"], 2, who="Lead")
    ids = [i.item_id for i in judge.items if not i.held_out]
    plan_small = gp.GradingPlan(("Anna", "Ben"), 2, {"Anna": tuple(ids[:5]),
                                                     "Ben": tuple(ids[:5])})
    path = tmp_path / "anna.xlsx"
    write_rating_sheet(path, judge, "Anna", ids[:8])
    book = load_workbook(path)
    ws = book["Ratings"]
    for row in range(2, ws.max_row + 1, 2):
        ws.cell(row, 5).value = 2
    ws.cell(2, 2).value = "SAMPLE"  # the held-out item is not offered and not read
    book.save(path)
    got = read_rating_sheet(path, judge, plan=plan_small)
    assert any("SAMPLE" in p and "not among the judged items" in p for p in got.problems)
    assert any("Anna graded 3 item(s) that are not theirs in the plan" in p
               for p in got.problems)
    assert len(got.ratings) == 7
    assert read_rating_sheet(path, judge, plan=plan).problems == [got.problems[0]]


def test_the_ratings_workbook_marks_each_labels_origin_and_reads_agreed_grades_back(tmp_path):
    anna = Rating("Q01", "Anna", {"Correctness": 2.0}, note="short", at="2026-01-02T10:00:00",
                  blind=True)
    ben = Rating("Q01", "Ben", {"Correctness": 4.0}, blind=False)
    agreed = Rating("Q01", "Cleo", {"Correctness": 3.0}, kind="adjudicated",
                    sources=[anna, ben], note="met halfway")
    export_ratings(tmp_path / "r.xlsx", [anna, ben], adjudicated=[agreed])
    frame = pd.read_excel(tmp_path / "r.xlsx", sheet_name="Ratings", dtype=str,
                          keep_default_na=False)
    assert list(frame["origin"]) == ["human", "human", "adjudicated"]
    assert list(frame["blind"]) == ["yes", "no", ""]
    assert frame["decided_from"].iloc[2] == "Anna: Correctness 2; Ben: Correctness 4"
    got = read_ratings(tmp_path / "r.xlsx")
    assert [(r.rater, r.scores) for r in got.ratings] == [("Anna", {"Correctness": 2.0}),
                                                         ("Ben", {"Correctness": 4.0})]
    assert [(r.rater, r.scores, [s.rater for s in r.sources]) for r in got.adjudicated] == [
        ("Cleo", {"Correctness": 3.0}, ["Anna", "Ben"])]
