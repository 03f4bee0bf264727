"""The real HTTP paths against a local misbehaving server: every test runs twice, once with
requests sent straight over HTTP (``_direct``, what an unknown ``openai/`` model gets) and once
through litellm's OpenAI-compatible client, so both paths fail, retry and count alike."""

from __future__ import annotations

import asyncio
import functools

import pytest
from pydantic import BaseModel

from core.llm import Gateway, LLMFailure, MemoryCache, _pool, check_connection
from core.runs import Cancelled, CancelToken
from core.secrets import set_api_key
from core.settings import ModelProfile
from tests.core.llm.fault_server import FaultServer, running_in_a_thread

#: ``_pool.plan`` as the gateway has it (the ``route`` fixture replaces it for the litellm runs)
PLAN = _pool.plan


class Score(BaseModel):
    score: int
    reason: str


@pytest.fixture(autouse=True, params=["direct", "litellm"])
def route(request, monkeypatch) -> str:
    """Which path an unknown ``openai/`` model's requests take (see the module docstring)."""
    if request.param == "litellm":
        monkeypatch.setattr(_pool, "plan", functools.partial(_pool.plan, direct=False))
    return request.param


@pytest.fixture
async def server():
    running = await FaultServer().start()
    yield running
    await running.stop()


def profile(server: FaultServer, mode: str, **overrides) -> ModelProfile:
    values = {
        "name": f"Test server {mode}",
        "model": "openai/test-model",
        "api_bases": [server.base(mode)],
        "timeout_s": 5,
        "max_retries": 3,
    }
    values.update(overrides)
    return ModelProfile(**values)


def ask(i: int = 0) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Rate answer {i} from 1 to 5 as JSON."}]


async def test_ok_through_http_sends_schema_and_key_and_caches(server):
    set_api_key("Test server ok", "sk-from-keyring")
    cache = MemoryCache()
    gateway = Gateway(profile(server, "ok"), cache=cache)
    assert await gateway.complete_json(ask(), Score) == Score(score=4, reason="fine")
    _, headers, body = server.requests[0]
    assert headers["Authorization"] == "Bearer sk-from-keyring"
    assert body["response_format"]["type"] == "json_schema"
    assert body["temperature"] == 0 and body["seed"] == 0
    assert (gateway.usage.prompt_tokens, gateway.usage.completion_tokens) == (11, 7)
    assert gateway.usage.calls_without_cost == 1  # nobody knows this model's price
    record = next(iter(cache.records.values()))
    assert record.api_base == server.base("ok")
    assert record.cost is None
    await Gateway(profile(server, "ok"), cache=cache).complete_json(ask(), Score)
    assert server.hits["ok"] == 1


async def test_prompt_tokens_from_the_providers_cache_are_counted_and_logged(server, tmp_path):
    from core.llm import session_usage
    from core.project import Project

    with Project.create(tmp_path / "p.evaldesk") as project:
        gateway = Gateway(profile(server, "cached"), cache=project)
        await gateway.complete_json(ask(), Score)
        await gateway.complete_json(ask(1), Score)
        assert gateway.usage.prompt_tokens == 22
        assert gateway.usage.cached_prompt_tokens == 16
        assert session_usage().cached_prompt_tokens == 16
        assert "16 from the provider's prompt cache" in gateway.usage.summary
        stored = project.llm_cache_get(next(iter(_keys(project))))
        assert stored["response"]["cached_prompt_tokens"] == 8
        assert project.llm_usage().cached_prompt_tokens == 16
    plain = Gateway(profile(server, "ok"), cache=MemoryCache())
    await plain.complete_json(ask(), Score)
    assert plain.usage.cached_prompt_tokens == 0  # not reported: none counted


def _keys(project):
    with project._reading() as conn:
        return [row[0] for row in conn.execute("SELECT cache_key FROM llm_calls")]


async def test_anthropic_models_get_cache_control_on_the_system_message_only():
    from core.llm._gateway import _mark_cached_prefix

    messages = [{"role": "system", "content": "You are Amy. The item..."},
                {"role": "user", "content": "The discussion so far: ..."}]
    marked = _mark_cached_prefix("anthropic/claude-3-7-sonnet-latest", messages)
    assert marked[0]["content"] == [{"type": "text", "text": "You are Amy. The item...",
                                     "cache_control": {"type": "ephemeral"}}]
    assert marked[1] == messages[1]
    assert messages[0]["content"] == "You are Amy. The item..."  # the caller's list untouched
    assert _mark_cached_prefix("openai/gpt-4o-mini", messages) is messages


