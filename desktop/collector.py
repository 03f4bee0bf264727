"""Python's cyclic garbage collector, run on the GUI thread only.

Python collects cyclic garbage in whichever thread happens to allocate when a threshold is
reached: often a worker thread (embedding, a download, a project write). If that garbage holds
Qt objects (a closed dialog, a page's widgets in a cycle with their slots), Qt objects are then
destroyed outside the GUI thread, which can crash the app much later and far away. So automatic
collection is switched off while the window runs, and a timer on the GUI thread collects instead,
with the same thresholds Python uses.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

__all__ = ["GuiThreadCollector"]


class GuiThreadCollector(QObject):
    """Turn automatic collection off and collect on the GUI thread every ``interval_ms``."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = 500) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def check(self) -> int:
        """Collect the generations whose thresholds are reached (what Python would have done)."""
        counts = gc.get_count()
        thresholds = gc.get_threshold()
        if counts[0] <= thresholds[0]:
            return 0
        generation = 0
        if counts[1] > thresholds[1]:
            generation = 1
            if counts[2] > thresholds[2]:
                generation = 2
        return gc.collect(generation)

    def stop(self) -> None:
        """Give collection back to Python (the window closed) after one last full collection."""
        self.timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()
