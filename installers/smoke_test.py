#!/usr/bin/env python3
"""Smoke checks of the built app (dist/EvalDesk/), run by .ci/run after `make test` and `make dist`.

    .venv/bin/python installers/smoke_test.py                  # all checks on dist/EvalDesk
    .venv/bin/python installers/smoke_test.py --app /usr/bin/evaldesk --gui-only   # an install
    .venv/bin/python installers/smoke_test.py --gui-only --cold-starts 5          # timing

1. ``evaldesk --version`` (and ``evaldesk-cli --version``) print this source tree's version.
2. ``evaldesk aqer`` on the bundled sample writes the same workbook as the source tree does
   (every sheet's values compared with pandas; the date/time cells of "Read me" left out).
   This runs torch, sentence-transformers and the bundled MiniLM weights.
3. ``evaldesk llm test`` with the default profile answers one structured (JSON-schema) call
   through the engine shipped in the bundle (``llama.cpp/llama-server``, started by the app as a
   process of its own) with the bundled Gemma 3 270M GGUF, in the requested JSON form.
4. The window opens under a virtual screen (Xvfb, through ``xvfb-run``): a top-level X window
   called "EvalDesk" becomes viewable, the process is still alive after a few seconds and the
   log has no traceback. Without xvfb-run it falls back to Qt's offscreen platform and checks
   the log instead (and says so).

The built app runs with a clean environment (no PYTHONPATH/PYTHONHOME, no virtualenv on PATH),
so it proves the bundle needs no Python. Exit code 0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "resources" / "samples" / "aqer_sample.xlsx"
AQER_ARGS = ["--grade-col", "grade", "--device", "cpu"]
DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}")


WINDOWS = sys.platform == "win32"


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment without any trace of this Python: only what a desktop session has."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "EVALDESK_HOME": str(home / "evaldesk"),
    }
    for name in ("DISPLAY", "XAUTHORITY", "TMPDIR"):
        if name in os.environ:
            env[name] = os.environ[name]
    if WINDOWS:  # Windows programs need their system folders; the user folders point into home
        system_root = os.environ.get("SYSTEMROOT", r"C:\Windows")
        env.update({
            "PATH": f"{system_root}\\System32;{system_root}",
            "SYSTEMROOT": system_root,
            "WINDIR": os.environ.get("WINDIR", system_root),
            "USERPROFILE": str(home),
            "APPDATA": str(home / "AppData" / "Roaming"),
            "LOCALAPPDATA": str(home / "AppData" / "Local"),
        })
        for name in ("TEMP", "TMP", "SYSTEMDRIVE", "COMSPEC", "PROCESSOR_ARCHITECTURE",
                     "NUMBER_OF_PROCESSORS"):
            if name in os.environ:
                env[name] = os.environ[name]
    env.update(extra)
    return env


def exe_name(name: str) -> str:
    return name + ".exe" if WINDOWS else name


def headless(app: Path) -> Path:
    """The executable for the command-line checks: on Windows the console twin evaldesk-cli.exe
    (the windowed evaldesk.exe has no console to print to), elsewhere the app itself."""
    cli = app.with_name(exe_name("evaldesk-cli"))
    return cli if WINDOWS and cli.exists() else app


def check(ok: bool, what: str, detail: str = "") -> bool:
    print(f"[{'ok' if ok else 'FAIL'}] {what}" + (f": {detail}" if detail else ""), flush=True)
    return ok


def version_check(app: Path) -> bool:
    sys.path.insert(0, str(ROOT))
    from core import __version__

    ok = True
    for exe in (app, app.with_name(exe_name("evaldesk-cli"))):
        if not exe.exists() or (WINDOWS and exe == app and headless(app) != app):
            continue  # Windows: the windowed app prints nowhere; its console twin is checked
            continue
        with tempfile.TemporaryDirectory() as tmp:
            result = subprocess.run([str(exe), "--version"], env=clean_env(Path(tmp)),
                                    capture_output=True, text=True, timeout=120, check=False)
        out = (result.stdout + result.stderr).strip()
        ok &= check(result.returncode == 0 and __version__ in out, f"{exe.name} --version", out)
    return ok


def _cell_equal(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return a == b or (_missing(a) and _missing(b))


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def compare_workbooks(left: Path, right: Path) -> list[str]:
    """Differences between two workbooks' values (Read me: date/time cells ignored)."""
    import pandas as pd

    a = pd.read_excel(left, sheet_name=None, header=None)
    b = pd.read_excel(right, sheet_name=None, header=None)
    problems: list[str] = []
    if list(a) != list(b):
        return [f"sheets differ: {list(a)} vs {list(b)}"]
    for name in a:
        x, y = a[name], b[name]
        if x.shape != y.shape:
            problems.append(f"sheet {name!r}: shape {x.shape} vs {y.shape}")
            continue
        for row in range(x.shape[0]):
            for col in range(x.shape[1]):
                u, v = x.iat[row, col], y.iat[row, col]
                if name == "Read me" and any(
                    isinstance(t, str) and DATE_TIME.search(t) for t in (u, v)
                ):
                    continue
                if not _cell_equal(u, v):
                    problems.append(f"sheet {name!r} row {row + 1} column {col + 1}: {u!r} vs {v!r}")
    return problems


