"""The notice before texts first leave this computer (a reusable function; the wizards call
it before a run)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWidget

from core.project import Project
from core.settings import ModelProfile, bundled_profile
from desktop.cloud_notice import SEND_BUTTON, confirm_cloud_use

OPENAI = ModelProfile(name="Work OpenAI", model="openai/gpt-4o-mini")


@pytest.fixture
def parent(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    widget.show()
    return widget


@pytest.fixture
def project(tmp_path):
    opened = Project.create(tmp_path / "p.evaldesk")
    yield opened
    opened.close()


def _click(box, text):
    button = next(b for b in box.buttons() if b.text() == text)
    button.click()


def test_local_models_run_at_once_without_a_notice(parent, project):
    ran = []
    local = ModelProfile(name="ollama", model="ollama_chat/llama3.1",
                         api_bases=["http://127.0.0.1:11434"])
    for profile in (bundled_profile(), local):
        assert confirm_cloud_use(parent, project, profile, lambda: ran.append(1)) is None
    assert ran == [1, 1]


def test_the_notice_names_the_service_and_cancel_does_not_run(qtbot, parent, project):
    ran = []
    box = confirm_cloud_use(parent, project, OPENAI, lambda: ran.append(1))
    assert box is not None and box.isVisible()
    assert "OpenAI" in box.text() and "Work OpenAI" in box.text()
    _click(box, "Cancel")
    qtbot.waitUntil(lambda: not box.isVisible())
    assert ran == []
    # asked again next time: nothing was remembered
    again = confirm_cloud_use(parent, project, OPENAI, lambda: ran.append(1))
    assert again is not None
    _click(again, SEND_BUTTON)
    assert ran == [1]


def test_dont_ask_again_is_kept_in_the_project(qtbot, parent, project):
    ran = []
    box = confirm_cloud_use(parent, project, OPENAI, lambda: ran.append("first"), who="J. S.")
    box.checkBox().setChecked(True)
    _click(box, SEND_BUTTON)
    assert ran == ["first"]
    assert confirm_cloud_use(parent, project, OPENAI, lambda: ran.append("second")) is None
    assert ran == ["first", "second"]
    other = ModelProfile(name="Claude", model="anthropic/claude-sonnet-4-5")
    box = confirm_cloud_use(parent, project, other, lambda: ran.append("third"))
    assert box is not None and "Anthropic" in box.text()
    _click(box, "Cancel")


def test_without_a_project_the_answer_cannot_be_kept(parent):
    ran = []
    box = confirm_cloud_use(parent, None, OPENAI, lambda: ran.append(1))
    assert not box.checkBox().isEnabled()
    _click(box, SEND_BUTTON)
    assert ran == [1]
