"""The InteractEval results page says which run it shows, is never shown as current once the
choices changed, leaves think-aloud samples out of the agreement (with a switch), and warns when
most texts failed because the model repeated the instructions (pytest-qt, offscreen, a
scripted model through the real gateway)."""

from __future__ import annotations

import csv

import pandas as pd

from core.interacteval.session import sample_folder
from core.interacteval.session.choices import open_choices
from core.interacteval.session.stages import save_checklist
from tests.desktop.interacteval_results_support import ready, scripted, settle  # noqa: F401 (fixtures)
from tests.desktop.interacteval_support import click, wait_step


def score(qtbot, wiz):
    click(qtbot, wiz.pages["score"].score_button)
    assert wait_step(qtbot, wiz, "score") == "finished", wiz.pages["score"].score_panel.message_label.text()
    assert wiz.page == "results"


def test_results_say_which_run_and_go_out_of_date_when_choices_change(
    qtbot, window, scripted, tmp_path  # noqa: F811
):
    wiz = ready(qtbot, window)
    score(qtbot, wiz)
    res = wiz.pages["results"].results
    shown = res.run_label.text()
    for part in ("Scored on", "texts.csv: 12 texts", scripted.model, "Clarity (3 questions)",
                 "whole checklist in one call", "1 + 4 × (yes answers / questions"):
        assert part in shown, part
    assert res.banner.isHidden() and res.export_button.isEnabled()
    qtbot.waitUntil(lambda: bool(wiz.agreement), timeout=30_000)
    out = tmp_path / "current.xlsx"
    wiz.pages["results"].export_results(out)
    assert wait_step(qtbot, wiz, "export") == "finished"
    readme = pd.read_excel(out, sheet_name="Read me", dtype=str).to_string()
    assert "Scored on" in readme and "texts.csv" in readme and scripted.model in readme

    # another scoring option: the results are not current any more
    wiz.show_page("score")
    wiz.pages["score"].legacy_check.setChecked(True)
    assert wiz.next_button.text() == "Show results" and not wiz.next_button.isEnabled()
    assert "scoring options were changed" in wiz.nav_message.text()
    wiz.show_page("results")  # through the step buttons: shown as out of date
    assert not res.banner.isHidden() and "Out of date" in res.banner.text()
    assert "scoring options were changed" in res.banner.text()
    assert not res.export_button.isEnabled()
    stale = tmp_path / "stale.xlsx"
    assert wiz.pages["results"].export_results(stale) is None and not stale.exists()
    # back to the choices of the run: current again
    wiz.show_page("score")
    wiz.pages["score"].legacy_check.setChecked(False)
    assert wiz.next_button.isEnabled(), (wiz.nav_message.text(), wiz.choices.scorer)
    wiz.show_page("results")
    assert res.banner.isHidden() and res.export_button.isEnabled()

    # an edited checklist makes them out of date too
    checklist = next(c for c in wiz_checklists(window) if c.dimension == "Clarity")
    checklist.items[0].question = "Is the clarity good?"
    save_checklist(window.project, checklist)
    wiz.show_page("results")
    assert "the checklist of Clarity was changed" in res.banner.text()
    settle(qtbot, wiz)


def wiz_checklists(window):
    from core.interacteval.session.stages import load_checklists

    return load_checklists(window.project)


