"""Attack suite, issue 30 points 3 and 5: project files from elsewhere, locks and processes.

A ``.evaldesk`` file is SQLite and people share them, so a file may carry things EvalDesk never
makes: a trigger that rewrites scores, a view in place of a table whose query never ends, an
endless trigger. Such a file is refused at opening, naming what is in it, before any of it can
run; a long query of the project stops at Ctrl+C (and at the app's Cancel). A new run never
takes the id of a run another program deleted, so it cannot adopt that run's left-over
results. The "already open" guard is the operating system's own file lock: a lock file left by
a crashed EvalDesk (whose process id now belongs to another program) does not refuse the
project, a symbolic link does not slip past the guard, SIGTERM stops a run like Ctrl+C, and
kill -9 during an export leaves no temporary file for good.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from core.cli import main
from core.project import Project, ProjectLocked
from core.runs import Cancelled
from tests.attack._faults import (
    TEXTS,
    cli_command,
    cli_env,
    hostile_server,
    integrity,
    save_profile,
    score_args,
    statuses,
)

PROFILE = "Attack server"
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def server():
    with hostile_server("none") as running:
        save_profile(PROFILE, running.base, max_retries=0)
        yield running


@pytest.fixture
def project(tmp_path, server, capsys):
    """A project holding a finished scoring run of four texts (made by the command line)."""
    path = tmp_path / "work.evaldesk"
    assert main(score_args(tmp_path, path, tmp_path / "first.xlsx", PROFILE)) == 0
    capsys.readouterr()
    return path


def tamper(path, *statements: str) -> None:
    """Change the file as another SQLite tool would (its own connection, foreign keys off)."""
    conn = sqlite3.connect(path)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def rerun(tmp_path, path, capsys, output="again.xlsx"):
    code = main(score_args(tmp_path, path, tmp_path / output, PROFILE))
    return code, capsys.readouterr().err


def cli(args, timeout=60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cli_command(args), env=cli_env(), capture_output=True, text=True,
                          timeout=timeout, check=False, **kwargs)


# ------------------------------------------------------------------- hostile schema objects
@pytest.mark.timeout(60)
def test_a_hidden_trigger_that_rewrites_scores_is_refused(tmp_path, project, capsys):
    """A shared project with a trigger that set every stored score to 5: the run went on and
    the workbook showed 5s nobody gave. Now: refused, naming the trigger; nothing changed."""
    tamper(project, "CREATE TRIGGER keep_it_positive AFTER INSERT ON results BEGIN "
                    "UPDATE results SET payload = json_set(payload, '$.score', 5) "
                    "WHERE id = new.id; END")
    before = digest(project)
    code, err = rerun(tmp_path, project, capsys)
    assert code == 1, err
    assert "Traceback" not in err
    assert str(project) in err and '"keep_it_positive"' in err and "trigger" in err
    assert "not changed" in err
    assert digest(project) == before
    assert not (tmp_path / "again.xlsx").exists()


@pytest.mark.timeout(60)
def test_a_view_in_place_of_meta_does_not_hang_project_info(tmp_path, project):
    """``evaldesk project info`` on a file whose ``meta`` table was replaced by a view with an
    endless query hung for good (Ctrl+C ignored). Now: refused at once, naming the view."""
    tamper(project, "ALTER TABLE meta RENAME TO meta_kept",
           "CREATE VIEW meta AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
           "SELECT 'application' AS key, 'EvalDesk' AS value FROM c WHERE x = 0")
    before = digest(project)
    try:
        result = cli(["project", "info", str(project)], timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("evaldesk project info hung on a file with an endless view")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert 'the view "meta"' in result.stderr and "not changed" in result.stderr
    assert digest(project) == before


@pytest.mark.timeout(90)
def test_an_endless_trigger_does_not_hang_a_run(tmp_path, project):
    """A trigger whose query never ends, fired when a run starts: the run hung until kill -9.
    Now: refused at opening, before anything runs."""
    tamper(project, "CREATE TRIGGER slow_start AFTER INSERT ON runs BEGIN "
                    f"SELECT * FROM ({ENDLESS}); END",
           "CREATE TRIGGER slow_update AFTER UPDATE ON runs BEGIN "
                    f"SELECT * FROM ({ENDLESS}); END")
    try:
        result = cli(score_args(tmp_path, project, tmp_path / "again.xlsx", PROFILE), timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("a run on a project with an endless trigger hung")
    assert result.returncode == 1, result.stderr
    assert '"slow_start"' in result.stderr and '"slow_update"' in result.stderr
    assert "Traceback" not in result.stderr


LONG_QUERY = f"""
import sys
from core.project import Project
project = Project.open(sys.argv[1])
with project._reading() as conn:
    print("querying", flush=True)
    conn.execute("{ENDLESS}").fetchall()
