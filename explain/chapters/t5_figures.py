"""Figures only the t5 chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from explain.figures.theme import (
    DASHES,
    LINES,
    escape,
    make_figure,
)


def step_lines(
    x: Sequence[int] | np.ndarray,
    ys: Mapping[str, Sequence[float] | np.ndarray],
    title: str,
    *,
    x_title: str,
    y_title: str,
    height: int = 380,
) -> go.Figure:
    """Piecewise-constant series over integer x (one learned number per bucket of distances): each
    value is drawn flat around its x with the jump half-way between neighbours, so shared values
    read as plateaus, not as slopes."""
    traces = []
    for k, (name, y) in enumerate(ys.items()):
        traces.append(
            dict(
                type="scatter",
                x=np.asarray(x),
                y=np.asarray(y, dtype=float),
                name=name,
                mode="lines+markers",
                marker=dict(size=4),
                line=dict(color=LINES[k % len(LINES)], width=2, shape="hvh", dash=DASHES[k % len(DASHES)]),
                hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y:.4g}}<extra>{escape(name)}</extra>",
            )
        )
    return make_figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=x_title, zeroline=True),
        yaxis=dict(title=y_title, zeroline=True),
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )
