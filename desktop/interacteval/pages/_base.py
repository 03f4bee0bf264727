"""What every InteractEval page reads from its wizard: the session (with the choices), the
project, who is working, the model profiles, and how to start a long step."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.interacteval.model import Dimension
from core.interacteval.session import InteractEvalChoices, InteractEvalSession
from desktop.wizard import WizardPage

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.settings import ModelProfile
    from desktop.interacteval.wizard import InteractEvalWizard

__all__ = ["InteractEvalPage", "plain_step"]


class InteractEvalPage(WizardPage):
    """A page of the InteractEval wizard (``self.wizard`` is the
    :class:`desktop.interacteval.wizard.InteractEvalWizard`)."""

    wizard: InteractEvalWizard

    def __init__(self, wizard: InteractEvalWizard) -> None:
        super().__init__(wizard)

    @property
    def session(self) -> InteractEvalSession:
        return self.wizard.session

    @property
    def choices(self) -> InteractEvalChoices:
        return self.wizard.choices

    @property
    def project(self) -> Project:
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
        self.wizard.save_choices()

    def _profiles(self) -> list[ModelProfile]:
        return self.wizard.profiles()

    def _profile(self, name: str) -> ModelProfile | None:
        return self.wizard.profile(name)

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


def show_estimate(page: Any, label: Any, compute: Any, *, lead: str,
                  profiles: Any = ()) -> Any:
    """Work out an estimate (``compute()`` in a worker thread, returning a
    :class:`core.llm.estimate.Estimate` or None) and show it in ``label`` as one plain line
    starting with ``lead`` ("Running the remaining steps"); returns the task (tests await it).
    A later call replaces an earlier one still working. A model of ``profiles`` that runs on
    this computer and was never measured is timed first (:mod:`desktop.calibration`)."""
    import asyncio

    from core.project import ProjectError
    from desktop.errors import spawn

    generation = getattr(page, "_estimate_generations", {}).get(id(label), 0) + 1
    page.__dict__.setdefault("_estimate_generations", {})[id(label)] = generation
    project = page.project

    async def work() -> None:
        from desktop.calibration import MEASURING, calibrate

        for profile in profiles:
            await calibrate(project, profile, lambda: label.setText(MEASURING))
            if page._estimate_generations.get(id(label)) != generation:
                return
        try:
            est = await asyncio.get_running_loop().run_in_executor(None, compute)
        except ProjectError:
            return  # the project was closed meanwhile
        if page._estimate_generations.get(id(label)) != generation or getattr(
                project, "closed", False):
            return
        if est is None:
            label.setText("")
            return
        if getattr(est, "too_long", None):  # the run will be refused: say why, before it
            from core.llm.context import refusal

            label.setText(refusal(est.too_long))
            return
        text = est.summary() + "."
        if est.calls_max:
            text = (f"{lead}: {text[0].lower()}{text[1:]} Time based on "
                    f"{est.latency_s:.1f} seconds per call ({est.latency_source}).")
        label.setText(text)

    return spawn(work(), "estimating the calls")
