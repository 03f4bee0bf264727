"""A tiny fake model for the InteractEval stage tests (the gateway path is tested with
``core.llm.ScriptedLLM`` separately)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from core.interacteval import Attribute, Checklist, ChecklistItem, Dimension, ScoredSample
from core.llm import LLMFailure


class FakeLLM:
    """Replies chosen by the reply schema's class name (or by a function of the messages).

    A reply is a dict (validated into the schema), an exception to raise, or a list of those
    used in turn. Every call is recorded as (messages, schema, template_version)."""

    def __init__(self, replies: Mapping[str, Any] | Callable[[list, type], Any]) -> None:
        self.replies = replies
        self.calls: list[tuple[list[dict[str, Any]], type, str]] = []
        self._turn: dict[str, int] = {}

    @property
    def prompts(self) -> list[str]:
        return [m[-1]["content"] for m, _, _ in self.calls]

    async def complete_json(self, messages, schema, *, repeat=0, template_version="",
                            cancel=None, check=None):
        if cancel is not None:
            cancel.raise_if_cancelled()
        self.calls.append((list(messages), schema, template_version))
        if callable(self.replies):
            reply = self.replies(list(messages), schema)
        else:
            reply = self.replies[schema.__name__]
            if isinstance(reply, list):
                turn = self._turn.get(schema.__name__, 0)
                self._turn[schema.__name__] = turn + 1
                reply = reply[min(turn, len(reply) - 1)]
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, str):
            value = schema.model_validate_json(reply)
        else:
            value = schema.model_validate(json.loads(json.dumps(reply)))
        rejection = check(value) if check is not None else None
        if rejection:  # as the gateway does after asking again (this fake answers the same)
            problem = getattr(rejection, "problem", rejection)
            raise LLMFailure(getattr(rejection, "kind", "rejected_output"), str(problem))
        return value


def failure(message: str = "The model is unreachable.", kind: str = "connection") -> LLMFailure:
    return LLMFailure(kind, message)


@pytest.fixture
def coherence() -> Dimension:
    return Dimension(name="Coherence", definition="The collective quality of all sentences.")


@pytest.fixture
def samples() -> list[ScoredSample]:
    return [
        ScoredSample(source=f"Article {i}", text=f"Summary {i}.", score=s)
        for i, s in enumerate([1.0, 2.33, 3.67, 5.0], 1)
    ]


@pytest.fixture
def attributes() -> list[Attribute]:
    return [
        Attribute(text="Sentences follow each other logically.", source="GPT", source_kind="model"),
        Attribute(text="The summary has a clear structure.", source="GPT", source_kind="model"),
        Attribute(text="Pronouns point to something clear.", source="Anna", source_kind="person"),
        Attribute(text="No abrupt jumps between topics.", source="Anna", source_kind="person"),
        Attribute(text="Ends with a conclusion.", source="Llama", source_kind="model"),
    ]


@pytest.fixture
def scripted():
    from core.llm import ScriptedLLM

    made = []

    def make(replies, **kw):
        llm = ScriptedLLM(replies, name=f"ie-core-{len(made)}", **kw)
        made.append(llm)
        return llm

    yield make
    for llm in made:
        llm.close()


@pytest.fixture
def checklist() -> Checklist:
    return Checklist(dimension="Coherence", definition="Hangs together.", items=[
        ChecklistItem(component="Flow", question="Does it flow?"),
        ChecklistItem(component="Flow", question="Is it organised?")])
