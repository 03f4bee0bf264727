"""The de-identifier measured on the labelled synthetic set (240 texts made from a fixed seed by
``corpus.py``): the recall the issue asks for, false hits kept in check, nothing lost on the
way back. ``tests/benchmarks/bench_deidentify.py`` prints the full table."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from core.deidentify import KINDS, kind_counts
from core.deidentify._text import fold
from tests.core.deidentify.corpus import build
from tests.core.deidentify.scoring import deidentify_corpus, score


@pytest.fixture(scope="module")
def corpus() -> dict:
    return build()


@pytest.fixture(scope="module")
def results(corpus):
    return deidentify_corpus(corpus)


@pytest.fixture(scope="module")
def measured(results):
    return score(results)


def test_the_set_is_big_varied_and_labelled(corpus):
    texts = corpus["texts"]
    assert len(texts) >= 200
    assert Counter(t["genre"] for t in texts) == {"essay": 70, "answer": 60, "note": 55,
                                                  "letter": 55}
    kinds = Counter(label["kind"] for t in texts for label in t["labels"])
    for kind in ("STUDENT", "PERSON", "EMAIL", "PHONE", "URL", "ID", "DATE", "AGE", "ADDRESS",
                 "CITY", "POSTCODE", "IP", "HANDLE"):
        assert kinds[kind] >= 10, kind
    for t in texts:
        for label in t["labels"]:
            value = t["text"][label["start"]:label["end"]]
            assert value and value == value.strip(), (t["id"], label)
    joined = "\n".join(t["text"] for t in texts)
    # the shapes the issue names are in it
    assert re.search(r"\w's\b", joined) and "\r\n" in joined
    assert re.search(r"<[^<>@\s]+@[^<>\s]+>", joined)
    assert re.search(r"https?://\S+/\. ", joined) or re.search(r"https?://\S+\. ", joined)
    assert re.search(r"(?:ext\.?|x|extension) ?\d+", joined)
    assert re.search(r"\bMay is\b", joined) and re.search(r"\bWill governments\b", joined)
    assert re.search(r"\bgrace\b", joined)


def test_recall_meets_the_issue(measured):
    assert measured.labels["listed"] >= 500
    assert measured.recall("listed") == 1.0, [m for m in measured.missed if m[1] == "listed"]
    for kind in ("EMAIL", "PHONE", "URL", "ID"):
        assert measured.recall(kind) == 1.0, [m for m in measured.missed if m[1] == kind]
    assert measured.labels["titled"] >= 100
    assert measured.recall("titled") >= 0.95
    assert measured.recall("DATE") >= 0.95


def test_other_patterns_and_precision_hold(measured):
    for kind in ("AGE", "ADDRESS", "CITY", "POSTCODE", "IP", "HANDLE"):
        assert measured.recall(kind) >= 0.9, (kind, [m for m in measured.missed if m[1] == kind])
    # false hits: only the documented trade-offs (a listed name that is also a word, a
    # character from a book after a title), never a number or a pattern
    assert measured.precision_all() >= 0.9
    for kind in ("EMAIL", "PHONE", "URL", "ID", "DATE", "AGE", "ADDRESS", "POSTCODE", "IP"):
        assert measured.precision(kind) == 1.0, [f for f in measured.false_hits if f[1] == kind]
    assert {value for _, _, value in measured.false_hits} <= {"May", "Will", "Grace", "Darcy",
                                                              "Macbeth"}


def test_no_listed_name_and_no_found_identifier_is_left(corpus, results):
    for entry, result, _ in results:
        lists = corpus["projects"][entry["project"]]
        sent = fold(result.text)
        for name in lists["students"] + lists["people"]:
            assert not re.search(rf"(?<!\w){re.escape(fold(name))}(?!\w)", sent), (
                entry["id"], name)
        for label in entry["labels"]:
            if label.get("how") in ("unlisted", "initial", "listed-word"):
                continue
            value = entry["text"][label["start"]:label["end"]]
            if label["kind"] in ("EMAIL", "PHONE", "URL", "ID", "IP"):
                assert value not in result.text, (entry["id"], value)


def test_every_text_comes_back_exactly(results):
    for entry, result, deid in results:
        text = entry["text"]
        assert deid.restore(result).text == text
        # from the de-identified text alone: the same, except that each name comes back in
        # the form it was listed or first met ("maria" -> "Maria Lopez")
        back = deid.restore(result.text)
        assert back.invented == ()
        expected, pos = [], 0
        for r in result.replacements:
            expected.append(text[pos:r.start])
            kind, number = r.placeholder[1:-1].split()
            expected.append(deid.mapping.value_of(kind, int(number)))
            pos = r.end
        expected.append(text[pos:])
        assert back.text == "".join(expected)
        if all(r.kind not in ("STUDENT", "PERSON", "DATE") for r in result.replacements):
            assert back.text == text


def test_the_same_value_gets_the_same_placeholder_across_texts(results):
    by_value: dict[tuple[str, str], set[str]] = {}
    for entry, result, _ in results:
        for r in result.replacements:
            if r.kind in ("EMAIL", "PHONE", "URL", "ID", "IP"):
                by_value.setdefault((entry["project"], r.value), set()).add(r.placeholder)
    assert by_value and all(len(p) == 1 for p in by_value.values())


def test_dates_can_keep_their_year(corpus):
    kept = score(deidentify_corpus(corpus, keep_year=True), keep_year=True)
    assert kept.recall("DATE") >= 0.95
    assert kept.precision("DATE") == 1.0


def test_counts_for_the_export_hold_kinds_and_numbers_only(results):
    counts = kind_counts(r for _, r, _ in results)
    assert list(counts) == [k for k in KINDS if k in counts]
    assert all(isinstance(n, int) and n > 0 for n in counts.values())
    assert sum(counts.values()) == sum(len(r.replacements) for _, r, _ in results)


def test_the_same_run_twice_gives_the_same_texts(corpus, results):
    again = deidentify_corpus(corpus)
    assert [r.text for _, r, _ in again] == [r.text for _, r, _ in results]
