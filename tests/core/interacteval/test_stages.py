"""Each construction stage with canned JSON from a fake model."""

from __future__ import annotations

import pytest

from core.interacteval import (
    Attribute,
    AttributeCluster,
    AttributeClusters,
    KeyQuestion,
    StageError,
    SubQuestionGroup,
    checklist_from_sub_questions,
    cluster_attributes,
    extract_components,
    generate_key_questions,
    generate_sub_questions,
    parse_notes,
    read_notes,
    think_aloud,
    validate_questions,
)
from core.interacteval.validation import UNASSIGNED
from core.runs import Progress

from .conftest import FakeLLM, failure


# ------------------------------------------------------------------------------ think-aloud
async def test_think_aloud_tags_every_attribute_with_its_model(coherence, samples):
    gpt = FakeLLM({"Considerations": {"considerations": ["1. Check the order of ideas.",
                                                          "- Look for clear links.", "  "]}})
    llama = FakeLLM({"Considerations": {"considerations": ["Check the ending."]}})
    states = []
    result = await think_aloud(coherence, samples, {"GPT-4": gpt, "Llama": llama},
                               progress=Progress(states.append))
    assert [(a.text, a.source, a.source_kind) for a in result.attributes] == [
        ("Check the order of ideas.", "GPT-4", "model"),
        ("Look for clear links.", "GPT-4", "model"),
        ("Check the ending.", "Llama", "model"),
    ]
    assert result.failures == []
    assert states[-1].done == 2
    prompt = gpt.prompts[0]
    assert "The collective quality of all sentences." in prompt
    for sample in samples:  # every sample, its source and its score are shown
        assert sample.text in prompt and sample.source in prompt
    assert "Score: 2.33" in prompt and "Score: 5" in prompt
    assert gpt.calls[0][2].startswith("interacteval/think_aloud-")


async def test_think_aloud_keeps_going_when_one_model_fails(coherence, samples):
    good = FakeLLM({"Considerations": {"considerations": ["Check the order of ideas."]}})
    bad = FakeLLM({"Considerations": failure("Wrong API key.", "auth")})
    result = await think_aloud(coherence, samples, {"Bad": bad, "Good": good})
    assert [a.source for a in result.attributes] == ["Good"]
    assert len(result.failures) == 1
    assert result.failures[0].who == "Bad"
    assert result.failures[0].kind == "auth"
    assert "Wrong API key." in result.failures[0].message


def test_parse_notes_one_attribute_per_line():
    notes = parse_notes("- Check the flow\n\n2) Pronouns are clear\n* Ends well  ", "Anna")
    assert [a.text for a in notes] == ["Check the flow", "Pronouns are clear", "Ends well"]
    assert {(a.source, a.source_kind) for a in notes} == {("Anna", "person")}


def test_read_notes_text_file_uses_file_name_as_author(tmp_path):
    path = tmp_path / "anna.txt"
    path.write_text("Check the flow\nPronouns are clear\n", encoding="utf-8")
    got = read_notes(path)
    assert not got.errors
    assert [(a.text, a.source) for a in got.attributes] == [
        ("Check the flow", "anna"), ("Pronouns are clear", "anna")]


def test_read_notes_sheet_with_author_and_attribute(tmp_path):
    import pandas as pd

    path = tmp_path / "notes.xlsx"
    pd.DataFrame({"Author": ["Anna", "Ben", "Ben"],
                  "Attribute": ["Check the flow", "", "Clear links"]}).to_excel(path, index=False)
    got = read_notes(path)
    assert not got.errors
    assert [(a.text, a.source) for a in got.attributes] == [
        ("Check the flow", "Anna"), ("Clear links", "Ben")]
    assert any("row 3" in p for p in got.problems)  # Ben's empty attribute is named


def test_read_notes_sheet_without_attribute_column_is_an_error(tmp_path):
    import pandas as pd

    path = tmp_path / "notes.xlsx"
    pd.DataFrame({"who": ["Anna"], "comment": ["x"]}).to_excel(path, index=False)
    got = read_notes(path)
    assert got.errors and "attribute" in got.errors[0]


# ---------------------------------------------------------------------- component extraction
async def test_extract_components_cleans_and_deduplicates(coherence, attributes):
    llm = FakeLLM({"Components": {"components": ["Logical flow.", " logical  FLOW", "Structure",
                                                 ""]}})
    components = await extract_components(coherence, attributes, llm)
    assert components == ["Logical flow", "Structure"]
    prompt = llm.prompts[0]
    assert all(a.text in prompt for a in attributes)
    assert "at most 5" in prompt
    assert "Anna" not in prompt  # sources are not shown to the model


