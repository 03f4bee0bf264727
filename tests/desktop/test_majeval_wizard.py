"""The MAJ-Eval wizard end to end on the sample set (pytest-qt, offscreen), with a scripted
model through the real gateway (core.llm.ScriptedLLM)."""

from __future__ import annotations

import json

import pytest

from core.judge_check import grading_order
from core.majeval.session.choices import load_choices
from core.majeval.session.personas import load_personas
from desktop.majeval import open_majeval_wizard
from tests.desktop.majeval_support import TRUE, USER, click, kind, panel, wait_step
from tests.desktop.majeval_wizard_support import (  # noqa: F401 (fixtures)
    _collect_on_the_gui_thread,
    run_all,
    scripted,
    to_personas,
    use_scripted,
)

RESULT_SHEETS = ["Items", "Group scores", "Agent scores", "Feedback", "Transcripts",
                 "Personas", "Evidence", "Agreement", "Comparison", "Condition scores",
                 "Read me"]


def test_wizard_end_to_end_on_the_sample_set(qtbot, window, scripted, tmp_path):  # noqa: F811
    import pandas as pd

    wiz = open_majeval_wizard(window)
    assert window.stack.currentWidget() is wiz and wiz.page == "task"
    assert not wiz.next_button.isEnabled()  # no task yet
    click(qtbot, wiz.pages["task"].template_buttons["Medical evidence summaries"])
    wiz.pages["task"].save_task()
    assert "medical studies" in load_choices(window.project).task

    # -- the sample set: task, two documents, the items
    click(qtbot, wiz.pages["task"].sample_button)
    assert wait_step(qtbot, wiz, "sample") == "finished"
    project = window.project
    state = load_choices(project)
    assert state.task.startswith("Judge question-and-answer pairs")
    assert state.documents == ["parents_views.md", "teachers_views.md"]
    assert len(state.item_list) == 6

    # -- documents: correct a page's text; stored with who
    click(qtbot, wiz.next_button)
    assert wiz.page == "documents"
    for row in (0, 1, 0, 1):  # looking at documents is not correcting them
        wiz.pages["documents"].doc_list.setCurrentRow(row)
    wiz.pages["documents"].page_list.setCurrentRow(0)
    wiz.pages["documents"].save_page_text()
    assert project.list_edits(kind="majeval.document") == []
    assert "One mother said" in wiz.docs[0].pages[0].text
    wiz.pages["documents"].doc_list.setCurrentRow(1)
    wiz.pages["documents"].page_list.setCurrentRow(0)
    original = wiz.pages["documents"].page_edit.toPlainText()
    assert "Thirty-two teachers" in original
    wiz.pages["documents"].page_edit.setPlainText(original.replace("Thirty-two teachers",
                                                "Thirty-two CORRECTED teachers"))
    wiz.pages["documents"].save_page_text()
    edits = project.list_edits(("majeval.document", "teachers_views.md"))
    assert edits and edits[-1].who == USER and edits[-1].field == "pages.0"
    assert wiz.docs[1].pages[0].edited
    assert "corrected" in wiz.pages["documents"].page_list.item(0).text()

    # -- extraction: live progress, then the persona editor with everything found
    click(qtbot, wiz.next_button)
    assert wiz.page == "extraction"
    click(qtbot, wiz.pages["extraction"].extract_button)
    assert wait_step(qtbot, wiz, "extraction") == "finished"
    extraction = [r for r in scripted.requests if kind(r.messages) == "extract"]
    assert len(extraction) == 2
    assert any("Thirty-two CORRECTED teachers" in r.prompt for r in extraction)  # the correction
    assert "calls" in wiz.pages["extraction"].extract_usage.text() and "tokens" in wiz.pages["extraction"].extract_usage.text()
    assert wiz.page == "personas"
    editor = wiz.editor
    assert editor.groups() == ["Parents and carers", "Teachers"]
    assert len(editor.personas) == 7
    assert all(p.page is not None for p in editor.personas)  # every quote found on its page

    # -- items: columns guessed, human ratings found
    click(qtbot, wiz.next_button)
    assert wiz.page == "items"
    setup = load_choices(project).items
    assert setup.columns == {"content": "qa_pair", "context": "story_section", "id": "id"}
    assert setup.human == ["teacher_rating"]
    assert wiz.pages["items"].items_model.rowCount() == 6
    assert [d.name for d in load_choices(project).dimensions] == ["Overall quality"]

    # -- run: options stored, then every debate
    click(qtbot, wiz.next_button)
    assert wiz.page == "run"
    wiz.pages["run"].rounds_spin.setValue(2)
    assert load_choices(project).settings.rounds == 2
    click(qtbot, wiz.pages["run"].run_button)
    assert wait_step(qtbot, wiz, "run") == "finished"
    assert wait_step(qtbot, wiz, "results") == "finished"
    assert wiz.page == "results"
    statuses = {r["status"] for r in wiz.pages["run"].units_model.rows()}
    assert statuses == {"finished"} and wiz.pages["run"].units_model.rowCount() == 12

    # -- results: scores per group and overall, transcript with the coordinator's reasons
    view = wiz.results
    rows = view.scores_model.rows()
    assert [r["item"] for r in rows] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    truths = list(TRUE.values())
    assert [r["overall|Overall quality"] for r in rows] == [float(t) for t in truths]
    assert rows[0]["Teachers|Overall quality"] == float(truths[0])
    view.show_item("q3", "Teachers")
    transcript = view.transcript_model.rows()
    assert [r["turn"] for r in transcript][:3] == [0, 0, 0]
    debate = [r for r in transcript if r["turn"] != 0]
    assert debate and all(r["reason"] for r in debate)
    assert "agree" in view.feedback.toPlainText()
    assert view.human_model.rowCount() > 0  # teacher ratings: agreement shown
    assert view.heatmap.values and view.heatmap.values[0]
    assert view.alpha_model.rowCount() == 2

    # -- export: the engine's workbook, read back
    target = tmp_path / "results.xlsx"
    wiz.pages["results"].export(target)
    assert wait_step(qtbot, wiz, "export") == "finished"
    book = pd.read_excel(target, sheet_name=None)
    assert list(book) == RESULT_SHEETS
    assert len(book["Items"]) == 6
    readme = " ".join(book["Read me"].astype(str).fillna("").values.ravel())
    assert "Document corrections" in readme and USER in readme
    # the conditions the debates give (full personas after and before the debate), compared
    overall = book["Comparison"][book["Comparison"]["group"] == "All groups (overall score)"]
    assert list(overall["condition"].drop_duplicates()) == [
        "Full personas, after debate", "Full personas, before debate",
        "Text length alone (number of words, the baseline)"]
    assert "Simple roles, after debate; Single judge" in readme  # named as not run


