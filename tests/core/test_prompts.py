"""core.prompts: one template type for every method, and replies that copy our instructions."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from core import prompts
from core.llm import Gateway, LLMFailure, MemoryCache

RAW = """# a test template
version: test-1
[system]
You read a text and name the people it talks about (for example parents or teachers).
Write one sentence on each, and quote the supporting sentence copied from the text.
[user]
Text:
$text
Reply with JSON only: $format
"""


class Person(BaseModel):
    name: str
    summary: str = Field(description="one sentence about them, in your own words")
    evidence: str = ""


class People(BaseModel):
    people: list[Person]


def template() -> prompts.PromptTemplate:
    return prompts.parse("test", "people", RAW)


def test_parse_fill_and_version():
    t = template()
    assert t.template_version == "test/test-1"
    messages = t.messages(text="Parents worry.", format="{...}")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Parents worry." in messages[1]["content"]
    with pytest.raises(ValueError, match="needs a value for 'format'"):
        t.messages(text="x")
    with pytest.raises(ValueError, match="version"):
        prompts.parse("test", "bad", "[user]\nhello")


def test_the_shipped_templates_of_both_llm_methods_load():
    for method in ("majeval", "interacteval"):
        folder = prompts.template_path(method, "x").parent
        for path in folder.glob("*.txt"):
            t = prompts.load(method, path.stem)
            assert t.template_version.startswith(f"{method}/")


@pytest.mark.parametrize(
    "text, copied",
    [
        ("group name", True),  # a placeholder word
        ("Full Name", True),
        ("...", True),
        ("<the stakeholder>", True),
        ("the supporting sentence copied from the text", True),  # our wording, 7 words
        ("Write one sentence on each", True),
        ("parents or teachers", False),  # in our wording, but also in the document
        ("teachers", False),  # one word: only placeholders count
        ("Teachers want children to read more", False),
        ("", True),
    ],
)
def test_copied_text(text, copied):
    material = "Parents or teachers said: teachers want children to read more."
    assert prompts.copied_text(text, template().wording(), material) is copied


def test_reply_strings_walks_models_and_mapping_keys_but_not_field_names():
    reply = People(people=[Person(name="Ann", summary="s", evidence="e")])
    found = dict(prompts.reply_strings(reply))
    assert found == {"people.0.name": "Ann", "people.0.summary": "s", "people.0.evidence": "e"}
    assert ("q1 (name)", "q1") in list(prompts.reply_strings({"q1": "yes"}))


async def test_ask_rejects_a_copy_of_the_example_and_says_which_field(scripted_llm):
    copy = {"people": [{"name": "parents", "summary": "one sentence about them, in your own words",
                        "evidence": "Parents worry."}]}
    llm = scripted_llm({"Reply with JSON": copy})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    with pytest.raises(LLMFailure) as caught:
        await prompts.ask(gateway, template(), People,
                          {"text": "Parents worry about screens.", "format": "a list"})
    assert caught.value.kind == "copied_instructions"
    assert "people.0.summary" in caught.value.message  # the schema's description was copied
    assert llm.calls == 2  # asked again once


async def test_ask_passes_a_real_answer_and_runs_the_stage_check(scripted_llm):
    real = {"people": [{"name": "Parents", "summary": "They worry about screen time.",
                        "evidence": "Parents worry about screens."}]}
    llm = scripted_llm({"Reply with JSON": real})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    values = {"text": "Parents worry about screens.", "format": "a list of people"}
    reply = await prompts.ask(gateway, template(), People, values)
    assert reply.people[0].name == "Parents"

    def grounded(value: People):
        missing = [p.evidence for p in value.people if p.evidence not in values["text"]]
        return f"evidence not in the text: {missing}" if missing else None

    assert (await prompts.ask(gateway, template(), People, values, check=grounded)) == reply
    bad = scripted_llm({"Reply with JSON": {**real, "people": [{**real["people"][0],
                                                             "evidence": "Invented."}]}},
                   name="bad")
    with pytest.raises(LLMFailure) as caught:
        await prompts.ask(Gateway(bad.profile(), cache=MemoryCache()), template(), People,
                          values, check=grounded)
    assert caught.value.kind == "rejected_output" and "Invented." in caught.value.message


async def test_our_own_words_given_as_a_value_count_as_instructions(scripted_llm):
    copy = {"people": [{"name": "Ann", "summary": "a short line on the person", "evidence": ""}]}
    llm = scripted_llm({"Reply with JSON": copy})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    values = {"text": "Ann teaches.", "format": '{"summary": "a short line on the person"}'}
    assert (await prompts.ask(gateway, template(), People, values)).people[0].name == "Ann"
    with pytest.raises(LLMFailure):
        await prompts.ask(gateway, template(), People, values, own_words=["format"])


@pytest.mark.parametrize(("text", "found"), [
    ("The election user user user", "user user user"),
    ("The storm is coming. The election is coming. The storm is coming.",
     "The storm is coming."),
    ("Does the summary follow the order of events?", ""),
    ("Is it very, very clear? Is it short?", ""),
])
def test_a_model_stuck_in_a_loop_is_recognised(text, found):
    assert prompts.repeats_itself(text) == found


async def test_a_reply_that_repeats_itself_is_refused_unless_the_material_does(scripted_llm):
    template = prompts.PromptTemplate("test", "loop", "loop-1", "Answer.", "Text: $text")

    class Reply(BaseModel):
        answer: str

    llm = scripted_llm(lambda messages: {"answer": "so so so"})
    gateway = Gateway(llm.profile(max_retries=0), cache=MemoryCache())
    with pytest.raises(LLMFailure, match="repeats itself"):
        await prompts.ask(gateway, template, Reply, {"text": "A calm day."}, refuse_loops=True)
    assert llm.calls == 2  # asked again once
    reply = await prompts.ask(gateway, template, Reply, {"text": "She said so so so."},
                              refuse_loops=True)
    assert reply.answer == "so so so"  # quoted from what it was given
    llm.replies = lambda messages: {"answer": "no no no"}
    reply = await prompts.ask(gateway, template, Reply, {"text": "A calm day."})
    assert reply.answer == "no no no"  # not asked to refuse loops (a checklist's short answers)


async def test_the_schema_is_described_once_per_class_not_once_per_call(scripted_llm):
    """Building a pydantic model's JSON schema costs CPU on the event-loop thread; a scoring
    run asks thousands of times with one schema class, so its words are worked out once."""
    described = []

    class Counted(People):
        @classmethod
        def model_json_schema(cls, *args, **kwargs):
            described.append(cls)
            return super().model_json_schema(*args, **kwargs)

    real = {"people": [{"name": "Parents", "summary": "They worry about screen time.",
                        "evidence": "Parents worry about screens."}]}
    llm = scripted_llm({"Reply with JSON": real})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    for n in range(5):
        values = {"text": f"Parents worry about screens ({n}).", "format": "a list"}
        await prompts.ask(gateway, template(), Counted, values)
    ours = len(described)
    assert llm.calls == 5
    # the gateway's own schema text is cached too: one description for all five calls
    assert ours <= 2, ours
    # the copy check still knows the schema's words
    with pytest.raises(LLMFailure) as caught:
        await prompts.ask(Gateway(scripted_llm({"Reply with JSON": {"people": [{
            "name": "parents", "summary": "one sentence about them, in your own words"}]}},
            name="copy").profile(), cache=MemoryCache()), template(), Counted,
            {"text": "Parents worry.", "format": "a list"})
    assert caught.value.kind == "copied_instructions"
