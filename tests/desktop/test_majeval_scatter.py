"""MAJ-Eval's agreement tab: the scatter of the personas' scores against the people's ratings
holds the items with both, and is not shown when the items have no human ratings (pytest-qt,
offscreen, a made-up run)."""

from __future__ import annotations

from core.majeval.agreement import human_agreement, within_group_alpha
from core.majeval.model import (
    DebateSettings,
    Dimension,
    GroupResult,
    Item,
    ItemResult,
    Persona,
    Scale,
)
from core.majeval.pipeline import EvaluationRun
from desktop.majeval.results import ResultsView

DIM = "Overall quality"


def _run(with_ratings: bool) -> EvaluationRun:
    personas = [Persona(id=f"{g}{k}", group=g, name=f"{g} {k}")
                for g in ("Teachers", "Parents") for k in range(2)]
    items, inputs = [], []
    for i in range(6):
        rating = {"teacher_rating": float(1 + i % 5)} if with_ratings and i != 2 else {}
        inputs.append(Item(id=f"q{i}", content=f"Question {i}", human=rating))
        groups = [GroupResult(item_id=f"q{i}", group=g, initial_mean={DIM: 2.0 + k},
                              final_mean={DIM: 1.0 + (i + k) % 5})
                  for k, g in enumerate(("Teachers", "Parents"))]
        if i == 4:  # a failed debate is no dot
            groups[1] = GroupResult(item_id="q4", group="Parents", status="failed",
                                    error="no usable answer")
        overall = {} if i == 4 else {DIM: sum(g.final_mean[DIM] for g in groups) / 2}
        items.append(ItemResult(item_id=f"q{i}", status="failed" if i == 4 else "ok",
                                overall=overall, groups=groups))
    return EvaluationRun(items=items, personas=personas, dimensions=[Dimension(name=DIM)],
                         scale=Scale(), settings=DebateSettings(), task="Judge questions.",
                         model="scripted", item_inputs=inputs)


def _view(qtbot, run: EvaluationRun) -> ResultsView:
    view = ResultsView()
    qtbot.addWidget(view)
    view.set_run(run, alphas=within_group_alpha(run), humans=human_agreement(run, n_boot=20))
    return view


def test_the_scatter_holds_the_items_with_a_score_and_a_rating(qtbot):
    run = _run(with_ratings=True)
    view = _view(qtbot, run)
    assert not view.agreement_pictures.isHidden() and not view.scatter_panel.isHidden()
    assert view.scatter_combo.currentData() == ("All groups (overall score)", DIM,
                                                "teacher_rating")
    by_id = {r.item_id: r for r in run.items}
    expected = {(f"q{i}", by_id[f"q{i}"].overall[DIM], float(1 + i % 5)) for i in (0, 1, 3, 5)}
    assert {(p.name, p.score, p.rating) for p in view.scatter.points} == expected
    assert "1 to 5" in view.scatter.x_label and "teacher_rating" in view.scatter.y_label
    assert view.scatter.toolTip().startswith("Each dot is one item")  # how to read it
    teachers = next(i for i in range(view.scatter_combo.count())
                    if view.scatter_combo.itemData(i)[0] == "Teachers")
    view.scatter_combo.setCurrentIndex(teachers)  # q4's Teachers debate finished: a dot
    assert {p.name for p in view.scatter.points} == {"q0", "q1", "q3", "q4", "q5"}
    assert view.scatter.title.startswith("Teachers' score against the people's")


def test_without_human_ratings_there_is_no_scatter(qtbot):
    view = _view(qtbot, _run(with_ratings=False))
    assert view.agreement_pictures.isHidden() and view.scatter_panel.isHidden()
    assert not view.no_humans.isHidden()
