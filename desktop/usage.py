"""The status-bar read-out of language-model usage for the open project: calls, tokens, cost.

``core.llm`` calls its usage listeners with the session totals (an object with ``calls``,
``cache_hits``, ``prompt_tokens``, ``completion_tokens`` and ``cost``). Importing ``core.llm``
may pull in heavy libraries, so the indicator does not import it at start-up: it attaches as soon
as someone else has imported it (checked twice a second, a dictionary look-up), or when
:meth:`UsageIndicator.attach` is called explicitly (the runner and "Test connection" do).
"""

from __future__ import annotations

import importlib
import logging
import sys
from types import SimpleNamespace
from typing import Any

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["UsageIndicator", "format_usage"]

log = logging.getLogger("evaldesk.usage")


def format_usage(usage: Any) -> str:
    """One short line for the status bar: ``LLM: 12 calls (3 from cache) · 4,210 tokens · $0.0132``.

    Calls whose price litellm does not know are counted, not priced as free; failed calls are
    mentioned.
    """
    calls = int(getattr(usage, "calls", 0) or 0)
    hits = int(getattr(usage, "cache_hits", 0) or 0)
    failures = int(getattr(usage, "failures", 0) or 0)
    unpriced = int(getattr(usage, "calls_without_cost", 0) or 0)
    tokens = int(getattr(usage, "prompt_tokens", 0) or 0) + int(
        getattr(usage, "completion_tokens", 0) or 0
    )
    cost = float(getattr(usage, "cost", 0.0) or 0.0)
    extras = [f"{hits:,} from cache"] if hits else []
    if failures:
        extras.append(f"{failures:,} failed")
    noun = "call" if calls == 1 else "calls"
    text = f"LLM: {calls:,} {noun}" + (f" ({', '.join(extras)})" if extras else "")
    text += f" · {tokens:,} tokens · ${cost:,.4f}"
    if unpriced:
        text += f" + {unpriced:,} of unknown price"
    return text


class UsageIndicator(QLabel):
    """Shows the session's LLM usage; updated through :meth:`show_usage` (any thread)."""

    _usage = Signal(object)
    #: A plain sentence about the local model's engine (starting, ready, crashed, stopped).
    engine_message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usageIndicator")
        self.attached = False
        self.last_usage: Any = None
        self.setText(format_usage(None))
        self.setToolTip(
            "Language-model use for the open project since it was opened: number of calls (answers reused from the "
            "project's cache cost nothing), tokens sent and received, and the estimated cost "
            "from litellm's price list (0 for models on this computer)."
        )
        self._usage.connect(self._apply)
        self._watch = QTimer(self)
        self._watch.setInterval(500)
        self._watch.timeout.connect(self._attach_if_loaded)
        self._watch.start()

    def show_usage(self, usage: Any) -> None:
        """Display ``usage`` (session totals). Safe to call from any thread."""
        try:
            self._usage.emit(usage)
        except RuntimeError:  # the indicator is gone (app closing)
            pass

    def show_engine_event(self, event: Any) -> None:
        """Pass an engine event's sentence on (:attr:`engine_message`). Safe from any thread."""
        try:
            self.engine_message.emit(str(getattr(event, "message", "") or ""))
        except RuntimeError:  # the indicator is gone (app closing)
            pass

    #: The totals :meth:`start_project` subtracts, so the read-out belongs to the open project.
    _FIELDS = ("calls", "cache_hits", "failures", "calls_without_cost", "prompt_tokens",
               "completion_tokens", "cost")

    @Slot(object)
    def _apply(self, usage: Any) -> None:
        self.session_usage = usage
        base = getattr(self, "_baseline", None)
        if usage is not None and base is not None:
            usage = SimpleNamespace(**{f: (getattr(usage, f, 0) or 0) - (getattr(base, f, 0) or 0)
                                       for f in self._FIELDS})
        self.last_usage = usage
        self.setText(format_usage(usage))

    @Slot(object)
    def start_project(self, project: Any = None) -> None:
        """Count from zero for a newly opened project (the read-out is the open project's use
        since it was opened, never the previous project's); the same project saved under a new
        name keeps its count."""
        if project is not None and project is getattr(self, "_project", None):
            return
        self._project = project
        self._baseline = getattr(self, "session_usage", None)
        self._apply(self._baseline)

    def attach(self) -> bool:
        """Register with ``core.llm`` (importing it). False when it is not available."""
        if self.attached:
            return True
        try:
            llm = importlib.import_module("core.llm")  # sys.modules' entry, not a stale attribute
            llm.add_usage_listener(self.show_usage)
            engine_listener = getattr(llm, "add_engine_listener", None)
            if engine_listener is not None:
                engine_listener(self.show_engine_event)
            current = getattr(llm, "session_usage", None)
            if current is not None:
                self.show_usage(current())
        except Exception as exc:  # noqa: BLE001 - missing or broken: the app works without it
            log.info("LLM usage is not shown: %s", exc)
            return False
        self.attached = True
        self._watch.stop()
        return True

    @Slot()
    def _attach_if_loaded(self) -> None:
        if "core.llm" in sys.modules and not self.attach():
            self._watch.stop()
