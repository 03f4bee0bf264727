"""MAJ-Eval's conditions side by side (the paper's Section 5 on the user's own data).

* ``full``: full personas with the in-group debate (the scores after the debate);
* ``pre``: the same personas before the debate (their phase 1 scores; no extra call: they come
  from the ``full`` debates);
* ``simple``: one-sentence roles instead of the full personas, with the debate;
* ``single-judge``: one model, the same dimensions, scale and items, one call per item
  (:mod:`core.majeval.single_judge`).

Each condition's results are kept in the project by the session
(:mod:`core.majeval.session.conditions`: the debates as the wizard keeps them, the single judge
as its own run), so reopening shows them without a call, and running an unchanged condition
again makes none. This module is pure: :func:`from_debates` and :func:`from_judge` turn stored
results into a :class:`ConditionResult`, :func:`comparison_rows` builds the comparison table:
per condition, group and dimension the Spearman correlation with the human ratings (the paper's statistic) with a
bootstrap CI, and each condition against ``full`` with the paired bootstrap test
(:func:`core.stats.paired_correlation_difference`) over the items both scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.llm.identity import model_fields, model_name
from core.majeval import _prompts
from core.majeval.agreement import _human_dimensions
from core.majeval.model import DebateSettings, Dimension, Item, RunModel, Scale
from core.majeval.pipeline import EvaluationRun
from core.majeval.single_judge import TEMPLATE as JUDGE_TEMPLATE
from core.majeval.single_judge import JudgeResult
from core.words import choose_from

__all__ = [
    "COMPARISON_BOOT",
    "COMPARISON_COLUMNS",
    "CONDITIONS",
    "ConditionResult",
    "comparison_notes",
    "comparison_rows",
    "comparison_sheets",
    "comparison_summary",
    "debate_settings",
    "from_debates",
    "from_judge",
    "parse_conditions",
    "single_settings",
]

#: name -> plain label, in the order the comparison shows them.
CONDITIONS = {
    "full": "Full personas, after debate",
    "pre": "Full personas, before debate",
    "simple": "Simple roles, after debate",
    "single-judge": "Single judge",
}
DEFAULT = "full"
#: Bootstrap resamples of the comparison sheet (command line and the wizard's export).
COMPARISON_BOOT = 2000
ALL_GROUPS = "All groups (overall score)"
STEP_SINGLE = "single_judge"
SINGLE_KIND = "judge_result"

COMPARISON_COLUMNS = [
    "condition", "group", "dimension", "human_dimension", "statistic", "value", "ci_low",
    "ci_high", "n", "vs_full_difference", "vs_full_ci_low", "vs_full_ci_high", "vs_full_p",
    "vs_full_n", "vs_full_note", "warning", "summary",
]
#: The length baseline's condition: the items' number of words as the scores.
LENGTH = "Text length alone (number of words, the baseline)"
#: How the conditions are compared, and why (the Read me's "Statistic" line).
HOW_COMPARED = ("Spearman rho with the human ratings pooled over all items, per group and "
                "dimension (and the overall score), 95% bootstrap CI over items; against full "
                "personas after debate: paired bootstrap of the difference over the items both "
                "scored (not computed below 10 items). Pooled over items, not averaged per "
                "source text: MAJ-Eval's paper correlates over the items, and items rarely "
                "share a context in numbers a per-context test would need. Beside them the "
                "length baseline: the items' number of words compared the same way")


def parse_conditions(text: str) -> list[str]:
    """The condition names of ``--conditions full,pre,...`` in the canonical order; ValueError
    naming an unknown one."""
    return choose_from(text, list(CONDITIONS), "condition")


@dataclass
class ConditionResult:
    """One condition's scores: ``scores[group][item id][dimension]`` (group
    :data:`ALL_GROUPS` holds the item's overall score; None = failed, never a default).
    ``missing``: items the condition has no result for yet (then it is not complete)."""

    name: str
    label: str
    scores: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    """item id -> why it has no score."""
    run_id: int | None = None
    complete: bool = True
    model: str = ""


# ---------------------------------------------------------------- from the stored results
def debate_settings(settings: DebateSettings, simple: bool) -> DebateSettings:
    """The debate options of a debate condition (``simple``: the simple roles) with the
    rounds of ``settings``, the project's own options."""
    return DebateSettings(rounds=settings.rounds, no_debate=False, simple_roles=simple)


