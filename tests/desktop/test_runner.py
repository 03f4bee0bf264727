"""The run panel and runner: progress from threads, Cancel keeps finished work, failures."""

from __future__ import annotations

import asyncio
import threading
import time
from functools import partial

from core.runs import Cancelled
from desktop.run_panel import STOPPED_TEXT, RunPanel, format_elapsed
from desktop.runner import QtProgress, run_step, start_step


def count_to(n: int, progress, cancel, *, pause: float = 0.0, started=None):
    """A plain step: n units of work, checking the token between units."""
    progress.start("Counting", total=n)
    for i in range(n):
        cancel.raise_if_cancelled()
        if started is not None and i == 0:
            started.set()
        time.sleep(pause)
        progress.advance(1, detail=f"unit {i + 1}")
    return n


def test_plain_step_finishes_and_reports(qtbot, qloop):
    panel = RunPanel()
    qtbot.addWidget(panel)
    task = start_step(panel, partial(count_to, 100), title="Counting to 100")
    qtbot.waitUntil(task.done, timeout=10_000)
    outcome = task.result()
    assert outcome.finished and outcome.result == 100
    assert panel.status == "finished"
    assert panel.bar.maximum() == 100 and panel.bar.value() == 100
    assert panel.count_label.text() == "100 of 100"
    assert panel.message_label.text().startswith("Finished in")
    assert not panel.cancel_button.isEnabled()


def test_cancel_midway_stops_and_keeps_the_count(qtbot, qloop):
    panel = RunPanel()
    qtbot.addWidget(panel)
    ended = []
    panel.ended.connect(ended.append)
    task = start_step(panel, partial(count_to, 100, pause=0.01), title="Slow count")
    qtbot.waitUntil(lambda: panel.state is not None and panel.state.done >= 20, timeout=10_000)
    assert panel.cancel_button.isEnabled()
    qtbot.mouseClick(panel.cancel_button, __import__("PySide6.QtCore").QtCore.Qt.LeftButton)
    assert panel.status == "stopping"
    assert panel.cancel_button.text() == "Stopping…"
    qtbot.waitUntil(task.done, timeout=10_000)
    outcome = task.result()
    assert outcome.status == "stopped"
    assert isinstance(outcome.error, Cancelled)
    assert panel.status == "stopped" and ended == ["stopped"]
    assert panel.message_label.text() == STOPPED_TEXT == "Stopped; finished work was kept."
    done = outcome.state.done
    assert 20 <= done < 100
    # the panel still shows what was finished
    assert panel.bar.maximum() == 100 and panel.bar.value() == done
    assert panel.count_label.text() == f"{done} of 100"


def test_failure_is_shown_in_the_panel_not_raised(qtbot, qloop):
    panel = RunPanel()
    qtbot.addWidget(panel)

    def broken(progress, cancel):
        progress.start("Reading the spreadsheet", total=3)
        progress.advance(1)
        raise ValueError("Sheet 'Answers', row 7: the column 'worker' is empty. Fill it in.")

    task = start_step(panel, broken, title="Import")
    qtbot.waitUntil(task.done, timeout=10_000)
    outcome = task.result()
    assert outcome.status == "failed"
    assert panel.status == "failed"
    assert "row 7" in panel.message_label.text()
    assert panel.message_label.text().startswith("Failed:")
    assert panel.count_label.text() == "1 of 3"


def test_programming_error_points_to_the_log(qtbot, qloop):
    panel = RunPanel()
    qtbot.addWidget(panel)

    def buggy(progress, cancel):
        return {}["missing"]

    task = start_step(panel, buggy, title="Buggy")
    qtbot.waitUntil(task.done, timeout=10_000)
    assert task.result().status == "failed"
    text = panel.message_label.text()
    assert "KeyError" in text and "log file" in text


def test_coroutine_step_runs_on_the_loop(qtbot, qloop):
    panel = RunPanel()
    qtbot.addWidget(panel)
    threads = []

    async def asking(progress, cancel):
        progress.start("Asking the model", total=5)
        for _ in range(5):
            cancel.raise_if_cancelled()
            threads.append(threading.current_thread())
            await asyncio.sleep(0.001)
            progress.advance(1)
        return "ok"

    task = start_step(panel, asking, title="LLM step")
    qtbot.waitUntil(task.done, timeout=10_000)
    assert task.result().result == "ok"
    assert set(threads) == {threading.main_thread()}
    assert panel.count_label.text() == "5 of 5"


def test_coroutine_step_can_be_cancelled(qtbot, qloop):
    panel = RunPanel()
    qtbot.addWidget(panel)

    async def slow(progress, cancel):
        progress.start("Debating", total=1000)
        for _ in range(1000):
            cancel.raise_if_cancelled()
            await asyncio.sleep(0.005)
            progress.advance(1)

    task = start_step(panel, slow, title="Debate")
    qtbot.waitUntil(lambda: panel.state is not None and panel.state.done >= 3, timeout=10_000)
    panel.request_cancel()
    qtbot.waitUntil(task.done, timeout=10_000)
    assert task.result().status == "stopped"
    assert panel.message_label.text() == STOPPED_TEXT


def test_run_step_awaited_from_a_coroutine(qtbot, qloop):
    panel = RunPanel()
    qtbot.addWidget(panel)

    async def wizard():
        outcome = await run_step(panel, partial(count_to, 10), title="Inside a wizard")
        return outcome.result

    task = asyncio.ensure_future(wizard())
    qtbot.waitUntil(task.done, timeout=10_000)
    assert task.result() == 10


def test_progress_from_a_thread_is_coalesced_and_arrives_on_gui_thread(qtbot, qapp):
    adapter = QtProgress()
    received = []
    adapter.changed.connect(lambda state: received.append((state, threading.current_thread())))

    def work():
        adapter.progress.start("Embedding", total=5000)
        for _ in range(5000):
            adapter.progress.advance(1)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: bool(received) and received[-1][0].done == 5000, timeout=5000)
    assert all(thread is threading.main_thread() for _, thread in received)
    assert len(received) < 5000  # bursts were coalesced


def test_format_elapsed():
    assert format_elapsed(0) == "0:00"
    assert format_elapsed(75) == "1:15"
    assert format_elapsed(3725) == "1:02:05"


def test_cancel_stops_a_long_query_of_the_project(qtbot, qloop, tmp_path):
    """Issue 30: Cancel reaches the project (``on_cancel=project.interrupt``, as the wizards
    pass it), so a step stuck in a long query of the project file stops too."""
    from core.project import Project

    panel = RunPanel()
    qtbot.addWidget(panel)
    project = Project.create(tmp_path / "p.evaldesk")
    started = threading.Event()

    def long_query(progress, cancel):
        progress.start("Reading the project")
        with project._reading() as conn:
            started.set()
            conn.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                         "SELECT max(x) FROM c").fetchall()

    try:
        task = start_step(panel, long_query, title="Query", on_cancel=project.interrupt)
        qtbot.waitUntil(started.is_set, timeout=10_000)
        time.sleep(0.2)
        qtbot.mouseClick(panel.cancel_button, __import__("PySide6.QtCore").QtCore.Qt.LeftButton)
        qtbot.waitUntil(task.done, timeout=20_000)
        assert task.result().status == "stopped"
        assert project.list_runs() == []  # the project is still usable
    finally:
        project.close()