async def test_extract_components_schema_allows_at_most_five(coherence, attributes):
    llm = FakeLLM({"Components": {"components": [f"c{i}" for i in range(6)]}})
    with pytest.raises(Exception) as err:  # the schema itself rejects 6 (the gateway re-asks)
        await extract_components(coherence, attributes, llm)
    assert "at most 5" in str(err.value)
    schema = llm.calls[0][1].model_json_schema()
    assert schema["properties"]["components"]["maxItems"] == 5


async def test_extract_components_failure_names_step_and_dimension(coherence, attributes):
    llm = FakeLLM({"Components": failure("The server did not answer in time.", "timeout")})
    with pytest.raises(StageError) as err:
        await extract_components(coherence, attributes, llm)
    assert "Component extraction" in str(err.value) and "Coherence" in str(err.value)
    assert "did not answer in time" in str(err.value)


async def test_extract_components_needs_attributes(coherence):
    with pytest.raises(StageError):
        await extract_components(coherence, [], FakeLLM({}))


# ------------------------------------------------------------------------ attribute clusters
async def test_cluster_attributes_by_number_keeps_sources(coherence, attributes):
    llm = FakeLLM({"Clusters": {"clusters": [
        {"component": "structure", "notes": [2, 5, 99]},
        {"component": "Logical flow", "notes": [1, 4, 2]},
    ]}})
    result = await cluster_attributes(coherence, ["Logical flow", "Structure"], attributes, llm)
    assert [c.component for c in result.clusters] == ["Logical flow", "Structure"]
    flow, structure = result.clusters
    assert [a.text for a in structure.attributes] == [attributes[1].text, attributes[4].text]
    # attribute 2 was placed twice: it stays under the first component that took it
    assert [a.text for a in flow.attributes] == [attributes[0].text, attributes[3].text]
    assert flow.attributes[1].source == "Anna"
    assert result.left_out == [attributes[2]]
    assert any("note 99" in r for r in result.remarks)
    assert "1. Sentences follow each other logically." in llm.prompts[0]


async def test_cluster_attributes_unknown_component_is_remarked(coherence, attributes):
    llm = FakeLLM({"Clusters": {"clusters": [
        {"component": "Logical flow", "notes": [1]},
        {"component": "Grammar", "notes": [2]},
        {"component": "Tone", "notes": [3]},
    ]}})
    result = await cluster_attributes(coherence, ["Logical flow", "Structure"], attributes, llm)
    assert [a.text for a in result.clusters[0].attributes] == [attributes[0].text]
    assert result.clusters[1].attributes == []
    assert sum("not in the list" in r for r in result.remarks) == 2
    assert len(result.left_out) == 4


async def test_cluster_attributes_renamed_component_is_reported_not_guessed(
    coherence, attributes
):
    llm = FakeLLM({"Clusters": {"clusters": [
        {"component": "Flow of ideas", "notes": [1, 2]},
        {"component": "Structure", "notes": [3]},
    ]}})
    result = await cluster_attributes(coherence, ["Logical flow", "Structure"], attributes, llm)
    flow, structure = result.clusters
    assert flow.attributes == []  # not placed under Logical flow by position
    assert structure.attributes == [attributes[2]]
    assert attributes[0] in result.left_out and attributes[1] in result.left_out
    (remark,) = [r for r in result.remarks if "Flow of ideas" in r]
    assert "numbers 1, 2" in remark and "left-out" in remark


async def test_cluster_attributes_naming_no_component_is_refused(coherence, attributes):
    llm = FakeLLM({"Clusters": {"clusters": [{"component": "Grammar", "notes": [1]},
                                             {"component": "Tone", "notes": [2]}]}})
    with pytest.raises(StageError) as err:
        await cluster_attributes(coherence, ["Logical flow", "Structure"], attributes, llm)
    assert err.value.kind == "rejected_output"
    assert "names none of the listed components" in str(err.value)
    assert "“Grammar”, “Tone”" in str(err.value)


# ---------------------------------------------------------------------------- key questions
def _clusters(attributes):
    return AttributeClusters(clusters=[
        AttributeCluster(component="Logical flow", attributes=attributes[:2]),
        AttributeCluster(component="Structure", attributes=attributes[2:]),
    ])


