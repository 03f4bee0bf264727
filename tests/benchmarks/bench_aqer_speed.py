"""AQER speed and memory: synthetic embeddings at 10k / 100k / 1M answers, and a 10,000-answer
workbook end to end through ``evaldesk aqer`` with the bundled model.

1. AQER's iterations (to convergence) and our RASA against crowd-kit's RASA on the same
   synthetic embeddings (384 dimensions like all-MiniLM-L6-v2, half of the worker x question
   cells answered). crowd-kit is slow at scale: above ``--crowdkit-full`` answers it runs a few
   rounds and its full run is extrapolated from its time per round and its rounds at 10k.
   The whole ``aqer()`` call (cells checked, vectors looked up, iterations, tables) is timed
   beside it, in wall seconds and in CPU seconds of this process (the CPU ratio is the one to
   trust when other work shares the machine).
2. Peak memory of AQER at 100k (and 1M) answers, each in a fresh subprocess: Python's
   tracemalloc peak (numpy's arrays included) and the process's maximum resident size.
3. End to end: a synthetic 10,000-answer .xlsx -> ``evaldesk aqer`` -> .xlsx, timed.

    .venv/bin/python tests/benchmarks/bench_aqer_speed.py [--skip-1m] [--skip-e2e]
"""

from __future__ import annotations

import argparse
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
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

DIM = 384
#: answers -> (workers, questions); half of the cells are answered
SIZES = {10_000: (200, 100), 100_000: (1_000, 200), 1_000_000: (2_000, 1_000)}


def synthetic(n_answers: int, seed: int = 0):
    """EmbeddedResponses with ``n_answers`` answers: truth + worker-specific noise, sparse."""
    from core.aqer.synthetic_exemplary_answer import EmbeddedResponses

    m, n = SIZES[n_answers]
    rng = np.random.default_rng(seed)
    cells = rng.choice(m * n, size=n_answers, replace=False)
    worker, question = cells // n, cells % n
    truth = rng.standard_normal((n, DIM), dtype=np.float32)
    noise = np.linspace(0.3, 3.0, m, dtype=np.float32)
    vectors = np.empty((n_answers, DIM), dtype=np.float32)
    for start in range(0, n_answers, 65_536):
        stop = min(start + 65_536, n_answers)
        block = rng.standard_normal((stop - start, DIM), dtype=np.float32)
        block *= noise[worker[start:stop], None]
        block += truth[question[start:stop]]
        vectors[start:stop] = block
    return EmbeddedResponses(vectors, np.arange(n_answers), worker, question, m, n)


def time_aqer(responses) -> tuple[float, int]:
    from core.aqer.iterative_reweighting import iterative_reweighting

    c0, t0 = time.process_time(), time.perf_counter()
    out = iterative_reweighting(responses)
    LAST_CPU["iterations"] = time.process_time() - c0
    return time.perf_counter() - t0, out.iterations


def lookup_cpu(frame, encoder) -> float:
    """CPU seconds to look every answer's vector up once (the benchmark's stand-in for the
    cache): with the iterations, the part of the whole call that no whole call can skip."""
    texts = frame["response"].tolist()
    c0 = time.process_time()
    encoder(texts)
    return time.process_time() - c0


def whole_call_inputs(responses):
    """What ``aqer()`` is given at this size: a long frame of text cells (as a sheet is read)
    and an encoder that looks the synthetic vectors up (the vectors stand for the cache)."""
    import pandas as pd

    vectors = responses.answer_vectors()
    frame = pd.DataFrame(
        {
            "question": [f"question {q}" for q in responses.question],
            "worker": [f"worker {w}" for w in responses.worker],
            "response": [f"answer {k}" for k in range(len(responses))],
        }
    )
    index = pd.Index(frame["response"])

    def encoder(texts: list[str]) -> np.ndarray:
        return vectors[index.get_indexer(texts)]

    return frame, encoder


#: CPU seconds of the last timed call (this process, all threads): on a shared machine the
#: wall time counts the time other work held the cores, the CPU time does not.
LAST_CPU = {"seconds": 0.0}


