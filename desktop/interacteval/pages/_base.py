"""What every InteractEval page reads from its wizard: the state, the project, who is working,
the model profiles, and how to start a long step."""

from __future__ import annotations

from typing import Any

from core.interacteval import session as st
from core.interacteval.model import Dimension
from desktop.wizard import WizardPage

__all__ = ["InteractEvalPage", "plain_step"]


class InteractEvalPage(WizardPage):
    """A page of the InteractEval wizard (``self.wizard`` is the
    :class:`desktop.interacteval.wizard.InteractEvalWizard`)."""

    @property
    def state(self) -> st.WizardState:
        return self.wizard.state

    @property
    def project(self) -> Any:
        return self.wizard.project

    @property
    def who(self) -> str:
        return self.wizard.who

    @property
    def busy(self) -> str:
        return self.wizard.busy

    @property
    def dimension(self) -> Dimension | None:
        return self.wizard.dimension

    def _save(self) -> None:
        self.wizard.save_state()

    def _profiles(self) -> list[Any]:
        return self.wizard.profiles()

    def _profile(self, name: str) -> Any:
        return self.wizard.profile(name)

    def _llm(self, name: str, run_id: int | None = None) -> Any:
        return self.wizard.llm(name, run_id)

    def _builder_name(self) -> str:
        return self.wizard.builder_name()


def plain_step(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A plain function as a runner step (run in the executor; one short unit of work)."""

    def step(progress: Any, cancel: Any) -> Any:
        progress.start("Working", total=1)
        result = fn(*args, **kwargs)
        progress.advance(1)
        return result

    return step