def test_cancel_mid_run_then_resume_repeats_no_finished_debate(qtbot, window, tmp_path):
    from core.llm import ScriptedLLM

    seen: list[str] = []
    wiz_ref: list = []

    def stopping(messages):
        if kind(messages) == "aggregate":
            seen.append("a")
            if len(seen) == 3:  # Cancel pressed while the third group summary comes in
                wiz_ref[0].pages["run"].run_panel.request_cancel()
        return panel(messages)

    llm = ScriptedLLM(stopping, name="mj-cancel")
    try:
        window.settings.user_name = USER
        use_scripted(window, llm, max_concurrency=1)
        wiz = open_majeval_wizard(window)
        wiz_ref.append(wiz)
        to_personas(qtbot, wiz)
        wiz.show_page("run")
        before = llm.calls
        click(qtbot, wiz.pages["run"].run_button)
        assert wait_step(qtbot, wiz, "run") == "stopped"
        finished = [r for r in wiz.pages["run"].units_model.rows() if r["status"] == "finished"]
        assert 1 <= len(finished) < 12
        assert "already finished" in wiz.pages["run"].run_summary.text()
        first = [json.dumps(r.messages) for r in llm.requests[before:]]

        middle = llm.calls
        click(qtbot, wiz.pages["run"].run_button)
        assert wait_step(qtbot, wiz, "run") == "finished"
        again = [json.dumps(r.messages) for r in llm.requests[middle:]]
        assert not set(first) & set(again)  # nothing asked twice
        personas = {p.name: p.group for p in load_personas(window.project)}
        items = {i.id: i.content for i in load_choices(window.project).item_list}
        for unit in finished:
            for r in llm.requests[middle:]:
                system = r.messages[0]["content"]
                named = next((n for n in personas if system.startswith(f"You are {n}.")), None)
                assert not (items[unit["item"]] in system and named is not None
                            and personas[named] == unit["group"])
        assert {r["status"] for r in wiz.pages["run"].units_model.rows()} == {"finished"}
    finally:
        llm.close()


