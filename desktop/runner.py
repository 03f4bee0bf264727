"""Running a plain core step from the GUI: progress as Qt signals, Cancel, a clear ending.

Every long step in ``core`` is ``step(progress, cancel)``, a plain function (CPU work: run in the
loop's executor) or a coroutine function (LLM calls: run on the qasync loop). A wizard does::

    from functools import partial
    from desktop.runner import run_step, start_step

    # inside a coroutine (e.g. a qasync.asyncSlot):
    outcome = await run_step(self.run_panel, partial(core_fn, inputs), title="Scoring answers")
    if outcome.finished:
        self.show_results(outcome.result)

    # or from an ordinary slot:
    start_step(self.run_panel, partial(core_fn, inputs), title="...", on_done=self._done)

The panel's Cancel button sets the step's :class:`~core.runs.CancelToken`; when the step raises
:class:`~core.runs.Cancelled` the panel says "Stopped; finished work was kept." and keeps the
last count. Any other exception ends as a plain error message in the panel (and in the log).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from PySide6.QtCore import QObject, Qt, Signal, Slot

from core.runs import Cancelled, CancelToken, Progress, ProgressState
from desktop.errors import log_file, spawn
from desktop.run_panel import RunPanel

__all__ = ["QtProgress", "RunOutcome", "cancel_all", "run_step", "running_count", "spawn",
           "start_step"]

log = logging.getLogger("evaldesk.runner")
T = TypeVar("T")

Step = Callable[[Progress, CancelToken], Any]

#: Tokens of the steps running now (so closing the window can stop them all).
_running: set[CancelToken] = set()


def running_count() -> int:
    """How many steps are running now (closing the window asks first when any is)."""
    return len(_running)


def cancel_all() -> int:
    """Ask every running step to stop (the window is closing). Returns how many were asked."""
    tokens = list(_running)
    for token in tokens:
        token.cancel()
    return len(tokens)


class QtProgress(QObject):
    """A :class:`core.runs.Progress` whose updates arrive as a Qt signal on the GUI thread.

    ``progress`` may be advanced from any thread (an executor worker, the event loop). Bursts are
    coalesced: the GUI gets the latest state at most once per pass of the event loop, so a step
    that advances 100,000 times does not flood the window.
    """

    #: The latest :class:`ProgressState`, delivered on the thread that owns this object.
    changed = Signal(object)
    _poke = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._latest: ProgressState | None = None
        self._pending = False
        self._poke.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self.progress = Progress(self._on_state)

    def _on_state(self, state: ProgressState) -> None:
        with self._lock:
            self._latest = state
            if self._pending:
                return
            self._pending = True
        try:
            self._poke.emit()
        except RuntimeError:  # the receiver was deleted while a worker still reports
            pass

    @Slot()
    def _deliver(self) -> None:
        with self._lock:
            state, self._pending = self._latest, False
        if state is not None:
            self.changed.emit(state)


@dataclass
class RunOutcome(Generic[T]):
    """How a step ended. ``status`` is "finished", "stopped" (cancelled) or "failed"."""

    status: Literal["finished", "stopped", "failed"]
    result: T | None = None
    error: BaseException | None = None
    state: ProgressState | None = None

    @property
    def finished(self) -> bool:
        return self.status == "finished"


def _is_coroutine_step(step: Callable[..., Any]) -> bool:
    target = step
    while hasattr(target, "func"):  # functools.partial, possibly nested
        target = target.func  # type: ignore[attr-defined]
    if inspect.iscoroutinefunction(target):
        return True
    # an object with an async __call__: the method itself, to see whether it is a coroutine
    call = getattr(type(target), "__call__", None)  # noqa: B004
    return call is not None and inspect.iscoroutinefunction(call)


#: Exceptions that mean a bug rather than a problem the user can fix.
_PROGRAMMING_ERRORS = (
    AssertionError,
    AttributeError,
    ImportError,
    IndexError,
    KeyError,
    NameError,
    NotImplementedError,
    TypeError,
    ZeroDivisionError,
)


def failure_message(exc: BaseException) -> str:
    """A plain message for a failed step: the exception's own text when it is meant for users."""
    text = str(exc).strip()
    if text and not isinstance(exc, _PROGRAMMING_ERRORS):
        return f"Failed: {text}"
    detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return (
        f"Failed because of an unexpected problem ({detail}). "
        f"The details were written to the log file {log_file()}."
    )


async def run_step(
    panel: RunPanel,
    step: Step,
    *,
    title: str = "",
    in_executor: bool | None = None,
    loop: asyncio.AbstractEventLoop | None = None,
    on_cancel: Callable[[], None] | None = None,
) -> RunOutcome[Any]:
    """Run ``step(progress, cancel)`` and report into ``panel``; never raises for a failed step.

    A coroutine function is awaited on the event loop; a plain function runs in the loop's
    default executor (pass ``in_executor`` to override the guess). Cancellation of the awaiting
    task itself (e.g. the window closes) cancels the token and propagates. ``on_cancel`` is
    called when the user cancels (the wizards pass their project's ``interrupt``, which stops a
    query of the project file that is running at that moment).
    """
    loop = loop or asyncio.get_running_loop()
    cancel = CancelToken()
    if on_cancel is not None:
        cancel.on_cancel(on_cancel)
    adapter = QtProgress(panel)
    adapter.changed.connect(panel.show_state)
    panel.begin(title, cancel)
    use_executor = (not _is_coroutine_step(step)) if in_executor is None else in_executor
    _running.add(cancel)
    try:
        try:
            if use_executor:
                result = await loop.run_in_executor(None, step, adapter.progress, cancel)
            else:
                result = step(adapter.progress, cancel)
                if inspect.isawaitable(result):
                    result = await result
        finally:
            _running.discard(cancel)
            final = adapter.progress.state
            if final.stage or final.done or final.total:
                panel.show_state(final)
    except Cancelled as exc:
        panel.stop()
        return RunOutcome("stopped", error=exc, state=panel.state)
    except asyncio.CancelledError:
        cancel.cancel()
        panel.stop()
        raise
    except Exception as exc:  # the step failed: say so in the panel, keep the app running
        log.exception("Step %r failed", title or step)
        panel.fail(failure_message(exc))
        return RunOutcome("failed", error=exc, state=panel.state)
    panel.finish()
    return RunOutcome("finished", result=result, state=panel.state)


def start_step(
    panel: RunPanel,
    step: Step,
    *,
    title: str = "",
    on_done: Callable[[RunOutcome[Any]], Awaitable[None] | None] | None = None,
    in_executor: bool | None = None,
    on_cancel: Callable[[], None] | None = None,
) -> asyncio.Task:
    """Start :func:`run_step` from an ordinary (non-async) slot; ``on_done(outcome)`` follows."""

    async def _go() -> RunOutcome[Any]:
        outcome = await run_step(panel, step, title=title, in_executor=in_executor,
                                 on_cancel=on_cancel)
        if on_done is not None:
            maybe = on_done(outcome)
            if inspect.isawaitable(maybe):
                await maybe
        return outcome

    return spawn(_go(), where=f"the step “{title}”" if title else "a step")
