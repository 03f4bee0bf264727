"""InteractEval's repeat runs: the same checklist scoring made N times, to see whether the judge
gives the same scores when asked again.

Repeat 0 is the ordinary scoring run (earlier projects' results are repeat 0, unchanged); repeat
k > 0 is the scoring run with ``ScoringSettings.repeat`` k, kept as its own project run, whose
every call uses repeat index k (part of the cache key): repeats are real calls, and running a
finished repeat again makes none.

    entries = stability(runs)           # per dimension; runs: repeats 0..N-1 of a scoring
    sheet = stability_sheet(entries)    # the Stability sheet

Running the repeats and reading them back from a project is the session's
(``core.interacteval.session.scoring``: ``score_repeats``, ``load_repeats``); this module is
pure.

A text that failed or stayed incomplete in a repeat is missing there, never a score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.interacteval.model import ScoringSettings

if TYPE_CHECKING:  # pragma: no cover
    from core.stats import RepeatStability

__all__ = ["MAX_REPEATS", "repeat_settings", "stability", "stability_lines", "stability_sheet"]

#: The most repeats the app and the command line offer.
MAX_REPEATS = 10


def repeat_settings(settings: ScoringSettings, k: int) -> ScoringSettings:
    """The scoring options of repeat ``k`` (repeat 0: ``settings`` themselves)."""
    return settings.model_copy(update={"repeat": settings.repeat + k}) if k else settings


def stability(runs: Sequence[Any], *, condition: str = "Checklist",
              who: str = "the checklist judge") -> list[tuple[str, str, RepeatStability]]:
    """Per dimension: each text's checklist score over the repeats
    (:func:`core.stats.repeat_stability`). ``runs``: anything with ``scores`` (a
    :class:`ScoringRun` or a condition's ``session.ConditionRun``); ``who``: the words of the
    plain sentence."""
    from core.stats import repeat_stability

    if not runs:
        return []
    # the checklists' order (the scores are in the order the texts finished: not the same
    # from one run to the next)
    listed = [c.dimension for c in getattr(runs[0], "checklists", None) or []]
    found = list(dict.fromkeys(s.dimension for s in runs[0].scores))
    dims = [d for d in listed if d in found] + [d for d in found if d not in listed]
    out = []
    for dim in dims:
        texts = list(dict.fromkeys(s.text_id for s in runs[0].scores if s.dimension == dim))
        by_run = [{s.text_id: (s.score if s.status == "ok" else None)
                   for s in run.scores if s.dimension == dim} for run in runs]
        table = {t: [scores.get(t) for scores in by_run] for t in texts}
        out.append((condition, dim, repeat_stability(table, who=who,
                                                      unit_name="text")))
    return out


def stability_lines(entries: Sequence[tuple[str, str, RepeatStability]]) -> list[str]:
    """One plain line per dimension: "Coherence: The checklist judge gives ..."."""
    return [f"{dim}: {s.sentence}" for _, dim, s in entries]


def stability_sheet(entries: Sequence[tuple[str, str, RepeatStability]]) -> Any:
    """The "Stability" sheet (:class:`core.tables.Sheet`) of ``entries``."""
    import pandas as pd

    from core.stats import STABILITY_THRESHOLD, stability_columns, stability_rows
    from core.tables import Sheet

    n = max((s.n_repeats for _, _, s in entries), default=1)
    columns = stability_columns(n)
    frame = pd.DataFrame(stability_rows(entries, unit_name="text"), columns=columns)
    return Sheet("Stability", frame,
                 "each text's checklist score in every repeat (the same calls made again) with "
                 "its SD and range; per dimension Krippendorff's alpha (interval) across the "
                 f"repeats, flagged below {STABILITY_THRESHOLD} (Krippendorff's threshold for "
                 "tentative conclusions)",
                 number_formats={c: "0.00" for c in columns
                                 if c.startswith("repeat ") and c != "repeats scored"}
                 | {"mean": "0.00", "sd": "0.00", "range": "0.00", "alpha": "0.000"})
