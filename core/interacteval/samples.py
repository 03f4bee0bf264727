"""The rated samples shown in the think-aloud: read them from a sheet and suggest 4 per
dimension that span the score range (the paper showed its assessors four texts "corresponding
to different score ranges"). The user may change the suggestion.

The samples sheet is read by :func:`core.interacteval.inputs.read_samples`. A samples sheet has
the columns ``source`` (the article or input the text is about), ``text``
and ``score``, and optionally ``dimension`` (rows with an empty dimension serve every
dimension). A scored sheet with one score column per dimension (e.g. ``coherence``,
``fluency``) also works: pass ``score_col`` or let the dimension's name find its column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from core.interacteval.model import ScoredSample

__all__ = ["SAMPLE_COUNT", "suggest_samples"]

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
