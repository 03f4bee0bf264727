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
from core.interacteval.session import scoring

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


def test_legacy_count_is_case_sensitive_substring_once_per_answer():
    assert legacy_count(["Yes", "yes", "YES", "No", "Yes, Yes", True, None]) == 2


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
    # q4 and q5 are asked again; still unanswered: incomplete, no score, the answers are kept
    assert score.status == "incomplete" and score.score is None
    assert score.unanswered == [4, 5]
    assert "2 of 5 questions still unanswered after asking again (q4, q5)" in score.note
    assert score.answers[3].raw == "maybe" and score.answers[3].answer is None
    assert (score.yes, score.answered, score.questions) == (3, 3, 5)


async def test_a_missing_answer_given_when_asked_again(checklist, item):
    llm = FakeLLM({"ChecklistAnswers": [{"q1": "no", "q2": "yes", "q3": "yes", "q5": "no"},
                                        {"q4": "yes"}]})
    score = await score_text(checklist, item, llm)
    assert score.status == "ok" and score.unanswered == []
    assert score.score == pytest.approx(1 + 4 * 3 / 5)


async def test_nothing_answered_fails(checklist, item):
    llm = FakeLLM({"ChecklistAnswers": {"answer": "The summary is fine."}})
    score = await score_text(checklist, item, llm)
    assert score.status == "failed" and score.score is None
    assert "answers none of the questions" in score.note.lower()
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
    # lowercase "yes" and "YES" are not counted by the authors' rule; "Yes, Yes" counts once
    llm = FakeLLM({"ChecklistAnswers": {"q1": "yes", "q2": "Yes", "q3": "Yes, Yes", "q4": "No",
                                        "q5": "YES"}})
    score = await score_text(checklist, item, llm, settings=legacy)
    assert score.status == "ok"
    assert score.score == pytest.approx(1 + 4 * 2 / 5)
    assert score.legacy_score == score.score
    assert "legacy count" in score.note.lower()
    # the answers-based score of the same reply: yes, Yes, "Yes, Yes", YES -> 4 yes of 5
    normal = await score_text(checklist, item, llm)
    assert normal.score == pytest.approx(1 + 4 * 4 / 5)
    assert normal.legacy_score == pytest.approx(1 + 4 * 2 / 5)


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
    settings = ScoringSettings(mode="per_question")
    score = await score_text(checklist, item, llm, settings=settings)
    assert len(llm.calls) == 5
    assert score.status == "incomplete" and score.score is None
    assert score.unanswered == [3]
    assert "1 of 5 questions still unanswered after asking again (q3)" in score.note
    assert "The server had an error" in score.note
    assert score.answers[2].raw == "(no answer: server)"
    assert score.failure_kind == "server"


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

    llm = scripted({"The questions:": ['{"q1": "YES", "q2": "yes", "q3": "No", "q4": " yes "}',
                                       '{"q5": "No"}']})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    score = await score_text(checklist, item, gateway)
    assert score.status == "ok"
    assert score.unanswered == []
    assert score.score == pytest.approx(1 + 4 * 3 / 5)
    assert llm.calls == 2  # q5 was asked again, alone
    assert "q5. Is it on topic?" in llm.prompts[1] and "q1." not in llm.prompts[1]


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


# ------------------------------------------------------------- paper Eq. 1 over every question
def _fifteen() -> Checklist:
    return Checklist(dimension="Coherence", definition="Hangs together.",
                     items=[ChecklistItem(component="C", question=f"Question {i}?")
                            for i in range(1, 16)])


NINE_YES_THREE_NO = {**{f"q{i}": "yes" for i in range(1, 10)},
                     **{f"q{i}": "no" for i in range(10, 13)}}


async def test_unanswered_questions_give_no_score_not_a_score_over_the_answered(item):
    """15 questions, 9 yes, 3 no, 3 unanswered (also when asked again): never 1 + 4 * 9/12 = 4.0;
    the text is incomplete, has no score and lists the questions."""
    llm = FakeLLM({"ChecklistAnswers": NINE_YES_THREE_NO})
    score = await score_text(_fifteen(), item, llm)
    assert score.score is None and score.status == "incomplete"
    assert score.unanswered == [13, 14, 15]
    assert "q13, q14, q15" in score.note and "no score" in score.note
    assert score.legacy_score is None
    # the missing questions were asked again, and only they
    assert len(llm.calls) == 2
    again = llm.prompts[1]
    assert "q13. Question 13?" in again and "q1. Question 1?" not in again


async def test_questions_answered_when_asked_again_count_over_the_whole_checklist(item):
    llm = FakeLLM({"ChecklistAnswers": [NINE_YES_THREE_NO,
                                        {"q13": "no", "q14": "No", "q15": "no"}]})
    score = await score_text(_fifteen(), item, llm)
    assert score.status == "ok" and score.unanswered == []
    assert score.score == pytest.approx(1 + 4 * 9 / 15)  # 3.4, paper Eq. 1
    assert score.score != pytest.approx(4.0)


