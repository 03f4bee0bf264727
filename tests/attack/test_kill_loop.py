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


class Worker:
    """The forking worker process: ``run(argv, kill_after)`` -> exit code (-9 when killed)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.attack._kill_worker"], env=cli_env(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "ready"

    def run(self, argv: list[str], kill_after: float | None = None) -> tuple[int, float]:
        started = time.monotonic()
        self.process.stdin.write(json.dumps({"argv": [str(a) for a in argv]}) + "\n")
        self.process.stdin.flush()
        pid = int(self.process.stdout.readline().split()[1])
        if kill_after is not None:
            time.sleep(kill_after)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # it had finished
        code = int(self.process.stdout.readline().split()[1])
        return code, time.monotonic() - started

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(30)


@pytest.fixture(scope="module")
def worker():
    running = Worker()
    yield running
    running.close()


def finished_units(path) -> int:
    if not path.exists() or path.stat().st_size == 0:
        return 0
    conn = sqlite3.connect(path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "results" not in tables:
            return 0
        return conn.execute("SELECT count(*) FROM results WHERE status = 'ok'").fetchone()[0]
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
            pd.DataFrame({"id": [f"t{i}" for i in range(10)],
                          "text": [f"Text {i}: the {('cat', 'dog', 'fox', 'owl')[i % 4]} ran "
                                   f"{i} times." for i in range(10)]}).to_excel(items, index=False)
        return ["checklist", "score", "--checklist", checklist, "--items", items, "--text-col",
                "text", "--id-col", "id", "--model", CHECKLIST_MODEL, "--project", project,
                "-o", output]
    personas, items, task = folder / "p.xlsx", folder / "qa.xlsx", folder / "task.txt"
    if not personas.exists():
        pd.DataFrame({"group": ["Parents", "Parents"], "name": ["Dana Ray", "Eli Stone"],
                      "perspective": ["Fun questions.", "Short questions."]}).to_excel(
            personas, index=False, sheet_name="Personas")
        pd.DataFrame({"id": [f"q{i}" for i in range(5)],
                      "qa pair": [f"Q: What does animal {i} eat? A: Food {i}." for i in range(5)],
                      "story": [f"Story {i}." for i in range(5)]}).to_excel(items, index=False)
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


@pytest.mark.timeout(240)
@pytest.mark.parametrize("method", ["aqer", "interacteval", "majeval"])
def test_kill_9_again_and_again_then_resume(tmp_path, worker, method):
    folder = tmp_path
    reference = folder / "reference.xlsx"
    code, took = worker.run(inputs(folder, method, folder / "ref.evaldesk", reference))
    assert code == 0
    project, rng = folder / "killed.evaldesk", random.Random(f"{method}-kills")
    kills, before, attempts = 0, 0, 0
    while kills < KILLS:
        attempts += 1
        assert attempts < KILLS * 4, f"only {kills} kills landed in {attempts} runs"
        output = folder / f"partial{attempts}.xlsx"
        code, _ = worker.run(inputs(folder, method, project, output),
                             kill_after=rng.uniform(0.0, took))
        if code == -signal.SIGKILL:
            kills += 1
        else:
            assert code == 0
        assert integrity(project) == "ok" if project.exists() else True
        now = finished_units(project)
        assert now >= before, "a finished unit was lost"
        before = now
    final = folder / "final.xlsx"
    code, _ = worker.run(inputs(folder, method, project, final))
    assert code == 0
    assert integrity(project) == "ok"
    expected, got = sheets(reference), sheets(final)
    assert expected.keys() == got.keys()
    for name in expected:
        pd.testing.assert_frame_equal(got[name], expected[name], obj=f"{method} sheet {name}")


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
