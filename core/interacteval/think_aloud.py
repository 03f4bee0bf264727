"""Stage 1: think-aloud attributes (paper section 3.3).

Models act as assessors: each reads the rubric and the rated samples and lists what to keep in
mind when rating the dimension, in general terms (:func:`think_aloud`; the paper used four
different LLMs). People's think-aloud notes are typed in (:func:`parse_notes`) or imported from
a text file with one attribute per line or a sheet with ``author`` and ``attribute`` columns
(:func:`read_notes`). Every attribute keeps its source.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from core.interacteval._common import ask, progress_or_silent
from core.interacteval.model import (
    Attribute,
    Dimension,
    JsonLLM,
    ScoredSample,
    StageError,
    StageFailure,
    ThinkAloudResult,
)
from core.runs import CancelToken, Progress

__all__ = ["NotesRead", "format_samples", "parse_notes", "read_notes", "think_aloud"]

STAGE = "Think-aloud"


class Considerations(BaseModel):
    """A model's think-aloud reply."""

    considerations: list[str] = Field(min_length=1)


def format_samples(samples: Sequence[ScoredSample]) -> str:
    """The rated samples as the think-aloud prompt shows them."""
    blocks = []
    for i, sample in enumerate(samples, 1):
        lines = [f"<Example {i}>"]
        if sample.source.strip():
            lines += ["The source (what the text is about):", sample.source.strip(), ""]
        lines += ["The text:", sample.text.strip(), "", f"Score: {_score_text(sample.score)}"]
        lines.append(f"</Example {i}>")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _score_text(score: float) -> str:
    return f"{score:g}" if abs(score - round(score)) < 1e-9 else f"{score:.2f}"


_BULLET = re.compile(r"^\s*(?:[-*•·–]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)](?=\s))\s*")


def _clean(text: str) -> str:
    return " ".join(_BULLET.sub("", str(text), count=1).split())


async def think_aloud(
    dimension: Dimension,
    samples: Sequence[ScoredSample],
    assessors: Mapping[str, JsonLLM],
    *,
    repeat: int = 0,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> ThinkAloudResult:
    """Ask each model in ``assessors`` (display name -> model) to think aloud about
    ``dimension``, concurrently. A model that fails is listed in ``failures`` and the others
    still count; the attributes come in the order of ``assessors``, each with its model's name
    as source."""
    progress = progress_or_silent(progress)
    progress.start(f"Think-aloud on {dimension.name}", total=len(assessors))
    values = {
        "dimension": dimension.name,
        "definition": dimension.definition.strip() or "(no definition given)",
        "samples": format_samples(samples) if samples else "(no rated texts were given)",
    }

    async def one(name: str, llm: JsonLLM) -> list[Attribute] | StageFailure:
        try:
            reply = await ask(llm, "think_aloud", Considerations, values, stage=STAGE,
                              dimension=dimension.name, cancel=cancel, repeat=repeat)
        except StageError as exc:
            failure = exc.__cause__
            progress.advance(1, f"{name} failed")
            return StageFailure(who=name, kind=getattr(failure, "kind", ""),
                                message=getattr(failure, "message", str(exc)))
        progress.advance(1, f"{name} done")
        texts = [_clean(t) for t in reply.considerations]
        return [Attribute(text=t, source=name, source_kind="model") for t in texts if t]

    outcomes = await asyncio.gather(*(one(name, llm) for name, llm in assessors.items()))
    result = ThinkAloudResult(dimension=dimension.name)
    for outcome in outcomes:
        if isinstance(outcome, StageFailure):
            result.failures.append(outcome)
        else:
            result.attributes.extend(outcome)
    return result


# ------------------------------------------------------------------------------ human notes
def parse_notes(text: str, author: str) -> list[Attribute]:
    """Typed or pasted notes: one attribute per non-empty line (bullets and numbers removed)."""
    author = author.strip() or "unnamed person"
    out = []
    for line in str(text).splitlines():
        cleaned = _clean(line)
        if cleaned:
            out.append(Attribute(text=cleaned, source=author, source_kind="person"))
    return out


@dataclass
class NotesRead:
    """Attributes read from a notes file; ``problems`` are plain sentences (file, row, column)
    about rows that were skipped; ``errors`` stop the file from being used."""

    attributes: list[Attribute] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


_LINE_FILES = {".txt", ".md", ".text", ""}


def read_notes(path: str | os.PathLike[str], *, author: str | None = None) -> NotesRead:
    """Human think-aloud notes from a file.

    * ``.txt`` / ``.md``: one attribute per line; the author is ``author`` or else the file
      name without its extension ("anna.txt" -> "anna").
    * ``.xlsx`` / ``.xls`` / ``.csv`` / ``.tsv``: a sheet with an ``attribute`` column (also
      "note", "consideration", "text") and optionally an ``author`` column (also "name",
      "person", "expert"); rows without an author get ``author`` or the file name.
    """
    path = Path(path)
    default_author = (author or path.stem).strip() or "unnamed person"
    if path.suffix.lower() in _LINE_FILES:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            return NotesRead(errors=[f'The notes file "{path}" cannot be read ({exc.strerror}).'])
        text = _decode(raw)
        attributes = parse_notes(text, default_author)
        result = NotesRead(attributes=attributes)
        if not attributes:
            result.errors.append(f'The notes file "{path.name}" holds no notes (it is empty).')
        return result
    return _read_notes_sheet(path, default_author)


def _decode(raw: bytes) -> str:
    for encoding in ("utf-8-sig", "utf-16"):
        try:
            if encoding == "utf-16" and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                continue
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    from charset_normalizer import from_bytes

    best = from_bytes(raw).best()
    return str(best) if best is not None else raw.decode("latin-1")


def _read_notes_sheet(path: Path, default_author: str) -> NotesRead:
    from core.tables import TableError, guess_mapping, map_columns, read_table

    try:
        read = read_table(path)
    except TableError as exc:
        return NotesRead(errors=[exc.message])
    roles = {
        "attribute": ["attributes", "note", "notes", "consideration", "text", "thought"],
        "author": ["name", "person", "expert", "who", "source"],
    }
    mapping = guess_mapping(list(read.frame.columns), roles)
    mapped = map_columns(read, mapping, required=["attribute"])
    result = NotesRead(errors=[i.message for i in mapped.errors],
                       problems=[i.message for i in mapped.warnings])
    if result.errors:
        return result
    frame = mapped.frame
    for row, attribute_text in zip(mapped.rows, frame["attribute"]):
        who = frame.at[row, "author"].strip() if "author" in frame else ""
        text = _clean(attribute_text)
        if not text:
            if who:
                result.problems.append(
                    f"{mapped.where(row, 'attribute')}: no attribute, so the row was skipped."
                )
            continue
        result.attributes.append(
            Attribute(text=text, source=who or default_author, source_kind="person")
        )
    if not result.attributes:
        result.errors.append(f"{read.describe()} holds no attributes.")
    return result
