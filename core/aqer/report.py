"""AQER's workbook: the sheets and columns of the Excel contract in ``AQER.md``.

Sheets: ``Workers``, ``Responses``, ``Questions``, ``LLM answers`` and ``LLM summary`` (when
LLM answers were given), ``Convergence``, ``Agreement`` (when the sheet had expert grades),
``Warnings`` and ``Read me``. The CLI and the GUI write the same workbook through
:func:`write_report`.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Mapping

from core.aqer.model import AqerResult

__all__ = ["readme_rows", "report_sheets", "scored_when", "write_report"]

_WORKERS = (
    "One row per worker, best first. score: the paper's grade, min-max scaled (best 1, worst 0). "
    "raw_score: mean cosine similarity of the worker's answers with the synthetic exemplary "
    "answers (SEA). weight: the worker's voting weight in the final SEA (weights sum to 1). "
    "rank: 1 = best. answered: answers that count in the score. blank: questions left blank that "
    "count as the weakest answer (see Read me). similarity_to_others: mean similarity of the "
    "worker's answers with the consensus of the OTHER workers (final weights), the measure AI "
    "answers are compared with. simplified_score: one pass with equal weights (the paper's "
    "ablation). rasa_skill: RASA reliability (higher = better). f1, bleu1: mean token F1 / "
    "BLEU-1 against the other workers' answers. expert_grade: mean grade of the answers AQER "
    "scored."
)
_RESPONSES = (
    "Every answer with its cosine similarity to the SEA of its question (empty: not scored, "
    "see Warnings). A row with an empty response is a question left blank that counts as the "
    "weakest answer."
)
_QUESTIONS = (
    "Per question: mean similarity of the answers to the SEA (lower = harder or more varied), "
    "the answer closest to the SEA (best-response selection) and its worker, number of answers."
)
_LLM = (
    "Each LLM answer scored by its cosine similarity to the SEA built from the workers' answers "
    "with the final weights (LLM answers never enter the SEA unless scored as workers). An empty "
    "response is a question the LLM left blank, counted as the weakest answer. model_mean: the "
    "model's mean. workers_similarity_to_others: the workers' mean similarity on that question "
    "to the consensus of the other workers (like for like with the LLM's score)."
)
_LLM_SUMMARY = (
    "Per LLM: mean score over its scored answers (counted blanks included), how many answers "
    "were scored, given and left blank; percentile_among_workers: the share of workers (0-100) "
    "whose similarity to the consensus of the other workers is below the LLM's mean score."
)
_CONVERGENCE = "Root mean squared change of the workers' weights after each round."
_AGREEMENT = (
    "Correlation of each method with the expert grades in the input: per worker (mean grade of "
    "the answers AQER scored) and per answer; rows starting 'AI answers' compare the AI answers' "
    "AQER scores with the grades given to them (all models pooled, then each model)."
)
_WARNINGS = "Everything left out or worth checking, with the row of the input it concerns."


def readme_rows(
    result: AqerResult, inputs: Mapping[str, Any] | None = None
) -> list[tuple[str, str]]:
    """The ``Read me`` sheet: what was run, on what, with which settings, and what to watch."""
    s = result.settings
    rows: list[tuple[str, str]] = [
        ("Method", "AQER: scoring crowd workers and LLM answers without ground truth"),
        (
            "Source",
            "Information Systems Research, doi 10.1287/isre.2023.0426 (Algorithm 1, sections "
            "4.1-4.5)",
        ),
        ("Date", datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")),
        ("Scored on", scored_when(result.computed_at)),
    ]
    for key, value in (inputs or {}).items():
        rows.append((str(key), str(value)))
    rows += [
        ("Embedding model", result.embedding_model or "(not recorded)"),
        ("Device", result.device or "(not recorded)"),
        ("Maximum rounds", str(s.max_iterations)),
        ("Tolerance (RMSE of weights)", f"{s.tolerance:g}"),
        (
            "Rounds run",
            f"{result.iterations} ("
            + (
                "converged"
                if result.converged
                else "tie: responses do not discriminate between workers"
                if not result.discriminates
                else "not converged"
            )
            + ")",
        ),
        ("LLM answers scored as workers", "yes" if s.llm_as_workers else "no"),
        ("Baselines", "RASA, F1, BLEU-1" if s.baselines else "not computed"),
        (
            "How it works",
            "Each answer is turned into a vector by the embedding model. The synthetic "
            "exemplary answer (SEA) of a question is the weighted mean of the workers' vectors. "
            "Each worker's raw score is the mean cosine similarity of their answers with the "
            "SEAs; scores are min-max scaled across workers and become the new weights; this "
            "repeats until the weights stop changing.",
        ),
        (
            "Weight 0",
            "The lowest-scoring worker gets score 0 and therefore weight 0 in the final round: "
            "this is by design in the paper (min-max scaling), not an error.",
        ),
        (
            "Blank answers",
            ("Counted as the weakest answer. " if result.blank_rule == "worst"
             else "Not counted. ")
            + (result.blank_reason or "")
            + " Each question's SEA uses only the answers given to it.",
        ),
        ("AI answers compared with", _ai_comparison(result)),
        (
            "Expert grades",
            "A worker's expert grade is the mean grade of the answers AQER scored (and of the "
            "blanks it counted), so both sides cover the same answers.",
        ),
        ("Warnings", f"{len(result.warnings)} (all of them are on the Warnings sheet)"),
    ]
    shown = 10
    for k, notice in enumerate(result.warnings[:shown], start=1):
        rows.append((f"Warning {k}", notice.message))
    if len(result.warnings) > shown:
        rows.append(("More warnings", f"{len(result.warnings) - shown} more on the Warnings sheet"))
    return rows


def scored_when(stamp: str) -> str:
    """An ISO time as "2026-05-04 14:03 UTC" ("(not recorded)" for results of older versions)."""
    if not stamp:
        return "(not recorded)"
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _ai_comparison(result: AqerResult) -> str:
    if result.settings.llm_as_workers:
        return (
            "AI answers were scored as extra workers: they shape the consensus and are ranked "
            "with the workers."
        )
    return (
        "Each AI answer is compared with the consensus of all workers (final weights). A "
        "worker's own answer is part of that consensus, so workers are placed beside the AIs by "
        "their similarity to the consensus of the OTHER workers (similarity_to_others, like for "
        "like); percentile_among_workers is the share of workers below the AI on that measure."
    )


def report_sheets(result: AqerResult) -> list[Any]:
    """The workbook's sheets (``core.tables.Sheet``) in order."""
    from core.tables import Sheet

    sheets = [
        Sheet("Workers", result.workers, description=_WORKERS),
        Sheet("Responses", result.responses, description=_RESPONSES),
        Sheet("Questions", result.questions, description=_QUESTIONS),
    ]
    if len(result.llm_answers):
        sheets.append(Sheet("LLM answers", result.llm_answers, description=_LLM))
        sheets.append(Sheet("LLM summary", result.llm_summary, description=_LLM_SUMMARY))
    sheets.append(Sheet("Convergence", result.convergence, description=_CONVERGENCE))
    if len(result.agreement):
        sheets.append(Sheet("Agreement", result.agreement, description=_AGREEMENT))
    sheets.append(Sheet("Warnings", result.warnings_frame(), description=_WARNINGS))
    return sheets


def write_report(
    result: AqerResult, path: str | Path, inputs: Mapping[str, Any] | None = None
) -> Path:
    """Write the AQER workbook to ``path`` (.xlsx) and return the path."""
    from core.tables import write_workbook

    path = Path(path)
    write_workbook(path, report_sheets(result), readme=readme_rows(result, inputs))
    return path
