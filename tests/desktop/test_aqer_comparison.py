"""AQER's Comparison and "How many workers?" tabs (pytest-qt, offscreen, tiny encoder)."""

from __future__ import annotations

import openpyxl
import pandas as pd
import pytest

from core.aqer.comparison import comparison_table
from core.aqer.session import AqerSession, load_choices
from desktop.aqer import open_aqer_wizard
from tests.core.aqer.aqer_support import TinyEncoder, graded_answers
from tests.desktop.aqer_support import click, to_results, wait_read


@pytest.fixture
def graded_file(tmp_path):
    path = tmp_path / "class.xlsx"
    graded_answers().to_excel(path, index=False)
    return path


def graded_results(qtbot, window, graded_file, monkeypatch):
    """The wizard on its Results page after the graded class, and its tiny encoder (the workers
    curve with 3 repetitions per panel)."""
    tiny = TinyEncoder()
    real = AqerSession.run_workers_curve
    monkeypatch.setattr(AqerSession, "run_workers_curve",
                        lambda self, **kwargs: real(self, **{**kwargs, "repetitions": 3}))
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.pages["file"].choose_file(graded_file)
    wait_read(qtbot, wiz)
    to_results(qtbot, wiz)
    return wiz, tiny


def test_comparison_tab_shows_the_cores_table_and_the_curve_is_computed_on_request(
        qtbot, qtmodeltester, window, graded_file, tmp_path, monkeypatch):
    wiz, tiny = graded_results(qtbot, window, graded_file, monkeypatch)
    res = wiz.pages["results"].results
    res.tabs.setCurrentWidget(res.comparison_tab)
    model = res.comparison_model
    qtbot.waitUntil(lambda: model.rowCount() == 5, timeout=30_000)  # computed in the executor
    qtmodeltester.check(model)
    expected = comparison_table(wiz.stored.result).frame
    assert model.rowCount() == 5
    assert [model.value(r, "condition") for r in range(5)] == expected["condition"].tolist()
    for r in range(5):
        for key in ("pearson", "pearson_ci_low", "spearman", "difference", "p_value"):
            want = expected[key].iloc[r]
            got = model.value(r, key)
            assert (got is None and pd.isna(want)) or got == pytest.approx(want), (r, key)
    assert res.comparison_view.isVisibleTo(res) and not res.comparison_empty.isVisibleTo(res)
    assert "RASA" in res.comparison_words.text() and "95% CI" in res.comparison_words.text()
    assert "Pearson r" in res.comparison_note.text()

    # another condition: the other blank-answer rule, scored without embedding anything
    calls = len(tiny.calls)
    click(qtbot, res.condition_button)
    qtbot.waitUntil(lambda: model.rowCount() == 6, timeout=30_000)
    assert model.value(5, "condition") == "AQER (blank answers left out)"  # the sheet is dense
    assert len(tiny.calls) == calls
    assert wiz.choices.conditions and load_choices(window.project).conditions == wiz.choices.conditions

    # how many workers: nothing until asked, then computed, shown and exported
    res.tabs.setCurrentWidget(res.curve_tab)
    assert res.curve_model.rowCount() == 0
    assert "Not computed yet" in res.curve_text.text()
    calls = len(tiny.calls)
    click(qtbot, res.curve_button)
    qtbot.waitUntil(lambda: res.curve_model.rowCount() == 4, timeout=60_000)
    qtmodeltester.check(res.curve_model)
    assert [res.curve_model.value(r, "workers") for r in range(4)] == [3, 5, 10, 12]
    assert res.curve_chart.canvas is not None
    assert "expert grades" in res.curve_text.text() and "seed 0" in res.curve_text.text()
    assert len(tiny.calls) == calls  # every answer came from the project's cache

    task = wiz.pages["results"].export(tmp_path / "out.xlsx")
    qtbot.waitUntil(task.done, timeout=20_000)
    book = openpyxl.load_workbook(tmp_path / "out.xlsx")
    assert {"Comparison", "Workers needed"} <= set(book.sheetnames)


def test_without_grades_the_comparison_tab_says_why(qtbot, window, tmp_path):
    path = tmp_path / "ungraded.xlsx"
    graded_answers().drop(columns="grade").to_excel(path, index=False)
    tiny = TinyEncoder()
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.pages["file"].choose_file(path)
    wait_read(qtbot, wiz)
    to_results(qtbot, wiz)
    res = wiz.pages["results"].results
    res.tabs.setCurrentWidget(res.comparison_tab)
    qtbot.waitUntil(lambda: "no expert grades" in res.comparison_empty.text(), timeout=30_000)
    assert res.comparison_model.rowCount() == 0
    assert res.comparison_empty.isVisibleTo(res)


