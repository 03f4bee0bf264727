"""Benchmark of MAJ-Eval's debate stage against a latency-injecting local endpoint.

    .venv/bin/python tests/benchmarks/bench_majeval_debate.py [--items 50] [--groups 3]
        [--agents 3] [--rounds 3] [--concurrency 16] [--latency 0.1]

An OpenAI-compatible server on 127.0.0.1 (a separate process, aiohttp) answers every request
a fixed latency after it came in (its own work inside that time) with JSON that fits the
requested schema: phase 1 evaluations and debate turns with scores drawn from a hash of the
prompt (so agents disagree), "no more comments" in about a third of the turns, realistic text
lengths. Tokens are counted as characters / 4 (the
server reports them that way), so prompt sizes are comparable with a real tokenizer's.

Reported: wall time against the ideal (the larger of the critical path, i.e. the longest chain
of sequential calls in one debate x latency, and total calls x latency / concurrency), with an
in-memory cache and with a project file as cache and log (as in the app); calls and
prompt/completion tokens per group per item (the paper reports ~18,000 tokens with 4-5 agents on
Claude 3.7); how the prompt grows with each debate turn (the transcript is sent again on every
turn); and how much of the prompt repeats an earlier request's prefix, which providers' prompt
caches do not bill in full: the server renders each request's messages as one text, keeps every
prefix it has seen (at 16-token steps) and reports, per request, the longest repeated prefix,
both as is and under OpenAI's rule (only from 1,024 tokens on, in 128-token steps; reported
to the client as ``usage.prompt_tokens_details.cached_tokens``, as OpenAI does). "Before" is the
layout of the debate prompts before issue 17 (debate_turn-2 and final_evaluation-2, rebuilt in
this file: the first evaluations in the user message, the final evaluation's message starting
differently from a turn's), run against the same server in the same process.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
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
        names = re.findall(r"^- ([^:]+):", "\n".join(m["content"] for m in body["messages"]),
                           re.MULTILINE)
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


STEP = 64  # characters (16 tokens): the step at which repeated prefixes are found


class Prefixes:
    """Every prefix (at :data:`STEP`-character steps) of the requests seen so far."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self.prompt = self.repeated = self.openai = 0

    def add(self, text: str) -> tuple[int, int]:
        """(tokens of the longest prefix of ``text`` an earlier request had, the same under
        OpenAI's rule); then remembers ``text``'s prefixes."""
        digest = hashlib.sha256()
        longest, missed = 0, False
        for end in range(STEP, len(text) + 1, STEP):
            digest.update(text[end - STEP:end].encode("utf-8"))
            key = digest.copy().digest()
            if not missed and key in self.seen:
                longest = end
            else:
                missed = True
                self.seen.add(key)
        repeated = longest // 4
        openai = (repeated // 128) * 128 if repeated >= 1024 else 0
        self.prompt += len(text) // 4
        self.repeated += repeated
        self.openai += openai
        return repeated, openai


def rendered(messages: list[dict]) -> str:
    """The request as one text, as a chat template lays it out for the model."""
    return "".join(f"<|{m.get('role')}|>\n{m.get('content') or ''}\n" for m in messages)


def serve(port: int, latency: float) -> None:
    from aiohttp import web

    from tests.core.llm.fault_server import completion

    prefixes: dict[str, Prefixes] = defaultdict(Prefixes)

    async def handle(request: web.Request) -> web.Response:
        loop = asyncio.get_running_loop()
        due = loop.time() + latency  # the answer leaves `latency` after the request came in
        body = await request.json()
        text = rendered(body["messages"])
        _, cached = prefixes[request.match_info["mode"]].add(text)
        content = answer(body)
        reply = completion(body, content)
        prompt = len(text) // 4
        reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": _tokens(content),
                          "total_tokens": prompt + _tokens(content),
                          "prompt_tokens_details": {"cached_tokens": cached}}
        # the server's own work happens within the latency, as a model server's does: only
        # the client's time per call shows beyond the ideal
        await asyncio.sleep(max(0.0, due - loop.time()))
        return web.json_response(reply)

    async def stats(request: web.Request) -> web.Response:
        found = prefixes[request.match_info["mode"]]
        return web.json_response({"prompt": found.prompt, "repeated": found.repeated,
                                  "openai": found.openai})

    async def main() -> None:
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_post("/{mode}/v1/chat/completions", handle)
        app.router.add_get("/{mode}/stats", stats)
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
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(base + "/up/v1/chat/completions", timeout=1)
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


