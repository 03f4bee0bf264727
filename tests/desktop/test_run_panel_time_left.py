"""The run panel's time left: from the pace of the current stage, not counting work found
already done at its start (progress snapshots with chosen times; no clock is read)."""

from __future__ import annotations

from core.runs import ProgressState
from desktop.run_panel import RunPanel


def test_time_left_follows_the_pace_of_the_stage(qtbot):
    panel = RunPanel()
    qtbot.addWidget(panel)
    panel.begin("Debating")
    panel.show_state(ProgressState("Debating", 0, 100, elapsed_s=0.0))
    panel.show_state(ProgressState("Debating", 40, 100, elapsed_s=0.1))  # 40 kept from before
    assert panel.time_left == ""
    panel.show_state(ProgressState("Debating", 50, 100, elapsed_s=60.1))  # 10 in a minute
    assert panel.time_left == "about 5 minutes left"
    panel._tick()
    assert panel.elapsed_label.text().endswith(" · about 5 minutes left")
    panel.show_state(ProgressState("Debating", 99, 100, elapsed_s=354.1))
    assert panel.time_left == "under a minute left"
    panel.show_state(ProgressState("Summaries", 0, None, elapsed_s=360.0))
    assert panel.time_left == ""
    panel.finish()
    panel._tick()
    assert "left" not in panel.elapsed_label.text()
