"""AQER vs RASA on CrowdWSA2019 (crowd translations; sparse: most workers did 10 sentences).

A worker's reference quality is the mean similarity of their translations to the gold English
sentences, measured two ways: cosine of the bundled all-MiniLM-L6-v2 embeddings (the same model
AQER uses, so it favours embedding methods) and token F1 (model-free). Each method's worker
scores are correlated with both (Pearson r, Spearman rho) per data set (J1, T1, T2).

    .venv/bin/python tests/benchmarks/bench_aqer_crowdwsa.py [--device cpu]
"""

from __future__ import annotations

import argparse
import csv
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

METHODS = {
    "AQER": "score",
    "Simplified AQER": "simplified_score",
    "RASA": "rasa_skill",
    "F1 (pseudo-reference)": "f1",
    "BLEU-1 (pseudo-reference)": "bleu1",
}


def read_tsv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False)


class LookupEncoder:
    def __init__(self, vectors: dict[str, np.ndarray], name: str, device: str) -> None:
        self.vectors, self.model_name, self.device = vectors, name, device

    def __call__(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])


BACKENDS = {  # name -> Encoder keyword arguments
    "torch": {"backend": "torch"},
    "onnx": {"backend": "onnx"},
    "onnx-int8": {"backend": "onnx", "int8": True},
}
SETS = ("J1", "T1", "T2")


def run_set(encoder, name: str) -> dict:
    """AQER on one set; per (method, reference): (Pearson r, Spearman rho), plus notes."""
    from core.aqer import aqer
    from core.aqer.pseudo_reference import token_f1

    folder = SHARED / "crowdwsa2019"
    labels = read_tsv(folder / f"CrowdWSA2019_{name}_label_anonymous.tsv")
    gold = read_tsv(folder / f"CrowdWSA2019_{name}_gt.tsv").set_index("sentence")["trueanswer"]
    labels = labels[labels["workeranswer"].str.strip() != ""]
    long = labels.rename(columns={"sentence": "question", "workeranswer": "response"})[
        ["question", "worker", "response"]
    ]
    long["response"] = long["response"].str.strip()
    texts = list(dict.fromkeys(list(long["response"]) + list(gold)))
    t0 = time.perf_counter()
    vectors = encoder(texts)
    embed_s = time.perf_counter() - t0
    table = dict(zip(texts, vectors))
    duplicates = int(long.duplicated(["worker", "question"]).sum())
    encode = LookupEncoder(table, encoder.model_name, encoder.device)
    result = aqer(long, encode, duplicates="first")

    def unit(v: np.ndarray) -> np.ndarray:
        return v / np.linalg.norm(v)

    long = long.drop_duplicates(["worker", "question"], keep="first")
    long["cos_gold"] = [
        float(unit(table[r]) @ unit(table[gold[q]]))
        for q, r in zip(long["question"], long["response"])
    ]
    long["f1_gold"] = [token_f1(r, gold[q]) for q, r in zip(long["question"], long["response"])]
    truth = long.groupby("worker")[["cos_gold", "f1_gold"]].mean()
    workers = result.workers.set_index("worker")
    truth = truth.reindex(workers.index)
    cells = {}
    for method, column in METHODS.items():
        values = workers[column].astype(float).to_numpy()
        for reference in ("cos_gold", "f1_gold"):
            ref = truth[reference].to_numpy()
            cells[method, reference] = (
                stats.pearsonr(values, ref).statistic,
                stats.spearmanr(values, ref).statistic,
            )
    note = (
        f"(AQER: {result.iterations} rounds, "
        f"{'converged' if result.converged else 'not converged'}; blank answers: "
        f"{result.blank_rule}, {result.blank_reason.split(' (')[0].split(': ')[-1]}; "
        f"{duplicates} repeated (worker, sentence) answers: first kept; embedding {embed_s:.1f} s)"
    )
    return {"cells": cells, "answers": len(long), "workers": len(workers), "note": note}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--backends",
        default="torch,onnx,onnx-int8",
        help="comma-separated: torch, onnx, onnx-int8 (the first is the reference)",
    )
    args = parser.parse_args()

    from core.embeddings import Encoder

    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    runs: dict[str, dict] = {}
    described = {}
    for backend in backends:
        encoder = Encoder(device=args.device, **BACKENDS[backend])
        described[backend] = encoder.describe()
        runs[backend] = {name: run_set(encoder, name) for name in SETS}
        del encoder
    print("# AQER vs RASA on CrowdWSA2019 (worker quality = mean similarity to gold)")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    for backend in backends:
        print()
        print(f"## {backend}: {described[backend]}")
        print()
        print(
            "| set | answers | workers | method | r (MiniLM cos to gold) | rho (MiniLM) "
            "| r (token F1 to gold) | rho (token F1) |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for name in SETS:
            run = runs[backend][name]
            for method in METHODS:
                cells = []
                for reference in ("cos_gold", "f1_gold"):
                    r, rho = run["cells"][method, reference]
                    cells += [f"{r:.3f}", f"{rho:.3f}"]
                print(
                    f"| {name} | {run['answers']} | {run['workers']} | {method} | "
                    + " | ".join(cells)
                    + " |"
                )
            print(f"|  |  |  | {run['note']} |  |  |  |  |")
    reference = backends[0]
    for backend in backends[1:]:
        print()
        print(
            f"## {backend} against {reference}: differences of each correlation (gate: AQER's "
            "< 0.005); each path's gold similarity comes from its own vectors"
        )
        print()
        print("| set | method | r (cos) | rho (cos) | r (F1) | rho (F1) |")
        print("|---|---|---|---|---|---|")
        worst = 0.0
        for name in SETS:
            for method in METHODS:
                diffs = []
                for ref in ("cos_gold", "f1_gold"):
                    a = runs[reference][name]["cells"][method, ref]
                    b = runs[backend][name]["cells"][method, ref]
                    diffs += [b[0] - a[0], b[1] - a[1]]
                if method == "AQER":
                    worst = max(worst, *(abs(d) for d in diffs))
                print(f"| {name} | {method} | " + " | ".join(f"{d:+.4f}" for d in diffs) + " |")
        verdict = "PASS" if worst < 0.005 else "FAIL"
        print(f"\nlargest difference of AQER's correlations: {worst:.4f} -> {verdict}")


if __name__ == "__main__":
    main()