"""


@pytest.mark.timeout(60)
def test_a_long_query_of_the_project_stops_at_ctrl_c(tmp_path, project):
    """SQLite ignored Ctrl+C inside a long query. Now the project's connection gives Python a
    chance between steps, so Ctrl+C stops it and the lock is released."""
    process = subprocess.Popen([sys.executable, "-c", LONG_QUERY, str(project)], env=cli_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "querying"
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("Ctrl+C did not stop a long query of the project")
    assert "KeyboardInterrupt" in err, err
    Project.open(project).close()  # not left locked


@pytest.mark.timeout(60)
def test_a_long_query_of_the_project_stops_at_cancel(tmp_path, project):
    """The app's Cancel (``Project.interrupt``, called by the run's cancel token) stops a long
    query in another thread; the project stays usable."""
    with Project.open(project) as opened:
        caught: list[BaseException] = []

        def query():
            try:
                with opened._reading() as conn:
                    conn.execute(ENDLESS).fetchall()
            except BaseException as exc:  # noqa: BLE001 - what the step would see
                caught.append(exc)

        worker = threading.Thread(target=query)
        worker.start()
        time.sleep(0.5)
        opened.interrupt()
        worker.join(20)
        assert not worker.is_alive(), "Cancel did not stop the query"
        assert caught and isinstance(caught[0], Cancelled), caught
        assert opened.list_runs()  # the next query runs normally


# ------------------------------------------------------------------------- runs and orphans
@pytest.mark.timeout(90)
def test_a_new_run_never_takes_the_id_of_a_deleted_run(tmp_path, project, server, capsys):
    """Another tool deleted the runs (foreign keys off, so the results stayed). The next run with
    a changed checklist got the old run id, found the old results "finished" and exported them
    as its own: texts scored with the old checklist beside the new one, without a word."""
    tamper(project, "DELETE FROM runs")
    checklist = tmp_path / "checklist.xlsx"
    args = score_args(tmp_path, project, tmp_path / "new.xlsx", PROFILE)
    import pandas as pd

    pd.DataFrame({"dimension": ["Coherence"] * 3,
                  "question": ["Is it on topic?", "Is every claim supported?",
                               "Does it end well?"]}).to_excel(
        checklist, sheet_name="Checklist", index=False)
    server.hits.clear()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert all(server.hits[text] >= 1 for text in TEXTS), server.hits  # every text scored anew
    assert "4 results that belong to no run" in err, err
    with Project.open(project, read_only=True) as opened:
        runs = opened.list_runs()
        assert [r.id for r in runs] == [2]
        assert opened.orphaned_results() == 4
        assert len(opened.get_results(2)) == 4
    info = cli(["project", "info", str(project)])
    assert "4 belong to no run" in info.stdout, info.stdout


# ------------------------------------------------------------------------------- locks
@pytest.mark.timeout(60)
def test_a_lock_file_naming_a_live_unrelated_process_does_not_refuse(tmp_path, project, capsys):
    """A crashed EvalDesk left its lock file; its process id now belongs to another program
    (here: this test's parent). The project was refused for good ("already open in another
    EvalDesk window ... process N") and the command line had no way out."""
    lock = project.with_name(project.name + ".lock")
    lock.write_text(json.dumps({"pid": os.getppid(), "host": socket.gethostname(),
                                "user": "ann", "since": "2026-03-01T10:00:00+00:00",
                                "token": "crashed"}))
    code, err = rerun(tmp_path, project, capsys)
    assert code == 0, err
    assert set(statuses(tmp_path / "again.xlsx").values()) == {"ok"}
    assert not lock.exists()


HOLD = """
import sys, time
from core.project import Project
project = Project.open(sys.argv[1])
print("open", flush=True)
time.sleep(120)
"""


@pytest.mark.timeout(90)
def test_a_project_really_open_elsewhere_says_how_to_open_it_anyway(tmp_path, project):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(project)], env=cli_env(),
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        refused = cli(score_args(tmp_path, project, tmp_path / "cli.xlsx", PROFILE))
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        assert str(holder.pid) in refused.stderr and "--open-anyway" in refused.stderr
        anyway = cli([*score_args(tmp_path, project, tmp_path / "cli.xlsx", PROFILE),
                      "--open-anyway"])
        assert anyway.returncode == 0, anyway.stderr
        assert set(statuses(tmp_path / "cli.xlsx").values()) == {"ok"}
    finally:
        holder.kill()
        holder.wait(10)


