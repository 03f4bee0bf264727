"""The think-aloud page never offers the built-in demo model (issue 28, point 8): it cannot
think aloud (it repeats itself until cut off); with no other model the page says what to do."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.settings import BUNDLED_PROFILE_NAME
from desktop.interacteval import open_interacteval_wizard
from tests.desktop.interacteval_wizard_support import load_sample, scripted  # noqa: F401


def _items(page):
    return {page.assessor_list.item(i).data(Qt.ItemDataRole.UserRole): page.assessor_list.item(i)
            for i in range(page.assessor_list.count())}


def test_only_the_built_in_model_means_notes_only(qtbot, window):
    window.settings.default_profile = BUNDLED_PROFILE_NAME
    assert [p.name for p in window.settings.profiles] == [BUNDLED_PROFILE_NAME]
    wiz = open_interacteval_wizard(window)
    load_sample(qtbot, wiz)
    wiz.choices.assessors = [BUNDLED_PROFILE_NAME]  # as an older project chose it
    wiz.show_page("think_aloud")
    page = wiz.pages["think_aloud"]
    item = _items(page)[BUNDLED_PROFILE_NAME]
    assert not item.flags() & Qt.ItemFlag.ItemIsEnabled
    assert "cannot think aloud" in item.text() and "larger model" in item.toolTip()
    assert wiz.choices.assessors == [] and not page.think_button.isEnabled()
    assert page.no_assessor_note.isVisible()
    assert "write the notes yourself" in page.no_assessor_note.text()
    wiz.resize(1280, 800)
    wiz.grab().save("/tmp/i28b-think-aloud-builtin.png")


def test_another_model_is_ticked_instead_of_the_built_in_one(qtbot, window, scripted):  # noqa: F811
    window.settings.default_profile = BUNDLED_PROFILE_NAME
    wiz = open_interacteval_wizard(window)
    load_sample(qtbot, wiz)
    wiz.show_page("think_aloud")
    page = wiz.pages["think_aloud"]
    items = _items(page)
    assert wiz.choices.assessors == ["Scripted A"]
    assert items["Scripted A"].checkState() == Qt.CheckState.Checked
    assert not items[BUNDLED_PROFILE_NAME].flags() & Qt.ItemFlag.ItemIsEnabled
    assert not page.no_assessor_note.isVisible() and page.think_button.isEnabled()


LONG_FAILURE = (
    "No model could think aloud: Scripted A: The answer of 'scripted/ie-wizard' did not have "
    "the expected form, also after asking again (the JSON was cut off). It began: "
    "“{\"considerations\": [\"keep it clean\", \"keep it clean\", \"keep it clean\", \"keep it "
    "clean\", \"keep it clean\"”. It was cut off while repeating itself: allowing longer "
    "answers would only make it fail later. Choose another (larger) model.")


def test_the_run_panel_is_never_squashed_at_1280_by_800(qtbot, window, scripted):  # noqa: F811
    """Issue 28, point 11: during the think-aloud the progress panel was squashed, Cancel was
    5 px tall and the error was cut off even with the window maximised."""
    from core.runs import CancelToken, ProgressState

    window.resize(1280, 800)
    window.show()
    wiz = open_interacteval_wizard(window)
    load_sample(qtbot, wiz)
    wiz.show_page("think_aloud")
    page = wiz.pages["think_aloud"]
    # an earlier run where one model failed: its failure is listed on the page
    page.failures_label.setText("Scripted B failed: " + LONG_FAILURE)
    page.failures_label.show()
    panel = page.think_panel
    panel.show()
    panel.begin("Think-aloud on Clarity", CancelToken())
    panel.show_state(ProgressState("Think-aloud on Clarity", 0, 2, "Scripted A …"))
    qtbot.waitUntil(lambda: panel.cancel_button.height() >=
                    panel.cancel_button.sizeHint().height(), timeout=2_000)
    window.grab().save("/tmp/i28b-ta-running.png")
    panel.fail("Failed: " + LONG_FAILURE)
    label = panel.message_label
    qtbot.waitUntil(lambda: label.height() >= label.heightForWidth(label.width()),
                    timeout=2_000)
    assert label.visibleRegion().boundingRect().height() >= label.heightForWidth(label.width())
    window.grab().save("/tmp/i28b-ta-failed.png")
