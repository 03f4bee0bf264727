"""AQER: scoring crowd workers and LLM answers without ground truth (spec: AQER.md).

    from core.aqer import ColumnRoles, aqer, read_responses, write_report
    prepared = read_responses("answers.xlsx", ColumnRoles(format="wide", question_col="Question"))
    result = aqer(prepared, encoder, progress=progress, cancel=cancel)
    write_report(result, "aqer-results.xlsx")

Where to look: ``inputs.py`` reads the answers files and guesses their column roles,
``pipeline.py`` composes the paper's stages, ``session/`` keeps choices, inputs, embeddings and
results in the project (:class:`core.aqer.session.AqerSession`: the wizard and ``evaldesk aqer``
both call it), ``report.py`` writes the workbook.

Names are re-exported lazily so that importing this package does not import pandas or numpy
(the imports under ``TYPE_CHECKING`` say where each name lives, for readers and their tools).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from core.aqer.best_response import best_responses
    from core.aqer.blanks import BlankRule, blank_rule
    from core.aqer.inputs import read_responses
    from core.aqer.iterative_reweighting import ReweightingOutcome, iterative_reweighting
    from core.aqer.llm_answers import score_llm_answers
    from core.aqer.model import (
        AqerChoices,
        AqerNotice,
        AqerResult,
        AqerSettings,
        ColumnRoles,
    )
    from core.aqer.pipeline import aqer, embed_texts
    from core.aqer.pseudo_reference import bleu1, pseudo_reference_scores, token_f1
    from core.aqer.rasa import rasa_skills
    from core.aqer.report import report_sheets, write_report
    from core.aqer.responses import (
        AqerInputError,
        PreparedResponses,
        clean_responses,
        long_responses,
        prepare_responses,
        wide_responses,
    )
    from core.aqer.synthetic_exemplary_answer import (
        EmbeddedResponses,
        leave_one_out_similarity,
        similarity_to_sea,
        synthetic_exemplary_answers,
    )

_EXPORTS = {
    "aqer": "core.aqer.pipeline",
    "AqerChoices": "core.aqer.model",
    "ColumnRoles": "core.aqer.model",
    "embed_texts": "core.aqer.pipeline",
    "AqerNotice": "core.aqer.model",
    "AqerResult": "core.aqer.model",
    "AqerSettings": "core.aqer.model",
    "BlankRule": "core.aqer.blanks",
    "blank_rule": "core.aqer.blanks",
    "leave_one_out_similarity": "core.aqer.synthetic_exemplary_answer",
    "AqerInputError": "core.aqer.responses",
    "PreparedResponses": "core.aqer.responses",
    "clean_responses": "core.aqer.responses",
    "long_responses": "core.aqer.responses",
    "wide_responses": "core.aqer.responses",
    "prepare_responses": "core.aqer.responses",
    "read_responses": "core.aqer.inputs",
    "EmbeddedResponses": "core.aqer.synthetic_exemplary_answer",
    "synthetic_exemplary_answers": "core.aqer.synthetic_exemplary_answer",
    "similarity_to_sea": "core.aqer.synthetic_exemplary_answer",
    "iterative_reweighting": "core.aqer.iterative_reweighting",
    "ReweightingOutcome": "core.aqer.iterative_reweighting",
    "rasa_skills": "core.aqer.rasa",
    "pseudo_reference_scores": "core.aqer.pseudo_reference",
    "token_f1": "core.aqer.pseudo_reference",
    "bleu1": "core.aqer.pseudo_reference",
    "score_llm_answers": "core.aqer.llm_answers",
    "best_responses": "core.aqer.best_response",
    "report_sheets": "core.aqer.report",
    "write_report": "core.aqer.report",
}

__all__ = [
    "AqerChoices",
    "AqerInputError",
    "AqerNotice",
    "AqerResult",
    "AqerSettings",
    "BlankRule",
    "ColumnRoles",
    "EmbeddedResponses",
    "PreparedResponses",
    "ReweightingOutcome",
    "aqer",
    "best_responses",
    "blank_rule",
    "bleu1",
    "clean_responses",
    "embed_texts",
    "iterative_reweighting",
    "leave_one_out_similarity",
    "long_responses",
    "prepare_responses",
    "pseudo_reference_scores",
    "rasa_skills",
    "read_responses",
    "report_sheets",
    "score_llm_answers",
    "similarity_to_sea",
    "synthetic_exemplary_answers",
    "token_f1",
    "wide_responses",
    "write_report",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'core.aqer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
