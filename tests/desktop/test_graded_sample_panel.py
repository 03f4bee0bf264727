"""The "Check the judge" panel says how the graded items were chosen and does not let a sample
chosen by one model's extremes pick that model (issue 28, point 2; pytest-qt, offscreen)."""

from __future__ import annotations

import numpy as np
import pytest

from core.judge_check import (
    JudgeData,
    JudgeItem,
    Rating,
    _extremes,
    grading_order,
    save_rating,
)
from core.project import Project
from desktop.judge_check import JudgeCheckPanel


def _judge(scores, model) -> JudgeData:
    items = [JudgeItem(item_id=f"E{k:03d}", text=f"Essay {k}: " + "word " * (40 + k % 50),
                       scores={"Vocabulary": float(s)}) for k, s in enumerate(scores)]
    return JudgeData(method="InteractEval", items=items, dimensions=["Vocabulary"],
                     model=model, source="project run 1")


def _world(n):
    rng = np.random.default_rng(n)
    teacher = rng.integers(1, 6, n).astype(float)
    return teacher, teacher + rng.normal(0, 2.0, n), teacher + rng.normal(0, 2.0, n)


@pytest.fixture
def project(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as p:
        yield p


def _panel(qtbot, project, judge):
    panel = JudgeCheckPanel("interacteval", lambda: "Ms Ortiz")
    qtbot.addWidget(panel)
    panel.resize(1280, 800)
    panel.set_judge(project, judge)
    return panel


def _wait(qtbot, panel):
    qtbot.waitUntil(lambda: not panel.computing, timeout=60_000)


@pytest.mark.parametrize("n", [30, 300])
def test_a_sample_chosen_by_extremes_is_labelled_and_picks_nobody(qtbot, qloop, project, n):
    teacher, a, b = _world(n)
    judge_a, judge_b = _judge(a, "model-a"), _judge(b, "model-b")
    ids = [i.item_id for i in judge_a.items]
    chosen = sorted(_extremes(judge_a, ids, n // 2))  # what the old order offered first
    for item in chosen:  # graded earlier (an older EvalDesk), kept in the project
        save_rating(project, "interacteval",
                    Rating(item, "Ms Ortiz", {"Vocabulary": float(teacher[int(item[1:])])}))
    panel = _panel(qtbot, project, judge_a)
    # the grading carries on in a random order, not the judge's extremes
    assert panel.current == next(i for i in grading_order(judge_a, panel.seed)
                                 if i not in chosen)
    panel.tabs.setCurrentIndex(1)
    _wait(qtbot, panel)
    assert not panel.warning.isHidden()
    assert "not a random sample" in panel.warning.text()
    assert "Not a random sample" in panel.about_label.text()
    assert "Extremes inflate a correlation" in panel.about_label.text()
    panel.grab().save(f"/tmp/i28a-check-report-{n}.png")
    made = []
    panel.set_candidates([("model A", "model-a", judge_a), ("model B", "model-b", judge_b)],
                         lambda key: made.append(key) or key)
    _wait(qtbot, panel)
    assert "Not a fair ranking" in panel.pick_about.text()
    assert not panel.use_button.isEnabled()
    verdicts = {panel.rank_model.value(r, "judge"): panel.rank_model.value(r, "verdict")
                for r in range(panel.rank_model.rowCount())}
    assert verdicts["model A"].startswith("Favoured by the graded items")
    assert not verdicts["model B"].startswith("Favoured")
    panel.tabs.setCurrentIndex(2)
    panel.grab().save(f"/tmp/i28a-check-pick-{n}.png")
    panel.tabs.setCurrentIndex(0)
    panel.grab().save(f"/tmp/i28a-check-grade-{n}.png")
    assert made == []


def test_a_random_sample_is_said_to_be_one_and_may_pick(qtbot, qloop, project):
    teacher, a, b = _world(30)
    judge_a, judge_b = _judge(a, "model-a"), _judge(b, "model-b")
    panel = _panel(qtbot, project, judge_a)
    for _ in range(20):  # grade in the order offered
        item = panel.current
        combo = panel.score_combos["Vocabulary"]
        combo.setCurrentIndex(combo.findData(float(teacher[int(item[1:])])))
        assert panel.save_and_next()
    panel.tabs.setCurrentIndex(1)
    _wait(qtbot, panel)
    assert "random sample of the 30 items" in panel.about_label.text()
    assert f"seed {panel.seed}" in panel.about_label.text()
    assert "not a random sample" not in panel.warning.text()
    panel.set_candidates([("model A", "model-a", judge_a), ("model B", "model-b", judge_b)],
                         lambda key: key)
    _wait(qtbot, panel)
    assert "Not a fair ranking" not in panel.pick_about.text()
    assert panel.use_button.isEnabled()