OLD_TURN = """Phase 2, the discussion in your group.

The first evaluations of everyone in your group:
$initial_evaluations

The discussion so far:
$discussion

It is your turn, $name. Consider what the others said from your perspective and with your expertise, then agree, disagree or add a nuance. When you answer someone in particular, use their name. Give your scores as they stand now, changed or not.
When you see no point left to raise, end your part of the discussion; your scores are then final.
Reply with JSON only: $reply_format"""
OLD_FINAL = """The discussion in your group has ended.

The first evaluations of everyone in your group:
$initial_evaluations

The discussion:
$discussion

Now give your final evaluation from your perspective and with your expertise, taking into account whatever in the discussion convinced you.
Reply with JSON only, in the form described above, with your own reasons and final scores."""


def old_layout(step: str):
    """The agent's prompt as it was laid out before issue 17 (debate_turn-2,
    final_evaluation-2): the first evaluations in the user message, after the phase heading."""
    from core.majeval import _prompts
    from core.prompts import PromptTemplate

    agent, turn = _prompts.load("agent"), _prompts.load(step)
    user = {"debate_turn": OLD_TURN, "final_evaluation": OLD_FINAL}.get(step, turn.user)
    return PromptTemplate(_prompts.METHOD, f"agent+{step}", f"{agent.version}+old-{step}",
                          agent.system, user)


async def one_run(args, base: str, personas, items, *, layout: str, project_folder=None):
    """One evaluation of every item; returns (run, gateway usage, recorder, wall seconds)."""
    from core.llm import Gateway, MemoryCache
    from core.majeval import DebateSettings, debate, evaluate
    from core.project import Project
    from core.project.units import RunUnits
    from core.settings import ModelProfile

    profile = ModelProfile(name="bench", model="openai/bench", api_bases=[base],
                           max_concurrency=args.concurrency, timeout_s=60, max_retries=0)
    current = debate.agent_template
    if layout == "before":
        debate.agent_template = old_layout
    project = store = run_id = None
    if project_folder is not None:
        project = Project.create(Path(project_folder) / f"{layout}.evaldesk", method="majeval")
        run_id = project.start_run("majeval", "debate", {"bench": layout})
        store = RunUnits(project, run_id, "debate")
    try:
        gateway = Gateway(profile, cache=project if project is not None else MemoryCache(),
                          api_key="x", run_id=run_id)
        recorder = Recorder(gateway)
        started = time.perf_counter()
        run = await evaluate(personas, items, "Judge QA pairs for shared story reading with "
                             "children aged 3 to 6.", recorder,
                             settings=DebateSettings(rounds=args.rounds),
                             max_units=args.max_units, store=store)
        wall = time.perf_counter() - started
    finally:
        debate.agent_template = current
        if project is not None:
            project.close()
    return run, gateway.usage, recorder, wall


def prefix_stats(root: str, mode: str) -> dict:
    with urllib.request.urlopen(f"{root}/{mode}/stats", timeout=10) as reply:
        return json.loads(reply.read())