def aqer_check(app: Path) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sample = work / SAMPLE.name  # same input path for both runs (the Read me names it)
        shutil.copy(SAMPLE, sample)
        from_source, from_bundle = work / "source.xlsx", work / "bundle.xlsx"
        started = time.perf_counter()
        source = subprocess.run(
            [sys.executable, "-m", "desktop.launch", "aqer", str(sample), "-o", str(from_source),
             *AQER_ARGS],
            cwd=ROOT, env=dict(os.environ, EVALDESK_HOME=str(work / "src-home")),
            capture_output=True, text=True, timeout=600, check=False,
        )
        source_s = time.perf_counter() - started
        if not check(source.returncode == 0, "evaldesk aqer from source",
                     "" if source.returncode == 0 else source.stderr[-1500:]):
            return False
        started = time.perf_counter()
        bundle = subprocess.run(
            [str(headless(app)), "aqer", str(sample), "-o", str(from_bundle), *AQER_ARGS],
            cwd=work, env=clean_env(work), capture_output=True, text=True, timeout=600, check=False,
        )
        bundle_s = time.perf_counter() - started
        if not check(bundle.returncode == 0, "evaldesk aqer from the bundle",
                     "" if bundle.returncode == 0 else bundle.stderr[-3000:]):
            return False
        problems = compare_workbooks(from_source, from_bundle)
        return check(not problems, "bundle workbook == source workbook",
                     "; ".join(problems[:10]) or f"source {source_s:.1f} s, bundle {bundle_s:.1f} s")


def local_model_check(app: Path) -> bool:
    """``evaldesk llm test`` with the default profile: one JSON-schema call through the bundled
    engine (llama-server) with the bundled Gemma, answered in the requested form."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = subprocess.run([str(headless(app)), "llm", "test", "--timeout", "600"],
                                env=clean_env(Path(tmp)), capture_output=True, text=True,
                                timeout=900, check=False)
        took = time.perf_counter() - started
    output = result.stdout + result.stderr
    ok = (result.returncode == 0 and "The local model is ready" in result.stderr
          and "did not follow the requested JSON format" not in output
          and re.search(r"^Reply:\s+\S", result.stdout, re.MULTILINE) is not None)
    return check(ok, "evaldesk llm test (one structured call through the bundled llama-server "
                 "with the bundled Gemma)", f"{took:.1f} s" if ok else output[-3000:])


def _window_viewable(name: str) -> bool:
    result = subprocess.run(["xwininfo", "-name", name], capture_output=True, text=True,
                            check=False)
    return result.returncode == 0 and "IsViewable" in result.stdout


def start_gui(app: Path, timeout: float = 120.0) -> tuple[bool, float, str]:
    """Start the app in a fresh home; (window seen, seconds to a viewable window, problem)."""
    home = Path(tempfile.mkdtemp(prefix="evaldesk-gui-"))
    x11 = bool(os.environ.get("DISPLAY")) and shutil.which("xwininfo") is not None
    env = clean_env(home) if x11 else clean_env(home, QT_QPA_PLATFORM="offscreen")
    started = time.perf_counter()
    process = subprocess.Popen([str(app)], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    log = home / "evaldesk" / "logs" / "evaldesk.log"
    seen, elapsed, problem = False, float("nan"), ""
    try:
        while time.perf_counter() - started < timeout:
            if process.poll() is not None:
                problem = f"the app exited with code {process.returncode}"
                break
            if (_window_viewable("EvalDesk") if x11
                    else log.is_file() and "starting" in log.read_text(errors="replace")):
                elapsed = time.perf_counter() - started
                seen = True
                break
            time.sleep(0.05)
        else:
            problem = f"no window after {timeout:.0f} s"
        if seen:
            time.sleep(3)  # still alive a moment later (a crash after show would show here)
            if process.poll() is not None:
                seen, problem = False, f"the app exited with code {process.returncode} after start"
            elif x11 and not _window_viewable("Welcome to EvalDesk"):
                seen, problem = False, "the first-run welcome did not open"
        text = log.read_text(errors="replace") if log.is_file() else ""
        if seen and "Traceback" in text:
            seen, problem = False, "the log has a traceback:\n" + text[-2000:]
    finally:
        process.terminate()
        try:
            output, _ = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        shutil.rmtree(home, ignore_errors=True)
    if not seen and output:
        problem += "\n" + output[-2000:]
    return seen, elapsed, problem


def gui_check(app: Path, runs: int) -> bool:
    if not os.environ.get("DISPLAY"):
        if shutil.which("xvfb-run"):  # run this part again inside a virtual screen
            command = [sys.executable, __file__, "--app", str(app), "--gui-only",
                       "--cold-starts", str(runs)]
            return subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24",
                                   *command], check=False).returncode == 0
        print("note: xvfb-run not found: checking the GUI on Qt's offscreen platform instead")
    times: list[float] = []
    for run in range(runs):
        seen, elapsed, problem = start_gui(app)
        if not check(seen, f"window opens (run {run + 1})", problem or f"{elapsed:.2f} s"):
            return False
        times.append(elapsed)
    if len(times) > 1:
        print(f"time to a visible window: first {times[0]:.2f} s, median of the others "
              f"{statistics.median(times[1:]):.2f} s, all {', '.join(f'{t:.2f}' for t in times)}")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", default=str(ROOT / "dist" / "EvalDesk" / exe_name("evaldesk")),
                        help="the built evaldesk executable (default dist/EvalDesk/evaldesk, "
                             "evaldesk.exe on Windows)")
    parser.add_argument("--gui-only", action="store_true", help="only the window check")
    parser.add_argument("--cold-starts", type=int, default=1, metavar="N",
                        help="start the window N times and print the times")
    args = parser.parse_args(argv)
    app = Path(args.app).absolute()  # the checks start the app from other working folders
    if not app.exists():
        print(f"{app} does not exist: build it first with `make dist`.", file=sys.stderr)
        return 1
    ok = True
    if not args.gui_only:
        ok &= version_check(app)
        ok &= aqer_check(app)
        ok &= local_model_check(app)
    ok &= gui_check(app, max(1, args.cold_starts))
    what = "GUI checks" if args.gui_only else "smoke checks"
    print(f"{what} passed" if ok else f"{what} FAILED", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
