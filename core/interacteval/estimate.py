"""The planned calls of an InteractEval scoring run, for the estimate shown before it starts
(:mod:`core.llm.estimate`). Pure: the session passes what is stored.

Per text and dimension: with the whole checklist in one call (the paper's setting) one call,
and at most one more that asks the questions left unanswered; with one question per call, one
call per question. A text already scored in the project (same checklist, model and options)
makes no call. Empty texts and empty checklists make none either.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from core.interacteval import _prompts
from core.interacteval.checklist_scoring import SingleAnswer, _key, _schema_for, _values
from core.interacteval.model import Checklist, ScoringSettings, TextItem
from core.interacteval.pipeline import unit_key
from core.llm.estimate import StagePlan

__all__ = ["plan_scoring"]


def plan_scoring(checklists: Sequence[Checklist], items: Sequence[TextItem],
                 settings: ScoringSettings, *, done: Collection[str] = ()
                 ) -> tuple[list[StagePlan], int]:
    """(the stages of the scoring still to do, texts x dimensions already scored)."""
    whole = _prompts.load("checklist_scoring")
    single = _prompts.load("question_scoring")
    per_question = settings.mode == "per_question"
    stages = []
    skipped = 0
    for checklist in checklists:
        questions = checklist.questions
        stage = StagePlan(
            f"{checklist.dimension}, " + ("one question per call" if per_question
                                          else "the whole checklist per call"), [],
            SingleAnswer if per_question
            else _schema_for(tuple(_key(i) for i in range(1, len(questions) + 1))),
            chain=(1, 1) if per_question else (1, 2))
        for item in items:
            if unit_key(checklist, item) in done:
                skipped += 1
                continue
            if not questions or not item.text.strip():
                continue
            values = _values(checklist, item)
            if per_question:
                stage.prompts.extend(single.messages(**values, question=" ".join(q.split()))
                                     for q in questions)
                continue
            listed = "\n".join(f"{_key(i)}. {' '.join(q.split())}"
                               for i, q in enumerate(questions, 1))
            messages = whole.messages(**values, questions=listed)
            stage.prompts.append(messages)
            stage.maybe.append(messages)  # the unanswered questions asked again
        if stage.prompts:
            stages.append(stage)
    for stage in stages[1:]:
        stage.chain = (0, 0)  # the dimensions are scored side by side
    return stages, skipped
