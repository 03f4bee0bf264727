"""Start-up stays light: showing the main window imports no heavy library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("torch", "sentence_transformers", "litellm", "pandas", "transformers", "llama_cpp")

CHILD = f"HEAVY = {HEAVY!r}\n" + """
import json, sys
from desktop.app import start
session = start()
session.app.processEvents()
heavy = sorted({name.split('.')[0] for name in sys.modules} & set(HEAVY))
print(json.dumps({"visible": session.window.isVisible(),
                  "title": session.window.windowTitle(),
                  "heavy": heavy}))
sys.stdout.flush()
"""


def test_showing_the_main_window_imports_no_heavy_library(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", EVALDESK_HOME=str(tmp_path / "home"))
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=root, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, result.stderr[-2000:]
    report = json.loads(lines[-1])
    assert report["visible"] is True
    assert report["title"].startswith("EvalDesk")
    assert report["heavy"] == [], f"imported at start-up: {report['heavy']}"


RUN_AND_CLOSE = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from desktop.app import run
QTimer.singleShot(300, app.closeAllWindows)
print("run returned", run(), flush=True)
"""


def test_run_returns_when_the_window_closes(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", EVALDESK_HOME=str(tmp_path / "home"))
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", RUN_AND_CLOSE], cwd=root, env=env, capture_output=True,
        text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "run returned 0" in result.stdout
    log = (tmp_path / "home" / "logs" / "evaldesk.log").read_text(encoding="utf-8")
    assert "EvalDesk 0" in log and "starting" in log and "EvalDesk closed" in log


def test_a_damaged_settings_file_is_explained_at_start(qtbot, evaldesk_home):
    import asyncio

    from core.settings import settings_path
    from desktop import app as app_module
    from tests.desktop.conftest import visible_message_boxes

    settings_path().write_text("{ not json", encoding="utf-8")
    session = app_module.start()
    try:
        qtbot.addWidget(session.window)
        qtbot.waitUntil(lambda: bool(visible_message_boxes(session.window)))
        box = visible_message_boxes(session.window)[0]
        assert "could not be read" in box.text() and "default settings" in box.text()
        box.close()
    finally:
        session.reporter.uninstall()
        session.window.close()
        session.loop.close()
        asyncio.set_event_loop(None)


def test_garbage_is_collected_on_the_gui_thread_only(qapp, qtbot):
    import gc
    import threading

    from desktop.collector import GuiThreadCollector

    collected_in: list[str] = []

    class Cycle:
        def __init__(self):
            self.me = self

        def __del__(self):
            collected_in.append(threading.current_thread().name)

    before = gc.isenabled()
    collector = GuiThreadCollector(interval_ms=10)
    try:
        assert not gc.isenabled()

        def make_garbage():
            for _ in range(5000):
                Cycle()

        worker = threading.Thread(target=make_garbage, name="worker")
        worker.start()
        worker.join()
        assert collected_in == []  # nothing was collected by the worker thread
        qtbot.waitUntil(lambda: len(collected_in) > 0, timeout=5000)
        assert set(collected_in) == {threading.main_thread().name}
    finally:
        collector.stop()
    assert gc.isenabled() == before  # given back as it was
