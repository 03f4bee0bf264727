"""A step that has had no progress and no answer from a model for a long time says so (issue
28, point 10: a run stuck at 0 of 18 showed nothing but the count). The panel's clock is moved
on by hand: no waiting, no timing."""

from __future__ import annotations

from core.llm._usage import Usage, record
from core.runs import CancelToken, ProgressState
from desktop.run_panel import STALL_S, RunPanel


def _idle_for(panel: RunPanel, seconds: float) -> None:
    panel._last_activity_ms = panel._clock.elapsed() - int(seconds * 1000)
    panel._tick()


def test_a_step_without_progress_or_answers_says_it_may_be_stuck(qtbot):
    panel = RunPanel()
    qtbot.addWidget(panel)
    panel.begin("Debating 18 times", CancelToken())
    panel.show_state(ProgressState("Debating in stakeholder groups", 0, 18))
    _idle_for(panel, STALL_S - 60)
    assert not panel.stalled and not panel.message_label.text()
    _idle_for(panel, STALL_S + 1)
    assert panel.stalled
    text = panel.message_label.text()
    assert "Nothing has happened for 15 minutes" in text and "Cancel" in text
    assert panel.cancel_button.isEnabled()  # the way out stays open

    record(Usage(), call=(10, 5, 0.0))  # a model answered: the step is alive again
    assert not panel.stalled and not panel.message_label.text()

    _idle_for(panel, STALL_S + 1)
    assert panel.stalled
    panel.show_state(ProgressState("Debating in stakeholder groups", 1, 18))
    assert not panel.stalled

    panel.finish()
    _idle_for(panel, STALL_S * 2)
    assert not panel.stalled and panel.message_label.text().startswith("Finished")
    record(Usage(), call=(10, 5, 0.0))  # the panel no longer listens once the step ended
