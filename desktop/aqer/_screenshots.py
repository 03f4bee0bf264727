"""Screenshots of the AQER wizard on the sample data (for the README and the docs).

    EVALDESK_HOME=$(mktemp -d) xvfb-run -a -s "-screen 0 1400x900x24" \
        python -m desktop.aqer._screenshots resources/screenshots

Runs the real app window with the bundled embedding model and saves ``aqer-<page>.png``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path


async def _wait(condition, timeout: float = 120.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise TimeoutError("the wizard did not get there in time")
        await asyncio.sleep(0.05)


async def _shoot(session, folder: Path) -> None:
    from desktop.aqer import open_aqer_wizard

    window = session.window
    window.resize(1280, 820)
    await asyncio.sleep(0.3)

    def grab(name: str) -> None:
        session.app.processEvents()
        path = folder / f"aqer-{name}.png"
        window.grab().save(str(path))
        print(path, path.stat().st_size // 1024, "KB")

    wiz = open_aqer_wizard(window)
    wiz.load_sample()
    await _wait(lambda: wiz.read is not None and not wiz.reading)
    await asyncio.sleep(0.2)
    grab("file")
    wiz.go_next()
    await _wait(lambda: wiz.check is not None and not wiz.checking)
    await asyncio.sleep(0.2)
    grab("mapping")
    wiz.go_next()
    await asyncio.sleep(0.2)
    grab("model")
    wiz.go_next()
    wiz.start_run()
    await _wait(lambda: wiz.run_panel.state is not None and wiz.run_panel.state.total)
    await asyncio.sleep(0.05)
    grab("run")
    await _wait(lambda: wiz.page == "results")
    await asyncio.sleep(0.5)
    tabs = wiz.results.tabs
    for index, name in ((0, "results-workers"), (1, "results-questions"), (2, "results-llm"),
                        (3, "results-convergence"), (5, "results-warnings")):
        tabs.setCurrentIndex(index)
        if name == "results-questions":
            wiz.results.questions_view.selectRow(4)
        await asyncio.sleep(0.5)
        grab(name)


def main(argv: list[str]) -> int:
    from desktop.app import start

    folder = Path(argv[0] if argv else "resources/screenshots").resolve()
    folder.mkdir(parents=True, exist_ok=True)
    session = start()
    with session.loop:
        session.loop.run_until_complete(_shoot(session, folder))
    session.window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
