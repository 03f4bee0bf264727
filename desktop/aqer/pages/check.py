"""Check the judge: grade some of the AI answers yourself and see how well AQER's scores of
them agree with your grades (:class:`desktop.judge_check.JudgeCheckPanel`). The "judges" to
pick from are AQER as set up and each condition computed so far (another embedding model or
blank-answer rule)."""

from __future__ import annotations

from typing import Any

from core.aqer import session as st
from desktop.judge_check import CheckJudgePageMixin
from desktop.wizard import WizardPage

__all__ = ["CheckJudgePage"]


class CheckJudgePage(CheckJudgePageMixin, WizardPage):
    KEY, TITLE = "check", "Check the judge"
    METHOD = "aqer"
    HEADING = "Does AQER agree with you on the AI answers?"
    INTRO = (
        "Grade some of the AI answers yourself. EvalDesk shows the answers AQER scored "
        "highest and lowest in turn, so good and bad ones both come up early. AQER's score "
        "is a similarity, not a grade, so the <b>Report</b> tab compares the order of its "
        "scores with the order of your grades. Aim for 25 answers or more.")

    def __init__(self, wizard: Any) -> None:
        super().__init__(wizard)
        self.build_check()
        self.panel.one_judge_text = (
            "Only AQER as set up has scored these answers. Add a condition on the Results page "
            "(the other rule for blank answers) or score with another embedding model: this "
            "tab then ranks them by how well they agree with your grades, and the best one "
            "can become the project's choice in one click.")

    def refresh(self) -> None:
        wizard = self.wizard
        judge, problem = st.judge_to_check(wizard.project, wizard.setup)
        self.panel.set_judge(wizard.project, judge, problem)
        self.panel.set_candidates(st.judges_to_compare(wizard.project, wizard.setup),
                                  self.make_judge)

    def make_judge(self, key: str) -> str:
        """Make the condition named ``key`` the project's choices (its results are stored,
        so they are shown at once)."""
        wizard = self.wizard
        chosen, done = st.choose_condition(wizard.setup, key)
        if chosen is wizard.setup:
            return done
        wizard.setup = chosen
        st.save_setup(wizard.project, chosen)
        stored = wizard.current_result()
        if stored is not None:
            wizard.pages["results"].set_result(stored)
        self.refresh()
        return done

    def reachable(self) -> bool:
        return self.wizard.current_result(load=False) is not None
