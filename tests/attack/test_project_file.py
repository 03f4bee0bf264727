"""Attack suite, the project file: damaged, cut short, read-only, from a newer EvalDesk, another
program's database, a stale lock of a killed process, two writers at once (two command-line runs
with ``--project``; the app and a command-line run). Each is refused with a message that names
the file and says what to do, the file is left exactly as it was, and no work is lost.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from core.cli import main
from core.project import Project, ProjectLocked
from tests.attack._faults import (
    cli_command,
    cli_env,
    hostile_server,
    integrity,
    save_profile,
    score_args,
    statuses,
)

PROFILE = "Attack server"


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


def rerun(tmp_path, path, capsys):
    """Score again with ``--project path``: (exit code, stderr)."""
    code = main(score_args(tmp_path, path, tmp_path / "again.xlsx", PROFILE))
    return code, capsys.readouterr().err


def assert_refused(code, err, path, *words):
    assert code == 1, err
    assert "Traceback" not in err
    assert str(path) in err
    for word in words:
        assert word in err, err


# --------------------------------------------------------------------------- damaged files
def page_of(path, table: str) -> int:
    """The first page of ``table``'s b-tree (1-based)."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                            (table,)).fetchone()[0]
    finally:
        conn.close()


def page_size(path) -> int:
    return int.from_bytes(path.read_bytes()[16:18], "big")


@pytest.mark.timeout(60)
def test_corrupt_bytes_in_the_middle_are_refused_and_the_file_is_not_changed(
        tmp_path, project, capsys):
    data = bytearray(project.read_bytes())
    start = (page_of(project, "results") - 1) * page_size(project)
    data[start: start + 64] = b"\xa5" * 64  # the b-tree page header of the results
    project.write_bytes(bytes(data))
    before = digest(project)
    code, err = rerun(tmp_path, project, capsys)
    assert_refused(code, err, project, "damaged", "not changed", "backup")
    assert digest(project) == before


@pytest.mark.timeout(60)
def test_a_stored_text_with_broken_bytes_is_called_damaged_without_dumping_it(
        tmp_path, project, capsys):
    """Garbage inside one stored text passes SQLite's quick check at opening; reading it must
    say "damaged" plainly (it said "Reading the project failed ... Could not decode to UTF-8
    column 'payload' with text '...'" followed by the garbage)."""
    data = bytearray(project.read_bytes())
    where = data.find(b'"text_id": "A"')  # inside the stored score of text A
    assert where > 0
    data[where + 1: where + 7] = b"\xff\xfe\xfd\xfc\xfb\xfa"
    project.write_bytes(bytes(data))
    code, err = rerun(tmp_path, project, capsys)
    assert_refused(code, err, project, "damaged")
    assert "\ufffd" not in err and "Could not decode" not in err


@pytest.mark.timeout(60)
def test_a_stored_value_that_is_no_longer_json_is_called_damaged(tmp_path, project, capsys):
    """A broken stored value of valid UTF-8 ended the command in a JSONDecodeError traceback."""
    data = bytearray(project.read_bytes())
    where = data.find(b'"text_id": "A"')
    assert where > 0
    data[where: where + 1] = b"}"
    project.write_bytes(bytes(data))
    code, err = rerun(tmp_path, project, capsys)
    assert_refused(code, err, project, "damaged")


