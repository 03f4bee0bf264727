"""Check the judge: grade a sample of the items the personas scored and see how well the
debate's scores agree with yours (:class:`desktop.judge_check.JudgeCheckPanel`)."""

from __future__ import annotations

from typing import Any

from desktop.judge_check import CheckJudgePageMixin
from desktop.majeval.pages._base import MajEvalPage, st


class CheckJudgePage(CheckJudgePageMixin, MajEvalPage):
    KEY, TITLE = "check", "Check the judge"
    METHOD, PROFILE_FIELD, PAGE_NAME = "majeval", "profile", "Run"
    HEADING = "Does the judge agree with you?"
    INTRO = (
        "Grade some of the items yourself, on the same dimensions and scale as the "
        "personas. EvalDesk shows the items the personas scored highest and lowest in "
        "turn, so good and bad ones both come up early. The <b>Report</b> tab then "
        "compares the personas' overall scores with yours. Aim for 25 items or more.")
    SESSION = st

    def __init__(self, wizard: Any) -> None:
        super().__init__(wizard)
        self.build_check()

    def judge_chosen(self) -> None:
        self.save()
        self.wizard.fill_profiles()
        self.wizard.pages["run"].fill()
