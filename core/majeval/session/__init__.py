"""MAJ-Eval's session: the only code that touches the project for MAJ-Eval. The wizard and the
command line (``evaldesk majeval``) both make the calls of :class:`MajEvalSession`, so the same
inputs give the same results by either route::

    session = MajEvalSession.open(project, settings=settings)
    session.store_input("documents", "study.pdf")
    made = await session.find_stakeholders(progress=progress, cancel=cancel)
    session.store_input("items", "items.xlsx")
    run = await session.run(progress=progress, cancel=cancel)
    session.export("results.xlsx", who="Ana", run=run)

Kept in the project (each a typed artefact, see :mod:`core.project.payloads`), one module each:

* :mod:`~core.majeval.session.choices`: ``majeval.wizard`` / ``state``, the
  :class:`MajEvalChoices` (version 1; the kind and key are those the wizard always used);
* :mod:`~core.majeval.session.documents`: ``majeval.document`` / file name, a document's pages
  (a corrected page is a ``project.record_edit`` of ``pages.<i>``, with who and when), and
  ``majeval.perspectives`` / file name, the stakeholders found in it
  (:class:`~core.majeval.session.documents.DocumentPerspectives`, with the fingerprint of the
  task, text and model they were read with);
* :mod:`~core.majeval.session.personas`: ``majeval.groups`` and ``majeval.persona`` (a person's
  edits with who and when);
* :mod:`~core.majeval.session.items`: the items file (a copy, so a moved file can be read);
* :mod:`~core.majeval.session.debates`: each debate a result of the run's units
  (:class:`core.project.units.RunUnits`), keyed by :func:`core.majeval.pipeline.unit_key`;
* :mod:`~core.majeval.session.conditions` and :mod:`~core.majeval.session.repeats`: the
  conditions (debates with other options, the single judge's run) and the repeat runs;
* :mod:`~core.majeval.session.judge` (Check the judge) and
  :mod:`~core.majeval.session.export` (the workbooks).

The names below are what the desktop and the command line use: the session and its choices,
and the few pure helpers the results screens show with (the wizard imports no other MAJ-Eval
module but :mod:`core.majeval.inputs` and :mod:`core.majeval.model`).
"""

from core.majeval.agreement import (
    AFTER,
    BASELINE,
    BEFORE,
    LENGTH_GROUP,
    GroupAlpha,
    HumanAgreement,
    human_points,
    judge_spreads,
)
from core.majeval.conditions import (
    CONDITIONS,
    ConditionResult,
    comparison_rows,
    comparison_summary,
)
from core.majeval.pipeline import EvaluationRun, lonely_groups
from core.majeval.repeats import MAX_REPEATS, stability_lines
from core.majeval.report import failure_warning, run_description
from core.majeval.session.choices import (
    CHOICES_KIND,
    EXAMPLE_TASKS,
    MajEvalChoices,
    sample_folder,
)
from core.majeval.session.documents import evidence_span
from core.majeval.session.export import BOOTSTRAP_SAMPLES
from core.majeval.session.majeval_session import MajEvalSession
from core.majeval.session.personas import PersonasMade

__all__ = [
    "AFTER",
    "BASELINE",
    "BEFORE",
    "BOOTSTRAP_SAMPLES",
    "CHOICES_KIND",
    "CONDITIONS",
    "EXAMPLE_TASKS",
    "LENGTH_GROUP",
    "MAX_REPEATS",
    "ConditionResult",
    "EvaluationRun",
    "GroupAlpha",
    "HumanAgreement",
    "MajEvalChoices",
    "MajEvalSession",
    "PersonasMade",
    "comparison_rows",
    "comparison_summary",
    "evidence_span",
    "failure_warning",
    "human_points",
    "judge_spreads",
    "lonely_groups",
    "run_description",
    "sample_folder",
    "stability_lines",
]
