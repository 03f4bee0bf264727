"""InteractEval's "Repeat each call" on the Score page: the estimate is multiplied, the repeats
are real calls, the results say how alike the repeats are (flagged in plain words when they
disagree) and the export has a Stability sheet (pytest-qt, offscreen, scripted model)."""

from __future__ import annotations

import re
import threading

import numpy as np

from tests.desktop.interacteval_results_support import ready, scripted, settle  # noqa: F401 (fixtures)
from tests.desktop.interacteval_support import USER, click, wait_step


def score(qtbot, wiz):
    click(qtbot, wiz.pages["score"].score_button)
    assert wait_step(qtbot, wiz, "score") == "finished", \
        wiz.pages["score"].score_panel.message_label.text()
    assert wiz.page == "results"


def test_repeats_multiply_the_estimate_and_are_shown_and_exported(
        qtbot, window, scripted, tmp_path):  # noqa: F811
    from openpyxl import load_workbook

    wiz = ready(qtbot, window)
    page = wiz.pages["score"]
    assert page.repeats_spin.value() == 1 and page.repeats_spin.suffix() == " time"
    assert "Krippendorff" in page.repeats_spin.toolTip()
    qtbot.waitUntil(lambda: page.estimate is not None, timeout=60_000)
    once = page.estimate.calls
    page.repeats_spin.setValue(3)
    assert wiz.choices.repeats == 3 and page.repeats_spin.suffix() == " times"
    assert "(each made 3 times)" in page.texts_summary.text()
    qtbot.waitUntil(lambda: page.estimate is not None, timeout=60_000)
    assert page.estimate.calls == 3 * once == 3 * 24  # 12 texts x 2 dimensions, 3 times
    assert page.estimate_label.text().startswith("Before you start: 72 to 144 calls")

    before = scripted.calls
    score(qtbot, wiz)
    assert scripted.calls - before == 72  # the repeats were asked, not read from the cache
    assert "made 72" in page.actual_label.text()
    label = wiz.pages["results"].stability_label
    assert not label.isHidden() and label.property("flagged") is False
    assert label.text().startswith("Asked 3 times (the scores shown are the first time's): "
                                   "Clarity: The checklist judge gives much the same scores "
                                   "when asked again")
    assert "Accuracy: " in label.text()
    settle(qtbot, wiz)

    out = tmp_path / "r.xlsx"
    wiz.pages["results"].export_results(out)
    assert wait_step(qtbot, wiz, "export") == "finished"
    book = load_workbook(out, read_only=True)
    assert "Stability" in book.sheetnames
    rows = list(book["Stability"].iter_rows(values_only=True))
    assert rows[0][:6] == ("condition", "dimension", "unit", "repeat 0", "repeat 1",
                           "repeat 2")
    assert [r[1] for r in rows[1:3]] == ["Clarity", "Accuracy"]  # alpha per dimension
    assert len(rows) == 1 + 2 + 2 * 12

    calls = scripted.calls  # scoring again: every repeat is kept
    wiz.show_page("score")
    score(qtbot, wiz)
    assert scripted.calls == calls
    settle(qtbot, wiz)

    # reopening the project: the repeats are read back, nothing is asked
    from desktop.interacteval import open_interacteval_wizard

    shown = label.text()
    path = tmp_path / "ie.evaldesk"
    window.ask_save_path = lambda: str(path)
    assert window.save_project_as()
    window.close_project()
    assert window.open_project(path)
    again = open_interacteval_wizard(window)
    assert again.page == "results"
    assert again.pages["results"].stability_label.text() == shown
    assert scripted.calls == calls
    again.show_page("score")  # the choice is kept too
    qtbot.waitUntil(lambda: again.opened_texts is not None and not again.busy, timeout=20_000)
    assert again.pages["score"].repeats_spin.value() == 3
    settle(qtbot, again)


def test_a_judge_whose_repeats_disagree_is_flagged(qtbot, window):
    from core.llm import ScriptedLLM

    rng, lock = np.random.default_rng(2), threading.Lock()

    def noisy(messages):
        prompt = "\n".join(str(m.get("content") or "") for m in messages)
        n = len(re.findall(r"^q\d+\. ", prompt, re.MULTILINE))
        with lock:
            answers = rng.integers(0, 2, size=n)
        return {f"q{i + 1}": "yes" if a else "no" for i, a in enumerate(answers)}

    llm = ScriptedLLM(noisy, name="ie-noisy")
    try:
        window.settings.user_name = USER
        window.settings.upsert_profile(llm.profile(name="Scripted A"))
        window.settings.default_profile = "Scripted A"
        wiz = ready(qtbot, window)
        wiz.pages["score"].repeats_spin.setValue(2)
        score(qtbot, wiz)
        label = wiz.pages["results"].stability_label
        assert "Clarity: The checklist judge gives different scores when asked again " \
               "(agreement between repeats" in label.text()
        assert "treat single scores with care" in label.text()
        assert label.property("flagged") is True
        settle(qtbot, wiz)
    finally:
        llm.close()
