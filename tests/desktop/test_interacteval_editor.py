"""The InteractEval checklist editor and the wizard's table models (pytest-qt, offscreen)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, Qt

from core.interacteval import Attribute, Checklist, ChecklistItem, ScoredSample
from core.interacteval.pipeline import CHECKLIST_ARTEFACT
from core.interacteval.session import InteractEvalSession
from core.interacteval.session.stages import load_checklist, save_checklist
from core.project import Project
from core.settings import Settings
from desktop.interacteval.checklist_editor import ChecklistEditor
from desktop.interacteval.models import ChecklistModel, RowColumn, RowsModel, SamplesModel
from tests.desktop.interacteval_support import click

ANNA = Attribute(text="Sentences follow on.", source="Anna", source_kind="person")
GPT = Attribute(text="No abrupt topic jumps.", source="GPT-4o", source_kind="model")


def checklist() -> Checklist:
    return Checklist(dimension="Coherence", definition="Hangs together.", items=[
        ChecklistItem(component="Flow", key_question="Does it flow?",
                      question="Does each sentence follow from the last?",
                      source_attributes=[ANNA, GPT]),
        ChecklistItem(component="Flow", key_question="Does it flow?",
                      question="Are transitions clear?", source_attributes=[GPT]),
        ChecklistItem(component="Structure", key_question="Is it organised?",
                      question="Is there a clear beginning?", source_attributes=[ANNA]),
        ChecklistItem(component="Structure", key_question="Is it organised?",
                      question="Is there a clear end?"),
    ])


@pytest.fixture
def project(tmp_path):
    p = Project.create(tmp_path / "editor.evaldesk", method="interacteval")
    save_checklist(p, checklist())
    yield p
    if not p.closed:
        p.close()


@pytest.fixture
def editor(qtbot, project):
    widget = ChecklistEditor()
    qtbot.addWidget(widget)
    widget.resize(1000, 600)
    widget.show()
    widget.set_checklist(_session(project), load_checklist(project, "Coherence"), "Bea")
    return widget


def _session(project) -> InteractEvalSession:
    """The session the wizard gives the editor (its changes are kept through it)."""
    return InteractEvalSession.open(project, settings=Settings())


def questions(project) -> list[tuple[str, str, str]]:
    return [(i.component, i.question, i.edited_by)
            for i in load_checklist(project, "Coherence").items]


def test_edit_drag_delete_undo_and_reopen(qtbot, editor, project, tmp_path):
    model = editor.model
    tree = editor.tree
    # components are headings, questions their children
    assert model.rowCount() == 2 and [model.rowCount(model.index(i, 0)) for i in (0, 1)] == [2, 2]
    assert model.index(0, 0).data() == "Flow"
    assert model.question_index(0, 1, 1).data() == "generated"

    # the side panel shows the attributes and whose they are
    editor.select(0, 0)
    assert editor.origin_table.rowCount() == 2
    assert editor.origin_table.item(0, 1).text() == "Anna (person)"
    assert editor.origin_table.item(1, 1).text() == "GPT-4o (model)"
    assert "Does it flow?" in editor.key_label.text()

    # edit a question through the view's editor
    index = model.question_index(0, 1)
    tree.setCurrentIndex(index)
    tree.edit(index)
    from PySide6.QtWidgets import QLineEdit

    line = next(w for w in tree.viewport().findChildren(QLineEdit) if w.isVisible())
    line.setText("Are the transitions between ideas clear?")
    tree.commitData(line)  # what the view does when the editor loses focus or Return
    tree.closePersistentEditor(index)
    assert questions(project)[1] == ("Flow", "Are the transitions between ideas clear?", "Bea")

    # drag "Is there a clear end?" onto the Flow component, first place
    source = model.question_index(1, 1)
    data = model.mimeData([source])
    assert model.canDropMimeData(data, Qt.DropAction.MoveAction, 0, 0, model.index(0, 0))
    model.dropMimeData(data, Qt.DropAction.MoveAction, 0, 0, model.index(0, 0))
    assert questions(project)[0] == ("Flow", "Is there a clear end?", "Bea")
    assert model.rowCount(model.index(1, 0)) == 1

    # reorder with the buttons, then delete one
    editor.select(0, 0)
    click(qtbot, editor.down_button)
    assert [q for _, q, _ in questions(project)][:2] == [
        "Does each sentence follow from the last?", "Is there a clear end?"]
    editor.select(1, 0)
    click(qtbot, editor.delete_button)
    assert "Is there a clear beginning?" not in [q for _, q, _ in questions(project)]

    # undo brings it back, as it was (not marked by anyone)
    click(qtbot, editor.undo_button)
    assert ("Structure", "Is there a clear beginning?", "") in questions(project)
    assert len(questions(project)) == 4

    # add a question under a component, move it to another with "Move to"
    editor.select(1)
    click(qtbot, editor.add_question_button)
    tree.closePersistentEditor(tree.currentIndex())
    added = load_checklist(project, "Coherence").items[-1]
    assert added.component == "Structure" and added.edited_by == "Bea"
    editor.select(1, 1)
    editor.move_combo.setCurrentText("Flow")
    click(qtbot, editor.move_button)
    assert questions(project)[3][0] == "Flow" and questions(project)[3][2] == "Bea"

    # every change is a human edit with who and when; reopening keeps them
    edits = project.list_edits((CHECKLIST_ARTEFACT, "Coherence"))
    assert edits and {e.who for e in edits} == {"Bea"}
    before = questions(project)
    path = project.path
    project.close()
    again = Project.open(path)
    try:
        assert [(i.component, i.question, i.edited_by)
                for i in load_checklist(again, "Coherence").items] == before
        assert again.get_artefact(CHECKLIST_ARTEFACT, "Coherence").edited
    finally:
        again.close()


def test_rename_component_marks_its_questions(qtbot, editor, project):
    model = editor.model
    assert model.setData(model.index(1, 0), "Shape")
    items = load_checklist(project, "Coherence").items
    assert [(i.component, i.edited_by) for i in items[2:]] == [("Shape", "Bea"), ("Shape", "Bea")]
    assert not model.setData(model.index(1, 0), "Flow")  # names stay unique
    # a component with questions cannot be deleted; an empty one can
    editor.select(1)
    click(qtbot, editor.delete_button)
    assert model.rowCount() == 2 and "cannot be deleted" in editor.status_label.text()
    click(qtbot, editor.add_component_button)
    tree = editor.tree
    tree.closePersistentEditor(tree.currentIndex())
    assert model.rowCount() == 3
    click(qtbot, editor.delete_button)
    assert model.rowCount() == 2


def test_import_and_export_excel_from_the_wizard(qtbot, window, tmp_path):
    import pandas as pd

    from desktop.interacteval import open_interacteval_wizard
    from tests.desktop.interacteval_support import wait_step

    window.settings.user_name = "Bea"
    wiz = open_interacteval_wizard(window)
    source = tmp_path / "in.xlsx"
    from core.interacteval import write_checklists

    write_checklists(source, [checklist()])
    problems = wiz.pages["checklist"].import_checklists(source)
    assert problems == []
    assert [d.name for d in wiz.choices.dimensions] == ["Coherence"]
    wiz.show_page("checklist")
    assert wiz.pages["checklist"].editor.model.question_count() == 4
    assert window.project.get_artefact(CHECKLIST_ARTEFACT, "Coherence").origin == "imported"
    wiz.pages["checklist"].editor.model.set_question(0, 0, "Edited in the app?")
    out = tmp_path / "out.xlsx"
    wiz.export_checklists(out)
    assert wait_step(qtbot, wiz, "export") == "finished"
    sheet = pd.read_excel(out, sheet_name="Checklist")
    assert sheet.loc[0, "question"] == "Edited in the app?" and sheet.loc[0, "edited_by"] == "Bea"
    assert "[person: Anna] Sentences follow on." in sheet.loc[0, "source_attributes"]
    # a file without a Checklist sheet is refused with a message naming the sheet
    pd.DataFrame({"a": [1]}).to_excel(tmp_path / "bad.xlsx", sheet_name="One", index=False)
    with pd.ExcelWriter(tmp_path / "bad.xlsx", mode="a") as writer:
        pd.DataFrame({"b": [1]}).to_excel(writer, sheet_name="Two", index=False)
    errors = wiz.pages["checklist"].import_checklists(tmp_path / "bad.xlsx")
    assert errors and "Checklist" in errors[0]
    assert "cannot be used" in wiz.pages["checklist"].checklist_message.text()


# ------------------------------------------------------------------------- model testers
def test_checklist_model_passes_qtmodeltester(qtmodeltester):
    model = ChecklistModel(who="Bea")
    model.set_checklist(checklist())
    qtmodeltester.check(model)
    model.move_question(0, 0, 1, 1)
    model.add_component("Extra")
    model.add_question(2, "New?")
    model.remove_question(0, 0)
    qtmodeltester.check(model)
    assert model.checklist().questions == [
        "Is there a clear beginning?", "Does each sentence follow from the last?",
        "Is there a clear end?", "New?"]
    assert model.rowCount(model.index(0, 0)) == 0  # the emptied component stays until deleted


def test_rows_and_samples_models_pass_qtmodeltester(qtmodeltester):
    rows = RowsModel([RowColumn("component", "Component"),
                      RowColumn("question", "Question", True)])
    rows.set_rows([{"component": "Flow", "question": "Q1?"},
                   {"component": "Flow", "question": "Q2?"}])
    qtmodeltester.check(rows)
    got = []
    rows.edited.connect(lambda r, k: got.append((r, k)))
    assert rows.setData(rows.index(1, 1), "  Changed   question? ")
    assert rows.rows()[1]["question"] == "Changed question?" and got == [(1, "question")]
    assert not rows.setData(rows.index(1, 0), "read-only")
    samples = SamplesModel()
    samples.set_samples([(0, ScoredSample(text="A", score=1)),
                         (3, ScoredSample(text="B", score=5, source="S"))], [3])
    qtmodeltester.check(samples)
    assert samples.setData(samples.index(0, 0), Qt.CheckState.Checked.value,
                           Qt.ItemDataRole.CheckStateRole)
    assert samples.chosen() == [0, 3]
    assert samples.rowCount(QModelIndex()) == 2


def test_undo_survives_a_visit_to_another_page_and_the_summary_follows_edits(qtbot, window,
                                                                            tmp_path):
    from core.interacteval import write_checklists
    from desktop.interacteval import open_interacteval_wizard

    window.settings.user_name = "Bea"
    wiz = open_interacteval_wizard(window)
    source = tmp_path / "in.xlsx"
    write_checklists(source, [checklist()])
    assert wiz.pages["checklist"].import_checklists(source) == []
    wiz.show_page("checklist")
    page = wiz.pages["checklist"]
    editor = page.editor
    assert "4 questions under 2 components" in page.checklist_message.text()
    editor.model.remove_question(0, 0)
    assert "3 questions under 2 components" in page.checklist_message.text()  # kept current
    wiz.show_page("dimensions")
    wiz.show_page("checklist")  # the page refreshes the editor from the project
    assert editor.undo_button.isEnabled()
    assert editor.undo()
    assert load_checklist(window.project, "Coherence").questions == checklist().questions
    assert "4 questions" in page.checklist_message.text()


def test_an_empty_component_survives_reopening(qtbot, editor, project, tmp_path):
    row = editor.model.add_component("Tone")
    assert editor.model.groups[row].name == "Tone" and not editor.model.groups[row].items
    stored = load_checklist(project, "Coherence")
    assert stored.empty_components == ["Tone"]
    assert stored.questions == checklist().questions  # scoring is unchanged
    assert stored.fingerprint() == checklist().fingerprint()
    path = project.path
    project.close()
    again = Project.open(path)
    try:
        editor.set_checklist(_session(again), load_checklist(again, "Coherence"), "Bea")
        assert [g.name for g in editor.model.groups] == ["Flow", "Structure", "Tone"]
    finally:
        again.close()


def test_questions_that_share_a_long_start_show_what_distinguishes_them_first(qtbot, tmp_path):
    """Issue 28, point 7: the built-in model's 18 questions all started with the same 89
    characters (the grounded form quoting a note), so in the editor every row looked the
    same. The rows now show what follows the shared start first; editing shows the whole
    question; ordinary questions are shown as they are."""
    from core.interacteval.grounded import note_question

    notes = [f"{word.capitalize()} is used well." for word in (
        "flow", "vocabulary", "spelling", "tone", "grammar", "evidence", "structure",
        "punctuation", "variety", "precision", "register", "idiom", "clarity", "length",
        "focus", "style", "coherence", "wording")]
    built = Checklist(dimension="Word choice", items=[
        ChecklistItem(component="Words", question=note_question(n)) for n in notes])
    assert len(built.items) == 18
    with Project.create(tmp_path / "p.evaldesk", method="interacteval") as project:
        save_checklist(project, built)
        widget = ChecklistEditor()
        qtbot.addWidget(widget)
        widget.resize(1280, 700)
        widget.show()
        widget.set_checklist(_session(project), load_checklist(project, "Word choice"),
                            "Bea")
        model = widget.model
        shown = [model.data(model.question_index(0, r)) for r in range(18)]
        assert len({s[:40] for s in shown}) == 18  # distinct at a glance
        assert shown[0].startswith("“Flow is used well.”?  — Does the text avoid the flaw")
        assert model.data(model.question_index(0, 0), Qt.ItemDataRole.EditRole) == \
            built.items[0].question
        assert model.data(model.question_index(0, 0), Qt.ItemDataRole.ToolTipRole) == \
            built.items[0].question
        assert widget.shared_label.isVisible()
        assert "All 18 questions start with “Does the text avoid the flaw" in \
            widget.shared_label.text()
        widget.grab().save("/tmp/i28b-editor-shared.png")

        widget.set_checklist(_session(project), checklist(), "Bea")  # ordinary questions: as written
        assert model.data(model.question_index(0, 0)) == "Does each sentence follow from the last?"
        assert not widget.shared_label.isVisible()
