"""Benchmark of MAJ-Eval's debate stage against a latency-injecting local endpoint.

    .venv/bin/python tests/benchmarks/bench_majeval_debate.py [--items 50] [--groups 3]
        [--agents 3] [--rounds 3] [--concurrency 16] [--latency 0.1]

An OpenAI-compatible server on 127.0.0.1 (a separate process, aiohttp) answers every request
after a fixed latency with JSON that fits the requested schema: phase 1 evaluations and debate
turns with scores drawn from a hash of the prompt (so agents disagree), "no more comments" in
about a third of the turns, realistic text lengths. Tokens are counted as characters / 4 (the
server reports them that way), so prompt sizes are comparable with a real tokenizer's.

Reported: wall time against the ideal (the larger of the critical path, i.e. the longest chain
of sequential calls in one debate x latency, and total calls x latency / concurrency); calls
and prompt/completion tokens per group per item (the paper reports ~18,000 tokens with 4-5
agents on Claude 3.7); and how the prompt grows with each debate turn (the transcript is sent
again on every turn).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("EVALDESK_HOME", tempfile.mkdtemp(prefix="evaldesk-bench-"))

WORDS = ["the", "question", "links", "the", "story", "to", "daily", "life", "but", "the", "answer", "is", "short", "and", "a", "child", "of", "four", "may", "need", "help", "with", "the", "word", "because", "the", "story", "uses", "it", "only", "once", "so", "I", "would", "keep", "my", "score"]


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _h(text: str, salt: str = "") -> int:
    return int(hashlib.sha256((salt + text).encode("utf-8")).hexdigest()[:8], 16)


def _words(n: int, seed: int) -> str:
    return " ".join(WORDS[(seed + i) % len(WORDS)] for i in range(n)).capitalize() + "."


def answer(body: dict) -> str:
    """JSON content that fits the request's schema."""
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
    name = (fmt.get("json_schema") or {}).get("name", "")
    prompt = json.dumps(body.get("messages"), ensure_ascii=False)
    seed = _h(prompt)
    dims = list(((schema.get("$defs") or {}).get("Scores") or {}).get("properties") or {})
    scores = {d: 1 + _h(prompt, d) % 5 for d in dims}
    if name == "Evaluation":
        return json.dumps({"rationale": _words(55, seed), "scores": scores})
    if name == "DebateReply":
        last = body["messages"][-1]["content"]
        names = re.findall(r"^- ([^:]+):", last, re.MULTILINE)
        me = re.search(r"It is your turn, (.+?)\.", last)
        others = [n for n in names if not me or n != me.group(1)]
        target = others[seed % len(others)] if others else "everyone"
        done = seed % 3 == 0
        message = ("NO MORE COMMENTS. " if done else f"I answer {target}: ") + _words(50, seed)
        return json.dumps({"message": message, "no_more_comments": done, "scores": scores})
    if name == "Synthesis":
        return json.dumps({"agreement": _words(40, seed), "disagreement": _words(40, seed + 1),
                           "overall": _words(40, seed + 2)})
    return json.dumps({})


def serve(port: int, latency: float) -> None:
    from aiohttp import web

    from tests.core.llm.fault_server import completion

    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(latency)
        content = answer(body)
        reply = completion(body, content)
        prompt = sum(_tokens(str(m.get("content") or "")) for m in body["messages"])
        reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": _tokens(content),
                          "total_tokens": prompt + _tokens(content)}
        return web.json_response(reply)

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        await asyncio.Event().wait()

    asyncio.run(main())


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    from tests.core.llm.fault_server import free_port

    port = free_port()
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(port),
                                "--latency", str(latency)])
    base = f"http://127.0.0.1:{port}/v1"
    for _ in range(200):
        try:
            urllib.request.urlopen(base + "/chat/completions", timeout=1)
        except urllib.error.HTTPError:
            return process, base
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the benchmark server did not start")


class Recorder:
    """Wraps the gateway: remembers each call's kind, prompt tokens and debate turn number."""

    def __init__(self, gateway) -> None:
        self.gateway = gateway
        self.profile = gateway.profile
        self.calls: list[tuple[str, int, int]] = []

    async def complete_json(self, messages, schema, **kw):
        prompt = sum(_tokens(m["content"]) for m in messages)
        turn = len(re.findall(r"^Turn \d+, ", messages[-1]["content"], re.MULTILINE))
        self.calls.append((schema.__name__, prompt, turn))
        return await self.gateway.complete_json(messages, schema, **kw)


def workload(n_items: int, n_groups: int, n_agents: int):
    from core.majeval import Item, Persona

    groups = ["Parents", "Teachers", "Developers", "Researchers", "Children"][:n_groups]
    personas = []
    for g in groups:
        for a in range(n_agents):
            name = f"{['Amy', 'Bo', 'Cara', 'Dan', 'Eve'][a]} {g[:-1]}son"
            personas.append(Persona(
                id=f"{g}/{a}", group=g, name=name,
                demographics=f"{name} is 38, has a degree in education and two children.",
                perspective="Questions should connect the story with the child's own life and "
                            "use words a four-year-old knows.",
                specialty="Fifteen years of reading aloud in a public library's story hour.",
                psychological_traits="Patient and warm, but quick to notice condescension.",
                social_relationships="Swaps book tips with other parents and the teachers of "
                                     "the local preschool."))
    story = ("Once upon a time a little fox lived at the edge of a great forest. " * 12).strip()
    items = [Item(id=f"item{i}", content=f"Q: Why did the fox hide in the burrow (story {i})? "
                  "A: Because it was cold and the burrow keeps animals warm in winter.",
                  context=story) for i in range(n_items)]
    return personas, items


