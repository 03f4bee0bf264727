"""The AQER wizard end to end (pytest-qt, offscreen) with a tiny deterministic encoder."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from core.aqer.session import load_choices, sample_path
from desktop.aqer import open_aqer_wizard
from tests.core.aqer.aqer_support import TinyEncoder
from tests.desktop.aqer_support import click, evaldesk, to_results, wait_check, wait_read

SHEETS = ["Workers", "Answers", "Questions", "AI answers", "AI summary", "Convergence",
          "Agreement", "Comparison", "Warnings", "Raw numbers", "Read me"]


@pytest.fixture
def tiny():
    return TinyEncoder()


def proxy_column(view, model, key):
    proxy = view.model()
    col = model.column_of(key)
    return [proxy.index(r, col).data(Qt.ItemDataRole.DisplayRole)
            for r in range(proxy.rowCount())]


def test_sample_end_to_end_results_and_export(qtbot, window, tiny, tmp_path):
    import pandas as pd

    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    assert window.stack.currentWidget() is wiz and wiz.page == "file"
    assert window.project is not None and wiz.project is window.project
    assert not wiz.next_button.isEnabled()  # nothing chosen yet
    click(qtbot, wiz.pages["file"].sample_button)
    wait_read(qtbot, wiz)
    sheets = wiz.pages["file"].sheet_combo
    assert [sheets.itemText(i) for i in range(sheets.count())] == [
        "Long", "Wide"]
    assert wiz.pages["file"].long_radio.isChecked()
    to_results(qtbot, wiz)

    # the mapping was guessed and saved in the project as soon as it was chosen
    saved = load_choices(window.project)
    assert (saved.columns.question_col, saved.columns.worker_col, saved.columns.response_col, saved.columns.grade_col) == (
        "question", "worker", "response", "grade")
    assert saved.path == str(sample_path())

    res = wiz.pages["results"].results
    # workers table: every person, sorted by score (best first)
    scores = [float(s) for s in proxy_column(res.workers_view, res.workers_model, "score")]
    assert len(scores) == 8 and scores == sorted(scores, reverse=True)
    assert scores[0] == pytest.approx(1.0) and scores[-1] == pytest.approx(0.0)
    ranks = proxy_column(res.workers_view, res.workers_model, "rank")
    assert ranks[0] == "1"
    assert res.score_chart.canvas is not None  # the charts were drawn
    assert "8 workers" in res.summary.text()

    # the question view: every answer to the chosen question with its similarity, best first
    question = "What is the largest planet in our solar system?"
    res.show_question(question)
    assert res.answers_model.rowCount() == 8
    sims = [float(s) for s in proxy_column(res.answers_view, res.answers_model, "similarity")]
    assert sims == sorted(sims, reverse=True)
    assert "closest to the class's consensus" in res.best_label.text()
    assert res.questions_model.rowCount() == 6

    # LLM comparison: per model mean and per question
    assert res.llm_summary_model.rowCount() == 2
    models = {res.llm_summary_model.value(r, "model") for r in range(2)}
    assert models == {"LLM A", "LLM B"}
    assert res.llm_questions_model.rowCount() == 6
    assert res.llm_questions_model.columnCount() == 4  # question, workers' mean, LLM A, LLM B
    res.tabs.setCurrentWidget(res.llm_tab)
    assert res.llm_chart.canvas is not None
    res.tabs.setCurrentIndex(3)
    assert res.convergence_chart.canvas is not None
    assert res.tabs.isTabVisible(res.tabs.indexOf(res.agreement_tab))  # grades were mapped
    assert res.tabs.tabText(res.tabs.indexOf(res.warnings_tab)).startswith("Warnings (")

    # export: the CLI's workbook, read back with pandas
    out = tmp_path / "results"
    task = wiz.pages["results"].export(out)
    qtbot.waitUntil(task.done, timeout=20_000)
    written = tmp_path / "results.xlsx"
    assert written.is_file()
    book = pd.ExcelFile(written)
    assert book.sheet_names == SHEETS
    workers = pd.read_excel(written, sheet_name="Workers")  # the results page's words
    assert list(workers.columns[:5]) == ["Rank", "Worker", "Score", "Expert grade",
                                         "Mean similarity"]
    assert len(workers) == 8
    assert str(written) in res.export_message.text()


def test_bad_mapping_blocks_next_with_a_message(qtbot, window, tiny):
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.load_sample()
    wait_read(qtbot, wiz)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    assert wiz.check.ok and wiz.next_button.isEnabled()

    wiz.pages["columns"].response_combo.setCurrentIndex(0)  # "(choose a column)"
    wait_check(qtbot, wiz)
    assert not wiz.check.ok
    assert not wiz.next_button.isEnabled()
    assert "Must fix" in wiz.nav_message.text()
    issues = wiz.pages["columns"].issues_model
    messages = [issues.issue(r).message for r in range(issues.rowCount())]
    assert any('"answers"' in m and "Long" in m for m in messages), messages
    assert wiz.pages["columns"].issues_model.index(0, 0).data() == "Must fix"
    wiz.go_next()
    assert wiz.page == "columns"
    assert load_choices(window.project).columns.response_col is None  # the choice was saved

    # the same column for questions and workers
    wiz.pages["columns"].response_combo.setCurrentIndex(wiz.pages["columns"].response_combo.findData("response"))
    wiz.pages["columns"].worker_combo.setCurrentIndex(wiz.pages["columns"].worker_combo.findData("question"))
    wait_check(qtbot, wiz)
    assert not wiz.check.ok
    text = " ".join(i.message for i in wiz.check.errors)
    assert 'column A ("question") is chosen for both the questions and the worker names' in text

    # workers who share no question: the grade column as worker names
    wiz.pages["columns"].worker_combo.setCurrentIndex(wiz.pages["columns"].worker_combo.findData("response"))
    wait_check(qtbot, wiz)
    assert not wiz.check.ok

    wiz.pages["columns"].worker_combo.setCurrentIndex(wiz.pages["columns"].worker_combo.findData("worker"))
    wait_check(qtbot, wiz)
    assert wiz.check.ok and wiz.next_button.isEnabled()


def _write_duplicates(path: Path) -> Path:
    import pandas as pd

    rows = []
    answers = {"Ann": ["Paris", "Four", "Blue"], "Bo": ["Paris, France", "4", "Blue sky"],
               "Cy": ["Lyon", "Five", "Green"]}
    questions = ["Capital of France?", "2 + 2?", "Colour of the sky?"]
    for worker, texts in answers.items():
        for q, t in zip(questions, texts):
            rows.append({"Question": q, "Student": worker, "Answer": t})
    rows.append({"Question": "2 + 2?", "Student": "Cy", "Answer": "Four, I mean"})
    pd.DataFrame(rows).to_excel(path, index=False, sheet_name="Answers")
    return path


def test_duplicate_rows_ask_which_to_keep(qtbot, window, tiny, tmp_path):
    path = _write_duplicates(tmp_path / "dups.xlsx")
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.pages["file"].ask_file_path = lambda: str(path)
    click(qtbot, wiz.pages["file"].choose_button)
    wait_read(qtbot, wiz)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    assert (wiz.choices.columns.question_col, wiz.choices.columns.worker_col, wiz.choices.columns.response_col) == (
        "Question", "Student", "Answer")
    assert wiz.check.needs_duplicate_choice and wiz.check.duplicates == 1
    assert "repeat" in wiz.pages["columns"].summary_label.text()

    # Cancel: nothing changes, the wizard stays on the columns page
    click(qtbot, wiz.next_button)
    box = wiz.pages["columns"].duplicate_box
    assert box is not None and box.isVisible()
    assert "Cy" in box.informativeText()
    box.button(box.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=5_000)
    assert wiz.page == "columns" and wiz.choices.duplicates == "error"

    # Keep the last answer: saved, checked again, and on to the next page
    click(qtbot, wiz.next_button)
    wiz.pages["columns"].keep_last_button.click()
    qtbot.waitUntil(lambda: wiz.page == "model", timeout=10_000)
    assert load_choices(window.project).duplicates == "last"
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(lambda: wiz.page == "results", timeout=30_000)
    responses = wiz.pages["results"].results.stored.result.responses
    kept = responses[(responses["worker"] == "Cy") & (responses["question"] == "2 + 2?")]
    assert kept["response"].tolist() == ["Four, I mean"]


def test_cancel_midway_keeps_the_wizard_usable_and_a_rerun_completes(qtbot, window, tmp_path):
    gate = threading.Event()
    slow = TinyEncoder(gate=gate)
    wiz = open_aqer_wizard(window, encoder_factory=slow.factory)
    wiz.load_sample()
    wait_read(qtbot, wiz)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.next_button)
    ended = []
    wiz.run_ended.connect(ended.append)
    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(slow.entered.is_set, timeout=10_000)
    qtbot.waitUntil(lambda: wiz.pages["run"].run_panel.cancel_button.isEnabled(), timeout=5_000)
    assert not wiz.back_button.isEnabled()  # no leaving the page mid-run
    click(qtbot, wiz.pages["run"].run_panel.cancel_button)
    gate.set()
    qtbot.waitUntil(lambda: ended == ["stopped"], timeout=15_000)
    assert wiz.page == "run"
    assert wiz.pages["run"].run_panel.status == "stopped"
    assert wiz.pages["run"].run_button.isEnabled() and wiz.back_button.isEnabled()
    assert not wiz.next_button.isEnabled()  # no result yet
    runs = window.project.list_runs("aqer", "score")
    assert [r.status for r in runs] == ["cancelled"]

    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(lambda: wiz.page == "results", timeout=30_000)
    assert ended == ["stopped", "finished"]
    # the embeddings finished before the cancel were kept: the re-run embedded nothing new
    assert sum(slow.calls) == 57
    assert wiz.pages["results"].results.workers_model.rowCount() == 8


def test_reopen_shows_results_without_recomputing(qtbot, window, tiny, tmp_path):
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.load_sample()
    wait_read(qtbot, wiz)
    to_results(qtbot, wiz)
    best = wiz.pages["results"].results.workers_model.value(0, "worker")
    window.ask_save_path = lambda: str(tmp_path / "mine.evaldesk")
    assert window.save_project_as()
    window.close_project()
    assert window.project is None

    fresh = TinyEncoder()
    assert window.open_project(tmp_path / "mine.evaldesk")
    # opening the project goes straight to its method's furthest step: the results
    shown = window.stack.currentWidget()
    assert type(shown).__name__ == "AqerWizard" and shown.page == "results"
    runs_before = len(window.project.list_runs())
    again = open_aqer_wizard(window, encoder_factory=fresh.factory)
    assert again is not wiz
    assert again.page == "results"
    assert again.pages["results"].results.workers_model.rowCount() == 8
    assert again.pages["results"].results.workers_model.value(0, "worker") == best
    assert fresh.made == 0 and fresh.calls == []
    assert len(window.project.list_runs()) == runs_before
    # going back shows the saved choices (the file is read again, not recomputed)
    again.go_back()
    assert again.page == "run"
    assert again.next_button.isEnabled() and again.next_button.text() == "Show results"
    assert again.pages["run"].existing_label.isVisible()


def test_changing_a_setting_recomputes_without_embedding_again(qtbot, window, tiny):
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.load_sample()
    wait_read(qtbot, wiz)
    to_results(qtbot, wiz)
    assert tiny.made == 1 and sum(tiny.calls) == 57
    first = wiz.pages["results"].results.stored.run_id

    wiz.go_back()
    wiz.go_back()
    assert wiz.page == "model"
    wiz.pages["model"].rounds_spin.setValue(3)
    assert load_choices(window.project).settings.max_iterations == 3  # saved at once
    click(qtbot, wiz.next_button)
    assert not wiz.next_button.isEnabled()  # no result for these settings yet
    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(lambda: wiz.page == "results", timeout=30_000)
    assert wiz.pages["results"].results.stored.run_id != first
    assert wiz.pages["results"].results.stored.result.iterations <= 3
    assert tiny.made == 1 and sum(tiny.calls) == 57  # nothing embedded again
    assert wiz.pages["results"].results.stored.embedded == 0

    # back to the old setting: the stored result comes back without a run
    wiz.go_back()
    wiz.go_back()
    wiz.pages["model"].rounds_spin.setValue(100)
    click(qtbot, wiz.next_button)
    assert wiz.next_button.isEnabled()
    click(qtbot, wiz.next_button)
    assert wiz.page == "results" and wiz.pages["results"].results.stored.run_id == first


def test_wide_sheet_with_ai_columns(qtbot, window, tiny):
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.load_sample()
    wait_read(qtbot, wiz)
    wiz.pages["file"].sheet_combo.setCurrentIndex(wiz.pages["file"].sheet_combo.findText("Wide"))
    wait_read(qtbot, wiz)
    wiz.pages["file"].wide_radio.setChecked(True)
    assert wiz.choices.columns.format == "wide" and wiz.choices.sheet == "Wide"
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    assert wiz.choices.columns.wide_rows == "question" and wiz.choices.columns.question_col == "question"
    # without ticking the AI columns, "LLM A" and "LLM B" count as people
    assert "10 workers" in wiz.check.prepared.describe()
    for i in range(wiz.pages["columns"].llm_list.count()):
        item = wiz.pages["columns"].llm_list.item(i)
        if item.text().startswith("LLM"):
            item.setCheckState(Qt.CheckState.Checked)
    wait_check(qtbot, wiz)
    assert wiz.choices.columns.llm_cols == ["LLM A", "LLM B"]
    assert "8 workers" in wiz.check.prepared.describe()
    assert wiz.pages["columns"].preview_model.role_of(9) == "AI answers"
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(lambda: wiz.page == "results", timeout=30_000)
    assert wiz.pages["results"].results.llm_summary_model.rowCount() == 2
    results = wiz.pages["results"].results
    assert not results.tabs.isTabVisible(results.tabs.indexOf(results.agreement_tab))


def test_template_download_and_home_button(qtbot, window, tiny, tmp_path):
    import pandas as pd

    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.pages["file"].ask_template_path = lambda: str(tmp_path / "template")
    click(qtbot, wiz.pages["file"].template_button)
    qtbot.waitUntil(lambda: (tmp_path / "template.xlsx").is_file(), timeout=10_000)
    assert "Long" in pd.ExcelFile(tmp_path / "template.xlsx").sheet_names
    click(qtbot, wiz.home_button)
    assert window.stack.currentWidget() is window.home
    assert window.start_method("aqer") is None  # the registered wizard opens again
    assert window.stack.currentWidget() is wiz


def test_unreadable_file_is_explained(qtbot, window, tiny, tmp_path):
    bad = tmp_path / "notes.xlsx"
    bad.write_text("this is not a workbook")
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.pages["file"].choose_file(bad)
    qtbot.waitUntil(lambda: not wiz.reading, timeout=10_000)
    assert wiz.read is None and not wiz.next_button.isEnabled()
    assert wiz.pages["file"].file_panel.status == "failed"
    assert "notes.xlsx" in wiz.pages["file"].file_panel.message_label.text()


def test_startup_does_not_import_heavy_libraries():
    code = (
        "import sys, desktop.app\n"
        "from desktop.methods import wizard_for\n"
        "assert wizard_for('aqer') is not None\n"
        "print(sorted(m for m in ('pandas', 'numpy', 'matplotlib', 'torch', "
        "'sentence_transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_real_minilm_on_the_sample(qtbot, window):
    wiz = open_aqer_wizard(window)  # the default: the bundled all-MiniLM-L6-v2
    wiz.load_sample()
    wait_read(qtbot, wiz)
    to_results(qtbot, wiz)
    result = wiz.pages["results"].results.stored.result
    assert result.embedding_model == "all-MiniLM-L6-v2"
    assert result.workers["score"].notna().sum() == 8
    assert len(result.llm_summary) == 2
    # Emma gave three wrong answers out of six: she must not be among the best three
    top = result.workers.sort_values("score", ascending=False)["worker"].tolist()[:3]
    assert "Emma" not in top


def test_blank_answers_rule_shown_chosen_and_stated_with_the_results(qtbot, window, tiny):
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.load_sample()
    wait_read(qtbot, wiz)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    # the sample is a class test (Farid left one question blank): detected, said why
    assert wiz.pages["columns"].blank_combo.currentData() == "auto"
    assert "look dense" in wiz.pages["columns"].blank_label.text()
    assert "8 of 8 workers answered at least half" in wiz.pages["columns"].blank_label.text()
    assert "a blank counts as the weakest answer" in wiz.pages["columns"].blank_label.text()
    assert "weakest possible answer" in wiz.pages["columns"].blank_label.toolTip()
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.next_button)
    assert "blank answers count as the weakest answer (the answers look dense)" in (
        wiz.pages["run"].run_summary.text())
    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(lambda: wiz.page == "results", timeout=30_000)
    res = wiz.pages["results"].results
    run = res.run_label.text()
    for words in ("aqer_sample.xlsx", "Long", "at most 100 rounds", "tiny-test-encoder",
                  "blank answers count as the weakest answer (decided from the data)",
                  "AI answers compared with the workers like for like", "Scored:"):
        assert words in run, words
    assert re.search(r"Scored:</b> 20\d\d-\d\d-\d\d \d\d:\d\d UTC", run)
    rows = {res.workers_model.value(r, "worker"): r for r in range(res.workers_model.rowCount())}
    assert res.workers_model.value(rows["Farid"], "blank") == 1
    first = res.stored.run_id

    # the user says blanks do not count: saved at once, the old result is no longer current
    wiz.go_back()
    wiz.go_back()
    wiz.go_back()
    assert wiz.page == "columns"
    wiz.pages["columns"].blank_combo.setCurrentIndex(wiz.pages["columns"].blank_combo.findData("missing"))
    assert load_choices(window.project).settings.blank_answers == "missing"
    wait_check(qtbot, wiz)
    assert wiz.pages["columns"].blank_label.text().startswith("Your choice")
    assert wiz.pages["columns"].blank_label.toolTip().startswith("Chosen by you")
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.next_button)
    assert wiz.page == "run"
    assert not wiz.pages["run"].existing_label.isVisible() and not wiz.next_button.isVisible()
    assert "blank answers do not count (your choice)" in wiz.pages["run"].run_summary.text()
    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(lambda: wiz.page == "results", timeout=30_000)
    assert res.stored.run_id != first
    assert "blank answers do not count (your choice)" in res.run_label.text()
    assert res.workers_model.column_of("blank") == -1
    # and back: the stored result of the first choice comes back, with all its columns
    wiz.go_back()
    wiz.go_back()
    wiz.go_back()
    wiz.pages["columns"].blank_combo.setCurrentIndex(wiz.pages["columns"].blank_combo.findData("auto"))
    wait_check(qtbot, wiz)
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.next_button)
    assert wiz.page == "results" and res.stored.run_id == first
    assert res.workers_model.column_of("blank") >= 0


def test_ai_answers_are_placed_among_the_workers_like_for_like(qtbot, window, tiny, monkeypatch,
                                                               qtmodeltester):
    import desktop.aqer.results as results_module

    drawn = {}
    real = results_module.draw_llm_comparison

    def spy(figure, people, models):
        drawn["people"], drawn["models"] = dict(people), dict(models)
        real(figure, people, models)

    monkeypatch.setattr(results_module, "draw_llm_comparison", spy)
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    wiz.load_sample()
    wait_read(qtbot, wiz)
    to_results(qtbot, wiz)
    res = wiz.pages["results"].results
    result = res.stored.result
    res.tabs.setCurrentWidget(res.llm_tab)
    like_for_like = dict(zip(result.workers["worker"], result.workers["similarity_to_others"]))
    assert drawn["people"] == pytest.approx(like_for_like)
    assert "like for like" in res.llm_chart.figure.axes[0].get_xlabel()
    assert "like for like" in res.llm_chart.figure.axes[0].get_title(loc="left")
    # the summary table says where each AI stands among the workers
    model = res.llm_summary_model
    qtmodeltester.check(model)
    col = model.column_of("percentile_among_workers")
    assert col >= 0
    shown = [model.index(r, col).data() for r in range(model.rowCount())]
    expected = [f"{v:.0f}%" for v in result.llm_summary["percentile_among_workers"]]
    assert shown == expected
    assert "of the workers" in res.summary.text()
    # the per-question table compares with the workers like for like
    assert res.llm_questions_model.columns[1].title == "Workers' mean (like for like)"
    # grades on the AI answers: agreement rows of their own, labelled as such
    comparisons = {res.agreement_model.value(r, "comparison")
                   for r in range(res.agreement_model.rowCount())}
    assert "AI answers, all models: AQER score vs expert grade (per answer)" in comparisons
    assert "AI answers of LLM A: AQER score vs expert grade (per answer)" in comparisons


def test_choices_that_cannot_be_read_are_named_and_kept_in_the_project(qtbot, window, tiny):
    project = window.ensure_project(method="aqer")
    project.put_artefact("aqer_setup", "current", {"format": "diagonal", "sheet": "Mine"},
                         origin="human")
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    banner = wiz.problem_banner
    assert banner.isVisible()
    assert "AQER choices" in banner.text() and "kept in the project" in banner.text()
    assert wiz.page == "file" and wiz.choices.columns.format == "long"  # this step starts afresh
    kept = project.list_artefacts("aqer_setup.unreadable")
    assert [a.payload for a in kept] == [{"format": "diagonal", "sheet": "Mine"}]
    # the user goes on: the new choices are saved, the original stays aside
    wiz.load_sample()
    wait_read(qtbot, wiz)
    wait_check(qtbot, wiz)
    assert load_choices(project).has_file
    assert len(project.list_artefacts("aqer_setup.unreadable")) == 1


def test_a_closing_wizard_stops_its_run_and_keeps_the_embeddings(qtbot, window):
    gate = threading.Event()
    slow = TinyEncoder(gate=gate)
    wiz = open_aqer_wizard(window, encoder_factory=slow.factory)
    wiz.load_sample()
    wait_read(qtbot, wiz)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.next_button)
    ended = []
    wiz.run_ended.connect(ended.append)
    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(slow.entered.is_set, timeout=10_000)
    project = wiz.project
    wiz.retire()  # what the window does when another wizard or project replaces this one
    assert window.stack.indexOf(wiz) < 0
    gate.set()
    # the worker thread ends its batch, then the run is stored as cancelled (a busy machine
    # may take a while: the timeout only bounds a hang)
    qtbot.waitUntil(
        lambda: [r.status for r in project.list_runs("aqer", "score")] == ["cancelled"],
        timeout=120_000)
    assert ended == []  # a retired wizard shows nothing more
    again = open_aqer_wizard(window, encoder_factory=slow.factory)
    assert again is not wiz


def choose(qtbot, wiz, path):
    wiz.pages["file"].ask_file_path = lambda: str(path)
    click(qtbot, wiz.pages["file"].choose_button)
    wait_read(qtbot, wiz)


def checked_columns(listw):
    return [listw.item(i).data(Qt.ItemDataRole.UserRole) for i in range(listw.count())
            if listw.item(i).checkState() == Qt.CheckState.Checked]


def test_a_gradebook_is_guessed_explained_and_its_columns_can_be_left_out(qtbot, window, tiny,
                                                                          tmp_path):
    from tests.core.aqer.gradebook import gradebook

    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    choose(qtbot, wiz, gradebook(tmp_path / "exam.xlsx"))
    file_page, page = wiz.pages["file"], wiz.pages["columns"]
    assert file_page.wide_radio.isChecked()  # guessed, and said why
    assert "row per person" in file_page.layout_guess.text()
    assert "'Student'" in file_page.layout_guess.text()
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    assert page.rows_combo.currentData() == "worker" and page.key_combo.currentData() == "Student"
    # the average grade: detected, used as the grades, never an answer; the page says why
    assert page.wide_grade_combo.currentData() == "Average grade"
    assert page.wide_grade_combo.isVisible()
    assert "mostly numbers (30 of 30 filled cells)" in page.guess_note.text()
    assert page.guess_note.isVisible()
    assert page.preview_model.role_of(11) == "expert grades"
    assert wiz.check.prepared.frame["question"].nunique() == 10
    assert len(wiz.check.prepared.person_grades) == 30
    # "n/a", "-", "?", "not answered" are blanks, named by cell; the list is the user's
    assert page.blank_tokens_edit.text() == "not answered, no answer, n/a, -, ?"
    issues = [page.issues_model.issue(r).message for r in range(page.issues_model.rowCount())]
    assert any("read as blank" in m and "D5 ('n/a')" in m and "B14 ('?')" in m for m in issues)
    assert len(wiz.check.prepared.blanks) == 6
    page.blank_tokens_edit.setText("n/a")
    page.blank_tokens_edit.editingFinished.emit()
    assert load_choices(window.project).blank_tokens == ["n/a"]
    wait_check(qtbot, wiz)
    assert len(wiz.check.prepared.blanks) == 3  # "n/a", "N/A" and the empty cell
    # any column can be left out
    assert page.ignore_box.isVisible() and page.ignore_list.count() == 10
    page.ignore_list.item(9).setCheckState(Qt.CheckState.Checked)
    assert load_choices(window.project).columns.ignore_cols == ["Q10. What melts ice?"]
    wait_check(qtbot, wiz)
    assert wiz.check.prepared.frame["question"].nunique() == 9
    # no grades: the column of numbers is left out, not scored
    page.wide_grade_combo.setCurrentIndex(0)
    wait_check(qtbot, wiz)
    assert "Average grade" in checked_columns(page.ignore_list)
    assert wiz.check.prepared.person_grades == {}
    assert "Average grade" not in set(wiz.check.prepared.frame["question"])

    # a new file: nothing of the previous layout carries over
    choose(qtbot, wiz, _write_duplicates(tmp_path / "long.xlsx"))
    assert wiz.choices.columns.format == "long" and file_page.long_radio.isChecked()
    assert wiz.choices.columns.ignore_cols == [] and wiz.choices.columns.grade_col is None
    assert "long layout" in file_page.layout_guess.text()
    wait_check(qtbot, wiz)  # the new file's check ends before the test does


def test_a_typo_in_a_header_is_matched_on_the_columns_page(qtbot, window, tiny, tmp_path):
    import pandas as pd

    path = tmp_path / "typo.xlsx"
    pd.DataFrame({"Qestion": ["a", "a", "b", "b"], "Worker": ["x", "y", "x", "y"],
                  "Answer": ["1 one", "1 uno", "2 two", "2 dos"]}).to_excel(path, index=False)
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    choose(qtbot, wiz, path)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    page = wiz.pages["columns"]
    assert page.question_combo.currentData() == "Qestion"
    assert "is it 'Qestion'" in page.guess_note.text()
    assert wiz.check.ok


def test_a_gradebook_with_a_grades_sheet_gives_the_clis_agreement(qtbot, window, tiny, tmp_path,
                                                                  monkeypatch, capsys):
    from tests.core.aqer.gradebook import gradebook

    source = gradebook(tmp_path / "exam.xlsx", grades="sheet")
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    choose(qtbot, wiz, source)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    page = wiz.pages["columns"]
    assert page.grades_sheet_combo.currentData() == "Grades"
    assert "'Grades' looks like a list of grades" in page.guess_note.text()
    warnings = " ".join(i.message for i in wiz.check.warnings)
    assert "'Emma Rosi' (row 6)" in warnings and "No grade for 2 people" in warnings
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.next_button)
    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(lambda: wiz.page == "results", timeout=30_000)
    res = wiz.pages["results"].results
    assert res.tabs.isTabVisible(res.tabs.indexOf(res.agreement_tab))
    shown = {(res.agreement_model.value(r, "comparison"), res.agreement_model.value(r, "statistic")):
             r for r in range(res.agreement_model.rowCount())}
    row = shown[("AQER score vs expert grade (per worker)", "Spearman rho")]
    app_value = res.stored.result.agreement.iloc[row]["value"]
    # the tab opens with one plain sentence, the numbers of the Pearson row behind it
    pearson = res.stored.result.agreement.iloc[
        shown[("AQER score vs expert grade (per worker)", "Pearson r")]]
    from core.stats import format_p, strength

    headline = res.agreement_headline.text()
    assert headline.startswith(f"AQER agrees {strength(pearson['value'])} with your grades: "
                               f"r = {pearson['value']:.2f} over 28 people")
    assert format_p(pearson["p_value"]) in headline and "p_value" not in headline
    assert headline.split(" (")[0] in res.summary.text()  # the short form above the tabs
    assert res.agreement_scatter.figure is not None  # the score-against-grade scatter
    from tests.desktop.jargon import unexplained_in_tabs

    jargon = unexplained_in_tabs(qtbot, window, res.tabs)  # no term without plain words
    assert not jargon, "\n".join(jargon)
    from tests.desktop.jargon import unexplained_on_pages

    jargon = unexplained_on_pages(qtbot, window, wiz)  # every page, now that all are full
    assert not jargon, "\n".join(jargon)
    wiz.show_page("results")
    p_col = res.agreement_model.column_of("p_value")
    shown_p = res.agreement_model.data(res.agreement_model.index(0, p_col))
    assert shown_p.startswith(("<", "0.")) or shown_p == "1"

    class SameEncoder(TinyEncoder):  # the CLI makes its encoder through core.embeddings
        max_seq_length = 256

        def __init__(self, model_path="", device="auto", batch_size=32):
            super().__init__()

        def truncated(self, texts):
            return [False] * len(texts)

    monkeypatch.setattr("core.embeddings.Encoder", SameEncoder)
    out = tmp_path / "cli.xlsx"
    assert evaldesk(["aqer", str(source), "-o", str(out)]) == 0
    from core.aqer.report import read_report

    agreement = read_report(out)["Agreement"]
    cli_row = agreement[(agreement["comparison"] == "AQER score vs expert grade (per worker)")
                        & (agreement["statistic"] == "Spearman rho")].iloc[0]
    assert cli_row["value"] == pytest.approx(app_value, abs=1e-9) and cli_row["n"] == 28


def test_a_grades_file_of_its_own_is_joined_by_name(qtbot, window, tiny, tmp_path):
    from tests.core.aqer.gradebook import gradebook, grades_file_of

    source = gradebook(tmp_path / "exam.xlsx", grades="file")
    wiz = open_aqer_wizard(window, encoder_factory=tiny.factory)
    choose(qtbot, wiz, source)
    click(qtbot, wiz.next_button)
    wait_check(qtbot, wiz)
    page = wiz.pages["columns"]
    assert wiz.check.prepared.person_grades == {}
    page.ask_grades_path = lambda: str(grades_file_of(source))
    click(qtbot, page.grades_file_button)
    wait_check(qtbot, wiz)
    assert page.grades_sheet_combo.currentText() == "file “exam grades.csv”"
    saved = load_choices(window.project)
    assert saved.columns.grades_file is not None and saved.columns.grades_file.input_id is not None
    assert len(wiz.check.prepared.person_grades) == 28
    assert any("'Emma Rosi' (row 6)" in i.message for i in wiz.check.warnings)
    # "(none)": no grades any more
    page.grades_sheet_combo.setCurrentIndex(0)
    wait_check(qtbot, wiz)
    assert load_choices(window.project).columns.grades_file is None
    assert wiz.check.prepared.person_grades == {}
