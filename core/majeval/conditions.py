"""MAJ-Eval's conditions side by side (the paper's Section 5 on the user's own data).

* ``full``: full personas with the in-group debate (the scores after the debate);
* ``pre``: the same personas before the debate (their phase 1 scores; no extra call: they come
  from the ``full`` debates);
* ``simple``: one-sentence roles instead of the full personas, with the debate;
* ``single-judge``: one model, the same dimensions, scale and items, one call per item
  (:mod:`core.majeval.single_judge`).

Each condition's results are kept in the project (the debates as the wizard keeps them, the
single judge as its own run), so reopening shows them without a call, and running an
unchanged condition again makes none. :func:`run_conditions` runs what is missing;
:func:`comparison_rows` builds the comparison table (plain function): per condition, group and
dimension the Spearman correlation with the human ratings (the paper's statistic) with a
bootstrap CI, and each condition against ``full`` with the paired bootstrap test
(:func:`core.stats.paired_correlation_difference`) over the items both scored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.llm.identity import model_fields, model_name
from core.majeval.agreement import _human_dimensions
from core.majeval.model import DebateSettings, Item
from core.runs import CancelToken, Progress
from core.words import choose_from

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "COMPARISON_BOOT",
    "COMPARISON_COLUMNS",
    "CONDITIONS",
    "ConditionResult",
    "comparison_notes",
    "comparison_rows",
    "comparison_sheets",
    "comparison_summary",
    "load_conditions",
    "parse_conditions",
    "run_conditions",
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


# ------------------------------------------------------------------------ from the project
def _debate_settings(state: Any, simple: bool) -> DebateSettings:
    return DebateSettings(rounds=state.settings.rounds, no_debate=False, simple_roles=simple)


def _with(state: Any, settings: DebateSettings) -> Any:
    return state.model_copy(update={"settings": settings}, deep=True)


def _from_debates(name: str, run: Any, before: bool) -> ConditionResult:
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
                d: (None if result.status == "failed" or not v or any(x is None for x in v)
                    else sum(v) / len(v))  # type: ignore[misc]
                for d, v in values.items()}
        else:
            overall[result.item_id] = {d: result.overall.get(d) for d in dims}
    out.scores[ALL_GROUPS] = overall
    return out


def _single_settings(state: Any, model: Any, repeat: int = 0) -> dict[str, Any]:
    from core.majeval import _prompts
    from core.majeval.single_judge import TEMPLATE

    out = {"task": state.task,
           "dimensions": [d.model_dump(mode="json") for d in state.dimensions],
           "scale": state.scale.model_dump(mode="json"), **model_fields(model),
           "template": _prompts.load(TEMPLATE).template_version}
    return {**out, "repeat": int(repeat)} if repeat else out


def _from_judge(state: Any, results: Sequence[Any], run_id: int | None, model: Any
                ) -> ConditionResult:
    out = ConditionResult("single-judge", CONDITIONS["single-judge"], run_id=run_id,
                          model=model_name(model))
    dims = [d.name for d in state.dimensions]
    overall: dict[str, dict[str, float | None]] = {}
    for r in results:
        ok = r.status == "ok"
        overall[r.item_id] = {d: (float(r.scores[d]) if ok and d in r.scores else None)
                              for d in dims}
        if not ok:
            out.failed[r.item_id] = r.error or "failed"
    out.scores[ALL_GROUPS] = overall
    return out


def _stored_judge(project: Project, state: Any, model: Any, repeat: int = 0
                  ) -> ConditionResult | None:
    from pydantic import ValidationError

    from core.majeval.single_judge import JudgeResult, judge_key

    run = project.find_run("majeval", STEP_SINGLE, _single_settings(state, model, repeat))
    if run is None:
        return None
    stored = {r.key: r for r in project.get_results(run.id, SINGLE_KIND)}
    results = []
    for item in state.item_list:
        found = stored.get(judge_key(item))
        if found is None:
            return None
        try:
            result = JudgeResult.model_validate(found.payload)
        except ValidationError:
            return None
        if found.status != "ok" and result.status == "ok":
            result = result.model_copy(update={"status": "failed", "scores": {},
                                               "error": found.error or "failed"})
        results.append(result)
    out = _from_judge(state, results, run.id, model)
    out.complete = not out.failed
    return out


def load_conditions(project: Project, state: Any, names: Sequence[str], model: Any, *,
                    repeat: int = 0) -> dict[str, ConditionResult]:
    """The conditions among ``names`` with a result for every item in the project with the
    current choices and ``model`` (no model call); a condition not yet run (or changed since)
    is left out; one whose items partly failed is in, with ``complete`` False and the
    failures (they are never given a score). ``repeat``: the results of that repeat run."""
    from core.majeval import session as st

    out: dict[str, ConditionResult] = {}
    for name in names:
        if name in ("full", "pre", "simple"):
            run = st.load_run(project, _with(state, _debate_settings(state, name == "simple")),
                              model, repeat=repeat)
            if run is not None:
                out[name] = _from_debates(name, run, before=name == "pre")
                out[name].complete = not run.failed_units
        elif name == "single-judge":
            found = _stored_judge(project, state, model, repeat)
            if found is not None:
                out[name] = found
    return out


def missing_conditions(project: Project, state: Any, names: Sequence[str], model: Any
                       ) -> list[str]:
    """The conditions among ``names`` that still need a run (never run, or items failed)."""
    have = load_conditions(project, state, names, model)
    return [n for n in names if n not in have or not have[n].complete]


async def run_conditions(
    project: Project,
    state: Any,
    llm_for_run: Callable[[int], Any],
    names: Sequence[str],
    *,
    model: Any = "",
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    repeat: int = 0,
) -> dict[str, ConditionResult]:
    """Run the conditions among ``names`` (``pre`` comes with ``full``'s debates): what is
    already kept is read back without a call, the rest is run and kept. The stored choices
    (``state``) are left as they were. Returns every condition asked for, complete or (when
    some of its items failed) with the failures. ``repeat`` k > 0: repeat k of every call
    (kept as its own runs; see :mod:`core.majeval.repeats`)."""
    from core.llm.repeats import with_repeat
    from core.majeval import session as st
    from core.majeval.single_judge import single_judge
    from core.project.units import RunUnits

    results: dict[str, ConditionResult] = {}
    debates = []
    if "full" in names or "pre" in names:
        debates.append(False)
    if "simple" in names:
        debates.append(True)
    try:
        for simple in debates:
            copy = _with(state, _debate_settings(state, simple))
            run = await st.run_debates(project, copy, llm_for_run, model=model,
                                       progress=progress, cancel=cancel, repeat=repeat)
            if simple:
                results["simple"] = _from_debates("simple", run, before=False)
            else:
                if "full" in names:
                    results["full"] = _from_debates("full", run, before=False)
                if "pre" in names:
                    results["pre"] = _from_debates("pre", run, before=True)
    finally:
        st.save_state(project, state)  # the conditions' settings never replace the user's
    if "single-judge" in names:
        if not state.item_list:
            raise ValueError("There are no items: choose the items file and its columns.")
        run_id = project.start_run("majeval", STEP_SINGLE,
                                   _single_settings(state, model, repeat), resume=True)
        judged = await single_judge(state.item_list, state.task, state.dimensions, state.scale,
                                    with_repeat(llm_for_run(run_id), repeat),
                                    store=RunUnits(project, run_id, SINGLE_KIND),
                                    progress=progress, cancel=cancel)
        results["single-judge"] = _from_judge(state, judged, run_id, model)
    return {n: results[n] for n in names if n in results}


def estimate_conditions(project: Project, state: Any, names: Sequence[str], profile: Any,
                        *, latency: Any = None, repeats: int = 1) -> Any:
    """The estimate (:mod:`core.llm.estimate`) of :func:`run_conditions`: the debates still to
    run for each debate condition, and one call per item not yet judged for the single judge;
    with ``repeats`` N, of repeats 0..N-1 together (what each repeat still has to do)."""
    from core.llm.context import limits_of
    from core.llm.estimate import StagePlan, estimate, measured_latency
    from core.majeval import _prompts
    from core.majeval import session as st
    from core.majeval.estimate import plan_for_state
    from core.majeval.model import evaluation_schema
    from core.majeval.pipeline import RESULT_KIND, refused_items
    from core.majeval.single_judge import TEMPLATE, judge_key, judge_values
    from core.majeval.single_judge import refused_items as refused_for_judge

    plan: list[Any] = []
    skipped = 0
    personas = st.load_personas(project)
    descriptions = st.group_descriptions(project)
    limits = limits_of(profile)
    too_long: list[str] = []
    debates = []
    if "full" in names or "pre" in names:
        debates.append(False)
    if "simple" in names:
        debates.append(True)
    for repeat, simple in [(k, s) for k in range(max(1, repeats)) for s in debates]:
        copy = _with(state, _debate_settings(state, simple))
        run = st.current_run(project, copy, profile, repeat=repeat)
        done = project.finished_keys(run.id, RESULT_KIND) if run is not None else set()
        stages, n = plan_for_state(personas, copy, descriptions, done, limits)
        too_long += refused_items(personas, copy.item_list, copy.task, copy.dimensions,
                                  copy.scale, limits, settings=copy.settings,
                                  descriptions=descriptions)
        for stage in stages:
            stage.name = ("simple roles: " if simple else "full personas: ") + stage.name
            if repeat:
                stage.name += f" (repeat {repeat})"
        plan += stages
        skipped += n
    for repeat in range(max(1, repeats)) if "single-judge" in names else ():
        run = project.find_run("majeval", STEP_SINGLE,
                               _single_settings(state, profile, repeat))
        done = project.finished_keys(run.id, SINGLE_KIND) if run is not None else set()
        template = _prompts.load(TEMPLATE)
        refused = refused_for_judge(state.item_list, state.task, state.dimensions,
                                    state.scale, limits)
        too_long += refused
        todo = [i for i in state.item_list if judge_key(i) not in done]
        if refused:
            todo = []  # refused before the run
        skipped += len(state.item_list) - len(todo)
        if todo:
            plan.append(StagePlan("single judge" + (f" (repeat {repeat})" if repeat else ""), [
                template.messages(**judge_values(i, state.task, state.dimensions, state.scale))
                for i in todo], evaluation_schema(state.dimensions, state.scale)))
    latency = latency or measured_latency(project, profile.model)
    est = estimate(plan, profile, latency=latency, done_already=skipped,
                   done_what="debates and judged items")
    est.too_long = list(dict.fromkeys(too_long))
    return est


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