def test_reopened_project_shows_results_without_new_calls(qtbot, window, scripted, tmp_path):  # noqa: F811
    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    run_all(qtbot, wiz)
    path = tmp_path / "study.evaldesk"
    window.ask_save_path = lambda: str(path)
    assert window.save_project_as()
    calls = scripted.calls
    window.close_project()
    assert window.open_project(path)
    wiz2 = open_majeval_wizard(window)
    assert wiz2 is not wiz
    qtbot.waitUntil(lambda: wiz2.page == "results", timeout=20_000)
    assert wiz2.results.scores_model.rowCount() == 6
    assert wiz2.pages["task"].task_edit.toPlainText().startswith("Judge question-and-answer pairs")
    assert len(wiz2.docs) == 2 and len(wiz2.editor.personas) == 7
    assert load_choices(window.project).settings.rounds == 3
    assert scripted.calls == calls  # shown from the project, nothing recomputed
    wiz2.show_page("items")  # the items file is read again only now, in the executor
    qtbot.waitUntil(lambda: wiz2.opened_items is not None, timeout=20_000)
    assert wiz2.pages["items"].column_combos["content"].currentText() == "qa_pair"
    assert wiz2.pages["items"].items_model.rowCount() == 6


def test_documents_show_warnings_and_the_page_limit_can_be_raised(qtbot, window, scripted,  # noqa: F811
                                                                   tmp_path):
    body = "\n\n".join(f"Paragraph {i}. Parents said reading time matters. " * 12
                        for i in range(1, 13))
    doc = tmp_path / "long_study.md"
    doc.write_text(f"# A study\n\n{body}\n\n## References\n\nSmith, J. (2020). A paper.\n",
                   encoding="utf-8")
    wiz = open_majeval_wizard(window)
    wiz.show_page("documents")
    wiz.pages["documents"].max_pages_spin.setValue(1)
    assert load_choices(window.project).max_pages == 1
    wiz.pages["documents"].add_documents([doc])
    assert wait_step(qtbot, wiz, "documents") == "finished"
    assert wiz.docs == [] and wiz.pages["documents"].doc_errors.isVisibleTo(wiz)
    assert "the limit is 1" in wiz.pages["documents"].doc_errors.text() and "long_study.md" in wiz.pages["documents"].doc_errors.text()
    assert not wiz.next_button.isEnabled()
    wiz.pages["documents"].max_pages_spin.setValue(50)
    wiz.pages["documents"].add_documents([doc])
    assert wait_step(qtbot, wiz, "documents") == "finished"
    assert [d.name for d in wiz.docs] == ["long_study.md"] and len(wiz.docs[0].pages) > 1
    # Next opens as soon as the document is read (issue 28, point 13: it stayed off until the
    # page was left and shown again)
    assert wiz.page == "documents" and wiz.next_button.isEnabled()
    assert not wiz.pages["documents"].doc_errors.isVisibleTo(wiz)
    assert wiz.pages["documents"].doc_warnings.isVisibleTo(wiz) and "reference" in wiz.pages["documents"].doc_warnings.text().lower()
    wiz.pages["documents"].remove_current_document()
    assert wiz.docs == [] and load_choices(window.project).documents == []


def test_extraction_that_finds_nobody_fails_with_a_plain_message(qtbot, window):
    from core.llm import ScriptedLLM

    llm = ScriptedLLM(lambda messages: {"stakeholders": []}, name="mj-nobody")
    try:
        use_scripted(window, llm)
        wiz = open_majeval_wizard(window)
        click(qtbot, wiz.pages["task"].sample_button)
        assert wait_step(qtbot, wiz, "sample") == "finished"
        wiz.show_page("extraction")
        click(qtbot, wiz.pages["extraction"].extract_button)
        assert wait_step(qtbot, wiz, "extraction") == "failed"
        message = wiz.pages["extraction"].extract_panel.message_label.text()
        assert "No stakeholder perspectives came back from the model, although the documents " \
            "plainly name people" in message
        assert "try a larger model" in message
        assert wiz.page == "extraction" and not wiz.next_button.isEnabled()
        assert wiz.editor.personas == []
    finally:
        llm.close()


