"""InteractEval in a project: the ONLY code of this method that touches the project file. The
wizard (``wizard.session``) and ``evaldesk checklist`` make the same calls on one
:class:`InteractEvalSession` (see :mod:`core.interacteval.session.method_session`).

One module per concern:

- ``choices``: :class:`InteractEvalChoices` (versioned; projects saved when it was called the
  wizard's state still open) and the texts file kept in the project;
- ``stages``: each construction step's kept output, the checklists, what people edited;
- ``building``: running the think-aloud and the construction steps (edits kept or replaced);
- ``scoring``: the scoring run, its repeats, the estimate, the results reloaded;
- ``conditions``: the conditions side by side (built, scored, kept, compared, exported);
- ``judge``: "Check the judge" (the judge to grade, the judges to rank);
- ``export``: the results and checklist workbooks;
- ``method_session``: :class:`InteractEvalSession`, the verbs over all of them.

The pure helpers the wizard shows results with (the agreement, the repeats' stability, the
conditions' labels and sentences, the notes on the built-in model) are handed on here, so the
wizard reaches the method only through its session, its inputs and its model types.
"""

from core.interacteval.agreement import DimensionAgreement, judge_spreads, scatter_points
from core.interacteval.conditions import (
    CONDITIONS,
    PER_DOCUMENT,
    comparison_summary,
    how_compared,
)
from core.interacteval.grounded import GROUNDED_NOTICE, uses_grounded_path
from core.interacteval.pipeline import ChecklistBuild, ScoringRun
from core.interacteval.repeats import MAX_REPEATS, stability, stability_lines
from core.interacteval.session.building import BUILD_KEYS
from core.interacteval.session.choices import (
    CHOICES,
    CHOICES_KIND,
    STAGE_KIND,
    STAGES,
    SUMMEVAL_DIMENSIONS,
    InteractEvalChoices,
    person,
    sample_folder,
    texts_line,
)
from core.interacteval.session.conditions import (
    ConditionModels,
    ConditionRun,
    ConditionsView,
    condition_stability_lines,
)
from core.interacteval.session.method_session import INPUT_ROLES, InteractEvalSession
from core.interacteval.session.stages import EDIT_CHOICES, StageOutput
from core.interacteval.think_aloud import CANNOT_THINK_ALOUD, can_think_aloud

__all__ = [
    "BUILD_KEYS",
    "CANNOT_THINK_ALOUD",
    "CHOICES",
    "CHOICES_KIND",
    "CONDITIONS",
    "EDIT_CHOICES",
    "GROUNDED_NOTICE",
    "INPUT_ROLES",
    "MAX_REPEATS",
    "PER_DOCUMENT",
    "STAGES",
    "STAGE_KIND",
    "SUMMEVAL_DIMENSIONS",
    "ChecklistBuild",
    "ConditionModels",
    "ConditionRun",
    "ConditionsView",
    "DimensionAgreement",
    "InteractEvalChoices",
    "InteractEvalSession",
    "ScoringRun",
    "StageOutput",
    "can_think_aloud",
    "comparison_summary",
    "condition_stability_lines",
    "how_compared",
    "judge_spreads",
    "person",
    "sample_folder",
    "scatter_points",
    "stability",
    "stability_lines",
    "texts_line",
    "uses_grounded_path",
]
