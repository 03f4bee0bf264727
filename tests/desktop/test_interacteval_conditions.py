"""The InteractEval results' Conditions tab (pytest-qt, offscreen, scripted model): the estimate
before, one click runs the missing conditions through ``session.run_conditions``, the table
shows each condition against "both", a new tab (reopening) shows them with no call, the
Comparison workbook is exported, and the conditions are offered to the judge-check ranking."""

from __future__ import annotations

from desktop.interacteval import open_interacteval_wizard
from tests.desktop.interacteval_support import click, wait_step
from tests.desktop.interacteval_wizard_support import load_sample, scripted  # noqa: F401 (fixtures)


def _wait_refreshed(qtbot, tab):
    task = tab.refresh()
    qtbot.waitUntil(task.done, timeout=60_000)


def test_conditions_run_show_reopen_export_and_rank(qtbot, qtmodeltester, window, scripted,  # noqa: F811
                                                    tmp_path):
    from openpyxl import load_workbook

    from desktop.interacteval.conditions_tab import ConditionsTab

    wiz = open_interacteval_wizard(window)
    load_sample(qtbot, wiz)
    wiz.show_page("score")
    qtbot.waitUntil(lambda: wiz.opened_texts is not None and not wiz.busy, timeout=20_000)
    tab = wiz.pages["results"].conditions
    wiz.choices.assessors = []
    _wait_refreshed(qtbot, tab)  # no model thinks aloud yet: said, not counted as missing
    assert "cannot run: no model thinks aloud" in tab.status.text()
    assert tab.missing == ["human", "combined"]
    wiz.choices.assessors = ["Scripted B"]
    assert [n for n, b in tab.checks.items() if b.isChecked()] == ["human", "ai", "combined"]
    tab.checks["single-judge"].setChecked(True)
    _wait_refreshed(qtbot, tab)
    assert tab.missing == ["human", "ai", "combined", "single-judge"]
    status = tab.status.text()
    assert "none yet" in status and "Running them: " in status and "calls to scripted" in status
    texts = len(wiz.opened_texts.read.items)

    before = scripted.calls
    click(qtbot, tab.run_button)
    assert wait_step(qtbot, wiz, "conditions", timeout=120_000) == "finished"
    # 4 conditions and the length baseline, on 2 dimensions
    qtbot.waitUntil(lambda: not tab.missing and tab.model.rowCount() == 10, timeout=60_000)
    made = scripted.calls - before
    assert made >= 2 * texts  # at least the single judge's calls were made
    qtmodeltester.check(tab.model)
    conditions = [tab.model.value(r, "condition") for r in range(tab.model.rowCount())]
    assert conditions[:4] == ["Checklist from people's notes only",
                              "Checklist from the models' think-aloud only",
                              "Checklist from both (the method)",
                              "Single judge, 1-5 with the definition (no checklist)"]
    assert "Kept in the project" in tab.status.text() and "Still to run" not in tab.status.text()
    assert "The last run, estimated beside actual: Calls: estimated" in tab.status.text()
    assert not tab.run_button.isEnabled()
    assert tab.summary.text()  # the plain sentence (or "cannot be compared: not enough units")
    assert all(tab.model.value(r, "value") is None or len(tab.model.value(r, "value")) <= 5
               for r in range(tab.model.rowCount()))  # rounded, never a long float

    # a new tab (as after reopening the project) reads them back without a call
    calls = scripted.calls
    again = ConditionsTab(wiz)
    qtbot.addWidget(again)
    again.checks["single-judge"].setChecked(True)
    _wait_refreshed(qtbot, again)
    assert again.missing == [] and again.model.rowCount() == 10
    assert scripted.calls == calls

    # the Comparison workbook
    target = tmp_path / "comparison.xlsx"
    again.ask_export_path = lambda: str(target)
    click(qtbot, again.export_button)
    qtbot.waitUntil(target.exists, timeout=60_000)
    qtbot.waitUntil(lambda: "Saved" in again.summary.text(), timeout=60_000)
    book = load_workbook(target, read_only=True)
    assert book.sheetnames[:3] == ["Comparison", "Checklists", "Scores"]
    rows = list(book["Comparison"].iter_rows(values_only=True))
    assert len(rows) == 1 + 10 and "vs_combined_p" in rows[0]

    # the judge check ranks the conditions beside the models
    check = wiz.pages["check"]
    check.refresh()
    names = [c[0] for c in check.panel.candidates]
    assert "Condition: Checklist from both (the method)" in names
    assert "Condition: Single judge, 1-5 with the definition (no checklist)" in names
    assert len(names) == len(set(names))
    sources = [c[2].source.split(",")[0] for c in check.panel.candidates
               if not c[0].startswith("Condition")]
    assert sources == [f"project run {wiz.choices.run_id}"] or not sources
    assert "condition" in check.make_judge("condition:human").lower()


