"""Unhandled errors end in a readable dialog and a log file; the app keeps running.

:class:`ErrorReporter` takes over ``sys.excepthook`` (exceptions in Qt slots and in qasync's
``asyncSlot`` land there), ``threading.excepthook`` (worker threads) and the asyncio loop's
exception handler (tasks and callbacks on the qasync loop). Every report is logged with its
traceback to ``evaldesk.log`` in :func:`core.paths.user_log_dir` and shown in a non-modal
:class:`ErrorDialog` with a "Copy details" button. Reports from other threads travel to the GUI
thread through a queued signal.
"""

from __future__ import annotations

import asyncio
import logging
import platform
import re
import sys
import threading
import traceback
from collections.abc import Coroutine
from datetime import datetime
from logging.handlers import RotatingFileHandler
from pathlib import Path
from types import TracebackType
from typing import Any

from PySide6.QtCore import QObject, Qt, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices, QFont, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from core import __version__, paths
from core.secrets import redact_logs

__all__ = [
    "LOG_FILE_NAME",
    "ErrorDialog",
    "ErrorReporter",
    "current_reporter",
    "log_file",
    "redact",
    "setup_logging",
    "spawn",
]

LOG_FILE_NAME = "evaldesk.log"
log = logging.getLogger("evaldesk")

#: Things that look like API keys or bearer tokens; replaced before anything is logged or shown.
_SECRET_PATTERNS = [
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}"), "[hidden]"),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), "[hidden]"),
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"), r"\1[hidden]"),
    (re.compile(r"(?i)(api[_-]?key['\"]?\s*[:=]\s*['\"]?)[^\s'\",]{6,}"), r"\1[hidden]"),
]

_current: ErrorReporter | None = None


def redact(text: str) -> str:
    """``text`` with anything that looks like an API key replaced by ``[hidden]``."""
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def current_reporter() -> ErrorReporter | None:
    """The installed reporter (None before the app has started)."""
    return _current


def log_file() -> Path:
    return paths.user_log_dir() / LOG_FILE_NAME


def setup_logging(level: int = logging.INFO) -> Path:
    """Send the ``evaldesk`` and ``core`` loggers (and warnings) to a rotating log file."""
    path = log_file()
    root = logging.getLogger()
    for handler in root.handlers:
        if getattr(handler, "_evaldesk", False):
            if Path(handler.baseFilename) == path:  # type: ignore[attr-defined]
                return path
            root.removeHandler(handler)
            handler.close()
    handler = RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    handler._evaldesk = True  # type: ignore[attr-defined]
    redact_logs(handler)  # no key a library logs from a provider's words reaches the file
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s")
    )
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    logging.captureWarnings(True)
    return path


def _summary(exc: BaseException | None, fallback: str) -> str:
    if exc is None:
        return fallback
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return redact(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)


def _details(
    exc_type: type[BaseException] | None,
    exc: BaseException | None,
    tb: TracebackType | None,
    where: str,
) -> str:
    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import qVersion

    lines = [
        f"When: {datetime.now():%Y-%m-%d %H:%M:%S}",
        f"Where: {where}",
        (f"EvalDesk {__version__}, Python {platform.python_version()}, "
         f"PySide6 {pyside_version}, Qt {qVersion()}, {platform.platform()}"),
        "",
    ]
    if exc is not None:
        lines += traceback.format_exception(exc_type or type(exc), exc, tb)
    return redact("".join(line if line.endswith("\n") else line + "\n" for line in lines))


class ErrorDialog(QDialog):
    """A calm, non-modal report of an unexpected error, with its details and the log file."""

    def __init__(self, summary: str, details: str, log_path: Path | None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("EvalDesk: something went wrong")
        self.setModal(False)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.resize(640, 440)
        self.count = 0
        self.log_path = log_path

        heading = QLabel("Something went wrong")
        heading.setObjectName("pageTitle")
        intro = QLabel(
            "EvalDesk hit a problem it did not expect. It is still running, and work that had "
            "finished is kept in your project. You can carry on, or try the last step again."
        )
        intro.setWordWrap(True)
        self.summary_label = QLabel()
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label.setObjectName("errorText")

        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.details.setFont(mono)
        self.details.setToolTip("Technical details for whoever supports EvalDesk for you.")

        where = (
            f"These details were also written to the log file {log_path}."
            if log_path
            else "These details could not be written to a log file."
        )
        help_text = QLabel(
            f"{where} If it happens again, press “Copy details” and send them with a short "
            "note on what you were doing."
        )
        help_text.setWordWrap(True)
        help_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.copy_button = QPushButton("Copy details")
        self.copy_button.setToolTip("Copy the details above to the clipboard.")
        self.copy_button.clicked.connect(self.copy_details)
        self.folder_button = QPushButton("Open log folder")
        self.folder_button.setEnabled(log_path is not None)
        self.folder_button.clicked.connect(self._open_log_folder)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        buttons.accepted.connect(self.close)
        row = QHBoxLayout()
        row.addWidget(self.copy_button)
        row.addWidget(self.folder_button)
        row.addStretch(1)
        row.addWidget(buttons)

        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(intro)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.details, 1)
        layout.addWidget(help_text)
        layout.addLayout(row)
        self.add_problem(summary, details)

    def add_problem(self, summary: str, details: str) -> None:
        """Show one more problem in this dialog (repeated errors do not pile up windows)."""
        self.count += 1
        if self.count == 1:
            self.summary_label.setText(summary)
            self.details.setPlainText(details)
        else:
            self.summary_label.setText(f"{self.count} problems. The latest: {summary}")
            self.details.appendPlainText("\n" + "-" * 60 + "\n" + details)

    def details_text(self) -> str:
        return self.details.toPlainText()

    @Slot()
    def copy_details(self) -> None:
        QGuiApplication.clipboard().setText(self.details_text())
        self.copy_button.setText("Copied")

    @Slot()
    def _open_log_folder(self) -> None:
        if self.log_path is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.log_path.parent)))


