"""Stages 1-2 through the gateway with a scripted model: perspectives with evidence pages,
grouping (with repairs), personas (missing ones asked alone), and the project artefacts."""

from __future__ import annotations

import pytest

from core.documents import Document, Page
from core.majeval import (
    StageError,
    Stakeholder,
    construct_personas,
    create_personas,
    extract_perspectives,
    group_stakeholders,
)
from core.majeval.perspective_extraction import chunk_budget, normalise_name

from .majeval_support import DOC, extraction_reply


async def test_perspectives_are_merged_over_chunks_and_traced_to_pages(scripted):
    llm, gateway = scripted(extraction_reply)
    found = await extract_perspectives(DOC, "Judge QA pairs.", gateway, context_window=1500,
                                       answer_tokens=200)
    assert found.chunks >= 2 and llm.calls == found.chunks + 1  # the last chunk asked again
    assert not found.failures
    assert "is not in the text" in llm.requests[-1].messages[-1]["content"]
    assert [s.name for s in found.stakeholders] == ["Parents", "teachers"]
    parents = found.stakeholders[0]
    assert [p.perspective for p in parents.perspectives] == [
        "Questions should be fun and short.", "Pictures help children answer."]
    first, second = parents.perspectives
    assert (first.document, first.page, first.match) == ("study.pdf", 1, 1.0)
    assert (second.page, second.match) == (3, 1.0)
    teacher = found.stakeholders[1].perspectives[0]
    assert teacher.page == 2 and 0.75 <= teacher.match < 1.0  # lightly paraphrased quote


async def test_a_chunk_whose_evidence_is_not_in_the_text_fails_with_the_reason(scripted):
    def reply(messages):
        if "pictures help" in messages[1]["content"]:  # invented twice: the chunk fails
            return {"stakeholders": [{"name": "parents", "perspectives": [
                {"perspective": "Pictures matter.", "evidence": "Pictures are everything."}]}]}
        return extraction_reply(messages)

    _llm, gateway = scripted(reply)
    found = await extract_perspectives(DOC, "Judge QA pairs.", gateway, context_window=1500,
                                       answer_tokens=200)
    assert [f.kind for f in found.failures] == ["rejected_output"]
    failure = found.failures[0]
    assert failure.where == "study.pdf, pages 2-3"
    assert "“Pictures are everything.” for parents is not in the text" in failure.message
    assert "try a larger model" in failure.message
    # the other chunks still count, and nothing of the failed chunk was kept
    assert [p.perspective for s in found.stakeholders for p in s.perspectives] == [
        "Questions should be fun and short.", "Link the story to the real world."]


@pytest.mark.parametrize("reply", [
    {"stakeholders": [{"name": "stakeholder name", "characteristics": "one sentence",
                       "perspectives": [{"perspective": "one sentence",
                                         "evidence": "the supporting sentence"}]}]},
    {"stakeholders": [{"name": "the stakeholder as the text calls them",
                       "characteristics": "your sentence about them",
                       "perspectives": [{"perspective": "the view, in your words",
                                         "evidence": "Parents read with their children at "
                                                     "bedtime."}]}]},
    {"stakeholders": [{"name": "Stakeholder", "perspectives": [
        {"perspective": "Stories matter at bedtime.",
         "evidence": "Parents read with their children at bedtime."}]}]},
])
async def test_a_copy_of_the_form_is_a_failed_chunk_not_a_stakeholder(scripted, reply):
    llm, gateway = scripted(lambda m: reply)
    found = await extract_perspectives(DOC, "Judge QA pairs.", gateway, context_window=8192,
                                       answer_tokens=200)
    assert found.stakeholders == []
    assert [f.kind for f in found.failures] == ["copied_instructions"] * found.chunks
    assert "repeated the instructions instead of answering: try a larger model" in \
        found.failures[0].message
    assert llm.calls == 2 * found.chunks  # asked again once


async def test_extraction_leaves_out_only_the_authors_and_their_institutions(scripted):
    llm, gateway = scripted(extraction_reply)
    await extract_perspectives(DOC, "Judge QA pairs.", gateway, context_window=8192,
                               answer_tokens=200)
    system = llm.requests[0].messages[0]["content"]
    assert "Leave out only the authors of the document and the institutions the authors " \
        "belong to." in system
    assert "Organisations that speak for people in the text" in system
    assert "institutions and organisations" not in system  # not every organisation
    sent = "\n".join(m["content"] for m in llm.requests[0].messages)
    assert '{"' not in sent and "e.g." not in sent  # no example answer to copy


def test_chunk_budget_leaves_room_for_prompt_and_answer():
    assert chunk_budget(8192, 1024, "A task.") < 8192 - 1024
    with pytest.raises(ValueError, match="context window"):
        chunk_budget(900, 512, "A task.")
    assert normalise_name("The  Parents!") == "parents"


