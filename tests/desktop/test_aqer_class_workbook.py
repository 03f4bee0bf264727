"""Issue 27 in the wizard, on the teacher's class workbook (title row, blank row, header in row
3, a Total column, a Comments column, an absent student, rows "ChatGPT" and "Gemini"): the
pages as a teacher uses them, then the exported workbook compared cell by cell with
``evaldesk aqer`` on the same file with the same choices."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from desktop.aqer import open_aqer_wizard
from tests.core.aqer.class_workbook import ABSENT, SPLIT_QUESTION, class_workbook
from tests.core.cli.aqer_routes_support import TinyEncoder
from tests.core.cli.test_aqer_routes import cells, same_cells
from tests.desktop.aqer_support import click, evaldesk, wait_check, wait_read

BOTS = ("ChatGPT", "Gemini")


@pytest.fixture(autouse=True)
def tiny_encoder(monkeypatch):
    # the wizard and the command line both make their encoder through core.embeddings.Encoder
    monkeypatch.setattr("core.embeddings.Encoder", TinyEncoder)


def ticked(items) -> set[str]:
    return {items.item(i).text() for i in range(items.count())
            if items.item(i).checkState() == Qt.CheckState.Checked}


def tick(items, names) -> None:
    for i in range(items.count()):
        if items.item(i).text() in names:
            items.item(i).setCheckState(Qt.CheckState.Checked)


def test_the_class_workbook_through_the_wizard_gives_the_cli_s_workbook(qtbot, window,
                                                                       tmp_path):
    source = class_workbook(tmp_path / "period 3.xlsx").resolve()
    wiz = open_aqer_wizard(window)
    file_page = wiz.pages["file"]
    file_page.choose_file(source)
    wait_read(qtbot, wiz)
    # 2. the title is not the header; the page says which row is
    assert wiz.read.header_row == 3 and wiz.read.frame.columns[0] == "Student"
    assert not file_page.header_note.isHidden()
    assert "Row 3 is read as the header" in file_page.header_note.text()
    assert file_page.header_spin.value() == 0  # found, not chosen
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    columns = wiz.pages["columns"]
    assert wiz.check.ok, [i.message for i in wiz.check.errors]
    # 3. the Comments column is left out before the run, with the reason
    assert "Comments" in wiz.choices.columns.ignore_cols
    comments = next(columns.ignore_list.item(i) for i in range(columns.ignore_list.count())
                    if "Comments" in columns.ignore_list.item(i).text())
    assert comments.checkState() == Qt.CheckState.Checked
    assert "looks like notes" in comments.text()
    assert "'Comments' looks like notes" in columns.guess_note.text()

    # 1. tick the chatbot rows, then choose "Total" as the grades: the ticks stay
    tick(columns.llm_list, BOTS)
    wait_check(qtbot, wiz)
    assert wiz.choices.columns.llm_workers == list(BOTS)
    columns.wide_grade_combo.setCurrentIndex(columns.wide_grade_combo.findData("Total"))
    wait_check(qtbot, wiz)
    assert wiz.choices.columns.grade_col == "Total"
    assert wiz.choices.columns.llm_workers == list(BOTS)
    assert ticked(columns.llm_list) == set(BOTS)
    assert "Total" not in wiz.choices.columns.ignore_cols and "Comments" in wiz.choices.columns.ignore_cols
    # changing the blank words or the blank rule keeps them too
    columns.blank_combo.setCurrentIndex(columns.blank_combo.findData("worst"))
    wait_check(qtbot, wiz)
    columns.blank_combo.setCurrentIndex(columns.blank_combo.findData("auto"))
    wait_check(qtbot, wiz)
    assert wiz.choices.columns.llm_workers == list(BOTS) and wiz.choices.columns.grade_col == "Total"

    # 4. the absent student: a box to score them, unticked; the page counts 29 people
    assert not columns.absent_box.isHidden() and not columns.absent_box.isChecked()
    assert ABSENT in columns.absent_box.text()
    assert "from 29 workers" in columns.summary_label.text()
    click(qtbot, wiz.next_button)
    assert wiz.page == "model"
    click(qtbot, wiz.next_button)
    assert wiz.page == "run"
    run_text = wiz.pages["run"].run_summary.text()
    assert "from 29 workers" in run_text and "the header in row 3" in run_text
    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(lambda: wiz.page == "results", timeout=60_000)
    res = wiz.pages["results"].results
    summary = res.summary.text()
    assert "<b>29 workers</b> scored" in summary  # the same people as the Run page
    assert "answered nothing" in summary and "on the workers' 0-1 scale" in summary
    # 5. the split question is marked, and the best answer is named for what it is
    res.show_question(SPLIT_QUESTION)
    assert "closest to the class's consensus" in res.best_label.text()
    assert "split into camps" in res.best_label.text() and "by hand" in res.best_label.text()
    # 6. the AIs on the workers' scale, with the sentence on length and style
    titles = [res.llm_summary_model.columns[c].title
              for c in range(res.llm_summary_model.columnCount())]
    assert titles[:3] == ["AI model", "Score on the workers' 0-1 scale", "Above % of workers"]
    assert res.llm_summary_model.rowCount() == 2

    qtbot.waitUntil(lambda: res.comparison is not None, timeout=30_000)
    task = wiz.pages["results"].export(tmp_path / "wizard.xlsx")
    qtbot.waitUntil(task.done, timeout=30_000)
    assert evaldesk(["aqer", str(source), "-o", str(tmp_path / "cli.xlsx"),
                     "--llm-worker", "ChatGPT", "--llm-worker", "Gemini",
                     "--grade-col", "Total"]) == 0
    a, b = cells(tmp_path / "cli.xlsx"), cells(tmp_path / "wizard.xlsx")
    assert same_cells(a, b) > 1000
    assert {row[0] for row in a["AI summary"][1:]} == set(BOTS)


def test_the_header_row_can_be_chosen_in_the_wizard(qtbot, window, tmp_path):
    source = class_workbook(tmp_path / "period 3.xlsx").resolve()
    wiz = open_aqer_wizard(window)
    file_page = wiz.pages["file"]
    file_page.choose_file(source)
    wait_read(qtbot, wiz)
    file_page.header_spin.setValue(1)  # the title, on purpose
    qtbot.waitUntil(lambda: wiz.read is not None and wiz.read.header_row == 1, timeout=15_000)
    assert wiz.choices.header_row == 1
    assert "Row 1" not in file_page.header_note.text()
    file_page.header_spin.setValue(2)  # an empty row: said, and nothing goes on
    qtbot.waitUntil(lambda: wiz.read is not None and wiz.read.header_row == 2, timeout=15_000)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    assert not wiz.check.ok
    assert any("Row 2 cannot be the header row" in i.message for i in wiz.check.errors)
    wiz.show_page("file")
    file_page.header_spin.setValue(0)  # found again
    qtbot.waitUntil(lambda: wiz.read is not None and wiz.read.header_row == 3, timeout=15_000)
    assert wiz.choices.header_row is None
    wait_check(qtbot, wiz)
    assert wiz.check.ok


def test_choosing_the_grade_column_keeps_the_ai_rows_ticked(qtbot, window, tmp_path):
    """Point 1 on its own (the header in row 1): tick both chatbot rows, then choose "Total"
    as the grades; before, both ticks vanished and the chatbots were scored as students."""
    source = class_workbook(tmp_path / "period 3.xlsx", title=False).resolve()
    wiz = open_aqer_wizard(window)
    wiz.pages["file"].choose_file(source)
    wait_read(qtbot, wiz)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    columns = wiz.pages["columns"]
    tick(columns.llm_list, BOTS)
    wait_check(qtbot, wiz)
    columns.wide_grade_combo.setCurrentIndex(columns.wide_grade_combo.findData("Total"))
    wait_check(qtbot, wiz)
    assert wiz.choices.columns.grade_col == "Total"
    assert wiz.choices.columns.llm_workers == list(BOTS)
    assert ticked(columns.llm_list) == set(BOTS)
    # another name column drops only the names it does not hold
    columns.key_combo.setCurrentIndex(columns.key_combo.findData("Comments"))
    wait_check(qtbot, wiz)
    assert wiz.choices.columns.llm_workers == []
    columns.key_combo.setCurrentIndex(columns.key_combo.findData("Student"))
    wait_check(qtbot, wiz)


@pytest.mark.parametrize("title", [True, False])
def test_the_columns_page_shows_rows_of_the_preview_at_1280x800(qtbot, window, tmp_path, title):
    """Issue 27: at 1280x800 the preview showed 2 rows under the page's notes and choices."""
    window.resize(1280, 800)
    source = class_workbook(tmp_path / "period 3.xlsx", title=title).resolve()
    wiz = open_aqer_wizard(window)
    wiz.pages["file"].choose_file(source)
    wait_read(qtbot, wiz)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    columns = wiz.pages["columns"]
    tick(columns.llm_list, BOTS)
    wait_check(qtbot, wiz)
    qtbot.wait(100)
    view = columns.preview_view
    first, last = view.rowAt(0), view.rowAt(view.viewport().height() - 1)
    assert first == 0 and last >= 5, (first, last)  # six rows or more (before: four)
    issues = columns.issues_view
    assert issues.rowAt(issues.viewport().height() - 1) >= 1 or issues.model().rowCount() < 2