def test_one_line_says_when_every_comparison_failed_for_the_same_reason():
    from desktop.interacteval.conditions_tab import short_summary

    same = [("A and B cannot be compared against your ratings of Clarity: not enough units: 3 "
             "groups."),
            ("C and B cannot be compared against your ratings of Accuracy: not enough units: 3 "
             "groups.")]
    assert short_summary(same) == [
        "No paired test against the checklist from both: not enough units: 3 groups."]
    mixed = [same[0], "C agrees better with your ratings of Accuracy than B (...)."]
    assert short_summary(mixed) == mixed


def test_repeated_conditions_run_show_one_stability_line_each_and_survive_reopening(
        qtbot, window, scripted, tmp_path):  # noqa: F811
    from openpyxl import load_workbook

    from core.interacteval.session.choices import open_choices
    from desktop.interacteval.conditions_tab import ConditionsTab

    wiz = open_interacteval_wizard(window)
    load_sample(qtbot, wiz)
    wiz.show_page("score")
    qtbot.waitUntil(lambda: wiz.opened_texts is not None and not wiz.busy, timeout=20_000)
    tab = wiz.pages["results"].conditions
    tab.checks["human"].setChecked(False)
    tab.checks["ai"].setChecked(False)
    tab.checks["single-judge"].setChecked(True)
    _wait_refreshed(qtbot, tab)
    once = tab.estimate.calls
    tab.repeats_spin.setValue(2)
    assert tab.repeats_spin.suffix() == " times"
    assert wiz.choices.condition_repeats == 2
    assert open_choices(wiz.project)[0].condition_repeats == 2  # kept in the project
    assert wiz.choices.repeats == 1  # the Score page's own choice is not changed
    _wait_refreshed(qtbot, tab)
    texts = len(wiz.opened_texts.read.items)
    dims = len(wiz.choices.dimensions)
    # the scoring and single-judge calls twice over, the checklists built once
    assert tab.estimate.calls > once
    assert "(repeat 1)" in " ".join(s.name for s in tab.estimate.stages)
    assert "asked 2 times" in tab.status.text()

    before = scripted.calls
    click(qtbot, tab.run_button)
    assert wait_step(qtbot, wiz, "conditions", timeout=120_000) == "finished"
    qtbot.waitUntil(lambda: not tab.missing and bool(tab.stability_entries), timeout=60_000)
    assert scripted.calls - before >= 2 * texts * dims  # the single judge asked twice
    lines = tab.stability.text().splitlines()
    assert len(lines) == 2  # one line per condition, naming the dimensions
    assert lines[0].startswith("The judge (Checklist from both (the method)) gives")
    assert lines[1].startswith("The single judge gives much the same scores")
    assert lines[1].endswith("2 repeats).")
    assert "Clarity 1.00" in lines[1] and "Accuracy 1.00" in lines[1]
    assert not tab.stability.isHidden()
    assert tab.model.rowCount() == 3 * dims  # the first time's scores, and the length

    tab.repeats_spin.setValue(3)  # a third repeat is not run yet
    _wait_refreshed(qtbot, tab)
    assert tab.missing == ["combined", "single-judge"]
    assert "(repeat 2)" in " ".join(s.name for s in tab.estimate.stages)
    assert "(repeat 1)" not in " ".join(s.name for s in tab.estimate.stages)
    tab.repeats_spin.setValue(2)

    # a new tab (as after reopening the project) shows the repeats without a call
    calls = scripted.calls
    again = ConditionsTab(wiz)
    qtbot.addWidget(again)
    for name, box in again.checks.items():
        box.setChecked(name in ("combined", "single-judge"))
    _wait_refreshed(qtbot, again)
    assert again.repeats_spin.value() == 2
    assert again.missing == [] and again.stability.text() == tab.stability.text()
    assert scripted.calls == calls

    target = tmp_path / "repeats.xlsx"
    again.ask_export_path = lambda: str(target)
    click(qtbot, again.export_button)
    qtbot.waitUntil(lambda: "Saved" in again.summary.text(), timeout=60_000)
    book = load_workbook(target, read_only=True)
    assert book.sheetnames[:4] == ["Comparison", "Checklists", "Scores", "Stability"]
    rows = list(book["Stability"].iter_rows(values_only=True))
    assert "repeat 1" in rows[0]
