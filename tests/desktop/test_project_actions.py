"""File menu: New, Save (As), Open, Recent, and plain messages for files that cannot be opened."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QMessageBox

from core.project import Project
from core.settings import settings_path
from tests.desktop.conftest import visible_message_boxes


def _saved_settings() -> dict:
    return json.loads(settings_path().read_text(encoding="utf-8"))


def test_new_then_save_asks_for_a_name(qtbot, window, tmp_path, monkeypatch):
    window.new_action.trigger()
    assert window.project is not None and window.project.is_temporary
    assert window.windowTitle() == "EvalDesk — Untitled project"
    target = tmp_path / "Reading quiz"
    asked = []
    monkeypatch.setattr(window, "ask_save_path", lambda: asked.append(1) or str(target))
    window.save_action.trigger()  # Save on an untitled project = Save As
    assert asked == [1]
    saved = tmp_path / "Reading quiz.evaldesk"
    assert saved.is_file()
    assert window.project.path == saved and not window.project.is_temporary
    assert window.windowTitle() == "EvalDesk — Reading quiz"
    assert _saved_settings()["recent_projects"][0] == str(saved.resolve())
    assert window.recent.paths()[0] == str(saved.resolve())
    # Save on a saved project: nothing to ask, everything is already on disk
    window.save_action.trigger()
    assert asked == [1]
    assert window.statusBar().currentMessage() == "All changes are saved automatically."


def test_save_as_cancelled_keeps_the_untitled_project(window, monkeypatch):
    window.new_project()
    monkeypatch.setattr(window, "ask_save_path", lambda: None)
    assert window.save_project_as() is False
    assert window.project.is_temporary


def test_open_and_recent(qtbot, window, tmp_path, monkeypatch):
    path = tmp_path / "Clinic summaries.evaldesk"
    Project.create(path, method="majeval", title="Clinic").close()
    monkeypatch.setattr(window, "ask_open_path", lambda: str(path))
    window.open_action.trigger()
    assert window.project is not None and window.project.path == path.resolve()
    assert window.windowTitle() == "EvalDesk — Clinic summaries"
    assert _saved_settings()["recent_projects"] == [str(path.resolve())]
    window.close_project()
    assert window.project is None and window.windowTitle() == "EvalDesk"
    # the recent menu lists it and opens it
    window._fill_recent_menu()
    actions = [a for a in window.recent_menu.actions() if a.text() == path.name]
    assert len(actions) == 1 and actions[0].isEnabled()
    actions[0].trigger()
    assert window.project is not None and window.project.path == path.resolve()


def test_recent_menu_greys_missing_files(window, tmp_path):
    window.settings.recent_projects = [str(tmp_path / "lost.evaldesk")]
    window.recent.set_paths(window.settings.recent_projects)
    window._fill_recent_menu()
    texts = {a.text(): a.isEnabled() for a in window.recent_menu.actions() if a.text()}
    assert texts["lost.evaldesk (not found)"] is False
    clear = window.recent_menu.actions()[-1]
    assert clear.isEnabled()
    clear.trigger()
    assert window.recent.paths() == []
    assert _saved_settings()["recent_projects"] == []


def test_damaged_project_shows_a_message_and_is_left_unchanged(qtbot, window, tmp_path):
    path = tmp_path / "broken.evaldesk"
    Project.create(path).close()
    data = bytearray(path.read_bytes())
    data[100:4000] = b"\x00garbage" * ((4000 - 100) // 8) + b"\x00" * ((4000 - 100) % 8)
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    assert window.open_project(path) is False
    assert window.project is None
    boxes = visible_message_boxes(window)
    assert len(boxes) == 1
    box = boxes[0]
    assert box.icon() == QMessageBox.Icon.Warning
    assert "broken.evaldesk" in box.windowTitle() + box.text()
    assert path.read_bytes() == before
    box.close()


def test_not_a_project_file(window, tmp_path):
    path = tmp_path / "notes.evaldesk"
    path.write_text("just some text", encoding="utf-8")
    assert window.open_project(path) is False
    box = visible_message_boxes(window)[0]
    assert "notes.evaldesk" in box.windowTitle() + box.text()
    assert path.read_text(encoding="utf-8") == "just some text"
    box.close()


def test_newer_version_project(window, tmp_path):
    import sqlite3

    path = tmp_path / "future.evaldesk"
    Project.create(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    assert window.open_project(path) is False
    box = visible_message_boxes(window)[0]
    assert "newer" in box.text().lower()
    assert path.read_bytes() == before
    box.close()


def test_locked_project_offers_to_open_anyway(qtbot, window, tmp_path, monkeypatch):
    from core import project as project_module

    path = tmp_path / "shared.evaldesk"
    Project.create(path).close()
    owner = {"pid": 1, "host": "office-pc", "user": "colleague", "since": "today"}
    real_open = Project.open.__func__

    def fake_open(cls, target, *, read_only=False, break_lock=False):
        if not break_lock:
            raise project_module.ProjectLocked(
                f"{target} is open in EvalDesk on office-pc (colleague).", owner
            )
        return real_open(cls, target, read_only=read_only, break_lock=break_lock)

    monkeypatch.setattr(Project, "open", classmethod(fake_open))
    assert window.open_project(path) is False
    box = visible_message_boxes(window)[0]
    assert "office-pc" in box.text()
    anyway = next(b for b in box.buttons() if b.text() == "Open anyway")
    anyway.click()
    qtbot.waitUntil(lambda: window.project is not None)
    assert window.project.path == path.resolve()


def test_opening_a_second_project_closes_the_first(window, tmp_path):
    a, b = tmp_path / "a.evaldesk", tmp_path / "b.evaldesk"
    Project.create(a).close()
    Project.create(b).close()
    window.open_project(a)
    first = window.project
    window.open_project(b)
    assert first.closed and window.project.path == b.resolve()
    assert window.recent.paths()[:2] == [str(b.resolve()), str(a.resolve())]


def test_open_project_given_at_start(qtbot, tmp_path, monkeypatch):
    """``run(project_path)`` opens the file once the window shows (via start())."""
    from desktop import app as app_module

    path = tmp_path / "from-the-command-line.evaldesk"
    Project.create(path).close()
    session = app_module.start(path)
    try:
        qtbot.addWidget(session.window)
        qtbot.waitUntil(lambda: session.window.project is not None)
        assert session.window.windowTitle() == "EvalDesk — from-the-command-line"
    finally:
        session.reporter.uninstall()
        session.window.close()
        import asyncio

        session.loop.close()
        asyncio.set_event_loop(None)


def test_results_left_by_a_deleted_run_are_said_when_opening(qtbot, window, tmp_path):
    """Issue 30: runs deleted by another program leave their results behind; opening the
    project says so (they are ignored and no new run takes their place)."""
    import sqlite3

    path = tmp_path / "shared.evaldesk"
    with Project.create(path) as project:
        run_id = project.start_run("interacteval", "score", {"a": 1})
        project.put_result(run_id, "text", "t1", {"score": 4})
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM runs")
    conn.commit()
    conn.close()
    assert window.open_project(path) is True
    boxes = [b for b in visible_message_boxes(window) if "without their run" in b.windowTitle()]
    assert boxes and "1 results whose run is no longer in it" in boxes[0].text()
    assert window.project.start_run("interacteval", "score", {"a": 2}) == run_id + 1
    boxes[0].close()
