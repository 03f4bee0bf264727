"""The estimate before a MAJ-Eval run: its call counts are the calls the run makes (scripted
model), what is kept in the project costs nothing, and the latency comes from the project's
recorded calls."""

from __future__ import annotations

import pytest

from core.majeval import DebateSettings
from core.majeval import session as st

from .majeval_support import SYNTHESIS, evaluation, kind, persona, speaker, turn

PANEL = [persona("Parents", "Dana Ray"), persona("Parents", "Eli Stone"),
         persona("Parents", "Fay Moss"), persona("Teachers", "Amy Lee"),
         persona("Teachers", "Bo Chan")]


def agreeing(messages):
    what = kind(messages)
    if what == "aggregate":
        return SYNTHESIS
    if what == "turn":
        return turn("I agree with the others.", 3)
    return evaluation(3)


def arguing(messages):
    """Nobody ever agrees: the debate runs to the turn limit, then final evaluations."""
    what = kind(messages)
    if what == "aggregate":
        return SYNTHESIS
    score = 1 if speaker(messages) in ("Dana Ray", "Amy Lee") else 5
    if what == "turn":
        return turn("I still disagree with the others.", score)
    return evaluation(score)


def _project(tmp_path, items, settings):
    from core.project import Project

    project = Project.create(tmp_path / "p.evaldesk")
    state = st.MajEvalChoices(task="Judge QA pairs.", item_list=items, settings=settings)
    st.choices.save_choices(project, state)
    st.personas.replace_personas(project, PANEL, "test")
    return project, state


@pytest.mark.parametrize(("replies", "bound"), [(agreeing, "calls"), (arguing, "calls_max")],
                         ids=["consensus after one turn each", "debate to the turn limit"])
async def test_the_estimated_calls_are_the_calls_the_run_makes(scripted, tmp_path, items,
                                                                 replies, bound):
    project, state = _project(tmp_path, items, DebateSettings(rounds=2))
    with project:
        llm, _ = scripted(replies)
        profile = llm.profile(max_retries=0)
        est = st.debates.estimate_run(project, state, profile)
        # 2 items x 2 groups: 5 first evaluations, 5 to 10 turns, 0 to 5 finals, 2 summaries
        assert (est.calls, est.calls_max) == (2 * (5 + 5 + 2), 2 * (5 + 10 + 5 + 2))
        assert est.prompt_tokens > 0 and est.completion_tokens > 0
        assert est.cost == 0 and "no cost" in est.summary()

        await st.debates.run_debates(project, state, lambda run_id: _gateway(llm, project, run_id),
                             model=profile)
        assert llm.calls == getattr(est, bound)

        again = st.debates.estimate_run(project, state, profile)
        assert (again.calls, again.calls_max, again.done_already) == (0, 0, 4)
        assert again.summary().startswith("No model calls")


def _gateway(llm, project, run_id):
    from core.llm import Gateway

    return Gateway(llm.profile(max_retries=0), cache=project, run_id=run_id)


async def test_the_time_uses_the_latency_the_project_recorded(scripted, tmp_path, items):
    project, state = _project(tmp_path, items, DebateSettings(no_debate=True))
    with project:
        llm, _ = scripted(agreeing)
        profile = llm.profile(max_retries=0, max_concurrency=2)
        first = st.debates.estimate_run(project, state, profile)
        assert "a guess" in first.latency_source
        for i in range(3):
            project.llm_cache_put(f"k{i}", model=profile.model, api_base=None, request={},
                                  response={"content": "{}"}, latency_s=[1.0, 2.0, 9.0][i])
        est = st.debates.estimate_run(project, state, profile)
        assert est.latency_s == 2.0 and "median of the last 3 calls" in est.latency_source
        # 10 first evaluations + 4 summaries, 2 at a time, 2 s each
        assert est.calls == 14 and est.seconds == 7 * 2.0
        assert any("2.0 s per call" in line for line in est.details())


def test_cost_comes_from_the_offline_price_list():
    from core.llm.estimate import StagePlan, estimate, price_per_token
    from core.settings import ModelProfile

    assert price_per_token("ollama/llama3.1") == (0.0, 0.0)
    assert price_per_token("evaldesk-local/gemma-3-270m") == (0.0, 0.0)
    assert price_per_token("nobody/knows-this-model") is None
    prompt, completion = price_per_token("gpt-4o-mini")
    assert 0 < prompt < completion

    plan = [StagePlan("ask", [[{"role": "user", "content": "word " * 1000}]] * 10,
                      reply_tokens=100)]
    est = estimate(plan, ModelProfile(name="m", model="gpt-4o-mini"))
    assert est.calls == 10 and est.prompt_tokens >= 10_000
    assert est.cost == pytest.approx(est.prompt_tokens * prompt + 1000 * completion)
    unknown = estimate(plan, ModelProfile(name="m", model="nobody/knows-this-model"))
    assert unknown.cost is None and "cost unknown" in unknown.summary()


def test_expected_reply_size_follows_the_schema():
    from core.llm.estimate import TEXT_FIELD_TOKENS, expected_reply_tokens
    from core.majeval import DEFAULT_DIMENSION, Scale
    from core.majeval.model import evaluation_schema

    one = expected_reply_tokens(evaluation_schema([DEFAULT_DIMENSION], Scale()))
    assert TEXT_FIELD_TOKENS < one < TEXT_FIELD_TOKENS + 40
    assert expected_reply_tokens(evaluation_schema([DEFAULT_DIMENSION], Scale()),
                                 max_tokens=20) == 20


def test_plain_words():
    from core.llm.estimate import time_words

    assert time_words(30) == "under a minute"
    assert time_words(65) == "1 minute"
    assert time_words(6 * 60) == "6 minutes"
    assert time_words(80 * 60) == "1 hour 20 minutes"
