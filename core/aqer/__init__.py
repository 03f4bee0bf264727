"""AQER: scoring crowd workers and LLM answers without ground truth (spec: AQER.md).

    from core.aqer import aqer, read_responses, write_report
    prepared = read_responses("answers.xlsx", format="wide", question_col="Question")
    result = aqer(prepared, encoder, progress=progress, cancel=cancel)
    write_report(result, "aqer-results.xlsx")

Where to look: ``inputs.py`` reads the answers files, ``pipeline.py`` composes the paper's
stages, ``session.py`` keeps choices, inputs, embeddings and results in the project (the wizard
and ``evaldesk aqer`` both call it), ``report.py`` writes the workbook.

Names are re-exported lazily so that importing this package does not import pandas or numpy.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "aqer": "core.aqer.pipeline",
    "AqerSetup": "core.aqer.model",
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

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'core.aqer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