def test_personas_are_flagged_when_the_task_or_documents_change(qtbot, window, scripted):  # noqa: F811
    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    assert wiz.pages["personas"].personas_notice.isHidden()

    wiz.show_page("task")
    task = wiz.pages["task"].task_edit.toPlainText()
    wiz.pages["task"].task_edit.setPlainText(task + " Also judge how kind the answer is.")
    wiz.show_page("personas")
    assert not wiz.pages["personas"].personas_notice.isHidden()
    assert "task description changed" in wiz.pages["personas"].personas_notice.text()
    assert "Find stakeholders again" in wiz.pages["personas"].personas_notice.text()
    wiz.show_page("extraction")
    assert not wiz.pages["extraction"].extract_notice.isHidden()

    wiz.show_page("task")  # back as it was: the personas fit again
    wiz.pages["task"].task_edit.setPlainText(task)
    wiz.show_page("personas")
    assert wiz.pages["personas"].personas_notice.isHidden()

    wiz.show_page("documents")  # a corrected page
    wiz.pages["documents"].doc_list.setCurrentRow(0)
    wiz.pages["documents"].page_list.setCurrentRow(0)
    wiz.pages["documents"].page_edit.setPlainText(wiz.pages["documents"].page_edit.toPlainText() + " One father agreed.")
    wiz.pages["documents"].save_page_text()
    wiz.show_page("personas")
    assert "documents changed" in wiz.pages["personas"].personas_notice.text()

    wiz.show_page("extraction")  # written again: up to date, the notice goes
    click(qtbot, wiz.pages["extraction"].extract_button)
    assert wait_step(qtbot, wiz, "extraction") == "finished"
    assert wiz.page == "personas" and wiz.pages["personas"].personas_notice.isHidden()

    # imported personas were not written from these documents: nothing to flag
    from core.majeval.session.personas import replace_personas

    wiz.show_page("task")
    wiz.pages["task"].task_edit.setPlainText(task + " Shorter answers are better.")
    wiz.show_page("personas")
    assert not wiz.pages["personas"].personas_notice.isHidden()
    replace_personas(window.project, load_personas(window.project), USER)
    wiz.show_page("personas")
    assert wiz.pages["personas"].personas_notice.isHidden()


def test_results_say_which_run_they_show_and_go_out_of_date_when_choices_change(
        qtbot, window, scripted, tmp_path):  # noqa: F811
    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    run_all(qtbot, wiz)
    view = wiz.results
    about = view.about_run.text()
    assert about.startswith("Run of 20")  # the date it finished
    assert "with scripted/mj-wizard · 6 items from items.xlsx" in about
    assert "7 personas in 2 groups" in about and "debate: up to 3 rounds" in about
    assert "scored: Overall quality (1 to 5)" in about and "full personas" in about
    assert view.stale.isHidden() and view.export_button.isEnabled()
    wiz.show_page("run")
    assert "All debates are finished" in wiz.pages["run"].run_summary.text()

    # the simple-roles ablation is another run: nothing of it is finished, results are stale
    wiz.pages["run"].simple_roles_check.setChecked(True)
    assert "All debates are finished" not in wiz.pages["run"].run_summary.text()
    assert wiz.pages["run"].run_button.text() == "Start the debates"
    assert {r["status"] for r in wiz.pages["run"].units_model.rows()} == {"waiting"}
    assert not view.stale.isHidden()
    assert "the simple-roles option changed" in view.stale.text()
    assert not view.export_button.isEnabled()
    target = tmp_path / "stale.xlsx"
    assert wiz.pages["results"].export(target) is None and not target.exists()  # never written as current
    wiz.pages["run"].simple_roles_check.setChecked(False)  # back as it was: current again
    assert view.stale.isHidden() and view.export_button.isEnabled()
    assert "All debates are finished" in wiz.pages["run"].run_summary.text()

    wiz.pages["run"].rounds_spin.setValue(2)
    assert "the debate rounds (3 then, 2 now)" in view.stale.text()
    assert "All debates are finished" not in wiz.pages["run"].run_summary.text()
    wiz.pages["run"].rounds_spin.setValue(3)
    wiz.pages["items"].dims_model.setData(wiz.pages["items"].dims_model.index(0, 1), "How well it suits a 5-year-old.")
    assert "the dimensions changed" in view.stale.text()
    assert "All debates are finished" not in wiz.pages["run"].run_summary.text()
    wiz.pages["items"].dims_model.setData(wiz.pages["items"].dims_model.index(0, 1), load_choices(window.project)
                           .dimensions[0].definition)

    # another model: the results are not the new model's
    from core.llm import ScriptedLLM

    other = ScriptedLLM(panel, name="mj-other")
    try:
        window.settings.upsert_profile(other.profile(name="Other", max_retries=0))
        wiz.fill_profiles()
        wiz.pages["run"].run_profile.setCurrentText("Other")
        assert "the model (scripted/mj-wizard then, scripted/mj-other now)" in view.stale.text()
        assert "All debates are finished" not in wiz.pages["run"].run_summary.text()
    finally:
        other.close()


