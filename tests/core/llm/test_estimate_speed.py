"""Time estimates from how fast the model answers for the size of each call (issue 28, point 9:
on a new project MAJ-Eval said "up to about 1 minute" and took 7 minutes, InteractEval scoring
said "about 1-2 minutes" and took 20 min 42 s). A flat seconds-per-call figure taken from short
calls (a probe of one word, or the build steps) said nothing of a debate turn reading a long
discussion. Times here are figures written into the project, never measured by the test."""

from __future__ import annotations

import math

import pytest

from core.llm.estimate import (
    Latency,
    Speed,
    StagePlan,
    estimate,
    fit_speed,
    measured_latency,
    needs_calibration,
    probe_latency,
    recalled_speed,
)
from core.settings import ModelProfile

LOCAL = ModelProfile(name="Built-in", model="evaldesk-local/gemma-3-270m", max_concurrency=1)
#: This computer: 0.2 s to start, 4 ms per prompt token read, 50 ms per token written.
TRUE = Speed(0.2, 0.004, 0.05)


def _calls(sizes):
    return [(p, c, TRUE.seconds(p, c)) for p, c in sizes]


def test_the_speed_is_fitted_from_calls_of_different_sizes():
    fitted = fit_speed(_calls([(100, 20), (800, 30), (2500, 60), (300, 200), (1500, 10),
                               (60, 90), (4000, 120)]), local=True)
    assert fitted.overhead_s == pytest.approx(0.2, abs=1e-6)
    assert fitted.prompt_s == pytest.approx(0.004) and fitted.completion_s == pytest.approx(0.05)
    one = fit_speed(_calls([(400, 40)]), local=True)  # one call: writing counted 10 x reading
    assert one.completion_s == pytest.approx(10 * one.prompt_s)
    assert one.seconds(400, 40) == pytest.approx(TRUE.seconds(400, 40))


def _plan(prompt_words: int, calls: int, reply: int) -> list[StagePlan]:
    return [StagePlan("turns", [[{"role": "user", "content": "word " * prompt_words}]] * calls,
                      reply_tokens=reply)]


def test_long_calls_measured_from_short_ones_are_not_estimated_as_short(tmp_path):
    """The project holds 20 short calls (the build steps' size); the run to estimate is 18
    calls reading 3,000 tokens each. The flat median said 18 x 1.7 s (under a minute); the
    calls take 18 x 15 s (about 4.5 minutes)."""
    from core.project import Project

    with Project.create(tmp_path / "p.evaldesk") as project:
        for i, (p, c, t) in enumerate(_calls([(120 + i, 20) for i in range(20)])):
            project.llm_cache_put(f"k{i}", model=LOCAL.model, api_base=None, request={},
                                  response={"content": "{}"}, prompt_tokens=p,
                                  completion_tokens=c, latency_s=t)
        latency = measured_latency(project, LOCAL.model)
        assert latency.speed is not None and "worked out from its size" in latency.source
        est = estimate(_plan(3000, 18, 60), LOCAL, latency=latency,
                       counter=lambda _m, _messages: 3000)
        true = 18 * TRUE.seconds(3003, 60)  # what the run would take on this computer
        # short calls of one size cannot tell reading from writing: within a factor of 1.5
        assert true / 1.5 <= est.seconds <= true * 1.5
        flat = estimate(_plan(3000, 18, 60), LOCAL, latency=Latency(latency.seconds, "flat"),
                        counter=lambda _m, _messages: 3000)
        assert flat.seconds < true / 5  # what the estimate said before
        assert flat.time_text() == "under a minute" and "minutes" in est.time_text()


def test_a_new_project_starts_from_what_this_computer_measured(tmp_path):
    from core.project import Project

    with Project.create(tmp_path / "a.evaldesk") as first:
        assert needs_calibration(first, LOCAL)
        for i, (p, c, t) in enumerate(_calls([(200, 40), (900, 60), (3000, 80)])):
            first.llm_cache_put(f"k{i}", model=LOCAL.model, api_base=None, request={},
                                response={"content": "{}"}, prompt_tokens=p,
                                completion_tokens=c, latency_s=t)
        measured_latency(first, LOCAL.model)  # an estimate there keeps them for this computer
    assert len(recalled_speed(LOCAL.model)) == 3
    with Project.create(tmp_path / "b.evaldesk") as second:
        assert not needs_calibration(second, LOCAL)
        latency = measured_latency(second, LOCAL.model)
        assert latency.source.startswith("measured on this computer: 3 earlier calls")
        assert latency.speed.seconds(3000, 80) == pytest.approx(
            fit_speed(_calls([(200, 40), (900, 60), (3000, 80)]), local=True).seconds(3000, 80))


async def test_one_probe_call_of_a_realistic_size_calibrates_this_computer(scripted_llm):
    llm = scripted_llm(lambda _m: "Spring: sow. Summer: water and weed. Autumn: harvest.",
                       name="probe")
    profile = llm.profile()
    assert recalled_speed(profile.model) == []
    latency = await probe_latency(profile)
    (request,) = llm.requests
    assert len(request.prompt.split()) > 200  # not a one-word probe
    assert request.params["max_tokens"] == 64
    (call,) = recalled_speed(profile.model)
    assert call[0] > 200 and call[1] > 0 and call[2] > 0
    assert latency.speed is not None and not needs_calibration(None, profile)
    assert math.isclose(latency.speed.seconds(call[0], call[1]), call[2], rel_tol=1e-6)
