"""Fixtures of the MAJ-Eval tests: a scripted panel of agents that answers through the real
gateway (``core.llm.ScriptedLLM``), and items. The helpers are in ``majeval_support``."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from core.majeval import Item

_names = itertools.count()


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
