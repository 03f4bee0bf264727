"""``core.stats.repeat_stability``: the spread of each unit's scores over repeat runs and
Krippendorff's alpha (interval) with the repeats as raters, checked against a direct
``krippendorff_alpha`` computation and numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.stats import STABILITY_THRESHOLD, krippendorff_alpha, repeat_stability


def test_alpha_is_krippendorff_with_the_repeats_as_raters():
    table = {"a": [1, 2, 1], "b": [4, 4, 5], "c": [3, None, 3], "d": [5, 5, 5], "e": [2, 1, 2]}
    got = repeat_stability(table)
    direct = krippendorff_alpha([[row[k] for row in table.values()] for k in range(3)],
                                "interval")
    assert got.alpha.level == "interval"
    assert got.alpha.value == pytest.approx(direct.value)
    assert got.alpha.n_units == 5 and got.n_repeats == 3
    spread = {u.unit: u for u in got.units}
    assert spread["a"].sd == pytest.approx(np.std([1, 2, 1], ddof=1))
    assert spread["a"].range == 1 and spread["a"].mean == pytest.approx(4 / 3)
    assert spread["c"].n == 2 and spread["c"].sd == 0 and spread["c"].scores[1] is None
    assert spread["d"].sd == 0


def test_disagreeing_repeats_are_flagged_in_plain_words():
    rng = np.random.default_rng(3)
    table = [list(rng.integers(1, 6, size=3)) for _ in range(20)]
    got = repeat_stability(table, who="the single judge")
    assert got.alpha.value < STABILITY_THRESHOLD and got.flagged
    assert got.sentence.startswith("The single judge gives different scores when asked again "
                                   f"(agreement between repeats {got.alpha.value:.2f}")
    assert "treat single scores with care" in got.sentence


def test_steady_repeats_are_not_flagged():
    table = {f"u{k}": [k % 5 + 1, k % 5 + 1, k % 5 + 1 + (k == 3)] for k in range(10)}
    got = repeat_stability(table)
    assert got.alpha.value > STABILITY_THRESHOLD and not got.flagged
    assert "much the same scores" in got.sentence


def test_a_failed_repeat_is_missing_never_a_score():
    got = repeat_stability({"a": [3, float("nan")], "b": [2, "n/a"], "c": [1, 1]})
    assert [u.n for u in got.units] == [1, 1, 2]
    assert got.units[0].sd is None and got.units[0].range is None
    assert got.alpha.value is None and got.alpha.reason  # one pairable unit, no variation
    assert "cannot be said" in got.sentence and not got.flagged


def test_one_repeat_says_to_repeat():
    got = repeat_stability({"a": [3], "b": [4]})
    assert got.n_repeats == 1 and got.alpha.value is None and not got.flagged
    assert "asked once" in got.sentence
    rows = got.rows()
    assert rows[0] == {"unit": "a", "repeat 0": 3.0, "repeats scored": 1, "mean": 3.0,
                       "sd": None, "range": None}
    assert not math.isnan(rows[1]["mean"])


def test_the_sentence_names_the_units():
    got = repeat_stability({"a": [1, 1], "b": [3, 3], "c": [5, 4]}, who="the checklist judge",
                           unit_name="text")
    assert got.sentence.startswith("The checklist judge gives much the same scores when asked "
                                   "again (agreement between repeats")
    assert "over 3 texts, 2 repeats" in got.sentence
