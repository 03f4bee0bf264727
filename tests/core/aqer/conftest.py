"""Fixtures of AQER's tests (the encoder and data themselves are in ``aqer_support``)."""

from __future__ import annotations

import pytest

from tests.core.aqer.aqer_support import HashedBagOfWords


@pytest.fixture
def encoder() -> HashedBagOfWords:
    return HashedBagOfWords()
