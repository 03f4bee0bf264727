"""Issue 27 for MAJ-Eval's items and InteractEval's texts: a title and a blank row above the
table are not the header; the page says which row was used and lets the user choose it."""

from __future__ import annotations

import csv

from openpyxl import Workbook

from desktop.interacteval import open_interacteval_wizard
from desktop.majeval import open_majeval_wizard
from tests.desktop.interacteval_support import wait_step as wait_texts
from tests.desktop.majeval_support import wait_step as wait_items

TITLE = "Story questions written by the model - checked by Ms Park, spring term"


def titled_items(path):
    book = Workbook()
    sheet = book.active
    sheet.append([TITLE])
    sheet.append([])
    sheet.append(["id", "qa_pair", "story_section", "teacher_rating"])
    for k in range(4):
        sheet.append([f"q{k + 1}", f"Why did the fox run? Because of the dog {k}.",
                      f"The fox saw the dog ({k}).", 3 + k % 2])
    book.save(path)
    return path


def test_majeval_items_under_a_title_are_read_and_the_header_row_can_be_chosen(qtbot, window,
                                                                                tmp_path):
    wiz = open_majeval_wizard(window)
    page = wiz.pages["items"]
    page.choose_items(titled_items(tmp_path / "items.xlsx"))
    assert wait_items(qtbot, wiz, "items") == "finished"
    setup = wiz.choices.items
    assert setup.columns["content"] == "qa_pair" and setup.columns["id"] == "id"
    assert [i.id for i in wiz.choices.item_list] == ["q1", "q2", "q3", "q4"]
    assert page.header_spin.value() == 0
    assert "Row 3 is read as the header" in page.items_problems.text()
    page.header_spin.setValue(1)  # the title, on purpose: no items under that "header"
    assert wiz.choices.items.header_row == 1
    assert wiz.choices.item_list == [] or wiz.opened_items.read.errors
    page.header_spin.setValue(3)
    assert wiz.choices.items.header_row == 3
    assert [i.id for i in wiz.choices.item_list] == ["q1", "q2", "q3", "q4"]
    assert "Row 3 is the header (as chosen)" not in page.items_problems.text()


def test_interacteval_texts_under_a_title_are_read_and_the_header_row_can_be_chosen(
        qtbot, window, tmp_path):
    texts = tmp_path / "answers.csv"
    with texts.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Answers to score (week 3)"])
        writer.writerow([])
        writer.writerow(["answer", "Clarity"])
        writer.writerow(["The sky is blue because air scatters blue light.", 4])
        writer.writerow(["Rain falls.", 3])
    wiz = open_interacteval_wizard(window)
    wiz.pages["dimensions"].add_dimension("Clarity")
    score = wiz.pages["score"]
    score.choose_texts(texts)
    assert wait_texts(qtbot, wiz, "texts") == "finished"
    read = wiz.opened_texts.read
    assert [i.text for i in read.items] == ["The sky is blue because air scatters blue light.",
                                            "Rain falls."]
    assert wiz.choices.texts.human == {"Clarity": "Clarity"}
    assert any("Row 3 is read as the header" in p for p in read.problems)
    assert score.header_spin.value() == 0
    score.header_spin.setValue(3)
    assert wait_texts(qtbot, wiz, "texts") == "finished"
    assert wiz.choices.texts.header_row == 3
    assert len(wiz.opened_texts.read.items) == 2
