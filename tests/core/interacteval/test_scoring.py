"""Checklist scoring: answer parsing, the score formula, unanswered questions, the legacy
count, per-question mode, failures; and the same through the real gateway with a scripted
model (re-ask on invalid JSON)."""

from __future__ import annotations

import pytest

from core.interacteval import (
    Checklist,
    ChecklistItem,
    ScoringSettings,
    TextItem,
    checklist_score,
    legacy_count,
    parse_answer,
    score_text,
)
from core.interacteval.checklist_scoring import answers_schema

from .conftest import FakeLLM, failure

QUESTIONS = ["Does it flow?", "Is it organised?", "Are pronouns clear?", "Does it end well?",
             "Is it on topic?"]


@pytest.fixture
def checklist() -> Checklist:
    return Checklist(dimension="Coherence", definition="How well the sentences hang together.",
                     items=[ChecklistItem(component="C", question=q) for q in QUESTIONS])


@pytest.fixture
def item() -> TextItem:
    return TextItem(id="t1", text="A short summary.", source="The article.", source_id="d1",
                    system="M1", human={"Coherence": 4.0})


@pytest.mark.parametrize("value, expected", [
    ("yes", "yes"), ("Yes", "yes"), ("YES", "yes"), (" yes ", "yes"), ("no", "no"), ("No", "no"),
    ("NO", "no"), ("Yes.", "yes"), ("No, the second sentence is off.", "no"), ('"yes"', "yes"),
    (True, "yes"), (False, "no"), ("true", "yes"), ("FALSE", "no"),
    ("yes/no", None), ("no yes", None), ("maybe", None), ("", None), (None, None), (1, None),
    ("nope", None), ("yesterday", None), ("not sure", None), (["yes"], None),
])
def test_parse_answer(value, expected):
    assert parse_answer(value) == expected


def test_score_formula():
    assert checklist_score(0, 5) == 1.0
    assert checklist_score(5, 5) == 5.0
    assert checklist_score(3, 5) == pytest.approx(1 + 4 * 3 / 5)
    assert checklist_score(2, 3) == pytest.approx(1 + 8 / 3)
    with pytest.raises(ValueError):
        checklist_score(0, 0)


def test_legacy_count_is_case_sensitive_substring():
    assert legacy_count(["Yes", "yes", "YES", "No", "Yes, Yes", True, None]) == 3


async def test_all_answered_any_case(checklist, item):
    llm = FakeLLM({"ChecklistAnswers": {"q1": "yes", "q2": "YES", "q3": " No ", "q4": "Yes",
                                        "q5": "no"}})
    score = await score_text(checklist, item, llm)
    assert score.status == "ok"
    assert (score.yes, score.answered, score.questions) == (3, 5, 5)
    assert score.score == pytest.approx(1 + 4 * 3 / 5)
    assert score.unanswered == [] and score.note == ""
    assert [a.answer for a in score.answers] == ["yes", "yes", "no", "yes", "no"]
    assert score.answers[2].raw == " No "
    assert (score.source_id, score.system, score.human) == ("d1", "M1", 4.0)
    prompt = llm.prompts[0]
    assert "The article." in prompt and "A short summary." in prompt
    assert "q3. Are pronouns clear?" in prompt
    assert "How well the sentences hang together." in prompt


async def test_unanswered_are_reported_not_counted_as_no(checklist, item):
    llm = FakeLLM({"ChecklistAnswers": {"q1": "yes", "q2": "yes", "q3": "yes", "q4": "maybe"}})
    score = await score_text(checklist, item, llm)
    # 2 of 5 unanswered = 40 % > 20 %: failed, no score, and the answers are kept
    assert score.status == "failed" and score.score is None
    assert score.unanswered == [4, 5]
    assert "too many questions unanswered" in score.note.lower()
    assert score.answers[3].raw == "maybe" and score.answers[3].answer is None
    # allowing 40 %: scored over the 3 answered questions, and the note says so
    lenient = ScoringSettings(max_unanswered_share=0.4)
    score = await score_text(checklist, item, llm, settings=lenient)
    assert score.status == "ok"
    assert score.score == pytest.approx(5.0)  # 3 yes of 3 answered, not 3 of 5
    assert (score.answered, score.questions) == (3, 5)
    assert "2 of 5 questions unanswered (q4, q5)" in score.note
    assert "score over the 3 answered questions" in score.note


async def test_one_missing_answer_within_the_allowed_share(checklist, item):
    llm = FakeLLM({"ChecklistAnswers": {"q1": "no", "q2": "yes", "q3": "yes", "q5": "no"}})
    score = await score_text(checklist, item, llm)
    assert score.status == "ok"
    assert score.score == pytest.approx(1 + 4 * 2 / 4)
    assert score.unanswered == [4]


async def test_nothing_answered_fails(checklist, item):
    llm = FakeLLM({"ChecklistAnswers": {"answer": "The summary is fine."}})
    score = await score_text(checklist, item, llm, settings=ScoringSettings(max_unanswered_share=1))
    assert score.status == "failed" and score.score is None
    assert "no question was answered" in score.note.lower()
    assert "answer" in score.note  # the stray key is mentioned


