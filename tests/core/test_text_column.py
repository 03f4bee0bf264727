"""A column of numbers is never taken as the texts to judge (issue: a numeric column was accepted
as "content to judge"); the CLI says which option chooses the column."""

from __future__ import annotations

import argparse

import pandas as pd
import pytest

from core.cli import UserError
from core.interacteval.inputs import TextsSetup, read_texts
from core.majeval.inputs import ItemsSetup, open_items, read_items


@pytest.fixture
def gradebook(tmp_path):
    path = tmp_path / "grades.xlsx"
    pd.DataFrame({"Student": [f"S{i}" for i in range(1, 8)],
                  "Score": [3, 4, 5, 2, 4, 3, 5],
                  "Essay": [f"My essay number {i} about rivers." for i in range(1, 8)]}
                 ).to_excel(path, index=False)
    return path


def test_a_numeric_column_is_refused_as_the_items_to_judge(gradebook):
    read = read_items(gradebook, ItemsSetup(columns={"content": "Score", "id": "Student"}))
    assert not read.items
    assert any("“Score”" in e and "numbers, not texts" in e and "7 of 7" in e
               for e in read.errors)
    good = read_items(gradebook, ItemsSetup(columns={"content": "Essay", "id": "Student"}))
    assert len(good.items) == 7 and not good.errors


def test_a_numeric_column_is_refused_as_the_texts_to_score(gradebook):
    read = read_texts(gradebook, TextsSetup(columns={"text": "Score", "id": "Student"}))
    assert not read.items and any("numbers, not texts" in e for e in read.errors)


def test_the_wizard_guess_never_lands_on_a_number_column_silently(gradebook):
    opened = open_items(gradebook, ItemsSetup())
    content = opened.setup.columns.get("content")
    assert content != "Score" or opened.read.errors


def test_the_cli_names_the_option_that_fixes_it(gradebook):
    from core.cli.checklist import _items

    args = argparse.Namespace(items=str(gradebook))
    with pytest.raises(UserError) as caught:
        _items(args, TextsSetup(columns={"text": "Score", "id": "Student"}))
    message = str(caught.value)
    assert "numbers, not texts" in message and "--text-col" in message
    assert "text = “Score”" in message
