"""The home screen explains the three methods; buttons say when a wizard is not there yet."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox

from desktop import methods
from desktop.home import COMING_SOON
from desktop.recent import ExistsRole, PathRole, RecentProjectsModel
from tests.desktop.conftest import visible_message_boxes


@pytest.fixture
def no_wizards(monkeypatch):
    """Hide wizards registered by the method packages: these tests are about the shell."""
    monkeypatch.setattr(methods, "_wizards", {})


def _texts(widget) -> str:
    return "\n".join(label.text() for label in widget.findChildren(QLabel))


def test_title_and_three_method_cards(window):
    assert window.windowTitle().startswith("EvalDesk")
    assert set(window.home.cards) == {"aqer", "majeval", "interacteval"}
    for key, card in window.home.cards.items():
        info = methods.METHODS[key]
        text = _texts(card)
        assert info.name in text
        for heading in ("What it does", "Use it when", "What you bring"):
            assert heading in text
        assert info.what_it_does in text and info.you_bring in text
    assert "no answer key" in _texts(window.home.cards["aqer"])
    assert "stakeholders" in _texts(window.home.cards["majeval"])
    assert "checklist" in _texts(window.home.cards["interacteval"])


def test_without_a_wizard_the_button_explains_what_is_coming(qtbot, no_wizards, window):
    window.home.refresh()
    card = window.home.cards["majeval"]
    assert card.button.text() == COMING_SOON
    pages_before = window.stack.count()
    qtbot.mouseClick(card.button, Qt.MouseButton.LeftButton)
    boxes = visible_message_boxes(window)
    assert len(boxes) == 1
    box = boxes[0]
    assert "coming in the next release" in box.text()
    info = methods.METHODS["majeval"]
    assert info.what_it_does in box.informativeText()
    assert info.you_bring in box.informativeText()
    assert box.isModal() or box.windowModality() != Qt.WindowModality.NonModal
    # no empty page was opened
    assert window.stack.count() == pages_before
    assert window.stack.currentWidget() is window.home
    box.close()


def test_a_registered_wizard_is_opened(qtbot, no_wizards, window):
    opened = []
    methods.register_wizard("aqer", opened.append)
    window.home.refresh()
    card = window.home.cards["aqer"]
    assert card.button.text() == "Start AQER"
    qtbot.mouseClick(card.button, Qt.MouseButton.LeftButton)
    assert opened == [window]
    assert not visible_message_boxes(window)
    methods.unregister_wizard("aqer")
    window.home.refresh()
    assert window.home.cards["aqer"].button.text() == COMING_SOON


def test_register_unknown_method_is_refused():
    with pytest.raises(KeyError):
        methods.register_wizard("geval", lambda w: None)


def test_recent_projects_model(qtmodeltester, tmp_path):
    present = tmp_path / "study.evaldesk"
    present.write_bytes(b"x")
    missing = tmp_path / "gone.evaldesk"
    model = RecentProjectsModel([str(present), str(missing)])
    qtmodeltester.check(model)
    assert model.rowCount() == 2
    assert model.index(0, 0).data().startswith("study")
    assert "not found" not in model.index(0, 0).data()
    assert "gone (not found)" in model.index(1, 0).data()
    assert model.index(1, 0).data(Qt.ItemDataRole.ForegroundRole) is not None  # greyed
    assert model.index(0, 0).data(Qt.ItemDataRole.ForegroundRole) is None
    assert model.index(1, 0).data(ExistsRole) is False
    assert model.index(1, 0).data(PathRole) == str(missing)
    changed = []
    model.paths_changed.connect(changed.append)
    assert model.remove_missing() == 1
    assert model.paths() == [str(present)]
    assert changed == [[str(present)]]
    qtmodeltester.check(model)


def test_missing_recent_project_is_shown_and_removable(qtbot, window, tmp_path, store):
    missing = tmp_path / "moved-away.evaldesk"
    window.settings.recent_projects = [str(missing)]
    window.recent.set_paths(window.settings.recent_projects)
    home = window.home
    assert home.recent_view.isVisibleTo(window) and not home.empty_label.isVisibleTo(window)
    home.recent_view.setCurrentIndex(window.recent.index(0, 0))
    assert not home.open_selected_button.isEnabled()  # cannot open a missing file
    assert home.remove_button.isEnabled()
    # double-clicking a missing entry explains instead of failing silently
    window.open_project(str(missing))
    boxes = visible_message_boxes(window)
    assert boxes and "moved-away.evaldesk" in boxes[0].text()
    assert "not found" in boxes[0].text()
    boxes[0].close()
    home.recent_view.setCurrentIndex(window.recent.index(0, 0))
    qtbot.mouseClick(home.remove_button, Qt.MouseButton.LeftButton)
    assert window.recent.rowCount() == 0
    assert store.load().recent_projects == []
    assert home.empty_label.isVisibleTo(window)


def test_coming_soon_message_is_not_modal_exec(qtbot, no_wizards, window, monkeypatch):
    """The message is opened with open(); QMessageBox.exec must never be called."""

    def forbidden(*args, **kwargs):
        raise AssertionError("QMessageBox.exec called")

    monkeypatch.setattr(QMessageBox, "exec", forbidden)
    box = window.start_method("interacteval")
    assert box is not None and box.isVisible()
    box.close()
