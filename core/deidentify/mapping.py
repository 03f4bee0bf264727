"""One project's table of placeholders: which value ``[STUDENT 3]`` stands for.

    table = PlaceholderMap()                     # or PlaceholderMap.from_json(saved)
    entry = table.entry_for("EMAIL", "email:maria@x.org", "maria@x.org", origin="pattern")
    entry.placeholder                            # "[EMAIL 1]"
    table.value_of("EMAIL", 1)                   # "maria@x.org"
    saved = table.to_json()                      # a JSON-able dict with a format version

Each entry has a kind, a number (counted per kind from 1, never reused), the value shown when
the placeholder is put back, and the keys it was found under (the normalised forms: "maria
lopez" and "lopez , maria" both lead to the same entry). Keeping the table is the caller's job
(it holds the real values: keep it on this computer, with the project).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from core.deidentify.kinds import KINDS

__all__ = ["FORMAT", "VERSION", "Entry", "PlaceholderMap", "placeholder_pattern"]

FORMAT = "evaldesk.deidentify.mapping"
VERSION = 1

#: Where an entry came from: a list the user gave, a name found after a title or greeting, a
#: pattern (e-mail, date...), a value the user asked to replace.
ORIGINS = ("listed", "found", "pattern", "extra")


def placeholder_pattern() -> re.Pattern[str]:
    """A placeholder as it may come back from a model: any kind of ours, upper or lower case,
    spaces inside the brackets tolerated, the number optional (``[STUDENT]`` is matched so that
    it can be reported as standing for nothing)."""
    kinds = "|".join(KINDS)
    return re.compile(rf"\[[ \t]*({kinds})(?:[ \t]+(\d{{1,6}}))?[ \t]*\]", re.IGNORECASE)


@dataclass
class Entry:
    kind: str
    number: int
    value: str
    origin: str
    keys: list[str] = field(default_factory=list)

    @property
    def placeholder(self) -> str:
        return f"[{self.kind} {self.number}]"


class PlaceholderMap:
    """Value <-> placeholder for one project; numbers are given in the order values are met."""

    def __init__(self) -> None:
        self._by_key: dict[str, Entry] = {}
        self._by_number: dict[tuple[str, int], Entry] = {}
        self._next: dict[str, int] = {}
        self._entries: list[Entry] = []

    # -- reading -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries)

    def get(self, key: str) -> Entry | None:
        return self._by_key.get(key)

    def value_of(self, kind: str, number: int) -> str | None:
        """The value ``[kind number]`` stands for, or None if the table has no such entry."""
        entry = self._by_number.get((kind.upper(), number))
        return entry.value if entry is not None else None

    def entries_of(self, kind: str) -> list[Entry]:
        return [e for e in self._entries if e.kind == kind]

    # -- writing -----------------------------------------------------------------------------
    def entry_for(self, kind: str, key: str, value: str, *, origin: str) -> Entry:
        """The entry found under ``key``, made (with the next number of ``kind``) if new."""
        entry = self._by_key.get(key)
        if entry is not None:
            return entry
        if kind not in KINDS:
            raise ValueError(f"unknown kind of identifier: {kind!r}")
        if origin not in ORIGINS:
            raise ValueError(f"unknown origin: {origin!r}")
        number = self._next.get(kind, 1)
        entry = Entry(kind=kind, number=number, value=value, origin=origin, keys=[key])
        self._add(entry)
        return entry

    def add_key(self, entry: Entry, key: str) -> None:
        """Let ``key`` lead to ``entry`` too (a spelling of the same value)."""
        if key not in self._by_key:
            self._by_key[key] = entry
            entry.keys.append(key)

    def _add(self, entry: Entry) -> None:
        self._entries.append(entry)
        self._by_number[(entry.kind, entry.number)] = entry
        self._next[entry.kind] = max(self._next.get(entry.kind, 1), entry.number + 1)
        for key in entry.keys:
            self._by_key.setdefault(key, entry)

    # -- the saved form ----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "entries": [
                {"kind": e.kind, "number": e.number, "value": e.value, "origin": e.origin,
                 "keys": list(e.keys)}
                for e in self._entries
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlaceholderMap:
        """The table saved by :meth:`to_json`; a clear ValueError for anything else."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("This is not a saved table of placeholders from EvalDesk.")
        version = data.get("version")
        if version != VERSION:
            raise ValueError(
                f"This table of placeholders was saved by a newer EvalDesk (format version "
                f"{version}; this one reads version {VERSION}). Update EvalDesk to open it.")
        table = cls()
        for n, raw in enumerate(data.get("entries", []), start=1):
            try:
                entry = Entry(kind=str(raw["kind"]), number=int(raw["number"]),
                              value=str(raw["value"]), origin=str(raw["origin"]),
                              keys=[str(k) for k in raw["keys"]])
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"Entry {n} of the table of placeholders is damaged ({exc}).")
            if entry.kind not in KINDS or entry.origin not in ORIGINS or entry.number < 1:
                raise ValueError(f"Entry {n} of the table of placeholders is damaged "
                                 f"(kind {entry.kind!r}, number {entry.number}).")
            if (entry.kind, entry.number) in table._by_number:
                raise ValueError(f"Entry {n} of the table of placeholders repeats "
                                 f"{entry.placeholder}.")
            table._add(entry)
        return table
