"""The MAJ-Eval session: what is kept in the project, how older projects are read, and what
happens to choices that cannot be read."""

from __future__ import annotations

import hashlib
import json

import pytest

from core.majeval import Item, Stakeholder
from core.majeval import session as st
from core.majeval.pipeline import DOCUMENT_ARTEFACT, PERSPECTIVES_ARTEFACT, unit_key
from core.project.payloads import VERSION_FIELD

from .majeval_support import DOC, extraction_reply, kind, persona

PARENTS = Stakeholder.model_validate({
    "name": "Parents", "characteristics": "Read at home.",
    "perspectives": [{"id": "P1", "stakeholder": "Parents",
                      "perspective": "Questions should be fun and short.",
                      "evidence": "Parents told us that questions should be fun and short."}]})
TEACHERS = Stakeholder.model_validate({
    "name": "Teachers", "characteristics": "",
    "perspectives": [{"id": "P2", "stakeholder": "Teachers",
                      "perspective": "Link the story to the real world.",
                      "evidence": "Teachers want questions that connect the story to real "
                                  "life."}]})


def building(messages):
    """Grouping and personas only: a document read from the project is never sent again."""
    what = kind(messages)
    if what == "extract":
        raise AssertionError("the document was read again")
    if what == "group":
        return {"groups": [{"name": "Parents", "stakeholders": ["Parents"],
                            "perspectives": [[1]]},
                           {"name": "Teachers", "stakeholders": ["Teachers"],
                            "perspectives": [[2]]}]}
    return {"personas": [{"perspective_no": 1, "name": "Sam Ortiz",
                          "perspective": "Questions should stay short and fun."}]}


def _project_with_doc(tmp_path):
    from core.project import Project

    project = Project.create(tmp_path / "p.evaldesk")
    project.put_artefact(DOCUMENT_ARTEFACT, DOC.name, DOC.to_dict(), origin="imported")
    state = st.MajEvalChoices(task="Judge QA pairs.", documents=[DOC.name])
    st.choices.save_choices(project, state)
    return project, state


@pytest.mark.parametrize("old", [
    # what the wizard kept before payloads had versions
    {"fingerprint": "F", "stakeholders": [PARENTS.model_dump(mode="json"),
                                          TEACHERS.model_dump(mode="json")]},
    # what the command line kept (a bare list)
    [PARENTS.model_dump(mode="json"), TEACHERS.model_dump(mode="json")],
], ids=["wizard shape", "command line shape"])
async def test_an_older_project_with_perspectives_in_either_old_shape_still_opens(
        scripted, tmp_path, old):
    project, state = _project_with_doc(tmp_path)
    with project:
        llm, gateway = scripted(building, cache=project)
        project.put_artefact(PERSPECTIVES_ARTEFACT, DOC.name, old, origin="generated")
        # read by this model (a fingerprint without the model is read again: who read it is
        # not known, and the project's cache answers a re-read by the same model)
        state.extracted[DOC.name] = st.documents.extraction_fingerprint(state.task, DOC, gateway.profile)
        st.choices.save_choices(project, state)

        kept = st.documents.stored_perspectives(project, DOC.name)
        assert kept is not None and [s.name for s in kept.stakeholders] == ["Parents",
                                                                             "Teachers"]
        made = await st.personas.create_personas_stored(project, st.choices.load_choices(project), gateway)
        assert made.reused == [DOC.name] and [p.group for p in made.personas] == [
            "Parents", "Teachers"]
        assert not any(kind(r.messages) == "extract" for r in llm.requests)


async def test_perspectives_are_kept_in_one_shape_with_their_fingerprint(scripted, tmp_path):
    project, state = _project_with_doc(tmp_path)
    with project:
        def reply(messages):
            return extraction_reply(messages) if kind(messages) == "extract" else \
                building(messages)

        _llm, gateway = scripted(reply, cache=project, context_window=1500, max_tokens=200)
        await st.personas.create_personas_stored(project, state, gateway)
        payload = project.get_artefact(PERSPECTIVES_ARTEFACT, DOC.name).payload
        assert payload[VERSION_FIELD] == 2
        assert payload["fingerprint"] == st.documents.extraction_fingerprint(state.task, DOC,
                                                                   gateway.profile)
        assert [s["name"] for s in payload["stakeholders"]] == ["Parents", "teachers"]