def time_whole_call(frame, encoder) -> tuple[float, int]:
    """The whole ``aqer()`` call: checking the cells, embedding (looked up), the iterations, the
    like-for-like similarities and the tables; without the baselines (RASA, F1, BLEU-1)."""
    from core.aqer.pipeline import aqer

    c0, t0, times0 = time.process_time(), time.perf_counter(), os.times()
    result = aqer(frame, encoder, baselines=False)
    LAST_CPU["seconds"] = time.process_time() - c0
    times1 = os.times()
    LAST_CPU["user"], LAST_CPU["system"] = times1.user - times0.user, times1.system - times0.system
    return time.perf_counter() - t0, result.iterations


def time_our_rasa(responses) -> tuple[float, int]:
    from core.aqer.rasa import rasa_skills

    t0 = time.perf_counter()
    out = rasa_skills(responses)
    return time.perf_counter() - t0, out.iterations


def crowdkit_frame(responses):
    import pandas as pd

    return pd.DataFrame(
        {
            "task": responses.question,
            "worker": responses.worker,
            "output": responses.row,
            "embedding": list(responses.answer_vectors()),
        }
    )


def time_crowdkit(responses, n_iter: int = 100) -> tuple[float, int]:
    from crowdkit.aggregation import RASA

    data = crowdkit_frame(responses)
    model = RASA(n_iter=n_iter)
    rounds = 0
    original = model._update_skills

    def counted(*args, **kwargs):
        nonlocal rounds
        rounds += 1
        return original(*args, **kwargs)

    model._update_skills = counted  # type: ignore[method-assign]
    c0, t0 = time.process_time(), time.perf_counter()
    model.fit(data)
    LAST_CPU["seconds"] = time.process_time() - c0
    return time.perf_counter() - t0, rounds


def child_memory(n_answers: int, whole: bool) -> None:
    """Run in a fresh process: AQER's iterations (or the whole ``aqer()`` with its tables and
    baselines, fed the synthetic vectors) on ``n_answers``; print peak memory as JSON."""
    import tracemalloc

    tracemalloc.start()
    responses = synthetic(n_answers)
    embeddings = responses.sorted_vectors.nbytes
    t0 = time.perf_counter()
    if whole:
        import pandas as pd

        from core.aqer.pipeline import aqer

        vectors = responses.answer_vectors()
        frame = pd.DataFrame(
            {
                "question": [f"question {q}" for q in responses.question],
                "worker": [f"worker {w}" for w in responses.worker],
                "response": [f"answer {k}" for k in range(len(responses))],
            }
        )
        del responses

        def encoder(texts: list[str]) -> np.ndarray:
            return vectors[[int(t.rsplit(" ", 1)[1]) for t in texts]]

        tracemalloc.reset_peak()
        result = aqer(frame, encoder)
        rounds = result.iterations
    else:
        tracemalloc.reset_peak()
        _, rounds = time_aqer(responses)
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    print(
        json.dumps(
            {
                "peak": peak,
                "rss": _high_water_mark(),
                "embeddings": embeddings,
                "seconds": seconds,
                "rounds": rounds,
            }
        )
    )


