"""Issue 29 in the wizard: "Find stakeholders" on a two-page study that quotes a participant
(``"I want questions that make her wonder ..."``), with a backslash and a tab, with the bundled
model. The in-process engine used to crash with a segmentation fault here, taking the window
down; the engine process takes the quoted evidence sentences as they are, and the window finds
stakeholders whose evidence is quoted word for word. Personas the tiny model fills with single
words are refused with the reason (issue 28), not shown as personas."""

from __future__ import annotations

import pytest

from core.majeval.session.choices import load_choices
from core.majeval.session.documents import stored_perspectives
from desktop.majeval import open_majeval_wizard
from tests.core.majeval.test_quoted_study import TASK, study
from tests.desktop.majeval_support import click, wait_step
from tests.desktop.majeval_wizard_support import _collect_on_the_gui_thread  # noqa: F401

pytestmark = pytest.mark.slow


@pytest.mark.timeout(1800)  # a CPU model reads, groups and writes personas
def test_find_stakeholders_in_a_study_that_quotes_its_participants(qtbot, window, bundled_model,
                                                                   tmp_path):
    from core.documents import load_document, sentences_of

    pdf, _ = study(tmp_path)
    wiz = open_majeval_wizard(window)
    wiz.pages["task"].task_edit.setPlainText(TASK)
    wiz.pages["task"].save_task()
    assert load_choices(window.project).task == TASK
    wiz.show_page("documents")
    wiz.pages["documents"].add_documents([pdf])
    assert wait_step(qtbot, wiz, "documents") == "finished"
    assert '"I want questions that make her wonder ..."' in wiz.docs[0].pages[0].text
    wiz.show_page("extraction")
    click(qtbot, wiz.pages["extraction"].extract_button)
    status = wait_step(qtbot, wiz, "extraction", timeout=900_000)
    message = wiz.pages["extraction"].extract_panel.message_label.text()
    assert window.isVisible()  # the window did not go down with the engine
    sentences = {s for page in load_document(pdf).pages for s in sentences_of(page.text)}
    found = stored_perspectives(window.project, pdf.name)
    if found is not None and found.stakeholders:  # what was read is quoted word for word
        read = [p.evidence for s in found.stakeholders for p in s.perspectives if p.evidence]
        assert read and all(e in sentences for e in read), read
    else:  # the reading refused the tiny model's answer (it varies between runs): said
        assert status == "failed" and "larger model" in message, message
    if status == "failed":  # the tiny model's single-word personas are refused, and why is said
        assert "larger model" in message, message
        assert wiz.page == "extraction" and not wiz.editor.personas
        return
    assert status == "finished", message
    assert wiz.page == "personas"
    personas = wiz.editor.personas
    assert personas, message
    evidence = [p.evidence for p in personas if p.evidence]
    assert evidence and all(e in sentences for e in evidence), evidence
