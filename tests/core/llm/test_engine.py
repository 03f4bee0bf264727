"""The engine for model files (``core.llm._engine``): llama.cpp's own server in a process of its
own, with the bundled Gemma 3 270M. Started on the first call on 127.0.0.1 with a random key,
every slot with the profile's whole context, several calls decoded together, its prompt cache
reused, its life tied to ours (no orphan after kill -9), restarted once after a crash."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from core.llm import Gateway, LLMFailure, MemoryCache, _engine
from core.llm._engine import ModelFacts, slots_for
from core.settings import bundled_profile

ROOT = Path(__file__).resolve().parents[3]
GB = 1024**3


def profile(**overrides):
    return bundled_profile().model_copy(update={"max_tokens": 24, **overrides})


def get(engine: _engine.Engine, path: str, key: str | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(f"http://127.0.0.1:{engine.port}{path}")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, {}


def gone(pid: int) -> bool:
    """The process ended (a zombie whose parent died counts: it runs nothing)."""
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    return "\nState:\tZ" in state


def wait_until(check, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


# ------------------------------------------------------------------------------ pure parts
def test_slots_follow_calls_at_once_and_free_memory():
    small = ModelFacts(kv_bytes_per_token=18_432, file_size=253_000_000)  # Gemma 3 270M
    assert slots_for(4, 8192, small, 16 * GB) == 4
    assert slots_for(40, 8192, small, 16 * GB) == _engine.MAX_SLOTS
    big = ModelFacts(kv_bytes_per_token=131_072, file_size=4_900_000_000)  # an 8B model
    assert slots_for(4, 8192, big, 16 * GB) == 4       # 4 x 1 GB of context fits
    assert slots_for(4, 8192, big, 8 * GB) == 2        # only 2 fit beside the model
    assert slots_for(4, 8192, big, 5 * GB) == 1        # never fewer than one
    assert slots_for(3, 8192, ModelFacts(), None) == 3  # nothing known: as asked


def test_the_gemma_file_is_read_for_its_settings(bundled_gguf):
    facts = _engine.model_facts(bundled_gguf)
    assert facts.architecture == "gemma3" and not facts.has_chat_template
    assert facts.kv_bytes_per_token == 2 * 18 * 1 * (256 + 256)
    assert facts.trained_context == 32768 and facts.file_size == bundled_gguf.stat().st_size


def test_a_missing_engine_program_is_explained(monkeypatch, tmp_path):
    monkeypatch.setenv(_engine.PROGRAM_ENV, str(tmp_path / "nothing"))
    with pytest.raises(_engine.EngineError, match="does not exist"):
        _engine.program()


# ------------------------------------------------------------------------------ the process
@pytest.mark.slow
async def test_the_engine_is_private_and_every_slot_has_the_whole_context(bundled_model):
    gateway = Gateway(profile(max_concurrency=3, context_window=3000), cache=MemoryCache())
    assert (await gateway.complete_text("Say hello.")).strip()
    engine = gateway._engine
    assert engine.running() and engine.slots == 3
    # on 127.0.0.1 only, behind a key that is not on its command line
    assert get(engine, "/v1/models")[0] == 401
    status, props = get(engine, "/props", engine.api_key)
    assert status == 200
    assert props["total_slots"] == 3
    assert props["default_generation_settings"]["n_ctx"] >= 3000  # each slot, not 3000 / 3
    assert engine.slot_context >= 3000
    cmdline = Path(f"/proc/{engine.process.pid}/cmdline").read_bytes().decode()
    assert engine.api_key not in cmdline and "127.0.0.1" in cmdline
    listening = Path("/proc/net/tcp").read_text()
    assert f"0100007F:{engine.port:04X}" in listening  # bound to 127.0.0.1, not 0.0.0.0
    assert f"00000000:{engine.port:04X}" not in listening


@pytest.mark.slow
async def test_several_calls_are_decoded_together(bundled_model):
    gateway = Gateway(profile(max_concurrency=4, max_tokens=48), cache=MemoryCache())
    await gateway.complete_text("Warm up.")
    engine = gateway._engine
    busy: list[int] = []
    stop = asyncio.Event()

    async def watch() -> None:
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            status, slots = await loop.run_in_executor(None, get, engine, "/slots",
                                                       engine.api_key)
            if status == 200:
                busy.append(sum(1 for s in slots if s.get("is_processing")))
            await asyncio.sleep(0.05)

    watcher = asyncio.ensure_future(watch())
    topics = ["the sea", "a forest", "a city at night", "a mountain"]
    answers = await asyncio.gather(*[
        gateway.complete_text(f"Write two sentences about {t}.") for t in topics])
    stop.set()
    await watcher
    assert all(a.strip() for a in answers)
    assert max(busy) >= 2, busy  # the engine had several of them in its slots at once


@pytest.mark.slow
async def test_a_shared_prefix_is_read_from_the_prompt_cache(bundled_model):
    cache = MemoryCache()
    gateway = Gateway(profile(max_concurrency=1), cache=cache)
    prefix = {"role": "system", "content": "You are Dana Ray, a parent of two children. "
              + "You judge questions about stories for young children. " * 20}
    await gateway.complete_text([prefix, {"role": "user", "content": "Turn 1: say hi."}])
    await gateway.complete_text([prefix, {"role": "user", "content": "Turn 2: say bye."}])
    second = next(r for r in cache.records.values()
              if "Turn 2" in json.dumps(r.request["messages"]))
    # the ~200-token prefix was read from the engine's cache, not again (Gemma 3's sliding-window
    # layers keep the whole context for this: --swa-full)
    assert second.response["cached_prompt_tokens"] > 150, second.response


@pytest.mark.slow
async def test_a_local_engine_works_while_a_dead_proxy_is_set(bundled_model, monkeypatch):
    from tests.core.llm.fault_server import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, dead)
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.setenv("no_proxy", "")
    _engine.stop_engines()  # started afresh under the proxy setting
    text = await Gateway(profile(), cache=MemoryCache()).complete_text("Say hi.")
    assert text.strip()


@pytest.mark.slow
async def test_stop_engines_ends_the_process_and_the_next_call_starts_it(bundled_model):
    gateway = Gateway(profile(), cache=MemoryCache())
    await gateway.complete_text("One.")
    process = gateway._engine.process
    _engine.stop_engines()
    assert process.poll() is not None
    assert (await Gateway(profile(), cache=MemoryCache()).complete_text("Two.")).strip()


# ------------------------------------------------------------------------------ crashes
@pytest.mark.slow
async def test_a_crash_restarts_the_engine_and_calls_in_flight_are_sent_again(bundled_model):
    events = []
    remove = _engine.add_engine_listener(events.append)
    try:
        gateway = Gateway(profile(max_concurrency=2, max_tokens=200), cache=MemoryCache())
        await gateway.complete_text("Warm up.")
        engine = gateway._engine
        first = engine.process.pid
        calls = [asyncio.ensure_future(gateway.complete_text(f"Tell a long story about {t}."))
                 for t in ("a lighthouse", "a baker")]
        loop = asyncio.get_running_loop()
        while not await loop.run_in_executor(None, lambda: any(
                s.get("is_processing") for s in get(engine, "/slots", engine.api_key)[1])):
            await asyncio.sleep(0.05)
        os.kill(first, signal.SIGKILL)  # as a crash would end it
        answers = await asyncio.gather(*calls)
    finally:
        remove()
    assert all(a.strip() for a in answers)
    assert engine.crashes == 1 and engine.process.pid != first and engine.running()
    assert [e.kind for e in events if e.kind == "crashed"] == ["crashed"]
    assert "restarting" in next(e for e in events if e.kind == "crashed").message


@pytest.mark.slow
async def test_a_second_crash_before_any_answer_fails_in_plain_words(bundled_model):
    gateway = Gateway(profile(max_concurrency=1, max_tokens=200), cache=MemoryCache())
    await gateway.complete_text("Warm up.")
    engine = gateway._engine

    def kill_when_ready(event) -> None:  # the restarted engine dies before it answers
        if event.kind == "ready":
            engine.process.kill()
            engine.process.wait()

    remove = _engine.add_engine_listener(kill_when_ready)
    try:
        engine.process.kill()
        engine.process.wait()
        with pytest.raises(LLMFailure) as caught:
            await gateway.complete_text("Tell a story.")
    finally:
        remove()
    failure = caught.value
    assert failure.kind == "local_model"
    assert "stopped unexpectedly again" in failure.message
    assert "Finished items are kept" in failure.message
    # a new run starts it afresh
    assert (await Gateway(profile(max_concurrency=1), cache=MemoryCache()).complete_text(
        "Hi.")).strip()


# ------------------------------------------------------------------------------ no orphans
CHILD = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from core.llm import _engine, _local, Gateway, MemoryCache
    from core.settings import bundled_profile

    _local.bundled_gguf_path = lambda: Path(sys.argv[1])
    if sys.argv[2] == "no-pdeathsig":  # only the standard-input watch ties the engine to us
        _engine._die_with_parent = lambda: None
    profile = bundled_profile().model_copy(update={"max_tokens": 4, "max_concurrency": 1})

    async def main():
        gateway = Gateway(profile, cache=MemoryCache())
        if sys.argv[3] == "ready":
            await gateway.complete_text("Hi")
            print(gateway._engine.process.pid, flush=True)
        else:  # killed while the engine is still loading the model
            def started(event):
                if event.kind == "starting" and not event.seconds:
                    engine = [e for e in _engine._engines.values()][0]
                    print(engine.process.pid, flush=True)
            _engine.add_engine_listener(started)
            await gateway.complete_text("Hi")
        await asyncio.sleep(600)

    asyncio.run(main())
""")


@pytest.mark.slow
@pytest.mark.parametrize(("tie", "when"), [("no-pdeathsig", "ready"), ("all", "ready"),
                                           ("all", "loading")])
def test_no_engine_is_left_running_after_the_app_is_killed(bundled_gguf, tmp_path, tie, when):
    if when == "loading" and not sys.platform.startswith("linux"):
        pytest.skip("while loading, only Linux's PR_SET_PDEATHSIG ends it at once")
    env = {**os.environ, "EVALDESK_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    app = subprocess.Popen([sys.executable, "-c", CHILD, str(bundled_gguf), tie, when],
                           stdout=subprocess.PIPE, env=env, cwd=ROOT)
    try:
        line = app.stdout.readline()
        assert line.strip().isdigit(), "the child did not start an engine"
        engine_pid = int(line)
        assert not gone(engine_pid)
        app.send_signal(signal.SIGKILL)  # kill -9: no atexit, no cleanup of ours runs
        app.wait(10)
        assert wait_until(lambda: gone(engine_pid)), "the engine outlived the app"
    finally:
        if app.poll() is None:
            app.kill()
