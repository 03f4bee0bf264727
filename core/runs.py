"""The progress / cancel protocol every long step takes, the one runner of resumable units of
work, and the error a method's step raises when it cannot produce its result.

A long step is a plain function (or coroutine) that accepts a :class:`Progress` and a
:class:`CancelToken`. It reports what it is doing through the first and checks the second between
units of work. Nothing here knows about Qt: the desktop adapts ``Progress`` callbacks to signals,
the CLI prints them to stderr, tests collect them in a list.

    def embed_all(texts, progress: Progress, cancel: CancelToken):
        progress.start("Embedding answers", total=len(texts))
        for batch in batches(texts):
            cancel.raise_if_cancelled()
            ...
            progress.advance(len(batch))

Callbacks may be called from worker threads; receivers must be thread-safe (a Qt queued signal is).

:func:`run_units` runs many independent units (a debate per item and group, a score per text and
dimension) concurrently, skips the ones a :class:`UnitStore` already holds as finished, stores
each one as it finishes (a failed unit with its reason, so it is tried again next time) and
keeps everything finished when it is cancelled. Keys come from :func:`unit_key`.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

__all__ = [
    "CancelToken",
    "Cancelled",
    "Progress",
    "ProgressState",
    "StageError",
    "UnitResult",
    "UnitStore",
    "run_units",
    "unit_key",
    "units_at_once",
]

U = TypeVar("U")
R = TypeVar("R")


class StageError(Exception):
    """A step of a method could not produce its result at all. ``str()`` is a plain message
    naming the step (``stage``) and, where it helps, the place (``where``: a dimension, a
    document); ``kind`` is the ``LLMFailure`` kind behind it, if any."""

    def __init__(self, message: str, *, stage: str = "", where: str = "", kind: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.stage = stage
        self.where = where
        self.kind = kind


class Cancelled(Exception):
    """Raised inside a step when the user asked to stop. Work finished before it is kept."""

    def __init__(self, message: str = "Stopped at your request. Finished work was kept."):
        super().__init__(message)


class CancelToken:
    """A thread-safe flag the user sets (Cancel button, Ctrl+C) and steps poll."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks = list(self._callbacks)
        for callback in callbacks:
            callback()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled()

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once when cancelled (at once if already cancelled)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()


@dataclass(frozen=True)
class ProgressState:
    """A snapshot of a step's progress. ``total`` is None while the amount of work is unknown."""

    stage: str
    done: int
    total: int | None
    detail: str = ""
    elapsed_s: float = 0.0

    @property
    def fraction(self) -> float | None:
        if not self.total:
            return None
        return min(1.0, self.done / self.total)


class Progress:
    """Reports a step's progress to one listener (or nobody).

    ``start`` begins a stage (a new heading, counter back to zero); ``advance`` counts finished
    units; ``note`` changes the detail line without counting. Updates are cheap; listeners that
    redraw should throttle themselves.
    """

    def __init__(self, listener: Callable[[ProgressState], None] | None = None) -> None:
        self._listener = listener
        self._lock = threading.Lock()
        self._stage = ""
        self._done = 0
        self._total: int | None = None
        self._detail = ""
        self._t0 = time.monotonic()

    def start(self, stage: str, total: int | None = None, detail: str = "") -> None:
        with self._lock:
            self._stage, self._done, self._total, self._detail = stage, 0, total, detail
        self._emit()

    def advance(self, n: int = 1, detail: str | None = None) -> None:
        with self._lock:
            self._done += n
            if detail is not None:
                self._detail = detail
        self._emit()

    def note(self, detail: str) -> None:
        with self._lock:
            self._detail = detail
        self._emit()

    @property
    def state(self) -> ProgressState:
        with self._lock:
            return ProgressState(
                self._stage, self._done, self._total, self._detail, time.monotonic() - self._t0
            )

    def _emit(self) -> None:
        if self._listener is not None:
            self._listener(self.state)


# ------------------------------------------------------------------------- resumable units
def unit_key(*parts: Any) -> str:
    """The key of one unit of work: its parts (ids, then fingerprints of what it read) as a
    JSON list, so the key is readable and changes whenever an input of the unit changes."""
    return json.dumps([str(p) for p in parts], ensure_ascii=False)


def units_at_once(model: Any, per_slot: int, least: int = 1) -> int:
    """How many units a run takes at a time: ``per_slot`` for each call ``model`` may have in
    flight (its profile's ``max_concurrency``; 4 for a model without a profile), at least
    ``least``. Enough to keep every slot busy while the next units are prepared."""
    concurrency = getattr(getattr(model, "profile", None), "max_concurrency", 4)
    return max(least, per_slot * int(concurrency))


