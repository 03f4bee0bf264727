"""Benchmark of the engine for model files (llama.cpp's llama-server, ``core.llm._engine``) with
the bundled Gemma 3 270M, through EvalDesk's gateway, beside llama.cpp's own figure.

    .venv/bin/python tests/benchmarks/bench_local_engine.py [--tokens 128] [--texts 8]

Prints, in one run:

1. generation speed (tokens/s) of 4 calls one after another and of 4 calls at once through the
   gateway (``Gateway.complete_text``: HTTP, the engine's slots; completion tokens over wall
   time, so the prompt reading and the HTTP round trips count against us);
2. ``llama-batched-bench`` (built by ``make setup`` from the same llama.cpp source) for the same
   file, context and generation length, with 1 and 4 sequences: the engine's own generation
   speed (S_TG) without any HTTP or Python;
3. the wall time of a small InteractEval checklist scoring run (SummEval's first ``--texts``
   summaries, the authors' coherence checklist, from the shared data folder) with "calls at
   once" 1 and 4.

Targets (issue 29): 4 at once >= 0.9x the engine's own 4-sequence speed and >= 1.8x its own
one-at-a-time speed; scoring >= 1.25x faster at 4. The load average is printed beside the
figures: on a shared machine they move with it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("EVALDESK_HOME", tempfile.mkdtemp(prefix="evaldesk-bench-"))

DATA = Path(os.environ.get("EVALDESK_SHARED_DATA", ROOT.parent / "shared" / "data"))
if not DATA.is_dir():
    DATA = Path("/work/shared/data")
CONTEXT = 8192
TOPICS = ("a lighthouse keeper", "a baker in a small town", "a lost kite", "a winter garden")


def processor() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "processor not named"


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def profile(concurrency: int, max_tokens: int):
    from core.settings import bundled_profile

    return bundled_profile().model_copy(update={
        "max_tokens": max_tokens, "max_concurrency": concurrency, "context_window": CONTEXT,
        "temperature": 0.0})


def story(topic: str, run: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"(run {run}) Write a long, detailed story about {topic}. "
             "Do not stop early."}]


async def gateway_speed(tokens: int, rounds: int) -> dict[str, float]:
    """Completion tokens per second of 4 calls one after another and of 4 at once (best of
    ``rounds``; every call is new, so nothing comes from the response cache)."""
    from core.llm import Gateway, MemoryCache

    gateway = Gateway(profile(4, tokens), cache=MemoryCache())
    await gateway.complete_text("Warm up.")  # the engine is started and the model loaded
    engine = gateway._engine
    best = {"one after another": 0.0, "4 at once": 0.0}
    run = 0
    for _ in range(rounds):
        for mode in ("one after another", "4 at once"):
            run += 1
            before = gateway.usage.completion_tokens
            started = time.perf_counter()
            if mode == "4 at once":
                await asyncio.gather(*[gateway.complete_text(story(t, run)) for t in TOPICS])
            else:
                for topic in TOPICS:
                    await gateway.complete_text(story(topic, run))
            took = time.perf_counter() - started
            best[mode] = max(best[mode], (gateway.usage.completion_tokens - before) / took)
    best["slots"] = engine.slots
    return best


def batched_bench(gguf: Path, tokens: int, prompt: int) -> dict[int, float]:
    """llama-batched-bench's generation speed (S_TG, tokens/s) by number of sequences."""
    from core.llm import _engine

    program = _engine.program().with_name("llama-batched-bench" + (
        ".exe" if sys.platform == "win32" else ""))
    command = [str(program), "-m", str(gguf), "-c", str(CONTEXT * 4), "-b", "2048",
               "-ub", "512", "-npp", str(prompt), "-ntg", str(tokens), "-npl", "1,4",
               "--output-format", "jsonl"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"llama-batched-bench failed:\n{result.stderr[-2000:]}")
    speeds = {}
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            speeds[int(row["pl"])] = float(row["speed_tg"])
    return speeds


