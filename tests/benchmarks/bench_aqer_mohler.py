"""AQER on the Mohler et al. (2011) semi-synthetic protocol of the paper's Table 2.

Per question, the 20 best-graded answers (by ``score_avg``, descending; ties broken at random in
each repetition) go two by two to 10 quality groups; inside a group the 2 answers go to its 2
pseudo-responders at random. A pseudo-responder's true grade is the mean ``score_avg`` of its
answers. 25 repetitions with different seeds; mean and sd of Pearson r and Spearman rho between
each method's worker scores and the true grades. Every unique answer is embedded once (bundled
all-MiniLM-L6-v2 on the CPU) and reused across repetitions.

The paper (stsb-roberta-large): AQER 0.964, RASA (Li & Fukumoto) 0.927, F1 0.893, BLEU-1 0.87.

    .venv/bin/python tests/benchmarks/bench_aqer_mohler.py [--repetitions 25] [--device cpu]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np
import pandas as pd
from scipy import stats

SHARED = Path(
    os.environ.get("EVALDESK_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")
)
GROUPS, PER_GROUP = 10, 2

METHODS = {
    "AQER": "score",
    "Simplified AQER": "simplified_score",
    "RASA": "rasa_skill",
    "F1 (pseudo-reference)": "f1",
    "BLEU-1 (pseudo-reference)": "bleu1",
}


class LookupEncoder:
    """Returns precomputed vectors (each unique answer embedded once for all repetitions)."""

    def __init__(self, vectors: dict[str, np.ndarray], name: str, device: str) -> None:
        self.vectors, self.model_name, self.device = vectors, name, device

    def __call__(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])


def semi_synthetic(data: pd.DataFrame, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.Series]:
    """One repetition: long answers of 20 pseudo-responders and their true grades."""
    rows = []
    for qid, group in data.groupby("id", sort=False):
        shuffled = group.sample(frac=1.0, random_state=int(rng.integers(2**31)))
        ranked = shuffled.sort_values("score_avg", ascending=False, kind="stable").head(
            GROUPS * PER_GROUP
        )
        for g in range(GROUPS):
            members = [f"g{g + 1:02d}-{k + 1}" for k in range(PER_GROUP)]
            rng.shuffle(members)
            block = ranked.iloc[g * PER_GROUP : (g + 1) * PER_GROUP]
            for member, (_, answer) in zip(members, block.iterrows()):
                rows.append((qid, member, answer["student_answer"], answer["score_avg"]))
    long = pd.DataFrame(rows, columns=["question", "worker", "response", "true"])
    truth = long.groupby("worker")["true"].mean()
    return long[["question", "worker", "response"]], truth


BACKENDS = {  # name -> Encoder keyword arguments
    "torch": {"backend": "torch"},
    "onnx": {"backend": "onnx"},
    "onnx-int8": {"backend": "onnx", "int8": True},
}


def make_encoder(name: str, model: str, device: str):
    from core.embeddings import Encoder

    return Encoder(model, device=device, **BACKENDS[name])


def evaluate(encoder, data: pd.DataFrame, repetitions: int, compare: bool = False) -> dict:
    """Embed the unique answers once, run the protocol; correlations per method (and, with
    ``compare``, EvalDesk's Comparison table of every repetition)."""
    from core.aqer import aqer

    texts = list(dict.fromkeys(data["student_answer"]))
    t0 = time.perf_counter()
    vectors = encoder(texts)
    embed_s = time.perf_counter() - t0
    lookup = LookupEncoder(dict(zip(texts, vectors)), encoder.model_name, encoder.device)

    results: dict[str, list[tuple[float, float]]] = {m: [] for m in METHODS}
    iterations = []
    rules = set()
    tables = []
    first = None
    t0 = time.perf_counter()
    for rep in range(repetitions):
        rng = np.random.default_rng(1000 + rep)
        long, truth = semi_synthetic(data, rng)
        result = aqer(long, lookup)
        # The Comparison and the curve need grades: each worker's true grade (scoring is the
        # same with or without them; only these two use them).
        graded = long.assign(grade=long["worker"].map(truth).map(lambda v: f"{v:.6g}"))
        if first is None:
            first = (graded, None, lookup)
        if compare:
            from core.aqer.comparison import comparison_table

            tables.append(comparison_table(aqer(graded, lookup)).frame.set_index("condition"))
        iterations.append(result.iterations)
        blanks = int(result.workers["blank"].sum()) if "blank" in result.workers else 0
        rules.add(f"{result.blank_rule} ({blanks} blank answers)")
        workers = result.workers.set_index("worker")
        true = truth.reindex(workers.index).to_numpy()
        for method, column in METHODS.items():
            values = workers[column].astype(float).to_numpy()
            results[method].append(
                (stats.pearsonr(values, true).statistic, stats.spearmanr(values, true).statistic)
            )
    return {
        "results": {m: np.array(v) for m, v in results.items()},
        "texts": len(texts),
        "embed_s": embed_s,
        "run_s": time.perf_counter() - t0,
        "iterations": iterations,
        "rules": rules,
        "describe": encoder.describe(),
        "tables": tables,
        "first": first,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repetitions", type=int, default=25)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--embedding-model", default="")
    parser.add_argument(
        "--backends",
        default="torch,onnx,onnx-int8",
        help="comma-separated: torch, onnx, onnx-int8 (the first is the reference)",
    )
    parser.add_argument("--compare", action="store_true",
                        help="also print EvalDesk's Comparison table and the paired test")
    parser.add_argument("--curve", default="", metavar="FIGURE.png",
                        help="also compute 'how many workers do I need?' and save its figure")
    args = parser.parse_args()

    data = pd.read_csv(SHARED / "mohler2011" / "mohler_dataset_edited.csv", dtype={"id": str})
    data["student_answer"] = data["student_answer"].fillna("").astype(str).str.strip()
    data = data[data["student_answer"] != ""]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    runs = {}
    for name in backends:
        encoder = make_encoder(name, args.embedding_model, args.device)
        runs[name] = evaluate(encoder, data, args.repetitions,
                              compare=args.compare and name == backends[0])
        del encoder

    print(f"# AQER on Mohler 2011 semi-synthetic (Table 2 protocol: {GROUPS} groups x {PER_GROUP})")
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    for name, run in runs.items():
        results, iterations = run["results"], run["iterations"]
        print()
        print(
            f"## {name}: {run['describe']}; {run['texts']} unique answers embedded in "
            f"{run['embed_s']:.1f} s; {args.repetitions} repetitions in {run['run_s']:.1f} s; "
            f"AQER rounds per run {min(iterations)}-{max(iterations)}; blank-answer rule: "
            f"{', '.join(sorted(run['rules']))}"
        )
        print()
        print("| method | Pearson r (mean ± sd) | Spearman rho (mean ± sd) |")
        print("|---|---|---|")
        for method, arr in results.items():
            print(
                f"| {method} | {arr[:, 0].mean():.3f} ± {arr[:, 0].std(ddof=1):.3f} | "
                f"{arr[:, 1].mean():.3f} ± {arr[:, 1].std(ddof=1):.3f} |"
            )
        aqer_r = results["AQER"][:, 0]
        for other in ("RASA", "Simplified AQER"):
            diff = aqer_r - results[other][:, 0]
            wins = int((diff > 0).sum())
            print(
                f"\nAQER - {other}: mean Pearson difference {diff.mean():+.4f} "
                f"(AQER higher in {wins}/{len(diff)} repetitions)",
                end="",
            )
        print()
    reference = backends[0]
    for name in backends[1:]:
        print()
        print(
            f"## {name} against {reference} (same repetitions; gate: every mean differs by "
            "< 0.005)"
        )
        print()
        print(
            f"| method | Pearson {reference} | Pearson {name} | diff | Spearman {reference} "
            f"| Spearman {name} | diff |"
        )
        print("|---|---|---|---|---|---|---|")
        worst = 0.0
        for method in METHODS:
            a, b = runs[reference]["results"][method], runs[name]["results"][method]
            dp, ds = b[:, 0].mean() - a[:, 0].mean(), b[:, 1].mean() - a[:, 1].mean()
            if method != "F1 (pseudo-reference)" and method != "BLEU-1 (pseudo-reference)":
                worst = max(worst, abs(dp), abs(ds))
            print(
                f"| {method} | {a[:, 0].mean():.4f} | {b[:, 0].mean():.4f} | {dp:+.4f} "
                f"| {a[:, 1].mean():.4f} | {b[:, 1].mean():.4f} | {ds:+.4f} |"
            )
        verdict = "PASS" if worst < 0.005 else "FAIL"
        print(f"\nlargest difference of an embedding-based method: {worst:.4f} -> {verdict}")
    reference_run = runs[backends[0]]
    if args.compare:
        compare_report(reference_run["tables"])
    if args.curve and reference_run["first"] is not None:
        long, _, lookup = reference_run["first"]
        curve_figure(long, lookup, Path(args.curve))


def compare_report(tables: list[pd.DataFrame]) -> None:
    """The first repetition's Comparison table, and the paired test against RASA over all."""
    table = tables[0]

    def r(value: float) -> str:
        return "-" if np.isnan(value) else f"{value:.3f}"

    print("\n## EvalDesk's Comparison table, repetition 1 (seed 1000; 20 pseudo-responders)")
    print("| condition | Pearson r [95% CI] | Spearman rho | difference vs AQER [95% CI] | p |")
    print("|---|---|---|---|---|")
    for name, row in table.iterrows():
        print(f"| {name} | {r(row['pearson'])} [{r(row['pearson_ci_low'])}, "
              f"{r(row['pearson_ci_high'])}] | {r(row['spearman'])} | "
              f"{r(row['difference'])} [{r(row['difference_ci_low'])}, "
              f"{r(row['difference_ci_high'])}] | {r(row['p_value'])} |")
    for name in table.index[1:]:
        print(f"- {table.loc[name, 'summary']}")
    rasa = [t.loc["RASA"] for t in tables]
    below = sum(1 for row in rasa if row["difference_ci_high"] < 0)
    above = sum(1 for row in rasa if row["difference_ci_low"] > 0)
    print(f"\nPaired test RASA vs AQER over {len(rasa)} repetitions: RASA significantly lower "
          f"in {below}, higher in {above}, no clear difference in {len(rasa) - below - above}; "
          f"mean difference {np.mean([row['difference'] for row in rasa]):+.3f}")


def curve_figure(long: pd.DataFrame, encoder, path: Path) -> None:
    """How many workers do I need? on one repetition (``long`` with the workers' true grades),
    printed and saved as a figure."""
    from matplotlib.figure import Figure

    from core.aqer import aqer
    from core.aqer.comparison import workers_curve
    from core.aqer.responses import clean_responses
    from desktop.aqer.charts import draw_workers_curve

    result = aqer(long, encoder)
    t0 = time.perf_counter()
    curve = workers_curve(clean_responses(long), encoder, result)
    took = time.perf_counter() - t0
    print(f"\n## How many workers do I need? (repetition 1, {curve.repetitions} panels per size, "
          f"seed {curve.seed}; {took:.1f} s)")
    print(f"| workers | mean {curve.statistic} | sd | middle 95% |")
    print("|---|---|---|---|")
    for row in curve.frame.itertuples():
        sd = "-" if row.sd is None or row.sd != row.sd else f"{row.sd:.3f}"
        print(f"| {row.workers} | {row.mean:.3f} | {sd} | {row.low:.3f} to {row.high:.3f} |")
    figure = Figure(figsize=(7.5, 4), dpi=100, layout="constrained")
    frame = curve.frame
    draw_workers_curve(figure, curve.values, frame["mean"].astype(float).tolist(),
                       frame["low"].astype(float).tolist(), frame["high"].astype(float).tolist(),
                       curve.statistic, curve.against)
    figure.savefig(path)
    print(f"figure: {path}")




if __name__ == "__main__":
    main()
