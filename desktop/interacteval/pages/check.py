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
        "like, your own Yes/No to the checklist questions. EvalDesk shows the texts the "
        "checklist scored highest and lowest in turn. The <b>Report</b> tab compares the "
        "checklist with you, and marks questions that say No to texts you call good. "
        "Think-aloud samples are not offered: the models saw them while building the "
        "checklist.")
    SESSION = st

    def __init__(self, wizard: Any) -> None:
        super().__init__(wizard)
        self.build_check()

    def judge_chosen(self) -> None:
        self._save()
