"""Attack suite, kill -9: the real command line of each method (in a forked process, see
``_kill_worker``) is killed with SIGKILL at random points of its long step, again and again on
the same project, then resumed to the end. After every kill ``PRAGMA integrity_check`` is ok and
no finished unit is lost; the resumed results equal those of a run that was never interrupted.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pandas as pd
import pytest

from core.paths import resources_dir
from tests.attack._faults import cli_env, integrity, write_scoring_inputs
from tests.attack._kill_worker import CHECKLIST_MODEL, MAJEVAL_MODEL

#: Kills per method (three methods: at least 21 kills in all).
KILLS = 7

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker forks (POSIX only)")


class Worker:
    """The forking worker process: ``run(argv, kill_after)`` -> exit code (-9 when killed)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.attack._kill_worker"], env=cli_env(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "ready"

    def run(self, argv: list[str], kill_at=None) -> int:
        """Run ``evaldesk argv``; with ``kill_at`` (a function polled every few milliseconds),
        SIGKILL it as soon as that returns True. Returns the exit code (-9 when killed)."""
        self.process.stdin.write(json.dumps({"argv": [str(a) for a in argv]}) + "\n")
        self.process.stdin.flush()
        pid = int(self.process.stdout.readline().split()[1])
        if kill_at is not None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and _alive(pid) and not kill_at():
                time.sleep(0.005)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # it had finished
        return int(self.process.stdout.readline().split()[1])

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(30)


def _alive(pid: int) -> bool:
    """Whether the child still runs (a finished child is a zombie until the worker reaps it)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.fixture(scope="module")
def worker():
    running = Worker()
    yield running
    running.close()


def finished_units(path, *, peek: bool = False) -> int:
    """Units finished and kept in the project (``peek``: a read-only look during a run)."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro" if peek else path, uri=peek,
                               timeout=0.05 if peek else 5)
    except sqlite3.Error:
        return 0
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "results" not in tables:
            return 0
        return conn.execute("SELECT count(*) FROM results WHERE status = 'ok'").fetchone()[0]
    except sqlite3.Error:  # busy, or being written: not yet
        if peek:
            return 0
        raise
    finally:
        conn.close()


def inputs(folder, method: str, project, output) -> list:
    if method == "aqer":
        return ["aqer", resources_dir() / "samples" / "aqer_sample.xlsx", "--project", project,
                "-o", output]
    if method == "interacteval":
        checklist, _ = write_scoring_inputs(folder)
        items = folder / "many.xlsx"
        if not items.exists():
            pd.DataFrame({"id": [f"t{i}" for i in range(16)],
                          "text": [f"Text {i}: the {('cat', 'dog', 'fox', 'owl')[i % 4]} ran "
                                   f"{i} times." for i in range(16)]}).to_excel(items, index=False)
        return ["checklist", "score", "--checklist", checklist, "--items", items, "--text-col",
                "text", "--id-col", "id", "--model", CHECKLIST_MODEL, "--project", project,
                "-o", output]
    personas, items, task = folder / "p.xlsx", folder / "qa.xlsx", folder / "task.txt"
    if not personas.exists():
        pd.DataFrame({"group": ["Parents", "Parents"], "name": ["Dana Ray", "Eli Stone"],
                      "perspective": ["Fun questions.", "Short questions."]}).to_excel(
            personas, index=False, sheet_name="Personas")
        pd.DataFrame({"id": [f"q{i}" for i in range(10)],
                      "qa pair": [f"Q: What does animal {i} eat? A: Food {i}." for i in range(10)],
                      "story": [f"Story {i}." for i in range(10)]}).to_excel(items, index=False)
        task.write_text("Judge QA pairs for reading stories with children.\n", encoding="utf-8")
    return ["majeval", "run", "--personas", personas, "--items", items, "--task-file", task,
            "--model", MAJEVAL_MODEL, "--project", project, "--no-bootstrap", "-o", output]


#: Rows of a Read me sheet that rightly differ: when it was made, that the run resumed, and the
#: device of an embedding model that a resumed AQER run did not need to load (the setting,
#: "auto", instead of the device it ran on).
WHEN_AND_HOW = {"Exported", "Resumed", "Date", "Scored on", "Written", "Run", "Device"}


