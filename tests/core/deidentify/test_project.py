"""De-identification in a project: the choices kept with who and when, the switch's default,
the names the project already holds (read from what the methods keep, through their own
session functions here so that a change of what they keep shows), and the one table."""

from __future__ import annotations

import pandas as pd
import pytest

from core.deidentify import project as dp
from core.project import Project
from core.settings import ModelProfile

OPENAI = ModelProfile(name="Work OpenAI", model="openai/gpt-4o-mini")
LOCAL = ModelProfile(name="ollama", model="ollama_chat/llama3.1",
                     api_bases=["http://127.0.0.1:11434"])


@pytest.fixture
def project(tmp_path):
    opened = Project.create(tmp_path / "p.evaldesk")
    yield opened
    if not opened.closed:
        opened.close()


def test_choices_are_kept_with_who_and_when_and_read_back(tmp_path, project):
    assert dp.load_choices(project) == dp.DeidentifyChoices()
    assert dp.set_names(project, "Ana Ruiz", students=["Maria Lopez", " maria  lopez", "Tom Berg"],
                        people=["Dr Sarah Chen"])
    assert dp.add_value(project, "Lincoln High School", "Ana Ruiz")
    assert dp.keep_value(project, "Darcy", "Ben Ode")
    assert dp.set_switch(project, False, "Ben Ode", keep_year=True)
    assert not dp.set_switch(project, False, "Ben Ode")       # nothing changed: no edit
    project.close()
    with Project.open(tmp_path / "p.evaldesk") as again:
        choices = dp.load_choices(again)
        assert choices.students == ["Maria Lopez", "Tom Berg"]
        assert choices.people == ["Dr Sarah Chen"]
        assert [(a.value, a.kind, a.who) for a in choices.added] == [
            ("Lincoln High School", "OTHER", "Ana Ruiz")]
        assert [(k.value, k.who) for k in choices.kept] == [("Darcy", "Ben Ode")]
        assert choices.added[0].at and choices.kept[0].at
        assert choices.enabled is False and choices.keep_year
        edits = again.list_edits(kind=dp.KIND)
        assert [e.who for e in edits] == ["Ana Ruiz", "Ana Ruiz", "Ben Ode", "Ben Ode"]
        assert all(e.at for e in edits)
        # a false hit added back as a word to replace leaves the false hits
        dp.add_value(again, "darcy", "Ana Ruiz")
        assert dp.load_choices(again).kept == []


def test_the_switch_is_on_by_default_for_a_new_project_off_for_one_that_sent_texts_before(
        tmp_path, project):
    assert dp.switch_on(project) and dp.why(project, OPENAI) == "on"
    assert dp.why(project, LOCAL) == "this_computer"
    dp.set_switch(project, True, "Ana", local_too=True)   # a local proxy that passes texts on
    assert dp.why(project, LOCAL) == "on"
    assert dp.why(None, OPENAI) == "no_project"
    # a project of an older EvalDesk: its calls have no de-identification field
    old = Project.create(tmp_path / "old.evaldesk")
    old.llm_cache_put("k1", model="openai/gpt-4o-mini", api_base=None,
                      request={"messages": [{"role": "user", "content": "Maria Lopez"}]},
                      response={"content": "{}"})
    assert not dp.switch_on(old) and dp.why(old, OPENAI) == "off"
    dp.set_switch(old, True, "Ana")
    assert dp.why(old, OPENAI) == "on"
    old.close()