async def test_extra_keys_and_uppercase_keys(checklist, item):
    llm = FakeLLM({"ChecklistAnswers": {"Q1": "yes", "q2": "yes", "3": "no", "q4": "no",
                                        "q5": "yes", "comment": "looks good"}})
    score = await score_text(checklist, item, llm)
    assert score.status == "ok"
    assert [a.answer for a in score.answers] == ["yes", "yes", "no", "no", "yes"]
    assert "comment" in score.note and "ignored" in score.note


async def test_booleans_count_as_yes_and_no(checklist, item):
    llm = FakeLLM({"ChecklistAnswers": {"q1": True, "q2": False, "q3": True, "q4": True,
                                        "q5": False}})
    score = await score_text(checklist, item, llm)
    assert score.score == pytest.approx(1 + 4 * 3 / 5)


async def test_legacy_count_on_crafted_replies(checklist, item):
    legacy = ScoringSettings(counting="legacy")
    # lowercase "yes" is not counted by the authors' rule; "Yes, Yes" counts twice
    llm = FakeLLM({"ChecklistAnswers": {"q1": "yes", "q2": "Yes", "q3": "Yes, Yes", "q4": "No",
                                        "q5": "YES"}})
    score = await score_text(checklist, item, llm, settings=legacy)
    assert score.status == "ok"
    assert score.score == pytest.approx(1 + 4 * 3 / 5)
    assert score.legacy_score == score.score
    assert "legacy count" in score.note.lower()
    # the answers-based score of the same reply: yes, Yes, "Yes, Yes", YES -> 4 yes of 5
    normal = await score_text(checklist, item, llm)
    assert normal.score == pytest.approx(1 + 4 * 4 / 5)
    assert normal.legacy_score == pytest.approx(1 + 4 * 3 / 5)


async def test_model_failure_gives_a_failed_text_not_a_score(checklist, item):
    llm = FakeLLM({"ChecklistAnswers": failure("Rate limit reached (tried 5 times).",
                                               "rate_limit")})
    score = await score_text(checklist, item, llm)
    assert score.status == "failed" and score.score is None
    assert "Rate limit reached" in score.note
    assert score.unanswered == [1, 2, 3, 4, 5]


async def test_per_question_mode(checklist, item):
    def reply(messages, schema):
        assert schema.__name__ == "SingleAnswer"
        prompt = messages[-1]["content"]
        if "Are pronouns clear?" in prompt:
            return failure("The server had an error.", "server")
        return {"answer": "No" if "organised" in prompt else "Yes"}

    llm = FakeLLM(reply)
    settings = ScoringSettings(mode="per_question", max_unanswered_share=0.2)
    score = await score_text(checklist, item, llm, settings=settings)
    assert len(llm.calls) == 5
    assert score.status == "ok"
    assert score.unanswered == [3]
    assert score.score == pytest.approx(1 + 4 * 3 / 4)
    assert "1 of 5 questions got no answer" in score.note
    assert score.answers[2].raw == "(no answer: server)"


async def test_empty_checklist_or_text_fails(item):
    empty = Checklist(dimension="Fluency")
    score = await score_text(empty, item, FakeLLM({}))
    assert score.status == "failed" and "no questions" in score.note
    checklist = Checklist(dimension="Fluency", items=[ChecklistItem(question="Fluent?")])
    blank = TextItem(id="t2", text="   ")
    score = await score_text(checklist, blank, FakeLLM({}))
    assert score.status == "failed" and "empty" in score.note


def test_answers_schema_asks_for_yes_or_no_on_every_question():
    schema = answers_schema(3).model_json_schema()
    assert schema["required"] == ["q1", "q2", "q3"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["q2"] == {"type": "string", "enum": ["yes", "no"]}


# ----------------------------------------------------------------------- through the gateway
@pytest.fixture
def scripted():
    from core.llm import ScriptedLLM

    made = []

    def make(replies, **kw):
        llm = ScriptedLLM(replies, name=f"ie-scoring-{len(made)}", **kw)
        made.append(llm)
        return llm

    yield make
    for llm in made:
        llm.close()


async def test_gateway_path_parses_case_and_missing(scripted, checklist, item):
    from core.llm import Gateway, MemoryCache

    llm = scripted({"The questions:": '{"q1": "YES", "q2": "yes", "q3": "No", "q4": " yes "}'})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    score = await score_text(checklist, item, gateway)
    assert score.status == "ok"
    assert score.unanswered == [5]
    assert score.score == pytest.approx(1 + 4 * 3 / 4)
    assert llm.calls == 1


async def test_gateway_reasks_after_invalid_json(scripted, checklist, item):
    from core.llm import Gateway, MemoryCache

    good = '{"q1": "yes", "q2": "no", "q3": "yes", "q4": "yes", "q5": "no"}'
    llm = scripted({"The questions:": ['{"q1": "yes", "q2": ', good]})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    score = await score_text(checklist, item, gateway)
    assert llm.calls == 2  # asked once more with the problem
    assert "could not be used" in llm.prompts[1]
    assert score.status == "ok" and score.score == pytest.approx(1 + 4 * 3 / 5)


async def test_gateway_gives_up_after_one_reask(scripted, checklist, item):
    from core.llm import Gateway, MemoryCache

    llm = scripted({"The questions:": "I think the summary is good."})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    score = await score_text(checklist, item, gateway)
    assert llm.calls == 2
    assert score.status == "failed" and score.score is None
    assert "expected form" in score.note
