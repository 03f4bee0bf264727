"""Fixtures for the LLM gateway tests: scripted models and recorded retry waits (the bundled
GGUF and a fresh usage count per test are in the root conftest)."""

from __future__ import annotations

import asyncio

import pytest

from core.llm import _gateway


@pytest.fixture
def scripted(scripted_llm):
    """``scripted(replies, **kw)``: a ScriptedLLM (see the root conftest's ``scripted_llm``)."""
    return scripted_llm


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The gateway's retry waits, recorded instead of slept (tests stay fast; no timing)."""
    recorded: list[float] = []

    async def fake_sleep(seconds: float, cancel=None) -> None:
        recorded.append(seconds)
        if cancel is not None:
            cancel.raise_if_cancelled()
        await asyncio.sleep(0)

    monkeypatch.setattr(_gateway, "_sleep", fake_sleep)
    return recorded
