"""Start the EvalDesk window: one QApplication, one qasync event loop, error hooks, logging.

Start-up stays light: nothing here imports torch, sentence-transformers, litellm or pandas; the
parts that need them import them when first used.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

# Before anything could import them (they read these at import time).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import qasync
from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from core import __version__, paths
from core.settings import SettingsStore
from desktop.collector import GuiThreadCollector
from desktop.errors import ErrorReporter, setup_logging
from desktop.first_run import show_first_run_if_needed
from desktop.main_window import MainWindow
from desktop.runner import cancel_all

__all__ = ["AppSession", "run", "start"]

log = logging.getLogger("evaldesk")


@dataclass
class AppSession:
    """Everything :func:`start` made; :func:`run` then runs the loop until the window closes."""

    app: QApplication
    loop: qasync.QEventLoop
    window: MainWindow
    reporter: ErrorReporter
    log_path: Path
    collector: GuiThreadCollector | None = None


def load_style(app: QApplication) -> None:
    """Apply ``resources/style.qss`` and the window icon (both optional)."""
    resources = paths.resources_dir()
    style = resources / "style.qss"
    if style.is_file():
        app.setStyleSheet(style.read_text(encoding="utf-8"))
    icon = resources / "icons" / "evaldesk.svg"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))


def start(project_path: str | os.PathLike[str] | None = None,
          argv: list[str] | None = None) -> AppSession:
    """Create the application, loop, error hooks and main window, and show the window."""
    log_path = setup_logging()
    log.info("EvalDesk %s starting (Python %s)", __version__, sys.version.split()[0])
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("EvalDesk")
    app.setApplicationDisplayName("EvalDesk")
    app.setOrganizationName("EvalDesk")
    app.setApplicationVersion(__version__)
    load_style(app)

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    collector = GuiThreadCollector(app)  # no Qt object is freed by a worker thread
    reporter = ErrorReporter(log_path)
    reporter.install(loop)

    store = SettingsStore()
    settings = store.load()
    window = MainWindow(store, settings)
    reporter.parent_widget = window
    window.show()

    home_notice = paths.unwritable_folders_notice()
    if home_notice:  # a read-only home folder: the app works, saying what cannot be kept
        log.warning("%s", home_notice)
        QTimer.singleShot(0, lambda: window.show_message(
            "EvalDesk cannot save in your home folder", home_notice, QMessageBox.Icon.Warning))
    if store.problem:
        problem = store.problem
        QTimer.singleShot(
            0, lambda: window.show_message("Settings", problem, QMessageBox.Icon.Warning)
        )
    if project_path:
        target = str(project_path)
        QTimer.singleShot(0, lambda: window.open_project(target))
    elif not store.problem:
        QTimer.singleShot(0, lambda: show_first_run_if_needed(window))
    return AppSession(app, loop, window, reporter, log_path, collector)


async def close_llm_connections() -> None:
    """Close the LLM gateway's HTTP connections before the loop ends (only if it was used: this
    must not import litellm at exit)."""
    if "core.llm" in sys.modules:
        await sys.modules["core.llm"].close_connections()


def run(project_path: str | os.PathLike[str] | None = None) -> int:
    """Open the app (and ``project_path`` if given); return when the window closes. When not
    even a temporary folder can be written, a dialog says so and what to do (there is no
    terminal to read a traceback in)."""
    try:
        session = start(project_path)
    except paths.UserFoldersUnwritable as exc:
        app = QApplication.instance() or QApplication(sys.argv[:1])
        QMessageBox.critical(None, "EvalDesk cannot start", str(exc))
        del app
        return 1
    closed = asyncio.Event()
    session.app.aboutToQuit.connect(cancel_all)  # long steps stop; finished work is kept
    session.app.aboutToQuit.connect(closed.set)
    session.app.setQuitOnLastWindowClosed(True)
    try:
        with session.loop:
            session.loop.run_until_complete(closed.wait())
            session.loop.run_until_complete(close_llm_connections())
        from desktop.main_window import stop_local_engines

        stop_local_engines()
    finally:
        session.reporter.uninstall()
        if session.collector is not None:
            session.collector.stop()
        log.info("EvalDesk closed")
    return 0