async def scoring_time(texts: int, concurrency: int) -> tuple[float, int, int]:
    """Wall time of scoring ``texts`` SummEval summaries with the coherence checklist."""
    from core.interacteval import Checklist, ChecklistItem, TextItem, score_texts
    from core.llm import Gateway, MemoryCache

    folder = DATA / "interacteval" / "summeval" / "coherence"
    definition = " ".join((folder / "dimension_definition.txt").read_text().split())
    questions = [line.lstrip("- ").strip() for line in (folder / "human_llm_checklist.txt")
                 .read_text().splitlines() if line.strip()]
    checklist = Checklist(dimension="Coherence", definition=definition,
                          items=[ChecklistItem(question=q) for q in questions])
    rows = json.loads((DATA / "summeval" / "summeval.json").read_text())[:texts]
    items = [TextItem(id=f"{r['doc_id']}|{r['system_id']}", text=r["system_output"],
                      source=r["source"], source_id=r["doc_id"], system=r["system_id"])
             for r in rows]
    gateway = Gateway(profile(concurrency, 512), cache=MemoryCache())
    await gateway.complete_text("Warm up.")
    started = time.perf_counter()
    run = await score_texts([checklist], items, gateway, model=gateway.profile.model)
    took = time.perf_counter() - started
    return took, gateway.usage.calls, len(run.failed)


async def main_async(args: argparse.Namespace) -> None:
    from core.llm import _local, stop_engines

    gguf = _local.bundled_gguf_path()
    print(f"machine: {platform.machine()} {platform.system()}, {os.cpu_count()} cores "
          f"({processor()}); model: {gguf.name}; "
          f"context {CONTEXT} per slot; {args.tokens} tokens per call; {load()}", flush=True)
    speeds = await gateway_speed(args.tokens, args.rounds)
    stop_engines()  # llama-batched-bench gets the cores to itself
    print(f"gateway done; {load()}", flush=True)
    engine = batched_bench(gguf, args.tokens, args.prompt)
    print(f"llama-batched-bench done; {load()}", flush=True)
    one, four = speeds["one after another"], speeds["4 at once"]
    rows = [
        ("EvalDesk gateway, 4 calls one after another", f"{one:.1f}", ""),
        ("EvalDesk gateway, 4 calls at once", f"{four:.1f}",
         f"{four / one:.2f}x one after another (target >= 1.8)"),
        ("llama-batched-bench, 1 sequence (S_TG)", f"{engine.get(1, 0):.1f}", ""),
        ("llama-batched-bench, 4 sequences (S_TG)", f"{engine.get(4, 0):.1f}",
         f"EvalDesk 4 at once = {four / engine[4]:.2f}x this (target >= 0.9)"
         if engine.get(4) else ""),
    ]
    print("\n| what | tokens/s | note |\n| --- | ---: | --- |")
    for row in rows:
        print(f"| {row[0]} | {row[1]} | {row[2]} |")
    stop_engines()
    times = {}
    for concurrency in (1, 4):
        times[concurrency] = await scoring_time(args.texts, concurrency)
        stop_engines()
        print(f"scoring at {concurrency} done; {load()}", flush=True)
    print(f"\n| checklist scoring, {args.texts} SummEval texts x coherence | wall time | calls "
          "| failed texts |\n| --- | ---: | ---: | ---: |")
    for concurrency, (took, calls, failed) in times.items():
        print(f"| calls at once {concurrency} | {took:.1f} s | {calls} | {failed} |")
    print(f"\nscoring speed-up at 4: {times[1][0] / times[4][0]:.2f}x (target >= 1.25); "
          f"{load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128, help="tokens generated per call")
    parser.add_argument("--prompt", type=int, default=32,
                        help="prompt tokens for llama-batched-bench (our prompts' length)")
    parser.add_argument("--texts", type=int, default=8, help="texts in the scoring run")
    parser.add_argument("--rounds", type=int, default=2, help="best of this many rounds")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
