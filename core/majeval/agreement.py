"""Agreement: among the agents of each group (Krippendorff's alpha, ordinal, before and after
the debate, as the paper's Table 3) and with human ratings when the items carry them
(Spearman, Kendall tau-b and Pearson with n and p, via :mod:`core.stats`; the paper reports
Spearman's absolute value).

Which of our dimensions is compared with which human one (ours): a human dimension is compared
with our dimension of the same name (ignoring case); when none has its name, with every one of
our dimensions (e.g. one "Overall quality" against each human facet). Each group's mean is
compared, and the overall score (mean over groups), both before and after the debate.

Beside them the **length baseline** (group :data:`LENGTH_GROUP`, stage :data:`BASELINE`): the
same correlations of the items' length (number of words of the judged content) with the human
ratings, so a reader sees when the personas add nothing beyond length. :func:`judge_spreads`
says per dimension, without human ratings, whether the debate tells the items apart at all
(most items with the same agents' scores or the same overall score, or overall scores that
follow length): ``core.stats.judge_spread``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.majeval.model import Dimension, Item, ItemResult
from core.majeval.pipeline import EvaluationRun, groups_of
from core.stats import (
    AlphaResult,
    CorrelationReport,
    JudgeSpread,
    correlations,
    judge_spread,
    krippendorff_alpha,
    word_count,
)

__all__ = [
    "AGREEMENT_COLUMNS",
    "ALL_GROUPS",
    "BASELINE",
    "LENGTH_GROUP",
    "ONE_AGENT",
    "GroupAlpha",
    "HumanAgreement",
    "agreement_rows",
    "human_agreement",
    "human_points",
    "judge_spreads",
    "spread_rows",
    "within_group_alpha",
]

ALL_GROUPS = "All groups (overall score)"
BEFORE, AFTER = "before debate", "after debate"
#: The length baseline's rows: the items' number of words in place of the personas' scores.
LENGTH_GROUP = "Text length alone (number of words)"
BASELINE = "baseline, no model"
AGREEMENT_COLUMNS = ["comparison", "group", "stage", "dimension", "human_dimension",
                     "statistic", "kind", "value", "p_value", "ci_low", "ci_high", "n", "note"]


#: Why alpha and the change of a one-persona group are not computed.
ONE_AGENT = "one agent"


@dataclass(frozen=True)
class GroupAlpha:
    """Krippendorff's alpha (ordinal) among a group's agents over the items, on one dimension,
    on the phase 1 scores (``before``) and the final scores (``after``). ``agents``: how many
    personas the group has (alpha is undefined for one: "undefined: one agent")."""

    group: str
    dimension: str
    before: AlphaResult
    after: AlphaResult
    agents: int = 0

    @property
    def one_agent(self) -> bool:
        return self.agents == 1


@dataclass(frozen=True)
class HumanAgreement:
    """Correlations of one group's (or the overall) scores with one human dimension."""

    group: str
    stage: str  #: "before debate" or "after debate"
    dimension: str
    human_dimension: str
    report: CorrelationReport


def _one_agent(items: int) -> AlphaResult:
    return AlphaResult(value=None, level="ordinal", n_units=0, n_pairable=0,
                       n_units_dropped=items, n_raters=1,
                       reason=f"{ONE_AGENT}: a group with a single persona has nobody to agree "
                              "with")