def test_a_group_of_one_persona_is_flagged_before_the_run(qtbot, window, scripted):  # noqa: F811
    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    editor = wiz.editor
    assert editor.lonely_notice.isHidden()
    teacher = next(p for p in editor.personas if p.group == "Teachers")
    editor.move_persona(teacher.id, "Librarians")
    assert not editor.lonely_notice.isHidden()
    assert "The group Librarians has one persona, so it cannot debate" in \
        editor.lonely_notice.text()
    wiz.show_page("run")
    assert not wiz.pages["run"].lonely_notice.isHidden() and "Librarians" in wiz.pages["run"].lonely_notice.text()
    run_all(qtbot, wiz)
    rows = {r["group"]: r for r in wiz.results.change_model.rows()}
    assert rows["Librarians"]["change"] == "undefined: one agent"
    assert isinstance(rows["Teachers"]["change"], float)
    alphas = {r["group"]: r for r in wiz.results.alpha_model.rows()}
    assert alphas["Librarians"]["before"] == alphas["Librarians"]["after"] == \
        "undefined: one agent"


def test_agreement_shows_before_and_after_and_spearman_with_its_sign(qtbot, window):
    from core.llm import ScriptedLLM

    def contrarian(messages):
        reply = panel(messages)
        if isinstance(reply, dict) and "scores" in reply:  # the opposite of the ratings
            reply["scores"] = {k: 6 - v for k, v in reply["scores"].items()}
        return reply

    llm = ScriptedLLM(contrarian, name="mj-contrarian")
    try:
        use_scripted(window, llm)
        wiz = open_majeval_wizard(window)
        to_personas(qtbot, wiz)
        run_all(qtbot, wiz)
        rows = {r["group"]: r for r in wiz.results.human_model.rows()}
        overall = rows["All groups (overall score)"]
        assert overall["spearman"] < -0.9  # the sign is kept: the opposite order
        assert overall["spearman_before"] < 0  # before the debate too, side by side
        assert [c.title for c in wiz.results.human_model.columns][3:5] == [
            "Spearman before", "Spearman after"]
        assert wiz.results.heatmap.values[-2][0] < -0.9  # the overall row (then the length)
        # the tab opens with the overall score in plain words, disagreement said as such
        headline = wiz.results.human_headline.text()
        assert headline.startswith("The personas' overall score strongly disagrees with")
        assert f"ρ = {overall['spearman']:.2f}" in headline
        # a scatter of the chosen scores against the people's ratings, one dot per item
        view = wiz.results
        run = view.run
        ratings = {i.id: i.human for i in run.item_inputs}
        results = {r.item_id: r for r in run.items}
        choices = [view.scatter_combo.itemData(i) for i in range(view.scatter_combo.count())]
        assert view.scatter_combo.currentData()[0] == "All groups (overall score)"
        assert len(choices) == len(rows) and not view.scatter_panel.isHidden()
        group, dim, human = view.scatter_combo.currentData()
        assert view.scatter.figure is not None
        assert {(p.name, p.score, p.rating) for p in view.scatter.points} == {
            (i, results[i].overall[dim], ratings[i][human]) for i in ratings}
        assert "one dot per item" in view.scatter.title
        assert human in view.scatter.y_label and dim in view.scatter.x_label
        other = next(i for i, c in enumerate(choices) if c[0] != group)
        view.scatter_combo.setCurrentIndex(other)
        chosen = choices[other][0]
        means = {i: next(g.final_mean[dim] for g in results[i].groups if g.group == chosen)
                 for i in ratings}
        assert {(p.name, p.score) for p in view.scatter.points} == set(means.items())
        assert chosen in view.scatter.title
        from tests.desktop.jargon import unexplained_in_tabs

        jargon = unexplained_in_tabs(qtbot, window, view.tabs)  # terms have plain words
        assert not jargon, "\n".join(jargon)
        from tests.desktop.jargon import unexplained_on_pages

        jargon = unexplained_on_pages(qtbot, window, wiz)  # every page, now that all are full
        assert not jargon, "\n".join(jargon)
    finally:
        llm.close()


