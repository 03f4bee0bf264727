"""AQER's workbook: the sheets and columns of the Excel contract in ``AQER.md``.

Sheets, in the results page's words with numbers shown rounded: ``Workers`` (the expert grade
beside the score), ``Answers`` (one row per worker and question: answer, similarity, grade),
``Questions``, ``AI answers`` and ``AI summary`` (when AI answers were given), ``Convergence``,
``Agreement`` (when the sheet had expert grades), ``Comparison`` (the conditions side by side,
when graded) and ``Workers needed`` (when computed; ``core.aqer.comparison``), ``Warnings``; then ``Raw numbers`` (every
number at full precision under the contract's column names) and ``Read me``. The CLI and the GUI write the same workbook through
:func:`write_report`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core.aqer.agreement import N_BOOT, SEED
from core.aqer.llm_answers import STYLE_WORDS
from core.aqer.model import (
    AGREEMENT_COLUMNS,
    CONVERGENCE_COLUMNS,
    LLM_ANSWER_COLUMNS,
    LLM_SUMMARY_COLUMNS,
    QUESTION_COLUMNS,
    RESPONSE_COLUMNS,
    WARNING_COLUMNS,
    WORKER_COLUMNS,
    AqerResult,
    scored_when,
)
from core.words import plain_number

__all__ = [
    "FORMATS",
    "LABELS",
    "answers_by_person",
    "per_person_grades",
    "raw_numbers",
    "read_report",
    "readme_rows",
    "report_sheets",
    "write_report",
]

#: The workbook's words for the result frames' columns: the same as the results page's
#: (``desktop/aqer/results.py``; a test keeps them equal). Raw names stay on "Raw numbers".
LABELS: dict[str, dict[str, str]] = {
    "workers": {
        "rank": "Rank",
        "worker": "Worker",
        "score": "Score",
        "expert_grade": "Expert grade",
        "raw_score": "Mean similarity",
        "weight": "Weight",
        "answered": "Answers",
        "blank": "Left blank",
        "similarity_to_others": "Similarity to the others",
        "simplified_score": "One-pass score",
        "rasa_skill": "RASA skill",
        "f1": "F1",
        "bleu1": "BLEU-1",
        "is_llm": "AI",
        "note": "Note",
    },
    "answers": {
        "worker": "Worker",
        "question": "Question",
        "response": "Answer",
        "similarity": "Similarity",
        "grade": "Expert grade",
        "is_llm": "AI",
    },
    "questions": {
        "question": "Question",
        "mean_similarity": "Mean similarity",
        "answered": "Answers",
        "best_response": "Answer closest to the class's consensus",
        "best_worker": "Written by",
        "camps": "Answers split into camps",
    },
    "llm_answers": {
        "model": "AI model",
        "question": "Question",
        "response": "Answer",
        "score": "Similarity",
        "workers_similarity_to_others": "Workers' mean (like for like)",
        "model_mean": "Mean similarity",
    },
    "llm_summary": {
        "model": "AI model",
        "score_on_workers_scale": "Score on the workers' 0-1 scale",
        "percentile_among_workers": "Above % of workers",
        "mean_score": "Mean similarity",
        "scored": "Scored",
        "answered": "Answered",
        "blank": "Left blank",
    },
    "convergence": {"iteration": "Round", "rmse": "Change in weights"},
    "agreement": {
        "comparison": "Comparison",
        "statistic": "Statistic",
        "kind": "Compared",
        "value": "Value",
        "ci_low": "95% CI low",
        "ci_high": "95% CI high",
        "p_value": "p",
        "n": "n",
        "note": "Note",
    },
    "warnings": {
        "topic": "Topic",
        "message": "What happened",
        "question": "Question",
        "worker": "Worker",
        "row": "Row",
    },
}

#: Excel number formats by column (the cells keep their full values; only the display rounds).
_SCORE, _GRADE, _INT = "0.000", "0.00", "0"
FORMATS: dict[str, str] = {
    "score": _SCORE, "raw_score": _SCORE, "similarity_to_others": _SCORE,
    "simplified_score": _SCORE, "f1": _SCORE, "bleu1": _SCORE, "similarity": _SCORE,
    "mean_similarity": _SCORE, "model_mean": _SCORE, "workers_similarity_to_others": _SCORE,
    "mean_score": _SCORE, "score_on_workers_scale": _SCORE, "weight": "0.0000", "rasa_skill": _GRADE, "expert_grade": _GRADE,
    "grade": _GRADE, "rank": _INT, "answered": _INT, "blank": _INT, "scored": _INT,
    "iteration": _INT, "n": _INT, "row": _INT, "percentile_among_workers": '0"%"',
    "rmse": "0.0#########", "value": _SCORE, "ci_low": _SCORE, "ci_high": _SCORE,
    "p_value": '[<0.001]"< 0.001";0.000',
}

def _workers_words(result: AqerResult) -> str:
    grade = ("Expert grade: the grade your sheet gives each person (one per person; for "
             "comparison only)." if per_person_grades(result) else
             "Expert grade: the mean of the grades in your sheet for the answers AQER scored "
             "(for comparison only).")
    return (
        "One row per worker, best first. Score: AQER's grade from 0 to 1 (the weakest worker "
        f"gets 0, the best 1). {grade} Mean similarity: how close the worker's answers are to "
        "the consensus answers on average. Weight: the worker's say in the final consensus "
        "(the weights add up to 1). Answers: answers that count in the score. Left blank: "
        "questions left blank that count as the weakest answer (see Read me). Similarity to "
        "the others: like Mean similarity, but against the consensus of the OTHER workers, the "
        "measure AI answers are compared with. One-pass score: one pass with equal weights "
        "(the paper's simpler variant). RASA skill, F1, BLEU-1: other published ways to score "
        "answers, for comparison. Note: \"absent?\" marks a person who answered nothing and is "
        "left out of the scale (see Warnings)."
    )


def per_person_grades(result: AqerResult) -> bool:
    """True when the expert grades are one per person (a grade column or a grades sheet),
    not the mean grade of each person's answers."""
    frame = result.agreement
    return bool(len(frame)) and frame["comparison"].astype(str).str.contains(
        "vs expert grade (per worker)", regex=False).any()


