"""Suggesting 4 samples that span the score range, and reading a samples sheet."""

from __future__ import annotations

import pandas as pd

from core.interacteval import ScoredSample, read_samples, suggest_samples


def _s(score, source="a", dimension=""):
    return ScoredSample(source=source, text=f"text {score} {source}", score=score,
                        dimension=dimension)


def test_suggest_spans_the_range():
    pool = [_s(x) for x in (3.0, 1.0, 4.9, 2.0, 2.4, 3.6, 3.7, 5.0, 1.2)]
    chosen = suggest_samples(pool)
    # targets 1, 2.33, 3.67, 5 -> the closest scores
    assert [s.score for s in chosen] == [1.0, 2.4, 3.7, 5.0]


def test_suggest_prefers_other_sources_on_ties():
    pool = [_s(1.0, "d1"), _s(5.0, "d1"), _s(1.0, "d2"), _s(3.0, "d1"), _s(3.0, "d3"),
            _s(5.0, "d4")]
    chosen = suggest_samples(pool, k=3)
    assert [(s.score, s.source) for s in chosen] == [(1.0, "d1"), (3.0, "d3"), (5.0, "d4")]


def test_suggest_filters_by_dimension_and_keeps_shared_rows():
    pool = [_s(1, dimension="Fluency"), _s(2, dimension="Coherence"), _s(3), _s(4)]
    chosen = suggest_samples(pool, dimension="coherence")
    assert [s.score for s in chosen] == [2, 3, 4]  # fewer than 4: all of them, lowest first


def test_read_samples_sheet(tmp_path):
    path = tmp_path / "samples.xlsx"
    pd.DataFrame({
        "source": ["art 1", "art 2", "art 3"],
        "text": ["sum 1", "sum 2", "sum 3"],
        "score": ["4", "n/a", "2,5"],
    }).to_excel(path, index=False)
    got = read_samples(path)
    assert not got.errors
    assert [(s.source, s.text, s.score, s.row) for s in got.samples] == [
        ("art 1", "sum 1", 4.0, 2), ("art 3", "sum 3", 2.5, 4)]
    assert len(got.problems) == 1
    assert "row 3" in got.problems[0] and "score" in got.problems[0] and "n/a" in got.problems[0]


def test_read_samples_score_column_named_after_the_dimension(tmp_path):
    path = tmp_path / "summeval.csv"
    pd.DataFrame({"article": ["a", "b"], "system_output": ["s1", "s2"], "coherence": ["1.5", "5"],
                  "fluency": ["3", "3"]}).to_csv(path, index=False)
    got = read_samples(path, dimension="Coherence")
    assert not got.errors
    assert [(s.source, s.text, s.score) for s in got.samples] == [("a", "s1", 1.5), ("b", "s2", 5)]


def test_read_samples_without_text_column_is_an_error(tmp_path):
    path = tmp_path / "bad.xlsx"
    pd.DataFrame({"foo": ["x"], "score": ["3"]}).to_excel(path, index=False)
    got = read_samples(path)
    assert got.errors and "text" in got.errors[0]
