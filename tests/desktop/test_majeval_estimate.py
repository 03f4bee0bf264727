"""The MAJ-Eval run page shows the calls, cost and time before Start, and the estimate beside
what the run used after it (pytest-qt, offscreen, scripted model)."""

from __future__ import annotations

from desktop.majeval import open_majeval_wizard
from tests.desktop.majeval_wizard_support import (  # noqa: F401 (fixtures)
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


def test_the_conditions_tab_runs_the_missing_conditions_and_compares_them(
        qtbot, window, scripted, qtmodeltester, tmp_path):  # noqa: F811
    from tests.desktop.majeval_support import click, wait_step

    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    run_all(qtbot, wiz)
    tab = wiz.pages["results"].conditions
    wiz.results.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: "Kept in the project" in tab.status.text(), timeout=60_000)
    assert "(scored by scripted/mj-wizard, 6 items): Full personas, after debate, Full " \
        "personas, before debate." in tab.status.text()
    assert "Still to run:</b> Simple roles, after debate, Single judge." in tab.status.text()
    assert "Running them: " in tab.status.text() and "calls to scripted/mj-wizard" in \
        tab.status.text()
    assert tab.missing == ["simple", "single-judge"]

    before = scripted.calls
    click(qtbot, tab.run_button)
    assert wait_step(qtbot, wiz, "conditions", timeout=120_000) == "finished", \
        tab.run_panel.message_label.text()
    assert scripted.calls > before
    qtbot.waitUntil(lambda: "Reading" not in tab.status.text(), timeout=60_000)
    assert not tab.missing, (tab.status.text(), tab.run_panel.message_label.text())
    qtmodeltester.check(tab.model)
    rows = tab.model.rows()
    conditions = [r["condition"] for r in rows if r["group"] == "All groups (overall score)"]
    assert conditions == ["Full personas, after debate", "Full personas, before debate",
                          "Simple roles, after debate", "Single judge",
                          "Text length alone (number of words, the baseline)"]
    # six items: too few for the paired test, said so in plain words
    judge = next(r for r in rows if r["condition"] == "Single judge")
    assert judge["vs_full_difference"] is None
    assert "not enough units: 6 pairs, at least 10 needed" in judge["vs_full_note"]
    assert "cannot be compared against your ratings of" in tab.summary.text()
    assert "not enough units" in tab.summary.text()
    # the wizard's own choices are untouched by the conditions
    assert not wiz.choices.settings.simple_roles

    calls = scripted.calls  # shown again: nothing is asked of the model
    tab.refresh()
    qtbot.waitUntil(lambda: "Kept in the project" in tab.status.text(), timeout=60_000)
    assert scripted.calls == calls and not tab.run_button.isEnabled()

    # the export carries the same comparison as the command line's workbook (one route)
    import pandas as pd

    from core.majeval import conditions as cd
    from core.majeval.session.conditions import load_conditions
    from tests.desktop.majeval_support import wait_step as wait

    target = tmp_path / "results.xlsx"
    wiz.pages["results"].export(target)
    assert wait(qtbot, wiz, "export") == "finished"
    kept = load_conditions(wiz.project, wiz.choices, list(cd.CONDITIONS), wiz.run.model_used)
    dims = [d.name for d in wiz.choices.dimensions]
    rows = cd.comparison_rows(kept, wiz.choices.item_list, dims, n_boot=cd.COMPARISON_BOOT)
    cd.write_comparison(tmp_path / "cli.xlsx", kept, wiz.choices.item_list, dims, rows)
    exported = pd.read_excel(target, sheet_name="Comparison")
    assert len(exported) == len(rows)
    assert set(exported["condition"]) == {*cd.CONDITIONS.values(), cd.LENGTH}
    pd.testing.assert_frame_equal(exported, pd.read_excel(tmp_path / "cli.xlsx",
                                                          sheet_name="Comparison"))


def test_the_find_stakeholders_page_shows_the_calls_before_and_none_after(
        qtbot, window, scripted):  # noqa: F811
    from tests.desktop.majeval_support import click, wait_step

    wiz = open_majeval_wizard(window)
    click(qtbot, wiz.pages["task"].sample_button)
    assert wait_step(qtbot, wiz, "sample") == "finished"
    wiz.show_page("extraction")
    page = wiz.pages["extraction"]
    qtbot.waitUntil(lambda: "calls to scripted/mj-wizard" in page.extract_estimate.text(),
                    timeout=60_000)
    text = page.extract_estimate.text()
    assert text.startswith("Before you start: ") and "seconds per call" in text
    low, high = (int(x.replace(",", "")) for x in
                 text.removeprefix("Before you start: ").split(" calls")[0].split(" to "))
    before = scripted.calls
    click(qtbot, page.extract_button)
    assert wait_step(qtbot, wiz, "extraction") == "finished"
    made = scripted.calls - before
    assert low <= made <= high, (low, made, high, text)
    wiz.show_page("extraction")
    # the documents are read now: only the grouping and persona calls are left
    qtbot.waitUntil(lambda: "calls to" in page.extract_estimate.text()
                    and not page.extract_estimate.text().startswith(text[:30]),
                    timeout=60_000)
    again = page.extract_estimate.text()
    assert again.startswith("Before you start: 3 to 7 calls"), again


def test_a_model_on_this_computer_is_timed_once_before_its_first_estimate(
        qtbot, window, monkeypatch, scripted):  # noqa: F811
    """Issue 28, point 9: on a new project the built-in model's estimate was a guess, 3 to 20
    times too low. The first estimate for a model that runs on this computer, with nothing
    measured yet, times one call of a realistic size first (here a stand-in probe that records
    what a real one would: 900 tokens read and 64 written in 6 s)."""
    import desktop.calibration
    from core.llm import estimate as est_module
    from core.settings import BUNDLED_PROFILE_NAME
    from tests.desktop.majeval_support import click, wait_step

    probed = []

    async def probe(profile, **_kw):
        probed.append(profile.name)
        est_module.remember_speed(profile.model, [(900, 64, 6.0)])
        return est_module.Latency(6.0, "measured by one call just now")

    monkeypatch.setattr(desktop.calibration, "ENABLED", True)
    monkeypatch.setattr(est_module, "probe_latency", probe)
    wiz = open_majeval_wizard(window)
    click(qtbot, wiz.pages["task"].sample_button)
    assert wait_step(qtbot, wiz, "sample") == "finished"
    wiz.choices.profile = BUNDLED_PROFILE_NAME
    wiz.show_page("extraction")
    page = wiz.pages["extraction"]
    qtbot.waitUntil(lambda: "calls to evaldesk-local" in page.extract_estimate.text(),
                    timeout=60_000)
    text = page.extract_estimate.text()
    assert probed == [BUNDLED_PROFILE_NAME]
    assert "measured on this computer: 1 earlier call" in text and "a guess" not in text
    page.update_estimate()  # measured now: never timed again
    qtbot.wait(200)
    assert probed == [BUNDLED_PROFILE_NAME]
