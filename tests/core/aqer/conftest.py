"""Fixtures of AQER's tests (the encoder and data themselves are in ``aqer_support``)."""

from __future__ import annotations

import pytest

from tests.core.aqer.aqer_support import HashedBagOfWords


@pytest.fixture
def encoder() -> HashedBagOfWords:
    return HashedBagOfWords()



@pytest.fixture
def count_calls(monkeypatch):
    """``count_calls(module, name)``: the list of every first argument ``module.name`` is called
    with from then on (the tests that reading a sheet makes no Python call per cell count
    them)."""

    def count(module, name: str) -> list:
        calls: list = []
        real = getattr(module, name)

        def counting(value):
            calls.append(value)
            return real(value)

        monkeypatch.setattr(module, name, counting)
        return calls

    return count