def holders():
    from core.majeval import Perspective

    def p(i, who, text):
        return Perspective(id=f"p{i}", stakeholder=who, perspective=text, document="d.pdf")

    return [Stakeholder(name="AI developers", perspectives=[p(1, "AI developers", "Robust."),
                                                            p(2, "AI developers", "Fast.")]),
            Stakeholder(name="EdTech developers", perspectives=[p(3, "EdTech developers",
                                                                  "Robust too.")]),
            Stakeholder(name="parents", perspectives=[p(4, "parents", "Fun.")])]


async def test_grouping_points_back_to_originals_and_repairs_the_reply(scripted):
    first = {"groups": [
        {"name": "System developers", "description": "Build the tools.",
         "stakeholders": ["AI developers", "EdTech developers"],
         "perspectives": [[1, 3], [9]]}]}  # 9 is not in the list: asked again
    reply = {"groups": [
        {"name": "System developers", "description": "Build the tools.",
         "stakeholders": ["AI developers", "EdTech developers"],
         "perspectives": [[1, 3], [3]]},  # 3 used twice, 2 and 4 forgotten
        {"name": "system developers", "stakeholders": [], "perspectives": []}]}
    llm, gateway = scripted(lambda m: reply if len(m) > 2 else first)
    groups = await group_stakeholders(holders(), "Judge tools.", gateway)
    assert llm.calls == 2
    assert "lists perspective number(s) 9, but the list has numbers 1 to 4 only" in \
        llm.requests[1].messages[-1]["content"]
    assert [g.name for g in groups] == ["System developers", "parents"]
    dev = groups[0]
    assert [p.id for p in dev.perspectives] == ["p1", "p2"]
    assert dev.merged == {"p1": ["p1", "p3"], "p2": ["p2"]}
    assert dev.stakeholders == ["AI developers", "EdTech developers"]
    assert "1. [AI developers] Robust." in llm.prompts[0]


@pytest.mark.parametrize(("reply", "kind", "said"), [
    ({"groups": [{"name": "Developers", "perspectives": [[1, 2], [5, 7]]}]},
     "rejected_output", "lists perspective number(s) 5, 7"),
    ({"groups": []}, "rejected_output", "there are no groups"),
    ({"groups": [{"name": "group name", "description": "one sentence",
                  "stakeholders": ["stakeholder name"], "perspectives": [[1]]}]},
     "copied_instructions", "repeated the instructions instead of answering"),
    ({"groups": [{"name": "Group", "perspectives": [[1], [2], [3], [4]]}]},
     "copied_instructions", "the group name “Group”"),
])
async def test_a_grouping_that_points_nowhere_fails_after_one_reask(scripted, reply, kind, said):
    llm, gateway = scripted(lambda m: reply)
    with pytest.raises(StageError) as caught:
        await group_stakeholders(holders(), "Judge tools.", gateway)
    assert llm.calls == 2
    assert said in caught.value.message
    assert [f.kind for f in caught.value.failures] == [kind]


async def test_personas_left_out_are_asked_for_alone(scripted):
    from core.majeval.stakeholder_grouping import GroupingReply, _build_groups

    groups = _build_groups(GroupingReply.model_validate({"groups": [
        {"name": "Developers", "perspectives": [[1], [2], [3]]}]}), [
            p for s in holders() for p in s.perspectives][:3])

    FIELDS = {"demographics": "A developer, 34.", "perspective": "Tools should be fast.",
              "specialty": "Back ends.", "psychological_traits": "Patient.",
              "social_relationships": "Works in a team."}

    def reply(messages):
        text = messages[-1]["content"]
        if "3. Robust too." in text:  # the group call forgets perspective 2
            return {"personas": [
                {"perspective_no": 1, "name": "Ana", **FIELDS},
                {"perspective_no": 3, "name": "Ana", **FIELDS}]}
        assert "1. Fast." in text
        return {"personas": [{"perspective_no": 1, "name": "Ben"}]}

    llm, gateway = scripted(reply)
    built = await construct_personas(groups, "Judge tools.", gateway)
    assert [p.name for p in built.personas] == ["Ana", "Ben", "Ana (2)"]
    assert [p.perspective_id for p in built.personas] == ["p1", "p2", "p3"]
    assert llm.calls == 2 and not built.failures


@pytest.mark.parametrize(("written", "kind"), [
    ({"perspective_no": 1, "name": "full name", "demographics": "...", "perspective": "..."},
     "copied_instructions"),
    ({"perspective_no": 1, "name": "Developers", "demographics": "Works in tech."},
     "copied_instructions"),  # the group's name, not a person's
    ({"perspective_no": 1, "name": "Persona", "demographics": "Works in tech."},
     "copied_instructions"),
    ({"perspective_no": 1, "name": "Ana Ruiz",
      "demographics": "their age, education, work and anything else that makes them concrete"},
     "copied_instructions"),
    ({"perspective_no": 4, "name": "Ana Ruiz"}, "rejected_output"),  # there is one perspective
])
async def test_a_persona_copied_from_the_form_is_a_failure(scripted, written, kind):
    from core.majeval.stakeholder_grouping import GroupingReply, _build_groups

    groups = _build_groups(GroupingReply.model_validate({"groups": [
        {"name": "Developers", "perspectives": [[1]]}]}), [
            p for s in holders() for p in s.perspectives][:1])
    llm, gateway = scripted(lambda m: {"personas": [written]})
    built = await construct_personas(groups, "Judge tools.", gateway)
    assert built.personas == []
    assert [f.kind for f in built.failures] == [kind]
    assert llm.calls == 2