def within_group_alpha(run: EvaluationRun) -> list[GroupAlpha]:
    """Alpha per group and dimension; raters = the group's agents, units = the items. A failed
    agent's score is missing (not a number we made up); an agent that failed during the debate
    is missing before the debate too, so both alphas are over the same ratings. A group of one
    persona has no alpha ("undefined: one agent")."""
    out = []
    for group, personas in groups_of(run.personas).items():
        results = [g for item in run.items for g in item.groups if g.group == group]
        for dim in run.dimensions:
            if len(personas) == 1:
                undefined = _one_agent(len(results))
                out.append(GroupAlpha(group, dim.name, undefined, undefined, agents=1))
                continue
            before, after = [], []
            for persona in personas:
                row_before, row_after = [], []
                for g in results:
                    agent = next((a for a in g.agents if a.persona_id == persona.id), None)
                    initial = agent.initial.scores.get(dim.name) if agent and agent.initial \
                        else None
                    final = agent.final.get(dim.name) if agent and agent.status == "ok" \
                        and agent.final else None
                    row_before.append(initial if final is not None else None)
                    row_after.append(final if initial is not None else None)
                before.append(row_before)
                after.append(row_after)
            out.append(GroupAlpha(group, dim.name, krippendorff_alpha(before, "ordinal"),
                                  krippendorff_alpha(after, "ordinal"), agents=len(personas)))
    return out


def _human_dimensions(items: Sequence[Item]) -> list[str]:
    out: list[str] = []
    for item in items:
        for name in item.human:
            if name not in out:
                out.append(name)
    return out


def _pairs(human: str, dimensions: Sequence[Dimension]) -> list[str]:
    same = [d.name for d in dimensions if d.name.casefold() == human.casefold()]
    return same or [d.name for d in dimensions]


def _overall_before(result: ItemResult, dim: str) -> float | None:
    if result.status == "failed":
        return None
    values = [g.initial_mean.get(dim) for g in result.groups]
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


def _score(result: ItemResult, group: str, dim: str, stage: str) -> float | None:
    """One item's score that is correlated: the group's mean (or the overall score for
    :data:`ALL_GROUPS`) on ``dim`` before or after the debate; None when it failed."""
    if group == ALL_GROUPS:
        return result.overall.get(dim) if stage == AFTER else _overall_before(result, dim)
    g = next((g for g in result.groups if g.group == group), None)
    if g is None or g.status == "failed":
        return None
    return (g.final_mean if stage == AFTER else g.initial_mean).get(dim)


def human_points(run: EvaluationRun, group: str, dimension: str, human: str,
                 stage: str = AFTER) -> list[tuple[str, float, float]]:
    """The (item id, score, human rating) pairs behind one row of :func:`human_agreement`:
    the items with both a score (``group``'s mean on ``dimension``, or the overall score for
    :data:`ALL_GROUPS`) and a rating of ``human``, in the items' order (for a scatter plot)."""
    results = {r.item_id: r for r in run.items}
    out = []
    for item in run.item_inputs:
        rating = item.human.get(human)
        result = results.get(item.id)
        if group == LENGTH_GROUP:
            value = word_count(item.content) if result is not None else None
        else:
            value = None if result is None else _score(result, group, dimension, stage)
        if value is not None and rating is not None and not math.isnan(rating):
            out.append((item.id, float(value), float(rating)))
    return out


def human_agreement(run: EvaluationRun, *, n_boot: int = 1000, seed: int = 0
                    ) -> list[HumanAgreement]:
    """Correlations with human ratings; empty when no item carries any."""
    items = run.item_inputs
    humans = _human_dimensions(items)
    if not humans:
        return []
    results = {r.item_id: r for r in run.items}
    groups = list(groups_of(run.personas))
    out = []
    for human in humans:
        y = [item.human.get(human) for item in items]
        for dim in _pairs(human, run.dimensions):
            for group in [*groups, ALL_GROUPS]:
                for stage in (BEFORE, AFTER):
                    x = [_score(results[item.id], group, dim, stage) for item in items]
                    who = "the overall scores" if group == ALL_GROUPS else \
                        f"the scores of {group}"
                    report = correlations(x, y, n_boot=n_boot, seed=seed, x_name=who,
                                          y_name=f"the human ratings of {human}")
                    out.append(HumanAgreement(group, stage, dim, human, report))
            # the length baseline: the same items (those the debate scored) and statistic
            lengths = [word_count(item.content)
                       if results[item.id].overall.get(dim) is not None else None
                       for item in items]
            out.append(HumanAgreement(LENGTH_GROUP, BASELINE, dim, human, correlations(
                lengths, y, n_boot=n_boot, seed=seed, x_name="the items' lengths",
                y_name=f"the human ratings of {human}")))
    return out


