"""Check the judge: grade a sample of the scored texts (an overall 1-5 per dimension and,
optionally, Yes/No per checklist question) and see how well the checklist scores agree with
yours (:class:`desktop.judge_check.JudgeCheckPanel`)."""

from __future__ import annotations

from typing import Any

from core.interacteval import session as st
from desktop.interacteval.pages._base import InteractEvalPage
from desktop.judge_check import CheckJudgePageMixin


class CheckJudgePage(CheckJudgePageMixin, InteractEvalPage):
    KEY, TITLE = "check", "Check the judge"
    METHOD, PROFILE_FIELD, PAGE_NAME = "interacteval", "scorer", "Score"
    HEADING = "Does the checklist agree with you?"
    INTRO = (
        "Grade some of the texts yourself: a rating from 1 to 5 per dimension and, if you "
        "like, your own Yes/No to the checklist questions. EvalDesk shows the texts in a "
        "random order, so the ones you grade are a fair sample. The <b>Report</b> tab "
        "compares the checklist with you, and marks questions that say No to texts you call good. "
        "Think-aloud samples are not offered: the models saw them while building the "
        "checklist.")
    SESSION = st

    def __init__(self, wizard: Any) -> None:
        super().__init__(wizard)
        self.build_check()

    def refresh(self) -> None:
        """The judge and, to rank beside the models' runs, the conditions kept in the project
        (checklists from people's notes, models' notes or both, the single judge)."""
        super().refresh()
        found = st.condition_models(self.state, self.wizard.profile)
        if found is None:
            return
        conditions = st.condition_judges(self.project, self.state, found[0])
        if conditions:
            # a condition's own scoring run is listed once, as the condition (the wizard's
            # last run stays listed by its model)
            theirs = {judge.source.split(",")[0] for _n, _k, judge in conditions}
            mine = f"project run {self.state.run_id}"
            models = [c for c in self.panel.candidates
                      if c[2].source.split(",")[0] not in theirs - {mine}]
            self.panel.set_candidates([*models, *conditions], self.make_judge)

    def make_judge(self, model: str) -> str:
        if model.startswith("condition:"):
            from core.interacteval.conditions import CONDITIONS

            label = CONDITIONS.get(model.split(":", 1)[1], model)
            return (f"The condition “{label}” agrees best with your ratings. A condition is "
                    "a way of building the checklist, not a model: to score with it, build "
                    "the checklist that way on the Think-aloud and Build pages.")
        return super().make_judge(model)

    def judge_chosen(self) -> None:
        self._save()
