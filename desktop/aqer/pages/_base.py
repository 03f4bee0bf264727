"""What every AQER page shares: its wizard, typed (``wizard.session`` is the
:class:`core.aqer.session.AqerSession` every page calls)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from desktop.wizard import WizardPage

if TYPE_CHECKING:  # pragma: no cover (the wizard imports the pages)
    from core.runs import CancelToken, Progress
    from desktop.aqer.wizard import AqerWizard

__all__ = ["AqerPage", "session_step"]

T = TypeVar("T")


def session_step(verb: Callable[..., Awaitable[T]]
                 ) -> Callable[[Progress, CancelToken], Awaitable[T]]:
    """A wizard step (``step(progress, cancel)``, awaited on the event loop) that awaits the
    session's ``verb(progress=..., cancel=...)`` (``AqerSession.run`` and the like)."""
    async def step(progress: Progress, cancel: CancelToken) -> T:
        return await verb(progress=progress, cancel=cancel)
    return step


class AqerPage(WizardPage):
    """A page of the AQER wizard."""

    wizard: AqerWizard

    def __init__(self, wizard: AqerWizard) -> None:
        super().__init__(wizard)