_ANSWERS = (
    "One row per worker and question: the answer, its similarity to the question's consensus "
    "answer (0 to 1, empty: not scored, see Warnings) and the expert grade when your sheet had "
    "one. An empty answer is a question left blank that counts as the weakest answer."
)
_QUESTIONS = (
    "Per question: mean similarity of the answers to the consensus (lower = harder or more "
    "varied), the answer closest to the class's consensus and who wrote it, the number of "
    "answers. The consensus is what most answers say, not necessarily what is right: where the "
    "answers split into camps of similar size (last column), the consensus sides with one camp "
    "(usually the larger) even when it is the common mistake, so check that question by hand."
)
_LLM = (
    "Each AI answer with its similarity to the consensus built from the workers' answers (AI "
    "answers never shape the consensus unless scored as workers). An empty answer is a "
    "question the AI left blank, counted as the weakest answer. Workers' mean (like for like): "
    "the workers' mean similarity on that question to the consensus of the OTHER workers. "
    + STYLE_WORDS
)
_LLM_SUMMARY = (
    "Per AI model, on the workers' scale: Score on the workers' 0-1 scale is the score a "
    "worker with the AI's similarity (like for like) would have, comparable with the Score on "
    "the Workers sheet; Above % of workers is the share of workers whose similarity to the "
    "consensus of the other workers is below the AI's. Mean similarity is the raw measure "
    "behind both (a cosine, not a score: do not compare it with a worker's Score), over its "
    "scored answers (counted blanks included), with how many answers were scored, given and "
    "left blank. " + STYLE_WORDS
)
_CONVERGENCE = "How much the workers' weights changed after each round (root mean square)."
def _agreement_words(result: AqerResult) -> str:
    grade = ("the grade your sheet gives each person" if per_person_grades(result)
             else "the mean grade of the answers AQER scored")
    return (
        "How well each method's scores agree with the expert grades in your sheet: per worker "
        f"({grade}) and, when answers have grades, per answer; rows starting 'AI answers' "
        "compare the AI answers' scores with the grades given to them (all models pooled, then "
        f"each model). Per worker, the 95% CI is a bootstrap of {N_BOOT:,} resamples (seed "
        f"{SEED}), the same as on the Comparison sheet, so one number has one interval."
    )


_WARNINGS = "Everything left out or worth checking, with the row of the input it concerns."
_RAW = (
    "Every number of this workbook at full precision, one per row, under its name in AQER's "
    "file format (for programs and for checking): which sheet, worker or AI model, question, "
    "measure, value."
)


