"""AQER's charts: matplotlib figures on a QtAgg canvas, imported only when first drawn.

Each ``draw_*`` function fills a matplotlib ``Figure`` from plain lists, so they can be checked
without a window; :class:`Chart` is the widget that holds one figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from core.words import plain_number
from desktop.charts import draw_score_vs_rating
from desktop.charts import short as _short
from desktop.charts import style as _style
from desktop.views import ACCENT, INK, LLM_COLOUR, MUTED, Chart

__all__ = [
    "Chart",
    "draw_convergence",
    "draw_distribution",
    "draw_llm_comparison",
    "draw_score_vs_grade",
    "draw_scores",
    "draw_workers_curve",
]


def draw_scores(figure: Any, names: Sequence[str], scores: Sequence[float]) -> None:
    """Horizontal bars: each worker's score (0-1), best at the top."""
    ax = figure.add_subplot(1, 1, 1)
    pairs = sorted(zip(names, scores), key=lambda p: p[1])
    if len(pairs) > 12:  # the best and worst 5 keep the labels readable; the histogram shows all
        total = len(pairs)
        pairs = pairs[:5] + pairs[-5:]
        ax.set_title(f"The 5 highest and 5 lowest of {total} workers", loc="left", wrap=True)
        ax.axhline(4.5, color=MUTED, linewidth=0.8, linestyle=":")
    else:
        ax.set_title("Score per worker (1 = closest to the consensus)", loc="left", wrap=True)
    labels = [_short(n) for n, _ in pairs]
    values = [s for _, s in pairs]
    bars = ax.barh(range(len(values)), values, color=ACCENT, height=0.7)
    ax.set_yticks(range(len(values)), labels)
    ax.set_xlim(0, 1.12)
    ax.set_xlabel("AQER score")
    if len(values) <= 12:
        for bar, value in zip(bars, values):
            ax.text(bar.get_width() + 0.01, bar.get_y() + bar.get_height() / 2, f"{value:.2f}",
                    va="center", fontsize=8, color=INK)
    _style(ax)


def draw_distribution(figure: Any, scores: Sequence[float]) -> None:
    """Histogram of the workers' scores."""
    ax = figure.add_subplot(1, 1, 1)
    bins = max(5, min(20, len(scores) // 3 or 5))
    ax.hist(list(scores), bins=bins, range=(0, 1), color=ACCENT, edgecolor="white")
    ax.set_title("How the scores are spread", loc="left", wrap=True)
    ax.set_xlabel("AQER score")
    ax.set_ylabel("Workers")
    ax.yaxis.get_major_locator().set_params(integer=True)
    _style(ax)


def draw_convergence(
    figure: Any, iterations: Sequence[int], rmse: Sequence[float], tolerance: float
) -> None:
    """The change of the weights per round (log scale) and the stopping threshold."""
    ax = figure.add_subplot(1, 1, 1)
    points = [(i, r) for i, r in zip(iterations, rmse) if r is not None and r > 0]
    if points:
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=4,
                color=ACCENT, label="change of the weights (RMSE)")
        ax.set_yscale("log")
    ax.axhline(tolerance, color=LLM_COLOUR, linestyle="--", linewidth=1,
               label=f"stop below {plain_number(tolerance)}")
    # plain decimals on the axis (0.001, not 10^-3): a teacher reads this chart too
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: plain_number(v, 2)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("Round")
    ax.set_ylabel("Change of the weights")
    ax.set_title("How quickly the weights settled", loc="left", wrap=True)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8, frameon=False)
    _style(ax)


