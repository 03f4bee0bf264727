"""Screenshots of the InteractEval wizard on the sample set (for the README and the docs).

    EVALDESK_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1400x900x24" \\
        .venv/bin/python -m desktop.interacteval._screenshots resources/screenshots

Runs the real app window with a scripted model (no network; the replies only show the layout,
they say nothing about quality) and saves ``interacteval-<page>.png``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from desktop._wizard_shots import grab_when, grabber, grade_every_item, run_shots, wait_until


async def _step(wiz, what: str) -> str:
    done: list[str] = []
    wiz.step_ended.connect(lambda name, status: done.append(status) if name == what else None)
    await wait_until(lambda: bool(done))
    return done[0]


async def _shoot(session, folder: Path) -> None:
    from core.llm import ScriptedLLM
    from desktop.interacteval import open_interacteval_wizard
    from tests.desktop.interacteval_support import scripted_reply

    window = session.window
    window.resize(1280, 800)
    llm = ScriptedLLM(scripted_reply, name="screenshots", delay_s=0.05)
    window.settings.user_name = "Ms Okafor"
    window.settings.upsert_profile(llm.profile(name="GPT-4o mini (example)"))
    window.settings.upsert_profile(llm.profile(name="Llama 3.1 8B (example)"))
    window.settings.default_profile = "GPT-4o mini (example)"
    await asyncio.sleep(0.3)

    grab = grabber(session, folder, "interacteval")

    wiz = open_interacteval_wizard(window)
    wiz.pages["dimensions"].load_sample_set()
    await grab_when(grab, "dimensions", lambda: bool(wiz.choices.samples) and not wiz.busy, pause=0.2)
    wiz.go_next()
    await grab_when(grab, "samples", pause=0.3)
    wiz.go_next()
    think = wiz.pages["think_aloud"]
    items = [think.assessor_list.item(i) for i in range(think.assessor_list.count())]
    for item in items:
        if "example" in item.text():
            item.setCheckState(item.checkState().Checked)
    think.run_think_aloud()
    await _step(wiz, "think_aloud")
    think.author_edit.setText("Ms Okafor")
    await grab_when(grab, "think-aloud", pause=0.3)
    wiz.go_next()
    wiz.pages["build"].run_remaining()
    await _step(wiz, "build")
    wiz.pages["build"].show_build_step("sub_questions")
    await grab_when(grab, "build", pause=0.3)
    wiz.go_next()
    editor = wiz.pages["checklist"].editor
    editor.model.set_question(0, 0, "Does the answer use only words a ten-year-old knows?")
    editor.select(0, 0)
    await grab_when(grab, "checklist", pause=0.3)
    wiz.dim_combo.setCurrentText("Accuracy")
    wiz.show_page("build")
    wiz.pages["build"].run_remaining()
    await _step(wiz, "build")
    wiz.show_page("score")
    await grab_when(grab, "score", lambda: wiz.opened_texts is not None and not wiz.busy, pause=0.3)
    wiz.pages["score"].start_scoring()
    await _step(wiz, "score")
    await wait_until(lambda: bool(wiz.agreement))
    wiz.pages["results"].results.scores_view.selectRow(1)
    await grab_when(grab, "results")
    wiz.pages["results"].results.tabs.setCurrentIndex(1)
    await grab_when(grab, "results-distribution", pause=0.8)
    wiz.pages["results"].results.tabs.setCurrentIndex(2)
    await grab_when(grab, "results-agreement")
    await _conditions(wiz, grab)
    await _check_the_judge(wiz, grab)
    llm.close()


async def _conditions(wiz, grab) -> None:
    """The Conditions tab before and after running the missing conditions (with the single
    judge ticked and each call made twice)."""
    results = wiz.pages["results"]
    tab = results.conditions
    results.results.tabs.setCurrentWidget(tab)
    tab.checks["single-judge"].setChecked(True)
    tab.repeats_spin.setValue(2)
    await wait_until(lambda: "Still to run" in tab.status.text() and "Running them" in
                     tab.status.text())
    await grab_when(grab, "results-conditions-before", pause=0.3)
    tab.start_run()
    await _step(wiz, "conditions")
    await grab_when(grab, "results-conditions",
                    lambda: not tab.missing and tab.model.rowCount() > 0
                    and bool(tab.stability_entries))


async def _check_the_judge(wiz, grab) -> None:
    """Saved as interacteval-check-*.png and interacteval-checklist-badge.png (the docs show
    them as check-*.png and checklist-badge.png: docs/check-the-judge.md). Grade every text near the sample's human scores, with Yes to every question of a text
    rated 4 or more, then the report per question and the checklist editor's badge."""
    from tests.desktop.interacteval_support import human_scores

    wiz.show_page("check")
    panel = wiz.pages["check"].panel
    humans = human_scores()
    shifts = [0, 1, 0, -1, 0, 0, 2]  # a person does not grade exactly as the sample's scores

    def rate(item_id: Any, graded: int) -> None:
        text = panel.judge.item(item_id).text
        for k, (dim, combo) in enumerate(panel.score_combos.items()):
            value = humans.get(text, {}).get(dim)
            if value is not None:
                mine = min(5, max(1, round(value) + shifts[(graded + k) % len(shifts)]))
                combo.setCurrentIndex(combo.findData(float(mine)))
        for (dim, _q), combo in panel.answer_combos.items():
            value = humans.get(text, {}).get(dim)
            if value is not None:
                combo.setCurrentIndex(1 if value >= 4 else 2)

    await grade_every_item(
        panel, grab, rate,
        "Hard to follow: the reason comes last and is mixed in with the rest.", note_at=3)
    panel.tabs.setCurrentIndex(1)
    # the report is computed in the background
    await grab_when(grab, "check-report", lambda: not panel.computing)
    panel.report_tabs.setCurrentIndex(1)
    await grab_when(grab, "check-questions")
    panel.tabs.setCurrentIndex(2)
    await grab_when(grab, "check-rank")
    wiz.dim_combo.setCurrentText("Clarity")
    wiz.show_page("checklist")
    await grab_when(grab, "checklist-badge")


def main(argv: list[str]) -> int:
    return run_shots(_shoot, argv, repo_on_path=True)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
