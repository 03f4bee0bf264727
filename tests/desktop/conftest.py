"""GUI test set-up: a running qasync loop on pytest-qt's QApplication, and a main window."""

from __future__ import annotations

import asyncio
import time

import pytest


@pytest.fixture
def qloop(qapp):
    """A qasync loop marked as running on the Qt event loop that pytest-qt spins.

    ``qtbot.waitUntil`` / ``qtbot.wait`` process Qt events, which run the loop's callbacks, so
    tasks started with ``desktop.errors.spawn`` make progress while the test waits.
    """
    import qasync

    from desktop.collector import GuiThreadCollector

    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    collector = GuiThreadCollector()  # as the app does: Qt objects freed on the GUI thread only
    yield loop
    from desktop.app import close_llm_connections

    closing = loop.create_task(close_llm_connections())  # no socket may outlive its loop
    for _ in range(200):
        if closing.done():
            break
        qapp.processEvents()
        time.sleep(0.005)
    for task in asyncio.all_tasks(loop):
        task.cancel()
    qapp.processEvents()
    # Not loop.stop(): it calls QApplication.exit(), which leaves Qt's "quit now" flag set and
    # makes every later nested event loop (qtbot.wait) return at once.
    loop._QEventLoop__is_running = False
    loop.close()
    collector.stop()
    asyncio.events._set_running_loop(None)
    asyncio.set_event_loop(None)


@pytest.fixture(autouse=True)
def _quick_device_detection(monkeypatch):
    """Opening Settings must not import torch in GUI tests (a test may override this)."""
    from desktop.settings_dialog import SettingsDialog

    monkeypatch.setattr(SettingsDialog, "detect_devices", staticmethod(lambda: ["cpu"]))


@pytest.fixture(autouse=True)
def _no_speed_probe(monkeypatch):
    """Estimates in GUI tests do not time the bundled model first (desktop.calibration: it
    would load the model); the test of that switches it back on with a stand-in probe."""
    import desktop.calibration

    monkeypatch.setattr(desktop.calibration, "ENABLED", False)
    monkeypatch.setattr(desktop.calibration, "_tried", set())


@pytest.fixture
def store():
    from core.settings import SettingsStore

    return SettingsStore()


@pytest.fixture
def window(qtbot, qloop, store):
    from desktop.main_window import MainWindow

    win = MainWindow(store)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    if win.project is not None:
        win.project.close()


def visible_message_boxes(parent=None):
    """The QMessageBoxes currently shown (only those inside ``parent`` when it is given)."""
    from PySide6.QtWidgets import QApplication, QMessageBox

    if parent is not None:
        boxes = parent.findChildren(QMessageBox)
    else:
        boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]
    return [box for box in boxes if box.isVisible()]


@pytest.fixture(autouse=True)
def _close_leftover_windows(qapp):
    """Close message boxes and dialogs a test left open, so the next test starts clean."""
    yield
    from PySide6.QtWidgets import QDialog

    for widget in qapp.topLevelWidgets():
        if isinstance(widget, QDialog) and widget.isVisible():
            widget.close()
    qapp.processEvents()