def test_show_results_is_off_for_a_new_unscored_texts_file(qtbot, window, scripted, tmp_path):  # noqa: F811
    wiz = ready(qtbot, window)
    score(qtbot, wiz)
    wiz.show_page("score")
    assert wiz.next_button.isEnabled()
    with open(sample_folder() / "texts.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))[:5]
    other = tmp_path / "other_texts.csv"
    with open(other, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    wiz.pages["score"].choose_texts(other)
    qtbot.waitUntil(lambda: not wiz.busy and wiz.choices.texts.file_name == "other_texts.csv",
                    timeout=20_000)
    qtbot.waitUntil(lambda: wiz.opened_texts.setup.file_name == "other_texts.csv",
                    timeout=20_000)
    assert not wiz.next_button.isEnabled()
    assert "another texts file" in wiz.nav_message.text()
    # reopening the wizard on the results page does not show them as current either
    wiz.choices.page = "results"
    open_choices(window.project)[0]
    wiz.start()
    assert wiz.page == "score"
    settle(qtbot, wiz)


def test_think_aloud_samples_are_flagged_and_left_out_of_the_agreement(
    qtbot, window, scripted, tmp_path  # noqa: F811
):
    wiz = ready(qtbot, window)
    sample = wiz.choices.chosen_samples("Clarity")[-1]
    with open(sample_folder() / "texts.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows.append({**rows[0], "id": "t99", "answer": " " + sample.text.upper() + " ",
                 "Clarity": "1", "Accuracy": "1"})
    path = tmp_path / "with_a_sample.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    wiz.pages["score"].choose_texts(path)
    qtbot.waitUntil(lambda: not wiz.busy and wiz.opened_texts is not None
                    and wiz.opened_texts.setup.file_name == path.name, timeout=20_000)
    score(qtbot, wiz)
    flagged = [(s.dimension, s.text_id) for s in wiz.run.scores if s.think_aloud_sample]
    assert flagged == [("Clarity", "t99")]
    res = wiz.pages["results"].results
    assert not res.samples_check.isHidden() and not res.samples_check.isChecked()
    assert "1 scored text is a think-aloud sample (Clarity: t99)" in res.run_label.text()
    qtbot.waitUntil(lambda: bool(wiz.agreement), timeout=30_000)
    clarity = next(a for a in wiz.agreement if a.dimension == "Clarity")
    assert (clarity.samples_left_out, clarity.used) == (1, 12)
    notes = [res.agreement_model.value(r, "used") for r in range(res.agreement_model.rowCount())]
    assert any("1 think-aloud sample left out" in str(n) for n in notes)
    res.scatter_combo.setCurrentText("Clarity")  # the scatter holds the texts the agreement uses
    assert res.scatter.points and "t99" not in {p.name for p in res.scatter.points}
    from tests.desktop.jargon import unexplained_in_tabs

    jargon = unexplained_in_tabs(qtbot, window, res.tabs)  # terms have plain words
    assert not jargon, "\n".join(jargon)
    from tests.desktop.jargon import unexplained_on_pages

    jargon = unexplained_on_pages(qtbot, window, wiz)  # every page, now that all are full
    assert not jargon, "\n".join(jargon)
    wiz.show_page("results")

    wiz.agreement = []
    res.samples_check.setChecked(True)
    qtbot.waitUntil(lambda: bool(wiz.agreement), timeout=30_000)
    clarity = next(a for a in wiz.agreement if a.dimension == "Clarity")
    assert (clarity.samples_included, clarity.used) == (1, 13)
    qtbot.waitUntil(lambda: "t99" in {p.name for p in res.scatter.points}, timeout=10_000)
    assert open_choices(window.project)[0].include_samples is True
    out = tmp_path / "results.xlsx"
    wiz.pages["results"].export_results(out)
    assert wait_step(qtbot, wiz, "export") == "finished"
    assert "included in the agreement on request" in pd.read_excel(
        out, sheet_name="Read me", dtype=str).to_string()
    settle(qtbot, wiz)


def test_a_run_where_most_texts_copied_the_instructions_says_so(qtbot, window, scripted):  # noqa: F811
    wiz = ready(qtbot, window)
    wiz.pages["score"].scorer_combo.setCurrentText("Copier")
    score(qtbot, wiz)
    res = wiz.pages["results"].results
    assert all(s.status == "failed" and s.score is None for s in wiz.run.scores)
    assert not res.banner.isHidden()
    assert "the model repeated the instructions" in res.banner.text()
    assert "Try a larger model" in res.banner.text()
    assert "24 without a score" in res.summary.text()
    settle(qtbot, wiz)


def test_an_incomplete_text_is_not_shown_as_failed(qtbot):
    """Issue 28, point 13: texts with a question left unanswered read "failed" in the score
    column; they say "incomplete" (a failed one still says "failed")."""
    from PySide6.QtCore import Qt

    from core.interacteval import Checklist, ChecklistItem, ScoringSettings, TextScore
    from core.interacteval.pipeline import ScoringRun
    from desktop.interacteval.results import ResultsView

    checklist = Checklist(dimension="Word choice", items=[ChecklistItem(question="Precise?"),
                                                          ChecklistItem(question="Varied?")])
    scores = [TextScore(text_id="e1", dimension="Word choice", status="ok", score=3.0),
              TextScore(text_id="e2", dimension="Word choice", status="incomplete",
                        note="question 2 was not answered", unanswered=[2]),
              TextScore(text_id="e3", dimension="Word choice", status="failed",
                        note="the server did not answer")]
    view = ResultsView()
    qtbot.addWidget(view)
    view.set_run(ScoringRun(scores=scores, settings=ScoringSettings(), model="m",
                            checklists=[checklist]))
    model = view.scores_model
    column = model.column_of("score:Word choice")
    shown = [model.data(model.index(r, column)) for r in range(3)]
    assert shown == ["3.000", "incomplete", "failed"]
    assert "unanswered" in model.data(model.index(1, column), Qt.ItemDataRole.ToolTipRole)
