"""desktop.latest.Latest: only the latest background computation of a view reaches it."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from core.project import ProjectError
from desktop.latest import Latest


def test_only_the_latest_result_is_shown_and_none_after_the_project_closed(qtbot, window):
    latest = Latest()
    project = SimpleNamespace(closed=False)
    shown: list[str] = []
    gate = threading.Event()

    def slow() -> str:
        gate.wait(10)
        return "old"

    latest.start()
    old = latest.run(project, slow, shown.append, "test")
    latest.start()  # the choice changed meanwhile
    new = latest.run(project, lambda: "new", shown.append, "test")
    qtbot.waitUntil(new.done, timeout=10_000)
    gate.set()
    qtbot.waitUntil(old.done, timeout=10_000)
    assert shown == ["new"]

    latest.start()
    project.closed = True
    closed = latest.run(project, lambda: "after closing", shown.append, "test")
    qtbot.waitUntil(closed.done, timeout=10_000)

    def fails() -> str:
        raise ProjectError("the project was closed")

    gone = latest.run(SimpleNamespace(closed=False), fails, shown.append, "test")
    qtbot.waitUntil(gone.done, timeout=10_000)
    assert shown == ["new"] and gone.exception() is None
