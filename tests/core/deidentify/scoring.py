"""Recall and precision of the de-identifier on the labelled synthetic set (tests and benchmark).

A label is *found* when every letter and digit of it lies inside a replaced span (of any kind:
what matters for privacy is that the value did not go out); ``same_kind`` counts those whose
covering replacement has the label's kind too. A replacement is *right* when it overlaps a
label; otherwise it is a false hit (an ordinary word or number replaced).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from core.deidentify import Deidentified, Deidentifier

#: Recall groups, in the benchmark's order: (group, what it is in plain words).
GROUPS = [
    ("listed", "names the user gave (full, first name or surname alone, any case)"),
    ("titled", "names after a title, greeting, sign-off, label or degree"),
    ("EMAIL", "e-mail addresses"), ("PHONE", "phone numbers"), ("URL", "web addresses"),
    ("ID", "record and id numbers"), ("DATE", "dates"), ("AGE", "ages over 89"),
    ("ADDRESS", "street addresses"), ("CITY", "towns in an address"),
    ("POSTCODE", "postcodes"), ("IP", "IP addresses"), ("HANDLE", "@handles"),
    ("listed-word", "listed names in small letters that are also English words (kept on purpose)"),
    ("initial", "initials (not found)"),
    ("unlisted", "names not given and without a title (not found)"),
]
NAME_KINDS = {"STUDENT", "PERSON"}


def group_of(label: dict) -> str:
    return label.get("how", "listed") if label["kind"] in NAME_KINDS else label["kind"]


@dataclass
class Score:
    labels: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    found: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    same_kind: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    replaced: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    right: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    missed: list[tuple[str, str, str]] = field(default_factory=list)      # (text id, group, value)
    false_hits: list[tuple[str, str, str]] = field(default_factory=list)  # (text id, kind, value)

    def recall(self, group: str) -> float | None:
        return self.found[group] / self.labels[group] if self.labels[group] else None

    def precision(self, kind: str) -> float | None:
        return self.right[kind] / self.replaced[kind] if self.replaced[kind] else None

    def precision_all(self) -> float:
        total = sum(self.replaced.values())
        return sum(self.right.values()) / total if total else 1.0


def deidentify_corpus(corpus: dict, **options) -> list[tuple[dict, Deidentified, Deidentifier]]:
    """Each project's texts through one Deidentifier made from its lists (names after titles
    learnt from all its texts first, as the app does before sending)."""
    out = []
    for name, lists in corpus["projects"].items():
        texts = [t for t in corpus["texts"] if t["project"] == name]
        deid = Deidentifier(students=lists["students"], people=lists["people"], **options)
        deid.learn(t["text"] for t in texts)
        out.extend((t, deid.deidentify(t["text"]), deid) for t in texts)
    return out


_YEAR = re.compile(r"(?<!\d)(?:1[6-9]|20)\d{2}(?!\d)|(?<=[-/.])\d{2}$")


def score(results: list[tuple[dict, Deidentified, Deidentifier]], *,
          keep_year: bool = False) -> Score:
    """With ``keep_year``, a date is found when all but its year was replaced."""
    s = Score()
    for entry, result, _ in results:
        text = entry["text"]
        covered = [None] * len(text)
        for r in result.replacements:
            for i in range(r.start, r.end):
                covered[i] = r.kind
        for label in entry["labels"]:
            group = group_of(label)
            s.labels[group] += 1
            chars = [i for i in range(label["start"], label["end"]) if text[i].isalnum()]
            if keep_year and label["kind"] == "DATE":
                value = text[label["start"]:label["end"]]
                year = _YEAR.search(value)
                if year:
                    skip = range(label["start"] + year.start(), label["start"] + year.end())
                    chars = [i for i in chars if i not in skip]
            kinds = {covered[i] for i in chars}
            if None not in kinds:
                s.found[group] += 1
                want = label["kind"]
                if kinds == {want} or (want in NAME_KINDS and kinds <= NAME_KINDS):
                    s.same_kind[group] += 1
            else:
                s.missed.append((entry["id"], group, text[label["start"]:label["end"]]))
        for r in result.replacements:
            s.replaced[r.kind] += 1
            if any(label["start"] < r.end and r.start < label["end"]
                   for label in entry["labels"]):
                s.right[r.kind] += 1
            else:
                s.false_hits.append((entry["id"], r.kind, r.value))
    return s