def test_checklist_score_is_over_the_number_of_questions():
    assert checklist_score(9, 15) == pytest.approx(3.4)
    with pytest.raises(ValueError):
        checklist_score(16, 15)


async def test_legacy_count_stays_on_the_scale(checklist, item):
    """The legacy count counts per question (a question whose answer holds "Yes"), never more
    than the number of questions, and says what it reproduces."""
    legacy = ScoringSettings(counting="legacy")
    llm = FakeLLM({"ChecklistAnswers": {"q1": "Yes, Yes", "q2": "Yes", "q3": "Yes Yes Yes",
                                        "q4": "yes", "q5": "Yes", "comment": "Yes Yes Yes"}})
    score = await score_text(checklist, item, llm, settings=legacy)
    assert score.status == "ok"
    assert score.score == pytest.approx(1 + 4 * 4 / 5)  # q4's lowercase "yes" is not counted
    assert 1.0 <= score.score <= 5.0
    assert "authors' code" in score.note
    assert legacy_count(["Yes, Yes", "Yes"]) == 2


async def test_per_question_mode_asks_an_unusable_answer_again(scripted, checklist, item):
    from core.llm import Gateway, MemoryCache

    llm = scripted({"Are pronouns clear?": ['{"answer": "maybe"}', '{"answer": "no"}'],
                    "The question": '{"answer": "yes"}'})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    score = await score_text(checklist, item, gateway,
                             settings=ScoringSettings(mode="per_question"))
    assert llm.calls == 6  # five questions, one asked again
    assert score.status == "ok" and score.score == pytest.approx(1 + 4 * 4 / 5)


async def test_an_incomplete_text_is_retried_on_resume(tmp_path, scripted, item):
    """Through the gateway with the project as cache: the questions still unanswered are asked
    again when scoring resumes (an unusable answer is never taken from the cache)."""
    from core.llm import Gateway
    from core.project import Project

    state = {"resumed": False}
    full = "{" + ", ".join(f'"{k}": "{v}"' for k, v in NINE_YES_THREE_NO.items()) + "}"

    def reply(messages):
        prompt = messages[1]["content"]
        if "q1. Question 1?" in prompt:
            return full
        if state["resumed"]:
            return '{"q13": "yes", "q14": "no", "q15": "yes"}'
        return '{"q13": "maybe", "q14": "maybe", "q15": "maybe"}'

    llm = scripted(reply)
    checklist = _fifteen()
    settings = ScoringSettings()
    with Project.create(tmp_path / "p.evaldesk") as project:
        run_id = scoring.open_scoring_run(project, [checklist], settings, llm.model)
        gateway = Gateway(llm.profile(), cache=project, run_id=run_id)
        first = await scoring.score_texts([checklist], [item], gateway, settings=settings,
                                  model=llm.model, project=project, run_id=run_id)
        assert first.scores[0].status == "incomplete" and first.scores[0].score is None
        state["resumed"] = True
        before = llm.calls
        run_id = scoring.open_scoring_run(project, [checklist], settings, llm.model)
        gateway = Gateway(llm.profile(), cache=project, run_id=run_id)
        second = await scoring.score_texts([checklist], [item], gateway, settings=settings,
                                   model=llm.model, project=project, run_id=run_id)
    assert llm.calls - before == 1  # only the three missing questions, once
    assert second.scores[0].status == "ok"
    assert second.scores[0].score == pytest.approx(1 + 4 * 11 / 15)


async def test_texts_in_flight_are_limited_by_the_models_concurrency(checklist):
    """Scoring takes texts a few at a time (four times the model's concurrency): started all at
    once, 6,400 texts built every prompt before the first request could leave, holding the
    event loop (and the window) for 2.5 s."""
    import asyncio
    from types import SimpleNamespace

    from core.interacteval import score_texts

    inside, most = 0, 0

    class Slow(FakeLLM):
        profile = SimpleNamespace(max_concurrency=2)

        async def complete_json(self, messages, schema, **kw):
            nonlocal inside, most
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.001)
            inside -= 1
            return await super().complete_json(messages, schema, **kw)

    llm = Slow({"ChecklistAnswers": {f"q{i}": "yes" for i in range(1, 6)}})
    items = [TextItem(id=f"t{i}", text=f"Summary {i}.", source="The article.")
             for i in range(60)]
    run = await score_texts([checklist], items, llm)
    assert [s.text_id for s in run.scores] == [f"t{i}" for i in range(60)]
    assert all(s.status == "ok" for s in run.scores)
    assert most == 8  # max(8, 4 x 2): never all 60 texts at once
