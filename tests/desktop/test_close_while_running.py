"""Closing the window while a step runs asks first (issue 28, point 13: it did not): "Keep
running" leaves everything as it was; "Stop and close" stops the step (finished work is kept)
and closes."""

from __future__ import annotations

import asyncio

from desktop.run_panel import RunPanel
from desktop.runner import running_count, start_step


def test_closing_mid_run_asks_and_stops_only_when_told(qtbot, window):
    panel = RunPanel()
    qtbot.addWidget(panel)
    stopped = []

    async def step(progress, cancel):
        progress.start("Debating", total=18)
        while not cancel.cancelled:
            await asyncio.sleep(0.01)
        stopped.append(True)
        cancel.raise_if_cancelled()

    start_step(panel, step, title="Debating 18 times")
    qtbot.waitUntil(lambda: running_count() == 1, timeout=5_000)

    window.close()
    box = window.stop_box
    assert box is not None and box.isVisible() and window.isVisible()
    assert "still running" in box.text() and "kept" in box.informativeText()
    next(b for b in box.buttons() if b.text() == "Keep running").click()
    qtbot.wait(50)
    assert window.isVisible() and running_count() == 1 and not stopped

    window.close()
    box = window.stop_box
    next(b for b in box.buttons() if b.text() == "Stop and close").click()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5_000)
    qtbot.waitUntil(lambda: running_count() == 0 and bool(stopped), timeout=5_000)
