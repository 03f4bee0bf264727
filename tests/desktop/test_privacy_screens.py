"""The screens of de-identification: the review page (a sample of the project's texts with every
replacement highlighted, names lists typed or imported, words added and false hits kept with
who and when), the cloud notice saying whether it is on, and the line above the MAJ-Eval and
InteractEval wizards' steps with the switch and the way to the review page."""

from __future__ import annotations

import pandas as pd
import pytest
from PySide6.QtWidgets import QWidget

from core.deidentify import project as dp
from core.project import Project
from core.settings import ModelProfile, bundled_profile
from desktop.cloud_notice import confirm_cloud_use
from desktop.privacy import SAMPLE_SIZE, PrivacyDialog, open_privacy, sample_of

OPENAI = ModelProfile(name="Work OpenAI", model="openai/gpt-4o-mini")


def _answers(n: int) -> pd.DataFrame:
    """``n`` answers shaped like a class's: a student column, texts naming people, e-mails."""
    first = ["Maria", "Jake", "Tom", "Amy", "Eli", "Dana"]
    last = ["Lopez", "Miller", "Berg", "Lee", "Stone", "Ray"]
    rows = []
    for i in range(n):
        who = f"{first[i % 6]} {last[(i // 6) % 6]}"
        rows.append({"id": str(i + 1), "answer": (
            f"In my essay I argue that foxes eat mice. Dr. Sarah Chen told our class on "
            f"4 March 2021 that food webs matter; write to sarah.chen@lincoln.example.org "
            f"(answer {i + 1}, by {who} of Lincoln High). Like Mr. Darcy, the fox is proud."
        )})
    return pd.DataFrame(rows)


@pytest.fixture
def project(tmp_path):
    opened = Project.create(tmp_path / "p.evaldesk")
    table = tmp_path / "items.csv"
    _answers(30).to_csv(table, index=False)
    opened.add_input("majeval_items", "items.csv", table.read_bytes())
    yield opened
    opened.close()


