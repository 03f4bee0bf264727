"""core.stats.judge_spread: does a judge tell the texts apart? Counts by hand, the length
correlation against scipy, and the cases that must not be flagged."""

from __future__ import annotations

import math

import pytest
from scipy import stats as sps

from core import stats


def test_counts_and_the_length_correlation_against_scipy():
    scores = [3.0] * 6 + [1.0, 2.0, 4.0, 5.0, None]
    patterns = ["YNY"] * 5 + ["YYN", "NNN", "NYN", "YYY", "YYY", None]
    lengths = [10, 30, 20, 50, 40, 60, 15, 25, 45, 70, 33]
    spread = stats.judge_spread(scores, patterns=patterns, lengths=lengths, n_boot=200)
    assert spread.n == 10  # the unit without a score is left out
    assert (spread.top_score, spread.top_score_count) == (3.0, 6)
    assert (spread.top_pattern, spread.top_pattern_count) == ("YNY", 5)
    assert spread.same_score and not spread.same_pattern  # 6 of 10 > half; 5 of 10 is not
    assert spread.flagged
    expected = sps.spearmanr(scores[:10], lengths[:10])
    assert spread.length.value == pytest.approx(expected.statistic, abs=1e-12)
    assert spread.length.p_value == pytest.approx(expected.pvalue, abs=1e-12)
    assert "6 of 10 texts got the same score (3)" in spread.sentence
    rows = spread.rows("Coherence: spread")
    assert [r["statistic"] for r in rows] == [
        "share with the most common answers", "share with the most common score",
        f"Spearman rho with {stats.LENGTH_NAME}"]
    assert rows[1]["value"] == pytest.approx(0.6) and "FLAGGED" in rows[1]["note"]
    assert set(rows[0]) == set(stats.ROW_COLUMNS)


def test_a_varied_judge_is_not_flagged_and_few_units_are_not_judged():
    varied = stats.judge_spread([1, 2, 3, 4, 5, 1, 2, 3], patterns=list("abcdefgh"),
                                lengths=[5, 1, 7, 2, 8, 3, 6, 4])
    assert not varied.flagged and varied.sentence == ""
    few = stats.judge_spread([3.0, 3.0, 3.0])  # three texts: too few to say "most"
    assert not few.flagged


def test_scores_that_follow_length_are_flagged_unless_they_beat_length_with_people():
    lengths = list(range(10, 130, 10))  # 12 texts
    scores = [1 + k // 3 for k in range(12)]  # a step function of length
    alone = stats.judge_spread(scores, lengths=lengths, n_boot=0)
    assert alone.follows_length and "follow the texts' length closely" in alone.sentence
    # people who score the way the judge does (length or not): it beats length, not flagged
    people = [float(s) for s in scores]
    noisy_length = [lengths[k] + (30 if k % 2 else -30) for k in range(12)]
    better = stats.judge_spread(scores, lengths=noisy_length, human=people, n_boot=0)
    judge_h = sps.spearmanr(scores, people).statistic
    length_h = sps.spearmanr(noisy_length, people).statistic
    assert better.versus_length == pytest.approx((judge_h, length_h))
    assert better.length.value >= stats.LENGTH_FLAG  # it does follow length closely ...
    assert not better.follows_length  # ... but agrees with people better than length does
    # people who score length itself: the judge adds nothing beyond it, flagged
    same = stats.judge_spread(scores, lengths=lengths, human=lengths, n_boot=0)
    assert same.follows_length
    assert "no better than the length alone does" in same.sentence


def test_questions_answered_alike_for_every_text():
    spread = stats.judge_spread(
        [1, 2, 3, 4, 5], questions={"question 1 (A?)": [True] * 5,
                                    "question 2 (B?)": [True, False, True, None, False],
                                    "question 3 (C?)": [False, False, None, False, False]})
    assert [(q.label, q.answer, q.n) for q in spread.constant_questions] == [
        ("question 1 (A?)", "Yes", 5), ("question 3 (C?)", "No", 4)]
    assert "question 1 (A?) was answered Yes for all 5 texts" in spread.question_sentence
    assert not spread.flagged  # a question alike is said, apart from the judge's warning


def test_word_count_and_the_length_sentence():
    assert stats.word_count("  two\nwords ") == 2.0
    assert math.isnan(stats.word_count(None))
    assert "may add nothing beyond" in stats.length_sentence(0.40, 0.45)
    assert stats.length_sentence(0.60, 0.20) == "Text length alone: ρ = 0.20."
    assert stats.length_sentence(0.60, None) == ""
