"""Figures only the attention lab chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explain.figures.theme import (
    LINES,
    escape,
    make_figure,
)


def labelled_bars(
    labels: Sequence[str],
    values: Sequence[float] | np.ndarray,
    title: str,
    *,
    y_title: str,
    highlight: Sequence[int] = (),
    text: Sequence[str] | None = None,
    log_y: bool = False,
    floor: float | None = None,
    height: int = 360,
) -> go.Figure:
    """One bar per named item (encodings, not tokens), with a printed value on each bar.
    `highlight` bars take the second palette colour. On a log axis, values below `floor` are drawn
    at `floor` (a zero has no place on a log axis; the printed text still gives the true value)."""
    values = np.asarray(values, dtype=float)
    shown = np.maximum(values, floor) if floor is not None else values
    hl = set(highlight)
    colors = [LINES[1] if k in hl else LINES[0] for k in range(values.size)]
    bar = dict(
        type="bar",
        x=[escape(s) for s in labels],
        y=shown,
        # A highlighted bar is also hatched: colour is not the only channel (WCAG 1.4.1).
        marker=dict(color=colors, pattern=dict(shape=["/" if k in hl else "" for k in range(values.size)])),
        text=list(text) if text is not None else [f"{v:.2g}" for v in values],
        textposition="outside",
        cliponaxis=False,
        customdata=values,
        hovertemplate=f"%{{x}}<br>{y_title}: %{{customdata:.3g}}<extra></extra>",
    )
    return make_figure(
        [bar],
        title,
        height,
        xaxis=dict(tickangle=0 if len(labels) <= 4 else -30, automargin=True),
        # Powers of ten, not SI prefixes: "1f" and "1µ" mean nothing to a learner reading a weight.
        yaxis=dict(title=y_title, type="log" if log_y else None, exponentformat="power"),
    )