def test_the_workers_curve_runs_in_the_background_with_progress_and_cancel(
        qtbot, window, graded_file, monkeypatch):
    """The curve is a step of its own: the window stays responsive, its panel shows the panels
    scored so far, and Cancel stops it between two panels (nothing kept, the button back)."""
    import threading

    from core.aqer import pipeline
    from core.aqer.session.workers_curve import load_workers_curve

    wiz, _ = graded_results(qtbot, window, graded_file, monkeypatch)
    res = wiz.pages["results"].results
    res.tabs.setCurrentWidget(res.curve_tab)

    real, calls, waiting = pipeline.aqer, [], threading.Event()

    def slow(*args, cancel=None, **kwargs):  # the third panel waits until Cancel is pressed
        calls.append(threading.current_thread() is threading.main_thread())
        if len(calls) == 3:
            waiting.set()
            for _ in range(600):
                if cancel is not None and cancel.cancelled:
                    break
                threading.Event().wait(0.05)
        return real(*args, cancel=cancel, **kwargs)

    monkeypatch.setattr(pipeline, "aqer", slow)
    click(qtbot, res.curve_button)
    qtbot.waitUntil(waiting.is_set, timeout=60_000)
    panel = res.curve_panel
    assert panel.isVisibleTo(res) and panel.cancel_button.isEnabled()
    assert not any(calls), "the panels are scored on the GUI thread"
    qtbot.waitUntil(lambda: panel.state is not None and panel.state.done >= 2, timeout=10_000)
    assert "random panels" in panel.stage_label.text() and panel.state.total == 10
    click(qtbot, panel.cancel_button)
    qtbot.waitUntil(lambda: res.curve_button.isEnabled(), timeout=30_000)
    assert panel.status == "stopped"
    assert len(calls) == 3  # stopped before the fourth panel
    assert res.curve_model.rowCount() == 0 and res.curve is None
    assert load_workers_curve(window.project, wiz.choices, repetitions=3) is None


def test_another_embedding_model_is_a_condition_row_with_its_paired_test(
        qtbot, qtmodeltester, window, graded_file, tmp_path):
    """The Comparison tab's "Also score with another embedding model" menu: the bundled model
    through PyTorch (here a second tiny encoder) becomes a row with the paired test against
    AQER, kept in the project (asked again: nothing embedded) and exported; a folder that is
    not a model is refused with the reason."""
    from tests.core.aqer.aqer_support import TORCH, _TwoModels

    two = _TwoModels()
    wiz = open_aqer_wizard(window, encoder_factory=two.factory)
    wiz.save(device="cpu")
    wiz.pages["file"].choose_file(graded_file)
    wait_read(qtbot, wiz)
    to_results(qtbot, wiz)
    page = wiz.pages["results"]
    res = page.results
    res.tabs.setCurrentWidget(res.comparison_tab)
    model = res.comparison_model
    qtbot.waitUntil(lambda: model.rowCount() == 5, timeout=30_000)
    assert res.model_button.isVisibleTo(res)
    actions = res.model_menu.actions()
    assert [a.text() for a in actions] == [
        "The built-in all-MiniLM-L6-v2 through PyTorch",
        "A sentence-transformers model folder on this computer…"]

    actions[0].trigger()
    qtbot.waitUntil(lambda: model.rowCount() == 6, timeout=60_000)
    qtmodeltester.check(model)
    assert model.value(5, "condition") == TORCH
    assert model.value(5, "paired_n") == 12 and model.value(5, "difference") is not None
    assert "PyTorch" in model.value(5, "settings")
    assert TORCH in res.comparison_words.text()
    assert two.made == ["auto", "torch"] and two.torch.calls
    seen = len(two.torch.calls)
    assert load_choices(window.project).conditions == wiz.choices.conditions

    actions[0].trigger()  # the same condition again: read back, nothing embedded
    qtbot.waitUntil(lambda: model.rowCount() == 6 and res.model_button.isEnabled(),
                    timeout=60_000)
    assert len(two.torch.calls) == seen and two.made == ["auto", "torch"]

    task = page.export(tmp_path / "out.xlsx")
    qtbot.waitUntil(task.done, timeout=20_000)
    sheet = openpyxl.load_workbook(tmp_path / "out.xlsx")["Comparison"]
    assert TORCH in [row[0] for row in sheet.iter_rows(min_row=2, values_only=True)]

    empty = tmp_path / "not-a-model"
    empty.mkdir()
    page.ask_model_folder = lambda: str(empty)
    actions[1].trigger()
    assert res.model_problem.isVisibleTo(res)
    assert "not-a-model was not added" in res.model_problem.text()
    assert len(wiz.choices.conditions) == 1