async def test_key_questions_align_by_name_and_carry_attributes(coherence, attributes):
    llm = FakeLLM({"KeyQuestions": {"key_questions": [
        {"component": "Structure", "question": "Is the summary well organised?"},
        {"component": "logical flow", "question": "Do the ideas follow   logically?"},
    ]}})
    keys = await generate_key_questions(coherence, _clusters(attributes), llm)
    assert [(k.component, k.question) for k in keys] == [
        ("Logical flow", "Do the ideas follow logically?"),
        ("Structure", "Is the summary well organised?"),
    ]
    assert keys[0].attributes == attributes[:2]
    schema = llm.calls[0][1].model_json_schema()
    assert schema["properties"]["key_questions"]["minItems"] == 2
    assert schema["properties"]["key_questions"]["maxItems"] == 2
    assert "- Pronouns point to something clear." in llm.prompts[0]


async def test_key_questions_of_renamed_components_are_not_guessed_by_position(
    coherence, attributes
):
    llm = FakeLLM({"KeyQuestions": {"key_questions": [
        {"component": "A", "question": "Q1?"}, {"component": "B", "question": "Q2?"}]}})
    with pytest.raises(StageError) as err:
        await generate_key_questions(coherence, _clusters(attributes), llm)
    message = str(err.value)
    assert "no key question for “Logical flow”, “Structure”" in message
    assert "“A”, “B”, which are not among the components" in message
    assert err.value.kind == "rejected_output"


async def test_key_questions_renamed_then_corrected_when_asked_again(coherence, attributes):
    """Through the gateway: a reply with a renamed component is refused and asked again with
    the reason; the corrected reply is used."""
    from core.llm import Gateway, MemoryCache, ScriptedLLM

    renamed = {"key_questions": [{"component": "Flow of ideas", "question": "Q1?"},
                                 {"component": "Structure", "question": "Q2?"}]}
    right = {"key_questions": [{"component": "Logical flow", "question": "Q1?"},
                               {"component": "Structure", "question": "Q2?"}]}
    with ScriptedLLM({"Write exactly one key question": [renamed, right]},
                     name="ie-keys-renamed") as llm:
        gateway = Gateway(llm.profile(), cache=MemoryCache())
        keys = await generate_key_questions(coherence, _clusters(attributes), gateway)
        assert llm.calls == 2
        assert "no key question for “Logical flow”" in llm.prompts[1]
    assert [(k.component, k.question) for k in keys] == [("Logical flow", "Q1?"),
                                                          ("Structure", "Q2?")]


async def test_key_questions_missing_one_is_an_error(coherence, attributes):
    llm = FakeLLM({"KeyQuestions": {"key_questions": [
        {"component": "Structure", "question": "Q?"}, {"component": "Structure", "question": "R?"}]}})
    with pytest.raises(StageError) as err:
        await generate_key_questions(coherence, _clusters(attributes), llm)
    assert "Logical flow" in str(err.value)


# ---------------------------------------------------------------------------- sub-questions
async def test_sub_questions_per_key_question(coherence, attributes):
    keys = [KeyQuestion(component="Logical flow", question="Logical?", attributes=attributes[:2]),
            KeyQuestion(component="Structure", question="Organised?", attributes=attributes[2:])]
    llm = FakeLLM({"SubQuestions": {"groups": [
        {"component": "Logical flow", "sub_questions": ["Does each sentence follow?",
                                                        "does each sentence follow?",
                                                        "Are links clear?"]},
        {"component": "Structure", "sub_questions": []},
    ]}})
    groups = await generate_sub_questions(coherence, keys, llm)
    assert groups[0].sub_questions == ["Does each sentence follow?", "Are links clear?"]
    assert groups[0].attributes == attributes[:2]
    assert groups[0].note == ""
    # no sub-question given: the key question stands in, and a note says so
    assert groups[1].sub_questions == ["Organised?"]
    assert "no sub-question" in groups[1].note
    assert "Key question: Logical?" in llm.prompts[0]


async def test_sub_questions_under_a_renamed_component_are_reported(coherence, attributes):
    keys = [KeyQuestion(component="Logical flow", question="Logical?", attributes=attributes[:2]),
            KeyQuestion(component="Structure", question="Organised?", attributes=attributes[2:])]
    llm = FakeLLM({"SubQuestions": {"groups": [
        {"component": "Organisation", "sub_questions": ["Is there a clear ending?"]},
        {"component": "Logical flow", "sub_questions": ["Does each sentence follow?"]},
    ]}})
    groups = await generate_sub_questions(coherence, keys, llm)
    assert groups[0].sub_questions == ["Does each sentence follow?"]
    # not moved under Structure by position: the key question stands in, and the note says why
    assert groups[1].sub_questions == ["Organised?"]
    assert "“Organisation”" in groups[1].note