async def test_cost_of_a_priced_model_comes_from_the_offline_price_map(server):
    from core.llm import session_usage
    from core.llm._litellm import litellm_module

    gateway = Gateway(profile(server, "ok", model="openai/gpt-4o-mini"), cache=MemoryCache())
    await gateway.complete_json(ask(), Score)
    prices = litellm_module().model_cost["gpt-4o-mini"]
    expected = 11 * prices["input_cost_per_token"] + 7 * prices["output_cost_per_token"]
    assert gateway.usage.cost == pytest.approx(expected)
    assert gateway.usage.calls_without_cost == 0
    assert session_usage().cost == pytest.approx(expected)


async def test_429_with_retry_after_then_success(server, waits):
    cache = MemoryCache()
    result = await Gateway(profile(server, "flaky429"), cache=cache).complete_json(ask(), Score)
    assert result.score == 4
    assert server.hits["flaky429"] == 2
    assert len(waits) == 1 and waits[0] >= 1.0  # the server's Retry-After
    assert len(cache) == 1


async def test_500_beyond_the_retry_cap(server, waits):
    cache = MemoryCache()
    gateway = Gateway(profile(server, "down", max_retries=3), cache=cache)
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_json(ask(), Score)
    assert caught.value.kind == "server"
    assert "upstream exploded" in caught.value.message
    assert "tried 4 times" in caught.value.message
    assert server.hits["down"] == 4 and len(waits) == 3
    assert len(cache) == 0


async def test_a_hang_past_the_timeout(server, waits):
    cache = MemoryCache()
    gateway = Gateway(profile(server, "hang", timeout_s=0.3, max_retries=1), cache=cache)
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_json(ask(), Score)
    assert caught.value.kind == "timeout"
    assert "did not answer in time" in caught.value.message
    assert server.hits["hang"] == 2
    assert len(cache) == 0


async def test_invalid_json_content_is_reasked_then_fails(server):
    cache = MemoryCache()
    with pytest.raises(LLMFailure) as caught:
        await Gateway(profile(server, "badjson"), cache=cache).complete_json(ask(), Score)
    assert caught.value.kind == "invalid_output"
    assert "score is four" in caught.value.message
    assert server.hits["badjson"] == 2
    reask = server.requests[1][2]["messages"]
    assert reask[-1]["role"] == "user" and "not valid JSON" in reask[-1]["content"]
    assert len(cache) == 0


async def test_401_fails_at_once_and_names_the_key(server, waits):
    check = await check_connection(profile(server, "auth"), api_key="sk-wrong")
    assert not check.ok
    assert "API key" in check.message and "Test server auth" in check.message
    assert server.hits["auth"] == 1 and waits == []


async def test_404_fails_at_once_and_names_model_and_url(server, waits):
    with pytest.raises(LLMFailure) as caught:
        await Gateway(profile(server, "missing"), cache=MemoryCache()).complete_text(ask())
    assert caught.value.kind == "not_found"
    assert "openai/test-model" in caught.value.message
    assert server.base("missing") in caught.value.message
    assert server.hits["missing"] == 1 and waits == []


async def test_connection_refused_is_retried_then_explained(waits):
    from tests.core.llm.fault_server import free_port

    base = f"http://127.0.0.1:{free_port()}/v1"  # nobody listens there
    gateway = Gateway(
        ModelProfile(name="Nobody", model="openai/x", api_bases=[base], max_retries=2),
        cache=MemoryCache(),
    )
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_text(ask())
    assert caught.value.kind == "connection"
    assert "Could not reach" in caught.value.message and base in caught.value.message
    assert len(waits) == 2


async def test_a_server_without_json_schema_gets_json_object_with_the_schema(server):
    result = await Gateway(profile(server, "oldstyle"), cache=MemoryCache()).complete_json(
        ask(), Score
    )
    assert result.score == 4
    styles = [body["response_format"]["type"] for _, _, body in server.requests]
    assert styles == ["json_schema", "json_object"]
    assert "properties" in server.requests[1][2]["response_format"]["schema"]
    # remembered: the next request goes straight to the style that works
    await Gateway(profile(server, "oldstyle"), cache=MemoryCache()).complete_json(ask(1), Score)
    assert server.requests[2][2]["response_format"]["type"] == "json_object"


