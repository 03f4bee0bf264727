"""The project file off the hot path: queued writes, the group commit, and what a crash keeps.

A unit of a run (a scored text, a debate) and each LLM call are queued and committed together
with everything else that ended meanwhile; the run reports a unit as done only once it is on
disk. Closing the project, ending a run (also when cancelled) and reading results flush the
queue. A process killed with SIGKILL in the middle of a run loses nothing it reported done.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core.project import Project
from core.project.units import RunUnits
from core.runs import Cancelled, CancelToken, Progress, run_units

ROOT = Path(__file__).resolve().parents[3]


def on_disk(path: Path, run_id: int, kind: str = "unit") -> set[str]:
    """The finished keys as another reader of the file sees them."""
    with Project.open(path, read_only=True) as reader:
        return reader.finished_keys(run_id, kind)


def test_queued_results_wait_for_a_commit_and_close_flushes_them(tmp_path):
    path = tmp_path / "p.evaldesk"
    project = Project.create(path)
    run_id = project.start_run("m", "s", {})
    project.queue_result(run_id, "unit", "a", {"x": 1})
    project.queue_llm_call("k1", model="m", api_base=None, request={}, response={"content": "1"})
    assert project.queued == 2
    assert on_disk(path, run_id) == set()  # queued, not written yet
    project.close()
    assert on_disk(path, run_id) == {"a"}
    with Project.open(path) as again:
        assert again.llm_cache_get("k1")["response"] == {"content": "1"}


def test_the_project_knows_which_calls_it_may_hold(tmp_path):
    """``llm_cache_may_have`` is False only for a key neither stored nor queued: calls queued
    before the keys were first read, queued after, and stored directly all count."""
    path = tmp_path / "p.evaldesk"
    with Project.create(path) as project:
        project.llm_cache_put("stored", model="m", api_base=None, request={},
                              response={"content": "1"})
        project.queue_llm_call("queued early", model="m", api_base=None, request={},
                               response={"content": "2"})
        assert project.llm_cache_may_have("anything")  # nothing read yet: may be there
        assert project.llm_cache_get("absent") is None  # the first look-up reads the keys
        assert not project.llm_cache_may_have("absent")
        assert project.llm_cache_may_have("stored")
        assert project.llm_cache_may_have("queued early")  # queued, not on disk yet
        project.queue_llm_call("queued late", model="m", api_base=None, request={},
                               response={"content": "3"})
        project.llm_cache_put("put late", model="m", api_base=None, request={},
                              response={"content": "4"})
        assert project.llm_cache_may_have("queued late") and project.llm_cache_may_have("put late")
        project.flush()
        assert project.llm_cache_get("queued early")["response"] == {"content": "2"}
    with Project.open(path) as again:
        again.llm_cache_get("absent")
        assert all(again.llm_cache_may_have(k)
                   for k in ("stored", "queued early", "queued late", "put late"))
        assert not again.llm_cache_may_have("absent")
    with Project.open(path, read_only=True) as reader:  # another program may be writing it
        reader.llm_cache_get("absent")
        assert reader.llm_cache_may_have("absent")


def test_finish_run_flushes_the_queue_first(tmp_path):
    path = tmp_path / "p.evaldesk"
    with Project.create(path) as project:
        run_id = project.start_run("m", "s", {})
        project.queue_result(run_id, "unit", "a", 1)
        project.finish_run(run_id, "cancelled", "Stopped.")
        assert project.queued == 0
        assert on_disk(path, run_id) == {"a"}


def test_reads_of_results_see_queued_results(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as project:
        run_id = project.start_run("m", "s", {})
        project.queue_result(run_id, "unit", "a", 1)
        assert project.finished_keys(run_id, "unit") == {"a"}
        project.queue_result(run_id, "unit", "b", None, status="failed", error="It failed.")
        assert [r.key for r in project.get_results(run_id)] == ["a", "b"]


def test_a_failed_unit_needs_a_message_even_when_queued(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as project:
        run_id = project.start_run("m", "s", {})
        with pytest.raises(ValueError, match="error message"):
            project.queue_result(run_id, "unit", "a", None, status="failed")
        assert project.queued == 0


def test_a_failed_commit_keeps_the_queue(tmp_path, monkeypatch):
    with Project.create(tmp_path / "p.evaldesk") as project:
        run_id = project.start_run("m", "s", {})
        project.queue_result(run_id, "unit", "a", 1)
        project.queue_result(9999, "unit", "b", 1)  # no such run: the foreign key refuses it
        with pytest.raises(sqlite3.IntegrityError):
            project.flush()
        assert project.queued == 2  # nothing lost, nothing half-written
        assert project._queued[0][1][2] == "a"
        project._queued.pop()  # the bad one (a bug in the caller) out of the way
    with Project.open(tmp_path / "p.evaldesk", read_only=True) as reader:
        assert reader.finished_keys(run_id, "unit") == {"a"}  # close committed the good one


async def test_writes_that_end_together_share_one_commit(tmp_path, monkeypatch):
    commits: list[int] = []
    real = Project.flush

    def counting(self):
        if self.queued:
            commits.append(self.queued)
        return real(self)

    monkeypatch.setattr(Project, "flush", counting)
    path = tmp_path / "p.evaldesk"
    with Project.create(path) as project:
        run_id = project.start_run("m", "s", {})
        store = RunUnits(project, run_id, "unit")

        async def work(i: int) -> int:
            await asyncio.sleep(0.001 * (i % 3))
            return i

        await run_units([(str(i), i) for i in range(40)], work, judge=lambda v: (True, ""),
                        dump=lambda v: v, load=lambda p, u: p, store=store)
        assert on_disk(path, run_id) == {str(i) for i in range(40)}
    assert sum(commits) == 40
    assert len(commits) < 40  # grouped


async def test_cancel_flushes_what_finished(tmp_path):
    path = tmp_path / "p.evaldesk"
    cancel = CancelToken()
    reported: list[str] = []

    class Seen(Progress):
        def advance(self, n: int = 1, detail: str = "") -> None:
            reported.append(detail)
            if len(reported) == 5:
                cancel.cancel()

    with Project.create(path) as project:
        run_id = project.start_run("m", "s", {})

        async def work(i: int) -> int:
            await asyncio.sleep(0.002)
            return i

        with pytest.raises(Cancelled):
            await run_units([(str(i), i) for i in range(200)], work,
                            judge=lambda v: (True, ""), dump=lambda v: v,
                            load=lambda p, u: p, store=RunUnits(project, run_id, "unit"),
                            limit=4, progress=Seen(), cancel=cancel)
        assert project.get_run(run_id).status == "cancelled"
        assert project.queued == 0
    kept = on_disk(path, run_id)
    assert set(reported) <= kept  # everything reported done is on disk
    assert len(kept) < 200


# ------------------------------------------------------------------------------ kill -9
CHILD = textwrap.dedent("""
    import asyncio, sys
    from pydantic import BaseModel
    from core.llm import Gateway, ScriptedLLM
    from core.project import Project
    from core.project.units import RunUnits
    from core.runs import Progress, run_units

    class Answer(BaseModel):
        value: int

    path = sys.argv[1]
    project = Project.open(path) if sys.argv[2] == "open" else Project.create(path)
    run_id = project.start_run("m", "s", {"n": 400}, resume=True)
    llm = ScriptedLLM(lambda messages: '{"value": 1}', delay_s=0.002)
    gateway = Gateway(llm.profile(max_concurrency=8), cache=project, run_id=run_id)

    class Report(Progress):
        def advance(self, n=1, detail=""):
            if detail:
                print("done", detail, flush=True)   # what the run reports as done

    async def work(i):
        reply = await gateway.complete_json([{"role": "user", "content": f"unit {i}"}], Answer)
        return reply.value

    async def main():
        await run_units([(str(i), i) for i in range(400)], work, judge=lambda v: (True, ""),
                        dump=lambda v: v, load=lambda p, u: p,
                        store=RunUnits(project, run_id, "unit"), limit=8, progress=Report())
        print("billed", gateway.usage.calls, flush=True)
        project.close()

    asyncio.run(main())
