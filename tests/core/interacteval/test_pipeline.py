"""The stages in a row through the real gateway (scripted model); scoring without a project
(scoring kept in a project is tested with the session, test_session.py)."""

from __future__ import annotations

import pytest

from core.interacteval import (
    Attribute,
    StageError,
    TextItem,
    build_checklist,
    score_texts,
)
from core.runs import Progress
from tests.core.interacteval_support import BUILD_REPLIES

from .conftest import FakeLLM, failure


async def test_build_checklist_through_the_gateway(scripted, coherence, samples):
    from core.llm import Gateway, MemoryCache

    llm = scripted(BUILD_REPLIES)
    cache = MemoryCache()
    gateway = Gateway(llm.profile(), cache=cache)
    notes = [Attribute(text="No jumps between topics.", source="Anna", source_kind="person")]
    states = []
    build = await build_checklist(coherence, samples, assessors={"Scripted": gateway},
                                  builder=gateway, notes=notes, progress=Progress(states.append))
    assert llm.calls == 6  # think-aloud + five construction steps
    assert [a.source for a in build.attributes] == ["Scripted", "Scripted", "Anna"]
    assert build.components == ["Logical flow", "Structure"]
    checklist = build.checklist
    assert checklist.questions == ["Does each sentence follow from the last?",
                                   "Are transitions between ideas clear?",
                                   "Is there a clear beginning and end?"]
    first = checklist.items[0]
    assert first.component == "Logical flow"
    assert first.key_question == "Do the ideas follow logically?"
    assert {a.source for a in first.source_attributes} == {"Scripted", "Anna"}
    assert "No jumps between topics." in llm.prompts[1]  # people's notes reach the extraction
    assert {s.stage for s in states} >= {"Think-aloud on Coherence",
                                         "Reviewing the questions of Coherence"}
    # the same build again is answered from the cache: no new call
    again = await build_checklist(coherence, samples, assessors={"Scripted": gateway},
                                  builder=gateway, notes=notes)
    assert llm.calls == 6
    assert again.checklist == checklist


async def test_build_without_any_attribute_fails_plainly(coherence, samples):
    bad = FakeLLM({"Considerations": failure("Wrong API key.", "auth")})
    with pytest.raises(StageError) as err:
        await build_checklist(coherence, samples, assessors={"Bad": bad}, builder=bad)
    assert "Wrong API key." in str(err.value) and "Coherence" in str(err.value)


async def test_build_with_notes_only_and_no_validation(coherence, samples, attributes):
    llm = FakeLLM({
        "Components": {"components": ["Flow"]},
        "Clusters": {"clusters": [{"component": "Flow", "notes": [1, 2, 3, 4, 5]}]},
        "KeyQuestions": {"key_questions": [{"component": "Flow", "question": "Flows?"}]},
        "SubQuestions": {"groups": [{"component": "Flow", "sub_questions": ["A?", "B?"]}]},
    })
    build = await build_checklist(coherence, samples, assessors={}, builder=llm,
                                  notes=attributes, validate=False)
    assert build.checklist.questions == ["A?", "B?"]
    assert not build.validated
    assert [c[1].__name__ for c in llm.calls] == ["Components", "Clusters", "KeyQuestions",
                                                  "SubQuestions"]


async def test_duplicate_text_ids_are_refused(checklist):
    items = [TextItem(id="x", text="a"), TextItem(id="x", text="b")]
    with pytest.raises(ValueError, match="x"):
        await score_texts([checklist], items, FakeLLM({}))