def test_choices_that_cannot_be_read_are_kept_aside_and_said_so(tmp_path):
    from core.project import Project

    with Project.create(tmp_path / "p.evaldesk") as project:
        broken = {"task": "Judge QA pairs.", "max_pages": "many", "documents": ["a.pdf"]}
        project.put_artefact(st.CHOICES_KIND, "state", broken, origin="human")
        state, problem = st.choices.open_choices(project)
        assert state == st.MajEvalChoices()
        assert problem.startswith("The MAJ-Eval choices (task, documents, items, dimensions "
                                  "and debate options) could not be read: it does not fit "
                                  "(max_pages:")
        assert "is kept in the project" in problem
        kept = project.list_artefacts(st.CHOICES_KIND + ".unreadable")
        assert len(kept) == 1 and kept[0].payload == broken  # the original, as it was
        st.choices.save_choices(project, state)  # saving the fresh choices does not touch it
        assert project.list_artefacts(st.CHOICES_KIND + ".unreadable")[0].payload == broken
        assert st.choices.open_choices(project) == (state, "")


def test_choices_saved_by_a_newer_evaldesk_are_not_replaced(tmp_path):
    from core.project import Project

    with Project.create(tmp_path / "p.evaldesk") as project:
        newer = {VERSION_FIELD: 9, "task": "Judge QA pairs."}
        project.put_artefact(st.CHOICES_KIND, "state", newer, origin="human")
        _state, problem = st.choices.open_choices(project)
        assert "saved by a newer EvalDesk" in problem
        assert project.list_artefacts(st.CHOICES_KIND + ".unreadable")[0].payload == newer


def test_debate_keys_are_those_older_projects_kept():
    """The one keying scheme (core.runs.unit_key) gives the keys kept before it, so an older
    project's finished debates are found again (no migration needed)."""
    from core.majeval.model import personas_fingerprint

    item = Item(id="q1", content="Q: Why? A: Because.", context="A story.")
    members = [persona("Parents", "Dana Ray"), persona("Parents", "Eli Stone")]
    roles = "You are Dana Ray.\nYou are Eli Stone."
    old = json.dumps([item.id, "Parents", item.fingerprint(), personas_fingerprint(members),
                      hashlib.sha256(roles.encode("utf-8")).hexdigest()[:16]],
                     ensure_ascii=False)
    assert unit_key(item, "Parents", members, roles) == old
    assert unit_key(item, "Parents", members) == json.dumps(
        [item.id, "Parents", item.fingerprint(), personas_fingerprint(members)])


async def test_created_personas_are_kept_and_a_persons_edits_survive_a_new_creation(
        scripted, tmp_path):
    def reply(messages):
        what = kind(messages)
        if what == "extract":
            return extraction_reply(messages)
        if what == "group":
            return {"groups": [{"name": "Parents", "stakeholders": ["Parents"],
                                "perspectives": [[1], [2]]},
                               {"name": "Teachers", "perspectives": [[3]]}]}
        return {"personas": [{"perspective_no": 1, "name": "Sam Ortiz",
                          "perspective": "Questions should stay short and fun."}]}

    project, state = _project_with_doc(tmp_path)
    with project:
        llm, gateway = scripted(reply, cache=project, context_window=1500, max_tokens=200)
        made = await st.personas.create_personas_stored(project, state, gateway)
        assert [p.group for p in made.personas] == ["Parents", "Parents", "Teachers"]
        stored = st.personas.load_personas(project)
        assert [p.id for p in stored] == [p.id for p in made.personas]
        assert stored[0].evidence == "Parents told us that questions should be fun and short."
        changed = st.personas.edit_persona(project, stored[0], "specialty", "Speech therapy.", "Anna")
        assert changed.specialty == "Speech therapy." and changed.edited
        again = st.personas.load_personas(project)[0]
        assert again.edited and again.specialty == "Speech therapy."
        assert project.list_edits(kind="majeval.persona")[0].who == "Anna"
        calls = llm.calls
        state.extracted.clear()  # read the document again: every answer is in the project
        await st.personas.create_personas_stored(project, state, gateway)
        assert llm.calls == calls
        assert st.personas.load_personas(project)[0].specialty == "Speech therapy."  # edit kept


