"""Unhandled errors (slot, coroutine, executor thread, loop callback) end in the error dialog
and the log file, and the app keeps running."""

from __future__ import annotations

import asyncio
import threading

import pytest
import qasync
from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QPushButton

from desktop import errors
from desktop.errors import ErrorDialog, ErrorReporter, redact, setup_logging, spawn

pytestmark = pytest.mark.qt_no_exception_capture


@pytest.fixture
def shown(monkeypatch):
    """Capture error dialogs instead of showing them."""
    dialogs: list[ErrorDialog] = []

    def fake_show(self):
        dialogs.append(self)

    monkeypatch.setattr(ErrorDialog, "show", fake_show)
    return dialogs


@pytest.fixture
def reporter(qloop):
    log_path = setup_logging()
    rep = ErrorReporter(log_path)
    rep.install(qloop)
    yield rep
    rep.uninstall()


def _log_text() -> str:
    for handler in __import__("logging").getLogger().handlers:
        handler.flush()
    return errors.log_file().read_text(encoding="utf-8")


def test_exception_in_a_slot_shows_dialog_and_logs(qtbot, reporter, shown):
    button = QPushButton("Boom")
    qtbot.addWidget(button)

    def broken_slot():
        raise ValueError("the slot broke")

    button.clicked.connect(broken_slot)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(shown) == 1)
    dialog = shown[0]
    assert "ValueError: the slot broke" in dialog.summary_label.text()
    assert "broken_slot" in dialog.details_text()  # the traceback is in the details
    assert "broken_slot" in _log_text()
    assert str(errors.log_file()) in " ".join(
        label.text() for label in dialog.findChildren(type(dialog.summary_label))
    )
    # the app keeps running: the same button still works
    calls = []
    button.clicked.disconnect(broken_slot)
    button.clicked.connect(lambda: calls.append(1))
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert calls == [1]


def test_exception_in_a_spawned_coroutine(qtbot, reporter, shown):
    async def failing():
        await asyncio.sleep(0)
        raise RuntimeError("the coroutine broke")

    task = spawn(failing())
    qtbot.waitUntil(task.done)
    qtbot.waitUntil(lambda: len(shown) == 1)
    assert "RuntimeError: the coroutine broke" in shown[0].summary_label.text()
    assert "the coroutine broke" in _log_text()


def test_exception_in_an_async_slot(qtbot, reporter, shown):
    button = QPushButton("Async boom")
    qtbot.addWidget(button)

    class Page(QObject):
        @qasync.asyncSlot()
        async def import_sheet(self):
            await asyncio.sleep(0)
            raise KeyError("missing column")

    page = Page()
    button.clicked.connect(page.import_sheet)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(shown) == 1)
    assert "KeyError" in shown[0].summary_label.text()
    assert "missing column" in _log_text()


def test_exception_in_an_executor_step_that_nobody_awaits_for_errors(qtbot, reporter, shown,
                                                                      qloop):
    def cpu_work():
        raise ZeroDivisionError("bad batch")

    async def uses_executor():
        await qloop.run_in_executor(None, cpu_work)

    spawn(uses_executor())
    qtbot.waitUntil(lambda: len(shown) == 1, timeout=5000)
    assert "ZeroDivisionError: bad batch" in shown[0].summary_label.text()
    assert "cpu_work" in shown[0].details_text()


def test_exception_in_a_plain_thread(qtbot, reporter, shown):
    def worker():
        raise OSError("disk went away")

    thread = threading.Thread(target=worker, name="exporter")
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: len(shown) == 1)
    assert "OSError: disk went away" in shown[0].summary_label.text()
    assert "exporter" in shown[0].details_text()


def test_exception_in_a_loop_callback(qtbot, reporter, shown, qloop):
    def callback():
        raise LookupError("callback broke")

    qloop.call_soon(callback)
    qtbot.waitUntil(lambda: len(shown) == 1)
    assert "LookupError: callback broke" in shown[0].summary_label.text()


def test_repeated_errors_share_one_dialog(qtbot, reporter, monkeypatch):
    created = []
    original_init = ErrorDialog.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        created.append(self)

    monkeypatch.setattr(ErrorDialog, "__init__", init)
    for n in range(3):
        try:
            raise ValueError(f"problem {n}")
        except ValueError as exc:
            reporter.report(exc, where="a test")
    qtbot.waitUntil(lambda: len(reporter.reports) == 3)
    assert len(created) == 1
    dialog = created[0]
    assert dialog.isVisible() and not dialog.isModal()
    assert dialog.summary_label.text().startswith("3 problems")
    assert "problem 0" in dialog.details_text() and "problem 2" in dialog.details_text()
    dialog.close()


def test_copy_details_puts_the_details_on_the_clipboard(qtbot):
    dialog = ErrorDialog("ValueError: x", "Traceback ...\nValueError: x\n", None)
    qtbot.addWidget(dialog)
    qtbot.mouseClick(dialog.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == dialog.details_text()
    assert dialog.copy_button.text() == "Copied"


def test_keys_are_redacted_from_reports():
    text = redact(
        "AuthenticationError: Incorrect API key provided: sk-proj-abcdefghijklmnop1234. "
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz api_key='secretsecret123'"
    )
    assert "abcdefghijklmnop1234" not in text
    assert "abcdefghijklmnopqrstuvwxyz" not in text
    assert "secretsecret123" not in text
    assert "[hidden]" in text and "Incorrect API key provided" in text


def test_uninstall_restores_the_hooks(qloop):
    import sys

    before = sys.excepthook, threading.excepthook
    rep = ErrorReporter(None)
    rep.install(qloop)
    assert sys.excepthook == rep.excepthook
    rep.uninstall()
    assert (sys.excepthook, threading.excepthook) == before
    assert errors.current_reporter() is None
