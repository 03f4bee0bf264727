"""InteractEval's conditions side by side (the paper's main result, on the user's own texts):
checklists built from the people's think-aloud notes only, from the models' think-aloud only,
and from both (the method), each scoring the same texts; optionally a single judge that gives
each text a 1-5 score with the dimension's definition and no checklist
(:mod:`core.interacteval.single_judge`). Running and keeping them in a project is
``InteractEvalSession.run_conditions`` / ``load_conditions`` (the wizard and the CLI).

:func:`build_conditions` builds one checklist per condition (``core.interacteval.pipeline.
build_checklist``; the models' think-aloud is the same call for "ai" and "combined", so it is
asked once and then read from the cache). :func:`comparison_rows` compares the conditions'
scores with the human scores. Where the texts share source documents (at least 10 documents
with two or more texts whose human scores differ), as the paper does: Spearman's rho per source
document, averaged, with a bootstrap CI over documents, and each condition against "combined"
with the paired bootstrap test over documents (:func:`core.stats.paired_correlation_difference`
with ``groups``). Where they do not (essays on one or two prompts, texts without a source), the
per-document test cannot give a result, so the conditions are compared on Spearman's rho pooled
over all texts (the Agreement tab's pooled row), with the paired bootstrap test over texts; each
row says which way was used and why (:func:`comparison_level`). Beside the conditions, the
length baseline (the texts' number of words, compared the same way) and, per condition, a
warning when its scores do not tell the texts apart (``core.stats.judge_spread``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.interacteval.model import Attribute, Dimension, ScoredSample, TextItem, TextScore
from core.runs import CancelToken, Progress
from core.words import choose_from

if TYPE_CHECKING:  # pragma: no cover
    from core.stats import CorrelationReport, GroupedCorrelationReport

__all__ = ["CHECKLIST_CONDITIONS", "COMPARISON_COLUMNS", "CONDITIONS", "DEFAULT", "LENGTH",
           "STATISTIC", "build_conditions", "comparison_level", "comparison_rows",
           "comparison_summary", "how_compared", "parse_conditions", "write_comparison"]

CONDITIONS = {
    "human": "Checklist from people's notes only",
    "ai": "Checklist from the models' think-aloud only",
    "combined": "Checklist from both (the method)",
    "single-judge": "Single judge, 1-5 with the definition (no checklist)",
}
#: The conditions that build a checklist (the single judge scores without one).
CHECKLIST_CONDITIONS = ("human", "ai", "combined")
DEFAULT = "combined"

#: The length baseline's condition label: the texts' number of words as the "scores".
LENGTH = "Text length alone (number of words, the baseline)"
#: The two ways of comparing (column ``compared``).
PER_DOCUMENT, POOLED = "per source document, averaged", "pooled over all texts"

COMPARISON_COLUMNS = [
    "condition", "dimension", "statistic", "compared", "value", "ci_low", "ci_high",
    "documents", "vs_combined_difference", "vs_combined_ci_low", "vs_combined_ci_high",
    "vs_combined_p", "vs_combined_n", "vs_combined_note", "why_this_way", "warning", "summary",
]


def parse_conditions(text: str) -> list[str]:
    """The names of ``--conditions human,ai,combined,single-judge`` in the canonical order."""
    return choose_from(text, list(CONDITIONS), "condition")


async def build_conditions(
    dimension: Dimension,
    samples: Sequence[ScoredSample],
    names: Sequence[str],
    *,
    assessors: Mapping[str, Any],
    builder: Any,
    notes: Sequence[Attribute],
    validate: bool = True,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> dict[str, Any]:
    """name -> the :class:`core.interacteval.pipeline.ChecklistBuild` of each condition, or
    the :class:`core.interacteval.model.StageError` that stopped it (a condition without
    notes, or whose models all failed, has no checklist: it is never given one)."""
    from core.interacteval.model import StageError
    from core.interacteval.pipeline import build_checklist

    out: dict[str, Any] = {}
    for name in names:
        people = list(notes) if name in ("human", "combined") else []
        models = dict(assessors) if name in ("ai", "combined") else {}
        if not people and not models:
            out[name] = StageError(
                f"{CONDITIONS[name]}: there is nothing to build it from "
                + ("(no people's notes were given)." if name == "human"
                   else "(no model thinks aloud)."),
                stage="Think-aloud", dimension=dimension.name)
            continue
        try:
            out[name] = await build_checklist(dimension, samples, assessors=models,
                                              builder=builder, notes=people,
                                              validate=validate, progress=progress,
                                              cancel=cancel)
        except StageError as exc:
            out[name] = exc
    return out


def _value(score: TextScore | None) -> float:
    """The score to correlate: none for a text without a score, and none for a think-aloud
    sample of its dimension (the checklists were built from it: it is not a test item)."""
    if score is None or score.status != "ok" or score.score is None \
            or score.think_aloud_sample:
        return float("nan")
    return float(score.score)


def comparison_level(items: Sequence[TextItem], dimension: str) -> tuple[str, str]:
    """How the conditions are compared on ``dimension`` and why: (:data:`PER_DOCUMENT` or
    :data:`POOLED`, the reason in words). Per source document (the paper's way) when at least
    ``core.stats.MIN_PAIRED_UNITS`` source documents have two or more texts with different
    human scores (what its paired test over documents needs); else pooled over all texts with
    the paired test over texts."""
    from core.stats import MIN_PAIRED_UNITS

    rated = [i for i in items if i.human.get(dimension) is not None]
    if not any(i.source_id or i.source for i in rated):
        return POOLED, ("the texts have no source document, so the conditions are compared on "
                        "Spearman's rho pooled over all texts, with the paired test over texts")
    documents: dict[str, set[float]] = {}
    sizes: dict[str, int] = {}
    for i in rated:
        key = i.source_id or i.source
        documents.setdefault(key, set()).add(float(i.human[dimension]))
        sizes[key] = sizes.get(key, 0) + 1
    usable = sum(1 for k, values in documents.items() if sizes[k] >= 2 and len(values) >= 2)
    if usable >= MIN_PAIRED_UNITS:
        return PER_DOCUMENT, (f"{usable} source documents have two or more texts with different "
                              "human scores: compared per source document, as the paper does, "
                              "with the paired test over documents")
    return POOLED, (f"the texts share few source documents ({len(documents)} in all, {usable} "
                    f"with two or more texts scored differently by people; the paper's paired "
                    f"test over documents needs {MIN_PAIRED_UNITS}), so the conditions are "
                    "compared on Spearman's rho pooled over all texts, with the paired test "
                    "over texts")


def comparison_rows(scores: Mapping[str, Sequence[TextScore]], items: Sequence[TextItem],
                    *, n_boot: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """The comparison table (:data:`COMPARISON_COLUMNS`), one row per condition and dimension,
    then the length baseline's: Spearman's rho with the human scores and, against "combined",
    the paired test, either per source document (averaged; bootstrap over documents) or pooled
    over all texts (bootstrap over texts), as :func:`comparison_level` decides (column
    ``compared``, and ``why_this_way``). Texts that are think-aloud samples of their dimension
    are left out (as in the agreement). ``warning``: the condition's scores may not be reading
    the texts (most with the same score or answers, or following length)."""
    from core.stats import (
        correlations,
        grouped_correlations,
        judge_spread,
        paired_correlation_difference,
        word_count,
    )

    labels = {n: CONDITIONS.get(n, n) for n in scores}
    dims: list[str] = []
    for found in scores.values():
        for s in found:
            if s.dimension not in dims:
                dims.append(s.dimension)
    rows = []
    for dim in dims:
        level, why = comparison_level(items, dim)
        human = [item.human.get(dim) for item in items]
        human = [float("nan") if h is None else float(h) for h in human]
        docs = [item.source_id or item.source or item.id for item in items]
        groups = docs if level == PER_DOCUMENT else None
        vectors: dict[str, list[float]] = {}
        spreads: dict[str, Any] = {}
        for name, found in scores.items():
            by_text = {s.text_id: s for s in found if s.dimension == dim}
            vectors[name] = [_value(by_text.get(item.id)) for item in items]
            kept = [(by_text[i.id], i) for i in items
                    if not math.isnan(_value(by_text.get(i.id)))]
            patterns = ["".join({"yes": "Y", "no": "N"}.get(a.answer or "", "?")
                                for a in sorted(s.answers, key=lambda a: a.number)) or None
                        for s, _i in kept]
            spreads[name] = judge_spread(
                [s.score for s, _i in kept], patterns=patterns if any(patterns) else None,
                lengths=[word_count(i.text) for _s, i in kept],
                human=[i.human.get(dim) for _s, i in kept], who=labels[name], units="texts",
                n_boot=0)
        lengths = [word_count(item.text) for item in items]
        base = vectors.get(DEFAULT)
        # the length baseline: on the texts the combined checklist scored (else all of them)
        length_x = [x if base is None or not math.isnan(b) else float("nan")
                    for x, b in zip(lengths, base or lengths, strict=True)]
        for name, x in [*vectors.items(), (LENGTH, length_x)]:
            label = labels.get(name, name)
            named = "the texts' lengths" if name == LENGTH else f"the scores of {label}"
            report: GroupedCorrelationReport | CorrelationReport
            if level == PER_DOCUMENT:
                report = grouped_correlations(x, human, docs, n_boot=n_boot, seed=seed,
                                              x_name=named, y_name=f"the human scores of {dim}")
                statistic, documents = "Spearman rho per source document, averaged", \
                    len(report.groups)
            else:
                report = correlations(x, human, n_boot=n_boot, seed=seed, x_name=named,
                                      y_name=f"the human scores of {dim}")
                statistic, documents = "Spearman rho pooled over all texts", None
            rho = report.spearman
            spread = spreads.get(name)
            row: dict[str, Any] = {
                "condition": label, "dimension": dim, "statistic": statistic,
                "compared": level, "value": rho.value, "ci_low": rho.ci_low,
                "ci_high": rho.ci_high, "documents": documents,
                "vs_combined_difference": None, "vs_combined_ci_low": None,
                "vs_combined_ci_high": None, "vs_combined_p": None, "vs_combined_n": None,
                "vs_combined_note": "" if rho.defined else rho.reason, "why_this_way": why,
                "warning": spread.sentence if spread is not None and spread.flagged else "",
                "summary": ""}
            if base is not None and name != DEFAULT:
                test = paired_correlation_difference(x, base, human, method="spearman",
                                                     groups=groups, n_boot=n_boot, seed=seed)
                row.update({"vs_combined_difference": test.difference,
                            "vs_combined_ci_low": test.ci_low,
                            "vs_combined_ci_high": test.ci_high,
                            "vs_combined_p": test.p_value, "vs_combined_n": test.n,
                            "vs_combined_note": test.reason or test.note,
                            "summary": test.summary(label, labels[DEFAULT],
                                                    f"your ratings of {dim}")})
            rows.append(row)
    return rows


def comparison_summary(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The plain summary lines of the comparison (one per condition compared with combined),
    each naming its dimension."""
    return [r["summary"] for r in rows if r.get("summary")]


#: What the comparison's statistic is, in words (the Read me of the Comparison workbook).
STATISTIC = ("Spearman rho with the human scores, per source document averaged (bootstrap 95% "
             "CI over documents; against combined: paired bootstrap over documents) where at "
             "least 10 source documents have two or more texts scored differently by people, "
             "else pooled over all texts (bootstrap over texts; against combined: paired "
             "bootstrap over texts); beside them the length baseline, the texts' number of "
             "words compared the same way")


def how_compared(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """One Read me line per dimension: which way its conditions were compared, and why."""
    seen: dict[str, str] = {}
    for r in rows:
        seen.setdefault(r["dimension"], f"{r['compared']}: {r['why_this_way']}")
    return [(f"How {dim} was compared", line) for dim, line in seen.items()]


def write_comparison(path: Any, runs: Mapping[str, Any], rows: Sequence[dict[str, Any]], *,
                     readme: Sequence[tuple[str, str]] = (),
                     extra_sheets: Sequence[Any] = ()) -> Any:
    """Write the comparison workbook (the wizard and ``evaldesk checklist compare``): sheets
    "Comparison" (:func:`comparison_rows`), "Checklists" (each condition's questions) and
    "Scores" (every text's score per condition; empty = no score, with the reason), and a
    Read me naming the conditions, the statistic and the summary lines. ``runs``: name ->
    ``core.interacteval.session.ConditionRun``; ``extra_sheets`` (:class:`core.tables.Sheet`,
    e.g. the Stability sheet of repeats) come last. Raises :class:`core.tables.TableError`."""
    import pandas as pd

    from core.tables import Sheet, write_workbook

    checklist_rows = [{"condition": CONDITIONS.get(c, c), "dimension": checklist.dimension,
                       "component": q.component, "question": q.question}
                      for c, r in runs.items() for checklist in r.checklists
                      for q in checklist.items]
    score_rows = [{"condition": CONDITIONS.get(c, c), "dimension": s.dimension,
                   "text": s.text_id, "status": s.status, "score": s.score,
                   "human": s.human, "note": s.note}
                  for c, r in runs.items() for s in r.scores]
    notes = [*readme,
             *[("WARNING", f"{r['dimension']}: {r['warning']}") for r in rows
               if r.get("warning")],
             ("Conditions", "; ".join(f"{CONDITIONS.get(c, c)} ({c})" for c in runs)),
             ("Statistic", STATISTIC),
             *how_compared(rows)]
    notes += [("Could not be built", f"{CONDITIONS.get(c, c)}: {p}")
              for c, r in runs.items() for p in r.problems]
    notes += [("Summary", line) for line in comparison_summary(rows)]
    return write_workbook(path, [
        Sheet("Comparison", pd.DataFrame(list(rows), columns=COMPARISON_COLUMNS),
              "each condition's agreement with the human scores, and each against combined "
              "(per source document or pooled over all texts: see compared and "
              "why_this_way); the length baseline last",
              number_formats={c: "0.000" for c in COMPARISON_COLUMNS
                              if c in ("value", "ci_low", "ci_high", "vs_combined_difference",
                                       "vs_combined_ci_low", "vs_combined_ci_high",
                                       "vs_combined_p")}),
        Sheet("Checklists", pd.DataFrame(checklist_rows, columns=[
            "condition", "dimension", "component", "question"]),
              "the questions of each condition's checklist"),
        Sheet("Scores", pd.DataFrame(score_rows, columns=[
            "condition", "dimension", "text", "status", "score", "human", "note"]),
              "every text's score with each condition (empty = no score, see note)"),
        *extra_sheets,
    ], notes)
