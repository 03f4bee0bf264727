"""De-identification: recall and precision per kind on the labelled synthetic set, and speed.

1. The 240 synthetic texts of ``tests/core/deidentify/corpus.py`` (student essays and short
   answers, clinical notes, AI-written patient letters; fixed seed), each project's texts
   through one Deidentifier made from its lists: recall per kind of identifier (a label counts
   as found when all its letters and digits were replaced) and how many got the right kind;
   precision per kind of replacement, with the false hits.
2. Speed: one 32 KB text (texts of the set joined), with the set's lists and with a list of
   2,000 extra names; wall time, median of 7 runs, de-identify and restore.

    .venv/bin/python tests/benchmarks/bench_deidentify.py
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.deidentify import Deidentifier
from tests.core.deidentify.corpus import build
from tests.core.deidentify.scoring import GROUPS, deidentify_corpus, score


def _pct(value: float | None) -> str:
    return "   -  " if value is None else f"{value * 100:5.1f}%"


def quality(corpus: dict) -> None:
    s = score(deidentify_corpus(corpus))
    texts = corpus["texts"]
    print(f"{len(texts)} texts ({dict(Counter(t['genre'] for t in texts))}), "
          f"{sum(len(t['labels']) for t in texts)} labelled identifiers, "
          f"{sum(len(t['text']) for t in texts) // 1000} KB\n")
    print(f"{'recall by kind of identifier':<74} {'labels':>6} {'found':>6} {'recall':>7} "
          f"{'right kind':>10}")
    for group, what in GROUPS:
        if s.labels[group]:
            print(f"{what:<74} {s.labels[group]:>6} {s.found[group]:>6} "
                  f"{_pct(s.recall(group)):>7} {s.same_kind[group]:>10}")
    print(f"\n{'precision by kind of replacement':<40} {'replaced':>8} {'false hits':>10} "
          f"{'precision':>9}")
    for kind in sorted(s.replaced, key=lambda k: -s.replaced[k]):
        print(f"{kind:<40} {s.replaced[kind]:>8} {s.replaced[kind] - s.right[kind]:>10} "
              f"{_pct(s.precision(kind)):>9}")
    total = sum(s.replaced.values())
    print(f"{'all':<40} {total:>8} {len(s.false_hits):>10} {_pct(s.precision_all()):>9}")
    words = Counter(f"{value} ({kind})" for _, kind, value in s.false_hits)
    print("\nfalse hits:", ", ".join(f"{w} x{n}" for w, n in words.most_common()) or "none")
    missed = Counter(group for _, group, _ in s.missed)
    print("missed:", ", ".join(f"{g} x{n}" for g, n in missed.most_common()) or "none")
    kept = score(deidentify_corpus(corpus, keep_year=True), keep_year=True)
    print(f"with keep_year: dates' day and month replaced in {_pct(kept.recall('DATE'))} "
          "(the year stays in the text)")


def _median_time(fn, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def speed(corpus: dict) -> None:
    school = corpus["projects"]["school"]
    clinic = corpus["projects"]["clinic"]
    text = ""
    for t in corpus["texts"]:
        if len(text) >= 32_000:
            break
        text += t["text"] + "\n\n"
    text = text[:32_768]
    print(f"\nspeed on one text of {len(text.encode('utf-8')) // 1024} KB "
          f"({platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}; median of 7)")
    many = [f"Extra{i} Person{i}" for i in range(2_000)]
    for label, students in (("the set's lists", school["students"]),
                            ("+ 2,000 more names", school["students"] + many)):
        deid = Deidentifier(students=students, people=school["people"] + clinic["people"])
        result = deid.deidentify(text)
        t_out = _median_time(lambda d=deid: d.deidentify(text))
        t_back = _median_time(lambda d=deid, r=result: d.restore(r.text))
        print(f"  {label:<20} de-identify {t_out * 1000:7.1f} ms   restore "
              f"{t_back * 1000:6.1f} ms   ({len(result.replacements)} replacements)")


def main() -> None:
    start = time.perf_counter()
    corpus = build()
    print(f"(set made in {time.perf_counter() - start:.1f} s)\n")
    quality(corpus)
    speed(corpus)


if __name__ == "__main__":
    main()
