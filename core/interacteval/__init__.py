"""InteractEval (Chu, Kim & Yi, CHI '25): checklists from human and LLM think-aloud, then
checklist scoring. See ``model.py`` for the types, ``inputs.py`` for every file reader and
``session/`` for what the wizard and the ``evaldesk checklist`` command keep in a project (the
only code of the method that touches it).

The wizard drives the stages one at a time; each takes the previous (possibly edited) result:

    ta = await think_aloud(dimension, samples, {"GPT-4o": gw1, "Llama": gw2})
    attributes = ta.merged(parse_notes(typed_text, "Anna"))
    components = await extract_components(dimension, attributes, builder)
    clusters = await cluster_attributes(dimension, components, attributes, builder)
    keys = await generate_key_questions(dimension, clusters, builder)
    subs = await generate_sub_questions(dimension, keys, builder)
    checklist = await validate_questions(dimension, subs, builder)
    run = await score_texts([checklist], items, gateway)
"""

from core.interacteval import model as _model
from core.interacteval.agreement import DimensionAgreement, agreement_rows, human_agreement
from core.interacteval.attribute_clustering import cluster_attributes
from core.interacteval.checklist_scoring import (
    checklist_score,
    legacy_count,
    parse_answer,
    score_text,
)
from core.interacteval.component_extraction import MAX_COMPONENTS, extract_components
from core.interacteval.inputs import (
    ChecklistRead,
    NotesRead,
    SamplesRead,
    parse_notes,
    read_checklists,
    read_notes,
    read_samples,
)
from core.interacteval.key_questions import generate_key_questions
from core.interacteval.model import *  # the types, listed once in model.__all__
from core.interacteval.pipeline import (
    ChecklistBuild,
    ScoringRun,
    build_checklist,
    score_texts,
)
from core.interacteval.report import write_checklists, write_results
from core.interacteval.samples import suggest_samples
from core.interacteval.sub_questions import generate_sub_questions
from core.interacteval.think_aloud import think_aloud
from core.interacteval.validation import checklist_from_sub_questions, validate_questions

__all__ = [
    "MAX_COMPONENTS",
    "ChecklistBuild",
    "ChecklistRead",
    "DimensionAgreement",
    "NotesRead",
    "SamplesRead",
    "ScoringRun",
    "agreement_rows",
    "build_checklist",
    "checklist_from_sub_questions",
    "checklist_score",
    "cluster_attributes",
    "extract_components",
    "generate_key_questions",
    "generate_sub_questions",
    "human_agreement",
    "legacy_count",
    "parse_answer",
    "parse_notes",
    "read_checklists",
    "read_notes",
    "read_samples",
    "score_text",
    "score_texts",
    "suggest_samples",
    "think_aloud",
    "validate_questions",
    "write_checklists",
    "write_results",
]
__all__ += _model.__all__
