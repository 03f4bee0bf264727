"""Check the judge: grade a sample of the items the personas scored and see how well the
debate's scores agree with yours (:class:`desktop.judge_check.JudgeCheckPanel`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.llm.identity import model_name, profiles_of
from desktop.judge_check import CheckJudgePageMixin
from desktop.majeval.pages._base import MajEvalPage

if TYPE_CHECKING:  # pragma: no cover
    from desktop.majeval.wizard import MajEvalWizard


class CheckJudgePage(CheckJudgePageMixin, MajEvalPage):
    KEY, TITLE = "check", "Check the judge"
    METHOD, PROFILE_FIELD, PAGE_NAME = "majeval", "profile", "Run"
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
        self.save()
        self.wizard.fill_profiles()
        self.wizard.pages["run"].fill()

    def make_judge(self, key: str) -> str:
        """Make the condition ``key`` ("<condition>:<model>", see
        :meth:`core.majeval.session.MajEvalSession.condition_choice`) the project's judge: its
        debate options and its model's profile become the project's choices, and its stored
        results are shown when there are some."""
        wizard = self.wizard
        chosen, used, done = self.session.condition_choice(key)
        if chosen is None:
            return done
        model = model_name(used)
        profiles = wizard.main_window.settings.profiles
        same = profiles_of(profiles, used)  # the model and the settings it ran with
        profile = next((p for p in profiles if p.name in same), None) or next(
            (p for p in profiles if model and p.model == model), None)
        if profile is None and model and model != wizard.model():
            return (f"No model profile uses {model}: add one in Settings → Models, then "
                    f"choose it on the {self.PAGE_NAME} page.")
        if profile is not None:
            chosen.profile = profile.name
            done += f" Model profile: “{profile.name}” ({model})."
        self.session.save_choices(chosen)
        self.judge_chosen()
        run = self.session.load_results()
        if run is not None:
            wizard.show_run(run, show=False)
        self.refresh()
        return done
