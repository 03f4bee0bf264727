"""InteractEval's checklist scores as the judge to check (:mod:`core.judge_check`): each
text's checklist score per dimension, and its Yes/No answer to every question (compared with
the person's optional answers). A text that is one of its dimension's think-aloud samples was
shown to the models while the checklist was built, so it is held out of the agreement.

    judge = judge_data(run, texts)      # run: session.load_results(); texts: its TextItems
    report = judge_report(judge, load_ratings(project))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core import judge_check
from core.judge_check import JudgeData, JudgeItem, Rating

if TYPE_CHECKING:  # pragma: no cover
    from core.interacteval.model import TextItem
    from core.interacteval.pipeline import ScoringRun
    from core.project import Project

__all__ = ["HELD_OUT_REASON", "METHOD", "judge_data", "load_ratings", "save_rating"]

METHOD = "interacteval"
HELD_OUT_REASON = "think-aloud samples the checklist was built from"


def judge_data(run: ScoringRun, texts: Sequence[TextItem] = ()) -> JudgeData:
    """One :class:`JudgeItem` per scored text (in the run's order). A text without a score
    (failed or incomplete) has score None and its note as the explanation."""
    given = {t.id: t for t in texts}
    items: dict[str, JudgeItem] = {}
    questions: dict[str, list[str]] = {c.dimension: list(c.questions) for c in run.checklists}
    for score in run.scores:
        questions.setdefault(score.dimension, [a.question for a in score.answers])
        text = given.get(score.text_id)
        item = items.setdefault(score.text_id, JudgeItem(
            item_id=score.text_id, text=text.text if text else "",
            context=text.source if text else ""))
        ok = score.status == "ok" and score.score is not None
        item.scores[score.dimension] = score.score if ok else None
        item.answers[score.dimension] = {
            a.question: None if a.answer is None else a.answer == "yes" for a in score.answers}
        said = "; ".join(f"Q{a.number} {a.answer.capitalize() if a.answer else 'no answer'}"
                         for a in score.answers)
        item.explanation[score.dimension] = said if ok else \
            f"No score ({score.status}): {score.note}".strip(": ")
        item.held_out = item.held_out or score.think_aloud_sample
    source = f"project run {run.run_id}" if run.run_id is not None else ""
    if run.date:
        source += f", finished {run.date}"
    return JudgeData(method="InteractEval", items=list(items.values()),
                     dimensions=list(questions), scale=(1, 5), questions=questions,
                     model=run.model, source=source.strip(", "),
                     held_out_reason=HELD_OUT_REASON)


def save_rating(project: Project, rating: Rating, *, who: str | None = None) -> Rating:
    return judge_check.save_rating(project, METHOD, rating, who=who)


def load_ratings(project: Project) -> list[Rating]:
    return judge_check.load_ratings(project, METHOD)
