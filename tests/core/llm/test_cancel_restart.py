"""Cancel, then start again (issue 28, point 10). In the app, after Cancel in the first seconds
of MAJ-Eval's debates, Start again stayed at 0 of 18 with no call and no error until the app
restarted: a slot of the model (the profile's semaphore, or the lock of a server's first JSON
answer), handed to a call at the moment that call was cancelled, was never given back, and
both outlive a run (one per profile and event loop). Every wait here is bounded."""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest
from pydantic import BaseModel

from core.llm import Gateway, MemoryCache, ScriptedLLM
from core.llm._gateway import until_cancelled
from core.runs import Cancelled, CancelToken


class Answer(BaseModel):
    answer: str


async def _holder(lock: asyncio.Lock, cancel: CancelToken | None) -> None:
    """Takes the lock as the gateway takes a slot, works until cancelled, gives it back."""
    await until_cancelled(lock.acquire(), cancel, on_late=lambda _: lock.release())
    try:
        await asyncio.Event().wait()
    finally:
        lock.release()


@pytest.mark.parametrize("steps", range(6))
@pytest.mark.parametrize("token", [True, False], ids=["with a cancel token", "no token"])
async def test_a_lock_handed_over_as_its_waiter_is_cancelled_is_given_back(steps, token):
    """The waiter's task is cancelled 0 to 5 loop passes after the lock was handed to it: the
    lock is free afterwards, whichever pass it was."""
    lock = asyncio.Lock()
    await lock.acquire()
    cancel = CancelToken() if token else None

    task = asyncio.ensure_future(_holder(lock, cancel))
    for _ in range(2):
        await asyncio.sleep(0)  # the waiter waits for the lock
    lock.release()
    for _ in range(steps):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises((asyncio.CancelledError, Cancelled)):
        await task
    assert not lock.locked()


async def test_a_late_result_is_undone_when_the_waiter_is_cancelled_while_it_winds_down():
    """Cancel pressed (the token), then the task cancelled too while the awaited work winds
    down: a result that arrived anyway is still undone."""
    lock = asyncio.Lock()
    await lock.acquire()
    cancel = CancelToken()

    for steps in range(6):
        task = asyncio.ensure_future(_holder(lock, cancel))
        for _ in range(2):
            await asyncio.sleep(0)
        cancel.cancel()
        lock.release()
        for _ in range(steps):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises((asyncio.CancelledError, Cancelled)):
            await task
        assert not lock.locked(), steps
        await lock.acquire()
        cancel = CancelToken()


async def test_calls_cancelled_at_random_moments_never_stall_the_next_ones():
    """300 times: six calls through a model with one slot, stopped after a random moment by
    Cancel, by their task being cancelled, or both; a new call afterwards must be answered
    within 3 seconds."""
    rng = random.Random(28)
    numbers = itertools.count()
    with ScriptedLLM(lambda _m: {"answer": "ok"}, name="cancel-restart", delay_s=0.002) as llm:
        profile = llm.profile(max_concurrency=1, max_retries=0)
        for attempt in range(300):
            gateway = Gateway(profile, cache=MemoryCache())
            cancel = CancelToken()

            async def six(gateway=gateway, cancel=cancel) -> None:
                await asyncio.gather(*[
                    gateway.complete_json(f"question {next(numbers)}", Answer, cancel=cancel)
                    for _ in range(6)])

            task = asyncio.ensure_future(six())
            await asyncio.sleep(rng.uniform(0.0, 0.012))
            how = rng.choice(["button", "task", "both"])
            if how in ("button", "both"):
                cancel.cancel()
            if how in ("task", "both"):
                task.cancel()
            try:
                await asyncio.wait_for(task, timeout=5)
            except (Cancelled, asyncio.CancelledError):
                pass
            except TimeoutError:
                pytest.fail(f"attempt {attempt + 1} ({how}) did not stop within 5 s")
            try:
                await asyncio.wait_for(Gateway(profile, cache=MemoryCache()).complete_json(
                    f"after attempt {attempt}", Answer), timeout=3)
            except TimeoutError:
                pytest.fail(f"a call after attempt {attempt + 1} ({how}) stalled: a slot of "
                            "the model was never given back")
