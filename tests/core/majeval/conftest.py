"""Helpers for the MAJ-Eval tests: personas, items, and a scripted panel of agents that answers
through the real gateway (``core.llm.ScriptedLLM``)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import pytest

from core.majeval import Item, Persona
from tests.core.majeval.prompt_kinds import kind, speaker  # noqa: F401 (used by the tests)

_names = itertools.count()


def persona(group: str, name: str, **kw: Any) -> Persona:
    values = {"demographics": f"{name} is 40 and works in a school.",
                  "perspective": f"{name} cares about age-appropriate questions.",
                  "specialty": "Reading with children.", "psychological_traits": "Patient.",
                  "social_relationships": "Works with parents."}
    values.update(kw)
    return Persona(id=f"{group}/{name}", group=group, name=name, **values)


def item_of(messages: list[dict[str, Any]]) -> str:
    text = messages[0]["content"]
    found = re.search(r'content to judge:\n"""\n(.*?)\n"""', text, re.DOTALL)
    return found.group(1) if found else ""


def evaluation(score: int, why: str = "fine", dim: str = "Overall quality") -> dict:
    return {"rationale": why, "scores": {dim: score}}


def turn(message: str, score: int, done: bool = False, dim: str = "Overall quality") -> dict:
    return {"message": message, "no_more_comments": done, "scores": {dim: score}}


SYNTHESIS = {"agreement": "They agree it is clear.", "disagreement": "Lee finds it too hard.",
             "overall": "Mostly suitable."}


@pytest.fixture
def scripted():
    """``scripted(reply_fn, **kw)`` -> (ScriptedLLM, Gateway over a MemoryCache)."""
    from core.llm import Gateway, MemoryCache, ScriptedLLM

    made = []

    def make(replies: Callable[[list[dict[str, Any]]], Any], *, cache=None, run_id=None,
             **profile):
        llm = ScriptedLLM(replies, name=f"majeval-{next(_names)}")
        made.append(llm)
        gateway = Gateway(llm.profile(max_retries=0, **profile),
                          cache=cache if cache is not None else MemoryCache(), run_id=run_id)
        return llm, gateway

    yield make
    for llm in made:
        llm.close()


@pytest.fixture
def items() -> list[Item]:
    return [Item(id="q1", content="Q: Why is the sky blue? A: Because of the sea.",
                 context="A story about the sea.", human={"Overall quality": 2}),
            Item(id="q2", content="Q: What does a fox eat? A: Mice and berries.",
                 context="A story about a fox.", human={"Overall quality": 5})]