def test_one_persona_rule_for_the_editor_the_import_and_the_debate(tmp_path):
    """An empty perspective is refused when editing, on import and before a debate, with the
    same rule (core.majeval.model.persona_problem): the editor can no longer make a persona its
    own export cannot bring back."""
    from core.majeval.inputs import read_personas
    from core.majeval.model import persona_problem
    from core.majeval.personas_io import write_personas
    from core.project import Project

    project = Project.create(tmp_path / "p.evaldesk")
    st.personas.save_personas(project, [persona("Parents", "Sam Ortiz")], origin="generated")
    sam = st.personas.load_personas(project)[0]
    with pytest.raises(ValueError, match="needs a perspective"):
        st.personas.edit_persona(project, sam, "perspective", "   ", "Ana")
    assert st.personas.load_personas(project)[0].perspective == sam.perspective  # nothing stored

    added = st.personas.add_persona(project, "Parents", "New persona 1", "Ana")
    assert "perspective" in persona_problem(added)
    state = st.MajEvalChoices(task="Judge QA pairs.", item_list=[Item(id="1", content="Q?")])
    with pytest.raises(ValueError, match=r"New persona 1 \(Parents\).*needs a perspective"):
        st.debates.check_ready(project, state)

    export = tmp_path / "personas.xlsx"
    write_personas(export, st.personas.load_personas(project))
    read = read_personas(export)
    assert any("perspective is empty" in i.message for i in read.errors)
    st.personas.edit_persona(project, added, "perspective", "Reading together matters.", "Ana")
    write_personas(export, st.personas.load_personas(project))
    assert read_personas(export).ok
    assert len(st.debates.check_ready(project, state)) == 2


async def test_another_model_reads_the_documents_again(scripted, tmp_path):
    """Issue 28, point 4: after finding stakeholders with one model, "Find stakeholders again"
    with a capable one must send the documents to it, not only regroup the first model's
    stakeholders (seen: only grouping and personas were redone, on the built-in model's
    stakeholder "A")."""
    def weak(messages):
        what = kind(messages)
        if what == "extract":
            return extraction_reply(messages)
        if what == "group":
            return {"groups": [{"name": "Parents", "stakeholders": ["Parents"],
                                "perspectives": [[1], [2]]},
                               {"name": "Teachers", "perspectives": [[3]]}]}
        return {"personas": [{"perspective_no": 1, "name": "Sam Ortiz",
                          "perspective": "Questions should stay short and fun."}]}

    read_by_capable = []

    def capable(messages):
        what = kind(messages)
        if what == "extract":
            read_by_capable.append(messages)
            text = messages[1]["content"]
            found = []
            if "real world" in text:
                found.append({"name": "Preschool teachers", "characteristics": "Teach.",
                              "perspectives": [{"perspective": "Link stories to life.",
                                                "evidence": "Teachers want questions that "
                                                "connect the story with the real world."}]})
            return {"stakeholders": found}
        if what == "group":
            return {"groups": [{"name": "Teachers", "stakeholders": ["Preschool teachers"],
                                "perspectives": [[1]]}]}
        return {"personas": [{"perspective_no": 1, "name": "Kim Lee",
                          "perspective": "Stories should link to real life."}]}

    from core.llm.identity import model_fields

    project, state = _project_with_doc(tmp_path)
    with project:
        _, first = scripted(weak, cache=project, context_window=1500, max_tokens=200)
        await st.personas.create_personas_stored(project, state, first)
        assert st.personas.personas_made_by(project, state) == model_fields(first.profile)
        _, second = scripted(capable, cache=project, context_window=1500, max_tokens=200)
        estimate = st.personas.estimate_personas(project, state, second.profile)
        assert estimate.done_already == 0  # the document is to be read again
        made = await st.personas.create_personas_stored(project, state, second)
        assert read_by_capable, "the capable model never read the document"
        assert made.read == [DOC.name] and made.reused == []
        stored = st.documents.stored_perspectives(project, DOC.name)
        assert [s.name for s in stored.stakeholders] == ["Preschool teachers"]
        assert [p.name for p in st.personas.load_personas(project)] == ["Kim Lee"]
        assert st.personas.personas_made_by(project, state) == model_fields(second.profile)
        assert st.personas.personas_out_of_date(project, state) == ""

        # the same model with another seed is another reader too
        seeded = second.profile.model_copy(update={"seed": 5})
        assert st.personas.estimate_personas(project, state, seeded).done_already == 0
        # and the same profile again reads nothing
        assert st.personas.estimate_personas(project, state, second.profile).done_already == 1