async def bench(args: argparse.Namespace) -> None:
    from core.llm import Gateway, MemoryCache
    from core.llm.estimate import Latency, estimate
    from core.majeval import DEFAULT_DIMENSION, DebateSettings, Scale, evaluate
    from core.majeval.estimate import plan_debates
    from core.settings import ModelProfile

    process, base = start_server(args.latency)
    try:
        profile = ModelProfile(name="bench", model="openai/bench", api_bases=[base],
                               max_concurrency=args.concurrency, timeout_s=60, max_retries=0)
        personas, items = workload(args.items, args.groups, args.agents)
        warm = Gateway(profile, cache=MemoryCache(), api_key="x")
        await evaluate(personas[: args.agents], items[:1], "warm up", warm)  # imports, schema

        gateway = Gateway(profile, cache=MemoryCache(), api_key="x")
        recorder = Recorder(gateway)
        task = "Judge QA pairs for shared story reading with children aged 3 to 6."
        est = estimate(plan_debates(personas, items, task, [DEFAULT_DIMENSION], Scale(),
                                    DebateSettings(rounds=args.rounds))[0], profile,
                       latency=Latency(args.latency, "the server's fixed latency"))
        started = time.perf_counter()
        run = await evaluate(personas, items, task, recorder,
                             settings=DebateSettings(rounds=args.rounds),
                             max_units=args.max_units)
        wall = time.perf_counter() - started
    finally:
        process.kill()
        process.wait()

    units = run.groups
    usage = gateway.usage
    depth = []  # sequential calls per debate: phase 1, turns, finals (one step), aggregator
    for g in units:
        debate_turns = sum(1 for t in g.turns if t.kind == "debate")
        finals = 1 if any(t.kind == "final" for t in g.turns) else 0
        depth.append(1 + debate_turns + finals + 1)
    critical = max(depth) * args.latency
    throughput = usage.calls * args.latency / args.concurrency
    ideal = max(critical, throughput)
    per_unit_calls = usage.calls / len(units)
    per_unit_prompt = usage.prompt_tokens / len(units)
    per_unit_completion = usage.completion_tokens / len(units)
    turns = [sum(1 for t in g.turns if t.kind == "debate") for g in units]
    stops = defaultdict(int)
    for g in units:
        for a in g.agents:
            stops[a.finalised_by] += 1
    by_turn: dict[int, list[int]] = defaultdict(list)
    for name, prompt, turn in recorder.calls:
        if name == "DebateReply":
            by_turn[turn + 1].append(prompt)
    phase1 = [p for n, p, _ in recorder.calls if n == "Evaluation"]

    rows = [
        ("workload", (f"{args.items} items x {args.groups} groups x {args.agents} agents, rounds "
                     f"{args.rounds}, concurrency {args.concurrency}, latency {args.latency}s, "
                     f"debates in flight {args.max_units or 4 * args.concurrency}")),
        ("debates (units)", f"{len(units)}; failed {len(run.failed_units)}"),
        ("model calls", f"{usage.calls} ({per_unit_calls:.1f} per group per item)"),
        ("debate turns per debate", (f"mean {statistics.mean(turns):.1f}, max {max(turns)} "
                                    f"(cap {args.rounds * args.agents})")),
        ("finalised by", ", ".join(f"{k}: {v}" for k, v in sorted(stops.items()))),
        ("wall time", f"{wall:.2f} s"),
        ("ideal (critical path)", (f"{critical:.2f} s = {max(depth)} sequential calls x "
                                  f"{args.latency}s")),
        ("ideal (throughput)", (f"{throughput:.2f} s = {usage.calls} calls x {args.latency}s / "
                               f"{args.concurrency}")),
        ("wall / ideal", f"{wall / ideal:.2f}"),
        ("tokens per group per item", (f"{per_unit_prompt:,.0f} prompt + "
                                      f"{per_unit_completion:,.0f} completion = "
                                      f"{per_unit_prompt + per_unit_completion:,.0f}")),
        ("phase 1 prompt", f"{statistics.mean(phase1):,.0f} tokens per agent"),
        ("estimate before: calls", f"{est.calls:,} to {est.calls_max:,} (made {usage.calls:,})"),
        ("estimate before: tokens in", (f"{est.prompt_tokens:,} to {est.prompt_tokens_max:,} "
                                        f"(the server counted {usage.prompt_tokens:,})")),
        ("estimate before: tokens out", (f"{est.completion_tokens:,} to "
                                         f"{est.completion_tokens_max:,} (the server counted "
                                         f"{usage.completion_tokens:,})")),
        ("estimate before: time", (f"{est.seconds:.1f} to {est.seconds_max:.1f} s (took "
                                   f"{wall:.1f} s)")),
    ]
    width = max(len(k) for k, _ in rows)
    print()
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    print("\nprompt tokens of a debate turn by its position (the transcript grows):")
    print(f"{'turn':>4}  {'calls':>6}  {'mean prompt':>11}  {'growth':>7}")
    previous = None
    for turn in sorted(by_turn):
        mean = statistics.mean(by_turn[turn])
        growth = f"{mean - previous:+.0f}" if previous is not None else ""
        print(f"{turn:>4}  {len(by_turn[turn]):>6}  {mean:>11,.0f}  {growth:>7}")
        previous = mean


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--groups", type=int, default=3)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--max-units", type=int, default=None,
                        help="debates in flight at once (default: 4 x concurrency)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency)
        return
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