@pytest.mark.parametrize("model", ["openai/test-model", "hosted_vllm/test-model"])
async def test_requests_on_the_wire_never_exceed_the_profile_limit(server, model):
    server.latency_s = 0.05
    gateway = Gateway(profile(server, "ok", model=model, max_concurrency=3), cache=MemoryCache())
    results = await asyncio.gather(*[gateway.complete_json(ask(i), Score) for i in range(24)])
    assert all(isinstance(r, Score) for r in results)
    assert gateway._pooled is not None  # one API base over HTTP: the connection pool keeps it
    assert server.peak == 3
    assert server.hits["ok"] == 24


async def test_the_calls_that_waited_for_a_new_servers_first_answer_then_go_together(server):
    """Until a server has answered one JSON request, its requests go one at a time (a burst
    would all fail the same way); once it has, the calls that were waiting go together. They
    used to go one at a time as well, each holding the lock for its whole request."""
    server.latency_s = 0.05
    gateway = Gateway(profile(server, "ok", max_concurrency=4), cache=MemoryCache())
    results = await asyncio.gather(*[gateway.complete_json(ask(i), Score) for i in range(4)])
    assert all(isinstance(r, Score) for r in results)
    assert server.peak == 3  # the first alone, then the three that waited for it


async def test_several_api_bases_keep_the_semaphore_as_the_limit(server):
    server.latency_s = 0.05
    two = profile(
        server, "ok", api_bases=[server.base("ok"), server.base("ok2")], max_concurrency=3
    )
    gateway = Gateway(two, cache=MemoryCache())
    results = await asyncio.gather(*[gateway.complete_json(ask(i), Score) for i in range(12)])
    assert all(isinstance(r, Score) for r in results)
    assert gateway._pooled is None
    assert server.peak == 3


def test_which_profiles_get_a_connection_limited_client(monkeypatch, route):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base = "http://127.0.0.1:9/v1"
    expected = "direct" if route == "direct" else "openai"  # a model litellm's prices do not know
    assert _pool.plan("openai/my-local-model", base, "no-key") == _pool.Pooled(expected, "no-key")
    assert _pool.plan("gpt-4o-mini", base, "sk-1") == _pool.Pooled("openai", "sk-1")
    assert _pool.plan("hosted_vllm/Qwen/Qwen2.5-7B", base, None) == _pool.Pooled("http", None)
    # models litellm sends to OpenAI's Responses API, other providers, no key: litellm's own
    assert _pool.plan("openai/gpt-5-pro", base, "sk-1") is None
    assert _pool.plan("ollama_chat/llama3", base, "sk-1") is None
    assert _pool.plan("openai/my-local-model", base, None) is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert _pool.plan("openai/my-local-model", base, None) == _pool.Pooled(expected, "sk-env")
    assert _pool.admitted(1) == 3 and _pool.admitted(16) == 20


async def test_calls_waiting_for_a_connection_time_out_too(server, waits):
    server.hang_s = 1.0
    one = profile(server, "hang", timeout_s=0.3, max_retries=0, max_concurrency=1)
    gateway = Gateway(one, cache=MemoryCache())
    results = await asyncio.gather(
        *[gateway.complete_json(ask(i), Score) for i in range(3)], return_exceptions=True
    )
    assert [getattr(r, "kind", r) for r in results] == ["timeout"] * 3
    assert gateway.usage.failures == 3


async def test_close_connections_closes_the_pooled_client_and_a_new_one_follows(server):
    from core.llm import close_connections

    gateway = Gateway(profile(server, "ok"), cache=MemoryCache())
    await gateway.complete_json(ask(1), Score)
    made = _pool._clients[asyncio.get_running_loop()]
    assert len(made) == 1
    (client,) = made.values()
    await close_connections()
    closed = client.is_closed  # httpx's is a property, the OpenAI client's a method
    assert closed() if callable(closed) else closed
    assert asyncio.get_running_loop() not in _pool._clients
    assert await gateway.complete_json(ask(2), Score) == Score(score=4, reason="fine")
    assert server.hits["ok"] == 2


def test_a_gateway_keeps_working_in_a_second_event_loop():
    """The connection-limited client belongs to the event loop it was made in: a gateway used
    by two ``asyncio.run`` calls (a command-line run does that) gets one per loop."""
    with running_in_a_thread() as server:
        gateway = Gateway(profile(server, "ok"), cache=MemoryCache())
        first = asyncio.run(gateway.complete_json(ask(1), Score))
        second = asyncio.run(gateway.complete_json(ask(2), Score))
        assert first == second == Score(score=4, reason="fine")
        assert server.hits["ok"] == 2


