"""The MAJ-Eval persona editor (move, edit, undo, reopen, evidence, import/export) and every
table/tree model of the wizard under qtmodeltester."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt

from core.majeval.session import evidence_span
from core.majeval.session.personas import load_personas
from desktop.majeval import open_majeval_wizard
from desktop.majeval.models import PERSONA_MIME, Col, PersonaTreeModel, RowsModel
from tests.desktop.majeval_support import USER, panel, wait_step
from tests.desktop.majeval_wizard_support import (  # noqa: F401 (fixtures)
    _collect_on_the_gui_thread,
    run_all,
    scripted,
    to_personas,
    use_scripted,
)


def select(editor, persona_id):
    editor.tree.setCurrentIndex(editor.model.persona_index(persona_id))
    assert editor.current_id == persona_id


def test_move_edit_undo_save_reopen(qtbot, window, scripted, tmp_path):  # noqa: F811
    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    editor = wiz.editor
    project = window.project
    grandma = next(p for p in editor.personas if p.group == "Parents and carers"
                   and "grandmother" in p.evidence)

    # drag the persona onto the Teachers group (the model's drop path)
    model = editor.model
    data = model.mimeData([model.persona_index(grandma.id)])
    assert data.hasFormat(PERSONA_MIME)
    assert model.canDropMimeData(data, Qt.DropAction.MoveAction, -1, 0,
                                 model.group_index("Teachers"))
    model.dropMimeData(data, Qt.DropAction.MoveAction, -1, 0, model.group_index("Teachers"))
    moved = editor.persona(grandma.id)
    assert moved.group == "Teachers" and moved.edited
    assert grandma.id in [p.id for p in model.members["Teachers"]]

    # edit a field in the form, as typed
    select(editor, grandma.id)
    editor.attribute_edits["specialty"].setPlainText("Thirty years of bedtime stories.")
    editor.flush()
    assert editor.persona(grandma.id).specialty == "Thirty years of bedtime stories."
    qtbot.keyClicks(editor.name_edit, " Jr")
    editor.name_edit.editingFinished.emit()
    assert editor.persona(grandma.id).name.endswith(" Jr")
    assert "✎" in model.data(model.persona_index(grandma.id))

    # undo the last edit (the name), the specialty stays
    editor.undo()
    assert not editor.persona(grandma.id).name.endswith(" Jr")
    assert editor.persona(grandma.id).specialty == "Thirty years of bedtime stories."

    # rename and merge groups, add and delete, undo the delete
    editor.rename_group("Teachers", "Educators")
    assert "Educators" in editor.groups() and "Teachers" not in editor.groups()
    added = editor.add_persona()
    assert added is not None and editor.persona(added.id).origin == "human"
    select(editor, added.id)
    editor.delete_current()
    assert editor.persona(added.id) is None
    editor.undo()
    assert editor.persona(added.id) is not None
    editor.undo()  # undo the add
    assert editor.persona(added.id) is None
    editor.undo()  # undo the rename
    assert set(editor.groups()) == {"Parents and carers", "Teachers"}

    # split: a persona moved to a new group name starts that group; merge it back
    aisha = next(p for p in editor.personas if p.name == "Aisha Khan")
    select(editor, aisha.id)
    editor.group_combo.setEditText("Feelings-first parents")
    editor.group_combo.lineEdit().returnPressed.emit()
    assert editor.persona(aisha.id).group == "Feelings-first parents"
    assert "Feelings-first parents" in editor.groups()
    assert [p.id for p in editor.model.members["Feelings-first parents"]] == [aisha.id]
    editor.merge_groups("Feelings-first parents", "Parents and carers")
    assert editor.persona(aisha.id).group == "Parents and carers"
    assert "Feelings-first parents" not in editor.groups()

    edits = project.list_edits(kind="majeval.persona")
    assert edits and {e.who for e in edits} == {USER}

    # save, close, reopen: the state is kept and marked as a person's
    path = tmp_path / "edited.evaldesk"
    window.ask_save_path = lambda: str(path)
    assert window.save_project_as()
    window.close_project()
    assert window.open_project(path)
    wiz2 = open_majeval_wizard(window)
    assert wiz2.page == "personas"
    again = wiz2.editor.persona(grandma.id)
    assert again.group == "Teachers" and again.edited
    assert again.specialty == "Thirty years of bedtime stories."
    assert not again.name.endswith(" Jr")
    stored = {p.id: p for p in load_personas(window.project)}
    assert stored[grandma.id].edited
    untouched = [p for k, p in stored.items() if p.group == "Parents and carers"
                 and p.id != aisha.id]
    assert untouched and all(not p.edited for p in untouched)  # only what was changed
    select(wiz2.editor, grandma.id)
    assert USER in wiz2.editor.status_label.text()


def test_evidence_view_opens_on_the_right_page(qtbot, window, scripted):  # noqa: F811
    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    editor = wiz.editor
    persona = next(p for p in editor.personas if "special-education" in p.evidence)
    select(editor, persona.id)
    assert persona.document == "teachers_views.md" and persona.page is not None
    dialog = editor.show_evidence()
    assert dialog is not None and dialog.isVisible()
    assert dialog.page_number == persona.page
    assert dialog.page_combo.currentData() == persona.page
    # a .md file is read in sections: the dialog calls them so, as the Documents page does
    assert dialog.unit_label.text() == "Section:"
    docs_page = wiz.pages["documents"]
    wiz.show_page("documents")
    listed = [docs_page.page_list.item(i).text() for i in range(docs_page.page_list.count())]
    assert f"Section {persona.page}" in [t.split("  ")[0] for t in listed]
    start, end = dialog.highlighted
    shown = dialog.text.toPlainText()[start:end]
    assert shown.startswith("A special-education teacher asked")
    assert dialog.text.textCursor().position() == start
    dialog.close()


def test_evidence_span_finds_the_sentence():
    text = "First sentence here. The children loved the fox story a lot! Last one."
    start, end = evidence_span(text, "the children loved the fox story")
    assert text[start:end] == "The children loved the fox story a lot!"
    assert evidence_span(text, "completely unrelated words elsewhere") is None


def test_personas_export_and_import_round_trip(qtbot, window, scripted, tmp_path):  # noqa: F811
    import pandas as pd

    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    editor = wiz.editor
    target = tmp_path / "personas.xlsx"
    editor.export_to(target)
    qtbot.waitUntil(lambda: target.exists() and editor.file_panel.status == "finished",
                    timeout=20_000)
    frame = pd.read_excel(target, sheet_name="Personas")
    assert len(frame) == 7
    readme = pd.read_excel(target, sheet_name="Read me", header=None, dtype=str).to_string()
    assert "Documents" in readme and "Task" in readme  # what they were made from, as the CLI
    assert frame["Group description"].iloc[0] == "People who read with children: Parents " \
        "and carers."  # the group's description goes along (the simple roles use it)
    assert "Their perspective" in frame.columns  # the editor's words
    frame.loc[0, "Name"] = "Renamed In Excel"
    frame.loc[frame["Group"] == "Teachers", "Group description"] = "Teachers of 4 to 8 year olds."
    frame.to_excel(target, sheet_name="Personas", index=False)
    editor.import_from(target)
    qtbot.waitUntil(lambda: any(p.name == "Renamed In Excel" for p in editor.personas),
                    timeout=20_000)
    assert len(editor.personas) == 7
    assert all(p.origin == "imported" for p in load_personas(window.project))
    from core.majeval.session.personas import group_descriptions

    assert group_descriptions(window.project) == {
        "Parents and carers": "People who read with children: Parents and carers.",
        "Teachers": "Teachers of 4 to 8 year olds."}


def test_every_model_passes_qtmodeltester(qtbot, qtmodeltester, window, scripted):  # noqa: F811
    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    qtmodeltester.check(wiz.editor.model)
    run_all(qtbot, wiz)
    for model in (wiz.pages["items"].items_model, wiz.pages["items"].dims_model, wiz.pages["run"].units_model, wiz.results.scores_model,
                  wiz.results.transcript_model, wiz.results.change_model,
                  wiz.results.change_items_model, wiz.results.alpha_model,
                  wiz.results.human_model):
        assert model.rowCount() > 0, model
        qtmodeltester.check(model)
    empty_tree = PersonaTreeModel()
    qtmodeltester.check(empty_tree)
    editable = RowsModel([Col("a", "A", editable=True), Col("b", "B")])
    editable.set_rows([{"a": "x", "b": 1.5}, {"a": None, "b": None}])
    qtmodeltester.check(editable)
    assert editable.setData(editable.index(0, 0), "y")
    assert not editable.setData(editable.index(0, 1), 2)
    assert editable.data(editable.index(1, 1)) == "—"
    assert not editable.index(0, 0).parent().isValid()
    assert editable.rowCount(editable.index(0, 0)) == 0
    assert empty_tree.index(0, 0, QModelIndex()) == QModelIndex()


def test_failed_debate_is_shown_as_failed(qtbot, window, tmp_path):
    from core.llm import ScriptedError, ScriptedLLM

    def failing(messages):
        if "neutral aggregator" in messages[0]["content"] or "Phase 1." not in \
                str(messages[-1]["content"]):
            return panel(messages)
        if "How many seeds" in messages[0]["content"]:
            return ScriptedError(400, "scripted refusal")
        return panel(messages)

    llm = ScriptedLLM(failing, name="mj-failing")
    try:
        window.settings.user_name = USER
        use_scripted(window, llm)
        wiz = open_majeval_wizard(window)
        to_personas(qtbot, wiz)
        wiz.show_page("run")
        wiz.pages["run"].run_button.click()
        assert wait_step(qtbot, wiz, "run") == "finished"
        assert wait_step(qtbot, wiz, "results") == "finished"
        rows = {r["item"]: r for r in wiz.results.scores_model.rows()}
        assert rows["q4"]["status"] == "failed"
        assert rows["q4"]["overall|Overall quality"] is None
        index = wiz.results.scores_model.index(3, wiz.results.scores_model.columns.index(
            next(c for c in wiz.results.scores_model.columns if c.key.startswith("overall"))))
        assert index.data() == "failed"
        assert rows["q1"]["status"] == "ok"
        assert "failed" in wiz.results.summary.text()
        assert any(r["status"] == "failed" for r in wiz.pages["run"].units_model.rows())
    finally:
        llm.close()


def test_the_editor_keeps_to_the_one_persona_rule(qtbot, window, scripted):  # noqa: F811
    """Emptying a perspective is refused (the stored text stays), and a new persona is marked
    incomplete until it has one, in the words the import and the debate use."""
    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    editor = wiz.editor
    first = editor.personas[0]
    select(editor, first.id)
    editor.attribute_edits["perspective"].setPlainText("   ")
    editor.flush()
    assert "needs a perspective" in editor.message.text()
    assert next(p for p in load_personas(window.project) if p.id == first.id).perspective \
        == first.perspective

    added = editor.add_persona()
    index = editor.model.persona_index(added.id)
    assert "incomplete" in editor.model.data(index)
    assert "needs a perspective" in editor.model.data(index, Qt.ItemDataRole.ToolTipRole)
    select(editor, added.id)
    editor.attribute_edits["perspective"].setPlainText("Reading together every night matters.")
    editor.flush()
    index = editor.model.persona_index(added.id)
    assert "incomplete" not in editor.model.data(index)
