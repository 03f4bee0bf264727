"""Start-up stays light: showing the main window imports no heavy library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("torch", "sentence_transformers", "litellm", "pandas", "transformers", "llama_cpp")

CHILD = """
import json, sys
from desktop.app import start
session = start()
session.app.processEvents()
heavy = sorted({name.split('.')[0] for name in sys.modules} & set(%r))
print(json.dumps({"visible": session.window.isVisible(),
                  "title": session.window.windowTitle(),
                  "heavy": heavy}))
sys.stdout.flush()
""" % (HEAVY,)


def test_showing_the_main_window_imports_no_heavy_library(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", EVALDESK_HOME=str(tmp_path / "home"))
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=root, env=env, capture_output=True, text=True,
        timeout=120,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, result.stderr[-2000:]
    report = json.loads(lines[-1])
    assert report["visible"] is True
    assert report["title"].startswith("EvalDesk")
    assert report["heavy"] == [], f"imported at start-up: {report['heavy']}"
