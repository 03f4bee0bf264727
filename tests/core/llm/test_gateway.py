"""Gateway behaviour through the scripted provider (the real litellm path, a fake model)."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel, Field

from core.llm import (
    Gateway,
    LLMFailure,
    MemoryCache,
    ScriptedError,
    add_usage_listener,
    check_connection,
    session_usage,
)
from core.llm._cache import USER_CACHE_FILE, cache_key
from core.runs import Cancelled, CancelToken


class Score(BaseModel):
    score: int = Field(ge=1, le=5)
    reason: str


GOOD = {"score": 4, "reason": "clear and correct"}


def ask(text: str = "Rate the answer: Paris is in France.") -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You rate answers from 1 to 5."},
        {"role": "user", "content": text},
    ]


# ------------------------------------------------------------------------------ the cache key
def test_cache_key_changes_with_every_part():
    base = {
        "model": "openai/gpt-4o-mini",
        "api_base": "",
        "messages": ask(),
        "params": {"temperature": 0.0, "max_tokens": 100, "seed": 0},
        "repeat": 0,
        "template_version": "v1",
    }
    key = cache_key(**base)
    assert key == cache_key(**dict(base))  # stable
    variants = [
        {"model": "openai/gpt-4o"},
        {"api_base": "http://127.0.0.1:8000/v1"},
        {"messages": ask("Rate the answer: Lyon is in France.")},
        {"params": {"temperature": 0.7, "max_tokens": 100, "seed": 0}},
        {"params": {"temperature": 0.0, "max_tokens": 200, "seed": 0}},
        {"params": {"temperature": 0.0, "max_tokens": 100, "seed": 1}},
        {"params": {"temperature": 0.0, "max_tokens": 100, "seed": 0, "schema": {"a": 1}}},
        {"repeat": 1},
        {"template_version": "v2"},
    ]
    keys = {cache_key(**{**base, **change}) for change in variants}
    assert key not in keys
    assert len(keys) == len(variants)


# ---------------------------------------------------------------------- answers and the cache
async def test_json_answer_is_validated_and_a_rerun_makes_no_calls(scripted):
    llm = scripted({"Rate the answer": GOOD})
    cache = MemoryCache()
    first = await Gateway(llm.profile(), cache=cache).complete_json(ask(), Score)
    assert first == Score(**GOOD)
    assert llm.calls == 1
    # the request asked for this schema
    fmt = llm.requests[0].params["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["properties"]["score"]["maximum"] == 5

    again = Gateway(llm.profile(), cache=cache)
    assert await again.complete_json(ask(), Score) == first
    assert llm.calls == 1  # zero new calls
    assert (again.usage.calls, again.usage.cache_hits) == (0, 1)


async def test_repeat_index_and_template_version_make_new_calls(scripted):
    llm = scripted({"Rate": GOOD})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    await gateway.complete_json(ask(), Score, repeat=0)
    await gateway.complete_json(ask(), Score, repeat=1)
    await gateway.complete_json(ask(), Score, repeat=2)
    await gateway.complete_json(ask(), Score, repeat=1)  # cached
    await gateway.complete_json(ask(), Score, repeat=0, template_version="v2")
    assert llm.calls == 4
    assert gateway.usage.cache_hits == 1


async def test_generation_settings_are_sent_and_part_of_the_key(scripted):
    llm = scripted({"Rate": GOOD})
    cache = MemoryCache()
    await Gateway(llm.profile(temperature=0.0, seed=7, max_tokens=99), cache=cache).complete_json(
        ask(), Score
    )
    params = llm.requests[0].params
    assert (params["temperature"], params["seed"], params["max_tokens"]) == (0.0, 7, 99)
    await Gateway(llm.profile(temperature=0.5, seed=7, max_tokens=99), cache=cache).complete_json(
        ask(), Score
    )
    assert llm.calls == 2  # another temperature is another answer


async def test_invalid_answer_is_reasked_once_with_the_error(scripted):
    llm = scripted({"Rate the answer": ["I think it deserves a four.", GOOD]})
    cache = MemoryCache()
    result = await Gateway(llm.profile(), cache=cache).complete_json(ask(), Score)
    assert result.score == 4
    assert llm.calls == 2
    reask = llm.requests[1].messages
    assert reask[:2] == ask()
    assert reask[2] == {"role": "assistant", "content": "I think it deserves a four."}
    assert "not valid JSON" in reask[3]["content"]
    assert '"score"' in reask[3]["content"]  # the schema is repeated
    # the successful answer is cached under the original request: a re-run makes no calls
    await Gateway(llm.profile(), cache=cache).complete_json(ask(), Score)
    assert llm.calls == 2


async def test_answer_still_invalid_after_reask_fails_visibly_and_is_not_cached(scripted):
    llm = scripted({"Rate the answer": {"score": 9, "reason": "too generous"}})
    cache = MemoryCache()
    gateway = Gateway(llm.profile(), cache=cache)
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_json(ask(), Score)
    failure = caught.value
    assert failure.kind == "invalid_output"
    assert "'score'" in failure.message and "less than or equal to 5" in failure.message
    assert "too generous" in failure.message  # what the model said
    assert "less than or equal to 5" in llm.requests[1].prompt  # the re-ask named the problem
    assert llm.calls == 2  # asked once more, not more
    assert len(cache) == 0
    assert gateway.usage.failures == 1
    # a re-run asks again (a failed item is not finished)
    with pytest.raises(LLMFailure):
        await Gateway(llm.profile(), cache=cache).complete_json(ask(), Score)
    assert llm.calls == 4


def _no_copies(value: Score):
    from core.llm import copied_instructions

    return copied_instructions("the reason") if value.reason == "your reasons" else None


async def test_a_rejected_answer_is_reasked_once_then_accepted(scripted):
    llm = scripted({"Rate the answer": [{"score": 3, "reason": "your reasons"}, GOOD]})
    cache = MemoryCache()
    result = await Gateway(llm.profile(), cache=cache).complete_json(
        ask(), Score, check=_no_copies
    )
    assert result == Score(**GOOD)
    assert llm.calls == 2
    assert "repeats words of the instructions" in llm.requests[1].prompt
    # the accepted answer is cached: no call on a re-run
    await Gateway(llm.profile(), cache=cache).complete_json(ask(), Score, check=_no_copies)
    assert llm.calls == 2


async def test_an_answer_rejected_twice_fails_with_the_checks_kind_and_is_not_cached(scripted):
    llm = scripted({"Rate the answer": {"score": 3, "reason": "your reasons"}})
    cache = MemoryCache()
    gateway = Gateway(llm.profile(), cache=cache)
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_json(ask(), Score, check=_no_copies)
    assert caught.value.kind == "copied_instructions"
    assert "repeated the instructions instead of answering" in caught.value.message
    assert "try a larger model" in caught.value.message
    assert llm.calls == 2 and len(cache) == 0 and gateway.usage.failures == 1
    # a plain string from the check is a rejection of the generic kind
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_json(ask(), Score, check=lambda v: "the reason is not grounded")
    assert caught.value.kind == "rejected_output"
    assert "the reason is not grounded" in caught.value.message


async def test_a_cached_answer_that_fails_a_new_check_is_asked_again(scripted):
    llm = scripted({"Rate the answer": [{"score": 3, "reason": "your reasons"}, GOOD]})
    cache = MemoryCache()
    await Gateway(llm.profile(), cache=cache).complete_json(ask(), Score)  # no check: cached
    assert llm.calls == 1
    result = await Gateway(llm.profile(), cache=cache).complete_json(
        ask(), Score, check=_no_copies
    )
    assert result == Score(**GOOD) and llm.calls == 2


async def test_json_in_a_code_fence_is_accepted(scripted):
    llm = scripted({"Rate": '```json\n{"score": 2, "reason": "vague"}\n```'})
    result = await Gateway(llm.profile(), cache=MemoryCache()).complete_json(ask(), Score)
    assert result.score == 2 and llm.calls == 1


async def test_text_answers_and_empty_replies(scripted):
    llm = scripted({"persona": "A teacher with ten years of experience.", "nothing": ""})
    cache = MemoryCache()
    gateway = Gateway(llm.profile(), cache=cache)
    assert await gateway.complete_text("Write a persona") == (
        "A teacher with ten years of experience."
    )
    assert "response_format" not in llm.requests[0].params
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_text("Say nothing")
    assert caught.value.kind == "empty_reply"
    assert len(cache) == 1


async def test_bad_messages_are_refused(scripted):
    llm = scripted(default="x")
    with pytest.raises(ValueError):
        await Gateway(llm.profile(), cache=MemoryCache()).complete_text([{"content": "hi"}])


# ------------------------------------------------------------------------------------ usage
async def test_usage_is_counted_per_gateway_and_session_and_reported(scripted):
    llm = scripted({"Rate": GOOD})
    seen = []
    remove = add_usage_listener(seen.append)
    try:
        cache = MemoryCache()
        gateway = Gateway(llm.profile(), cache=cache)
        await gateway.complete_json(ask(), Score)
        await gateway.complete_json(ask(), Score)
        await gateway.complete_json(ask("Rate the answer: x"), Score)
    finally:
        remove()
    usage = gateway.usage
    assert (usage.calls, usage.cache_hits, usage.failures) == (2, 1, 0)
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.cost == 0.0
    assert len(seen) == 3
    assert (seen[-1].calls, seen[-1].cache_hits) == (2, 1)
    assert seen[-1].prompt_tokens == usage.prompt_tokens
    assert session_usage() == seen[-1]
    # the stored record carries the tokens of the call
    record = next(iter(cache.records.values()))
    assert record.prompt_tokens + record.completion_tokens > 0
    assert record.cost == 0.0


async def test_a_broken_listener_does_not_break_calls(scripted):
    llm = scripted({"Rate": GOOD})

    def broken(_usage):
        raise RuntimeError("listener bug")

    remove = add_usage_listener(broken)
    try:
        assert await Gateway(llm.profile(), cache=MemoryCache()).complete_json(ask(), Score)
    finally:
        remove()


# ---------------------------------------------------------------------- retries and failures
async def test_server_errors_are_retried_with_growing_backoff_and_not_cached(scripted, waits):
    llm = scripted({"Rate": [ScriptedError(500), ScriptedError(503), ScriptedError(502), GOOD]})
    cache = MemoryCache()
    result = await Gateway(llm.profile(max_retries=4), cache=cache).complete_json(ask(), Score)
    assert result.score == 4
    assert llm.calls == 4
    assert len(waits) == 3
    assert waits[0] <= waits[1] <= waits[2]
    assert len(cache) == 1


async def test_retries_are_capped(scripted, waits):
    llm = scripted({"Rate": ScriptedError(500, "the server is on fire")})
    cache = MemoryCache()
    gateway = Gateway(llm.profile(max_retries=2), cache=cache)
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_json(ask(), Score)
    assert caught.value.kind == "server"
    assert "tried 3 times" in caught.value.message
    assert "on fire" in caught.value.message
    assert llm.calls == 3 and len(waits) == 2
    assert len(cache) == 0
    assert gateway.usage.failures == 1


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (401, "auth", ["API key", "Settings"]),
        (403, "auth", ["API key"]),
        (404, "not_found", ["model name", "API base URL"]),
        (400, "bad_request", ["rejected"]),
    ],
)
async def test_client_errors_fail_at_once_and_say_what_to_fix(scripted, waits, status, kind, words):
    llm = scripted({"Rate": ScriptedError(status, "nope")})
    gateway = Gateway(llm.profile(max_retries=4), cache=MemoryCache())
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_json(ask(), Score)
    assert caught.value.kind == kind
    for word in words:
        assert word in caught.value.message
    assert llm.calls == 1 and waits == []


async def test_retry_after_is_honoured(scripted, waits):
    llm = scripted({"Rate": [ScriptedError(429, "slow down", retry_after=2.5), GOOD]})
    result = await Gateway(llm.profile(), cache=MemoryCache()).complete_json(ask(), Score)
    assert result.score == 4
    assert len(waits) == 1 and waits[0] >= 2.5


async def test_a_very_long_retry_after_is_not_waited_for(scripted, waits):
    llm = scripted({"Rate": ScriptedError(429, "quota", retry_after=3600)})
    with pytest.raises(LLMFailure) as caught:
        await Gateway(llm.profile(), cache=MemoryCache()).complete_json(ask(), Score)
    assert caught.value.kind == "rate_limit"
    assert "3600 seconds" in caught.value.message
    assert waits == [] and llm.calls == 1


async def test_timeouts_are_retried(scripted, waits):
    llm = scripted({"Rate": [ScriptedError(408), GOOD]})
    assert await Gateway(llm.profile(), cache=MemoryCache()).complete_json(ask(), Score)
    assert llm.calls == 2 and len(waits) == 1


# ---------------------------------------------------------------------- concurrency and cancel
async def test_concurrency_is_limited_per_profile(scripted):
    llm = scripted({"Rate": GOOD}, delay_s=0.02)
    profile = llm.profile(max_concurrency=3)
    cache = MemoryCache()
    one, two = Gateway(profile, cache=cache), Gateway(profile, cache=cache)
    await asyncio.gather(
        *[one.complete_json(ask(f"Rate the answer: {i}"), Score) for i in range(10)],
        *[two.complete_json(ask(f"Rate the answer: {i}"), Score, repeat=1) for i in range(10)],
    )
    assert llm.calls == 20
    assert llm.max_in_flight == 3


async def test_cancel_stops_queued_calls_and_keeps_finished_ones(scripted):
    cancel = CancelToken()
    answered = 0

    def reply(messages):
        nonlocal answered
        answered += 1
        if answered == 6:
            cancel.cancel()
        return GOOD

    llm = scripted(reply, delay_s=0.01)
    profile = llm.profile(max_concurrency=2)
    cache = MemoryCache()
    gateway = Gateway(profile, cache=cache)
    prompts = [ask(f"Rate the answer: item {i}") for i in range(30)]
    results = await asyncio.gather(
        *[gateway.complete_json(p, Score, cancel=cancel) for p in prompts],
        return_exceptions=True,
    )
    finished = [r for r in results if isinstance(r, Score)]
    stopped = [r for r in results if isinstance(r, Cancelled)]
    assert len(finished) + len(stopped) == 30
    assert 6 <= len(finished) <= 8  # the sixth, and at most the one other call in flight
    assert llm.calls <= 8  # the queued ones never went out
    assert len(cache) == len(finished)

    before = llm.calls
    rerun = Gateway(profile, cache=cache)
    again = await asyncio.gather(*[rerun.complete_json(p, Score) for p in prompts])
    assert all(isinstance(r, Score) for r in again)
    assert llm.calls - before == 30 - len(finished)  # only what was missing
    assert rerun.usage.cache_hits == len(finished)


# ----------------------------------------------------------- the same request twice at once
async def test_identical_calls_at_once_are_sent_once(scripted):
    """A text that occurs twice in a sheet is asked about once, even when both are on their way
    at the same time: the second waits for the first and takes its answer from the cache."""
    llm = scripted({"Rate": GOOD}, delay_s=0.05)
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    results = await asyncio.gather(
        *[gateway.complete_json(ask(), Score) for _ in range(3)],
        gateway.complete_json(ask(), Score, repeat=1),  # a repeat is a new sample: its own call
        gateway.complete_json(ask("Rate the answer: Lyon is in France."), Score),
    )
    assert results[:3] == [Score(**GOOD)] * 3
    assert llm.calls == 3
    assert (gateway.usage.calls, gateway.usage.cache_hits) == (3, 2)


async def test_a_twin_shares_the_requests_failure_without_a_call(scripted):
    llm = scripted({"Rate": ScriptedError(401)}, delay_s=0.05)
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    results = await asyncio.gather(*[gateway.complete_json(ask(), Score) for _ in range(2)],
                                   return_exceptions=True)
    assert [r.kind for r in results] == ["auth", "auth"]
    assert results[0] is not results[1] and results[0].message == results[1].message
    assert llm.calls == 1
    assert gateway.usage.failures == 2


async def test_a_twin_asks_itself_when_the_answer_was_unusable(scripted):
    """An answer that did not fit is no outcome to share: a new sample may fit."""
    replies = iter(["four", "still four", json.dumps(GOOD)])
    llm = scripted(lambda messages: next(replies), delay_s=0.05)
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    first, second = await asyncio.gather(*[gateway.complete_json(ask(), Score)
                                           for _ in range(2)], return_exceptions=True)
    assert isinstance(first, LLMFailure) and first.kind == "invalid_output"
    assert second == Score(**GOOD)
    assert llm.calls == 3  # the first asked twice, then the twin asked


async def test_a_twin_goes_on_when_the_first_call_is_cancelled(scripted):
    llm = scripted({"Rate": GOOD}, delay_s=0.2)
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    cancel = CancelToken()
    first = asyncio.ensure_future(gateway.complete_json(ask(), Score, cancel=cancel))
    while llm.in_flight == 0:
        await asyncio.sleep(0.01)
    second = asyncio.ensure_future(gateway.complete_json(ask(), Score))
    await asyncio.sleep(0.02)
    cancel.cancel()
    with pytest.raises(Cancelled):
        await first
    assert await asyncio.wait_for(second, 5) == Score(**GOOD)
    assert llm.calls == 2


async def test_a_cancelled_token_makes_no_call(scripted):
    llm = scripted({"Rate": GOOD})
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(Cancelled):
        await Gateway(llm.profile(), cache=MemoryCache()).complete_json(ask(), Score, cancel=cancel)
    assert llm.calls == 0


async def test_cancel_during_a_retry_wait_stops_at_once(scripted):
    llm = scripted({"Rate": ScriptedError(503)})
    cancel = CancelToken()
    gateway = Gateway(llm.profile(max_retries=4), cache=MemoryCache())
    gateway.backoff_base_s = 30.0  # would wait a long time
    task = asyncio.ensure_future(gateway.complete_json(ask(), Score, cancel=cancel))
    while llm.calls == 0:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    cancel.cancel()
    with pytest.raises(Cancelled):
        await asyncio.wait_for(task, 5)
    assert llm.calls == 1


# ----------------------------------------------------------------------- caches on disk
async def test_project_file_is_the_cache_and_the_log(scripted, tmp_path):
    from core.project import Project

    llm = scripted({"Rate": GOOD})
    path = tmp_path / "study.evaldesk"
    with Project.create(path) as project:
        run_id = project.start_run("aqer", "score", {"model": llm.model})
        gateway = Gateway(llm.profile(), cache=project, run_id=run_id)
        await gateway.complete_json(ask(), Score)
        await gateway.complete_json(ask("Rate the answer: Rome is in Italy."), Score)
        usage = project.llm_usage(run_id)
        assert usage.calls == 2
        assert usage.prompt_tokens == gateway.usage.prompt_tokens
    with Project.open(path) as project:
        again = Gateway(llm.profile(), cache=project)
        await again.complete_json(ask(), Score)
        assert (again.usage.calls, again.usage.cache_hits) == (0, 1)
        assert llm.calls == 2
        key = cache_key(
            model=llm.model,
            api_base="",
            messages=ask(),
            params=again._params({"name": "Score", "schema": Score.model_json_schema()}),
        )
        stored = project.llm_cache_get(key)
        assert stored is not None
        assert stored["request"]["messages"] == ask()
        assert stored["run_id"] == run_id
        assert stored["cost"] == 0.0


async def test_a_call_not_in_the_project_is_not_looked_up_in_the_file(scripted, tmp_path):
    """A new call needs no trip to the file's thread: the project knows every key it holds.
    A key stored or queued since (by any gateway on the project) is looked up and reused."""
    from core.project import Project

    llm = scripted({"Rate": GOOD})
    with Project.create(tmp_path / "study.evaldesk") as project:
        reads = []
        real_get = project.llm_cache_get
        project.llm_cache_get = lambda key: reads.append(key) or real_get(key)
        gateway = Gateway(llm.profile(), cache=project)
        for n in range(4):
            await gateway.complete_json(ask(f"Rate the answer: {n} is a number."), Score)
        # the first call reads the keys once; before, every call read the file twice
        assert len(reads) == 1 and llm.calls == 4
        other = Gateway(llm.profile(), cache=project)
        await other.complete_json(ask("Rate the answer: 2 is a number."), Score)
        assert (other.usage.calls, other.usage.cache_hits, len(reads)) == (0, 1, 2)


async def test_without_a_project_calls_are_cached_per_user(scripted, evaldesk_home):
    llm = scripted({"Rate": GOOD})
    await Gateway(llm.profile()).complete_json(ask(), Score)
    assert (evaldesk_home / "cache" / USER_CACHE_FILE).exists()
    again = Gateway(llm.profile())
    await again.complete_json(ask(), Score)
    assert llm.calls == 1 and again.usage.cache_hits == 1


async def test_api_key_is_never_stored(scripted, tmp_path):
    from core.project import Project

    llm = scripted({"Rate": GOOD})
    with Project.create(tmp_path / "p.evaldesk") as project:
        await Gateway(llm.profile(), cache=project, api_key="sk-secret-123").complete_json(
            ask(), Score
        )
    assert b"sk-secret-123" not in (tmp_path / "p.evaldesk").read_bytes()


# ------------------------------------------------------------------------- connection check
async def test_check_connection_reports_reply_and_usage(scripted):
    llm = scripted({"JSON object": {"reply": "ready"}})
    check = await check_connection(llm.profile())
    assert check.ok and check.reply == "ready"
    assert check.prompt_tokens > 0 and check.cost == 0.0
    assert llm.requests[0].params["max_tokens"] <= 64


async def test_check_connection_says_what_is_wrong(scripted):
    llm = scripted({"JSON object": ScriptedError(401, "Incorrect API key provided")})
    check = await check_connection(llm.profile(name="Work OpenAI"))
    assert not check.ok
    assert "Work OpenAI" in check.message and "API key" in check.message
    assert llm.calls == 1


async def test_check_connection_with_a_model_that_ignores_the_format(scripted):
    llm = scripted({"JSON": "ready!"})
    check = await check_connection(llm.profile())
    assert check.ok
    assert "did not follow" in check.message
    assert check.reply == "ready!"


async def test_calls_finishing_together_are_written_in_few_transactions(
    scripted, tmp_path, monkeypatch
):
    from core.project import Project

    batches: list[int] = []
    real = Project.flush

    def counting(self):
        if self.queued:
            batches.append(self.queued)
        return real(self)

    monkeypatch.setattr(Project, "flush", counting)
    llm = scripted({"Rate": GOOD}, delay_s=0.01)
    with Project.create(tmp_path / "p.evaldesk") as project:
        gateway = Gateway(llm.profile(max_concurrency=8), cache=project)
        await asyncio.gather(
            *[gateway.complete_json(ask(f"Rate the answer: {i}"), Score) for i in range(24)]
        )
        assert project.queued == 0  # every call is on disk once complete_json returned
        assert project.llm_usage().calls == 24
    # (a write queued between the count and the flush's own look at the queue is written by
    # that flush without being counted, so the counts can add up to less than 24; all 24 are
    # on disk, checked above)
    assert 0 < sum(batches) <= 24
    assert len(batches) < 24


async def test_a_repeat_is_a_new_sample_with_its_own_seed(scripted):
    """Repeat k sends the profile's seed + k (repeat 0 the seed itself), so asking again is
    not the first answer again; without a seed none is sent."""
    llm = scripted({"Rate": GOOD})
    gateway = Gateway(llm.profile(temperature=0.7, seed=7), cache=MemoryCache())
    for k in (0, 1, 2):
        await gateway.complete_json(ask(), Score, repeat=k)
    assert [r.params.get("seed") for r in llm.requests] == [7, 8, 9]
    unseeded = scripted({"Rate": GOOD})
    await Gateway(unseeded.profile(seed=None), cache=MemoryCache()).complete_json(
        ask(), Score, repeat=3)
    assert "seed" not in unseeded.requests[0].params
