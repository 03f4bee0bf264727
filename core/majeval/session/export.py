"""MAJ-Eval's results workbook: the debates' results with the agreement statistics, the model
calls kept for the run, the people's corrections, the conditions kept in the project beside the
run and, with repeats, the Stability sheet; and the command line's comparison workbook of the
conditions. The sheets themselves are made by :mod:`core.majeval.report`,
:mod:`core.majeval.conditions` and :mod:`core.majeval.repeats` (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core import privacy
from core.majeval import conditions as cd
from core.majeval.agreement import GroupAlpha, HumanAgreement, human_agreement, within_group_alpha
from core.majeval.pipeline import PERSONA_ARTEFACT, EvaluationRun
from core.majeval.repeats import ByRepeat, stability, stability_sheet
from core.majeval.report import write_results
from core.majeval.session.choices import MajEvalChoices
from core.majeval.session.conditions import load_conditions
from core.majeval.session.documents import corrected_pages
from core.majeval.session.items import items_source
from core.runs import CancelToken, Progress
from core.tables import Sheet

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = ["BOOTSTRAP_SAMPLES", "agreement", "export_comparison", "export_results"]

#: Bootstrap resamples for the correlations' confidence intervals (screen and workbook alike).
BOOTSTRAP_SAMPLES = 1000

#: A Read me line: (what, what it says).
Note = tuple[str, str]


def agreement(run: EvaluationRun, n_boot: int = BOOTSTRAP_SAMPLES
              ) -> tuple[list[GroupAlpha], list[HumanAgreement]]:
    """Krippendorff's alpha within each group and the correlations with the human ratings
    (``n_boot`` 0: no confidence intervals). Blocking: run it in an executor."""
    return list(within_group_alpha(run)), list(human_agreement(run, n_boot=n_boot))


def export_results(project: Project, run: EvaluationRun, path: str | Path,
                   progress: Progress | None = None, cancel: CancelToken | None = None, *,
                   n_boot: int = BOOTSTRAP_SAMPLES, choices: MajEvalChoices | None = None,
                   repeats: Sequence[dict[str, cd.ConditionResult]] = ()) -> Path:
    """Write the results workbook (:func:`core.majeval.report.write_results`) with the agreement
    statistics, the model calls kept for the run, and the people's corrections. With
    ``choices`` it also has the sheets "Comparison" and "Condition scores" of the conditions
    kept in the project for the run's model, made by the same function as the command line's
    ``--conditions`` workbook (:func:`core.majeval.conditions.comparison_sheets`).
    ``repeats`` (:func:`core.majeval.session.repeats.load_repeats`, 2 or more) add the
    Stability sheet; the scores are ``run``'s (repeat 0). Blocking: run it in an executor.
    Raises :class:`core.tables.TableError` when it cannot be written."""
    progress = progress or Progress()
    progress.start("Computing agreement", total=3 if choices is not None else 2)
    alphas, humans = agreement(run, n_boot)
    if cancel is not None:
        cancel.raise_if_cancelled()
    sheets: list[Sheet] = []
    notes: list[Note] = []
    if choices is not None:
        progress.advance(1, "Comparing the conditions kept in the project")
        sheets, notes = _conditions_kept(project, choices, run, n_boot)
        if cancel is not None:
            cancel.raise_if_cancelled()
    progress.advance(1, "Writing the workbook")
    readme = _readme(project, run, n_boot)
    if len(repeats) >= 2:
        entries = stability(list(repeats), run.item_inputs, [d.name for d in run.dimensions])
        sheets.append(stability_sheet(entries))
        readme.append(("Repeats", (f"each call made {len(repeats)} times (repeats 0 to "
                                   f"{len(repeats) - 1}); the scores shown are repeat 0's, the "
                                   "Stability sheet compares the repeats")))
        readme += [(f"Stability: {label}, {dim}", s.sentence) for label, dim, s in entries]
    sheets += privacy.deidentification_sheets(project)  # what was replaced, never values
    target = Path(path)
    write_results(target, run, alphas=alphas, humans=humans, readme=[*readme, *notes],
                  extra_sheets=sheets)
    progress.advance(1, f"Saved {target.name}")
    return target


def _conditions_kept(project: Project, choices: MajEvalChoices, run: EvaluationRun,
                     n_boot: int) -> tuple[list[Sheet], list[Note]]:
    """The sheets and Read me lines of the conditions kept in the project for ``run``'s model
    (none when none is kept)."""
    kept = load_conditions(project, choices, list(cd.CONDITIONS), run.model_used)
    if not kept:
        return [], []
    dims = [d.name for d in choices.dimensions]
    rows = cd.comparison_rows(kept, choices.item_list, dims,
                              n_boot=cd.COMPARISON_BOOT if n_boot else 0)
    sheets = cd.comparison_sheets(kept, choices.item_list, dims, rows)
    notes = cd.comparison_notes(kept, rows)
    missing = [label for name, label in cd.CONDITIONS.items() if name not in kept]
    if missing:
        notes.append(("Conditions not run", "; ".join(missing)
                      + " (run them on the Conditions tab of the Results page, or with "
                      "--conditions on the command line)"))
    return sheets, notes


def _readme(project: Project, run: EvaluationRun, n_boot: int) -> list[Note]:
    """The Read me lines of the run: its model calls, the bootstrap, the people's edits."""
    readme: list[Note] = []
    if run.run_id is not None:
        usage = project.llm_usage(run.run_id)
        readme.append(("Model calls", (f"{usage.calls} calls stored, {usage.prompt_tokens:,} "
                                      f"tokens in, {usage.completion_tokens:,} out")))
    if not n_boot:
        readme.append(("Confidence intervals", "not computed (no bootstrap)"))
    edits = list(project.list_edits(kind=PERSONA_ARTEFACT))
    if edits:
        who = sorted({e.who for e in edits})
        readme.append(("Persona edits", f"{len(edits)} changes by " + ", ".join(who)))
    corrections = corrected_pages(project)
    if corrections:
        readme.append(("Document corrections", "; ".join(corrections[:20])))
    return readme


def export_comparison(path: str | Path, choices: MajEvalChoices,
                      results: dict[str, cd.ConditionResult], repeats: ByRepeat, *,
                      model: str, n_boot: int = cd.COMPARISON_BOOT
                      ) -> list[dict[str, object]]:
    """Write the comparison workbook of the conditions ``results`` (repeat 0's; ``repeats``,
    2 or more, add the Stability sheet) with a Read me naming the ``model``, the items and the
    task; returns the comparison's rows (:func:`core.majeval.conditions.comparison_rows`).
    Raises :class:`core.tables.TableError` when it cannot be written."""
    dims = [d.name for d in choices.dimensions]
    rows = cd.comparison_rows(results, choices.item_list, dims, n_boot=n_boot)
    readme: list[Note] = [
        ("Model", model),
        ("Items", (f"{len(choices.item_list)} items from "
                   f"{items_source(choices) or 'the items file'}")),
        ("Task", choices.task)]
    extra: list[Sheet] = []
    if len(repeats) >= 2:
        entries = stability(repeats, choices.item_list, dims)
        extra.append(stability_sheet(entries))
        readme.append(("Repeats", (f"each call made {len(repeats)} times; the comparison "
                                   "uses repeat 0, the Stability sheet compares the repeats")))
        readme += [(f"Stability: {label}, {dim}", s.sentence) for label, dim, s in entries]
    cd.write_comparison(path, results, choices.item_list, dims, rows, readme=readme,
                        extra_sheets=extra)
    return rows

