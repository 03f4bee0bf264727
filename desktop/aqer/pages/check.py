"""Check the judge: grade some of the AI answers yourself and see how well AQER's scores of
them agree with your grades (:class:`desktop.judge_check.JudgeCheckPanel`). The "judges" to
pick from are AQER as set up and each condition computed so far (another embedding model or
blank-answer rule): the shared page (:class:`desktop.judge_check.CheckJudgePageMixin`) asks the
wizard's session for them (``judge_to_check``, ``judges_to_compare``); making one the judge
makes its condition the project's choices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QHBoxLayout, QPushButton

from core import judge_check as jc
from core.words import count
from desktop.aqer.pages._base import AqerPage
from desktop.judge_check import CheckJudgePageMixin
from desktop.widgets import hint_label

if TYPE_CHECKING:  # pragma: no cover (the wizard imports the pages)
    from desktop.aqer.wizard import AqerWizard

__all__ = ["CheckJudgePage"]


class CheckJudgePage(CheckJudgePageMixin, AqerPage):
    KEY, TITLE = "check", "Check the judge"
    METHOD = "aqer"
    HEADING = "Does AQER agree with you on the AI answers?"
    INTRO = (
        "Grade some of the AI answers yourself. EvalDesk shows the answers in a random "
        "order, so the ones you grade are a fair sample of them all. AQER's score "
        "is a similarity, not a grade, so the <b>Report</b> tab compares the order of its "
        "scores with the order of your grades. Aim for 25 answers or more.")

    def __init__(self, wizard: AqerWizard) -> None:
        super().__init__(wizard)
        self.build_check()
        self.panel.one_judge_text = (
            "Only AQER as set up has scored these answers. Add a condition on the Results page "
            "(the other rule for blank answers) or score with another embedding model: this "
            "tab then ranks them by how well they agree with your grades, and the best one "
            "can become the project's choice in one click.")
        self.grades_button = QPushButton("Use the grades in the answers file")
        self.grades_button.setToolTip(
            "Your answers file grades the AI answers: keep those grades as the ratings of one "
            "rater (named after the file), so the report compares AQER with them at once.")
        self.grades_button.clicked.connect(self.use_file_grades)
        row = QHBoxLayout()
        row.addWidget(hint_label("Graded the AI answers in the file already? Use those grades "
                                 "instead of grading again (or beside your own)."), 1)
        row.addWidget(self.grades_button)
        self.layout().insertLayout(2, row)

    def refresh(self) -> None:
        super().refresh()
        grades = self.wizard.choices.columns.grade_col
        self.grades_button.setEnabled(self.panel.judge is not None and bool(grades))

    @Slot()
    def use_file_grades(self) -> int:
        """Keep the file's grades of the AI answers as one rater's ratings (a change made by
        the user, with their name and the file's); returns how many."""
        wizard, panel = self.wizard, self.panel
        if panel.judge is None:
            return 0
        try:
            ratings, notes = wizard.session.file_grades(panel.judge)
        except Exception as exc:  # noqa: BLE001 - a file that cannot be read says why
            panel.message.setText(f"The grades could not be read: {getattr(exc, 'message', exc)}")
            return 0
        if not ratings:
            panel.message.setText("The answers file has no grades of these AI answers. "
                                  + " ".join(notes[:3]))
            return 0
        for rating in ratings:
            jc.save_rating(wizard.project, self.METHOD, rating,
                           who=f"{wizard.who} (grades in the answers file)")
        panel.ratings = jc.load_ratings(wizard.project, self.METHOD)
        left = f" {count(len(notes), 'grade')} left out: " + " ".join(notes[:3]) if notes else ""
        panel.message.setText(f"Kept {count(len(ratings), 'grade')} from the answers file as the "
                              f"ratings of “{ratings[0].rater}”.{left}")
        panel.show_next()
        panel.refresh_report()
        return len(ratings)

    def judge_chosen(self) -> None:
        """The condition is the choices now: its stored results are shown at once."""
        stored = self.wizard.current_result()
        if stored is not None:
            self.wizard.pages["results"].set_result(stored)
        self.refresh()

    def reachable(self) -> bool:
        return self.wizard.current_result(load=False) is not None
