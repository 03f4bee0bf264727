"""MAJ-Eval's repeat runs: the same debates (or single-judge calls) made N times, to see
whether the judge gives the same scores when asked again.

Repeat 0 is the ordinary run (earlier projects' results are repeat 0, unchanged); repeat k > 0
is kept as its own project run and every call of it uses repeat index k (``core.llm.repeats``),
so repeats are real calls and running a finished repeat again makes none.

    by_repeat = await run_repeats(project, state, llm_for_run, ["full"], 3, model=m)
    by_repeat = load_repeats(project, state, ["full"], 3, m)       # reopening: no call
    entries = stability(by_repeat, state.item_list, dims)           # per condition x dimension
    rows = core.stats.stability_rows(entries)                       # the Stability sheet

The scores compared are the items' overall scores (the mean of the groups' means; a single
judge's score). A failed item of a repeat is missing there, never a score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.majeval.conditions import ALL_GROUPS, ConditionResult
from core.runs import CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.stats import RepeatStability

__all__ = ["MAX_REPEATS", "condition_of", "load_repeats", "plain_result", "run_repeats",
           "stability",
           "stability_lines", "stability_sheet"]

#: The most repeats the app and the command line offer.
MAX_REPEATS = 10

#: [repeat] -> condition name -> its results.
ByRepeat = list[dict[str, ConditionResult]]


def condition_of(settings: Any) -> str:
    """The condition a plain run's debate options make: "simple" with simple roles, else
    "full" (with the no-debate option its label says so)."""
    return "simple" if settings.simple_roles else "full"


def plain_result(state: Any, run: Any) -> dict[str, ConditionResult]:
    """The debates ``run`` (a ``session.run_debates`` result) as one condition's results."""
    from core.majeval.conditions import _from_debates

    name = condition_of(state.settings)
    out = _from_debates(name, run, before=False)
    if state.settings.no_debate:
        out.label = out.label.replace("after debate", "no debate")
    return {name: out}


async def run_repeats(
    project: Project,
    state: Any,
    llm_for_run: Callable[[int], Any],
    names: Sequence[str] | None,
    repeats: int,
    *,
    model: Any = "",
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    first: dict[str, ConditionResult] | None = None,
) -> ByRepeat:
    """Repeats 0..``repeats``-1 of the conditions ``names`` (``core.majeval.conditions``), or,
    with ``names`` None, of the debates with the current options (``session.run_debates``).
    What a repeat already kept is read back without a call. ``first``: repeat 0 when it was
    just run (conditions' results, or :func:`plain_result` of the debates)."""
    from core.majeval import session as st
    from core.majeval.conditions import run_conditions

    if not 1 <= repeats <= MAX_REPEATS:
        raise ValueError(f"Repeat each call 1 to {MAX_REPEATS} times, not {repeats}.")
    out: ByRepeat = [first] if first is not None else []
    for k in range(len(out), repeats):
        if names is None:
            run = await st.run_debates(project, state, llm_for_run, model=model,
                                       progress=progress, cancel=cancel, repeat=k)
            out.append(plain_result(state, run))
        else:
            out.append(await run_conditions(project, state, llm_for_run, names, model=model,
                                            progress=progress, cancel=cancel, repeat=k))
    return out


def load_repeats(project: Project, state: Any, names: Sequence[str] | None, repeats: int,
                 model: Any) -> ByRepeat:
    """The repeats kept in the project (no model call), as far as they go: the list stops at
    the first repeat that is missing (then fewer than ``repeats`` come back)."""
    from core.majeval import session as st
    from core.majeval.conditions import load_conditions

    out: ByRepeat = []
    for k in range(repeats):
        if names is None:
            run = st.load_run(project, state, model, repeat=k)
            if run is None:
                break
            out.append(plain_result(state, run))
        else:
            if model is None:
                break
            found = load_conditions(project, state, names, model, repeat=k)
            if not found:
                break
            out.append(found)
    return out


def stability(by_repeat: ByRepeat, items: Sequence[Any], dimensions: Sequence[str]
              ) -> list[tuple[str, str, RepeatStability]]:
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
            table: Mapping[str, list[Any]] = {
                item.id: [r[name].scores.get(ALL_GROUPS, {}).get(item.id, {}).get(dim)
                          for r in by_repeat]
                for item in items}
            who = "the single judge" if name == "single-judge" else f"the judge ({label})"
            out.append((label, dim, repeat_stability(table, who=who, unit_name="item")))
    return out


def stability_lines(entries: Sequence[tuple[str, str, RepeatStability]]) -> list[str]:
    """One plain line per condition and dimension (the dimension named when there are several)."""
    several = len({d for _, d, _ in entries}) > 1
    return [(f"{dim}: " if several else "") + s.sentence for _, dim, s in entries]


def stability_sheet(entries: Sequence[tuple[str, str, RepeatStability]]) -> Any:
    """The "Stability" sheet (:class:`core.tables.Sheet`) of ``entries``."""
    import pandas as pd

    from core.stats import STABILITY_THRESHOLD, stability_columns, stability_rows
    from core.tables import Sheet

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