@pytest.mark.timeout(60)
def test_a_file_cut_in_half(tmp_path, project, capsys):
    data = project.read_bytes()
    project.write_bytes(data[: len(data) // 2])
    before = digest(project)
    code, err = rerun(tmp_path, project, capsys)
    assert_refused(code, err, project, "damaged", "not changed")
    assert digest(project) == before


@pytest.mark.timeout(60)
def test_a_file_cut_inside_its_header(tmp_path, project, capsys):
    project.write_bytes(project.read_bytes()[:50])
    code, err = rerun(tmp_path, project, capsys)
    assert_refused(code, err, project, "cut short")


KILLED_WHILE_CREATING = """
import os, signal, sys
from core.project import _file

def killed(conn, version):
    os.kill(os.getpid(), signal.SIGKILL)  # the schema is written, not yet committed

_file._apply_migrations = killed
_file.Project.create(sys.argv[1], method="interacteval")
"""


@pytest.mark.timeout(60)
def test_a_project_whose_creation_was_killed_is_made_anew(tmp_path, server, capsys):
    """kill -9 while a new project file was being created left an empty file beside its journal;
    every later ``--project`` run said "is empty: it is not an EvalDesk project" until the user
    deleted it by hand. An empty file holds nothing: it is now made anew."""
    path = tmp_path / "new.evaldesk"
    killed = subprocess.run([sys.executable, "-c", KILLED_WHILE_CREATING, str(path)],
                            env=cli_env(), capture_output=True, check=False, timeout=60)
    assert killed.returncode == -signal.SIGKILL
    assert path.exists() and path.stat().st_size == 0
    code, err = rerun(tmp_path, path, capsys)
    assert code == 0, err
    assert set(statuses(tmp_path / "again.xlsx").values()) == {"ok"}
    assert integrity(path) == "ok"


@pytest.mark.timeout(60)
def test_an_empty_file_is_refused_by_open_but_made_anew_by_a_run(tmp_path, project, capsys):
    project.write_bytes(b"")
    with pytest.raises(Exception, match="is empty"):
        Project.open(project)
    code, err = rerun(tmp_path, project, capsys)
    assert code == 0, err
    assert integrity(project) == "ok"


@pytest.mark.timeout(60)
def test_a_spreadsheet_renamed_to_a_project(tmp_path, server, capsys):
    fake = tmp_path / "grades.evaldesk"
    fake.write_bytes(b"PK\x03\x04" + os.urandom(500))
    code, err = rerun(tmp_path, fake, capsys)
    assert_refused(code, err, fake, "not a readable EvalDesk project")


@pytest.mark.timeout(60)
def test_another_programs_database(tmp_path, server, capsys):
    other = tmp_path / "other.evaldesk"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = digest(other)
    code, err = rerun(tmp_path, other, capsys)
    assert_refused(code, err, other, "another program")
    assert digest(other) == before


@pytest.mark.timeout(60)
def test_a_project_from_a_newer_evaldesk(tmp_path, project, capsys):
    conn = sqlite3.connect(project)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    before = digest(project)
    code, err = rerun(tmp_path, project, capsys)
    assert_refused(code, err, project, "newer EvalDesk", "format 99", "Update EvalDesk")
    assert digest(project) == before


# ------------------------------------------------------------------------ read-only places
@pytest.fixture
def unwritable():
    """``make(path)`` makes a file or folder unwritable even for root (``chattr +i``), or by
    permissions for an ordinary user; undone after the test."""
    made = []

    def make(path):
        if os.geteuid() == 0:
            if shutil.which("chattr") is None or subprocess.run(
                    ["chattr", "+i", str(path)], capture_output=True, check=False).returncode:
                pytest.skip("running as root without chattr +i: cannot make a file read-only")
        else:
            path.chmod(0o555 if path.is_dir() else 0o444)
        made.append(path)

    yield make
    for path in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
        else:
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.mark.timeout(60)
def test_a_read_only_project_file(tmp_path, project, capsys, unwritable):
    before = digest(project)
    unwritable(project)
    code, err = rerun(tmp_path, project, capsys)
    assert_refused(code, err, project, "may not write")
    assert digest(project) == before


@pytest.mark.timeout(60)
def test_a_project_in_a_read_only_folder(tmp_path, server, capsys, unwritable):
    folder = tmp_path / "locked"
    folder.mkdir()
    path = folder / "new.evaldesk"
    unwritable(folder)
    code = main(score_args(tmp_path, path, tmp_path / "out.xlsx", PROFILE))
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert str(folder) in err
    assert not path.exists()


# ----------------------------------------------------------------------------------- locks
HOLD = """
import sys, time
from core.project import Project
project = Project.open(sys.argv[1])
print("open", flush=True)
time.sleep(120)
"""


def holder(path):
    """A separate EvalDesk process holding ``path`` open (killed by the caller)."""
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], env=cli_env(),
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "open"
    return process


@pytest.mark.timeout(60)
def test_a_stale_lock_of_a_killed_process_is_replaced(tmp_path, project, capsys):
    process = holder(project)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(10)
    lock = project.with_name(project.name + ".lock")
    assert lock.exists()  # left behind by the killed process
    code, err = rerun(tmp_path, project, capsys)
    assert code == 0, err
    assert set(statuses(tmp_path / "again.xlsx").values()) == {"ok"}
    assert not lock.exists()
    assert integrity(project) == "ok"


@pytest.mark.timeout(60)
def test_an_unreadable_old_lock_file_is_replaced(tmp_path, project, capsys):
    lock = project.with_name(project.name + ".lock")
    lock.write_bytes(b"\x00garbage")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    code, err = rerun(tmp_path, project, capsys)
    assert code == 0, err


@pytest.mark.timeout(60)
def test_a_project_open_in_the_app_refuses_a_command_line_run(tmp_path, project, capsys):
    """The app opens a project with ``Project.open`` (desktop/main_window.py); a command-line
    run on the same file while it is open is refused, and nothing is written."""
    app_side = Project.open(project)
    try:
        before = digest(project)
        result = subprocess.run(
            cli_command(score_args(tmp_path, project, tmp_path / "cli.xlsx", PROFILE)),
            check=False, env=cli_env(), capture_output=True, text=True, timeout=60)
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert "already open" in result.stderr and str(os.getpid()) in result.stderr
        assert not (tmp_path / "cli.xlsx").exists()
        assert digest(project) == before
        assert len(app_side.get_results(app_side.list_runs()[-1].id)) == 4  # app keeps working
    finally:
        app_side.close()


@pytest.mark.timeout(60)
def test_the_app_cannot_open_a_project_a_command_line_run_holds(tmp_path, project):
    process = holder(project)
    try:
        with pytest.raises(ProjectLocked) as refused:
            Project.open(project)
        assert str(process.pid) in str(refused.value)
        assert "another EvalDesk window" in str(refused.value)
    finally:
        process.kill()
        process.wait(10)


@pytest.mark.timeout(90)
def test_two_command_line_runs_on_one_project(tmp_path, server, capsys):
    """Two ``evaldesk checklist score --project same.evaldesk`` at once: one runs, the other is
    refused at once with a message naming the first; the file stays whole."""
    save_profile(PROFILE, server.base, max_retries=0, timeout_s=60)
    server.hold.set()  # the first run waits for its answers until the second has been refused
    path = tmp_path / "shared.evaldesk"
    first = subprocess.Popen(
        cli_command(score_args(tmp_path, path, tmp_path / "one.xlsx", PROFILE)),
        env=cli_env(), stderr=subprocess.PIPE, text=True)
    try:
        lock = path.with_name(path.name + ".lock")
        deadline = time.monotonic() + 30
        while not lock.exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        second = subprocess.run(
            cli_command(score_args(tmp_path, path, tmp_path / "two.xlsx", PROFILE)),
            check=False, env=cli_env(), capture_output=True, text=True, timeout=60)
    finally:
        server.hold.clear()
    _, first_err = first.communicate(timeout=60)
    assert first.returncode == 0, first_err
    assert second.returncode == 1, second.stderr
    assert "Traceback" not in second.stderr
    assert "already open in another EvalDesk window" in second.stderr
    assert str(first.pid) in second.stderr
    assert set(statuses(tmp_path / "one.xlsx").values()) == {"ok"}
    assert not (tmp_path / "two.xlsx").exists()
    assert integrity(path) == "ok"