@pytest.mark.timeout(60)
def test_a_symbolic_link_does_not_slip_past_the_already_open_guard(tmp_path, project):
    """A project opened through a symbolic link took its own lock beside the link: two runs
    wrote the same project at once."""
    link = tmp_path / "shortcut.evaldesk"
    link.symlink_to(project)
    first = Project.open(project)
    try:
        with pytest.raises(ProjectLocked):
            Project.open(link)
    finally:
        first.close()
    first = Project.open(link)
    try:
        with pytest.raises(ProjectLocked):
            Project.open(project)
    finally:
        first.close()


@pytest.mark.timeout(120)
def test_sigterm_stops_a_run_like_ctrl_c(tmp_path, server):
    """SIGTERM (a logout, ``kill``, a scheduler's time limit) ended a run without a word and left
    the lock. Now it stops like Ctrl+C: finished texts kept, a line saying so, lock released."""
    save_profile(PROFILE, server.base, max_retries=0, timeout_s=60, max_concurrency=1)
    server.latency_s = 0.3
    path = tmp_path / "term.evaldesk"
    process = subprocess.Popen(cli_command(score_args(tmp_path, path, tmp_path / "t.xlsx",
                                                      PROFILE)),
                               env=cli_env(), stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while sum(server.hits.values()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.4)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert "stopped" in err and "kept" in err, err
    assert "Traceback" not in err
    assert not path.with_name(path.name + ".lock").exists()
    assert integrity(path) == "ok"
    with Project.open(path, read_only=True) as opened:
        run = opened.list_runs()[-1]
        assert run.status == "cancelled"
        assert 1 <= len(opened.get_results(run.id)) < 4


KILLED_EXPORT = """
import os, signal, sys
import pandas as pd
from core import tables
real = tables._replace
def killed(tmp_name, path):
    os.kill(os.getpid(), signal.SIGKILL)  # the workbook is written, not yet moved into place
tables._replace = killed
tables.write_workbook(sys.argv[1], [tables.Sheet("Scores", pd.DataFrame({"a": [1]}))])
"""


@pytest.mark.timeout(60)
def test_a_temporary_file_left_by_kill_9_during_an_export_is_cleaned_up(tmp_path):
    import pandas as pd

    from core import tables

    target = tmp_path / "results.xlsx"
    killed = subprocess.run([sys.executable, "-c", KILLED_EXPORT, str(target)], env=cli_env(),
                            capture_output=True, check=False, timeout=60)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = sorted(tmp_path.glob("~evaldesk-*.xlsx.tmp"))
    assert len(left) == 1
    someone_elses = tmp_path / "~evaldesk-notes.txt"
    someone_elses.write_text("mine")
    tables.write_workbook(target, [tables.Sheet("Scores", pd.DataFrame({"a": [2]}))])
    assert target.exists()
    assert not list(tmp_path.glob("~evaldesk-*.xlsx.tmp"))
    assert someone_elses.exists()



@pytest.mark.timeout(60)
def test_an_export_being_written_keeps_its_temporary_file(tmp_path):
    """The clean-up never touches the temporary file of an export running at the same time (in
    this process or another): it holds the file's lock while it writes."""
    import pandas as pd

    from core import paths, tables

    busy, held = paths.claim_temp_file_beside(tmp_path / "other.xlsx", prefix="~evaldesk-",
                                              suffix=".xlsx.tmp")
    try:
        tables.write_workbook(tmp_path / "results.xlsx",
                              [tables.Sheet("Scores", pd.DataFrame({"a": [1]}))])
        assert busy.exists()
    finally:
        paths.let_go(held)
    tables.write_workbook(tmp_path / "results.xlsx",
                          [tables.Sheet("Scores", pd.DataFrame({"a": [2]}))])
    assert not busy.exists()
