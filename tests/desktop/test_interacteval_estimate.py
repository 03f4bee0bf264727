"""The InteractEval score page shows the calls, cost and time before scoring, and the
estimate beside what the run used after it (pytest-qt, offscreen, scripted model)."""

from __future__ import annotations

from desktop.interacteval import open_interacteval_wizard
from tests.desktop.interacteval_support import click, wait_step
from tests.desktop.interacteval_wizard_support import load_sample, scripted  # noqa: F401 (fixtures)


def test_the_score_page_shows_the_estimate_and_then_the_actual_figures(
        qtbot, window, scripted):  # noqa: F811
    from core.interacteval import Checklist, ChecklistItem
    from core.interacteval.session.stages import save_checklist

    wiz = open_interacteval_wizard(window)
    load_sample(qtbot, wiz)
    for name in ("Clarity", "Accuracy"):
        save_checklist(window.project, Checklist(dimension=name, items=[
            ChecklistItem(component="A", question=f"Is the {name.lower()} fine?"),
            ChecklistItem(component="A", question="Is it short?")]))
    wiz.show_page("score")
    page = wiz.pages["score"]
    qtbot.waitUntil(lambda: wiz.opened_texts is not None and not wiz.busy, timeout=20_000)
    qtbot.waitUntil(lambda: page.estimate is not None, timeout=60_000)
    texts = len(wiz.opened_texts.read.items)
    low, high = 2 * texts, 4 * texts  # one call per text and dimension, one more at most
    assert page.estimate_label.text().startswith(
        f"Before you start: {low} to {high} calls to scripted/ie-wizard, no cost")
    before = scripted.calls
    click(qtbot, page.score_button)
    assert wait_step(qtbot, wiz, "score") == "finished"
    made = scripted.calls - before
    assert low <= made <= high
    assert not page.actual_label.isHidden()
    assert f"Calls: estimated {low} to {high}, made {made}" in page.actual_label.text()


def test_the_think_aloud_and_build_pages_show_the_calls_before_they_run(
        qtbot, window, scripted):  # noqa: F811
    from tests.desktop.interacteval_support import wait_step as wait

    wiz = open_interacteval_wizard(window)
    load_sample(qtbot, wiz)
    wiz.show_page("think_aloud")
    think = wiz.pages["think_aloud"]
    wiz.choices.assessors = ["Scripted A", "Scripted B"]
    task = think.update_estimate()
    qtbot.waitUntil(task.done, timeout=60_000)
    assert think.think_estimate.text().startswith(
        "Before you run the think-aloud: about 2 calls to scripted/ie-wizard, no cost")
    wiz.choices.assessors = ["Scripted A"]
    click(qtbot, think.think_button)
    assert wait(qtbot, wiz, "think_aloud") == "finished"

    wiz.show_page("build")
    build = wiz.pages["build"]
    assert build.remaining_steps() == ["components", "clusters", "key_questions",
                                       "sub_questions", "checklist"]
    task = build.update_estimate()
    qtbot.waitUntil(task.done, timeout=60_000)
    # one call per step, at most one more each (a reply that does not fit is asked again)
    assert build.build_estimate.text().startswith(
        "The remaining steps: 5 to 10 calls to scripted/ie-wizard, no cost")
    before = scripted.calls
    click(qtbot, build.run_rest_button)
    assert wait(qtbot, wiz, "build") == "finished"
    assert 5 <= scripted.calls - before <= 10
    assert build.remaining_steps() == []
    assert build.build_estimate.text() == ""
