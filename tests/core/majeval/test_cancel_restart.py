"""Cancel and start again, many times, at random moments (issue 28, point 10): the debates must
always go on where they stopped. Seen in the app: Cancel in the first seconds of the debates,
Start again, and the run stayed at 0 of 18 with no call and no error until the app restarted.

Every wait here is bounded: a run that stalls fails the test instead of hanging it."""

from __future__ import annotations

import asyncio
import random

import pytest

from core.majeval import session as st
from core.runs import Cancelled, CancelToken

from .majeval_support import SYNTHESIS, evaluation, kind, persona, turn

Q = "Overall quality"
STARTS = 40
PERSONAS = [persona("Teachers", "Ms Amy Lee"), persona("Teachers", "Mr Bo Chen"),
            persona("Parents", "Dana Ray"), persona("Parents", "Eli Stone"),
            persona("Nurses", "Fay Gold"), persona("Nurses", "Gus Hill")]


def panel(messages):
    what = kind(messages)
    if what == "aggregate":
        return SYNTHESIS
    if what == "phase1":
        return evaluation(3)
    if what in ("turn", "final"):
        return turn("NO MORE COMMENTS", 3, done=True)
    raise AssertionError(what)


def _project(tmp_path, items):
    from core.project import Project

    project = Project.create(tmp_path / "p.evaldesk")
    st.personas.save_personas(project, PERSONAS)
    state = st.MajEvalChoices(task="Judge QA pairs.", item_list=items)
    st.choices.save_choices(project, state)
    return project, state


@pytest.mark.parametrize("concurrency", [1, 2])
async def test_cancel_and_start_again_at_random_moments_always_finishes(
        tmp_path, concurrency):
    """40 starts, each cancelled after a random moment (often while calls wait for the model's
    one slot), then a last start that must finish: every start makes progress or ends, within
    a bounded wait."""
    from core.llm import Gateway, ScriptedLLM
    from core.majeval import Item

    items = [Item(id=f"q{i}", content=f"Q: question {i}? A: answer {i}.",
                  context="A story.") for i in range(6)]
    project, state = _project(tmp_path, items)
    rng = random.Random(28)
    with project, ScriptedLLM(panel, name=f"restart-{concurrency}", delay_s=0.002) as llm:
        profile = llm.profile(max_concurrency=concurrency, max_retries=0)

        def llm_for_run(run_id):  # a new gateway per start, as the wizard makes
            return Gateway(profile, cache=project, run_id=run_id)

        for attempt in range(STARTS):
            cancel = CancelToken()
            task = asyncio.ensure_future(st.debates.run_debates(
                project, state, llm_for_run, model=llm.model, cancel=cancel))
            # the first start is cancelled while the model's first answer is on its way (the
            # app: Cancel in the first seconds), the others anywhere
            await asyncio.sleep(0.001 if attempt == 0 else rng.uniform(0.0, 0.02))
            how = rng.choice(["cancel", "cancel", "close", "both"])
            if how in ("cancel", "both"):  # the Cancel button
                cancel.cancel()
            if how in ("close", "both"):  # the window closes (the step's task is cancelled)
                task.cancel()
            try:
                await asyncio.wait_for(task, timeout=20)
            except (Cancelled, asyncio.CancelledError):
                pass
            except TimeoutError:
                pytest.fail(f"start {attempt + 1} did not stop within 20 s of Cancel")
        calls = llm.calls
        try:
            run = await asyncio.wait_for(
                st.debates.run_debates(project, state, llm_for_run, model=llm.model), timeout=30)
        except TimeoutError:
            pytest.fail(f"the last start stalled: {llm.calls - calls} calls in 30 s after "
                        f"{STARTS} cancelled starts ({st.debates.run_progress(project, state, llm.model)})")
        assert all(r.status == "ok" for r in run.items)
        assert st.debates.run_progress(project, state, llm.model) == (18, 18)
