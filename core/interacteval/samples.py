"""The rated samples shown in the think-aloud: read them from a sheet and suggest 4 per
dimension that span the score range (the paper showed its assessors four texts "corresponding
to different score ranges"). The user may change the suggestion.

A samples sheet has the columns ``source`` (the article or input the text is about), ``text``
and ``score``, and optionally ``dimension`` (rows with an empty dimension serve every
dimension). A scored sheet with one score column per dimension (e.g. ``coherence``,
``fluency``) also works: pass ``score_col`` or let the dimension's name find its column.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.interacteval.model import ScoredSample

__all__ = ["SAMPLE_COUNT", "SamplesRead", "read_samples", "suggest_samples"]

#: How many samples the paper showed per dimension.
SAMPLE_COUNT = 4


def _for_dimension(sample: ScoredSample, dimension: str | None) -> bool:
    if not dimension or not sample.dimension.strip():
        return True
    return sample.dimension.strip().casefold() == dimension.strip().casefold()


def suggest_samples(
    samples: Sequence[ScoredSample], *, dimension: str | None = None, k: int = SAMPLE_COUNT
) -> list[ScoredSample]:
    """``k`` samples of ``dimension`` whose scores spread from the lowest to the highest.

    The targets are ``k`` evenly spaced scores from the minimum to the maximum; each target
    takes the closest sample not yet chosen (ties: a sample about a source not chosen yet, then
    the earlier row). Returned lowest score first. With ``k`` samples or fewer, all of them."""
    if k < 1:
        raise ValueError("k must be at least 1")
    pool = [s for s in samples if _for_dimension(s, dimension) and math.isfinite(s.score)]
    if len(pool) <= k:
        return sorted(pool, key=lambda s: s.score)
    low = min(s.score for s in pool)
    high = max(s.score for s in pool)
    targets = [low + (high - low) * i / (k - 1) for i in range(k)] if k > 1 else [high]
    chosen: list[int] = []
    sources: set[str] = set()
    for target in targets:
        best = min(
            (i for i in range(len(pool)) if i not in chosen),
            key=lambda i: (abs(pool[i].score - target), pool[i].source in sources, i),
        )
        chosen.append(best)
        sources.add(pool[best].source)
    return sorted((pool[i] for i in chosen), key=lambda s: s.score)


@dataclass
class SamplesRead:
    """Samples read from a sheet; ``errors`` stop its use, ``problems`` are skipped rows."""

    samples: list[ScoredSample] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def read_samples(
    path: str | os.PathLike[str],
    *,
    sheet: str | None = None,
    text_col: str | None = None,
    source_col: str | None = None,
    score_col: str | None = None,
    dimension_col: str | None = None,
    dimension: str | None = None,
) -> SamplesRead:
    """Read rated samples. Columns not given are found by name: ``text`` (also "summary",
    "answer", "essay", "output"), ``source`` ("article", "document", "input", "prompt"),
    ``score`` (or a column named like ``dimension``), ``dimension`` (optional). A row whose
    score is not a number is skipped and named in ``problems``."""
    from core.tables import TableError, cell_number, guess_mapping, map_columns, read_table

    try:
        read = read_table(Path(path), sheet)
    except TableError as exc:
        return SamplesRead(errors=[exc.message])
    columns = list(read.frame.columns)
    score_names = ["scores", "rating", "human score", "grade"]
    if dimension:
        score_names.insert(0, dimension)
    guessed = guess_mapping(columns, {
        "text": ["summary", "answer", "essay", "output", "system output", "response"],
        "source": ["article", "document", "input", "prompt", "source text"],
        "score": score_names,
        "dimension": ["criterion", "aspect"],
    })
    mapping = {
        "text": text_col or guessed["text"],
        "source": source_col or guessed["source"],
        "score": score_col or guessed["score"],
        "dimension": dimension_col or guessed["dimension"],
    }
    mapped = map_columns(read, mapping, required=["text", "score"])
    result = SamplesRead(errors=[i.message for i in mapped.errors],
                         problems=[i.message for i in mapped.warnings])
    if result.errors:
        return result
    frame = mapped.frame
    for row in mapped.rows:
        text = frame.at[row, "text"]
        if not text.strip():
            continue
        raw = frame.at[row, "score"].strip()
        score = cell_number(raw)
        if score is None:
            what = "has no score" if not raw else f"has a score that is not a number (“{raw}”)"
            result.problems.append(f"{mapped.where(row, 'score')}: the sample {what}; skipped.")
            continue
        result.samples.append(ScoredSample(
            source=frame.at[row, "source"] if "source" in frame else "",
            text=text,
            score=score,
            dimension=(frame.at[row, "dimension"].strip() if "dimension" in frame else ""),
            row=row,
        ))
    if not result.samples:
        result.errors.append(f"{read.describe()} holds no sample with a text and a score.")
    return result