def test_a_model_that_copies_the_instructions_gets_a_banner_not_results(qtbot, window):
    from core.llm import ScriptedLLM

    def copying(messages):
        if kind(messages) in ("phase1", "final"):
            return {"rationale": "your reasons in at most four sentences",
                    "scores": {"Overall quality": 3}}
        if kind(messages) == "turn":
            return {"message": "what you say to the group in at most four sentences",
                    "no_more_comments": False, "scores": {"Overall quality": 3}}
        return panel(messages)

    llm = ScriptedLLM(copying, name="mj-copying")
    try:
        use_scripted(window, llm)
        wiz = open_majeval_wizard(window)
        to_personas(qtbot, wiz)
        run_all(qtbot, wiz)
        view = wiz.results
        assert not view.alert.isHidden()
        assert view.alert.text().startswith("Most debates (12 of 12) failed because the model "
                                            "repeated the instructions instead of answering")
        assert "12 of 12 debates failed" in view.summary.text()
        assert all(r["overall|Overall quality"] is None for r in view.scores_model.rows())
    finally:
        llm.close()


def test_choices_that_cannot_be_read_are_named_and_kept_aside(qtbot, window, scripted):  # noqa: F811
    """A stored state that no longer fits is never silently replaced: the wizard says which
    step's choices could not be read, and the original stays in the project."""
    from core.majeval.session import CHOICES_KIND

    project = window.ensure_project(method="majeval")
    broken = {"task": "Judge QA pairs.", "page": "items", "max_pages": "many"}
    project.put_artefact(CHOICES_KIND, "state", broken, origin="human")
    wiz = open_majeval_wizard(window)
    assert wiz.page == "task"
    notice = wiz.pages["task"].recovered_notice
    assert notice.isVisibleTo(wiz)
    assert notice.text().startswith("The MAJ-Eval choices (task, documents, items, dimensions "
                                    "and debate options) could not be read")
    assert "is kept in the project" in notice.text()
    kept = project.list_artefacts(CHOICES_KIND + ".unreadable")
    assert [a.payload for a in kept] == [broken]
    wiz.pages["task"].task_edit.setPlainText("Judge QA pairs again.")
    wiz.pages["task"].save_task()  # new choices are saved; the original stays as it was
    assert load_choices(project).task == "Judge QA pairs again."
    assert [a.payload for a in project.list_artefacts(CHOICES_KIND + ".unreadable")] == [broken]


def test_a_new_project_mid_run_stops_the_debates_and_keeps_the_finished_ones(qtbot, window,
                                                                           tmp_path):
    """The wizard of a project that is replaced retires: its running debates stop (those that
    finished are kept in the old project) and no step is left running."""
    from core.llm import ScriptedLLM
    from core.majeval.pipeline import RESULT_KIND

    llm = ScriptedLLM(panel, name="mj-retire", delay_s=0.05)
    try:
        window.settings.user_name = USER
        use_scripted(window, llm, max_concurrency=1)
        wiz = open_majeval_wizard(window)
        to_personas(qtbot, wiz)
        window.ask_save_path = lambda: str(tmp_path / "study.evaldesk")
        assert window.save_project_as()  # a named project: a new one is started without asking
        old = window.project
        wiz.show_page("run")
        click(qtbot, wiz.pages["run"].run_button)
        qtbot.waitUntil(lambda: bool(old.list_runs("majeval"))
                        and bool(old.get_results(old.list_runs("majeval")[-1].id,
                                                 RESULT_KIND)), timeout=60_000)
        window.new_project()
        assert wiz.retired and window.stack.indexOf(wiz) < 0
        qtbot.waitUntil(lambda: not wiz.running, timeout=30_000)
        assert old.closed and window.project is not old
        from core.project import Project

        with Project.open(tmp_path / "study.evaldesk") as again:
            run = again.list_runs("majeval")[-1]
            kept = again.get_results(run.id, RESULT_KIND, status="ok")
            assert 1 <= len(kept) < 12
    finally:
        llm.close()


