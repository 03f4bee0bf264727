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
from typing import Any

from desktop._wizard_shots import grab_when, grabber, grade_every_item, run_shots, wait_until


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
    await grab_when(grab, "task", lambda: not wiz.busy and len(wiz.docs) == 2, pause=0.3)
    wiz.show_page("documents")
    wiz.pages["documents"].doc_list.setCurrentRow(0)
    await grab_when(grab, "documents", pause=0.3)
    wiz.show_page("extraction")
    await grab_when(grab, "extraction-estimate",
                    lambda: "calls" in wiz.pages["extraction"].extract_estimate.text(), pause=0.3)
    wiz.pages["extraction"].start_extraction()
    await asyncio.sleep(2.5)  # the second document is being read
    grab("extraction")
    llm.delay_s = 0.25
    await wait_until(lambda: wiz.page == "personas")
    editor = wiz.editor
    target = next(p for p in editor.personas if p.page is not None and "mother" in p.evidence)
    editor.tree.setCurrentIndex(editor.model.persona_index(target.id))
    await grab_when(grab, "personas", pause=0.3)
    dialog = editor.show_evidence()
    await asyncio.sleep(0.4)
    grab("evidence", dialog)
    dialog.close()
    wiz.show_page("items")
    await grab_when(grab, "items", pause=0.3)
    wiz.show_page("run")
    await grab_when(grab, "run-estimate",
                    lambda: wiz.pages["run"].estimate is not None, pause=0.3, timeout=120)
    wiz.pages["run"].start_run()
    await wait_until(lambda: wiz.pages["run"].run_panel.state is not None and wiz.pages["run"].run_panel.state.done >= 4)
    await asyncio.sleep(0.8)
    grab("run")
    await grab_when(grab, "results-scores", lambda: wiz.page == "results", pause=0.5, timeout=300)
    wiz.results.show_item("q1", "Teachers")
    await grab_when(grab, "results-transcript")
    wiz.results.tabs.setCurrentIndex(3)
    await grab_when(grab, "results-agreement", pause=0.8)
    tab = wiz.pages["results"].conditions
    wiz.results.tabs.setCurrentWidget(tab)
    await grab_when(grab, "results-conditions-before",
                    lambda: "Kept in the project" in tab.status.text(), pause=0.3, timeout=120)
    llm.delay_s = 0.05
    tab.start_run()
    await wait_until(lambda: not wiz.busy and "Kept in the project" in tab.status.text()
                     and not tab.missing, timeout=300)
    await grab_when(grab, "results-conditions", pause=0.5)
    await _check_the_judge(wiz, grab)
    llm.close()


async def _check_the_judge(wiz, grab) -> None:
    """majeval-check-grade.png, majeval-check-report.png and majeval-check-pick.png: a
    teacher grades every item near the sample's human ratings (not exactly: a person is not
    the sample), then the report and the conditions ranked against her ratings."""
    wiz.show_page("check")
    panel = wiz.pages["check"].panel
    items = {i.id: i for i in wiz.choices.item_list}
    shifts = [0, 1, 0, -1, 0, 1]
    low, high = panel.judge.scale

    def rate(item_id: Any, graded: int) -> None:
        human = list(items[item_id].human.values())
        for combo in panel.score_combos.values():
            if human:
                mine = min(high, max(low, round(human[0]) + shifts[graded % len(shifts)]))
                combo.setCurrentIndex(combo.findData(float(mine)))

    await grade_every_item(panel, grab, rate,
                           "Right, and said the way a child would say it.", note_at=2)
    panel.tabs.setCurrentIndex(1)
    await grab_when(grab, "check-report",
                    lambda: not panel.computing and panel.report is not None)
    panel.tabs.setCurrentIndex(2)
    await grab_when(grab, "check-pick",
                    lambda: not panel.computing and len(panel.ranks) >= 2)


def main(argv: list[str]) -> int:
    return run_shots(_shoot, argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