def readme_rows(
    result: AqerResult, inputs: Mapping[str, Any] | None = None
) -> list[tuple[str, str]]:
    """The ``Read me`` sheet: what was run, on what, with which settings, and what to watch."""
    s = result.settings
    rows: list[tuple[str, str]] = [
        ("Method", "AQER: scoring crowd workers and LLM answers without ground truth"),
        (
            "Source",
            ("Information Systems Research, doi 10.1287/isre.2023.0426 (Algorithm 1, sections "
            "4.1-4.5)"),
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
        ("Tolerance (RMSE of weights)", plain_number(s.tolerance)),
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
            ("Each answer is turned into a vector by the embedding model. The synthetic "
            "exemplary answer (SEA) of a question is the weighted mean of the workers' vectors. "
            "Each worker's raw score is the mean cosine similarity of their answers with the "
            "SEAs; scores are min-max scaled across workers and become the new weights; this "
            "repeats until the weights stop changing."),
        ),
        (
            "Weight 0",
            ("The lowest-scoring worker gets score 0 and therefore weight 0 in the final round: "
            "this is by design in the paper (min-max scaling), not an error."),
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
            "Each person's own grade from your sheet (one grade per person), compared with "
            "their AQER score as it is." if per_person_grades(result) else
            "A worker's expert grade is the mean grade of the answers AQER scored (and of the "
            "blanks it counted), so both sides cover the same answers.",
        ),
        (
            "People who answered nothing",
            ("Scored as the weakest (your choice)." if s.keep_absent and
             result.blank_rule == "worst" else
             "Left out of the 0-1 scale and listed as \"absent?\" (on the Workers sheet and "
             "under Warnings), so they do not become its 0 and move everyone else's score."),
        ),
        (
            "Answer closest to the class's consensus",
            ("AQER cannot know the truth: the answer closest to the consensus is what most "
            "answers say. A question whose answers split into camps of similar size (found from "
            "the embeddings) is marked on the Questions sheet and under Warnings: check it by "
            "hand."),
        ),
        (
            "Numbers",
            ("Shown rounded (3 decimals for scores and similarities, 2 for grades); each cell "
            "keeps its full value, and the Raw numbers sheet lists every number at full "
            "precision under its name in AQER's file format."),
        ),
        ("Warnings", f"{len(result.warnings)} (all of them are on the Warnings sheet)"),
    ]
    shown = 10
    for k, notice in enumerate(result.warnings[:shown], start=1):
        rows.append((f"Warning {k}", notice.message))
    if len(result.warnings) > shown:
        rows.append(("More warnings", f"{len(result.warnings) - shown} more on the Warnings sheet"))
    return rows


def _ai_comparison(result: AqerResult) -> str:
    if result.settings.llm_as_workers:
        return (
            "AI answers were scored as extra workers: they shape the consensus and are ranked "
            "with the workers."
        )
    return (
        "Each AI answer is compared with the consensus of all workers (final weights). A "
        "worker's own answer is part of that consensus, so workers are placed beside the AIs by "
        "their similarity to the consensus of the OTHER workers (\"Similarity to the others\", "
        "like for like); \"Above % of workers\" is the share of workers below the AI on that "
        "measure, and \"Score on the workers' 0-1 scale\" the score a worker with the AI's "
        "similarity would have. " + STYLE_WORDS
    )


def report_sheets(result: AqerResult) -> list[Any]:
    """The workbook's sheets (``core.tables.Sheet``) in order: readable sheets in the results
    page's words, numbers shown rounded, then "Raw numbers"."""
    from core.tables import Sheet

    def sheet(name: str, frame: pd.DataFrame, labels: str, description: str) -> Sheet:
        words = LABELS[labels]
        order = [c for c in words if c in frame.columns]
        order += [c for c in frame.columns if c not in words]
        shown = frame[order].rename(columns=words)
        formats = {words.get(c, c): FORMATS[c] for c in order if c in FORMATS}
        return Sheet(name, shown, description=description, number_formats=formats)

    sheets = [
        sheet("Workers", result.workers, "workers", _workers_words(result)),
        sheet("Answers", answers_by_person(result), "answers", _ANSWERS),
        sheet("Questions", result.questions, "questions", _QUESTIONS),
    ]
    if len(result.llm_answers):
        sheets.append(sheet("AI answers", result.llm_answers, "llm_answers", _LLM))
        sheets.append(sheet("AI summary", result.llm_summary, "llm_summary", _LLM_SUMMARY))
    sheets.append(sheet("Convergence", result.convergence, "convergence", _CONVERGENCE))
    if len(result.agreement):
        sheets.append(sheet("Agreement", result.agreement, "agreement",
                            _agreement_words(result)))
    sheets.append(sheet("Warnings", result.warnings_frame(), "warnings", _WARNINGS))
    sheets.append(Sheet("Raw numbers", raw_numbers(result), description=_RAW))
    return sheets


