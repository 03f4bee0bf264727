"""MAJ-Eval (Chen et al., "Multi-Agent-as-Judge"): stakeholder personas from documents,
in-group debates, aggregated scores. See the MAJ-Eval spec and ``model.py``.

The wizard drives the stages one at a time; each takes the previous (possibly edited) result:

    doc = load_document(path)                                   # core.documents, in an executor
    found = await extract_perspectives(doc, task, gateway, context_window=..., answer_tokens=...)
    groups = await group_stakeholders(found.stakeholders + ..., task, gateway)
    built = await construct_personas(groups, task, gateway)     # built.personas: editable
    run = await evaluate(built.personas, items, task, gateway, dimensions=..., settings=...)
    write_results(path, run, alphas=within_group_alpha(run), humans=human_agreement(run))

What is kept in the project, for the wizard and the command line alike, is the session
(:class:`core.majeval.session.MajEvalSession`); every file MAJ-Eval reads is read by
:mod:`core.majeval.inputs`. This package's face holds the pure engine only.
"""

from core.majeval import model as _model
from core.majeval.aggregation import Synthesis, aggregate, combine_groups, group_means
from core.majeval.agreement import (
    GroupAlpha,
    HumanAgreement,
    agreement_rows,
    human_agreement,
    within_group_alpha,
)
from core.majeval.debate import (
    NO_MORE_COMMENTS,
    Coordinator,
    agent_identity,
    evaluate_individually,
    free_debate,
    is_challenged,
)
from core.majeval.inputs import PERSONA_COLUMNS, PersonasRead, read_personas
from core.majeval.model import *  # the types, listed once in model.__all__
from core.majeval.persona_construction import (
    PersonaConstruction,
    construct_personas,
    simple_role,
)
from core.majeval.personas_io import write_personas
from core.majeval.perspective_extraction import PerspectiveExtraction, extract_perspectives
from core.majeval.pipeline import (
    EvaluationRun,
    PersonaCreation,
    create_personas,
    evaluate,
    evaluate_group,
    groups_of,
    lonely_groups,
)
from core.majeval.report import write_results
from core.majeval.stakeholder_grouping import group_stakeholders

__all__ = [
    "NO_MORE_COMMENTS",
    "PERSONA_COLUMNS",
    "Coordinator",
    "EvaluationRun",
    "GroupAlpha",
    "HumanAgreement",
    "PersonaConstruction",
    "PersonaCreation",
    "PersonasRead",
    "PerspectiveExtraction",
    "Synthesis",
    "agent_identity",
    "aggregate",
    "agreement_rows",
    "combine_groups",
    "construct_personas",
    "create_personas",
    "evaluate",
    "evaluate_group",
    "evaluate_individually",
    "extract_perspectives",
    "free_debate",
    "group_means",
    "group_stakeholders",
    "groups_of",
    "human_agreement",
    "is_challenged",
    "lonely_groups",
    "read_personas",
    "simple_role",
    "within_group_alpha",
    "write_personas",
    "write_results",
]
__all__ += _model.__all__
