"""Screenshots of the MAJ-Eval wizard on the sample set (for the README and the docs).

    EVALDESK_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1400x900x24" \
        python -m desktop.majeval._screenshots resources/screenshots

Runs the real app window with a scripted model (the test panel of
``tests/desktop/majeval_support.py``, so run it from the repository) and saves
``majeval-<page>.png``, ending with the "Check the judge" page (``majeval-check-*.png``).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from desktop._wizard_shots import grabber, run_shots, wait_until


async def _shoot(session, folder: Path) -> None:
    from core.llm import ScriptedLLM
    from desktop.majeval import open_majeval_wizard
    from tests.desktop.majeval_support import demo_panel

    window = session.window
    window.resize(1280, 800)
    llm = ScriptedLLM(demo_panel, name="screenshots", delay_s=1.0, tokens_per_word=1.3)
    window.settings.user_name = "Dr. Ana Silva"
    window.settings.upsert_profile(llm.profile(name="Demo model (scripted)", max_concurrency=2))
    window.settings.default_profile = "Demo model (scripted)"
    await asyncio.sleep(0.3)

    grab = grabber(session, folder, "majeval")

    wiz = open_majeval_wizard(window)
    wiz.pages["task"].load_sample()
    await wait_until(lambda: not wiz.busy and len(wiz.docs) == 2)
    await asyncio.sleep(0.3)
    grab("task")
    wiz.show_page("documents")
    wiz.pages["documents"].doc_list.setCurrentRow(0)
    await asyncio.sleep(0.3)
    grab("documents")
    wiz.show_page("extraction")
    await wait_until(lambda: "calls" in wiz.pages["extraction"].extract_estimate.text())
    await asyncio.sleep(0.3)
    grab("extraction-estimate")
    wiz.pages["extraction"].start_extraction()
    await asyncio.sleep(2.5)  # the second document is being read
    grab("extraction")
    llm.delay_s = 0.25
    await wait_until(lambda: wiz.page == "personas")
    editor = wiz.editor
    target = next(p for p in editor.personas if p.page is not None and "mother" in p.evidence)
    editor.tree.setCurrentIndex(editor.model.persona_index(target.id))
    await asyncio.sleep(0.3)
    grab("personas")
    dialog = editor.show_evidence()
    await asyncio.sleep(0.4)
    grab("evidence", dialog)
    dialog.close()
    wiz.show_page("items")
    await asyncio.sleep(0.3)
    grab("items")
    wiz.show_page("run")
    await wait_until(lambda: wiz.pages["run"].estimate is not None, timeout=120)
    await asyncio.sleep(0.3)
    grab("run-estimate")
    wiz.pages["run"].start_run()
    await wait_until(lambda: wiz.pages["run"].run_panel.state is not None and wiz.pages["run"].run_panel.state.done >= 4)
    await asyncio.sleep(0.8)
    grab("run")
    await wait_until(lambda: wiz.page == "results", timeout=300)
    await asyncio.sleep(0.5)
    grab("results-scores")
    wiz.results.show_item("q1", "Teachers")
    await asyncio.sleep(0.4)
    grab("results-transcript")
    wiz.results.tabs.setCurrentIndex(3)
    await asyncio.sleep(0.8)
    grab("results-agreement")
    tab = wiz.pages["results"].conditions
    wiz.results.tabs.setCurrentWidget(tab)
    await wait_until(lambda: "Kept in the project" in tab.status.text(), timeout=120)
    await asyncio.sleep(0.3)
    grab("results-conditions-before")
    llm.delay_s = 0.05
    tab.start_run()
    await wait_until(lambda: not wiz.busy and "Kept in the project" in tab.status.text()
                     and not tab.missing, timeout=300)
    await asyncio.sleep(0.5)
    grab("results-conditions")
    await _check_the_judge(wiz, grab)
    llm.close()


async def _check_the_judge(wiz, grab) -> None:
    """majeval-check-grade.png, majeval-check-report.png and majeval-check-pick.png: a
    teacher grades every item near the sample's human ratings (not exactly: a person is not
    the sample), then the report and the conditions ranked against her ratings."""
    wiz.show_page("check")
    panel = wiz.pages["check"].panel
    items = {i.id: i for i in wiz.state.item_list}
    shifts = [0, 1, 0, -1, 0, 1]
    low, high = panel.judge.scale
    graded = 0
    while panel.current is not None:
        human = list(items[panel.current].human.values())
        for combo in panel.score_combos.values():
            if human:
                mine = min(high, max(low, round(human[0]) + shifts[graded % len(shifts)]))
                combo.setCurrentIndex(combo.findData(float(mine)))
        if graded == 2:
            panel.note_edit.setPlainText("Right, and said the way a child would say it.")
            await asyncio.sleep(0.3)
            grab("check-grade")
        graded += 1
        if not panel.save_and_next():
            panel.skip()
    panel.tabs.setCurrentIndex(1)
    await wait_until(lambda: not panel.computing and panel.report is not None, timeout=120)
    await asyncio.sleep(0.4)
    grab("check-report")
    panel.tabs.setCurrentIndex(2)
    await wait_until(lambda: not panel.computing and len(panel.ranks) >= 2, timeout=120)
    await asyncio.sleep(0.4)
    grab("check-pick")


def main(argv: list[str]) -> int:
    return run_shots(_shoot, argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
