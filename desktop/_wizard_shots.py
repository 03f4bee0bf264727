"""What the wizards' screenshot scripts (``desktop.<method>._screenshots``) share: waiting for
the wizard, saving a picture of the window, and running a script in the real app window."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from desktop.app import start

__all__ = ["grab_when", "grabber", "grade_every_item", "run_shots", "wait_until"]


async def wait_until(condition: Callable[[], Any], timeout: float = 120.0) -> None:
    """Let the event loop run until ``condition()`` is true (TimeoutError after ``timeout`` s)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise TimeoutError("the wizard did not get there in time")
        await asyncio.sleep(0.05)


async def grab_when(grab: Callable[..., None], name: str,
                    condition: Callable[[], Any] | None = None, *, pause: float = 0.4,
                    timeout: float = 120.0) -> None:
    """Wait until ``condition()`` is true (when given), let the window settle ``pause`` seconds,
    then ``grab(name)``."""
    if condition is not None:
        await wait_until(condition, timeout)
    await asyncio.sleep(pause)
    grab(name)


async def grade_every_item(panel: Any, grab: Callable[..., None],
                           rate: Callable[[Any, int], None], note: str, note_at: int) -> None:
    """Grade every item the "Check the judge" ``panel`` offers: ``rate(item_id, graded)`` sets
    its ratings (``graded`` items done before it); the ``note_at``-th item (from 0) also gets
    ``note`` and is saved as ``check-grade`` first. An item that cannot be saved is skipped."""
    graded = 0
    while panel.current is not None:
        rate(panel.current, graded)
        if graded == note_at:
            panel.note_edit.setPlainText(note)
            await grab_when(grab, "check-grade", pause=0.3)
        graded += 1
        if not panel.save_and_next():
            panel.skip()


def grabber(session: Any, folder: Path, prefix: str) -> Callable[..., None]:
    """``grab(name, widget=None)`` saves ``<folder>/<prefix>-<name>.png`` of ``widget`` (the main
    window when None) and prints its path and size."""

    def grab(name: str, widget: Any = None) -> None:
        session.app.processEvents()
        path = folder / f"{prefix}-{name}.png"
        (widget or session.window).grab().save(str(path))
        print(path, path.stat().st_size // 1024, "KB")

    return grab


def run_shots(shoot: Callable[[Any, Path], Coroutine[Any, Any, None]], argv: list[str],
              repo_on_path: bool = False) -> int:
    """Start the app, run ``shoot(session, folder)`` on its loop and close the window. The
    folder is ``argv[0]`` (default ``resources/screenshots``); ``repo_on_path`` puts the
    repository on ``sys.path`` first (for scripts that use the test helpers)."""
    if repo_on_path:
        root = Path(__file__).resolve().parents[1]
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
    folder = Path(argv[0] if argv else "resources/screenshots").resolve()
    folder.mkdir(parents=True, exist_ok=True)
    session = start()
    with session.loop:
        session.loop.run_until_complete(shoot(session, folder))
    session.window.close()
    return 0
