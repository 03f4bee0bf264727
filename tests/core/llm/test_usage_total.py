"""core.llm.Usage.total: the counters of several gateways (a run's repeats or conditions)
added up field by field, so an estimate is compared with everything the run used."""

from __future__ import annotations

import dataclasses

from core.llm import Usage


def test_every_counter_is_added_up():
    a = Usage(calls=3, cache_hits=1, failures=1, prompt_tokens=100, completion_tokens=20,
              cost=0.25, calls_without_cost=2, cached_prompt_tokens=40)
    b = Usage(calls=2, cache_hits=5, prompt_tokens=50, completion_tokens=5, cost=0.5)
    total = Usage.total([a, b])
    for field in dataclasses.fields(Usage):
        assert getattr(total, field.name) == getattr(a, field.name) + getattr(b, field.name)
    assert Usage.total([]) == Usage()
    assert (a.calls, b.calls) == (3, 2)  # the parts are left alone