def test_known_names_come_from_what_the_methods_keep(tmp_path, project):
    """The AQER worker column, MAJ-Eval persona names that read as names, the authors of
    InteractEval think-aloud notes and the raters of Check the judge, after the user's lists;
    read without the methods' code."""
    from core.aqer.model import AqerChoices
    from core.aqer.session import choices as aqer
    from core.interacteval.model import Attribute
    from core.interacteval.session import choices as ie
    from core.judge_check import Rating, save_rating
    from core.majeval import Persona
    from core.majeval.session import personas as mj

    answers = tmp_path / "answers.xlsx"
    pd.DataFrame({"Question": ["q1", "q1", "q2"], "Student": ["Maria Lopez", "Tom Berg", "Maria Lopez"],
                  "Answer": ["Foxes eat mice.", "Mice.", "Red."]}).to_excel(answers, index=False)
    setup = aqer.store_answers_file(project, AqerChoices(), answers)
    aqer.save_choices(project, setup.model_copy(update={"columns": setup.columns.model_copy(
        update={"question_col": "Question", "worker_col": "Student", "response_col": "Answer"})}))
    mj.replace_personas(project, [
        Persona(id="Parents/Dana Ray", group="Parents", name="Dana Ray, a mother of two"),
        Persona(id="Parents/Parent", group="Parents", name="Anxious parent"),
        Persona(id="Teachers/Ms Amy Lee", group="Teachers", name="Ms Amy Lee")], "Ana")
    state = ie.InteractEvalChoices(notes={"Coherence": [
        Attribute(text="Check the flow", source="Anna Berg", source_kind="person"),
        Attribute(text="Check pronouns", source="GPT-4o", source_kind="model")]})
    ie.save_choices(project, state)
    save_rating(project, "majeval", Rating("item 1", "Jo Park", {"Overall quality": 4}))
    dp.set_names(project, "Ana", students=["Sam Hill"], people=["Dr Sarah Chen"])

    names = dp.known_names(project)
    assert names.students == ["Sam Hill", "Maria Lopez", "Tom Berg"]
    assert names.people == ["Dr Sarah Chen", "Dana Ray", "Ms Amy Lee", "Anna Berg", "Jo Park"]
    assert names.sources[dp.SOURCE_WORKERS] == ["Maria Lopez", "Tom Berg"]
    assert names.sources[dp.SOURCE_PERSONAS] == ["Dana Ray", "Ms Amy Lee"]
    assert names.sources[dp.SOURCE_ASSESSORS] == ["Anna Berg"]
    assert names.sources[dp.SOURCE_RATERS] == ["Jo Park"]
    # and the project's de-identifier replaces them all
    out = dp.deidentifier_for(project).deidentify(
        "Maria, Tom, Sam, Dana Ray, Ms Lee, Anna Berg, Jo Park and Dr. Chen met a parent.")
    assert out.text == ("[STUDENT 2], [STUDENT 3], [STUDENT 1], [PERSON 2], Ms [PERSON 3], "
                        "[PERSON 4], [PERSON 5] and Dr. [PERSON 1] met a parent.")


def test_a_method_can_register_a_source_of_names(project):
    dp.register_names("test source", lambda p: [("Kim Lau", "STUDENT"), ("Lee Ho", "PERSON")])
    try:
        names = dp.known_names(project)
        assert "Kim Lau" in names.students and "Lee Ho" in names.people
        assert names.sources["test source"] == ["Kim Lau", "Lee Ho"]
    finally:
        dp._SOURCES.pop("test source")


def test_a_names_file_has_students_then_other_people():
    students, people = dp.names_of_file(
        "Name\nMaria Lopez\nLopez, Juan\tx\n\nTom\tBerg\nPeople:\nDr Sarah Chen; Mrs Lopez\n"
        "Students:\nSam Hill\n")
    assert students == ["Maria Lopez", "Lopez, Juan x", "Tom Berg", "Sam Hill"]
    assert people == ["Dr Sarah Chen", "Mrs Lopez"]


def test_the_table_is_kept_and_shared_and_a_damaged_one_stops_everything(tmp_path, project):
    deid = dp.deidentifier_for(project)
    assert deid is dp.deidentifier_for(project)          # nothing changed: the same one
    deid.deidentify("Write to maria@example.org")
    dp.save_mapping(project)
    dp.add_value(project, "Lincoln High", "Ana")          # choices changed: made anew,
    again = dp.deidentifier_for(project)                  # over the same table
    assert again is not deid and again.mapping is deid.mapping
    assert again.deidentify("Lincoln High, maria@example.org").text == "[OTHER 1], [EMAIL 1]"
    dp.save_mapping(project)
    project.close()
    with Project.open(tmp_path / "p.evaldesk") as reopened:
        table = dp.load_mapping(reopened)
        assert [(e.kind, e.number, e.value) for e in table] == [
            ("EMAIL", 1, "maria@example.org"), ("OTHER", 1, "Lincoln High")]
        reopened.put_artefact(dp.KIND, dp.MAPPING_KEY, {"format": "evaldesk.deidentify.mapping",
                                                        "version": 99, "entries": []})
    with Project.open(tmp_path / "p.evaldesk") as damaged, \
            pytest.raises(dp.DeidentifyUnavailable, match="newer EvalDesk"):
        dp.deidentifier_for(damaged)


def test_the_projects_texts_for_the_review_sample(tmp_path, project):
    from core.majeval.session import choices as mj

    state = mj.load_choices(project)
    state.task = "Judge answers for year 9 about foxes and mice."
    mj.save_choices(project, state)
    table = tmp_path / "items.csv"
    pd.DataFrame({"id": ["1", "2"], "answer": ["Maria Lopez wrote that foxes eat mice.",
                                              "Tom said so"]}).to_csv(table, index=False)
    project.add_input("majeval_items", "items.csv", table.read_bytes())
    texts = {t.text: t.where for t in dp.project_texts(project)}
    assert texts["Judge answers for year 9 about foxes and mice."] == "MAJ-Eval items and task"
    assert "Maria Lopez wrote that foxes eat mice." not in texts     # the file: on request
    with_inputs = dp.project_texts(project, inputs=True)
    assert ("items.csv, row 2, column “answer”", "Maria Lopez wrote that foxes eat mice.") in [
        (t.where, t.text) for t in with_inputs]
