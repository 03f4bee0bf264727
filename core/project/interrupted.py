"""Runs that stopped without ending: EvalDesk was closed, killed or crashed while they ran.

A run is marked 'running' when it starts and 'finished'/'cancelled'/'failed' when it ends, so a
run still marked 'running' when a project is opened (its lock says no other EvalDesk has it)
was interrupted. Everything it finished is kept; starting it again resumes from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from core.words import count

if TYPE_CHECKING:  # pragma: no cover
    from core.project._file import Project, Run

__all__ = ["InterruptedRun", "interrupted_runs"]


@dataclass(frozen=True)
class InterruptedRun:
    run: Run
    done: int  #: units finished (kept)
    failed: int  #: units that failed (asked again on the next start)

    def sentence(self) -> str:
        """E.g. "A run was interrupted (started 24 Nov 14:02): 12 units were finished and are
        kept. Starting it again with the same choices resumes from there."."""
        when = _when(self.run.started_at)
        kept = (f"{count(self.done, 'unit')} finished and kept" if self.done
                else "nothing had finished yet")
        failed = f", {self.failed} failed (they are asked again)" if self.failed else ""
        return (f"A run of this project was interrupted{when} (EvalDesk was closed or stopped "
                f"while it ran): {kept}{failed}. Starting it again with the same choices "
                "resumes from there; nothing finished is done twice.")


def _when(iso: str) -> str:
    try:
        moment = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return ""
    return f" (started {moment.astimezone().strftime('%d %b %Y, %H:%M')})"


def interrupted_runs(project: Project, method: str) -> list[InterruptedRun]:
    """The runs of ``method`` still marked running, newest first, with what they finished."""
    out = []
    for run in project.list_runs(method):
        if run.status != "running":
            continue
        results = project.get_results(run.id)
        done = sum(1 for r in results if r.status == "ok")
        out.append(InterruptedRun(run, done, len(results) - done))
    return sorted(out, key=lambda r: r.run.id, reverse=True)
