"""What every MAJ-Eval page shares: the wizard's session and its choices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.words import count
from desktop.wizard import WizardPage

if TYPE_CHECKING:  # pragma: no cover
    from core.majeval.session import MajEvalChoices, MajEvalSession
    from core.project import Project
    from desktop.majeval.wizard import MajEvalWizard

__all__ = ["MajEvalPage", "count"]


class MajEvalPage(WizardPage):
    """A page of :class:`desktop.majeval.wizard.MajEvalWizard`: it makes calls of the wizard's
    :class:`core.majeval.session.MajEvalSession` and shows what they return."""

    wizard: MajEvalWizard

    def __init__(self, wizard: MajEvalWizard) -> None:
        super().__init__(wizard)

    @property
    def session(self) -> MajEvalSession:
        return self.wizard.session

    @property
    def choices(self) -> MajEvalChoices:
        return self.wizard.choices

    @property
    def project(self) -> Project:
        return self.wizard.project

    def save(self) -> None:
        self.wizard.save()
