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

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    from core.aqer import aqer
    from core.aqer.pseudo_reference import token_f1
    from core.embeddings import Encoder

    encoder = Encoder(device=args.device)
    folder = SHARED / "crowdwsa2019"
    print("# AQER vs RASA on CrowdWSA2019 (worker quality = mean similarity to gold)")
    print(
        f"model: {encoder.describe()}; machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    print()
    print(
        "| set | answers | workers | method | r (MiniLM cos to gold) | rho (MiniLM) "
        "| r (token F1 to gold) | rho (token F1) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in ("J1", "T1", "T2"):
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
        for method, column in METHODS.items():
            values = workers[column].astype(float).to_numpy()
            cells = []
            for reference in ("cos_gold", "f1_gold"):
                ref = truth[reference].to_numpy()
                cells.append(f"{stats.pearsonr(values, ref).statistic:.3f}")
                cells.append(f"{stats.spearmanr(values, ref).statistic:.3f}")
            print(
                f"| {name} | {len(long)} | {len(workers)} | {method} | " + " | ".join(cells) + " |"
            )
        print(
            f"|  |  |  | (AQER: {result.iterations} rounds, "
            f"{'converged' if result.converged else 'not converged'}; blank answers: "
            f"{result.blank_rule}, {result.blank_reason.split(' (')[0].split(': ')[-1]}; "
            f"{duplicates} repeated "
            f"(worker, sentence) answers: first kept; embedding {embed_s:.1f} s) "
            "|  |  |  |  |"
        )


if __name__ == "__main__":
    main()
