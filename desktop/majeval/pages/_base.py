"""What every MAJ-Eval page shares: the wizard's choices and the session module."""

from __future__ import annotations

from typing import Any

from core.majeval import session as st
from core.words import count
from desktop.wizard import WizardPage

__all__ = ["MajEvalPage", "count", "st"]


class MajEvalPage(WizardPage):
    """A page of :class:`desktop.majeval.wizard.MajEvalWizard`."""

    @property
    def state(self) -> Any:
        return self.wizard.state

    @property
    def project(self) -> Any:
        return self.wizard.project

    def save(self) -> None:
        self.wizard.save()