def from_debates(name: str, run: EvaluationRun, before: bool) -> ConditionResult:
    """The debates of ``run`` as the condition ``name`` (``before``: the agents' scores before
    the debate)."""
    out = ConditionResult(name, CONDITIONS[name], run_id=run.run_id, model=run.model)
    overall: dict[str, dict[str, float | None]] = {}
    for result in run.items:
        dims = [d.name for d in run.dimensions]
        if result.status == "failed":
            out.failed[result.item_id] = result.error or "failed"
        for g in result.groups:
            means = g.initial_mean if before else g.final_mean
            ok = g.status != "failed"
            out.scores.setdefault(g.group, {})[result.item_id] = {
                d: (means.get(d) if ok else None) for d in dims}
        if before:
            values = {d: [g.initial_mean.get(d) for g in result.groups] for d in dims}
            overall[result.item_id] = {
                d: _mean_or_none(v) if result.status != "failed" else None
                for d, v in values.items()}
        else:
            overall[result.item_id] = {d: result.overall.get(d) for d in dims}
    out.scores[ALL_GROUPS] = overall
    return out


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    """The mean of ``values``; None when there are none or one is missing (a failed group)."""
    known = [v for v in values if v is not None]
    if not values or len(known) < len(values):
        return None
    return sum(known) / len(known)


def single_settings(task: str, dimensions: Sequence[Dimension], scale: Scale, model: RunModel,
                    repeat: int = 0) -> dict[str, object]:
    """The settings of the single judge's run (the project finds it again by them): the task,
    dimensions, scale, model and prompt version; ``repeat`` k > 0: of repeat k."""
    out: dict[str, object] = {
        "task": task, "dimensions": [d.model_dump(mode="json") for d in dimensions],
        "scale": scale.model_dump(mode="json"), **model_fields(model),
        "template": _prompts.load(JUDGE_TEMPLATE).template_version}
    return {**out, "repeat": int(repeat)} if repeat else out


def from_judge(dimensions: Sequence[Dimension], results: Sequence[JudgeResult],
               run_id: int | None, model: RunModel) -> ConditionResult:
    """The single judge's ``results`` as the condition "single-judge"."""
    out = ConditionResult("single-judge", CONDITIONS["single-judge"], run_id=run_id,
                          model=model_name(model))
    dims = [d.name for d in dimensions]
    overall: dict[str, dict[str, float | None]] = {}
    for r in results:
        ok = r.status == "ok"
        overall[r.item_id] = {d: (float(r.scores[d]) if ok and d in r.scores else None)
                              for d in dims}
        if not ok:
            out.failed[r.item_id] = r.error or "failed"
    out.scores[ALL_GROUPS] = overall
    return out


# ------------------------------------------------------------------------------ comparison
def _ratings_of(human: str, dimension: str, group: str) -> str:
    """What a comparison sentence compares with, naming the dimension ("your ratings of
    Clarity"; "the Parents' scores of Clarity against your ratings of Overall")."""
    ratings = f"your ratings of {human}"
    if dimension.casefold() != human.casefold():
        ratings += f" (the judges' {dimension})"
    return ratings if group == ALL_GROUPS else f"{ratings}, for {group}"


def _pairs(human: str, dimensions: Sequence[str]) -> list[str]:
    same = [d for d in dimensions if d.casefold() == human.casefold()]
    return same or list(dimensions)


