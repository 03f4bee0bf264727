"""EvalDesk's windows (PySide6 + qasync). No method logic lives here: widgets collect input, call
plain ``core`` functions through :mod:`desktop.runner`, and show the results.

What wizard authors use (imported lazily, so ``evaldesk --version`` never loads Qt)::

    from desktop import register_wizard, RunPanel, run_step, start_step, spawn

* ``register_wizard(key, open)``: ``key`` is "aqer", "majeval" or "interacteval";
  ``open(main_window)`` shows the wizard (``main_window.show_page(page)``,
  ``main_window.ensure_project(method)``, ``main_window.settings``, ``main_window.show_home()``).
* ``RunPanel``: progress bar, stage and detail, count, elapsed time, Cancel.
* ``await run_step(panel, step, title=...)`` / ``start_step(panel, step, title=..., on_done=...)``:
  run ``step(progress, cancel)`` (a coroutine function on the loop, a plain function in the
  executor) and get a ``RunOutcome`` (``status`` "finished" / "stopped" / "failed").
* ``spawn(coro)``: start a coroutine from an ordinary slot; its errors reach the error dialog.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "MainWindow",
    "RunOutcome",
    "RunPanel",
    "register_wizard",
    "run",
    "run_step",
    "spawn",
    "start_step",
    "unregister_wizard",
]

_WHERE = {
    "MainWindow": "desktop.main_window",
    "RunOutcome": "desktop.runner",
    "RunPanel": "desktop.run_panel",
    "register_wizard": "desktop.methods",
    "run": "desktop.app",
    "run_step": "desktop.runner",
    "spawn": "desktop.errors",
    "start_step": "desktop.runner",
    "unregister_wizard": "desktop.methods",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'desktop' has no attribute {name!r}")