def draw_llm_comparison(
    figure: Any,
    workers: Sequence[tuple[str, float]],
    models: Sequence[tuple[str, float]],
    max_bars: int = 24,
) -> None:
    """Like for like: every worker's mean similarity to the consensus of the OTHER workers
    (grey) beside each AI's mean similarity to the consensus of all workers (orange). At most
    ``max_bars`` bars, so the names stay readable: workers are sampled evenly, and with many AI
    models every other one is kept from the highest down (the title says how many are shown;
    the table beside the chart lists them all)."""
    ax = figure.add_subplot(1, 1, 1)
    # as many bars as the figure's height holds with readable names (about 14 px each)
    room_px = 0.7 * figure.get_figheight() * figure.dpi
    max_bars = max(6, min(max_bars, int(room_px // 14)))
    people = sorted(((n, v, False) for n, v in workers if v is not None), key=lambda i: i[1])
    ais = sorted(((n, v, True) for n, v in models if v is not None), key=lambda i: i[1])
    ai_room = max(1, max_bars // 2)
    shown_ai = ais
    if len(ais) > ai_room:  # the lowest and the highest kept, evenly between
        picks = sorted({round(k * (len(ais) - 1) / (ai_room - 1)) for k in range(ai_room)})
        shown_ai = [ais[k] for k in picks]
    room = max(2, max_bars - len(shown_ai))
    shown_people = people
    if len(people) > room:
        picks = sorted({round(k * (len(people) - 1) / (room - 1)) for k in range(room)})
        shown_people = [people[k] for k in picks]
    items = sorted(shown_people + shown_ai, key=lambda item: item[1])
    labels = [("AI: " if is_llm else "") + _short(name, 24) for name, _, is_llm in items]
    values = [value for _, value, _ in items]
    colours = [LLM_COLOUR if is_llm else MUTED for _, _, is_llm in items]
    ax.barh(range(len(values)), values, color=colours, height=0.7)
    ax.set_yticks(range(len(values)), labels)
    _style(ax)
    ax.tick_params(axis="y", labelsize=7 if len(items) > 16 else 8)
    for tick, (_, _, is_llm) in zip(ax.get_yticklabels(), items):
        if is_llm:
            tick.set_fontweight("bold")
    low = min(values) if values else 0.0
    ax.set_xlim(max(0.0, low - 0.1), 1.0)
    ax.set_xlabel("Similarity to the others' consensus (like for like)")
    title = "AI answers (orange) among the workers (grey), like for like"
    if len(shown_ai) < len(ais) or len(shown_people) < len(people):
        title += (f"\n{len(shown_ai)} of {len(ais)} AI models, "
                  f"{len(shown_people)} of {len(people)} workers shown")
    ax.set_title(title, loc="left", fontsize=9, wrap=True)


def draw_workers_curve(figure: Any, values: dict[int, Sequence[float]], means: Sequence[float],
                       lows: Sequence[float], highs: Sequence[float], statistic: str,
                       against: str) -> None:
    """"How many workers do I need?": each random panel's agreement (dots), the mean per
    number of workers (line) and the middle 95% of the panels (shaded)."""
    ax = figure.add_subplot(1, 1, 1)
    sizes = sorted(values)
    for size in sizes:
        points = [v for v in values[size] if not math.isnan(v)]
        ax.scatter([size] * len(points), points, s=10, color=MUTED, alpha=0.5, zorder=2)
    shown = [(n, m, lo, hi) for n, m, lo, hi in zip(sizes, means, lows, highs)
             if not math.isnan(m)]
    if shown:
        xs = [n for n, _, _, _ in shown]
        ax.fill_between(xs, [lo for _, _, lo, _ in shown], [hi for _, _, _, hi in shown],
                        color=ACCENT, alpha=0.15, linewidth=0, zorder=1,
                        label="middle 95% of the panels")
        ax.plot(xs, [m for _, m, _, _ in shown], color=ACCENT, marker="o", zorder=3,
                label="mean")
        ax.set_xticks(xs)
    lowest = min([-0.05, *(v for vs in values.values() for v in vs if not math.isnan(v))])
    ax.set_ylim(lowest - 0.05, 1.02)
    ax.axhline(0, color=MUTED, linewidth=0.6)
    ax.set_xlabel("Workers in the panel (drawn at random)")
    ax.set_ylabel(f"{statistic} with {against}")
    ax.set_title(f"AQER's agreement with {against}, by number of workers", loc="left",
                 wrap=True)
    ax.legend(fontsize=8, loc="lower right", frameon=False)
    _style(ax)


def draw_score_vs_grade(figure: Any, scores: Sequence[float], grades: Sequence[float],
                        names: Sequence[str] = ()) -> None:
    """Each person as a dot: AQER's score (0-1) across, the expert grade up (the shared
    :func:`desktop.charts.draw_score_vs_rating` with AQER's words)."""
    draw_score_vs_rating(figure, scores, grades, names,
                         title="AQER score against the expert grade, one dot per person",
                         x_label="AQER score (0 = weakest person, 1 = best)",
                         y_label="Expert grade", x_range=(-0.05, 1.05))