def judge_spreads(run: EvaluationRun, *, n_boot: int = 1000, seed: int = 0
                  ) -> list[tuple[str, JudgeSpread]]:
    """Per dimension: does the debate tell the items apart? Over the items with an overall
    score (after the debate): how many got the most common agents' final scores (every agent
    of every group, in order) and the most common overall score, and how closely the overall
    scores follow the items' length (``core.stats.judge_spread``; with a human rating of the
    same name, or the only one, a judge that beats length is not flagged for following it)."""
    humans = _human_dimensions(run.item_inputs)
    inputs = {i.id: i for i in run.item_inputs}
    out = []
    for dim in run.dimensions:
        same = [h for h in humans if h.casefold() == dim.name.casefold()]
        human = same[0] if same else (humans[0] if len(humans) == 1 else None)
        scored = [r for r in run.items if r.status != "failed"
                  and r.overall.get(dim.name) is not None and r.item_id in inputs]
        patterns = [tuple(a.final.get(dim.name) if a.final and a.status == "ok" else None
                          for g in r.groups for a in g.agents) for r in scored]
        out.append((dim.name, judge_spread(
            [r.overall[dim.name] for r in scored], patterns=patterns,
            lengths=[word_count(inputs[r.item_id].content) for r in scored],
            human=[inputs[r.item_id].human.get(human) for r in scored] if human else None,
            who=f"the personas' {dim.name} score", units="items", n_boot=n_boot, seed=seed)))
    return out


def spread_rows(spreads: Sequence[tuple[str, JudgeSpread]]) -> list[dict[str, Any]]:
    """The rows of :func:`judge_spreads` for the Agreement sheet (columns
    :data:`AGREEMENT_COLUMNS`)."""
    rows = []
    for dim, spread in spreads:
        for row in spread.rows(f"{ALL_GROUPS}: does the debate tell the items apart on {dim}?"):
            rows.append({**row, "group": ALL_GROUPS, "stage": AFTER, "dimension": dim,
                         "human_dimension": ""})
    return [{c: row.get(c) for c in AGREEMENT_COLUMNS} for row in rows]


def agreement_rows(alphas: Sequence[GroupAlpha] = (),
                   humans: Sequence[HumanAgreement] = ()) -> list[dict[str, Any]]:
    """Rows of the ``Agreement`` sheet (columns :data:`AGREEMENT_COLUMNS`)."""
    rows: list[dict[str, Any]] = []
    for a in alphas:
        for stage, result in ((BEFORE, a.before), (AFTER, a.after)):
            for row in result.to_rows(f"{a.group}: agents' {a.dimension} scores, {stage}"):
                rows.append({**row, "group": a.group, "stage": stage, "dimension": a.dimension,
                             "human_dimension": ""})
    for h in humans:
        label = f"{h.group}: {h.dimension} ({h.stage}) vs human {h.human_dimension}"
        if h.group == LENGTH_GROUP:
            label = f"{LENGTH_GROUP} vs human {h.human_dimension} (baseline beside {h.dimension})"
        for row in h.report.to_rows(label):
            if h.group == LENGTH_GROUP:
                row["note"] = "; ".join(p for p in (row["note"], (
                    "the items' number of words in place of the scores, on the items the "
                    "debate scored: the baseline the personas must beat")) if p)
            rows.append({**row, "group": h.group, "stage": h.stage, "dimension": h.dimension,
                         "human_dimension": h.human_dimension})
    return [{c: row.get(c) for c in AGREEMENT_COLUMNS} for row in rows]
