"""AQER's "Check the judge" page: grade the AI answers in the app, see AQER's scores compared
with the grades (by order), and make a condition the project's choice in one click."""

from __future__ import annotations

import pytest

from core.aqer.judge_check import DIMENSION
from core.aqer.session import load_choices
from core.judge_check import grading_order, judge_report, load_ratings, rank_judges
from desktop.aqer import open_aqer_wizard
from tests.core.aqer.aqer_support import TinyEncoder
from tests.desktop.aqer_support import click, to_results, wait_read


def test_grade_ai_answers_see_the_report_and_choose_a_condition(qtbot, window, qtmodeltester):
    wiz = open_aqer_wizard(window, encoder_factory=TinyEncoder().factory)
    click(qtbot, wiz.pages["file"].sample_button)
    wait_read(qtbot, wiz)
    to_results(qtbot, wiz)
    page = wiz.pages["check"]
    assert page.reachable()
    wiz.show_page("check")
    panel = page.panel
    assert wiz.page == "check" and panel.judge is not None and len(panel.judge.items) == 12
    order = grading_order(panel.judge, panel.seed)  # a random order kept in the project
    assert panel.current == order[0]
    assert "Question" in panel.text_view.toPlainText()
    combo = panel.score_combos[DIMENSION]
    assert [combo.itemText(k) for k in range(combo.count())] == ["not rated", "0", "1", "2"]
    graded = []
    while panel.current is not None:
        graded.append(panel.current)
        combo.setCurrentIndex(1 + len(graded) % 3)
        assert panel.save_and_next()
    assert graded == order
    ratings = load_ratings(window.project, "aqer")
    assert len(ratings) == 12 and {r.rater for r in ratings} == {wiz.who}
    panel.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: not panel.computing and panel.report is not None, timeout=60_000)
    direct = judge_report(panel.judge, ratings)
    rows = {panel.dims_model.value(r, "statistic"): r for r in range(panel.dims_model.rowCount())}
    assert panel.dims_model.value(rows["Kendall tau-b"], "value") == pytest.approx(
        direct.dimensions[0].kendall.value, abs=1e-4)
    assert panel.dims_model.value(rows["Mean absolute error"], "value") is None
    assert "not on the rating scale" in panel.dims_model.value(rows["Mean absolute error"], "note")
    assert "Only AQER as set up" in panel.pick_about.text()
    assert "rank furthest apart" in panel.gaps_title.text()
    assert "not on the rating scale" in panel.about_label.text()
    for model in (panel.dims_model, panel.gaps_model, panel.rank_model):
        qtmodeltester.check(model)
    # the file's own grades of the AI answers: one more rater, and the people's agreement
    assert page.grades_button.isEnabled()
    assert page.use_file_grades() == 12
    assert "Kept 12 grades from the answers file" in panel.message.text()
    qtbot.waitUntil(lambda: not panel.computing, timeout=60_000)
    assert panel.report.raters == [wiz.who, "Grades in aqer_sample.xlsx"]
    assert panel.people_model.rowCount() == 2  # alpha among the people (judge: undefined)
    edits = window.project.list_edits(kind="aqer.rating")
    assert f"{wiz.who} (grades in the answers file)" in {e.who for e in edits}
    # another blank-answer rule as a condition: two judges to pick from
    click(qtbot, wiz.pages["results"].results.condition_button)
    qtbot.waitUntil(lambda: not wiz.busy, timeout=60_000)
    wiz.show_page("check")
    qtbot.waitUntil(lambda: not panel.computing and len(panel.ranks) == 2, timeout=60_000)
    expected = rank_judges(page.panel.candidates, ratings)
    assert [panel.rank_model.value(r, "judge") for r in range(2)] == [r.name for r in expected]
    before = wiz.choices.settings.blank_answers
    other = next(name for name, key, _ in panel.candidates if key)
    done = page.make_judge(other)
    assert "The project now scores with" in done and "earlier choices stay" in done
    saved = load_choices(window.project)
    assert saved.settings.blank_answers != before
    assert [c.blank_answers for c in saved.conditions] == [before]
    # the chosen condition's stored results are shown at once, and checked on this page
    assert wiz.stored.result.blank_rule == saved.settings.blank_answers
    from core.aqer.judge_check import judge_data

    assert panel.judge.source == judge_data(wiz.stored.result, wiz.stored.finished_at).source  # those results, in words
    assert panel.judge.source.startswith("the AQER results scored ")
    assert "run" not in panel.judge.source.removeprefix("the AQER results")
    assert panel.candidates[0][0].startswith("AQER as set up")
