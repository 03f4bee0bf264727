"""The estimate's counts: a run's figures are the sums of its stages' figures."""

from __future__ import annotations

from core.llm.estimate import Counts, StageEstimate, StagePlan, estimate
from core.settings import ModelProfile


def test_the_run_counts_are_the_sums_of_the_stage_counts():
    stages = [StageEstimate(1, 2, 30, 60, 5, 10, name="a"),
              StageEstimate(3, 3, 40, 40, 7, 7, name="b")]
    assert Counts.total(stages) == Counts(4, 5, 70, 100, 12, 17)

    plan = [StagePlan("one", [[{"role": "user", "content": "x"}]], reply_tokens=10),
            StagePlan("two", [[{"role": "user", "content": "y"}]] * 2,
                      maybe=[[{"role": "user", "content": "z"}]], reply_tokens=4)]
    est = estimate(plan, ModelProfile(name="p", model="ollama/tiny"),
                   counter=lambda _model, _messages: 6)
    assert [s.name for s in est.stages] == ["one", "two"]
    assert (est.calls, est.calls_max) == (3, 4)
    assert (est.completion_tokens, est.completion_tokens_max) == (18, 22)
    assert est.prompt_tokens == sum(s.prompt_tokens for s in est.stages)
