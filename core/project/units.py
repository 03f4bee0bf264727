"""The units of one run kept in the project: what :func:`core.runs.run_units` stores through."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from core.project._file import Project

__all__ = ["RunUnits"]


class RunUnits:
    """A :class:`core.runs.UnitStore` over run ``run_id``'s results of ``kind``."""

    def __init__(self, project: Project, run_id: int, kind: str) -> None:
        self.project = project
        self.run_id = run_id
        self.kind = kind

    def finished(self) -> dict[str, Any]:
        return {
            r.key: r.payload
            for r in self.project.get_results(self.run_id, self.kind, status="ok")
        }

    def save(self, key: str, payload: Any, ok: bool, error: str = "") -> None:
        if ok:
            self.project.put_result(self.run_id, self.kind, key, payload)
        else:
            self.project.put_result(self.run_id, self.kind, key, payload, status="failed",
                                    error=error or "This unit failed.")

    async def save_async(self, key: str, payload: Any, ok: bool, error: str = "") -> None:
        """:meth:`save` through the project's group commit: returns once the unit is on disk,
        sharing one transaction with every result and LLM call that ended meanwhile, and the
        event loop never waits for the disk. What :func:`core.runs.run_units` uses."""
        if ok:
            self.project.queue_result(self.run_id, self.kind, key, payload)
        else:
            self.project.queue_result(self.run_id, self.kind, key, payload, status="failed",
                                      error=error or "This unit failed.")
        await self.project.committed()

    def end(self, status: str, message: str) -> None:
        """The run ended (also on cancel or error): the queued results are committed first."""
        self.project.finish_run(self.run_id, status, message)  # type: ignore[arg-type]