class UnitStore(Protocol):
    """Where the units of one run are kept (``core.project.units.RunUnits`` for a project)."""

    def finished(self) -> dict[str, Any]:
        """Payloads of the units that finished in an earlier attempt, by key."""
        ...

    def save(self, key: str, payload: Any, ok: bool, error: str = "") -> None:
        """Keep one unit as soon as it ends (``ok`` False: failed, with ``error`` for people).
        A store may also have ``async save_async(...)`` (same arguments), returning once the
        unit is on disk without blocking the event loop; :func:`run_units` then uses that."""
        ...

    def end(self, status: str, message: str) -> None:
        """The run ended: "finished", "cancelled" or "failed", with a message for people."""
        ...


@dataclass
class UnitResult(Generic[R]):
    """One unit's outcome: its ``value``, whether it is ``ok`` (else ``error``), and whether it
    was ``reused`` from an earlier attempt."""

    key: str
    value: R
    ok: bool
    error: str = ""
    reused: bool = False


async def run_units(
    units: Sequence[tuple[str, U]],
    work: Callable[[U], Awaitable[R]],
    *,
    judge: Callable[[R], tuple[bool, str]],
    dump: Callable[[R], Any],
    load: Callable[[Any, U], R],
    store: UnitStore | None = None,
    limit: int | None = None,
    title: str = "Working",
    describe: Callable[[U, R], str] | None = None,
    what: str = "units",
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> list[UnitResult[R]]:
    """Run ``work(unit)`` for every ``(key, unit)`` not finished in ``store``; results in the
    order of ``units``.

    ``judge(result)`` says whether a unit is ok (else why not); ``dump``/``load`` turn a result
    into the stored payload and back (``load(payload, unit)`` may refresh what comes from
    today's inputs). At most ``limit`` units run at once (all when None). Each unit is stored as
    it ends. On cancel the unfinished units stop, the store is told, and :class:`Cancelled`
    is raised; an unexpected error ends the run as failed and is raised. ``what`` names the
    units in messages ("debates", "texts").

    ``limit`` workers (one per unit when None) take the units in order, so a unit is started
    (its prompt built, its cache looked up) only when a worker is free: started all at once,
    6,400 units held the event loop (and the window) for 2.5 s before the first request left;
    :func:`units_at_once` gives a limit that fits the model."""
    progress = progress or Progress()
    keys = [key for key, _ in units]
    if len(set(keys)) != len(keys):
        raise ValueError("every unit needs its own key")
    earlier = store.finished() if store is not None else {}
    results: dict[str, UnitResult[R]] = {}
    for key, unit in units:
        if key in earlier:
            results[key] = UnitResult(key, load(earlier[key], unit), True, reused=True)
    progress.start(title, total=len(units))
    if results:
        progress.advance(len(results), f"{len(results)} {what} already finished earlier")

    async def one(key: str, unit: U) -> None:
        if cancel is not None:
            cancel.raise_if_cancelled()
        value = await work(unit)
        ok, error = judge(value)
        if store is not None:
            save_async = getattr(store, "save_async", None)
            if save_async is not None:  # returns once the unit is on disk: "done" = saved
                await save_async(key, dump(value), ok, error if not ok else "")
            else:
                store.save(key, dump(value), ok, error if not ok else "")
        results[key] = UnitResult(key, value, ok, "" if ok else error)
        detail = describe(unit, value) if describe is not None else key
        progress.advance(1, detail)

    todo = [(key, unit) for key, unit in units if key not in results]
    waiting = iter(todo)  # shared: each free worker takes the next unit

    async def worker() -> None:
        for key, unit in waiting:
            await one(key, unit)

    tasks = [asyncio.ensure_future(worker()) for _ in range(min(limit or len(todo), len(todo)))]
    try:
        if tasks:
            await asyncio.gather(*tasks)
    except BaseException as exc:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if store is not None:
            if isinstance(exc, (Cancelled, asyncio.CancelledError)):
                store.end("cancelled", f"Stopped; finished {what} were kept.")
            else:
                store.end("failed", "Stopped by an unexpected error.")
        raise
    ordered = [results[key] for key in keys]
    if store is not None:
        failed = sum(1 for r in ordered if not r.ok)
        store.end("finished", f"{len(ordered) - failed} {what} finished, {failed} failed")
    return ordered