def test_texts_leave_this_computer_only_after_the_notice(qtbot, window, scripted):  # noqa: F811
    """With a profile that sends texts to a service on the internet, Find stakeholders opens
    the one plain notice and starts nothing until the user agrees; declined, nothing runs."""
    from core.settings import ModelProfile
    from desktop.cloud_notice import SEND_BUTTON

    wiz = open_majeval_wizard(window)
    click(qtbot, wiz.pages["task"].sample_button)
    assert wait_step(qtbot, wiz, "sample") == "finished"
    window.settings.upsert_profile(ModelProfile(name="Cloud", model="openai/gpt-4o-mini"))
    window.settings.default_profile = "Cloud"
    wiz.choices.profile = "Cloud"
    wiz.show_page("extraction")
    assert wiz.pages["extraction"].start_extraction() is None
    box = wiz.cloud_notice
    assert box is not None and box.isVisible()
    assert "OpenAI" in box.text() and not wiz.busy
    box.reject()
    qtbot.waitUntil(lambda: not box.isVisible())
    assert not wiz.busy and scripted.calls == 0  # declined: nothing started, nothing sent
    buttons = [b.text() for b in box.buttons()]
    assert SEND_BUTTON in buttons


def test_check_the_judge_page_grades_the_run_and_keeps_the_ratings(qtbot, window, scripted,  # noqa: F811
                                                                     tmp_path):
    wiz = open_majeval_wizard(window)
    assert not wiz.pages["check"].reachable()
    to_personas(qtbot, wiz)
    run_all(qtbot, wiz)
    wiz.show_page("check")
    panel = wiz.pages["check"].panel
    assert wiz.page == "check" and panel.judge is not None
    assert panel.judge.method == "MAJ-Eval" and len(panel.judge.items) == 6
    order = grading_order(panel.judge, panel.seed)  # a random order, kept in the project
    highest = panel.judge.item(order[0])
    assert panel.current == highest.item_id
    assert panel.rater() == USER
    for combo in panel.score_combos.values():
        combo.setCurrentIndex(combo.findData(4.0))
    assert panel.save_and_next()
    assert panel.current == order[1]
    path = tmp_path / "checked.evaldesk"
    window.ask_save_path = lambda: str(path)
    assert window.save_project_as()
    window.close_project()
    assert window.open_project(path)
    again = open_majeval_wizard(window)
    qtbot.waitUntil(lambda: again.run is not None, timeout=20_000)
    again.show_page("check")
    assert [r.item_id for r in again.pages["check"].panel.ratings] == [highest.item_id]
    page = again.pages["check"]
    # the full debates give two conditions at once: after and before the debate
    assert [name for name, _, _ in page.panel.candidates] == [
        "Full personas, after debate", "Full personas, before debate"]
    assert "No model profile uses other/model" in page.make_judge("full:other/model")
    again.choices.profile = ""
    assert "now scores with full personas" in page.make_judge(f"full:{scripted.model}")
    assert load_choices(window.project).profile == "Scripted"


def test_pick_the_judge_ranks_majeval_conditions_and_makes_one_the_projects_judge(
        qtbot, window, scripted):  # noqa: F811
    """The conditions that scored the rated items (full, before the debate, simple roles) are
    ranked against the person's ratings; making one the project's judge chooses its debate
    options (and shows its stored results), said in plain words."""
    from core.judge_check import rank_judges

    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    run_all(qtbot, wiz)
    full_run = wiz.run.run_id
    wiz.pages["run"].simple_roles_check.setChecked(True)  # the simple-roles condition
    run_all(qtbot, wiz)
    simple_run = wiz.run.run_id
    wiz.pages["run"].simple_roles_check.setChecked(False)
    wiz.choices.run_id = full_run
    wiz.save()
    wiz.show_page("check")
    page = wiz.pages["check"]
    panel = page.panel
    assert panel.judge is not None and panel.judge.source.startswith(f"project run {full_run}")
    assert [name for name, _, _ in panel.candidates] == [
        "Full personas, after debate", "Full personas, before debate",
        "Simple roles, after debate"]
    assert [key.split(":")[0] for _, key, _ in panel.candidates] == ["full", "pre", "simple"]
    simple = panel.candidates[2][2]
    while panel.current is not None:  # grade like the simple roles scored
        value = simple.item(panel.current).scores["Overall quality"]
        combo = panel.score_combos["Overall quality"]
        combo.setCurrentIndex(combo.findData(float(round(value))))
        assert panel.save_and_next()
    panel.tabs.setCurrentIndex(2)
    qtbot.waitUntil(lambda: not panel.computing and len(panel.ranks) == 3, timeout=60_000)
    expected = rank_judges(panel.candidates, panel.ratings)
    assert [r.name for r in panel.ranks] == [r.name for r in expected]
    assert [panel.rank_model.value(r, "judge") for r in range(3)] == [r.name for r in expected]
    # the simple roles' own scores, rounded, are the ratings: no other condition is closer
    assert panel.ranks[0].value == pytest.approx(max(r.value for r in expected))
    # make the simple roles the judge: its options, its stored debates shown, said in words
    done = page.make_judge(f"simple:{scripted.model}")
    assert "one-sentence roles with the debate" in done and "already in the project" in done
    saved = load_choices(window.project)
    assert saved.settings.simple_roles and not saved.settings.no_debate
    assert saved.run_id == simple_run
    assert wiz.pages["run"].simple_roles_check.isChecked()
    qtbot.waitUntil(lambda: wiz.run is not None and wiz.run.run_id == simple_run, timeout=20_000)
    assert panel.judge.source.startswith(f"project run {simple_run}")
    # before the debate: the next run skips the debate; it says what to do
    done = page.make_judge(f"pre:{scripted.model}")
    assert "without the debate" in done and "Run page" in done
    assert load_choices(window.project).settings.no_debate
    # the one-click button makes the best-ranked one the judge and says what it did
    page.make_judge(f"full:{scripted.model}")
    qtbot.waitUntil(lambda: not panel.computing and len(panel.ranks) == 3, timeout=60_000)
    best = panel.ranks[0]
    click(qtbot, panel.use_button)
    assert panel.done_label.text().startswith("The project now scores with")
    assert load_choices(window.project).settings.simple_roles == best.key.startswith("simple")