class ErrorReporter(QObject):
    """Routes every unhandled exception to the log file and an :class:`ErrorDialog`."""

    _reported = Signal(str, str)

    def __init__(self, log_path: Path | None = None, parent_widget: QWidget | None = None) -> None:
        super().__init__()
        self.log_path = log_path
        self.parent_widget = parent_widget
        self.dialog: ErrorDialog | None = None
        self.reports: list[tuple[str, str]] = []
        self._installed = False
        self._previous: dict[str, Any] = {}
        self._reported.connect(self._show, Qt.ConnectionType.QueuedConnection)

    # -- installing ---------------------------------------------------------------------------
    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        global _current
        _current = self
        if not self._installed:
            self._previous = {"sys": sys.excepthook, "threading": threading.excepthook}
            sys.excepthook = self.excepthook
            threading.excepthook = self._thread_excepthook
            self._installed = True
        if loop is not None:
            loop.set_exception_handler(self._loop_exception_handler)

    def uninstall(self) -> None:
        global _current
        if _current is self:
            _current = None
        if self._installed:
            sys.excepthook = self._previous["sys"]
            threading.excepthook = self._previous["threading"]
            self._installed = False

    # -- hooks --------------------------------------------------------------------------------
    def excepthook(
        self,
        exc_type: type[BaseException],
        exc: BaseException,
        tb: TracebackType | None,
    ) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            self._previous.get("sys", sys.__excepthook__)(exc_type, exc, tb)
            return
        self.report(exc, where="the main window", tb=tb)

    def _thread_excepthook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit or args.exc_value is None:
            return
        name = args.thread.name if args.thread is not None else "a worker thread"
        self.report(args.exc_value, where=f"background thread {name}", tb=args.exc_traceback)

    def _loop_exception_handler(
        self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]
    ) -> None:
        exc = context.get("exception")
        if isinstance(exc, asyncio.CancelledError):
            return
        message = str(context.get("message") or "an asynchronous task failed")
        if exc is None:
            log.error("Event loop problem: %s (%r)", message, context)
            self._reported.emit(message, redact(f"{message}\n{context!r}"))
            return
        self.report(exc, where=f"a background task ({message})")

    # -- reporting ----------------------------------------------------------------------------
    def report(
        self, exc: BaseException, where: str = "", tb: TracebackType | None = None
    ) -> None:
        """Log ``exc`` and show it (thread-safe: may be called from any thread)."""
        tb = tb if tb is not None else exc.__traceback__
        summary = _summary(exc, "An unexpected problem occurred.")
        details = _details(type(exc), exc, tb, where or "EvalDesk")
        log.error("Unhandled error in %s\n%s", where or "EvalDesk", details)
        self._reported.emit(summary, details)

    @Slot(str, str)
    def _show(self, summary: str, details: str) -> None:
        self.reports.append((summary, details))
        dialog = self.dialog
        if dialog is not None and isValid(dialog) and dialog.isVisible():
            dialog.add_problem(summary, details)
            dialog.raise_()
            return
        parent = self.parent_widget
        if parent is not None and not (isValid(parent) and parent.isVisible()):
            parent = None
        self.dialog = ErrorDialog(summary, details, self.log_path, parent)
        self.dialog.show()


def spawn(coro: Coroutine[Any, Any, Any], where: str = "") -> asyncio.Task:
    """Run ``coro`` as a task on the current (qasync) loop; if it fails, the error is reported.

    Use it to start a coroutine from an ordinary slot. ``qasync.asyncSlot`` works too (its
    errors reach ``sys.excepthook``), but a task started with ``asyncio.ensure_future`` alone
    would only complain when garbage-collected.
    """
    task = asyncio.ensure_future(coro)

    def _done(t: asyncio.Task) -> None:
        if t.cancelled():
            return
        exc = t.exception()
        if exc is None:
            return
        reporter = _current
        if reporter is not None:
            reporter.report(exc, where=where or "a background task")
        else:
            sys.excepthook(type(exc), exc, exc.__traceback__)

    task.add_done_callback(_done)
    return task
