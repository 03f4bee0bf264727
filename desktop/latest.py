"""Background computations of a view of which only the latest counts.

A tab that recomputes whenever a choice changes (the Conditions tabs) starts a computation in a
worker thread each time; by the time one finishes the user may have changed the choice again or
opened another project. :class:`Latest` shows a result only when no newer computation was
started and the project is still open; otherwise the result is dropped without a word.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from core.project import ProjectError
from desktop.errors import spawn

__all__ = ["Latest"]


class Latest:
    """Numbers one view's computations; only the latest one's result reaches the screen."""

    def __init__(self) -> None:
        self.generation = 0

    def start(self) -> None:
        """A newer computation (or a reason not to compute) begins: drop the older results."""
        self.generation += 1

    def run(self, project: Any, work: Callable[[], Any], show: Callable[[Any], None],
            where: str) -> asyncio.Task:
        """Run ``work()`` in a worker thread, then ``show(result)`` unless :meth:`start` was
        called since or ``project`` was closed meanwhile (reading it then raises
        :class:`ProjectError`, which is dropped too). Returns the task (tests await it)."""
        generation = self.generation

        async def go() -> None:
            try:
                result = await asyncio.get_running_loop().run_in_executor(None, work)
            except ProjectError:
                return  # the project was closed meanwhile (another one was opened)
            if generation == self.generation and not getattr(project, "closed", False):
                show(result)

        return spawn(go(), where)
