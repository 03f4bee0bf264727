"""Shared by the AQER wizard tests: wait for the file to be read and checked, press a button,
go from a loaded file to the results page."""

from __future__ import annotations

from PySide6.QtCore import Qt


def wait_read(qtbot, wiz):
    qtbot.waitUntil(lambda: wiz.read is not None and not wiz.reading, timeout=15_000)


def wait_check(qtbot, wiz):
    qtbot.waitUntil(lambda: wiz.check is not None and not wiz.checking, timeout=15_000)


def click(qtbot, button):
    assert button.isEnabled(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def to_results(qtbot, wiz):
    """From a loaded file to the results page, pressing the wizard's buttons."""
    click(qtbot, wiz.next_button)
    assert wiz.page == "columns"
    wait_check(qtbot, wiz)
    click(qtbot, wiz.next_button)
    assert wiz.page == "model"
    click(qtbot, wiz.next_button)
    assert wiz.page == "run"
    click(qtbot, wiz.pages["run"].run_button)
    qtbot.waitUntil(lambda: wiz.page == "results", timeout=30_000)


def evaldesk(argv: list[str]) -> int:
    """``evaldesk ARGV`` as the program a user starts beside the app: in a thread of its own,
    so its run has its own event loop (not this window's)."""
    from concurrent.futures import ThreadPoolExecutor

    from core import cli

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(cli.main, argv).result()
