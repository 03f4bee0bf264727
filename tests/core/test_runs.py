"""core.runs: the one runner of resumable units, with the project as its store."""

from __future__ import annotations

import asyncio

import pytest

from core.project import Project
from core.project.units import RunUnits
from core.runs import Cancelled, CancelToken, Progress, run_units, unit_key


def test_unit_key_is_readable_and_changes_with_every_part():
    assert unit_key("item 1", "Parents", "ab12") == '["item 1", "Parents", "ab12"]'
    assert unit_key("item 1", "Parents", "ab13") != unit_key("item 1", "Parents", "ab12")


@pytest.fixture
def project(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as p:
        yield p


def _runner(project, run_id, calls, fail=()):
    async def work(unit: int) -> dict:
        calls.append(unit)
        await asyncio.sleep(0)
        return {"unit": unit, "ok": unit not in fail}

    return {
        "work": work,
        "judge": lambda r: (r["ok"], "" if r["ok"] else f"unit {r['unit']} failed"),
        "dump": lambda r: r,
        "load": lambda payload, unit: payload,
        "store": RunUnits(project, run_id, "thing"),
        "what": "things",
    }


async def test_finished_units_are_skipped_failed_ones_tried_again(project):
    run_id = project.start_run("test", "step", {"a": 1})
    units = [(unit_key("u", i), i) for i in range(5)]
    calls: list[int] = []
    first = await run_units(units, **_runner(project, run_id, calls, fail={3}))
    assert [r.ok for r in first] == [True, True, True, False, True]
    assert first[3].error == "unit 3 failed" and sorted(calls) == [0, 1, 2, 3, 4]
    assert project.get_run(run_id).status == "finished"
    assert project.get_run(run_id).message == "4 things finished, 1 failed"
    calls.clear()
    progress = Progress()
    again = await run_units(units, progress=progress, **_runner(project, run_id, calls))
    assert calls == [3]  # only the failed one
    assert [r.reused for r in again] == [True, True, True, False, True]
    assert all(r.ok for r in again)
    assert progress.state.done == 5


async def test_cancel_keeps_what_finished_and_marks_the_run(project):
    run_id = project.start_run("test", "step", {"a": 2})
    cancel = CancelToken()
    calls: list[int] = []

    async def work(unit: int) -> dict:
        calls.append(unit)
        if unit == 2:
            cancel.cancel()
            raise Cancelled()
        await asyncio.sleep(0)
        return {"unit": unit, "ok": True}

    options = _runner(project, run_id, calls)
    options["work"] = work
    units = [(unit_key(i), i) for i in range(4)]
    with pytest.raises(Cancelled):
        await run_units(units, limit=1, cancel=cancel, **options)
    assert project.get_run(run_id).status == "cancelled"
    assert set(project.finished_keys(run_id, "thing")) == {unit_key(0), unit_key(1)}


async def test_repeated_keys_are_refused():
    with pytest.raises(ValueError, match="its own key"):
        await run_units([("a", 1), ("a", 2)], work=None, judge=None, dump=None, load=None)


async def test_with_a_limit_only_that_many_units_are_started_and_in_order():
    """A limit starts that many workers, each taking the next unit when it is free: the event
    loop never holds a task per unit (at 6,400 units that held it, and the window, for 2.5 s)."""
    started: list[int] = []
    alive = 0

    async def work(unit: int) -> int:
        nonlocal alive
        started.append(unit)
        alive = max(alive, len(asyncio.all_tasks()))
        await asyncio.sleep(0)
        return unit

    before = len(asyncio.all_tasks())
    units = [(unit_key(i), i) for i in range(50)]
    done = await run_units(units, work, judge=lambda r: (True, ""), dump=lambda r: r,
                           load=lambda p, u: p, limit=3)
    assert [r.value for r in done] == list(range(50))
    assert started == list(range(50))
    assert alive == before + 3
