"""Measuring this computer's speed before the first estimate of a model that runs here.

A time estimate with nothing measured is a plain guess, and a new project's guesses were 3 to 20
times too low for the built-in model (issue 28). So before a page shows the first estimate for
a model that EvalDesk runs on this computer, and nothing was measured for it yet (in the
project or earlier on this computer), one call of a realistic size is timed
(:func:`core.llm.estimate.probe_latency`); the estimate then works out each call's time from
its size. A server or cloud model is never called for an estimate (it may cost money, and its
texts would leave the computer before the person agreed): its estimate says it is a guess
until the first run has measured it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from core.llm import estimate as llm_estimate

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.settings import ModelProfile

__all__ = ["ENABLED", "calibrate"]

log = logging.getLogger("evaldesk.calibration")

#: Tests switch the automatic measuring off (it would load the bundled model); the app never.
ENABLED = True
#: Models measured (or tried) in this session: a failed measurement is not repeated.
_tried: set[str] = set()
#: What an estimate label says while the speed is being measured.
MEASURING = ("Measuring how fast the model answers on this computer (one short call), for the "
             "time estimate…")


async def calibrate(project: Project | None, profile: ModelProfile | None,
                    before: Callable[[], object] | None = None) -> bool:
    """Time one call to ``profile``'s model when it runs on this computer and nothing tells its
    speed yet (``before()`` is called first, e.g. to say so); True when a measurement was made
    (the estimate should be worked out again)."""
    if not ENABLED or profile is None or not getattr(profile, "is_local", False):
        return False
    key = f"{profile.model}#{profile.gguf_path}"
    if key in _tried:
        return False
    loop = asyncio.get_running_loop()
    # through the module: tests put their own measurement in its place
    if not await loop.run_in_executor(None, llm_estimate.needs_calibration, project, profile):
        return False
    _tried.add(key)
    if before is not None:
        before()
    try:
        await llm_estimate.probe_latency(profile)
    except Exception:
        log.warning("could not time the model %s", profile.model, exc_info=True)
        return False
    return True
