"""The grounded build path for the built-in small model (core.interacteval.grounded): the model
only chooses among what the schema lists, every question quotes one note and carries it as its
evidence, the checklist says how it was built, and every other model keeps the normal path."""

from __future__ import annotations

import pytest

from core.interacteval import (
    Attribute,
    Dimension,
    StageError,
    build_checklist,
    cluster_attributes,
    extract_components,
    validate_questions,
)
from core.interacteval.grounded import (
    GROUNDED_NOTE,
    GROUNDED_REMARK,
    note_question,
    note_word_groups,
    uses_grounded_path,
)
from core.interacteval.model import SubQuestionGroup
from core.settings import ModelProfile, bundled_profile

from .conftest import FakeLLM

NOTES = [
    "The summary jumps from the storm to the election without any link between them.",
    "Each sentence follows from the one before, so the story is easy to follow.",
    "The second sentence repeats the first one almost word for word.",
    "The last sentence mentions a person who was never introduced earlier.",
]
DIMENSION = Dimension(name="Coherence", definition="How well the sentences fit together.")


class BuiltInFake(FakeLLM):
    """A fake with the built-in model's profile (what the gateway of the bundled model has)."""

    profile = bundled_profile()


def _notes() -> list[Attribute]:
    return [Attribute(text=t, source=who, source_kind=kind)
            for t, (who, kind) in zip(NOTES, [("Ana", "person"), ("gemma", "model")] * 2)]


def _names(*names: str) -> dict:
    return {"components": [{"note": i, "name": n} for i, n in enumerate(names, 1)]}


def test_only_the_built_in_model_takes_the_grounded_path():
    from core.llm import Gateway, MemoryCache

    assert uses_grounded_path(Gateway(bundled_profile(), cache=MemoryCache()))
    own_file = bundled_profile().model_copy(update={"gguf_path": "/models/qwen-7b.gguf"})
    assert not uses_grounded_path(Gateway(own_file, cache=MemoryCache()))
    cloud = ModelProfile(name="GPT", model="openai/gpt-4o-mini")
    assert not uses_grounded_path(Gateway(cloud, cache=MemoryCache(), api_key="k"))
    assert not uses_grounded_path(FakeLLM({}))
    # a stage told grounded=True / False decides, whatever the model
    assert uses_grounded_path(FakeLLM({}), True)
    assert not uses_grounded_path(Gateway(bundled_profile(), cache=MemoryCache()), False)


async def test_the_built_in_model_builds_one_question_per_note_quoting_it():
    llm = BuiltInFake({
        "NoteNames": _names("link", "easy to follow", "repeats", "never introduced"),
        "Decision": {"keep": True},
    })
    build = await build_checklist(DIMENSION, [], assessors={}, builder=llm, notes=_notes())
    assert build.components == ["link", "easy to follow", "repeats", "never introduced"]
    checklist = build.checklist
    assert len(checklist.items) == 4
    for item, attribute in zip(checklist.items, _notes()):
        assert item.source_attributes == [attribute]  # its evidence: the note it quotes
        assert f"“{attribute.text}”" in item.question and item.question.startswith("Does ")
    assert checklist.remarks == [GROUNDED_REMARK]
    assert all(g.note == GROUNDED_NOTE for g in build.sub_questions)
    # the model was asked only to choose: names once, then keep/drop once per question
    used = [version for _m, _s, version in llm.calls]
    assert used == (["interacteval/component_names-2"]
                    + ["interacteval/question_choice-2"] * 4)


def test_each_name_is_held_to_words_of_its_own_note():
    from core.interacteval.component_extraction import note_names_schema

    schema = note_names_schema(NOTES).model_json_schema()
    listed = schema["properties"]["components"]
    assert listed["minItems"] == listed["maxItems"] == 4  # no note skipped, no empty list
    first = listed["prefixItems"][0]["properties"]
    assert first["note"] == {"const": 1}
    assert {"storm", "link", "summary jumps"} <= set(first["name"]["enum"])
    assert "the storm" not in first["name"]["enum"]  # no name opens or ends with "the"
    assert "repeats" not in first["name"]["enum"]  # words of another note
    assert note_word_groups("It is the.") == ["It is the"]  # a note of small words only
    # a note written as an instruction: no name opens with its verb
    assert not [g for g in note_word_groups("Check if the summary flows.")
                if g.split()[0] == "Check"]


def test_a_reply_list_is_held_to_exactly_the_entries_given():
    from core.interacteval._common import exactly

    schema = {"properties": {"rows": {"type": "array", "items": {"type": "object"}}}}
    exactly(schema, "rows", [{"const": 1}, {"const": 2}])
    assert schema["properties"]["rows"] == {"type": "array", "minItems": 2, "maxItems": 2,
                                            "prefixItems": [{"const": 1}, {"const": 2}]}


async def test_a_name_that_is_not_words_of_its_note_is_refused():
    llm = BuiltInFake({"NoteNames": _names("logical flow", "easy", "repeats", "earlier")})
    with pytest.raises(StageError) as err:
        await extract_components(DIMENSION, _notes(), llm)
    assert err.value.stage == "Component extraction"
    assert "note 1" in str(err.value) and "note 2" not in str(err.value)


