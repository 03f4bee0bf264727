"""Check the judge: grade a sample of the items the personas scored and see how well the
debate's scores agree with yours (:class:`desktop.judge_check.JudgeCheckPanel`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.judge_check import CheckJudgePageMixin
from desktop.majeval.pages._base import MajEvalPage

if TYPE_CHECKING:  # pragma: no cover
    from desktop.majeval.wizard import MajEvalWizard


class CheckJudgePage(CheckJudgePageMixin, MajEvalPage):
    KEY, TITLE = "check", "Check the judge"
    METHOD = "majeval"
    HEADING = "Does the judge agree with you?"
    INTRO = (
        "Grade some of the items yourself, on the same dimensions and scale as the "
        "personas. EvalDesk shows the items in a random order, so the ones you grade are "
        "a fair sample of them all. The <b>Report</b> tab then "
        "compares the personas' overall scores with yours. Aim for 25 items or more.")

    def __init__(self, wizard: MajEvalWizard) -> None:
        super().__init__(wizard)
        self.build_check()
        self.panel.one_judge_text = (
            "Only one condition has scored these items. Run the other conditions (simple "
            "roles, a single judge) from the Conditions tab of the Results page, or the same "
            "items with another model: this tab then ranks them by how well they agree with "
            "your ratings, and the best one can become the project's judge in one click.")

    def judge_chosen(self) -> None:
        """The condition's debate options and model profile are the choices now: shown on the
        Run page, with its stored results when there are some."""
        wizard = self.wizard
        wizard.fill_profiles()
        wizard.pages["run"].fill()
        run = self.session.load_results()
        if run is not None:
            wizard.show_run(run, show=False)
        self.refresh()