def answers_by_person(result: AqerResult) -> pd.DataFrame:
    """The answers, one row per worker and question: workers in the Workers sheet's order (best
    first), questions in the order they were asked."""
    answers = result.responses
    people = {name: k for k, name in enumerate(result.workers["worker"])}
    asked = {q: k for k, q in enumerate(result.questions["question"])}
    order = sorted(
        range(len(answers)),
        key=lambda i: (people.get(answers["worker"].iat[i], len(people)),
                       asked.get(answers["question"].iat[i], len(asked)), i),
    )
    return answers.iloc[order].reset_index(drop=True)


#: Which frame is which sheet on "Raw numbers", and the columns that say whose number it is.
_RAW_FRAMES = (
    ("Workers", "workers", "worker", None),
    ("Answers", "responses", "worker", "question"),
    ("Questions", "questions", None, "question"),
    ("AI answers", "llm_answers", "model", "question"),
    ("AI summary", "llm_summary", "model", None),
)
#: Columns that hold words, never numbers (an answer "4.39" is an answer, not a number).
_TEXT = {"worker", "question", "model", "response", "best_response", "best_worker", "is_llm"}


def raw_numbers(result: AqerResult) -> pd.DataFrame:
    """Every number of the result frames at full precision: sheet, worker or AI model,
    question, measure (the frame's own column name), value. Empty numbers are left out."""
    rows: list[tuple[str, Any, Any, str, float]] = []
    for sheet_name, attribute, who, question in _RAW_FRAMES:
        frame = getattr(result, attribute)
        measures = [c for c in frame.columns if c not in _TEXT and c not in (who, question)]
        for record in frame.to_dict("records"):
            for measure in measures:
                value = record.get(measure)
                if value is None or isinstance(value, bool | np.bool_):
                    continue
                try:
                    number = float(value)
                except (TypeError, ValueError):
                    continue
                if np.isfinite(number):
                    rows.append((sheet_name, record.get(who) if who else None,
                                 record.get(question) if question else None, measure, number))
    return pd.DataFrame(rows, columns=["Sheet", "Worker or AI model", "Question", "Measure",
                                       "Value"])


#: Readable sheet -> (the contract's sheet name in ``AQER.md``, its labels, its column order).
_CONTRACT = {
    "Workers": ("Workers", "workers", WORKER_COLUMNS),
    "Answers": ("Responses", "answers", RESPONSE_COLUMNS),
    "Questions": ("Questions", "questions", QUESTION_COLUMNS),
    "AI answers": ("LLM answers", "llm_answers", LLM_ANSWER_COLUMNS),
    "AI summary": ("LLM summary", "llm_summary", LLM_SUMMARY_COLUMNS),
    "Convergence": ("Convergence", "convergence", CONVERGENCE_COLUMNS),
    "Agreement": ("Agreement", "agreement", AGREEMENT_COLUMNS),
    "Warnings": ("Warnings", "warnings", WARNING_COLUMNS),
}


def read_report(path: str | Path) -> dict[str, pd.DataFrame]:
    """An AQER workbook read back as the contract's tables (``AQER.md``): the sheets under
    their contract names ("Responses", "LLM answers", ...) with the contract's column names
    and order; "Raw numbers" and "Read me" as they are. For programs and tests."""
    book = pd.read_excel(path, sheet_name=None)
    tables: dict[str, pd.DataFrame] = {}
    for name, frame in book.items():
        if name not in _CONTRACT:
            tables[name] = frame
            continue
        contract, labels, order = _CONTRACT[name]
        frame = frame.rename(columns={v: k for k, v in LABELS[labels].items()})
        columns = [c for c in order if c in frame.columns]
        tables[contract] = frame[columns + [c for c in frame.columns if c not in columns]]
    return tables


def write_report(
    result: AqerResult, path: str | Path, inputs: Mapping[str, Any] | None = None,
    comparison: Any = None, curve: Any = None,
) -> Path:
    """Write the AQER workbook to ``path`` (.xlsx) and return the path. ``comparison`` (a
    :class:`core.aqer.comparison.Comparison`) adds the "Comparison" sheet when it has rows;
    ``curve`` (a :class:`core.aqer.comparison.WorkersCurve`) the "Workers needed" sheet."""
    from core.aqer.comparison import comparison_sheets
    from core.tables import write_workbook

    path = Path(path)
    sheets = report_sheets(result)
    extra, notes = comparison_sheets(comparison, curve)
    at = next((k for k, s in enumerate(sheets) if s.name == "Warnings"), len(sheets))
    sheets[at:at] = extra
    write_workbook(path, sheets, readme=readme_rows(result, inputs) + notes)
    return path