def comparison_rows(results: dict[str, ConditionResult], items: Sequence[Item],
                    dimensions: Sequence[str], *, n_boot: int = 2000, seed: int = 0
                    ) -> list[dict[str, Any]]:
    """The comparison table (columns :data:`COMPARISON_COLUMNS`): per condition, group (and
    the overall score) and dimension x human dimension, the Spearman correlation with the human
    ratings with its bootstrap CI; for each condition but ``full``, the paired bootstrap test
    of its correlation against ``full``'s on the same group and dimension, over the items both
    scored (``vs_full_note`` says "not enough units" below 10), and a plain summary line."""
    from core.stats import (
        correlations,
        judge_spread,
        paired_correlation_difference,
        word_count,
    )

    rows: list[dict[str, Any]] = []
    base = results.get(DEFAULT)
    for human in _human_dimensions(items):
        y = [item.human.get(human) for item in items]
        for dim in _pairs(human, dimensions):
            for name, result in results.items():
                overall = result.scores.get(ALL_GROUPS, {})
                scored = [i for i in items if overall.get(i.id, {}).get(dim) is not None]
                spread = judge_spread([overall[i.id][dim] for i in scored],
                                      lengths=[word_count(i.content) for i in scored],
                                      human=[i.human.get(human) for i in scored],
                                      who=result.label, units="items", n_boot=0)
                groups = [ALL_GROUPS, *[g for g in result.scores if g != ALL_GROUPS]]
                for group in groups:
                    by_item = result.scores.get(group, {})
                    x = [by_item.get(item.id, {}).get(dim) for item in items]
                    report = correlations(x, y, n_boot=n_boot, seed=seed,
                                          x_name=f"the scores of {result.label}",
                                          y_name=f"the human ratings of {human}")
                    rho = report.spearman
                    row: dict[str, Any] = {
                        "condition": result.label, "group": group, "dimension": dim,
                        "human_dimension": human, "statistic": "Spearman rho",
                        "value": rho.value, "ci_low": rho.ci_low, "ci_high": rho.ci_high,
                        "n": report.n, "vs_full_difference": None, "vs_full_ci_low": None,
                        "vs_full_ci_high": None, "vs_full_p": None, "vs_full_n": None,
                        "vs_full_note": "" if rho.defined else rho.reason,
                        "warning": spread.sentence if group == ALL_GROUPS and spread.flagged
                        else "", "summary": ""}
                    if base is not None and name != DEFAULT and group in base.scores:
                        b = [base.scores[group].get(item.id, {}).get(dim) for item in items]
                        test = paired_correlation_difference(
                            [_nan(v) for v in x], [_nan(v) for v in b], [_nan(v) for v in y],
                            method="spearman", n_boot=n_boot, seed=seed)
                        row.update({"vs_full_difference": test.difference,
                                    "vs_full_ci_low": test.ci_low,
                                    "vs_full_ci_high": test.ci_high,
                                    "vs_full_p": test.p_value, "vs_full_n": test.n,
                                    "vs_full_note": test.reason or test.note,
                                    "summary": test.summary(
                                        result.label, base.label,
                                        _ratings_of(human, dim, group))})
                    rows.append(row)
            rows.append(_length_row(items, y, human, dim, base, n_boot=n_boot, seed=seed))
    return rows


def _length_row(items: Sequence[Item], y: Sequence[Any], human: str, dim: str,
                base: ConditionResult | None, *, n_boot: int, seed: int) -> dict[str, Any]:
    """The length baseline's row: the items' number of words against the human ratings, on
    the items full personas scored (all items without them), and against full personas."""
    from core.stats import correlations, paired_correlation_difference, word_count

    b = [base.scores.get(ALL_GROUPS, {}).get(i.id, {}).get(dim) for i in items] \
        if base is not None else None
    x = [word_count(i.content) if b is None or b[k] is not None else None
         for k, i in enumerate(items)]
    report = correlations(x, y, n_boot=n_boot, seed=seed, x_name="the items' lengths",
                          y_name=f"the human ratings of {human}")
    rho = report.spearman
    row: dict[str, Any] = {
        "condition": LENGTH, "group": ALL_GROUPS, "dimension": dim, "human_dimension": human,
        "statistic": "Spearman rho", "value": rho.value, "ci_low": rho.ci_low,
        "ci_high": rho.ci_high, "n": report.n, "vs_full_difference": None,
        "vs_full_ci_low": None, "vs_full_ci_high": None, "vs_full_p": None, "vs_full_n": None,
        "vs_full_note": "" if rho.defined else rho.reason, "warning": "", "summary": ""}
    if b is not None and base is not None:
        test = paired_correlation_difference(
            [_nan(v) for v in x], [_nan(v) for v in b], [_nan(v) for v in y],
            method="spearman", n_boot=n_boot, seed=seed)
        row.update({"vs_full_difference": test.difference, "vs_full_ci_low": test.ci_low,
                    "vs_full_ci_high": test.ci_high, "vs_full_p": test.p_value,
                    "vs_full_n": test.n, "vs_full_note": test.reason or test.note,
                    "summary": test.summary(LENGTH, base.label)})
    return row