@pytest.fixture
def parent(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    widget.show()
    return widget


def _row_of(dialog: PrivacyDialog, value: str) -> int:
    for row in range(dialog.table.rowCount()):
        if dialog.table.item(row, 0).text() == value:
            return row
    return -1


def test_the_sample_is_spread_over_the_texts():
    assert sample_of(list(range(10))) == list(range(10))
    picked = sample_of(list(range(300)))
    assert len(picked) == SAMPLE_SIZE and picked[0] == 0 and picked[-1] == 299
    assert picked == sorted(set(picked))


def test_review_page_highlights_adds_keeps_and_saves_with_who(qtbot, parent, project, tmp_path):
    dialog = open_privacy(parent, project, "Ana")
    assert dialog.isVisible() and dialog.switch.isChecked()  # a new project: on
    assert dialog.pick.count() == 30
    html = dialog.browser.toHtml()
    # a name after a title, the date and the e-mail are highlighted with their placeholders
    for value in ("Sarah Chen", "4 March 2021", "sarah.chen@lincoln.example.org"):
        assert _row_of(dialog, value) >= 0, value
    assert "[PERSON 1]" in html and "[EMAIL 1]" in html and "[DATE 1]" in html
    # the student's name is not known yet: not replaced
    assert _row_of(dialog, "Maria Lopez") == -1

    # names pasted: the student is found at once (after the short pause)
    dialog.students.setPlainText("Maria Lopez\nJake Lopez")
    qtbot.waitUntil(lambda: _row_of(dialog, "Maria Lopez") >= 0, timeout=3000)
    row = _row_of(dialog, "Maria Lopez")
    assert dialog.table.item(row, 1).text() == "[STUDENT 1]"

    # a word added: replaced too, listed with who
    dialog.new_word.setText("Lincoln High")
    dialog.add_typed()
    assert _row_of(dialog, "Lincoln High") >= 0
    assert "Lincoln High  (by Ana, " in dialog.added.item(0).text()
    # a false hit: a character of a novel after a title is not a person to hide
    dialog.table.setCurrentCell(_row_of(dialog, "Darcy"), 0)
    dialog.keep_chosen()
    assert _row_of(dialog, "Darcy") == -1 and "Mr. Darcy" in dialog.browser.toPlainText()
    assert dialog.kept.item(0).text().startswith("Darcy  (by Ana, ")

    # an imported names list (a text file with a part of other people)
    names = tmp_path / "names.txt"
    names.write_text("Tom Berg\nPeople:\nDana Ray\n", encoding="utf-8")
    dialog.ask_names_file = lambda: str(names)
    dialog.import_names()
    assert dialog.students.toPlainText().splitlines() == ["Maria Lopez", "Jake Lopez", "Tom Berg"]
    assert dialog.people.toPlainText().splitlines() == ["Dana Ray"]

    # nothing is kept until Save; then all of it, with who and when
    assert dp.load_choices(project).students == []
    dialog.save_button.click()
    assert not dialog.isVisible()
    kept = dp.load_choices(project)
    assert kept.enabled is True
    assert kept.students == ["Maria Lopez", "Jake Lopez", "Tom Berg"]
    assert kept.people == ["Dana Ray"]
    assert [(a.value, a.who) for a in kept.added] == [("Lincoln High", "Ana")]
    assert [(k.value, k.who) for k in kept.kept] == [("Darcy", "Ana")]
    assert kept.added[0].at and kept.kept[0].at
    # the project's own de-identifier now does what the page showed
    sent = dp.deidentifier_for(project).deidentify(
        "Maria Lopez of Lincoln High met Dr. Sarah Chen and read about Mr. Darcy.").text
    assert "Maria" not in sent and "Lincoln" not in sent and "Chen" not in sent
    assert "Mr. Darcy" in sent


def test_cancel_keeps_nothing_and_switch_off_is_kept(qtbot, parent, project):
    dialog = open_privacy(parent, project, "Ana")
    dialog.new_word.setText("Lincoln High")
    dialog.add_typed()
    dialog.reject()
    assert dp.load_choices(project).added == []
    dialog = open_privacy(parent, project, "Ben")
    dialog.switch.setChecked(False)
    assert "off" in dialog.summary.text()
    dialog.save()
    assert dp.load_choices(project).enabled is False


def test_300_texts_give_a_sample(qtbot, parent, tmp_path):
    opened = Project.create(tmp_path / "big.evaldesk")
    try:
        table = tmp_path / "items.csv"
        _answers(300).to_csv(table, index=False)
        opened.add_input("majeval_items", "items.csv", table.read_bytes())
        dialog = open_privacy(parent, opened, "Ana")
        assert dialog.pick.count() == SAMPLE_SIZE
        assert dialog.tabs.tabText(0) == f"Sample of the texts ({SAMPLE_SIZE})"
        dialog.pick.setCurrentIndex(SAMPLE_SIZE - 1)
        assert "answer 300," in dialog.browser.toPlainText()
        dialog.reject()
    finally:
        opened.close()


def test_the_cloud_notice_says_whether_names_are_replaced(qtbot, parent, project):
    box = confirm_cloud_use(parent, project, OPENAI, lambda: None)
    assert "De-identification is on" in box.text()
    box.reject()
    dp.set_switch(project, False, "Ana")
    box = confirm_cloud_use(parent, project, OPENAI, lambda: None)
    assert "De-identification is off" in box.text()
    assert "Replace names before sending" in box.text()
    box.reject()


def _wizard_line(qtbot, window, tmp_path, opener):
    window.settings.user_name = "Ana"
    window.settings.upsert_profile(OPENAI)
    window.settings.default_profile = OPENAI.name
    wiz = opener(window)
    line = wiz.privacy_line
    assert line is not None and line.isVisible()
    return wiz, line


@pytest.mark.parametrize("method", ["majeval", "interacteval"])
def test_the_wizards_say_it_above_every_step_with_the_switch(qtbot, window, tmp_path, method):
    if method == "majeval":
        from desktop.majeval import open_majeval_wizard as opener
    else:
        from desktop.interacteval import open_interacteval_wizard as opener
    if method == "interacteval":
        window.settings.user_name = "Ana"
        window.settings.upsert_profile(OPENAI)
        window.settings.default_profile = OPENAI.name
        wiz = opener(window)
        wiz.choices.builder = wiz.choices.scorer = OPENAI.name
        wiz.update_nav()
        line = wiz.privacy_line
    else:
        wiz, line = _wizard_line(qtbot, window, tmp_path, opener)
    assert line.isVisible()
    assert "OpenAI" in line.label.text() and "De-identification is on" in line.label.text()
    assert line.switch.isChecked()
    for key in wiz.keys:   # above every step
        wiz.show_page(key) if wiz.pages[key].reachable() else None
        assert line.isVisible()
    line.switch.setChecked(False)
    assert dp.load_choices(window.project).enabled is False
    assert "De-identification is off" in line.label.text()
    dialog = line.open_review()
    assert dialog.isVisible() and not dialog.switch.isChecked()
    dialog.switch.setChecked(True)
    dialog.save()
    assert line.switch.isChecked() and "is on" in line.label.text()


def test_a_model_on_this_computer_needs_nothing_replaced(qtbot, window):
    from desktop.majeval import open_majeval_wizard

    window.settings.upsert_profile(bundled_profile())
    window.settings.default_profile = bundled_profile().name
    wiz = open_majeval_wizard(window)
    assert "runs on this computer" in wiz.privacy_line.label.text()


def test_the_settings_menu_opens_the_projects_choices(qtbot, window):
    from desktop.majeval import open_majeval_wizard

    window.settings.user_name = "Ben"
    window.settings.upsert_profile(OPENAI)
    window.settings.default_profile = OPENAI.name
    wiz = open_majeval_wizard(window)
    assert "Names and identifiers" in window.privacy_action.text()
    window.privacy_action.trigger()
    dialog = window.findChild(PrivacyDialog)
    assert dialog is not None and dialog.isVisible()
    dialog.switch.setChecked(False)
    dialog.save()
    assert dp.load_choices(window.project).enabled is False
    assert not wiz.privacy_line.switch.isChecked()
    assert "De-identification is off" in wiz.privacy_line.label.text()


@pytest.mark.parametrize("tick", [True, False])
def test_the_wizard_sends_no_listed_name_once_the_review_page_says_so(qtbot, window, tmp_path,
                                                                      tick):
    """The MAJ-Eval wizard's Find stakeholders against a fake server on 127.0.0.1 that records
    every request: with the names pasted on the review page and "Also for models on this
    computer" ticked there, no listed name and no pattern identifier is sent and the personas
    show the real names; without the tick (a model on this computer) they are sent as written,
    so the test can fail."""
    from core.majeval.session.personas import load_personas
    from desktop.majeval import open_majeval_wizard
    from tests.core.cli.deidentify_routes_support import (
        NAMES,
        PATTERNS,
        STUDY,
        found_in,
        majeval_reply,
    )
    from tests.core.deidentify.recording_server import recording_server
    from tests.desktop.majeval_support import click, wait_step

    study = tmp_path / "study.md"
    study.write_text(STUDY, encoding="utf-8")
    with recording_server(majeval_reply) as server:
        profile = ModelProfile(name="Fake server", model="openai/fake-model",
                               api_bases=[server.api_base], max_retries=0, max_concurrency=2)
        window.settings.user_name = "Ana"
        window.settings.upsert_profile(profile)
        window.settings.default_profile = profile.name
        wiz = open_majeval_wizard(window)
        wiz.pages["task"].task_edit.setPlainText(
            "Judge QA pairs for reading stories with children aged 3 to 6.")
        wiz.pages["task"].save_task()
        wiz.show_page("documents")
        wiz.pages["documents"].add_documents([study])
        assert wait_step(qtbot, wiz, "documents") == "finished"
        assert "runs on this computer" in wiz.privacy_line.label.text()
        dialog = wiz.privacy_line.open_review()
        dialog.students.setPlainText("Maria Lopez\nJake Miller")
        dialog.people.setPlainText("Tom Berg")
        dialog.local_too.setChecked(tick)
        dialog.save()
        assert ("also for models on this computer" in wiz.privacy_line.label.text()) == tick
        wiz.show_page("extraction")
        click(qtbot, wiz.pages["extraction"].extract_button)
        assert wait_step(qtbot, wiz, "extraction") == "finished", \
            wiz.pages["extraction"].extract_panel.message_label.text()
        sent = server.sent_text()
        calls = len(server.requests)
    assert calls >= 3
    if tick:
        assert found_in(sent, NAMES) == [] and found_in(sent, PATTERNS) == []
        assert "[STUDENT 1]" in sent and "[PERSON 1]" in sent
    else:
        assert {"Maria Lopez", "Sarah Chen", "Tom Berg"} <= set(found_in(sent, NAMES))
        assert "sarah.chen@lincoln.example.org" in found_in(sent, PATTERNS)
    written = "\n".join(p.model_dump_json() for p in load_personas(window.project))
    assert "[STUDENT" not in written and "[PERSON" not in written and "[EMAIL" not in written
    if tick:  # the model spoke of [STUDENT 1]; the persona shows her name
        assert "Knows Maria Lopez's family." in written
        assert "Maria Lopez's mother said" in written  # the evidence as the document has it


@pytest.mark.parametrize("tick", [True, False])
def test_the_interacteval_think_aloud_follows_the_review_page(qtbot, window, tick):
    """InteractEval's think-aloud, from its wizard: words added on the review page (with "also
    for models on this computer", the scripted model being here) are never in a prompt; left
    unticked, they are (so the test can fail)."""
    from core.llm import ScriptedLLM
    from desktop.interacteval import open_interacteval_wizard
    from tests.desktop.interacteval_support import USER, click, scripted_reply, wait_step
    from tests.desktop.interacteval_wizard_support import load_sample

    llm = ScriptedLLM(scripted_reply, name="ie-privacy")
    try:
        window.settings.user_name = USER
        window.settings.upsert_profile(llm.profile(name="Scripted A"))
        window.settings.default_profile = "Scripted A"
        wiz = open_interacteval_wizard(window)
        load_sample(qtbot, wiz)
        click(qtbot, wiz.next_button)
        click(qtbot, wiz.next_button)
        assert wiz.page == "think_aloud" and wiz.privacy_line.isVisible()
        dimension = wiz.dim_combo.currentText()
        texts = [s.text for s in wiz.choices.chosen_samples(dimension)]
        words = [" ".join(t.split()[:3]) for t in texts]  # the first words of each sample
        dialog = wiz.privacy_line.open_review()
        for value in words:
            dialog.new_word.setText(value)
            dialog.add_typed()
        dialog.local_too.setChecked(tick)
        dialog.save()
        click(qtbot, wiz.pages["think_aloud"].think_button)
        assert wait_step(qtbot, wiz, "think_aloud") == "finished"
        prompts = "\n".join(llm.prompts)
    finally:
        llm.close()
    assert prompts
    if tick:
        assert [w for w in words if w in prompts] == [] and "[OTHER 1]" in prompts
    else:
        assert words[0] in prompts and "[OTHER" not in prompts