async def test_cancel_in_the_middle_of_50_queued_calls(server):
    server.latency_s = 0.03
    cancel = CancelToken()
    cache = MemoryCache()
    slow = profile(server, "ok", max_concurrency=4)
    gateway = Gateway(slow, cache=cache)

    async def cancel_after(n: int) -> None:
        while len(cache) < n:
            await asyncio.sleep(0.005)
        cancel.cancel()

    watcher = asyncio.ensure_future(cancel_after(12))
    results = await asyncio.gather(
        *[gateway.complete_json(ask(i), Score, cancel=cancel) for i in range(50)],
        return_exceptions=True,
    )
    await watcher
    done = sum(isinstance(r, Score) for r in results)
    assert all(isinstance(r, (Score, Cancelled)) for r in results)
    assert 12 <= done < 50
    assert len(cache) == done  # every finished call is kept
    sent = server.hits["ok"]
    assert sent <= done + 4  # at most the calls in flight were abandoned; the queue never went

    rerun = Gateway(slow, cache=cache)
    again = await asyncio.gather(*[rerun.complete_json(ask(i), Score) for i in range(50)])
    assert all(isinstance(r, Score) for r in again)
    assert server.hits["ok"] - sent == 50 - done  # only the missing ones
    assert rerun.usage.cache_hits == done


async def test_several_api_bases_spread_calls_and_skip_a_dead_server(server, waits):
    from tests.core.llm.fault_server import free_port

    dead = f"http://127.0.0.1:{free_port()}/v1"
    spread = ModelProfile(
        name="Two servers",
        model="openai/test-model",
        api_bases=[server.base("ok"), dead],
        max_concurrency=4,
        max_retries=4,
    )
    cache = MemoryCache()
    gateway = Gateway(spread, cache=cache)
    results = await asyncio.gather(*[gateway.complete_json(ask(i), Score) for i in range(20)])
    assert all(isinstance(r, Score) for r in results)
    assert server.hits["ok"] == 20
    assert {r.api_base for r in cache.records.values()} == {server.base("ok")}


async def test_several_api_bases_all_dead_say_so(waits):
    from tests.core.llm.fault_server import free_port

    bases = [f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)]
    gateway = Gateway(
        ModelProfile(name="Cluster", model="openai/x", api_bases=bases, max_retries=3),
        cache=MemoryCache(),
    )
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_text(ask())
    assert caught.value.kind == "connection"
    assert "Cluster" in caught.value.message or "Could not reach" in caught.value.message
    assert len(waits) == 3


async def test_a_prompt_too_long_for_the_context_says_so(server, waits):
    with pytest.raises(LLMFailure) as info:
        await Gateway(profile(server, "toolong"), cache=MemoryCache()).complete_json(ask(), Score)
    assert info.value.kind == "too_long" and info.value.status == 400
    assert "exceeds the available context size" in info.value.message
    assert "larger context window" in info.value.message
    assert server.hits["toolong"] == 1 and waits == []


async def test_an_answer_that_is_not_a_chat_completion_fails_with_the_servers_words(server, waits):
    with pytest.raises(LLMFailure) as info:
        await Gateway(profile(server, "garbage"), cache=MemoryCache()).complete_json(ask(), Score)
    # a server error, retried like one (as litellm has it), that quotes what came back
    assert (info.value.kind, info.value.status) == ("server", 500)
    assert "Welcome to nginx!" in info.value.message and "(tried 4 times)" in info.value.message
    assert server.hits["garbage"] == 4 and len(waits) == 3


@pytest.mark.parametrize("mode", ["ok", "oldstyle"])
async def test_both_paths_send_the_same_request_body(server, monkeypatch, route, mode):
    """What the server receives does not depend on the path: the same JSON body (schema or
    json_object fallback, seed of a repeat, maximum tokens) and the same key."""
    if route == "litellm":
        pytest.skip("compares both paths in one run")
    bodies = {}
    for direct in (True, False):
        monkeypatch.setattr(_pool, "plan", functools.partial(PLAN, direct=direct))
        gateway = Gateway(profile(server, mode, seed=7, max_tokens=300), cache=MemoryCache(),
                          api_key="sk-1")
        await gateway.complete_json(ask(), Score, repeat=2)
        assert gateway._pooled.kind == ("direct" if direct else "openai")
        _, headers, body = server.requests[-1]
        assert headers["Authorization"] == "Bearer sk-1"
        bodies[direct] = body
    assert bodies[True] == bodies[False]
    assert bodies[True]["seed"] == 9 and bodies[True]["max_tokens"] == 300
