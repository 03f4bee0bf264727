"""Structured output that cannot break on text (issue 29): quotes, backslashes, newlines, tabs,
emoji, right-to-left text and grammar-like characters inside enum values, property names and
constants, through every reply schema the methods build, with the real engine (the bundled
Gemma 3 270M in llama-server).

The in-process engine used before turned a schema whose ``enum`` held a sentence with a double
quote into a broken grammar and died with a segmentation fault, taking the window with it. Here
every schema must be accepted, the engine must not stop, and a value the model picks from an
enum must come back exactly as written."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, create_model

from core.documents import sentences_of
from core.interacteval import (
    attribute_clustering,
    checklist_scoring,
    component_extraction,
    key_questions,
    sub_questions,
    validation,
)
from core.interacteval.single_judge import JudgeReply
from core.interacteval.think_aloud import Considerations
from core.llm import Gateway, LLMFailure, MemoryCache
from core.majeval import persona_construction, perspective_extraction, stakeholder_grouping
from core.majeval.model import Dimension, Scale, debate_reply_schema, evaluation_schema
from core.settings import bundled_profile

pytestmark = pytest.mark.slow

#: Sentences as real studies and notes have them.
NASTY = [
    ('One mother explained: "I want questions that make her wonder ..." and welcomed '
    "suggestions."),
    "A teacher kept her notes in C:\\Users\\teacher\\notes\\ and typed \\n by mistake.",
    "The first line ended here\nand the second\tcarried a tab.",
    "The children laughed 😀👍🏽 and asked for another story.",
    "قالت المعلمة إن الأسئلة القصيرة أفضل للأطفال.",
    'המורה אמרה: "שאלות קצרות עדיפות".',
    'A parser might choke on root ::= [a-z]+ | "x" (y)* {z} or on \\u0041 and \\".',
]
STUDY = " ".join(NASTY)
NAMES = ['Parents ("home readers")', "Teachers\\assistants", "Grand-parents 👵", "الأهل"]
COMPONENTS = ('Clarity "for kids"', "Tone\\style", "Emoji use 😀", "وضوح")


def schemas() -> list[tuple[str, Any]]:
    """(name, reply schema) for every schema builder of the methods, fed the texts above."""
    dimensions = [Dimension(name=name) for name in COMPONENTS]
    return [
        ("majeval stakeholders", perspective_extraction.reply_schema(STUDY)),
        ("majeval grouping", stakeholder_grouping.grouping_schema(NAMES, 3)),
        ("majeval personas", persona_construction.persona_schema(2)),
        ("majeval evaluation", evaluation_schema(dimensions, Scale())),
        ("majeval debate turn", debate_reply_schema(dimensions, Scale())),
        ("interacteval components", component_extraction._reply_schema(3)),
        ("interacteval note names", component_extraction.note_names_schema(NASTY[:3])),
        ("interacteval clusters", attribute_clustering.clusters_schema(COMPONENTS, 4)),
        ("interacteval placements", attribute_clustering.placements_schema(COMPONENTS, [1, 2])),
        ("interacteval key questions", key_questions._reply_schema(COMPONENTS)),
        ("interacteval sub-questions", sub_questions._reply_schema(COMPONENTS)),
        ("interacteval validation", validation._reply_schema(NASTY[:3], 2)),
        ("interacteval checklist answers", checklist_scoring.answers_schema(3)),
        ("interacteval single judge", JudgeReply),
        ("interacteval think-aloud", Considerations),
    ]


def messages(name: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": f"You answer in JSON for the step '{name}'. Quote the "
         "texts exactly as written."},
        {"role": "user", "content": "Texts:\n" + "\n".join(f"- {t}" for t in NASTY)
         + "\nNames: " + "; ".join(NAMES) + "\nComponents: " + "; ".join(COMPONENTS)},
    ]


def profile(**overrides):
    return bundled_profile().model_copy(update={"max_tokens": 240, "max_concurrency": 4,
                                                "max_retries": 0, **overrides})


@pytest.mark.timeout(1800)  # 15 answers from a CPU model (about a minute on a quiet machine)
async def test_every_methods_schema_is_taken_with_awkward_text(bundled_model):
    gateway = Gateway(profile(), cache=MemoryCache())
    await gateway.complete_text("Warm up.")
    engine = gateway._engine
    pid = engine.process.pid

    async def one(name: str, schema: Any) -> tuple[str, Any]:
        try:
            return name, await gateway.complete_json(messages(name), schema)
        except LLMFailure as failure:
            return name, failure

    outcomes = await asyncio.gather(*[one(name, schema) for name, schema in schemas()])
    for name, outcome in outcomes:
        if isinstance(outcome, LLMFailure):
            # a tiny model may write a poor answer, but the engine must have taken the schema
            assert outcome.kind in ("invalid_output", "rejected_output", "copied_instructions"), \
                (name, outcome.kind, outcome.message)
        else:
            assert isinstance(outcome, BaseModel), name
    assert engine.process.pid == pid and engine.running() and engine.crashes == 0
    assert sum(not isinstance(o, LLMFailure) for _, o in outcomes) >= len(outcomes) // 3


async def test_enum_values_come_back_exactly_as_written(bundled_model):
    """Each sentence (and each of its pieces) offered as the only allowed answer is returned
    character for character: the quotes, backslashes, tab, newline, emoji and RTL text were
    passed to the engine's grammar correctly."""
    gateway = Gateway(profile(max_tokens=200), cache=MemoryCache())
    offered = [s for text in NASTY for s in sentences_of(text)] + NASTY

    async def pick(value: str) -> str:
        def held(js: dict[str, Any]) -> None:
            js["properties"]["evidence"]["enum"] = [value]

        schema = create_model("Pick", __config__=ConfigDict(json_schema_extra=held),
                              evidence=(str, ...))
        reply = await gateway.complete_json(
            [{"role": "user", "content": f"Copy this text: {value}"}], schema)
        return reply.evidence

    returned = await asyncio.gather(*[pick(v) for v in offered])
    assert returned == offered
    # several allowed values at once: the answer is one of them, unchanged
    schema = perspective_extraction.reply_schema(STUDY)
    sent = json.dumps(schema.model_json_schema(), ensure_ascii=False)
    assert '\\"I want questions' in sent  # the schema carries the quote escaped, as JSON does
