"""Figures only the toy tasks chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explain.chapters.toy_tasks_seeds import Interval
from explain.figures.charts import band_line
from explain.figures.theme import (
    LINES,
    PATTERNS,
    escape,
    make_figure,
    rgba,
)


def grouped_bars(
    categories: Sequence[str],
    series: Mapping[str, Sequence[float] | np.ndarray],
    title: str,
    *,
    x_title: str,
    y_title: str,
    counts: Sequence[int] | None = None,
    height: int = 380,
) -> go.Figure:
    """One bar per series in each category (error % per distance bin, one colour and fill pattern per encoding).
    NaN values draw no bar. `counts` (one per category) are shown in the hover and under the
    category name, so a bar over 3 examples is not read like one over 3,000."""
    cats = list(categories)
    ticks = [f"{escape(c)}<br>(n={int(counts[k])})" if counts is not None else escape(c) for k, c in enumerate(cats)]
    traces = []
    for k, (name, ys) in enumerate(series.items()):
        traces.append(
            dict(
                type="bar",
                x=list(range(len(cats))),
                y=np.asarray(ys, dtype=float),
                name=name,
                # a fill pattern per encoding beside its colour (WCAG 1.4.1)
                marker=dict(color=LINES[k % len(LINES)], pattern=dict(shape=PATTERNS[k % len(PATTERNS)])),
                customdata=[escape(c) for c in cats],
                hovertemplate=f"{x_title}: %{{customdata}}<br>{y_title}: %{{y:.3g}}<extra>{escape(name)}</extra>",
            )
        )
    return make_figure(
        traces,
        title,
        height + 60,
        xaxis=dict(title=x_title, tickmode="array", tickvals=list(range(len(cats))), ticktext=ticks),
        yaxis=dict(title=y_title, zeroline=True, rangemode="tozero"),
        barmode="group",
        legend=dict(orientation="h", yanchor="top", y=-0.3, xanchor="left", x=0),
    )


# A marker's second channel beside its colour (WCAG 1.4.1): the n-th encoding gets the n-th symbol.
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def seed_strips(
    categories: Sequence[str],
    series: Mapping[str, Sequence[Interval]],
    title: str,
    *,
    x_title: str,
    y_title: str,
    seed_label: str,
    mean_label: str,
    height: int = 400,
    styles: Sequence[tuple[int, bool]] | None = None,
) -> go.Figure:
    """Every seed's value as a dot, and the mean with its 95% interval as an error bar, for each
    series (encoding) side by side in each category (split or probe). A category where a series has
    no value (NaN mean) draws nothing for it. `styles`, one per series: (the colour and marker index,
    hollow marker?), so two series of one encoding can share its colour and marker and differ by the
    fill (None: series k gets colour and marker k, filled)."""
    cats = list(categories)
    n = max(1, len(series))
    width = 0.8 / n
    traces: list[dict[str, Any]] = []
    for k, (name, ivs) in enumerate(series.items()):
        index, hollow = styles[k] if styles is not None else (k, False)
        color, symbol = LINES[index % len(LINES)], SYMBOLS[index % len(SYMBOLS)]
        if hollow:
            symbol += "-open"
        offset = (k - (n - 1) / 2) * width
        xs, ys, hover = [], [], []
        for c, iv in enumerate(ivs):
            for s, v in enumerate(iv.values):
                if np.isfinite(v):
                    spread = (s - (len(iv.values) - 1) / 2) * width * 0.25
                    xs.append(c + offset + spread)
                    ys.append(v)
                    hover.append(f"{escape(cats[c])} · {seed_label.format(seed=s)}")
        traces.append(
            dict(
                type="scatter",
                x=xs,
                y=ys,
                mode="markers",
                name=name,
                legendgroup=name,
                showlegend=False,
                marker=dict(color=rgba(color, 0.55), symbol=symbol, size=7, line=dict(width=0)),
                customdata=hover,
                hovertemplate=f"%{{customdata}}<br>{y_title}: %{{y:.3g}}<extra>{escape(name)}</extra>",
            )
        )
        ok = [c for c, iv in enumerate(ivs) if np.isfinite(iv.mean)]
        means = np.array([ivs[c].mean for c in ok])
        lo = np.array([ivs[c].lo if np.isfinite(ivs[c].lo) else ivs[c].mean for c in ok])
        hi = np.array([ivs[c].hi if np.isfinite(ivs[c].hi) else ivs[c].mean for c in ok])
        traces.append(
            dict(
                type="scatter",
                x=[c + offset for c in ok],
                y=means,
                mode="markers",
                name=name,
                legendgroup=name,
                marker=dict(
                    color=color,
                    symbol=symbol,
                    size=11,
                    line=dict(color=color, width=2) if hollow else dict(color="#ffffff", width=1),
                ),
                error_y=dict(
                    type="data", symmetric=False, array=hi - means, arrayminus=means - lo, color=color, width=6
                ),
                customdata=[[escape(cats[c]), lo[i], hi[i]] for i, c in enumerate(ok)],
                hovertemplate=(
                    f"%{{customdata[0]}} · {mean_label}<br>{y_title}: %{{y:.3g}} "
                    f"[%{{customdata[1]:.3g}}, %{{customdata[2]:.3g}}]<extra>{escape(name)}</extra>"
                ),
            )
        )
    return make_figure(
        traces,
        title,
        height + 60,
        xaxis=dict(
            title=x_title,
            tickmode="array",
            tickvals=list(range(len(cats))),
            ticktext=[escape(c) for c in cats],
            range=[-0.6, len(cats) - 0.4],
            zeroline=False,
        ),
        yaxis=dict(title=y_title, zeroline=True, rangemode="tozero"),
        legend=dict(orientation="h", yanchor="top", y=-0.3, xanchor="left", x=0),
    )


def band_lines(
    x: Sequence[float],
    series: Mapping[str, Sequence[Interval]],
    title: str,
    *,
    x_title: str,
    y_title: str,
    height: int = 400,
) -> go.Figure:
    """One line per series (the mean over seeds) with a translucent band from the lower to the upper
    end of its 95% interval. A NaN mean breaks the line (no value at that x)."""
    traces: list[dict[str, Any]] = []
    xs = np.asarray(x, dtype=float)
    for k, (name, ivs) in enumerate(series.items()):
        mean = np.array([iv.mean for iv in ivs], dtype=float)
        lo = np.array([iv.lo for iv in ivs], dtype=float)
        hi = np.array([iv.hi for iv in ivs], dtype=float)
        traces += band_line(
            xs, mean, lo, hi, name=name, k=k, symbol=SYMBOLS[k % len(SYMBOLS)], marker_size=7,
            x_title=x_title, y_title=y_title,
        )  # fmt: skip
    return make_figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=x_title, tickmode="array", tickvals=list(xs), ticktext=[f"×{v:g}" for v in xs]),
        yaxis=dict(title=y_title, zeroline=True, rangemode="tozero"),
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )
