"""MAJ-Eval's "Repeat each call" on the Run page: the estimate is multiplied, the repeats are
real calls, the results say how alike the repeats are (flagged in plain words when they
disagree) and the export has a Stability sheet (pytest-qt, offscreen, scripted model)."""

from __future__ import annotations

import threading

import numpy as np

from desktop.majeval import open_majeval_wizard
from tests.desktop.majeval_support import USER, kind, panel, wait_step
from tests.desktop.majeval_wizard_support import (  # noqa: F401 (fixtures)
    _collect_on_the_gui_thread,
    run_all,
    scripted,
    to_personas,
    use_scripted,
)


def test_repeats_multiply_the_estimate_run_again_and_are_exported(
        qtbot, window, scripted, tmp_path):  # noqa: F811
    from openpyxl import load_workbook

    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    wiz.show_page("run")
    page = wiz.pages["run"]
    assert page.repeats_spin.value() == 1 and page.repeats_spin.suffix() == " time"
    assert "Krippendorff" in page.repeats_spin.toolTip()
    page.repeats_spin.setValue(2)
    assert page.repeats_spin.suffix() == " times"
    assert wiz.choices.repeats == 2
    qtbot.waitUntil(lambda: page.estimate is not None, timeout=60_000)
    # twice the 96 to 222 calls of one run (see test_majeval_estimate)
    assert page.estimate_label.text().startswith("Before you start: 192 to 444 calls")
    assert "(each made 2 times: 24 in all)" in page.run_summary.text()
    before = scripted.calls

    run_all(qtbot, wiz)
    made = scripted.calls - before
    assert 192 <= made <= 444
    assert f"made {made}" in page.actual_label.text()  # every repeat's calls are counted
    label = wiz.pages["results"].stability_label
    assert not label.isHidden()
    assert label.text().startswith("Asked 2 times (the scores shown are the first time's): "
                                   "The judge (Full personas, after debate) gives much the "
                                   "same scores when asked again")
    assert label.property("flagged") is False
    assert "0.667" in label.toolTip()

    target = tmp_path / "out.xlsx"
    wiz.pages["results"].export(target)
    assert wait_step(qtbot, wiz, "export") == "finished"
    book = load_workbook(target, read_only=True)
    assert "Stability" in book.sheetnames
    rows = list(book["Stability"].iter_rows(values_only=True))
    assert rows[0][:5] == ("condition", "dimension", "unit", "repeat 0", "repeat 1")
    assert len(rows) == 1 + 1 + 6  # the alpha row, then the 6 items

    calls = scripted.calls  # running again: every repeat is kept
    page.start_run()
    assert wait_step(qtbot, wiz, "run") == "finished"
    assert wait_step(qtbot, wiz, "results") == "finished"
    assert scripted.calls == calls


def test_a_judge_whose_repeats_disagree_is_flagged(qtbot, window):
    from core.llm import ScriptedLLM

    rng, lock = np.random.default_rng(5), threading.Lock()

    def noisy(messages):
        reply = panel(messages)
        if kind(messages) in ("phase1", "turn", "final"):
            with lock:
                score = int(rng.integers(1, 6))
            reply = {**reply, "scores": {d: score for d in reply["scores"]}}
            if "no_more_comments" in reply:
                reply["no_more_comments"] = True
        return reply

    llm = ScriptedLLM(noisy, name="mj-noisy")
    try:
        window.settings.user_name = USER
        use_scripted(window, llm)
        wiz = open_majeval_wizard(window)
        to_personas(qtbot, wiz)
        wiz.show_page("run")
        wiz.pages["run"].repeats_spin.setValue(3)
        run_all(qtbot, wiz)
        label = wiz.pages["results"].stability_label
        assert "The judge (Full personas, after debate) gives different scores when asked " \
               "again (agreement between repeats" in label.text()
        assert "treat single scores with care" in label.text()
        assert label.property("flagged") is True
    finally:
        llm.close()


def test_the_conditions_tab_repeats_each_condition_and_says_how_alike(
        qtbot, window, scripted, qtmodeltester):  # noqa: F811
    from tests.desktop.majeval_support import click

    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    run_all(qtbot, wiz)
    wiz.show_page("run")
    wiz.pages["run"].repeats_spin.setValue(2)
    # the first repeat is the run already made: only the second one is still to run
    assert "12 of these debates are already finished" in wiz.pages["run"].run_summary.text()
    assert wiz.pages["run"].run_button.text() == "Continue the debates"
    wiz.show_page("results")
    tab = wiz.pages["results"].conditions
    for name in ("full", "pre", "simple"):
        tab.checks[name].setChecked(False)
    wiz.results.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: "Kept in the project" in tab.status.text(), timeout=60_000)
    assert tab.missing == ["single-judge"]
    assert "Each call is made 2 times" in tab.status.text()
    assert tab.estimate.calls == 2 * 6  # 6 items, twice

    before = scripted.calls
    click(qtbot, tab.run_button)
    assert wait_step(qtbot, wiz, "conditions", timeout=120_000) == "finished", \
        tab.run_panel.message_label.text()
    assert scripted.calls - before == 12
    qtbot.waitUntil(lambda: "Reading" not in tab.status.text() and not tab.missing,
                    timeout=60_000)
    qtmodeltester.check(tab.model)
    assert "Asked 2 times: The single judge gives much the same scores when asked again" \
        in tab.summary.text()
