"""The wizard shell: steps along the top, one class per page, busy state, steps that end when the
wizard closes."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtWidgets import QPushButton, QVBoxLayout

from desktop.run_panel import RunPanel
from desktop.wizard import WizardPage, WizardShell, open_wizard


class First(WizardPage):
    KEY, TITLE = "first", "First"

    def __init__(self, wizard):
        super().__init__(wizard)
        self.ready = False
        self.left = 0
        self.panel = RunPanel()
        QVBoxLayout(self).addWidget(self.panel)

    def next_state(self):
        return (True, "") if self.ready else (False, "Tick the box to go on.")

    def leave(self):
        self.left += 1


class Second(WizardPage):
    KEY, TITLE = "second", "Second"
    NEXT_TEXT = "Show the end"

    def __init__(self, wizard):
        super().__init__(wizard)
        self.button = QPushButton("Run", self)
        self.asked = 0

    def reachable(self):
        return self.wizard.pages["first"].ready

    def busy_changed(self, busy):
        self.button.setEnabled(not busy)

    def go_next(self):
        self.asked += 1
        return self.asked == 1  # the first press asks a question instead of moving on


class Last(WizardPage):
    KEY, TITLE = "last", "Last"

    def shows_next(self):
        return False

    def reachable(self):
        return self.wizard.pages["first"].ready


class Demo(WizardShell):
    METHOD, OBJECT_NAME = "aqer", "demoWizard"
    PAGE_CLASSES = (First, Second, Last)


def make(window):
    return open_wizard(window, Demo, lambda project: Demo(window, project, session="S"))


def test_navigation_follows_what_each_page_allows(window, qtbot):
    wizard = make(window)
    assert wizard.page == "first" and wizard.session == "S"
    assert window.project.method == "aqer"  # recorded when the method is started
    assert not wizard.next_button.isEnabled()
    assert wizard.nav_message.text() == "Tick the box to go on."
    assert not wizard.back_button.isVisible()
    # unreachable steps along the top are disabled, so they do not look clickable
    assert not wizard.step_buttons["last"].isEnabled()
    wizard.pages["first"].ready = True
    wizard.update_nav()
    assert wizard.next_button.isEnabled() and wizard.step_buttons["last"].isEnabled()
    wizard.next_button.click()
    assert wizard.page == "second" and wizard.pages["first"].left == 1
    assert wizard.next_button.text() == "Show the end"
    wizard.next_button.click()  # handled by the page (a question)
    assert wizard.page == "second"
    wizard.next_button.click()
    assert wizard.page == "last" and not wizard.next_button.isVisible()
    wizard.step_buttons["first"].click()
    assert wizard.page == "first"
    # opening the same method again shows the same wizard
    assert make(window) is wizard


def test_a_running_step_makes_the_wizard_busy_until_it_ends(window, qtbot):
    wizard = make(window)
    wizard.pages["first"].ready = True
    release = threading.Event()
    ended: list[tuple[str, str]] = []
    wizard.step_ended.connect(lambda what, how: ended.append((what, how)))
    outcomes = []

    def step(progress, cancel):
        progress.start("Working", total=1)
        release.wait(5)
        progress.advance(1)
        return 42

    wizard.run_step(wizard.pages["first"].panel, step, title="Counting",
                    on_done=outcomes.append)
    assert wizard.busy == "Counting"
    assert not wizard.next_button.isEnabled() and not wizard.step_buttons["second"].isEnabled()
    assert not wizard.pages["second"].button.isEnabled()
    wizard.show_page("second")
    assert wizard.page == "first" and "Wait for the running step" in wizard.nav_message.text()
    release.set()
    qtbot.waitUntil(lambda: ended == [("Counting", "finished")], timeout=5000)
    assert outcomes[0].result == 42 and wizard.busy == ""
    assert wizard.next_button.isEnabled() and wizard.pages["second"].button.isEnabled()


def test_a_new_project_retires_the_wizard_and_stops_its_step(window, qtbot):
    wizard = make(window)
    started = threading.Event()
    stopped = threading.Event()

    def step(progress, cancel):
        started.set()
        while not cancel.cancelled:
            cancel_wait = threading.Event()
            cancel_wait.wait(0.01)
        stopped.set()
        cancel.raise_if_cancelled()

    wizard.run_step(wizard.pages["first"].panel, step, title="Long")
    qtbot.waitUntil(started.is_set, timeout=5000)
    destroyed = []
    wizard.destroyed.connect(lambda *_: destroyed.append(True))
    window.new_project()
    assert wizard.retired and window.stack.indexOf(wizard) < 0
    assert window.stack.currentWidget() is window.home
    qtbot.waitUntil(stopped.is_set, timeout=5000)
    qtbot.waitUntil(lambda: destroyed == [True], timeout=5000)
    # the next start makes a new wizard for the new project
    again = make(window)
    assert again is not wizard and again.project is window.project


def test_an_interrupted_run_is_said_on_opening_and_hidden_while_a_step_runs(window, qtbot):
    """After a crash or kill the run is still marked running: the wizard says so, how far it
    got, and that starting again resumes; nothing is said for runs that ended."""
    project = window.ensure_project(method="aqer")
    ended = project.start_run("aqer", "embed", {"model": "a"})
    project.finish_run(ended, "finished", "")
    run_id = project.start_run("aqer", "embed", {"model": "b"})
    project.put_result(run_id, "answer", "1", {"v": 1})
    project.put_result(run_id, "answer", "2", {"v": 2})
    project.put_result(run_id, "answer", "3", None, status="failed", error="bad")
    wizard = make(window)
    note = wizard.interrupted_note
    assert not note.isHidden()
    assert "interrupted" in note.text() and "2 units finished and kept" in note.text()
    assert "1 failed" in note.text() and "resumes" in note.text()

    release = threading.Event()
    wizard.run_step(wizard.pages["first"].panel, lambda progress, cancel: release.wait(5),
                    title="Again")
    assert note.isHidden()  # while a step runs the note would be stale
    project.finish_run(run_id, "finished", "")
    release.set()
    qtbot.waitUntil(lambda: wizard.busy == "", timeout=5000)
    assert note.isHidden()  # the run ended: nothing to say any more


def test_no_note_when_every_run_ended(window):
    project = window.ensure_project(method="aqer")
    project.finish_run(project.start_run("aqer", "embed", {}), "cancelled", "stopped")
    assert make(window).interrupted_note.isHidden()


@pytest.mark.parametrize("answer", ["New project", "This project", "Cancel"])
def test_a_second_method_in_a_project_with_work_asks_first(window, qtbot, tmp_path, answer):
    from PySide6.QtWidgets import QMessageBox

    from core.project import Project

    path = tmp_path / "exam.evaldesk"
    with Project.create(path, method="aqer") as project:
        project.put_artefact("note", "n1", {"text": "AQER work"})
    assert window.open_project(path)
    first = window.project
    box = window.start_method("interacteval")
    assert isinstance(box, QMessageBox) and "holds AQER work" in box.text()
    button = next(b for b in box.buttons() if b.text() == answer)
    button.click()
    shown = window.stack.currentWidget()
    if answer == "New project":
        assert first.closed and window.project is not first
        assert window.project.method == "interacteval"
        assert type(shown).__name__ == "InteractEvalWizard"
    elif answer == "This project":
        assert window.project is first and type(shown).__name__ == "InteractEvalWizard"
    else:
        assert window.project is first and type(shown).__name__ != "InteractEvalWizard"
