"""The Build page never replaces a person's edits silently (issue 28, point 6): "Run all
remaining steps" after the components were edited and went out of date asks first; "Keep my
edits" leaves them and runs the later steps on them; "Replace them" makes them again, keeps
the edited version and offers to restore it."""

from __future__ import annotations

from core.interacteval.session.stages import get_stage, replaced_version
from desktop.interacteval import open_interacteval_wizard
from tests.desktop.interacteval_support import USER, click, wait_step
from tests.desktop.interacteval_wizard_support import load_sample, scripted  # noqa: F401

EDITED = ["Everyday words EDITED", "Order of ideas", "Examples"]


def _add_note(qtbot, wiz, text):
    page = wiz.pages["think_aloud"]
    wiz.show_page("think_aloud")
    page.author_edit.setText("Ben")
    page.notes_edit.setPlainText(text)
    click(qtbot, page.add_notes_button)
    wiz.show_page("build")


def _answer(qtbot, page, label):
    qtbot.waitUntil(lambda: page.edits_box is not None and page.edits_box.isVisible(),
                    timeout=5_000)
    box = page.edits_box
    assert "Components (edited by" in box.text(), box.text()
    button = next(b for b in box.buttons() if b.text() == label)
    click(qtbot, button)


def test_run_all_remaining_asks_before_replacing_edited_components(qtbot, window, scripted,  # noqa: F811
                                                                   tmp_path):
    wiz = open_interacteval_wizard(window)
    load_sample(qtbot, wiz)
    project = window.project
    wiz.show_page("build")
    page = wiz.pages["build"]
    click(qtbot, page.build_run_buttons["components"])
    assert wait_step(qtbot, wiz, "build") == "finished"
    page.components_edit.setPlainText("\n".join(EDITED))
    page.flush_edits()
    _add_note(qtbot, wiz, "Each paragraph has one idea.")  # the components are out of date
    assert page.remaining_steps()[0] == "components"

    click(qtbot, page.run_rest_button)
    _answer(qtbot, page, "Keep my edits")
    assert wait_step(qtbot, wiz, "build") == "finished", page.build_panel.message_label.text()
    kept = get_stage(project, "Clarity", "components")
    assert kept.value == EDITED and kept.edited
    clusters = get_stage(project, "Clarity", "clusters").value
    assert [c.component for c in clusters.clusters] == EDITED  # the later steps used them
    assert page.remaining_steps() == []

    _add_note(qtbot, wiz, "The ending answers the question.")
    calls = scripted.calls
    click(qtbot, page.run_rest_button)
    _answer(qtbot, page, "Replace them")
    assert wait_step(qtbot, wiz, "build") == "finished", page.build_panel.message_label.text()
    assert scripted.calls > calls
    made = get_stage(project, "Clarity", "components")
    assert made.value == ["Plain words", "Order of ideas"] and not made.edited
    aside = replaced_version(project, "Clarity", "components")
    assert aside["value"] == EDITED and aside["edited_by"] == USER
    page.show_build_step("components")
    assert page.restore_buttons["components"].isVisible()
    assert "was replaced by a new run" in page.build_status["components"].text()
    wiz.resize(1280, 800)
    wiz.grab().save("/tmp/i28b-build-replaced.png")

    click(qtbot, page.restore_buttons["components"])
    back = get_stage(project, "Clarity", "components")
    assert back.value == EDITED and back.edited_by == USER
    assert not page.restore_buttons["components"].isVisible()

    # Cancel runs nothing
    _add_note(qtbot, wiz, "No sentence is left unfinished.")
    calls = scripted.calls
    click(qtbot, page.run_rest_button)
    qtbot.waitUntil(lambda: page.edits_box is not None, timeout=5_000)
    page.edits_box.reject()
    qtbot.wait(50)
    assert scripted.calls == calls and not wiz.busy
