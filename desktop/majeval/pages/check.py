"""Check the judge: grade a sample of the items the personas scored and see how well the
debate's scores agree with yours (:class:`desktop.judge_check.JudgeCheckPanel`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QVBoxLayout

from desktop.judge_check import JudgeCheckPanel
from desktop.majeval.pages._base import MajEvalPage, st
from desktop.widgets import intro_label, title_label


class CheckJudgePage(MajEvalPage):
    KEY, TITLE = "check", "Check the judge"

    def __init__(self, wizard: Any) -> None:
        super().__init__(wizard)
        self.panel = JudgeCheckPanel("majeval", lambda: self.wizard.who)
        layout = QVBoxLayout(self)
        layout.addWidget(title_label("Does the judge agree with you?"))
        layout.addWidget(intro_label(
            "Grade some of the items yourself, on the same dimensions and scale as the "
            "personas. EvalDesk shows the items the personas scored highest and lowest in "
            "turn, so good and bad ones both come up early. The <b>Report</b> tab then "
            "compares the personas' overall scores with yours. Aim for 25 items or more."))
        layout.addWidget(self.panel, 1)

    def refresh(self) -> None:
        judge, problem = st.judge_to_check(self.project, self.state)
        self.panel.set_judge(self.project, judge, problem)
        self.panel.set_candidates(st.judges_to_compare(self.project, self.state),
                                  self.make_judge)

    def make_judge(self, model: str) -> str:
        """Make the profile that uses ``model`` the one this project scores with."""
        settings = self.wizard.main_window.settings
        profile = next((p for p in settings.profiles if p.model == model), None)
        if profile is None:
            return (f"No model profile uses {model}: add one in Settings → Models, then choose "
                    "it on the Run page.")
        self.state.profile = profile.name
        self.save()
        self.wizard.fill_profiles()
        self.wizard.pages["run"].fill()
        return (f"“{profile.name}” ({model}) is now the project's judge: the next run uses "
                "it.")

    def reachable(self) -> bool:
        return self.wizard.run is not None

    def shows_next(self) -> bool:
        return False
