"""MAJ-Eval's repeat runs: the same debates (or single-judge calls) made N times, to see
whether the judge gives the same scores when asked again.

Repeat 0 is the ordinary run (earlier projects' results are repeat 0, unchanged); repeat k > 0
is kept as its own project run and every call of it uses repeat index k (``core.llm.repeats``),
so repeats are real calls and running a finished repeat again makes none. Running and reading
the repeats is the session's (:mod:`core.majeval.session.repeats`); this module is pure:

    by_repeat = session.load_repeats(["full"])                      # [repeat] -> condition
    entries = stability(by_repeat, choices.item_list, dims)         # per condition x dimension
    rows = core.stats.stability_rows(entries)                       # the Stability sheet

The scores compared are the items' overall scores (the mean of the groups' means; a single
judge's score). A failed item of a repeat is missing there, never a score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from core.majeval.conditions import ALL_GROUPS, ConditionResult, from_debates
from core.majeval.model import DebateSettings, Item
from core.majeval.pipeline import EvaluationRun
from core.tables import Sheet

if TYPE_CHECKING:  # pragma: no cover
    from core.stats import RepeatStability

__all__ = ["MAX_REPEATS", "ByRepeat", "RepeatEntry", "condition_of", "plain_result", "stability",
           "stability_lines", "stability_sheet"]

#: The most repeats the app and the command line offer.
MAX_REPEATS = 10

#: [repeat] -> condition name -> its results.
ByRepeat = list[dict[str, ConditionResult]]
#: How alike the repeats are for one condition and dimension: (label, dimension, figures).
RepeatEntry = tuple[str, str, "RepeatStability"]


def condition_of(settings: DebateSettings) -> str:
    """The condition a plain run's debate options make: "simple" with simple roles, else
    "full" (with the no-debate option its label says so)."""
    return "simple" if settings.simple_roles else "full"


def plain_result(settings: DebateSettings, run: EvaluationRun) -> dict[str, ConditionResult]:
    """The debates ``run`` (made with the debate options ``settings``) as one condition's
    results."""
    name = condition_of(settings)
    out = from_debates(name, run, before=False)
    if settings.no_debate:
        out.label = out.label.replace("after debate", "no debate")
    return {name: out}


def stability(by_repeat: ByRepeat, items: Sequence[Item], dimensions: Sequence[str]
              ) -> list[RepeatEntry]:
    """Per condition (present in every repeat) and dimension: the overall scores of the items
    over the repeats (:func:`core.stats.repeat_stability`)."""
    from core.stats import repeat_stability

    if not by_repeat:
        return []
    names = [n for n in by_repeat[0] if all(n in r for r in by_repeat)]
    out = []
    for name in names:
        label = by_repeat[0][name].label
        for dim in dimensions:
            table: Mapping[str, list[float | None]] = {
                item.id: [r[name].scores.get(ALL_GROUPS, {}).get(item.id, {}).get(dim)
                          for r in by_repeat]
                for item in items}
            who = "the single judge" if name == "single-judge" else f"the judge ({label})"
            out.append((label, dim, repeat_stability(table, who=who, unit_name="item")))
    return out


def stability_lines(entries: Sequence[RepeatEntry]) -> list[str]:
    """One plain line per condition and dimension (the dimension named when there are several)."""
    several = len({d for _, d, _ in entries}) > 1
    return [(f"{dim}: " if several else "") + s.sentence for _, dim, s in entries]


def stability_sheet(entries: Sequence[RepeatEntry]) -> Sheet:
    """The "Stability" sheet (:class:`core.tables.Sheet`) of ``entries``."""
    import pandas as pd

    from core.stats import STABILITY_THRESHOLD, stability_columns, stability_rows

    n = max((s.n_repeats for _, _, s in entries), default=1)
    columns = stability_columns(n)
    frame = pd.DataFrame(stability_rows(entries), columns=columns)
    return Sheet("Stability", frame,
                 f"each item's overall score in every repeat (the same calls made again) with "
                 f"its SD and range; per condition and dimension Krippendorff's alpha "
                 f"(interval) across the repeats, flagged below {STABILITY_THRESHOLD} "
                 "(Krippendorff's threshold for tentative conclusions)",
                 number_formats={c: "0.00" for c in columns
                                 if c.startswith("repeat ") and c != "repeats scored"}
                 | {"mean": "0.00", "sd": "0.00", "range": "0.00", "alpha": "0.000"})