@functools.lru_cache(maxsize=64)
def _format(schema) -> dict:
    """The response format the server is sent for ``schema``, made once per schema as the
    gateway does (made per call it cost the floor run 0.75 ms of CPU a call)."""
    return {"json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()}}


class Waiting:
    """A model in this process that answers as the server does after waiting ``latency`` (at
    most ``concurrency`` at a time): no HTTP, no gateway, no cache. The debates' time with it is
    the floor their own shape sets (chains of turns that wait for each other, the last debates
    running with fewer calls in flight)."""

    def __init__(self, concurrency: int, latency: float) -> None:
        from core.settings import ModelProfile

        self.profile = ModelProfile(name="floor", model="openai/floor",
                                    api_bases=["http://127.0.0.1:9/v1"],
                                    max_concurrency=concurrency)
        self.slots = asyncio.Semaphore(concurrency)
        self.latency = latency
        self.calls = 0

    async def complete_json(self, messages, schema, *, check=None, **kw):
        content = answer({"messages": messages, "response_format": _format(schema)})
        async with self.slots:
            await asyncio.sleep(self.latency)
        self.calls += 1
        value = schema.model_validate_json(content)
        if check is not None and check(value):
            raise RuntimeError(f"the benchmark's answer failed the check: {check(value)}")
        return value


async def floor_run(args, personas, items, task: str) -> tuple[int, float]:
    from core.majeval import DebateSettings, evaluate

    model = Waiting(args.concurrency, args.latency)
    started = time.perf_counter()
    await evaluate(personas, items, task, model, settings=DebateSettings(rounds=args.rounds),
                   max_units=args.max_units)
    return model.calls, time.perf_counter() - started


async def bench(args: argparse.Namespace) -> None:
    from core.llm import Gateway, MemoryCache
    from core.llm.estimate import Latency, estimate
    from core.majeval import DEFAULT_DIMENSION, DebateSettings, Scale, evaluate
    from core.majeval.estimate import plan_debates
    from core.settings import ModelProfile

    process, root = start_server(args.latency)
    try:
        personas, items = workload(args.items, args.groups, args.agents)
        warm = Gateway(ModelProfile(name="bench", model="openai/bench",
                                    api_bases=[f"{root}/warm/v1"],
                                    max_concurrency=args.concurrency, timeout_s=60,
                                    max_retries=0), cache=MemoryCache(), api_key="x")
        await evaluate(personas[: args.agents], items[:1], "warm up", warm)  # imports, schema
        task = "Judge QA pairs for shared story reading with children aged 3 to 6."
        profile = ModelProfile(name="bench", model="openai/bench", api_bases=[f"{root}/after/v1"],
                               max_concurrency=args.concurrency, timeout_s=60, max_retries=0)
        est = estimate(plan_debates(personas, items, task, [DEFAULT_DIMENSION], Scale(),
                                    DebateSettings(rounds=args.rounds))[0], profile,
                       latency=Latency(args.latency, "the server's fixed latency"))
        before = await one_run(args, f"{root}/before/v1", personas, items, layout="before")
        run, usage, recorder, wall = await one_run(args, f"{root}/after/v1", personas, items,
                                                   layout="after")
        with tempfile.TemporaryDirectory() as folder:
            in_project = await one_run(args, f"{root}/project/v1", personas, items,
                                       layout="after", project_folder=folder)
        stats = {mode: prefix_stats(root, mode) for mode in ("before", "after")}
        floor_calls, floor_wall = await floor_run(args, personas, items, task)
    finally:
        process.kill()
        process.wait()

    units = run.groups
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
    p_run, p_usage, _, p_wall = in_project
    b_run, b_usage, _, b_wall = before

    def share(key: str, mode: str) -> str:
        found = stats[mode]
        return f"{found[key] / found['prompt']:.1%}"

    def full_price(u, groups) -> str:
        return f"{(u.prompt_tokens - u.cached_prompt_tokens) / len(groups):,.0f}"

    rows = [
        ("workload", (f"{args.items} items x {args.groups} groups x {args.agents} agents, rounds "
                     f"{args.rounds}, concurrency {args.concurrency}, latency {args.latency}s, "
                     f"debates in flight {args.max_units or 4 * args.concurrency}")),
        ("debates (units)", f"{len(units)}; failed {len(run.failed_units)}"),
        ("model calls", f"{usage.calls} ({per_unit_calls:.1f} per group per item)"),
        ("debate turns per debate", (f"mean {statistics.mean(turns):.1f}, max {max(turns)} "
                                    f"(cap {args.rounds * args.agents})")),
        ("finalised by", ", ".join(f"{k}: {v}" for k, v in sorted(stops.items()))),
        ("ideal (critical path)", (f"{critical:.2f} s = {max(depth)} sequential calls x "
                                  f"{args.latency}s")),
        ("ideal (throughput)", (f"{throughput:.2f} s = {usage.calls} calls x {args.latency}s / "
                               f"{args.concurrency}")),
        ("floor: a model in this process that only waits (no HTTP, no gateway)",
         (f"{floor_wall:.2f} s = {floor_wall / ideal:.3f}x ideal ({floor_calls} calls): what "
          "the debates' shape allows")),
        ("wall time, in-memory cache", f"{wall:.2f} s = {wall / ideal:.3f}x ideal"),
        ("wall time, project file as cache and log",
         (f"{p_wall:.2f} s = {p_wall / ideal:.3f}x ideal ({p_usage.calls} calls, "
          f"{len(p_run.failed_units)} failed)")),
        ("tokens per group per item", (f"{per_unit_prompt:,.0f} prompt + "
                                      f"{per_unit_completion:,.0f} completion = "
                                      f"{per_unit_prompt + per_unit_completion:,.0f}")),
        ("phase 1 prompt", f"{statistics.mean(phase1):,.0f} tokens per agent"),
        ("prompt tokens per group per item, before -> after",
         f"{b_usage.prompt_tokens / len(b_run.groups):,.0f} -> {per_unit_prompt:,.0f}"),
        ("share repeating an earlier request's prefix, before -> after",
         f"{share('repeated', 'before')} -> {share('repeated', 'after')}"),
        ("the same under OpenAI's rule (>= 1,024 tokens), before -> after",
         f"{share('openai', 'before')} -> {share('openai', 'after')}"),
        ("cached prompt tokens recorded by the gateway, before -> after",
         (f"{b_usage.cached_prompt_tokens:,} of {b_usage.prompt_tokens:,} -> "
          f"{usage.cached_prompt_tokens:,} of {usage.prompt_tokens:,}")),
        ("uncached prompt tokens per group per item, before -> after",
         f"{full_price(b_usage, b_run.groups)} -> {full_price(usage, units)}"),
        ("wall time of the 'before' layout (in memory)", f"{b_wall:.2f} s"),
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
