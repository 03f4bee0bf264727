"""Benchmark of InteractEval checklist scoring at scale: SummEval's 1,600 summaries x 4 dimensions
against a local endpoint that answers after a fixed latency.

    .venv/bin/python tests/benchmarks/bench_interacteval_scoring.py [--texts 1600]
                                                [--latency 0.1] [--concurrency 16]

The endpoint (an OpenAI-compatible server on 127.0.0.1 in its own process; pieces from
``tests/core/llm/fault_server.py``) answers every checklist question yes or no ``--latency``
seconds after the request came in (its own work inside that time) and counts the prompt's tokens with the cl100k tokenizer bundled with
litellm, so "tokens per text" is what a GPT-4-class model would be billed. Ideal wall time =
calls made x latency / concurrency (SummEval repeats 54 summaries word for word: each is asked
about once, its twins answered from the cache). Scoring commits every text to a project file,
as in the wizard; the re-runs show that nothing is asked twice. The texts are read from the shared data folder
(never copied into the repository); the checklists are the authors' (reference material).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Self

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("EVALDESK_HOME", tempfile.mkdtemp(prefix="evaldesk-bench-"))

DATA = Path(os.environ.get("EVALDESK_SHARED_DATA", ROOT.parent / "shared" / "data"))
DIMENSIONS = ["coherence", "consistency", "fluency", "relevance"]
_QUESTION = re.compile(r"^q(\d+)\. ", re.MULTILINE)


# ------------------------------------------------------------------------------ the endpoint
def serve(port: int, latency: float) -> None:
    from aiohttp import web
    from litellm.litellm_core_utils.default_encoding import encoding

    from tests.core.llm.fault_server import completion

    async def handle(request: web.Request) -> web.Response:
        loop = asyncio.get_running_loop()
        due = loop.time() + latency  # the answer leaves `latency` after the request came in
        body = await request.json()
        text = "\n".join(str(m.get("content") or "") for m in body["messages"])
        numbers = sorted({int(n) for n in _QUESTION.findall(body["messages"][-1]["content"])})
        # a deterministic mix of answers (the score does not matter here)
        seed = sum(map(ord, text[-200:]))
        content = json.dumps({f"q{n}": "yes" if (seed + n) % 3 else "no" for n in numbers})
        reply = completion(body, content)
        prompt_tokens = len(encoding.encode(text, disallowed_special=()))
        completion_tokens = len(encoding.encode(content))
        reply["usage"] = {"prompt_tokens": prompt_tokens,
                          "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}
        # the server's own work (reading, counting tokens) happens within the latency, as a
        # model server's does: only the client's time per call shows beyond the ideal
        await asyncio.sleep(max(0.0, due - loop.time()))
        return web.json_response(reply)

    async def main() -> None:
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_post("/ok/v1/chat/completions", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
        await asyncio.Event().wait()

    asyncio.run(main())


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    from tests.core.llm.fault_server import free_port

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--latency", str(latency)])
    base = f"http://127.0.0.1:{port}/ok/v1"
    for _ in range(600):
        try:
            urllib.request.urlopen(base + "/chat/completions", timeout=1)
        except urllib.error.HTTPError:
            return process, base  # it answers (405 to a GET): up
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the benchmark server did not start")


# ---------------------------------------------------------------------------------- inputs
def checklists():
    from core.interacteval import Checklist, ChecklistItem

    out = []
    for name in DIMENSIONS:
        folder = DATA / "interacteval" / "summeval" / name
        definition = " ".join((folder / "dimension_definition.txt").read_text(
            encoding="utf-8").split())
        questions = [line.lstrip("- ").strip() for line in (folder / "human_llm_checklist.txt")
                     .read_text(encoding="utf-8").splitlines() if line.strip()]
        out.append(Checklist(dimension=name.capitalize(), definition=definition,
                             items=[ChecklistItem(question=q) for q in questions]))
    return out


def texts(n: int):
    from core.interacteval import TextItem

    rows = json.loads((DATA / "summeval" / "summeval.json").read_text(encoding="utf-8"))[:n]
    return [TextItem(id=f"{r['doc_id']}|{r['system_id']}", text=r["system_output"],
                     source=r["source"], source_id=r["doc_id"], system=r["system_id"])
            for r in rows]


# ------------------------------------------------------------------------------- benchmark
class LoopPauses:
    """The event loop's longest pause while it runs: a tick every 10 ms and how late it came.
    In the app the window is drawn by this loop (qasync), so this is how long it would not
    answer a click."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task | None = None

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + 0.01
            await asyncio.sleep(0.01)
            self.longest = max(self.longest, loop.time() - due)

    def __enter__(self) -> Self:
        self._task = asyncio.ensure_future(self._tick())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def bench(args: argparse.Namespace) -> list[tuple[str, str]]:
    from core.interacteval import score_texts
    from core.interacteval.session.scoring import open_scoring_run
    from core.interacteval.session.scoring import score_texts as score_in_project
    from core.llm import Gateway
    from core.project import Project
    from core.runs import Progress
    from core.settings import ModelProfile

    lists = checklists()
    items = texts(args.texts)
    calls = len(lists) * len(items)

    def ideal(made: int) -> float:
        """Calls made x latency / concurrency (a text that occurs twice is asked about once)."""
        return made * args.latency / args.concurrency
    process, base = start_server(args.latency)
    rows: list[tuple[str, str]] = []
    try:
        profile = ModelProfile(name="bench", model="openai/bench", api_bases=[base],
                               max_concurrency=args.concurrency, timeout_s=60, max_retries=2)
        warm = Gateway(profile, cache=None)  # the user cache: warm litellm's client once
        from pydantic import BaseModel

        class Ping(BaseModel):
            q1: str = ""

        await asyncio.gather(*[warm.complete_json(
            [{"role": "user", "content": f"q1. warm-up {i}?"}], Ping) for i in range(16)])

        from core.llm import MemoryCache

        memory = Gateway(profile, cache=MemoryCache())
        started = time.perf_counter()
        with LoopPauses() as memory_pauses:
            await score_texts(lists, items, memory, model=profile.model)
        memory_wall = time.perf_counter() - started
        memory_calls = memory.usage.calls
        del memory  # its 6,400 cached calls would stay in memory (and in every GC pass) below
        gc.collect()

        commits: list[int] = []  # writes per group commit (results and LLM calls)
        flush = Project.flush

        def counted(self):
            if self.queued:
                commits.append(self.queued)
            return flush(self)

        Project.flush = counted
        with tempfile.TemporaryDirectory() as folder:
            project = Project.create(Path(folder) / "bench.evaldesk", method="interacteval")
            settings = None
            run_id = open_scoring_run(project, lists, _settings(), profile.model)
            gateway = Gateway(profile, cache=project, run_id=run_id)
            seen = []
            started = time.perf_counter()
            with LoopPauses() as pauses:
                run = await score_in_project(lists, items, gateway, settings=settings,
                                             model=profile.model, project=project,
                                             run_id=run_id, progress=Progress(seen.append))
            wall = time.perf_counter() - started
            run_commits = list(commits)
            usage = gateway.usage
            # SummEval repeats a few summaries word for word: those are cache hits
            assert usage.calls + usage.cache_hits == calls, (usage.calls, calls)
            failed = len(run.failed)

            # re-run 1: the same scoring run resumes: every text is already stored
            again = Gateway(profile, cache=project, run_id=run_id)
            started = time.perf_counter()
            rerun = await score_in_project(lists, items, again, model=profile.model,
                                      project=project, run_id=run_id)
            resume_wall = time.perf_counter() - started
            assert rerun.reused == calls

            # re-run 2: no stored scores, every call answered from the project's LLM cache
            cached = Gateway(profile, cache=project)
            started = time.perf_counter()
            await score_texts(lists, items, cached, model=profile.model)
            cache_wall = time.perf_counter() - started
            size_mb = (Path(folder) / "bench.evaldesk").stat().st_size / 1e6
            project.close()
    finally:
        process.kill()
        process.wait()

    n_questions = sum(len(c.items) for c in lists)
    label = (f"{len(items):,} texts x {len(lists)} dimensions = {calls:,} calls, "
             f"{args.latency * 1000:.0f} ms latency, concurrency {args.concurrency}")
    rows += [
        ("Workload", label),
        ("Checklist questions (coh/con/flu/rel)",
         " / ".join(str(len(c.items)) for c in lists) + f" ({n_questions} in all)"),
        ("Ideal wall time (calls made x latency / concurrency)", f"{ideal(usage.calls):.1f} s"),
        ("Scoring, project file (as in the wizard)",
         f"{wall:.1f} s ({wall / ideal(usage.calls):.3f}x ideal; {usage.calls / wall:.0f} calls/s)"),
        ("Scoring, memory cache, no project (for comparison)",
         (f"{memory_wall:.1f} s ({memory_wall / ideal(memory_calls):.3f}x the ideal of its "
          f"{memory_calls:,} calls)")),
        ("Longest pause of the event loop (the window's, in the app): project / memory",
         f"{pauses.longest * 1000:.0f} ms / {memory_pauses.longest * 1000:.0f} ms"),
        ("Overhead per call over the ideal",
         f"{(wall - ideal(usage.calls)) / usage.calls * 1000:.2f} ms"),
        ("Writes to the project file during scoring",
         (f"{sum(run_commits):,} (results and calls) in {len(run_commits):,} group commits "
          f"(before issue 17: one commit each, the results' on the event loop)")),
        ("Calls made / answered from the cache",
         (f"{usage.calls:,} / {usage.cache_hits} (texts SummEval repeats word for word: asked "
          "once, the twin answered from the cache)")),
        ("Failed texts", str(failed)),
        ("Prompt tokens per text per dimension (cl100k)",
         f"{usage.prompt_tokens / usage.calls:,.0f} (total {usage.prompt_tokens:,})"),
        ("Completion tokens per text per dimension",
         f"{usage.completion_tokens / usage.calls:,.0f} (total {usage.completion_tokens:,})"),
        ("Tokens per text, all 4 dimensions",
         f"{(usage.prompt_tokens + usage.completion_tokens) / usage.calls * len(lists):,.0f}"),
        ("Re-run, same run resumed (scores from the project)",
         (f"{again.usage.calls} calls, {again.usage.cache_hits} cache hits, "
         f"{resume_wall * 1000:.0f} ms")),
        ("Re-run, new scoring, answers from the LLM cache",
         (f"{cached.usage.calls} calls, {cached.usage.cache_hits:,} cache hits, "
         f"{cache_wall:.1f} s")),
        ("Project file size", f"{size_mb:.1f} MB"),
    ]
    return rows


def _settings():
    from core.interacteval import ScoringSettings

    return ScoringSettings()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=1600)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency)
        return 0
    rows = asyncio.run(bench(args))
    width = max(len(k) for k, _ in rows)
    print()
    print("InteractEval checklist scoring benchmark")
    print("-" * (width + 50))
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
