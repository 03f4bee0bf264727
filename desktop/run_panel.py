"""The run panel: how every long step looks while it runs (and after it ends).

A progress bar, the stage and a detail line, a count ("37 of 100"), the elapsed time and a Cancel
button. Wizards put one on their run page and hand it to :func:`desktop.runner.run_step`, which
drives it; the panel itself knows nothing about what runs.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import QElapsedTimer, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from core.runs import CancelToken, ProgressState
from desktop.widgets import hint_label

__all__ = ["RunPanel", "RunStatus", "format_elapsed"]

#: Progress counted within this many seconds of a stage's start is work found already done
#: (kept from an earlier run), not a measure of the pace.
INSTANT_S = 1.0

RunStatus = Literal["idle", "running", "stopping", "finished", "stopped", "failed"]

STOPPED_TEXT = "Stopped; finished work was kept."
#: A running step that has had no answer from a model and no progress for this long says so
#: (longer than any model's answer should take: the built-in model's timeout is 10 minutes).
STALL_S = 15 * 60.0


def stall_text(seconds: float) -> str:
    """What a step says when nothing has happened for ``seconds``."""
    from core.llm.estimate import time_words  # not at start-up: core.llm takes ~0.3 s

    return (f"Nothing has happened for {time_words(seconds)}: no answer came from the model and "
            "no piece of work finished. The model may be stuck. Press Cancel and start the step "
            "again (finished work is kept); if it stays stuck, restart EvalDesk or choose "
            "another model.")


def format_elapsed(seconds: float) -> str:
    seconds = int(max(0, seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class RunPanel(QFrame):
    """Shows one step's progress; Cancel asks the step to stop (through its CancelToken)."""

    #: Emitted when the user presses Cancel (after the token was set).
    cancel_requested = Signal()
    #: Emitted with the final status ("finished", "stopped" or "failed").
    ended = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runPanel")
        self.status: RunStatus = "idle"
        self.state: ProgressState | None = None
        self._token: CancelToken | None = None
        self._clock = QElapsedTimer()
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)
        #: Seconds without progress or a model's answer after which the panel says the step
        #: looks stuck (see :data:`STALL_S`).
        self.stall_after_s = STALL_S
        self.stalled = False
        self._last_activity_ms = 0
        self._remove_listener = None

        self.title_label = QLabel("Nothing is running")
        self.title_label.setObjectName("runTitle")
        self.stage_label = QLabel("")
        self.stage_label.setWordWrap(True)
        self.detail_label = hint_label("")
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.count_label = QLabel("")
        self.elapsed_label = QLabel("")
        self.elapsed_label.setObjectName("hint")
        self.elapsed_label.setToolTip("Time since this step started.")
        self.message_label = QLabel("")
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message_label.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip(
            "Stop after the current piece of work. Everything already finished is kept, and "
            "running the step again only does what is missing."
        )
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.request_cancel)

        top = QHBoxLayout()
        top.addWidget(self.title_label, 1)
        top.addWidget(self.elapsed_label)
        bar_row = QHBoxLayout()
        bar_row.addWidget(self.bar, 1)
        bar_row.addWidget(self.count_label)
        bar_row.addWidget(self.cancel_button)
        # never squashed below what it shows (a crowded page once left Cancel 5 px tall and
        # cut an error to one line): the page scrolls or gives up other room instead
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.message_label.setSizePolicy(QSizePolicy.Policy.Preferred,
                                         QSizePolicy.Policy.Minimum)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.stage_label)
        layout.addLayout(bar_row)
        layout.addWidget(self.detail_label)
        layout.addWidget(self.message_label)

    # -- driven by the runner -----------------------------------------------------------------
    def begin(self, title: str, cancel: CancelToken | None = None) -> None:
        """A step starts: reset everything and arm Cancel (if a token is given)."""
        self._token = cancel
        self.status = "running"
        self.state = None
        self._rate_start = None
        self.time_left = ""
        self.title_label.setText(title or "Working")
        self.stage_label.setText("Starting…")
        self.detail_label.setText("")
        self.count_label.setText("")
        self.message_label.hide()
        self.message_label.setText("")
        self._set_message_kind("")
        self.bar.setRange(0, 0)  # busy until the step says how much there is to do
        self.cancel_button.setText("Cancel")
        self.cancel_button.setEnabled(cancel is not None)
        self._clock.start()
        self._last_activity_ms = 0
        self.stalled = False
        self._listen(True)
        self._ticker.start()
        self._tick()

    @Slot(object)
    def show_state(self, state: ProgressState) -> None:
        """Show a progress snapshot (safe to call often; the runner coalesces bursts)."""
        start = self._rate_start
        if not state.total or start is None or start[0] != state.stage \
                or state.done < start[1] or state.elapsed_s - start[2] < INSTANT_S:
            # a new stage, or work found done already (counted at once): time left counts
            # from here
            self._rate_start = (state.stage, state.done, state.elapsed_s)
        if self.state is None or (state.stage, state.done, state.detail) != (
                self.state.stage, self.state.done, self.state.detail):
            self._active()
        self.state = state
        self.time_left = self._time_left(state)
        self.stage_label.setText(state.stage)
        self.detail_label.setText(state.detail)
        if state.total:
            self.bar.setRange(0, state.total)
            self.bar.setValue(min(state.done, state.total))
            self.count_label.setText(f"{state.done:,} of {state.total:,}")
        else:
            if self.status in ("running", "stopping"):
                self.bar.setRange(0, 0)
            self.count_label.setText(f"{state.done:,} done" if state.done else "")

    def finish(self, message: str = "") -> None:
        if self.state is not None and self.state.total:
            self.bar.setRange(0, self.state.total)
            self.bar.setValue(min(self.state.total, self.state.done))
        else:
            self.bar.setRange(0, 1)
            self.bar.setValue(1)
        self._end("finished", message or f"Finished in {self._elapsed_text()}.", "ok")

    def stop(self, message: str = "") -> None:
        self._freeze_bar()
        self._end("stopped", message or STOPPED_TEXT, "")

    def fail(self, message: str) -> None:
        self._freeze_bar()
        self._end("failed", message, "error")

    # -- user ---------------------------------------------------------------------------------
    @Slot()
    def request_cancel(self) -> None:
        if self.status != "running":
            return
        self.status = "stopping"
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Stopping…")
        self.stage_label.setText(
            (self.state.stage + ": " if self.state and self.state.stage else "")
            + "stopping after the current piece of work…"
        )
        if self._token is not None:
            self._token.cancel()
        self.cancel_requested.emit()

    # -- internals ----------------------------------------------------------------------------
    def _freeze_bar(self) -> None:
        if self.state is not None and self.state.total:
            self.bar.setRange(0, self.state.total)
            self.bar.setValue(min(self.state.done, self.state.total))
        else:
            self.bar.setRange(0, 1)
            self.bar.setValue(0)

    def _listen(self, on: bool) -> None:
        """Count every model call, answer or failure as activity while a step runs."""
        if self._remove_listener is not None:
            self._remove_listener()
            self._remove_listener = None
        if on:
            from core.llm import add_usage_listener  # not at start-up (~0.3 s)

            self._remove_listener = add_usage_listener(lambda _usage: self._active())

    def _active(self) -> None:
        self._last_activity_ms = self._clock.elapsed() if self._clock.isValid() else 0
        if self.stalled and self.status in ("running", "stopping"):
            self.stalled = False
            self.message_label.hide()
            self.message_label.setText("")

    def idle_seconds(self) -> float:
        """Seconds since the last progress or model answer of the running step."""
        if not self._clock.isValid():
            return 0.0
        return max(0.0, (self._clock.elapsed() - self._last_activity_ms) / 1000)

    def _end(self, status: RunStatus, message: str, kind: str) -> None:
        self._listen(False)
        self.stalled = False
        self._ticker.stop()
        self._tick()
        self.status = status
        self._token = None
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancel")
        self.message_label.setText(message)
        self._set_message_kind(kind)
        self.message_label.show()
        if self.state is not None and self.state.stage:
            self.stage_label.setText(self.state.stage)
        self.ended.emit(status)

    def _set_message_kind(self, kind: str) -> None:
        self.message_label.setObjectName({"error": "errorText", "ok": "okText"}.get(kind, "note"))
        self.message_label.style().unpolish(self.message_label)
        self.message_label.style().polish(self.message_label)

    def _elapsed_text(self) -> str:
        return format_elapsed(self._clock.elapsed() / 1000 if self._clock.isValid() else 0)

    def _time_left(self, state: ProgressState) -> str:
        """"about 3 minutes left" from the pace of this stage so far ("" before the first unit
        of it is done, or when the amount of work is unknown)."""
        from core.llm.estimate import time_words  # not at start-up (~0.3 s)

        start = self._rate_start
        if not state.total or start is None or state.done >= state.total:
            return ""
        done = state.done - start[1]
        spent = state.elapsed_s - start[2]
        if done <= 0 or spent <= 0:
            return ""
        left = spent / done * (state.total - state.done)
        words = time_words(left)
        return f"{words} left" if words == "under a minute" else f"about {words} left"

    @Slot()
    def _tick(self) -> None:
        text = f"Elapsed {self._elapsed_text()}"
        if self.status == "running" and self.time_left:
            text += f" · {self.time_left}"
        self.elapsed_label.setText(text)
        idle = self.idle_seconds()
        if self.status in ("running", "stopping") and idle >= self.stall_after_s:
            self.stalled = True
            self.message_label.setText(stall_text(idle))
            self._set_message_kind("error")
            self.message_label.show()
