"""The progress / cancel protocol every long step takes.

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
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

__all__ = ["Cancelled", "CancelToken", "Progress", "ProgressState"]


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
