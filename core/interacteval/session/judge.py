"""InteractEval's "Check the judge" in a project: the scores a person grades (the last scoring
run of today's checklists, with the texts read from the project's copy of the texts file), the
other judges to rank beside it (every finished scoring run and every condition kept), and the
checklist questions that say No to texts people rated good.

``core.judge_check`` and ``core.interacteval.judge_check`` import numpy and scipy: they are
imported inside the functions, so opening a project (or ``evaldesk --help``) does not load them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from core.interacteval.conditions import CONDITIONS
from core.interacteval.inputs import read_texts
from core.interacteval.model import ScoringSettings, TextItem
from core.interacteval.pipeline import METHOD, STEP_SCORE, ScoringRun
from core.interacteval.session.choices import InteractEvalChoices, local_time, texts_file
from core.interacteval.session.conditions import (
    ConditionModels,
    condition_texts,
    load_conditions,
)
from core.interacteval.session.scoring import is_repeat, kept_scores, load_run
from core.interacteval.session.stages import all_checklists

if TYPE_CHECKING:  # pragma: no cover
    from core.judge_check import JudgeData
    from core.method import JudgeCandidate
    from core.project import Project, Run

__all__ = ["condition_judges", "judge_to_check", "questions_failing_good_texts",
           "scoring_judges"]

def judge_to_check(project: Project, choices: InteractEvalChoices, *, texts: bool = True
                   ) -> tuple[JudgeData | None, str]:
    """The last scoring run as the judge a person checks (:mod:`core.judge_check`), with the
    texts read from the project's copy of the texts file (``texts`` False: without them);
    (None, why) when there is no finished run."""
    from core.interacteval.judge_check import judge_data  # numpy and scipy: not at start-up

    checklists = all_checklists(project, choices)
    run = load_run(project, choices, checklists)
    if run is None and choices.run_id is None:  # scored from the command line: no choices
        run = _last_finished_run(project)
    if run is None:
        return None, ("There are no current checklist scores to check: score the texts first "
                      "(the last scoring run must have finished with the current checklists; "
                      "after a checklist was edited, score again).")
    items: list[TextItem] = []
    setup = choices.run_texts or choices.texts
    path = texts_file(project, setup) if setup and texts else None
    if path is not None:
        items = list(read_texts(path, setup).items)
    return judge_data(run, items), ""


def questions_failing_good_texts(project: Project, choices: InteractEvalChoices, dimension: str
                                 ) -> dict[str, str]:
    """The questions of ``dimension`` that say No to texts people rated Yes (the checklist
    editor's badge; see :data:`core.judge_check.FAILS_GOOD_RATE`): question -> why, in
    words. Empty when nobody answered the questions on the Check the judge page."""
    from core import judge_check  # numpy and scipy: not at start-up

    ratings = judge_check.load_ratings(project, METHOD)
    if not any(r.answers.get(dimension) for r in ratings):
        return {}
    judge, _ = judge_to_check(project, choices, texts=False)
    if judge is None:
        return {}
    report = judge_check.judge_report(judge, ratings, n_boot=0)
    return {q.question: (f"Of the {q.result.both_yes + q.result.judge_no_person_yes} texts "
                         f"people said Yes to, the judge said No to "
                         f"{q.result.judge_no_person_yes} ({q.result.false_fail_rate:.0%}). "
                         "Click to see them.")
            for q in report.fails_good if q.dimension == dimension}


def _last_finished_run(project: Project) -> ScoringRun | None:
    """The scores of the project's last finished scoring run, whatever the wizard's choices (a
    project scored with ``evaldesk checklist score --project`` has no wizard choices)."""
    finished = [r for r in project.list_runs(METHOD, STEP_SCORE)
                if r.status == "finished" and not is_repeat(r)]
    if not finished:
        return None
    run = finished[-1]
    scores = kept_scores(project, run.id)
    if not scores:
        return None
    settings = ScoringSettings.model_validate((run.settings or {}).get("scoring") or {})
    return ScoringRun(scores=scores, settings=settings, model=(run.settings or {}).get("model", ""),
                      run_id=run.id, date=local_time(run.finished_at),
                      model_settings=(run.settings or {}).get("model_settings"))


def scoring_judges(project: Project) -> list[JudgeCandidate]:
    """Every finished scoring run, as ``(name, model, judge)`` for
    :func:`core.judge_check.rank_judges` (the latest run of each model and checklists)."""
    from core.interacteval.judge_check import judge_data  # numpy and scipy: not at start-up

    seen: dict[str, Run] = {}
    for run in project.list_runs(METHOD, STEP_SCORE):
        if run.status != "finished" or is_repeat(run):
            continue
        settings = run.settings or {}
        label = str(settings.get("model", "")) or "model not recorded"
        key = json.dumps([label, settings.get("model_settings"), settings.get("checklists"),
                          settings.get("scoring")], sort_keys=True)
        seen[key] = run  # a later run with the same choices replaces an earlier one
    out = []
    for run in seen.values():
        scores = kept_scores(project, run.id)
        if not scores:
            continue
        settings = run.settings or {}
        scoring = ScoringRun(
            scores=scores, model=str(settings.get("model", "")), run_id=run.id,
            settings=ScoringSettings.model_validate(settings.get("scoring") or {}),
            date=local_time(run.finished_at), model_settings=settings.get("model_settings"))
        model = scoring.model or "model not recorded"
        out.append((f"{model} (run {run.id}, {scoring.date})", scoring.model,
                    judge_data(scoring)))
    return out


def condition_judges(project: Project, choices: InteractEvalChoices, models: ConditionModels
                     ) -> list[JudgeCandidate]:
    """The conditions kept in the project as judges to rank (:func:`core.judge_check.
    rank_judges`): ``(label, "condition:<name>", judge)`` for each one that scored texts."""
    from core.interacteval.judge_check import judge_data  # numpy and scipy: not at start-up

    items = condition_texts(project, choices)
    if not items:
        return []
    out = []
    for name, run in load_conditions(project, choices, list(CONDITIONS), items, models).items():
        if not run.scores:
            continue
        scoring = ScoringRun(scores=run.scores, settings=choices.scoring, model=run.model,
                             run_id=run.run_id, checklists=run.checklists)
        out.append((f"Condition: {run.label}", f"condition:{name}", judge_data(scoring, items)))
    return out


