"""InteractEval's workbooks from a project: the results of a scoring run (scores, answers,
checklists, agreement with the human scores, the repeats' stability; the Read me says who scored,
the model calls stored and the questions a person deleted) and the checklists. The comparison of
conditions is written by :func:`core.interacteval.session.conditions.export_conditions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core import privacy
from core.interacteval.agreement import DimensionAgreement, human_agreement
from core.interacteval.pipeline import ScoringRun
from core.interacteval.repeats import stability, stability_sheet
from core.interacteval.report import write_checklists, write_results
from core.interacteval.session.choices import InteractEvalChoices, person
from core.interacteval.session.stages import all_checklists, deleted_lines

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.tables import ExportReport

__all__ = ["export_checklists", "export_results"]

def export_results(project: Project, run: ScoringRun, path: str | Path, *, texts: str = "",
                   include_samples: bool = False, who: str = "",
                   agreement: Sequence[DimensionAgreement] | None = None,
                   repeats: Sequence[ScoringRun] = ()) -> ExportReport:
    """Write the results workbook of ``run`` (the app and the CLI alike): the agreement with
    the human scores (computed here unless given), who scored and the model calls stored for
    the run in the Read me sheet. ``repeats`` (the runs of repeats 0..N-1, N >= 2) add the
    Stability sheet (:mod:`core.interacteval.repeats`); the scores are repeat 0's."""
    if agreement is None:
        agreement = human_agreement(run.scores, include_samples=include_samples)
    lines = [("Scored by", person(who))]
    lines += deleted_lines(project, [c.dimension for c in run.checklists])
    if run.run_id is not None:
        usage = project.llm_usage(run.run_id)
        lines.append(("Model calls", (f"{usage.calls} calls stored, {usage.prompt_tokens:,} "
                                      f"tokens in, {usage.completion_tokens:,} out")))
    extra = []
    if len(repeats) >= 2:
        entries = stability(repeats)
        extra.append(stability_sheet(entries))
        lines.append(("Repeats", (f"each call made {len(repeats)} times (repeats 0 to "
                                  f"{len(repeats) - 1}); the scores shown are repeat 0's, the "
                                  "Stability sheet compares the repeats")))
        lines += [(f"Stability: {dim}", s.sentence) for _, dim, s in entries]
    extra += privacy.deidentification_sheets(project)  # what was replaced, never values
    return write_results(path, run, agreement=agreement, readme=lines,
                         texts=texts, include_samples=include_samples, extra_sheets=extra)


def export_checklists(project: Project, choices: InteractEvalChoices, path: str | Path, *,
                      who: str = "") -> ExportReport:
    """Write every checklist of the choices' dimensions to a workbook (with the questions a
    person deleted, in the Read me)."""
    readme = [("Made by", who)] if who else []
    checklists = all_checklists(project, choices)
    readme += deleted_lines(project, [c.dimension for c in checklists])
    readme += privacy.deidentification_readme(project)
    return write_checklists(path, checklists, readme=readme)


