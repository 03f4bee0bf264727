"""Screenshots of the AQER wizard on the sample data (for the README and the docs).

    EVALDESK_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1400x900x24" \
        python -m desktop.aqer._screenshots resources/screenshots

Runs the real app window with the bundled embedding model and saves ``aqer-<page>.png``,
ending with the "Check the judge" page (``aqer-check-*.png``).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from desktop._wizard_shots import grab_when, grabber, run_shots, wait_until


async def _shoot(session, folder: Path) -> None:
    from desktop.aqer import open_aqer_wizard

    window = session.window
    window.resize(1280, 800)
    await asyncio.sleep(0.3)

    grab = grabber(session, folder, "aqer")

    wiz = open_aqer_wizard(window)
    wiz.load_sample()
    await grab_when(grab, "file", lambda: wiz.read is not None and not wiz.reading, pause=0.2)
    wiz.go_next()
    await grab_when(grab, "mapping", lambda: wiz.check is not None and not wiz.checking, pause=0.2)
    wiz.go_next()
    await grab_when(grab, "model", pause=0.2)
    wiz.go_next()
    wiz.pages["run"].start_run()
    panel = wiz.pages["run"].run_panel
    await grab_when(grab, "run", lambda: panel.state is not None and panel.state.total, pause=0.05)
    await wait_until(lambda: wiz.page == "results")
    await asyncio.sleep(0.5)
    results = wiz.pages["results"].results
    tabs = results.tabs
    for widget, name in ((tabs.widget(0), "results-workers"),
                         (tabs.widget(1), "results-questions"),
                         (results.llm_tab, "results-llm"),
                         (tabs.widget(3), "results-convergence"),
                         (results.agreement_tab, "results-agreement"),
                         (results.comparison_tab, "results-comparison"),
                         (results.curve_tab, "results-workers-curve"),
                         (results.warnings_tab, "results-warnings")):
        tabs.setCurrentWidget(widget)
        if name == "results-questions":
            results.questions_view.selectRow(4)
        if name == "results-comparison":
            await wait_until(lambda: results.comparison is not None)
        if name == "results-workers-curve":
            wiz.pages["results"].start_curve()
            await wait_until(lambda: results.curve is not None, timeout=600)
        await asyncio.sleep(0.5)
        grab(name)
    await _check_the_judge(wiz, grab)


async def _check_the_judge(wiz, grab) -> None:
    """aqer-check-report.png and aqer-check-disagreements.png: the sample's own grades of the
    AI answers kept as one rater's ratings, and AQER compared with them by order."""
    wiz.show_page("check")
    page = wiz.pages["check"]
    panel = page.panel
    page.use_file_grades()
    panel.tabs.setCurrentIndex(1)
    await grab_when(grab, "check-report",
                    lambda: not panel.computing and panel.report is not None, timeout=300)
    panel.report_tabs.setCurrentIndex(2)
    await grab_when(grab, "check-disagreements")


def main(argv: list[str]) -> int:
    return run_shots(_shoot, argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
