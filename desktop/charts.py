"""Charts the three methods share: a method's score against the people's rating, one dot each.

:func:`draw_score_vs_rating` fills a matplotlib ``Figure`` from plain lists (it can be checked
without a window); :class:`ScatterChart` is the widget that draws it and keeps what it plotted
(:attr:`ScatterChart.points`, the titles) so that a test can read the chart back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QComboBox, QWidget

from desktop.views import ACCENT, INK, Chart
from desktop.widgets import pane, tipped

__all__ = [
    "Chart",
    "ScatterChart",
    "ScatterPoint",
    "draw_score_vs_rating",
    "scatter_panel",
    "short",
    "style",
]


def style(ax: Any) -> None:
    """The look every chart shares: no top or right frame, small dark labels."""
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.tick_params(labelsize=9, colors=INK)
    ax.title.set_fontsize(10)
    ax.xaxis.label.set_fontsize(9)
    ax.yaxis.label.set_fontsize(9)


def short(text: str, limit: int = 22) -> str:
    """One line of at most ``limit`` characters (an ellipsis when cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def draw_score_vs_rating(figure: Any, scores: Sequence[float], ratings: Sequence[float],
                         names: Sequence[str] = (), *, title: str, x_label: str,
                         y_label: str, x_range: tuple[float, float] | None = None) -> None:
    """Each person or item as a dot: the method's score across, the people's rating up. A dot
    far from the others' trend is one the two disagree on; the 2 lowest and 3 highest scores
    are named (no hovering needed)."""
    ax = figure.add_subplot(1, 1, 1)
    many = len(scores) > 100  # lighter dots show where many fall on the same place
    ax.scatter(list(scores), list(ratings), s=16 if many else 22, color=ACCENT,
               alpha=0.45 if many else 0.75, zorder=2)
    ax.set_title(title, loc="left", wrap=True)  # wrapped to the chart's width, never cut
    ax.set_xlabel(x_label, wrap=True)
    ax.set_ylabel(y_label, wrap=True)
    if x_range is not None:
        ax.set_xlim(*x_range)
    if names and len(names) == len(scores):
        ranked = sorted(range(len(scores)), key=lambda i: scores[i])
        x_span = (max(scores) - min(scores)) or 1.0
        y_span = (max(ratings) - min(ratings)) or 1.0
        named: list[int] = []
        outermost_first = [ranked[k] for k in (-1, 0, -2, 1, -3) if -len(ranked) <= k < len(ranked)]
        for i in outermost_first:
            if i in named or any(abs(scores[i] - scores[j]) < 0.15 * x_span
                                 and abs(ratings[i] - ratings[j]) < 0.08 * y_span
                                 for j in named):
                continue  # a name would sit on top of another one
            named.append(i)
            ax.annotate(short(names[i], 16), (scores[i], ratings[i]), fontsize=7, color=INK,
                        xytext=(4, 3), textcoords="offset points")
    style(ax)


@dataclass(frozen=True)
class ScatterPoint:
    """One dot: who or what it is, the method's score (x) and the people's rating (y)."""

    name: str
    score: float
    rating: float


class ScatterChart(Chart):
    """A :class:`desktop.views.Chart` that shows one score-against-rating scatter and keeps
    what it plotted (``points``, ``title``, ``x_label``, ``y_label``)."""

    def __init__(self, minimum_height: int = 230, parent: Any = None) -> None:
        super().__init__(minimum_height, parent)
        self.points: list[ScatterPoint] = []
        self.title = self.x_label = self.y_label = ""

    def plot(self, points: Sequence[ScatterPoint], *, title: str, x_label: str, y_label: str,
             x_range: tuple[float, float] | None = None) -> None:
        self.points = list(points)
        self.title, self.x_label, self.y_label = title, x_label, y_label
        self.draw(lambda figure: draw_score_vs_rating(
            figure, [p.score for p in self.points], [p.rating for p in self.points],
            [p.name for p in self.points], title=title, x_label=x_label, y_label=y_label,
            x_range=x_range))


def scatter_panel(choice_tip: str, chart_tip: str, on_choice: Callable[[int], Any],
                  minimum_height: int) -> tuple[QComboBox, ScatterChart, QWidget]:
    """A :class:`ScatterChart` under a list choosing what it plots (``on_choice`` redraws it):
    the list, the chart and the pane holding both."""
    combo = tipped(QComboBox(), choice_tip)
    combo.currentIndexChanged.connect(on_choice)
    chart = tipped(ScatterChart(minimum_height=minimum_height), chart_tip)
    return combo, chart, pane(combo, (chart, 1))
