"""Figures only the toy tasks chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from explain.figures.theme import (
    LINES,
    PATTERNS,
    escape,
    make_figure,
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
