"""The MAJ-Eval run page shows the calls, cost and time before Start, and the estimate beside
what the run used after it (pytest-qt, offscreen, scripted model)."""

from __future__ import annotations

from desktop.majeval import open_majeval_wizard
from tests.desktop.test_majeval_wizard import (  # noqa: F401 (fixtures)
    _collect_on_the_gui_thread,
    run_all,
    scripted,
    to_personas,
)


def test_the_run_page_shows_the_estimate_before_start_and_beside_the_actual_figures(
        qtbot, window, scripted):  # noqa: F811
    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    wiz.show_page("run")
    page = wiz.pages["run"]
    qtbot.waitUntil(lambda: page.estimate is not None, timeout=60_000)
    text = page.estimate_label.text()
    # 6 items x 2 groups (4 and 3 personas): 7 first evaluations, 7 to 21 turns, 0 to 7
    # finals and 2 summaries per item
    assert text.startswith("Before you start: 96 to 222 calls to scripted/mj-wizard")
    assert "no cost" in text and "seconds per call" in text
    before = scripted.calls

    run_all(qtbot, wiz)
    made = scripted.calls - before
    wiz.show_page("run")
    assert not page.actual_label.isHidden(), page.actual_label.text()
    assert f"Calls: estimated 96 to 222, made {made}" in page.actual_label.text()
    assert 96 <= made <= 222
    qtbot.waitUntil(lambda: page.estimate is not None, timeout=60_000)
    assert page.estimate_label.text().startswith("No model calls")

    page.rounds_spin.setValue(2)  # other choices: the comparison is of another run
    assert page.actual_label.isHidden()
