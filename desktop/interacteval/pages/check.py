"""Check the judge: grade a sample of the scored texts (an overall 1-5 per dimension and,
optionally, Yes/No per checklist question) and see how well the checklist scores agree with
yours (:class:`desktop.judge_check.JudgeCheckPanel`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QVBoxLayout

from core.interacteval import session as st
from desktop.interacteval.pages._base import InteractEvalPage
from desktop.judge_check import JudgeCheckPanel
from desktop.widgets import intro_label, title_label


class CheckJudgePage(InteractEvalPage):
    KEY, TITLE = "check", "Check the judge"

    def __init__(self, wizard: Any) -> None:
        super().__init__(wizard)
        self.panel = JudgeCheckPanel("interacteval", lambda: self.wizard.who)
        layout = QVBoxLayout(self)
        layout.addWidget(title_label("Does the checklist agree with you?"))
        layout.addWidget(intro_label(
            "Grade some of the texts yourself: a rating from 1 to 5 per dimension and, if you "
            "like, your own Yes/No to the checklist questions. EvalDesk shows the texts the "
            "checklist scored highest and lowest in turn. The <b>Report</b> tab compares the "
            "checklist with you, and marks questions that say No to texts you call good. "
            "Think-aloud samples are not offered: the models saw them while building the "
            "checklist."))
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
                    "it on the Score page.")
        self.state.scorer = profile.name
        self._save()
        return (f"“{profile.name}” ({model}) is now the project's judge: the next run uses "
                "it.")

    def reachable(self) -> bool:
        return self.wizard.run is not None

    def shows_next(self) -> bool:
        return False