# ------------------------------------------------------------------------------- validation
def _groups(attributes):
    return [
        SubQuestionGroup(component="Logical flow", key_question="Logical?",
                         sub_questions=["Does each sentence follow?", "Are links clear?"],
                         attributes=attributes[:2]),
        SubQuestionGroup(component="Structure", key_question="Organised?",
                         sub_questions=["Is there a clear ending?"], attributes=attributes[2:]),
    ]


async def test_validation_traces_questions_to_components(coherence, attributes):
    llm = FakeLLM({"ValidatedQuestions": {"questions": [
        {"question": "Is there a clear ending?", "based_on": ["[2.1]"]},
        {"question": "Do sentences follow and link clearly?", "based_on": ["1.1", "1.2", "2.1"]},
        {"question": "Are links clear?", "based_on": []},  # traced by its text
        {"question": "Is it nice?", "based_on": ["7.7"]},
        {"question": "is it nice?", "based_on": []},  # a repeat: dropped
    ]}})
    checklist = await validate_questions(coherence, _groups(attributes), llm)
    assert [(i.component, i.question) for i in checklist.items] == [
        ("Logical flow", "Do sentences follow and link clearly?"),
        ("Logical flow", "Are links clear?"),
        ("Structure", "Is there a clear ending?"),
        (UNASSIGNED, "Is it nice?"),
    ]
    merged = checklist.items[0]
    assert merged.key_question == "Logical?"
    assert merged.source_attributes == attributes  # both components' attributes, once each
    assert checklist.items[3].source_attributes == []
    assert any("Is it nice?" in r for r in checklist.remarks)
    assert checklist.definition == coherence.definition
    assert "[1.2] (Logical flow) Are links clear?" in llm.prompts[0]


async def test_validation_reports_a_component_with_no_question_left(coherence, attributes):
    llm = FakeLLM({"ValidatedQuestions": {"questions": [
        {"question": "Does each sentence follow?", "based_on": ["1.1"]}]}})
    checklist = await validate_questions(coherence, _groups(attributes), llm)
    assert checklist.questions == ["Does each sentence follow?"]
    assert any("Structure" in r for r in checklist.remarks)


async def test_validation_traces_a_question_by_its_component_name(coherence, attributes):
    llm = FakeLLM({"ValidatedQuestions": {"questions": [
        {"question": "Is the ending clear?", "based_on": ["Structure"]},
        {"question": "Does each sentence follow?", "based_on": ["1.1"]}]}})
    checklist = await validate_questions(coherence, _groups(attributes), llm)
    assert [(i.component, i.question) for i in checklist.items] == [
        ("Logical flow", "Does each sentence follow?"), ("Structure", "Is the ending clear?")]


async def test_validation_tracing_nothing_is_refused(coherence, attributes):
    llm = FakeLLM({"ValidatedQuestions": {"questions": [
        {"question": "Is it nice?", "based_on": ["7.7"]}]}})
    with pytest.raises(StageError) as err:
        await validate_questions(coherence, _groups(attributes), llm)
    assert "names a draft question" in str(err.value)


def test_checklist_without_validation(coherence, attributes):
    checklist = checklist_from_sub_questions(coherence, _groups(attributes))
    assert checklist.questions == ["Does each sentence follow?", "Are links clear?",
                                   "Is there a clear ending?"]
    assert checklist.items[2].source_attributes == attributes[2:]
    assert checklist.components == ["Logical flow", "Structure"]


def test_attribute_label_round_trip():
    from core.interacteval.report import format_attributes, parse_attributes

    attrs = [Attribute(text="Flow matters", source="GPT-4", source_kind="model"),
             Attribute(text="Clear links", source="Anna", source_kind="person"),
             Attribute(text="Typed by hand")]
    assert parse_attributes(format_attributes(attrs)) == attrs


@pytest.mark.parametrize("given, expected, out", [
    (["b", "A"], ["A", "B"], [1, 0]),
    (["logical flow of ideas", "Flow"], ["Logical flow", "Flow"], [0, 1]),  # exact names win
    (["x", "y"], ["A", "B"], [None, None]),  # nothing matches: nothing guessed by position
    (["A", "zzz", "B"], ["A", "B"], [0, None, 1]),
    (["B", "zzz"], ["A", "B"], [1, None]),  # a renamed component is not given the free one
])
def test_align_component_names(given, expected, out):
    from core.interacteval._common import align

    assert align(given, expected) == out


def test_align_leaves_a_repeated_name_unmatched():
    from core.interacteval._common import align

    assert align(["B", "B"], ["A", "B"]) == [1, None]
