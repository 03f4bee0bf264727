"""The AQER wizard's table models pass Qt's model tester and show values honestly."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from PySide6.QtCore import QSortFilterProxyModel, Qt

from core.tables import TableIssue
from desktop.aqer.models import IssuesModel, PreviewModel
from desktop.aqer.results import WORKER_COLUMNS
from desktop.views import SORT_ROLE, Column, FrameModel


@pytest.fixture
def workers():
    return pd.DataFrame({
        "worker": ["Ana", "Ben", "Cy"],
        "score": [1.0, 0.25, float("nan")],
        "raw_score": [0.9, 0.7, None],
        "weight": [0.8, 0.2, None],
        "rank": pd.array([1, 2, pd.NA], dtype="Int64"),
        "answered": [6, 5, 0],
    })


def test_frame_model_passes_the_model_tester(qtmodeltester, workers):
    model = FrameModel(WORKER_COLUMNS)
    model.set_frame(workers)
    qtmodeltester.check(model, force_py=True)
    # only the frame's columns are shown, in the spec's order
    assert [c.key for c in model.columns] == ["rank", "worker", "score", "raw_score", "weight",
                                              "answered"]
    empty = FrameModel(WORKER_COLUMNS)
    empty.set_frame(workers.iloc[:0])
    qtmodeltester.check(empty, force_py=True)


def test_missing_values_say_so_and_sort_last(workers):
    model = FrameModel(WORKER_COLUMNS)
    model.set_frame(workers)
    score = model.column_of("score")
    assert model.index(0, score).data() == "1.000"
    assert model.index(2, score).data() == "not scored"  # never "nan" or a made-up 0
    assert model.index(2, model.column_of("rank")).data() == "not scored"
    assert model.index(2, score).data(SORT_ROLE) == -math.inf
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    proxy.sort(score, Qt.SortOrder.DescendingOrder)
    assert [proxy.index(r, model.column_of("worker")).data() for r in range(3)] == [
        "Ana", "Ben", "Cy"]
    proxy.sort(score, Qt.SortOrder.AscendingOrder)
    assert proxy.index(0, model.column_of("worker")).data() == "Cy"
    assert model.headerData(score, Qt.Orientation.Horizontal) == "Score"
    assert "best worker gets 1" in model.headerData(score, Qt.Orientation.Horizontal,
                                                   Qt.ItemDataRole.ToolTipRole)


def test_a_later_result_shows_the_columns_an_earlier_one_lacked(qtmodeltester, workers):
    """Re-running with baselines (or counted blanks) after a run without them must show the
    new columns: a results page hiding them would show part of the current run."""
    model = FrameModel(WORKER_COLUMNS)
    model.set_frame(workers)
    assert model.column_of("rasa_skill") == -1
    model.set_frame(workers.assign(rasa_skill=[2.0, 1.0, None], blank=[0, 1, 6]))
    qtmodeltester.check(model, force_py=True)
    assert model.column_of("rasa_skill") >= 0 and model.column_of("blank") >= 0
    assert model.index(1, model.column_of("blank")).data() == "1"


def test_percent_columns(qtmodeltester):
    model = FrameModel([Column("model", "AI"), Column("p", "Above", "percent")])
    model.set_rows([["A", 62.5], ["B", None]])
    qtmodeltester.check(model, force_py=True)
    assert model.index(0, 1).data() == "62%" and model.index(1, 1).data() == "—"


def test_frame_model_plain_rows(qtmodeltester):
    model = FrameModel([Column("question", "Question"), Column("x", "Score", "score")])
    model.set_rows([["Q1", 0.5], ["Q2", None]])
    qtmodeltester.check(model, force_py=True)
    assert model.index(1, 1).data() == "—"
    assert model.value(0, "x") == 0.5


def test_issues_model(qtmodeltester):
    model = IssuesModel()
    model.set_issues([
        TableIssue("warning", 'answers.xlsx, sheet "Data", row 4: the answer is empty.',
                   "Data", 4),
        TableIssue("error", 'Choose the column that holds "answers" in sheet "Data".', "Data"),
    ])
    qtmodeltester.check(model, force_py=True)
    assert model.errors == 1 and model.warnings == 1
    assert model.index(0, 0).data() == "Must fix"  # errors first
    assert model.index(1, 0).data() == "Check"
    assert model.index(1, 1).data() == "4"
    assert "row 4" in model.index(1, 2).data()
    assert model.index(0, 0).data(Qt.ItemDataRole.DecorationRole) is not None
    model.set_issues([])
    qtmodeltester.check(model, force_py=True)


def test_preview_model(qtmodeltester):
    frame = pd.DataFrame(
        {"question": ["Q1", "Q2"], "worker": ["Ana", "Ben"], "response": ["yes", "x" * 300]},
        index=pd.Index([2, 3], name="row"),
    )
    model = PreviewModel()
    model.set_table(frame, {"question": "A", "worker": "B", "response": "C"})
    qtmodeltester.check(model, force_py=True)
    model.set_roles({"question": "questions", "response": "answers"})
    qtmodeltester.check(model, force_py=True)
    assert model.headerData(0, Qt.Orientation.Horizontal) == "A: question\n→ questions"
    assert model.headerData(1, Qt.Orientation.Horizontal) == "B: worker\n(not used)"
    assert model.headerData(1, Qt.Orientation.Vertical) == "3"  # the sheet's own row number
    assert model.index(0, 0).data(Qt.ItemDataRole.BackgroundRole) is not None
    assert model.index(0, 1).data(Qt.ItemDataRole.BackgroundRole) is None
    assert len(model.index(1, 2).data()) == 120  # long cells are shortened in the preview
    assert model.index(1, 2).data(Qt.ItemDataRole.ToolTipRole) == "x" * 300


def test_numbers_are_never_shown_in_exponent_form(qtmodeltester):
    # issue 27: "-1.62e-04" in the Comparison table
    model = FrameModel([Column("condition", "Condition"), Column("d", "Difference", "number")])
    model.set_rows([["RASA", -1.62e-04], ["F1", 0.000], ["BLEU-1", -0.0721], ["big", 123456.7]])
    qtmodeltester.check(model)
    shown = [model.index(r, 1).data() for r in range(4)]
    assert shown == ["0.000", "0.000", "-0.072", "123,457"]
