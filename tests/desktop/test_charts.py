"""The shared score-against-rating scatter (desktop/charts.py): every dot drawn, the outermost
dots named without one name on top of another, the words wrapped rather than cut."""

from __future__ import annotations

import pytest

from desktop.charts import draw_score_vs_rating


def _draw(scores, ratings):
    from matplotlib.figure import Figure

    figure = Figure()
    draw_score_vs_rating(figure, scores, ratings, [f"p{i}" for i in range(len(scores))],
                         title="A title", x_label="Score", y_label="Rating")
    return figure.axes[0]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_handful_of_dots_are_all_named(n):
    ax = _draw(list(range(n)), list(range(n)))
    assert sorted(t.get_text() for t in ax.texts) == [f"p{i}" for i in range(n)]
    assert len(ax.collections[0].get_offsets()) == n


def test_names_never_sit_on_each_other_and_the_extremes_are_named():
    scores = [1.0, 1.1, 2.0, 3.0, 4.5, 4.6, 5.0]  # p5 is next to p6 on the same rating
    ratings = [1.0, 1.0, 2.0, 3.0, 4.0, 4.0, 4.0]
    ax = _draw(scores, ratings)
    named = {t.get_text() for t in ax.texts}
    assert {"p6", "p0"} <= named  # the highest and the lowest score
    assert "p5" not in named and "p1" not in named  # each would cover a name already drawn
    assert len(ax.collections[0].get_offsets()) == len(scores)  # every dot is drawn
    assert ax._left_title.get_wrap() and ax.xaxis.label.get_wrap()  # wrapped, never cut


def test_aqer_keeps_its_name_for_the_scatter():
    from matplotlib.figure import Figure

    from desktop.aqer.charts import draw_score_vs_grade

    figure = Figure()
    draw_score_vs_grade(figure, [0.2, 0.9], [3.0, 5.0], ["Ann", "Bo"])
    ax = figure.axes[0]
    assert ax.get_title(loc="left").startswith("AQER score against the expert grade")
    assert ax.get_xlabel() == "AQER score (0 = weakest person, 1 = best)"


def test_scatter_panel_is_a_chooser_above_the_chart(qtbot):
    from desktop.charts import ScatterChart, scatter_panel

    chosen: list[int] = []
    combo, chart, panel = scatter_panel("What to plot.", "One dot per text.", chosen.append,
                                        minimum_height=200)
    qtbot.addWidget(panel)
    assert isinstance(chart, ScatterChart)
    assert (combo.toolTip(), chart.toolTip()) == ("What to plot.", "One dot per text.")
    assert [panel.layout().itemAt(i).widget() for i in range(2)] == [combo, chart]
    assert panel.layout().stretch(1) == 1
    combo.addItems(["Clarity", "Accuracy"])
    combo.setCurrentIndex(1)
    assert chosen[-1] == 1


def _overlaps(boxes) -> bool:
    boxes = sorted(boxes, key=lambda b: b.y0)
    from itertools import pairwise

    return any(b.y0 < a.y1 - 0.5 for a, b in pairwise(boxes))


@pytest.mark.parametrize(("workers", "ais"), [(8, 2), (30, 2), (300, 32)])
def test_the_ai_chart_title_is_never_cut(workers, ais):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from desktop.aqer.charts import draw_llm_comparison

    # the chart's width beside the AI tables, laid out as desktop.views.Chart lays it out
    figure = Figure(figsize=(4.8, 3.6), dpi=100, layout="constrained")
    canvas = FigureCanvasAgg(figure)
    draw_llm_comparison(figure, [(f"Student number {k}", 0.5 + k / 1000) for k in range(workers)],
                        [(f"Chatbot number {k}", 0.6 + k / 100) for k in range(ais)])
    canvas.draw()
    box = figure.axes[0]._left_title.get_window_extent(canvas.get_renderer())
    assert box.x1 <= figure.bbox.x1 + 1 and box.x0 >= -1


def test_the_ai_chart_keeps_32_ai_names_apart_at_1280x800():
    """Issue 27: with 32 AI rows the names overlapped. At the height the AI tab gives the chart
    at 1280x800 (about 360 px), the names stay apart and the title says what is shown."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from desktop.aqer.charts import draw_llm_comparison

    figure = Figure(figsize=(5.3, 3.6), dpi=100)
    canvas = FigureCanvasAgg(figure)
    people = [(f"Student {k}", 0.5 + k / 800) for k in range(300)]
    models = [(f"Chatbot number {k + 1} (version {k % 3})", 0.55 + k / 100) for k in range(32)]
    draw_llm_comparison(figure, people, models)
    canvas.draw()
    ax = figure.axes[0]
    renderer = canvas.get_renderer()
    labels = [t for t in ax.get_yticklabels() if t.get_text()]
    assert not _overlaps([t.get_window_extent(renderer) for t in labels])
    assert sum(t.get_text().startswith("AI: ") for t in labels) >= 2
    title = ax.get_title(loc="left")
    assert "of 32 AI models" in title and "of 300 workers shown" in title
    title_box = ax._left_title.get_window_extent(renderer)
    assert title_box.x1 <= figure.bbox.x1 + 1  # not cut on the right


def test_the_convergence_chart_writes_plain_decimals():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from desktop.aqer.charts import draw_convergence

    figure = Figure(figsize=(6, 3), dpi=100)
    canvas = FigureCanvasAgg(figure)
    draw_convergence(figure, [1, 2, 3, 4], [1e-2, 7e-4, 3e-5, 5e-7], 1e-6)
    canvas.draw()
    ax = figure.axes[0]
    texts = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    texts += [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts and not [t for t in texts if "e-" in t or "^" in t or "$" in t]
    assert "stop below 0.000001" in texts


@pytest.mark.parametrize("chart", ["scores", "few scores", "spread", "convergence", "curve"])
def test_aqer_chart_titles_are_wrapped_never_cut(chart):
    """Issue 27: three chart titles were cut at 1280x800; at the width a chart gets there (and
    narrower), each title stays inside its figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from desktop.aqer import charts

    figure = Figure(figsize=(3.4, 2.4), dpi=100, layout="constrained")
    canvas = FigureCanvasAgg(figure)
    names = [f"Student number {k}" for k in range(30)]
    if chart == "scores":
        charts.draw_scores(figure, names, [k / 29 for k in range(30)])
    elif chart == "few scores":
        charts.draw_scores(figure, names[:8], [k / 7 for k in range(8)])
    elif chart == "spread":
        charts.draw_distribution(figure, [k / 29 for k in range(30)])
    elif chart == "convergence":
        charts.draw_convergence(figure, [1, 2, 3], [1e-2, 1e-4, 1e-7], 1e-6)
    else:
        charts.draw_workers_curve(figure, {3: [0.1, 0.5], 5: [0.4, 0.6], 29: [0.6]},
                                  [0.3, 0.5, 0.6], [0.1, 0.4, 0.6], [0.5, 0.6, 0.6],
                                  "Pearson r", "the expert grades")
    canvas.draw()
    box = figure.axes[0]._left_title.get_window_extent(canvas.get_renderer())
    assert box.x1 <= figure.bbox.x1 + 1, chart