def test_reference_list_kept_on_request_sections_named_and_a_page_reverted(qtbot, window,
                                                                            scripted, tmp_path):  # noqa: F811
    """The notice says how to keep the reference list and the page offers it; a .md file is
    shown in sections; a corrected section can be put back as extracted."""
    body = "\n\n".join(f"Paragraph {i}. Parents said reading time matters. " * 12
                       for i in range(1, 6))
    doc = tmp_path / "study.md"
    doc.write_text(f"# A study\n\n{body}\n\n## References\n\nSmith, J. (2020). A paper.\n",
                   encoding="utf-8")
    wiz = open_majeval_wizard(window)
    wiz.show_page("documents")
    page = wiz.pages["documents"]
    page.add_documents([doc])
    assert wait_step(qtbot, wiz, "documents") == "finished"
    assert "Keep the reference list" in page.doc_warnings.text()
    assert not any("Smith, J." in p.text for p in wiz.docs[0].pages)
    assert page.parts_label.text() == "<b>Sections</b>"
    assert page.page_list.item(0).text().startswith("Section 1")
    assert "section" in page.doc_list.item(0).text()

    page.page_list.setCurrentRow(0)
    original = page.page_edit.toPlainText()
    assert not page.revert_page_button.isEnabled()
    page.page_edit.setPlainText("A corrected first section.")
    page.save_page_text()
    assert page.revert_page_button.isEnabled()
    page.revert_current_page()
    assert wiz.docs[0].pages[0].text == original
    assert page.page_edit.toPlainText() == original

    page.remove_current_document()
    page.keep_references_box.setChecked(True)
    assert load_choices(window.project).keep_references
    page.add_documents([doc])
    assert wait_step(qtbot, wiz, "documents") == "finished"
    assert any("Smith, J." in p.text for p in wiz.docs[0].pages)


def test_results_still_being_computed_when_the_project_closes_are_dropped_quietly(
        qtbot, window, scripted, monkeypatch, tmp_path):  # noqa: F811
    """Showing a run computes its statistics in an executor; when the project is closed in
    the meantime (New project, Open), the wizard left and nothing is shown or read from the
    closed project (it raised 'The project ... is closed' in the event loop)."""
    import threading

    wiz = open_majeval_wizard(window)
    to_personas(qtbot, wiz)
    run_all(qtbot, wiz)
    window.ask_save_path = lambda: str(tmp_path / "study.evaldesk")
    assert window.save_project_as()  # a named project: a new one is started without asking
    release, started = threading.Event(), threading.Event()
    agreement = wiz.session.agreement

    def slow(run):
        started.set()
        release.wait(20)
        return agreement(run)

    monkeypatch.setattr(wiz.session, "agreement", slow)
    task = wiz.show_run(wiz.run)
    qtbot.waitUntil(started.is_set, timeout=10_000)
    project = window.project
    window.new_project()
    assert project.closed and wiz.retired
    release.set()
    qtbot.waitUntil(task.done, timeout=20_000)
    assert task.exception() is None
