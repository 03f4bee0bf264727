"""InteractEval's conditions side by side (the paper's main result, on the user's own texts):
checklists built from the people's think-aloud notes only, from the models' think-aloud only,
and from both (the method), each scoring the same texts; optionally a single judge that gives
each text a 1-5 score with the dimension's definition and no checklist
(:mod:`core.interacteval.single_judge`). Running and keeping them in a project is
``core.interacteval.session.run_conditions`` / ``load_conditions`` (the wizard and the CLI).

:func:`build_conditions` builds one checklist per condition (``core.interacteval.pipeline.
build_checklist``; the models' think-aloud is the same call for "ai" and "combined", so it is
asked once and then read from the cache). :func:`comparison_rows` compares the conditions'
scores with the human scores as the paper does: Spearman's rho per source document, averaged,
with a bootstrap CI over documents, and each condition against "combined" with the paired
bootstrap test over documents (:func:`core.stats.paired_correlation_difference` with
``groups``; "not enough units" below 10).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.interacteval.model import Attribute, Dimension, ScoredSample, TextItem, TextScore
from core.runs import CancelToken, Progress
from core.words import choose_from

__all__ = ["CHECKLIST_CONDITIONS", "COMPARISON_COLUMNS", "CONDITIONS", "DEFAULT", "STATISTIC",
           "build_conditions", "comparison_rows", "comparison_summary", "parse_conditions",
           "write_comparison"]

CONDITIONS = {
    "human": "Checklist from people's notes only",
    "ai": "Checklist from the models' think-aloud only",
    "combined": "Checklist from both (the method)",
    "single-judge": "Single judge, 1-5 with the definition (no checklist)",
}
#: The conditions that build a checklist (the single judge scores without one).
CHECKLIST_CONDITIONS = ("human", "ai", "combined")
DEFAULT = "combined"

COMPARISON_COLUMNS = [
    "condition", "dimension", "statistic", "value", "ci_low", "ci_high", "documents",
    "vs_combined_difference", "vs_combined_ci_low", "vs_combined_ci_high", "vs_combined_p",
    "vs_combined_n", "vs_combined_note", "summary",
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


def comparison_rows(scores: Mapping[str, Sequence[TextScore]], items: Sequence[TextItem],
                    *, n_boot: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """The comparison table (:data:`COMPARISON_COLUMNS`), one row per condition and dimension:
    Spearman's rho with the human scores per source document, averaged (bootstrap CI over
    documents), and against "combined" the paired test over documents. Texts that are
    think-aloud samples of their dimension are left out (as in the agreement)."""
    from core.stats import grouped_correlations, paired_correlation_difference

    labels = {n: CONDITIONS.get(n, n) for n in scores}
    dims: list[str] = []
    for found in scores.values():
        for s in found:
            if s.dimension not in dims:
                dims.append(s.dimension)
    rows = []
    for dim in dims:
        human = [item.human.get(dim) for item in items]
        human = [float("nan") if h is None else float(h) for h in human]
        docs = [item.source_id or item.source or item.id for item in items]
        vectors = {}
        for name, found in scores.items():
            by_text = {s.text_id: s for s in found if s.dimension == dim}
            vectors[name] = [_value(by_text.get(item.id)) for item in items]
        base = vectors.get(DEFAULT)
        for name, x in vectors.items():
            report = grouped_correlations(x, human, docs, n_boot=n_boot, seed=seed,
                                          x_name=f"the scores of {labels[name]}",
                                          y_name=f"the human scores of {dim}")
            rho = report.spearman
            row: dict[str, Any] = {
                "condition": labels[name], "dimension": dim,
                "statistic": "Spearman rho per source document, averaged",
                "value": rho.value, "ci_low": rho.ci_low, "ci_high": rho.ci_high,
                "documents": len(report.groups), "vs_combined_difference": None,
                "vs_combined_ci_low": None, "vs_combined_ci_high": None,
                "vs_combined_p": None, "vs_combined_n": None,
                "vs_combined_note": "" if rho.defined else rho.reason, "summary": ""}
            if base is not None and name != DEFAULT:
                test = paired_correlation_difference(x, base, human, method="spearman",
                                                     groups=docs, n_boot=n_boot, seed=seed)
                row.update({"vs_combined_difference": test.difference,
                            "vs_combined_ci_low": test.ci_low,
                            "vs_combined_ci_high": test.ci_high,
                            "vs_combined_p": test.p_value, "vs_combined_n": test.n,
                            "vs_combined_note": test.reason or test.note,
                            "summary": test.summary(labels[name], labels[DEFAULT],
                                                    f"your ratings of {dim}")})
            rows.append(row)
    return rows


def comparison_summary(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The plain summary lines of the comparison (one per condition compared with combined),
    each naming its dimension."""
    return [r["summary"] for r in rows if r.get("summary")]


#: What the comparison's statistic is, in words (the Read me of the Comparison workbook).
STATISTIC = ("Spearman rho with the human scores per source document, averaged, bootstrap 95% "
             "CI over documents; against combined: paired bootstrap over documents (not "
             "computed below 10 documents)")


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
             ("Conditions", "; ".join(f"{CONDITIONS.get(c, c)} ({c})" for c in runs)),
             ("Statistic", STATISTIC)]
    notes += [("Could not be built", f"{CONDITIONS.get(c, c)}: {p}")
              for c, r in runs.items() for p in r.problems]
    notes += [("Summary", line) for line in comparison_summary(rows)]
    return write_workbook(path, [
        Sheet("Comparison", pd.DataFrame(list(rows), columns=COMPARISON_COLUMNS),
              "each condition's agreement with the human scores, and each against combined",
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
