"""The readers of MAJ-Eval's files: one list of column names per role, for the app and the
command line alike."""

from __future__ import annotations

import pandas as pd
import pytest

from core.majeval.inputs import (
    ItemsSetup,
    guess_item_columns,
    open_items,
    read_dimensions,
    read_items,
)


@pytest.mark.parametrize("content", ["Bot", "Response", "Bot response"])
def test_question_id_prompt_and_bot_columns_are_guessed(content):
    roles, human = guess_item_columns(["Question ID", "Prompt", content, "Rating"])
    assert roles == {"content": content, "context": "Prompt", "id": "Question ID"}
    assert human == ["Rating"]


def test_the_usual_columns_are_still_guessed():
    roles, human = guess_item_columns(["id", "qa pair", "story section", "expert"])
    assert roles == {"content": "qa pair", "context": "story section", "id": "id"}
    assert human == ["expert"]


def test_items_are_read_with_row_numbered_problems(tmp_path):
    path = tmp_path / "items.xlsx"
    pd.DataFrame({"Question ID": ["a", "b", "c"],
                  "Prompt": ["A fox story.", "A sky story.", ""],
                  "Bot": ["Q: What does a fox eat? A: Mice.", "", "Q: Red? A: Yes."],
                  "Rating": ["5", "2", "good"]}).to_excel(path, index=False)
    opened = open_items(path, ItemsSetup())
    assert opened.setup.sheet == "Sheet1" and opened.setup.human == ["Rating"]
    read = opened.read
    assert [(i.id, i.content, i.context, i.human, i.row) for i in read.items] == [
        ("a", "Q: What does a fox eat? A: Mice.", "A fox story.", {"Rating": 5.0}, 2),
        ("c", "Q: Red? A: Yes.", "", {}, 4)]
    assert read.problems == [
        'items.xlsx, sheet "Sheet1", row 3, column C ("Bot"): empty; the row is skipped.',
        ('items.xlsx, sheet "Sheet1", row 4, column D ("Rating"): “good” is not a number, so '
         "this item has no human rating for Rating.")]
    named = read_items(path, opened.setup.model_copy(update={"human_names": {"Rating":
                                                                              "Quality"}}))
    assert named.items[0].human == {"Quality": 5.0}


def test_a_repeated_id_stops_the_items(tmp_path):
    path = tmp_path / "items.csv"
    pd.DataFrame({"id": ["a", "a"], "answer": ["x", "y"]}).to_csv(path, index=False)
    read = open_items(path, ItemsSetup()).read
    assert read.errors == [('items.csv, row 3, column A ("id"): the id “a” is also in row 2; '
                            "every item needs its own id.")]


def test_dimensions_share_one_scale(tmp_path):
    assert [d.name for d in read_dimensions(None).dimensions] == ["Overall quality"]
    path = tmp_path / "dims.xlsx"
    pd.DataFrame({"dimension": ["Clarity", "Fit"], "definition": ["Clear.", "Fits."],
                  "min": [1, 1], "max": [7, 5]}).to_excel(path, index=False)
    read = read_dimensions(path)
    assert read.errors == [('sheet "Sheet1" of dims.xlsx: all dimensions share one scale; give '
                            "the same min and max on every row.")]
