"""Replace identifiers with placeholders, and put the real values back.

    deid = Deidentifier(table, students=["Maria Lopez", "Tom Berg"], people=["Dr Sarah Chen"])
    out = deid.deidentify("Dear Maria, Dr. Chen will call you on 555-201-3344.")
    out.text         # "Dear [STUDENT 1], Dr. [PERSON 1] will call you on [PHONE 1]."
    out.replacements # spans for highlighting: start, end, kind, placeholder (and the value)
    out.counts       # {"STUDENT": 1, "PERSON": 1, "PHONE": 1}
    back = deid.restore("[STUDENT 1] did well; see [STUDENT 9].")
    back.text        # "Maria Lopez did well; see [STUDENT 9]."
    back.invented    # ("[STUDENT 9]",): stands for nothing in the table, left as it is

One :class:`~core.deidentify.mapping.PlaceholderMap` per project: the same value gets the same
placeholder in every text; keeping the table (and the user's choices, with who and when) is the
caller's job. The result depends only on the table, the lists, the options and the texts in the
order they are given (:meth:`Deidentifier.learn` first makes it independent of that order for
names found after titles).
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.deidentify._text import UNSPACED, fold, tokens
from core.deidentify.kinds import KINDS, NAME_KINDS
from core.deidentify.mapping import PlaceholderMap, placeholder_pattern
from core.deidentify.names import (
    EXTRA,
    FOUND_FULL,
    FOUND_PART,
    LISTED_FULL,
    LISTED_PART,
    NameIndex,
    cue_names,
    ordinary_use,
    phrase_of,
    strip_titles,
)
from core.deidentify.patterns import PRIORITY, Hit, find_patterns

__all__ = ["Deidentified", "Deidentifier", "Replacement", "Restored", "RestoredData",
           "SkippedName", "kind_counts"]

_PLACEHOLDER = placeholder_pattern()
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SURNAME_FIRST = re.compile(r"^([^,]+),\s*([^,]+)$")
_TRAILING_BRACKETS = re.compile(r"(?:\s*\([^()]*\))+\s*$")
#: A listed name in a script written without spaces is found anywhere inside a run of text.
_UNSPACED = re.compile(f"[{UNSPACED}]")


@dataclass(frozen=True)
class Replacement:
    """One replaced span: ``start``/``end`` in the original text, ``out_start``/``out_end`` in
    the de-identified text; ``source`` says why: "listed" (a name from the user's lists),
    "title" (a name after a title, greeting, sign-off, label or degree, or remembered from
    one), "pattern" (an e-mail, date, number... shape) or "extra" (a value the user added)."""

    start: int
    end: int
    kind: str
    placeholder: str
    value: str
    out_start: int
    out_end: int
    source: str


@dataclass(frozen=True)
class Deidentified:
    text: str
    replacements: tuple[Replacement, ...]

    @property
    def counts(self) -> dict[str, int]:
        """How many values of each kind were replaced (never the values), in :data:`KINDS`
        order."""
        found = Counter(r.kind for r in self.replacements)
        return {kind: found[kind] for kind in KINDS if found[kind]}


@dataclass(frozen=True)
class Restored:
    text: str
    invented: tuple[str, ...]   # placeholders that stand for nothing in the table, left as is
    restored: int               # how many placeholders were put back


@dataclass(frozen=True)
class RestoredData:
    data: Any
    invented: tuple[str, ...]
    restored: int


@dataclass(frozen=True)
class SkippedName:
    value: str
    reason: str


class Deidentifier:
    """Finds identifiers and replaces them, with one project's table of placeholders.

    ``students`` and ``people``: names the user gave (the student or worker column, persona and
    rater names, a pasted names list); students get ``[STUDENT n]``, people ``[PERSON n]``,
    numbered in list order. ``extra``: (value, kind) pairs the user asked to replace (kind one
    of :data:`KINDS`, usually "OTHER"); ``keep``: values the user marked as false hits, never
    replaced. ``keep_year``: dates keep their year ("[DATE 1], 2021"). ``skip_kinds``: kinds
    not to look for (never the names the user gave).
    """

    def __init__(self, mapping: PlaceholderMap | None = None, *,
                 students: Iterable[str] = (), people: Iterable[str] = (),
                 extra: Iterable[tuple[str, str]] = (), keep: Iterable[str] = (),
                 keep_year: bool = False, skip_kinds: Iterable[str] = ()) -> None:
        self.mapping = mapping if mapping is not None else PlaceholderMap()
        self.keep_year = keep_year
        self.skip_kinds = frozenset(skip_kinds) - {"STUDENT", "OTHER"}
        unknown = self.skip_kinds - set(KINDS)
        if unknown:
            raise ValueError(f"unknown kinds of identifier: {sorted(unknown)}")
        self.skipped: list[SkippedName] = []
        self._names = NameIndex()
        self._extras = NameIndex()
        self._keep = {fold(v) for v in keep if fold(v)}
        self._unspaced: dict[str, tuple[str, str]] = {}     # folded name -> (key, display)
        for value in students:
            self._add_listed(value, "STUDENT")
        for value in people:
            self._add_listed(value, "PERSON")
        self._unspaced_pattern = re.compile("|".join(
            re.escape(v) for v in sorted(self._unspaced, key=len, reverse=True)),
            re.IGNORECASE) if self._unspaced else None
        for entry in self.mapping:          # names found after titles in earlier sessions
            key = next((k for k in entry.keys if k.startswith("name:")), None)
            if entry.origin == "found" and key is not None:
                self._add_found(entry.value, key)
        for value, kind in extra:
            self._add_extra(value, kind)

    # -- the lists -----------------------------------------------------------------------------
    def _add_listed(self, value: str, kind: str) -> None:
        raw = " ".join(str(value).split())
        # "Dr Emily Carter (paediatrician)", "Maria Lopez (Year 9)": the name without its title
        # and the words in brackets after it
        clean = strip_titles(_TRAILING_BRACKETS.sub("", raw))
        if not clean:
            if raw:
                self.skipped.append(SkippedName(raw, "it is only a title"))
            return
        letters = sum(c.isalpha() for c in clean)
        digits = sum(c.isdigit() for c in clean)
        if letters == 0 and digits < 5:
            self.skipped.append(SkippedName(raw, "a short number on its own would replace "
                                                 "scores and counts in the texts"))
            return
        if letters + digits < 2:
            self.skipped.append(SkippedName(raw, "a single character would replace ordinary "
                                                 "letters in the texts"))
            return
        variants: tuple[str, ...] = ()
        display = clean
        surname_first = _SURNAME_FIRST.match(clean)
        if surname_first and surname_first.group(2).strip():
            surname, given = surname_first.group(1).strip(), surname_first.group(2).strip()
            display = f"{given} {surname}"
            variants = (clean,)
        key = "name:" + fold(display)
        entry = self.mapping.entry_for(kind, key, display, origin="listed")
        self._names.add_name(display, key, entry.kind, entry.origin, full=LISTED_FULL,
                             part=LISTED_PART, variants=variants)
        if _UNSPACED.search(display):
            for spelling in (display, *variants):
                self._unspaced.setdefault(spelling.casefold(), (key, display))

    def _add_found(self, display: str, key: str) -> None:
        self._names.add_name(display, key, "PERSON", "found", full=FOUND_FULL, part=FOUND_PART,
                             parts_capital=True)

    def _add_extra(self, value: str, kind: str) -> None:
        clean = " ".join(str(value).split())
        if kind not in KINDS:
            raise ValueError(f"unknown kind of identifier: {kind!r}")
        if not clean or not phrase_of(clean):
            self.skipped.append(SkippedName(clean, "it has no letters or digits"))
            return
        key = ("name:" if kind in NAME_KINDS else f"{kind}:") + fold(clean)
        entry = self.mapping.get(key)
        self._extras.add(phrase_of(clean), EXTRA, key, entry.kind if entry else kind,
                         entry.value if entry else clean, "extra", needs_capital=False)

    def learn(self, texts: Iterable[str]) -> None:
        """Remember the names that titles and greetings point to in all ``texts`` before any is
        de-identified, so that "Chen" alone in the first text is found from "Dr. Sarah Chen" in
        the last."""
        for text in texts:
            self._found_names(text)

    # -- finding -------------------------------------------------------------------------------
    def _found_names(self, text: str) -> list[Hit]:
        """Register names that cues point to; the hits that the token scan cannot give (a
        title before a student's surname: "Mrs Lopez" is the mother, not the student)."""
        hits: list[Hit] = []
        for start, end, cue in cue_names(text):
            surface = text[start:end]
            phrase = phrase_of(surface)
            if not phrase or fold(surface) in self._keep:
                continue  # a false hit: not a name to learn (nor its surname alone)
            target = self._names.phrases.get(phrase)
            if target is not None and target.strength in (LISTED_FULL, FOUND_FULL):
                continue
            if target is not None and target.strength == LISTED_PART:
                if cue == "title" and target.kinds == {"STUDENT"}:
                    hits.append(Hit(start, end, "PERSON", "nametitled:" + " ".join(phrase),
                                    PRIORITY["name_listed"] + 10, "title", "found", surface))
                continue
            if target is not None and target.strength == FOUND_PART and len(phrase) == 1:
                continue
            self._add_found(surface, "name:" + fold(surface))
        return hits

    def _name_hits(self, index: NameIndex, text: str, toks: list[re.Match[str]],
                   source: str) -> list[Hit]:
        hits = []
        for start, end, target in index.scan(text, toks):
            if target.needs_capital and source != "extra" and ordinary_use(text, start, end):
                continue
            if target.key is not None:
                entry = self.mapping.get(target.key)
                kind = entry.kind if entry else target.kind
                key, value = target.key, target.display
            else:
                kind, key, value = target.kind, target.part_key, text[start:end]
            how = {"extra": "extra", "listed": "listed"}.get(target.origin, "title")
            priority = PRIORITY["extra"] if source == "extra" else (
                PRIORITY["name_listed"] if target.origin == "listed" else PRIORITY["name_found"])
            hits.append(Hit(start, end, kind, key, priority, how, target.origin, value))
        return hits

    def _candidates(self, text: str) -> list[Hit]:
        hits = [Hit(m.start(), m.end(), None, None, PRIORITY["placeholder"], "placeholder")
                for m in _PLACEHOLDER.finditer(text)]
        hits.extend(h for h in find_patterns(text, keep_year=self.keep_year)
                    if h.kind not in self.skip_kinds)
        toks = tokens(text)
        hits.extend(self._name_hits(self._extras, text, toks, "extra"))
        if "PERSON" not in self.skip_kinds:
            hits.extend(self._found_names(text))
        hits.extend(h for h in self._name_hits(self._names, text, toks, "names")
                    if h.origin == "listed" or h.kind not in self.skip_kinds)
        if self._unspaced_pattern is not None:
            for m in self._unspaced_pattern.finditer(text):
                key, display = self._unspaced[m.group().casefold()]
                entry = self.mapping.get(key)
                hits.append(Hit(m.start(), m.end(), entry.kind if entry else "PERSON", key,
                                PRIORITY["name_listed"], "listed", "listed", display))
        return hits

    def deidentify(self, text: str) -> Deidentified:
        hits = self._candidates(text)
        strings = _json_strings(text)
        if strings is not None:
            starts = [s for s, _ in strings]

            def inside(hit: Hit) -> bool:
                i = bisect.bisect_right(starts, hit.start) - 1
                return i >= 0 and hit.end <= strings[i][1]
            hits = [h for h in hits if h.kind is None or inside(h)]
        if self._keep:
            hits = [h for h in hits if h.kind is None or h.origin == "extra"
                    or fold(text[h.start:h.end]) not in self._keep]
        chosen = _resolve(hits)
        out: list[str] = []
        replacements: list[Replacement] = []
        pos = 0
        length = 0
        for hit in chosen:
            if hit.kind is None:
                continue
            value = text[hit.start:hit.end]
            entry = self.mapping.entry_for(hit.kind, hit.key or "", hit.value or value,
                                           origin=hit.origin)
            piece = text[pos:hit.start]
            out.append(piece)
            length += len(piece)
            placeholder = entry.placeholder
            out.append(placeholder)
            source = hit.source if hit.source in ("listed", "title", "extra") else "pattern"
            replacements.append(Replacement(hit.start, hit.end, entry.kind, placeholder, value,
                                            length, length + len(placeholder), source))
            length += len(placeholder)
            pos = hit.end
        out.append(text[pos:])
        return Deidentified("".join(out), tuple(replacements))

    # -- putting back --------------------------------------------------------------------------
    def restore(self, text: str | Deidentified, *,
                sent: Sequence[Deidentified] | None = None) -> Restored:
        """The real values in place of the placeholders.

        For a model's reply (a string), each placeholder gets the value its table entry shows
        (a listed name as listed: "Maria" and "MARIA LOPEZ" both come back as "Maria Lopez");
        a placeholder the table does not have is left as it is and listed in ``invented``.
        For a :class:`Deidentified` made here, the text exactly as it was.

        ``sent``: the de-identified texts the reply answers (what the model was shown). Then
        only the placeholders made in them are put back, each as it was written there when it
        stood for one spelling only ("Maria" comes back as "Maria" when the texts said
        "Maria"); a reply that is a piece of one of them word for word (a quoted sentence)
        comes back exactly as that piece was written; a placeholder that was already in the
        texts as written stays as it is; any other placeholder, even one the table has, was
        not shown to the model: it is left as it is and listed in ``invented``, never guessed.
        """
        if isinstance(text, Deidentified):
            parts: list[str] = []
            pos = 0
            for r in text.replacements:
                parts.append(text.text[pos:r.out_start])
                parts.append(r.value)
                pos = r.out_end
            parts.append(text.text[pos:])
            return Restored("".join(parts), (), len(text.replacements))
        shown = _Shown(self, sent) if sent is not None else None
        if shown is not None:
            quoted = shown.quote(text)
            if quoted is not None:
                return quoted
        strings = _json_strings(text)
        starts = [s for s, _ in strings] if strings else []
        invented: list[str] = []
        count = 0

        def put_back(m: re.Match[str]) -> str:
            nonlocal count
            value = None
            if m.group(2) is not None:
                key = (m.group(1).upper(), int(m.group(2)))
                if shown is None:
                    value = self.mapping.value_of(*key)
                elif key in shown.forms:
                    forms = shown.forms[key]
                    value = forms[0] if len(forms) == 1 else self.mapping.value_of(*key)
            if value is None:
                if shown is not None and m.group() in shown.literal:
                    return m.group()        # the user's own text held it: not the model's
                if m.group() not in invented:
                    invented.append(m.group())
                return m.group()
            count += 1
            if strings is not None:
                i = bisect.bisect_right(starts, m.start()) - 1
                if i >= 0 and m.end() <= strings[i][1]:
                    return json.dumps(value, ensure_ascii=False)[1:-1]
            return value

        restored = _PLACEHOLDER.sub(put_back, text)
        return Restored(restored, tuple(invented), count)

    def restore_data(self, data: Any, *,
                     sent: Sequence[Deidentified] | None = None) -> RestoredData:
        """:meth:`restore` on every string inside parsed JSON (dicts, lists, keys too)."""
        invented: list[str] = []
        count = 0
        shown = list(sent) if sent is not None else None

        def walk(value: Any) -> Any:
            nonlocal count
            if isinstance(value, str):
                result = self.restore(value, sent=shown)
                count += result.restored
                invented.extend(p for p in result.invented if p not in invented)
                return result.text
            if isinstance(value, Mapping):
                return {walk(k): walk(v) for k, v in value.items()}
            if isinstance(value, list | tuple):
                return type(value)(walk(v) for v in value)
            return value

        return RestoredData(walk(data), tuple(invented), count)


class _Shown:
    """What a model was shown: the placeholders made in the texts sent, with the spellings
    each replaced there, and the placeholders the texts held as written."""

    def __init__(self, deid: Deidentifier, sent: Sequence[Deidentified]) -> None:
        self._deid = deid
        self.sent = list(sent)
        self.forms: dict[tuple[str, int], list[str]] = {}
        self.literal: set[str] = set()
        self._originals: dict[int, str] = {}
        for i, d in enumerate(self.sent):
            for r in d.replacements:
                m = _PLACEHOLDER.fullmatch(r.placeholder)
                if m is None or m.group(2) is None:
                    continue
                forms = self.forms.setdefault((m.group(1).upper(), int(m.group(2))), [])
                if r.value not in forms:
                    forms.append(r.value)
            original = self._original(i)
            self.literal.update(m.group() for m in _PLACEHOLDER.finditer(original))

    def _original(self, i: int) -> str:
        if i not in self._originals:
            self._originals[i] = self._deid.restore(self.sent[i]).text
        return self._originals[i]

    def quote(self, text: str) -> Restored | None:
        """``text`` put back as written when it is a piece of a text sent, word for word, that
        holds a placeholder made there (and cuts through none)."""
        if len(text) < 3 or _PLACEHOLDER.search(text) is None:
            return None
        for i, d in enumerate(self.sent):
            at = d.text.find(text)
            while at >= 0:
                end = at + len(text)
                inside = [r for r in d.replacements if r.out_start >= at and r.out_end <= end]
                cut = any(r.out_start < end and r.out_end > at and r not in inside
                          for r in d.replacements)
                if inside and not cut:
                    start_in = at + _shift(d.replacements, at)
                    end_in = end + _shift(d.replacements, end)
                    return Restored(self._original(i)[start_in:end_in], (), len(inside))
                at = d.text.find(text, at + 1)
        return None


def _shift(replacements: Sequence[Replacement], out_pos: int) -> int:
    """How far ``out_pos`` in a de-identified text lies from the same place in the original:
    the length each replacement before it changed."""
    return sum((r.end - r.start) - (r.out_end - r.out_start) for r in replacements
               if r.out_end <= out_pos)


def kind_counts(results: Iterable[Deidentified]) -> dict[str, int]:
    """How many values of each kind were replaced in all ``results`` (never the values), in
    :data:`KINDS` order: the rows of an export's de-identification sheet."""
    total: Counter[str] = Counter()
    for result in results:
        total.update(r.kind for r in result.replacements)
    return {kind: total[kind] for kind in KINDS if total[kind]}


def _resolve(hits: list[Hit]) -> list[Hit]:
    """The candidates that do not overlap, in text order: a candidate inside a longer one is
    left out ("117 496 0906" inside "+44(0)117 496 0906", "Lopez" inside "12 Lopez Street");
    then the stronger first, then the longer, then the earlier."""
    outer: list[Hit] = []
    reach_start, reach_end = -1, -1
    for hit in sorted(hits, key=lambda h: (h.start, -h.end)):
        if hit.kind is not None and hit.end <= reach_end and (
                (reach_start, reach_end) != (hit.start, hit.end)):
            continue
        outer.append(hit)
        if hit.kind is not None and hit.end > reach_end:
            reach_start, reach_end = hit.start, hit.end
    ordered = sorted(outer, key=lambda h: (-h.priority, h.start - h.end, h.start))
    starts: list[int] = []
    chosen: list[Hit] = []
    for hit in ordered:
        if hit.end <= hit.start:
            continue
        i = bisect.bisect_right(starts, hit.start)
        if i > 0 and chosen[i - 1].end > hit.start:
            continue
        if i < len(chosen) and chosen[i].start < hit.end:
            continue
        starts.insert(i, hit.start)
        chosen.insert(i, hit)
    return chosen


def _json_strings(text: str) -> list[tuple[int, int]] | None:
    """The insides of the string literals when the whole text is one JSON document."""
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return None
    try:
        json.loads(text)
    except ValueError:
        return None
    return [(m.start() + 1, m.end() - 1) for m in _JSON_STRING.finditer(text)]
