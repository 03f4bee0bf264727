"""Cold start of the app to a visible main window (not collected by pytest).

Each run is a fresh Python process under ``QT_QPA_PLATFORM=offscreen`` with its own empty
EvalDesk home. The time is measured in this parent process, from launching the child to the
moment the child reports that the main window is shown and its first paint event was processed.
The child also reports which heavy libraries were imported (there should be none).

    .venv/bin/python tests/benchmarks/bench_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sentence_transformers", "litellm", "pandas", "transformers", "llama_cpp",
         "numpy", "scipy", "matplotlib")

CHILD = f"HEAVY = {HEAVY!r}\n" + """
import json, sys, time
t0 = time.perf_counter()
from desktop.app import start
t_import = time.perf_counter()
session = start()
session.window.repaint()
session.app.processEvents()
t_shown = time.perf_counter()
heavy = sorted({n.split('.')[0] for n in sys.modules} & set(HEAVY))
print(json.dumps({"visible": session.window.isVisible(), "import_s": t_import - t0,
                  "build_s": t_shown - t_import, "heavy": heavy}), flush=True)
"""


def one_run() -> dict:
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", EVALDESK_HOME=home)
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD], cwd=ROOT, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        line = ""
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("{"):
                break
        elapsed = time.perf_counter() - started
        proc.kill()
        _, err = proc.communicate()
        if not line.startswith("{"):
            raise SystemExit(f"the app did not start:\n{err[-3000:]}")
        report = json.loads(line)
        report["total_s"] = elapsed
        return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    one_run()  # warm the OS file cache; cold *process* start is what we measure
    runs = [one_run() for _ in range(args.runs)]
    print(f"EvalDesk start-up to a visible window, {args.runs} runs, QT_QPA_PLATFORM=offscreen")
    print(f"{'measure':<38}{'min':>8}{'median':>8}{'max':>8}")
    for key, label in (("total_s", "process launch -> window shown (s)"),
                       ("import_s", "  importing desktop.app (s)"),
                       ("build_s", "  QApplication + window + show (s)")):
        values = [r[key] for r in runs]
        print(f"{label:<38}{min(values):>8.2f}{statistics.median(values):>8.2f}"
              f"{max(values):>8.2f}")
    heavy = sorted({h for r in runs for h in r["heavy"]})
    print(f"heavy libraries imported at start-up: {', '.join(heavy) if heavy else 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
