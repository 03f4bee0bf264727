"""A MAJ-Eval run whose engine process dies in the middle (issue 29): the engine is killed (as a
crash would end it) after a few answers, EvalDesk restarts it once, sends the calls that were in
flight again, and the run finishes with the same results as a run that was never interrupted.
With the bundled model, one call at a time (greedy decoding and one sequence per batch, so the
two runs decode alike)."""

from __future__ import annotations

import os
import signal

import pytest

from core.llm import Gateway, MemoryCache, _engine, add_usage_listener
from core.majeval import DebateSettings, Item, Persona, evaluate
from core.settings import bundled_profile

pytestmark = pytest.mark.slow

TASK = "Judge question-answer pairs for reading stories with children aged 3 to 6."


def panel() -> list[Persona]:
    def p(group, name, perspective):
        return Persona(id=f"{group}/{name}", group=group, name=name, perspective=perspective,
                       demographics=f"{name} lives in a city.", specialty="Reading aloud.",
                       psychological_traits="Calm.", social_relationships="Knows teachers.")

    return [p("Parents", "Dana Ray", "Questions should be short and fun."),
            p("Parents", "Eli Stone", "Questions should not be too long.")]


ITEMS = [Item(id="q1", content="Q: Why does the fox hide? A: Because it is cold.",
              context="A fox hides in its burrow in winter.")]


def summary(run) -> list[tuple]:
    """What a user sees of a run: per unit its status, scores and each agent's outcome."""
    out = []
    for g in sorted(run.groups, key=lambda g: (g.item_id, g.group)):
        agents = tuple((a.persona_id, a.status, tuple(sorted((a.final or {}).items())),
                        a.finalised_by) for a in g.agents)
        out.append((g.item_id, g.group, g.status, tuple(sorted(g.final_mean.items())), agents))
    return out


async def run_once(kill_after: int | None):
    profile = bundled_profile().model_copy(update={"max_tokens": 120, "max_concurrency": 1})
    gateway = Gateway(profile, cache=MemoryCache())
    await gateway.complete_text("Warm up.")  # the engine started (not part of the run)
    engine = gateway._engine
    killed: list[int] = []

    def maybe_kill(_session_usage) -> None:  # told after every call of the session
        if kill_after is not None and not killed and gateway.usage.calls >= kill_after + 1:
            killed.append(engine.process.pid)
            os.kill(engine.process.pid, signal.SIGKILL)

    remove = add_usage_listener(maybe_kill)
    try:
        run = await evaluate(panel(), ITEMS, TASK, gateway, settings=DebateSettings(rounds=1),
                             model=profile.model)
    finally:
        remove()
    return run, engine, killed


@pytest.mark.timeout(1800)  # two runs of a CPU model (a few minutes on a quiet machine)
async def test_a_majeval_run_survives_the_engine_being_killed(bundled_model):
    _engine.stop_engines()
    uninterrupted, engine, _ = await run_once(None)
    assert engine.crashes == 0
    _engine.stop_engines()  # the second run starts from a fresh engine too
    interrupted, engine, killed = await run_once(kill_after=2)
    assert killed, "the engine was not killed during the run"
    assert engine.crashes == 1 and engine.running() and engine.process.pid != killed[0]
    assert summary(interrupted) == summary(uninterrupted)
