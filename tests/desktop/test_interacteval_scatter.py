"""InteractEval's agreement tab shows a scatter of the checklist score against the human score
(pytest-qt, offscreen): one dot per text, compared within each source document as the paper's
per-source-document correlation does; a failed text is never a dot."""

from __future__ import annotations

import pytest

from core.interacteval import agreement_rows, human_agreement
from core.interacteval.model import Checklist, ScoringSettings, TextScore
from core.interacteval.pipeline import ScoringRun
from desktop.interacteval.results import ResultsView


def _scores(with_sources: bool) -> list[TextScore]:
    out = []
    values = {"d1": [(2.0, 1.0), (3.0, 3.0), (5.0, 4.0)], "d2": [(1.0, 2.0), (4.0, 5.0)],
              "d3": [(3.0, 3.0)]}  # d3: one text, nothing to compare it with
    for dimension, shift in (("Clarity", 0.0), ("Accuracy", 0.5)):
        for doc, pairs in values.items():
            for k, (score, human) in enumerate(pairs):
                out.append(TextScore(text_id=f"{doc}-{k}", dimension=dimension, status="ok",
                                     score=score + shift, human=human,
                                     source_id=doc if with_sources else ""))
        out.append(TextScore(text_id="bad", dimension=dimension, status="failed",
                             note="no usable answer", source_id="d1" if with_sources else "",
                             human=5.0))
    return out


def _view(qtbot, scores: list[TextScore]) -> ResultsView:
    run = ScoringRun(scores=scores, settings=ScoringSettings(), model="scripted",
                     checklists=[Checklist(dimension="Clarity"), Checklist(dimension="Accuracy")])
    view = ResultsView()
    qtbot.addWidget(view)
    view.set_run(run)
    view.set_agreement(agreement_rows(human_agreement(scores, n_boot=50)))
    return view


def test_the_scatter_compares_texts_within_their_source_document(qtbot):
    view = _view(qtbot, _scores(with_sources=True))
    assert not view.scatter_panel.isHidden()
    assert [view.scatter_combo.itemText(i) for i in range(view.scatter_combo.count())] == [
        "Clarity", "Accuracy"]
    dots = {p.name: (p.score, p.rating) for p in view.scatter.points}
    # d1: scores 2, 3, 5 (mean 10/3), human 1, 3, 4 (mean 8/3); d2: 1, 4 / 2, 5; d3 left out
    expected = {"d1-0": (2 - 10 / 3, 1 - 8 / 3), "d1-1": (3 - 10 / 3, 3 - 8 / 3),
                "d1-2": (5 - 10 / 3, 4 - 8 / 3), "d2-0": (-1.5, -1.5), "d2-1": (1.5, 1.5)}
    assert dots.keys() == expected.keys()  # the failed text and the lone d3 text are no dots
    for name, (x, y) in expected.items():
        assert dots[name] == pytest.approx((x, y))
    assert "same source" in view.scatter.title and "one dot per text" in view.scatter.title
    assert "source's average" in view.scatter.x_label
    assert "same source" in view.scatter.toolTip()  # how to read it, in plain words
    view.scatter_combo.setCurrentText("Accuracy")  # the shift of 0.5 goes with the mean
    assert {p.name: p.score for p in view.scatter.points}["d2-1"] == pytest.approx(1.5)
    assert view.scatter.title.startswith("Accuracy")


def test_without_sources_the_scatter_shows_the_scores_themselves(qtbot):
    view = _view(qtbot, _scores(with_sources=False))
    dots = {p.name: (p.score, p.rating) for p in view.scatter.points}
    assert dots["d1-2"] == (5.0, 4.0) and dots["d3-0"] == (3.0, 3.0) and "bad" not in dots
    assert len(dots) == 6
    assert view.scatter.x_label == "Checklist score (1 to 5)"
    assert view.scatter.y_label == "Human score"


def test_a_new_run_without_human_scores_shows_no_old_dots(qtbot):
    view = _view(qtbot, _scores(with_sources=True))
    assert not view.scatter_panel.isHidden()
    plain = [s.model_copy(update={"human": None}) for s in _scores(with_sources=True)]
    view.set_run(ScoringRun(scores=plain, settings=ScoringSettings(), model="scripted",
                            checklists=[Checklist(dimension="Clarity")]))
    assert view.scatter_panel.isHidden()
