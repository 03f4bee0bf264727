"""Unsaved (untitled) projects: listed on the home screen for Open / Discard, and never left
behind silently (closing the window, New, Open ask "Save this project before closing?")."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from core.project import Project
from desktop.first_run import FirstRunDialog
from desktop.recovery import RECOVERY_EXPLAINED, holds_work, unsaved_projects
from tests.desktop.conftest import visible_message_boxes


def _left_behind(title: str = "", method: str = "aqer", input_name: str = "answers.xlsx") -> Path:
    """An untitled project with work, closed as a previous session would have left it."""
    project = Project.create_untitled(method=method, title=title)
    project.add_input("file", input_name, b"some bytes")
    path = project.path
    project.close()
    assert path.is_file()
    return path


def _click(box: QMessageBox, text: str) -> None:
    [button] = [b for b in box.buttons() if b.text() == text]
    button.click()


def _question(window) -> QMessageBox:
    [box] = visible_message_boxes(window)
    assert box.text() == "Save this project before closing?"
    return box


def _untitled_with_work(window) -> Project:
    project = window.new_project(method="aqer")
    project.add_input("file", "scores.csv", b"a,b\n1,2\n")
    return project


# -- the home screen's list -------------------------------------------------------------------
def test_no_section_without_unsaved_projects(window):
    window.home.refresh()
    assert not window.home.unsaved.isVisibleTo(window.home)


def test_home_lists_unsaved_projects_without_changing_them(qtbot, window):
    older = _left_behind(input_name="answers.xlsx")
    newer = _left_behind(title="Reading quiz", method="majeval")
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (older, newer)}
    window.home.refresh()
    section = window.home.unsaved
    assert section.isVisibleTo(window.home)
    assert section.explanation.text() == RECOVERY_EXPLAINED
    assert set(section.paths()) == {older, newer}
    texts = {row.item.path: row.item.name + " | " + row.item.summary() for row in section.rows}
    assert texts[older].startswith("answers.xlsx | AQER · 1 input · last changed ")
    assert texts[newer].startswith("Reading quiz | MAJ-Eval · 1 input")
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (older, newer)}
    assert after == before  # listing never modifies a file
    assert not list(older.parent.glob("*.lock"))


def test_open_makes_it_the_current_project_and_leaves_the_list(qtbot, window):
    path = _left_behind()
    window.home.refresh()
    [row] = window.home.unsaved.rows
    row.open_button.click()
    assert window.project is not None and window.project.path == path
    assert window.project.is_temporary
    assert window.home.unsaved.paths() == []  # open now, so not "from an earlier session"
    assert str(path) not in window.recent.paths()  # no untitled file among recent projects
    # and Save As then gives it a real place
    assert [i.name for i in window.project.list_inputs()] == ["answers.xlsx"]


def test_discard_deletes_only_after_confirmation(qtbot, window):
    path = _left_behind()
    window.home.refresh()
    window.home.unsaved.rows[0].discard_button.click()
    [box] = visible_message_boxes(window)
    assert box.windowModality() == Qt.WindowModality.WindowModal  # open(), not exec()
    _click(box, "Cancel")
    assert path.is_file()
    window.home.unsaved.rows[0].discard_button.click()
    [box] = visible_message_boxes(window)
    _click(box, "Discard")
    assert not path.exists()
    assert not window.home.unsaved.isVisibleTo(window.home)
    assert unsaved_projects() == []


# -- never leave untitled work silently ---------------------------------------------------------
def test_an_empty_untitled_project_closes_without_asking(qtbot, window):
    project = window.new_project()
    assert not holds_work(project)
    assert window.close_project() is None
    assert window.project is None and project.closed
    window.new_project()
    assert window.new_project() is not None  # New over an empty one: no question either
    assert window.close()
    assert visible_message_boxes(window) == []


def test_a_saved_project_closes_without_asking(qtbot, window, tmp_path):
    path = tmp_path / "saved.evaldesk"
    project = Project.create(path)
    project.add_input("file", "x.csv", b"1")
    project.close()
    assert window.open_project(path)
    assert window.close_project() is None and window.project is None


def test_closing_the_window_cancel_keeps_everything(qtbot, window):
    project = _untitled_with_work(window)
    assert window.close() is False
    _click(_question(window), "Cancel")
    qtbot.wait(10)
    assert window.isVisible() and window.project is project and not project.closed


def test_closing_the_window_dont_save_keeps_the_file(qtbot, window):
    project = _untitled_with_work(window)
    path = project.path
    window.close()
    box = _question(window)
    assert "Unsaved projects from earlier sessions" in box.informativeText()
    _click(box, "Don't save")
    qtbot.waitUntil(lambda: not window.isVisible())
    assert project.closed and path.is_file()
    assert [p.path for p in unsaved_projects()] == [path]


def test_closing_the_window_save_saves_under_the_chosen_path(qtbot, window, tmp_path,
                                                            monkeypatch):
    project = _untitled_with_work(window)
    old = project.path
    monkeypatch.setattr(window, "ask_save_path", lambda: str(tmp_path / "Quiz"))
    window.close()
    _click(_question(window), "Save…")
    qtbot.waitUntil(lambda: not window.isVisible())
    saved = tmp_path / "Quiz.evaldesk"
    assert saved.is_file() and not old.exists() and project.closed
    with Project.open(saved, read_only=True) as reopened:
        assert [i.name for i in reopened.list_inputs()] == ["scores.csv"]


def test_save_dialog_cancelled_keeps_the_window_open(qtbot, window, monkeypatch):
    project = _untitled_with_work(window)
    monkeypatch.setattr(window, "ask_save_path", lambda: None)
    window.close()
    _click(_question(window), "Save…")
    qtbot.wait(10)
    assert window.isVisible() and window.project is project and project.is_temporary


@pytest.mark.parametrize("answer", ["Cancel", "Don't save", "Save…"])
def test_new_project_over_untitled_work_asks(qtbot, window, tmp_path, monkeypatch, answer):
    project = _untitled_with_work(window)
    old = project.path
    monkeypatch.setattr(window, "ask_save_path", lambda: str(tmp_path / "Kept.evaldesk"))
    assert window.new_action.trigger() is None and window.project is project
    _click(_question(window), answer)
    if answer == "Cancel":
        assert window.project is project and not project.closed and old.is_file()
        return
    assert project.closed and window.project is not project
    assert window.project.is_temporary and not holds_work(window.project)
    if answer == "Don't save":
        assert old.is_file() and [p.path for p in unsaved_projects()] == [old]
    else:
        assert not old.exists() and (tmp_path / "Kept.evaldesk").is_file()
        assert unsaved_projects() == []


@pytest.mark.parametrize("answer", ["Cancel", "Don't save", "Save…"])
def test_open_project_over_untitled_work_asks(qtbot, window, tmp_path, monkeypatch, answer):
    other = tmp_path / "other.evaldesk"
    Project.create(other).close()
    project = _untitled_with_work(window)
    old = project.path
    monkeypatch.setattr(window, "ask_save_path", lambda: str(tmp_path / "Kept"))
    monkeypatch.setattr(window, "ask_open_path", lambda: str(other))
    window.open_action.trigger()
    assert window.project is project
    _click(_question(window), answer)
    if answer == "Cancel":
        assert window.project is project and not project.closed and old.is_file()
        return
    assert project.closed and window.project.path == other.resolve()
    if answer == "Don't save":
        assert old.is_file() and window.home.unsaved.paths() == [old]
    else:
        assert not old.exists() and (tmp_path / "Kept.evaldesk").is_file()
        assert str((tmp_path / "Kept.evaldesk").resolve()) in window.recent.paths()


def test_close_project_menu_asks_too(qtbot, window):
    project = _untitled_with_work(window)
    window.close_project_action.trigger()
    _click(_question(window), "Don't save")
    assert window.project is None and project.closed and project.path.is_file()
    assert window.home.unsaved.paths() == [project.path]


def test_a_sample_over_untitled_work_asks_first(qtbot, window, monkeypatch):
    from desktop import methods

    opened = []
    monkeypatch.setattr(methods, "_samples", {})
    methods.register_sample("aqer", lambda main_window: opened.append(main_window))
    window.settings.first_run_done = True
    project = _untitled_with_work(window)
    dialog = window.open_welcome()
    dialog.show_page("samples")
    dialog.sample_buttons["aqer"].click()
    assert opened == [] and window.project is project
    _click(_question(window), "Don't save")
    assert opened == [window] and project.closed and project.path.is_file()


# -- the welcome on demand ------------------------------------------------------------------------
def test_help_menu_shows_the_welcome_again_keeping_the_chosen_model(qtbot, window):
    from core.settings import ModelProfile

    window.settings.first_run_done = True
    window.settings.upsert_profile(ModelProfile(name="Work OpenAI", model="openai/gpt-4o-mini"))
    window.settings.default_profile = "Work OpenAI"
    assert window.welcome_action in window.menuBar().actions()[-1].menu().actions()
    window.welcome_action.trigger()
    dialog = window.first_run_dialog
    assert isinstance(dialog, FirstRunDialog) and dialog.isVisible()
    assert dialog.page == "methods"
    assert dialog.chosen_profile() == "Work OpenAI"
    dialog.reject()
    assert window.settings.default_profile == "Work OpenAI"