def sheets(path) -> dict[str, pd.DataFrame]:
    """The workbook's sheets, as text; a Read me sheet without the rows of ``WHEN_AND_HOW``."""
    found = pd.read_excel(path, sheet_name=None, dtype=str)
    for name, frame in found.items():
        if name.casefold() == "read me" and len(frame.columns):
            first = frame.columns[0]
            keep = ~frame[first].isin(WHEN_AND_HOW)
            found[name] = frame[keep].reset_index(drop=True)
    return found


def finish_and_compare(worker, folder, method, project, reference, total) -> None:
    """Resume ``project`` to the end: its workbook equals the uninterrupted run's."""
    final = project.with_suffix(".xlsx")
    assert worker.run(inputs(folder, method, project, final)) == 0
    assert integrity(project) == "ok"
    assert finished_units(project) == total
    expected, got = sheets(reference), sheets(final)
    assert expected.keys() == got.keys()
    for name in expected:
        pd.testing.assert_frame_equal(got[name], expected[name], obj=f"{method} sheet {name}")


@pytest.mark.timeout(240)
@pytest.mark.parametrize("method", ["aqer", "interacteval", "majeval"])
def test_kill_9_again_and_again_then_resume(tmp_path, worker, method):
    """Each run is killed when a random number of further units is finished, or at a random
    moment of its run time (whichever comes first); a project whose work is all done is resumed
    and compared, and the kills go on in a new project."""
    folder = tmp_path
    reference = folder / "reference.xlsx"
    started = time.monotonic()
    assert worker.run(inputs(folder, method, folder / "ref.evaldesk", reference)) == 0
    took = time.monotonic() - started
    total = finished_units(folder / "ref.evaldesk")
    assert total > 1
    rng = random.Random(f"{method}-kills")
    projects, kills, attempts, seen = 1, 0, 0, []
    project, before = folder / "killed1.evaldesk", 0
    while kills < KILLS:
        attempts += 1
        assert attempts < KILLS * 4, f"only {kills} kills in {attempts} runs: {seen} of {total}"
        target = rng.randint(before + 1, max(before + 1, min(total - 1, before + 3)))
        moment = time.monotonic() + rng.uniform(0.05, took)

        def kill_now(target=target, moment=moment, project=project) -> bool:
            return time.monotonic() >= moment or finished_units(project, peek=True) >= target

        code = worker.run(inputs(folder, method, project, folder / f"partial{attempts}.xlsx"),
                          kill_at=kill_now)
        if code == -signal.SIGKILL:
            kills += 1
        else:
            assert code == 0
        if project.exists():
            assert integrity(project) == "ok"
        now = finished_units(project)
        assert now >= before, "a finished unit was lost"
        seen.append(now)
        before = now
        if before >= total:  # all done: resume, compare, and go on killing in a new project
            finish_and_compare(worker, folder, method, project, reference, total)
            projects += 1
            project, before = folder / f"killed{projects}.evaldesk", 0
    finish_and_compare(worker, folder, method, project, reference, total)
    print(f"{method}: {kills} kills in {attempts} runs, {projects} project(s); finished units "
          f"after each run: {seen} of {total}")
    assert any(0 < n < total for n in seen), "no kill landed in the middle of the work"


@pytest.mark.timeout(60)
def test_the_same_personas_file_again_records_no_persona_edits(tmp_path, capsys):
    """Each resumed ``majeval run --personas p.xlsx --project`` deleted and re-imported the same
    personas, so the Read me said "Persona edits: 2 changes by evaldesk command line" (30 after
    the kill loop) though nobody changed anything."""
    from core.cli import main
    from tests.attack import _kill_worker

    models = _kill_worker.setup()
    try:
        for n in (1, 2):
            argv = inputs(tmp_path, "majeval", tmp_path / "p.evaldesk", tmp_path / f"r{n}.xlsx")
            assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    finally:
        for model in models:
            model.close()
    readme = pd.read_excel(tmp_path / "r2.xlsx", sheet_name="Read me", dtype=str)
    assert "Persona edits" not in set(readme.iloc[:, 0])
    from core.project import Project

    with Project.open(tmp_path / "p.evaldesk", read_only=True) as project:
        assert project.list_edits() == []