def _nan(value: Any) -> float:
    try:
        return float("nan") if value is None else float(value)
    except (TypeError, ValueError):
        return float("nan")


def comparison_summary(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The plain summary lines of the overall score (one per condition compared with full)."""
    return [r["summary"] for r in rows if r["group"] == ALL_GROUPS and r["summary"]]


def score_rows(results: dict[str, ConditionResult], items: Sequence[Item],
               dimensions: Sequence[str]) -> list[dict[str, Any]]:
    """One row per item: the overall score of every condition per dimension (empty = failed,
    with the reason in ``note``), beside the human ratings."""
    rows = []
    humans = _human_dimensions(items)
    for item in items:
        row: dict[str, Any] = {"item": item.id}
        notes = []
        for result in results.values():
            overall = result.scores.get(ALL_GROUPS, {}).get(item.id, {})
            for dim in dimensions:
                column = result.label if len(dimensions) == 1 else f"{result.label}: {dim}"
                row[column] = overall.get(dim)
            if item.id in result.failed:
                notes.append(f"{result.label}: {result.failed[item.id]}")
        for human in humans:
            row[f"human: {human}"] = item.human.get(human)
        row["note"] = "; ".join(notes)
        rows.append(row)
    return rows


def comparison_notes(results: dict[str, ConditionResult], rows: Sequence[dict[str, Any]]
                     ) -> list[tuple[str, str]]:
    """The Read me lines that label the comparison: the conditions, the statistic and its
    level, and the summary lines."""
    notes = [*[("WARNING", r["warning"]) for r in rows if r.get("warning")],
             ("Conditions", "; ".join(f"{r.label} ({r.name})" for r in results.values())),
             ("Statistic", HOW_COMPARED)]
    return notes + [("Summary", line) for line in comparison_summary(rows)]


def comparison_sheets(results: dict[str, ConditionResult], items: Sequence[Item],
                      dimensions: Sequence[str], rows: Sequence[dict[str, Any]]) -> list[Any]:
    """The sheets "Comparison" (:func:`comparison_rows`) and "Condition scores"
    (:func:`score_rows`), the one route of the command line's comparison workbook and the
    wizard's results export."""
    import pandas as pd

    from core.tables import Sheet

    return [
        Sheet("Comparison", pd.DataFrame(list(rows), columns=COMPARISON_COLUMNS),
              "the conditions' agreement with the human ratings (pooled over all items), and "
              "each against full personas after debate; the length baseline after each "
              "dimension",
              number_formats={c: "0.000" for c in COMPARISON_COLUMNS
                              if c.startswith(("value", "ci_", "vs_full_d", "vs_full_ci",
                                               "vs_full_p"))}),
        Sheet("Condition scores", pd.DataFrame(score_rows(results, items, dimensions)),
              "each item's overall score per condition"),
    ]


def write_comparison(path: Any, results: dict[str, ConditionResult], items: Sequence[Item],
                     dimensions: Sequence[str], rows: Sequence[dict[str, Any]], *,
                     readme: Sequence[tuple[str, str]] = (), extra_sheets: Sequence[Any] = ()
                     ) -> Any:
    """Write the comparison workbook: :func:`comparison_sheets` (then ``extra_sheets``, e.g.
    the Stability sheet) and a Read me naming the conditions (:func:`comparison_notes`).
    Raises :class:`core.tables.TableError` when it cannot be written."""
    from core.tables import write_workbook

    return write_workbook(path, [*comparison_sheets(results, items, dimensions, rows),
                                 *extra_sheets], [*readme, *comparison_notes(results, rows)])