""")


def _child(path: Path, mode: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "EVALDESK_HOME": str(path.parent / "home")}
    return subprocess.Popen([sys.executable, "-c", CHILD, str(path), mode], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_kill_9_mid_run_loses_nothing_reported_done_and_the_resume_bills_no_call_twice(
    tmp_path,
):
    path = tmp_path / "killed.evaldesk"
    child = _child(path, "create")
    reported: list[str] = []
    deadline = time.monotonic() + 120
    while len(reported) < 60 and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        if line.startswith("done "):
            reported.append(line.split()[1])
    assert len(reported) >= 60, child.stderr.read()
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    assert child.returncode == -signal.SIGKILL  # killed mid-run, not finished
    assert len(reported) < 400

    # the file opens (a half-written commit is rolled back) and holds every unit reported done
    with Project.open(path) as project:
        run = project.list_runs()[0]
        assert run.status == "running"  # nobody ended it
        kept = project.finished_keys(run.id, "unit")
        logged = project.llm_usage(run.id).calls
    assert set(reported) <= kept
    assert logged >= len(kept)  # each kept unit's call is in the log too

    # the resume redoes only what was not kept, and no kept unit's call is billed again
    resumed = _child(path, "open")
    out, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    billed = int(next(line.split()[1] for line in out.splitlines()
                      if line.startswith("billed ")))
    assert billed == 400 - logged  # a call logged before the kill is answered from the log
    with Project.open(path) as project:
        run = project.list_runs()[0]
        assert run.status == "finished"
        assert len(project.finished_keys(run.id, "unit")) == 400
        assert project.llm_usage(run.id).calls == 400
    assert json.dumps(sorted(kept))  # keys are plain strings