def _high_water_mark() -> int:
    """Peak resident memory of this process in bytes (Linux VmHWM; ru_maxrss survives exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def measure_memory(n_answers: int, whole: bool) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child-memory", str(n_answers)]
        + (["--whole"] if whole else []),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def write_e2e_workbook(path: Path, workers: int = 100, questions: int = 100) -> int:
    """A 10,000-answer long workbook of varied short sentences (unique texts)."""
    from openpyxl import Workbook

    rng = np.random.default_rng(7)
    subjects = [
        "the cell",
        "a river",
        "the market",
        "this engine",
        "our team",
        "the poem",
        "that bridge",
        "the virus",
        "a planet",
        "the law",
    ]
    verbs = [
        "changes",
        "protects",
        "measures",
        "supports",
        "explains",
        "reduces",
        "moves",
        "builds",
        "connects",
        "shows",
    ]
    objects = [
        "energy",
        "the water",
        "prices",
        "heat",
        "the story",
        "trade",
        "light",
        "risk",
        "the signal",
        "growth",
    ]
    extras = [
        "quickly",
        "in winter",
        "for most people",
        "over time",
        "at night",
        "by design",
        "in theory",
        "very often",
        "with care",
        "on average",
    ]
    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Answers")
    ws.append(["question", "worker", "response"])
    rows = 0
    for q in range(questions):
        for w in range(workers):
            k = rng.integers(10, size=4)
            text = (
                f"{subjects[k[0]].capitalize()} {verbs[k[1]]} {objects[k[2]]} "
                f"{extras[k[3]]} (question {q + 1}, note {w})."
            )
            ws.append([f"Question {q + 1}: what does it do?", f"worker {w + 1:03d}", text])
            rows += 1
    wb.save(path)
    return rows


def end_to_end() -> tuple[int, float, str]:
    with tempfile.TemporaryDirectory() as folder:
        src, out = Path(folder) / "answers.xlsx", Path(folder) / "aqer.xlsx"
        rows = write_e2e_workbook(src)
        env = dict(os.environ, EVALDESK_HOME=str(Path(folder) / "home"))
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "core.cli", "aqer", str(src), "-o", str(out), "--device", "cpu"],
            cwd=ROOT,
            env=env,
            check=False,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"evaldesk aqer failed:\n{done.stderr[-2000:]}")
        return rows, seconds, done.stderr.strip().splitlines()[-1]


SHARED = Path(os.environ.get("EVALDESK_SHARED_DATA", "/work/shared/data"))


def crowd_end_to_end(name: str = "J1") -> dict:
    """A real crowd set (CrowdWSA2019 ``name``, read in place) as .xlsx -> ``evaldesk aqer`` ->
    .xlsx, beside what plain sentence-transformers with torch needs just to encode its distinct
    answers (model already loaded), measured in this run. The ONNX file is exported before the
    timed run (first use; its time is reported on its own), as it is after the first run."""
    import csv

    import pandas as pd
    from openpyxl import Workbook

    labels = pd.read_csv(
        SHARED / "crowdwsa2019" / f"CrowdWSA2019_{name}_label_anonymous.tsv",
        sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False,
    )
    labels = labels[labels["workeranswer"].str.strip() != ""]
    labels = labels.drop_duplicates(["worker", "sentence"], keep="first")
    distinct = list(dict.fromkeys(labels["workeranswer"].str.strip()))
    out: dict = {"set": name, "answers": len(labels), "distinct": len(distinct)}
    with tempfile.TemporaryDirectory() as folder:
        src, dst = Path(folder) / "answers.xlsx", Path(folder) / "aqer.xlsx"
        wb = Workbook(write_only=True)
        ws = wb.create_sheet("Answers")
        ws.append(["question", "worker", "response"])
        for q, w, r in zip(labels["sentence"], labels["worker"], labels["workeranswer"]):
            ws.append([q, w, r])
        wb.save(src)
        env = dict(os.environ, EVALDESK_HOME=str(Path(folder) / "home"))
        export = (
            "import time, core.embeddings as e; t = time.perf_counter(); "
            "enc = e.Encoder(device='cpu'); print(enc.backend, time.perf_counter() - t)"
        )
        done = subprocess.run(
            [sys.executable, "-c", export], cwd=ROOT, env=env, capture_output=True, text=True,
            check=False,
        )
        backend, seconds = done.stdout.split()[-2:]
        out["first_use"] = (backend, float(seconds))
        runs = []
        for _ in range(2):
            dst.unlink(missing_ok=True)
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "core.cli", "aqer", str(src), "-o", str(dst),
                 "--device", "cpu"],
                cwd=ROOT, env=env, capture_output=True, text=True, check=False,
            )
            runs.append(time.perf_counter() - t0)
            if done.returncode != 0:
                raise SystemExit(f"evaldesk aqer failed:\n{done.stderr[-2000:]}")
        out["e2e"] = runs
    # Plain sentence-transformers + torch, as a user would call it, just encoding.
    from sentence_transformers import SentenceTransformer

    from core.embeddings import bundled_model_path

    model = SentenceTransformer(str(bundled_model_path()), device="cpu")
    model.encode(distinct[:64])  # warm
    encodes = []
    for _ in range(2):
        t0 = time.perf_counter()
        model.encode(distinct, batch_size=32, convert_to_numpy=True)
        encodes.append(time.perf_counter() - t0)
    out["encode"] = encodes
    return out


def print_crowd_end_to_end(result: dict) -> None:
    e2e, enc = min(result["e2e"]), min(result["encode"])
    print()
    print(
        f"Real crowd set CrowdWSA2019 {result['set']}: {result['answers']:,} answers, "
        f"{result['distinct']:,} distinct; best of 2 each, same run. First use: loading the "
        f"model ({result['first_use'][0]}, ONNX export included) took "
        f"{result['first_use'][1]:.1f} s."
    )
    print()
    print("| what | seconds | ratio to plain encode (target <= 0.7) |")
    print("|---|---|---|")
    print(
        f"| plain sentence-transformers + torch: encode the distinct answers only | {enc:.1f} "
        "| 1.00 |"
    )
    print(
        f"| .xlsx -> evaldesk aqer (ONNX Runtime, cpu) -> .xlsx, whole process | {e2e:.1f} | "
        f"{e2e / enc:.2f} |"
    )
    print(f"(all runs: e2e {result['e2e']}, encode {result['encode']}; load average "
          f"{os.getloadavg()[0]:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child-memory", type=int)
    parser.add_argument("--whole", action="store_true")
    parser.add_argument("--skip-1m", action="store_true")
    parser.add_argument("--skip-e2e", action="store_true")
    parser.add_argument("--skip-crowd", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument(
        "--sizes", default="", help="comma-separated answer counts for the speed table (10000,...)"
    )
    parser.add_argument(
        "--crowdkit-full",
        type=int,
        default=100_000,
        help="run crowd-kit to convergence up to this many answers",
    )
    args = parser.parse_args()
    if args.child_memory:
        child_memory(args.child_memory, args.whole)
        return

    print("# AQER speed and memory (synthetic 384-d embeddings, half the cells answered)")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}; load average at start "
        f"{os.getloadavg()[0]:.1f} (the machine is shared with other work)"
    )
    if not args.skip_speed:
        speed(args)
    if not args.skip_memory:
        memory(args)
    if not args.skip_crowd:
        print_crowd_end_to_end(crowd_end_to_end())
    if not args.skip_e2e:
        rows, seconds, _ = end_to_end()
        print()
        print("| end to end | answers | seconds | limit | load average after |")
        print("|---|---|---|---|---|")
        print(
            f"| .xlsx -> evaldesk aqer (bundled all-MiniLM-L6-v2, cpu) -> .xlsx | {rows:,} | "
            f"{seconds:.1f} | 120 | {os.getloadavg()[0]:.1f} |"
        )


def speed(args: argparse.Namespace) -> None:
    print()
    print(
        "| answers | workers x questions | AQER s (rounds) | our RASA s (rounds) "
        "| crowd-kit RASA s (rounds) | crowd-kit / AQER | crowd-kit / our RASA "
        "| per round: crowd-kit / AQER | whole aqer() s | crowd-kit / whole aqer() "
        "| CPU s: crowd-kit, whole aqer() | CPU: crowd-kit / whole aqer() |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    sizes = [10_000, 100_000] + ([] if args.skip_1m else [1_000_000])
    if args.sizes:
        sizes = [int(x) for x in args.sizes.split(",")]
    ck_rounds_full = None
    splits: list[tuple[int, float, float]] = []
    warm = synthetic(10_000, seed=1)  # imports (scipy.sparse, scipy.stats) out of the timings
    time_aqer(warm), time_our_rasa(warm)
    time_whole_call(*whole_call_inputs(warm))
    del warm
    for n_answers in sizes:
        responses = synthetic(n_answers)
        aqer_s, aqer_rounds = time_aqer(responses)
        iterations_cpu = LAST_CPU["iterations"]
        rasa_s, rasa_rounds = time_our_rasa(responses)
        frame, encoder = whole_call_inputs(responses)
        whole_s, _ = time_whole_call(frame, encoder)
        whole_cpu = LAST_CPU["seconds"]
        whole_split = (LAST_CPU["user"], LAST_CPU["system"])
        least = lookup_cpu(frame, encoder) + iterations_cpu
        del frame, encoder
        if n_answers <= args.crowdkit_full:
            ck_s, ck_rounds = time_crowdkit(responses)
            ck_cpu = LAST_CPU["seconds"]
            ck_rounds_full = ck_rounds
            per_round = ck_s / ck_rounds
            ck_text = f"{ck_s:.2f} ({ck_rounds})"
        else:
            sample_s, sample_rounds = time_crowdkit(responses, n_iter=2)
            ck_cpu = LAST_CPU["seconds"] / sample_rounds * (ck_rounds_full or 100)
            per_round = sample_s / sample_rounds
            ck_s = per_round * (ck_rounds_full or 100)
            ck_text = (
                f"~{ck_s:.0f} (estimated: {per_round:.1f} s/round x {ck_rounds_full} "
                "rounds, as at the previous size)"
            )
        m, n = SIZES[n_answers]
        ratio = f"{ck_s / aqer_s:.0f}x" if ck_s else "-"
        ratio_rasa = f"{ck_s / rasa_s:.0f}x" if ck_s else "-"
        ratio_round = f"{per_round / (aqer_s / aqer_rounds):.0f}x"
        print(
            f"| {n_answers:,} | {m:,} x {n:,} | {aqer_s:.2f} ({aqer_rounds}) | "
            f"{rasa_s:.2f} ({rasa_rounds}) | {ck_text} | {ratio} | {ratio_rasa} "
            f"| {ratio_round} | {whole_s:.2f} | {ck_s / whole_s:.1f}x "
            f"| {ck_cpu:.2f}, {whole_cpu:.2f} | {ck_cpu / whole_cpu:.1f}x |"
        )
        splits.append((n_answers, *whole_split, least, ck_cpu))
        del responses
    for n_answers, user, system, least, ck_cpu in splits:
        # The system part is mostly the kernel handing over fresh memory (the 150 MB of vectors
        # at 100k): on a virtual machine that can cost more than the arithmetic.
        print(
            f"\nwhole aqer() at {n_answers:,} answers, CPU: {user:.2f} s user + {system:.2f} s "
            "system (the kernel providing fresh memory)"
        )
        # What a whole call cannot go below, whatever else is made faster: every vector looked
        # up once, and AQER's rounds over them.
        print(
            f"the least a whole call needs at {n_answers:,} answers: looking the vectors up + "
            f"the iterations = {least:.2f} s CPU, so at most {ck_cpu / least:.1f}x crowd-kit's "
            "RASA in this run"
        )


def memory(args: argparse.Namespace) -> None:
    print()
    print("Peak memory, each in a fresh process. tracemalloc: Python and numpy allocations")
    print("during the run (after the synthetic vectors exist); max resident: the whole process.")
    print()
    print("| answers | what | seconds | tracemalloc peak | max resident | embeddings alone |")
    print("|---|---|---|---|---|---|")
    runs = [(100_000, False), (100_000, True)]
    if not args.skip_1m:
        runs += [(1_000_000, False), (1_000_000, True)]
    for n_answers, whole in runs:
        mem = measure_memory(n_answers, whole)
        what = (
            "aqer(): tables, RASA, F1/BLEU-1 (skipped > 50M pairs)" if whole else "AQER iterations"
        )
        print(
            f"| {n_answers:,} | {what} | {mem['seconds']:.1f} | {mem['peak'] / 2**20:,.0f} MiB "
            f"| {mem['rss'] / 2**20:,.0f} MiB | {mem['embeddings'] / 2**20:,.0f} MiB |"
        )


if __name__ == "__main__":
    main()