async def test_nothing_found_in_documents_that_name_people_blames_the_model(scripted):
    _llm, gateway = scripted(lambda m: {"stakeholders": []})
    with pytest.raises(StageError) as caught:
        await create_personas([DOC], "Judge QA pairs.", gateway, context_window=8192,
                              answer_tokens=200)
    message = caught.value.message
    assert message.startswith("No stakeholder perspectives came back from the model, although "
                              "the documents plainly name people: parents (3 times), children "
                              "(2 times), teachers (1 time).")
    assert "The model found nothing in them" in message and "try a larger model" in message
    assert "talk about the people" not in message  # the documents are not to blame


async def test_nothing_found_in_documents_without_people_blames_the_documents(scripted):
    _llm, gateway = scripted(lambda m: {"stakeholders": []})
    weather = Document(path="w.txt", name="w.txt", kind="text", pages=[Page(
        number=1, text="Rain fell on the hills. The river rose and the wind turned west.")])
    with pytest.raises(StageError, match="hardly name any people. Check that the documents "
                                         "talk about the people the task concerns"):
        await create_personas([weather], "Judge QA pairs.", gateway, context_window=8192,
                              answer_tokens=200)


async def test_nothing_found_because_the_model_copied_the_form_says_so(scripted):
    copy = {"stakeholders": [{"name": "stakeholder name", "characteristics": "one sentence",
                              "perspectives": []}]}
    _llm, gateway = scripted(lambda m: copy)
    with pytest.raises(StageError) as caught:
        await create_personas([DOC], "Judge QA pairs.", gateway, context_window=8192,
                              answer_tokens=200)
    message = caught.value.message
    assert "The model repeated the instructions instead of answering: it is too small for " \
        "this step; try a larger model." in message
    assert [f.kind for f in caught.value.failures] == ["copied_instructions"]


async def test_the_schema_allows_only_the_chunks_own_sentences_as_evidence(scripted):
    """What a model with structured output is held to (the bundled model's grammar): evidence is
    one of the chunk's sentences word for word, and a chunk that names people needs at least
    one stakeholder with a perspective (the empty list is not the easy answer)."""
    llm, gateway = scripted(extraction_reply)
    await extract_perspectives(DOC, "Judge QA pairs.", gateway, context_window=1500,
                               answer_tokens=200)
    schema = llm.requests[0].params["response_format"]["json_schema"]["schema"]
    evidence = schema["$defs"]["_FoundPerspective"]["properties"]["evidence"]
    assert evidence["enum"] == [
        "Parents read with their children at bedtime.",
        "Parents told us that questions should be fun and short.",
        "Teachers want questions that connect the story with the real world."]  # no "Filler."
    assert schema["properties"]["stakeholders"]["minItems"] == 1
    assert schema["$defs"]["_FoundStakeholder"]["properties"]["perspectives"]["minItems"] == 1
    assert "evidence" in schema["$defs"]["_FoundPerspective"]["required"]


def test_a_chunk_that_names_nobody_may_answer_the_empty_list():
    from core.majeval.perspective_extraction import reply_schema

    schema = reply_schema("The weather was cold all week. Snow fell on the hills at night."
                          ).model_json_schema()
    assert "minItems" not in schema["properties"]["stakeholders"]
    assert schema["properties"]["stakeholders"]["maxItems"] >= 1
    assert schema["$defs"]["_FoundPerspective"]["properties"]["evidence"]["enum"] == [
        "The weather was cold all week.", "Snow fell on the hills at night."]


def test_sentences_of_a_text_are_what_may_be_quoted():
    from core.documents import sentences_of

    text = "Results\n\nParents said  it helps. It helps.\nTeachers agreed (mostly). 3"
    assert sentences_of(text) == ["Parents said it helps.", "Teachers agreed (mostly)."]


def test_the_grouping_schema_allows_only_listed_names_and_numbers():
    from core.majeval.stakeholder_grouping import grouping_schema

    schema = grouping_schema(["Parents", "teachers", "Parents"], 3).model_json_schema()
    fields = schema["$defs"]["_Group"]["properties"]
    assert fields["stakeholders"]["items"]["enum"] == ["Parents", "teachers"]
    assert fields["perspectives"]["items"]["items"]["enum"] == [1, 2, 3]
    assert schema["properties"]["groups"]["minItems"] == 1
    assert schema["properties"]["groups"]["maxItems"] == 2
