"""core.machine: cores and memory, and the built-in model's calls at once chosen from them."""

from __future__ import annotations

import os
import sys

import pytest

from core import machine
from core.machine import GB, default_local_concurrency
from core.settings import bundled_profile


def test_cores_and_memory_are_read():
    assert machine.cpu_cores() >= 1
    total, free = machine.total_memory(), machine.available_memory()
    assert total is not None and total > 256 * 1024**2
    assert free is not None and 0 < free <= total


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/meminfo is Linux's")
def test_memory_agrees_with_the_system():
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert abs(machine.total_memory() - pages) < 0.02 * pages


@pytest.mark.parametrize(("cores", "memory", "expected"), [
    (1, 16 * GB, 1),    # one core: nothing to share a pass over the weights with
    (2, 2 * GB, 2),     # little memory
    (2, 16 * GB, 4),    # the 2-core measurement: 4 at once ~1.9x one
    (4, 8 * GB, 4),
    (8, 16 * GB, 8),
    (16, 4 * GB, 4),    # many cores, modest memory
    (4, None, 4),       # memory unknown
])
def test_calls_at_once_follow_cores_and_memory(cores, memory, expected):
    assert default_local_concurrency(cores, memory) == expected


def test_the_bundled_profile_takes_several_calls_at_once_on_this_computer():
    assert bundled_profile().max_concurrency == default_local_concurrency()
    if machine.cpu_cores() > 1:
        assert bundled_profile().max_concurrency > 1