async def test_notes_without_a_components_words_are_placed_by_the_model():
    llm = BuiltInFake({"Placements": {"placements": [
        {"note": 2, "component": "repeats"}, {"note": 4, "component": "Unknown"}]}})
    clusters = await cluster_attributes(DIMENSION, ["storm", "repeats"], _notes(), llm)
    assert [a.text for a in clusters.clusters[0].attributes] == [NOTES[0]]
    assert [a.text for a in clusters.clusters[1].attributes] == [NOTES[1], NOTES[2]]
    assert [a.text for a in clusters.left_out] == [NOTES[3]]
    assert clusters.remarks  # the note left out is said
    (_messages, schema, _version), = llm.calls  # asked only about notes 2 and 4
    listed = schema.model_json_schema()["properties"]["placements"]
    assert [p["properties"]["note"]["const"] for p in listed["prefixItems"]] == [2, 4]
    assert listed["prefixItems"][0]["properties"]["component"]["enum"] == ["storm", "repeats"]


async def test_several_notes_placed_under_one_component_all_stay_there():
    llm = BuiltInFake({"Placements": {"placements": [
        {"note": 2, "component": "storm"}, {"note": 3, "component": "storm"},
        {"note": 4, "component": "storm"}]}})
    clusters = await cluster_attributes(DIMENSION, ["storm", "Flow"], _notes(), llm)
    assert [a.text for a in clusters.clusters[0].attributes] == NOTES
    assert not clusters.left_out and not clusters.remarks


def _groups() -> list[SubQuestionGroup]:
    notes = _notes()
    return [SubQuestionGroup(component=name, key_question=note_question(a.text),
                             sub_questions=[note_question(a.text)], attributes=[a],
                             note=GROUNDED_NOTE)
            for name, a in zip(["storm", "easy", "repeats", "earlier"], notes)]


async def test_the_review_keeps_what_the_model_keeps_and_says_what_it_dropped():
    llm = BuiltInFake({"Decision": [{"keep": True}, {"keep": False}, {"keep": True},
                                    {"keep": True}]})
    checklist = await validate_questions(DIMENSION, _groups(), llm)
    assert checklist.components == ["storm", "repeats", "earlier"]
    assert checklist.remarks[0] == GROUNDED_REMARK
    assert "No question of the component “easy” was kept by the review." in checklist.remarks
    asked = [m[-1]["content"] for m, _s, _v in llm.calls]
    assert all(f"“{text}”" in prompt for text, prompt in zip(NOTES, asked))  # one at a time


async def test_a_review_that_keeps_nothing_fails_plainly():
    llm = BuiltInFake({"Decision": {"keep": False}})
    with pytest.raises(StageError) as err:
        await validate_questions(DIMENSION, _groups(), llm)
    assert "kept none of the questions" in str(err.value)


async def test_other_models_keep_the_normal_path_and_their_results(scripted):
    """A model that is not the built-in one (here the scripted model through the real gateway)
    writes its own components and questions, as before."""
    from core.llm import Gateway, MemoryCache
    from tests.core.interacteval_support import BUILD_REPLIES

    llm = scripted(BUILD_REPLIES)
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    build = await build_checklist(DIMENSION, [], assessors={}, builder=gateway, notes=_notes())
    assert build.components == ["Logical flow", "Structure"]
    assert build.checklist.questions == ["Does each sentence follow from the last?",
                                         "Are transitions between ideas clear?",
                                         "Is there a clear beginning and end?"]
    assert GROUNDED_REMARK not in build.checklist.remarks


async def test_a_component_without_notes_gets_no_question_and_the_checklist_says_so():
    """A component the user added without notes: no question can quote a note, so it has none,
    and its group and the checklist say so (told grounded=True: any model object works)."""
    from core.interacteval import (
        AttributeCluster,
        AttributeClusters,
        checklist_from_sub_questions,
        generate_key_questions,
        generate_sub_questions,
    )

    notes = _notes()
    clusters = AttributeClusters(clusters=[AttributeCluster(component="storm", attributes=notes[:2]),
                                           AttributeCluster(component="Style")])
    llm = FakeLLM({"Decision": {"keep": True}})
    keys = await generate_key_questions(DIMENSION, clusters, llm, grounded=True)
    groups = await generate_sub_questions(DIMENSION, keys, llm, grounded=True)
    assert [len(g.sub_questions) for g in groups] == [2, 0]
    assert "no notes" in groups[1].note
    said = "The component “Style” has no notes, so no question was built for it."
    reviewed = await validate_questions(DIMENSION, groups, llm, grounded=True)
    assert said in reviewed.remarks and reviewed.components == ["storm"]
    unreviewed = checklist_from_sub_questions(DIMENSION, groups)
    assert said in unreviewed.remarks and GROUNDED_REMARK in unreviewed.remarks
    assert len(unreviewed.items) == 2
    assert not [c for _m, _s, c in llm.calls if "key_questions" in c or "sub_questions" in c]


def test_a_contraction_or_a_letter_never_names_a_component():
    """Issue 28, point 7: the built-in model named a component "it's" (a word of a note)."""
    from core.interacteval.grounded import note_word_groups

    groups = note_word_groups("It's fine, don't use a word like x twice")
    assert not any(g.casefold().startswith(("it's", "don't")) for g in groups)
    assert "x" not in groups and "fine" in groups and "word" in groups
