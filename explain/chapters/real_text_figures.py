"""Figures only the "Trained on real text" lab draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explain.chapters.real_text import LengthLine
from explain.figures.fast import vline
from explain.figures.theme import DASHES, LINES, SYMBOLS, escape, make_figure

# The palette without Okabe–Ito's yellow: a thin yellow line with error bars all but vanishes on white
# (1.1:1 contrast), and this chart has no more families than the seven colours left.
FAMILY_COLORS = tuple(c for c in LINES if c != "#F0E442")


def length_lines(
    lengths: Sequence[int],
    lines: Sequence[LengthLine],
    title: str,
    *,
    x_title: str,
    y_title: str,
    train_length: int,
    train_mark: str,
    note: str = "",
    height: int = 440,
) -> go.Figure:
    """Bits per byte against evaluation length on a log2 axis: one line per model, each with its own
    colour and marker symbol, and 95% error bars from its windows. Lines applied at inference to
    another model's weights (RoPE's stretches) share that model's colour and are dashed, one dash
    pattern each. A line with no value at some length draws only the points it has (learned: its
    128 point), and `note` says why on the chart."""
    xs = np.asarray(lengths, dtype=float)
    traces: list[dict[str, Any]] = []
    n_stretched = 0
    for k, ln in enumerate(lines):
        color = FAMILY_COLORS[ln.family % len(FAMILY_COLORS)]
        if ln.stretched:
            n_stretched += 1
            dash = DASHES[1 + (n_stretched - 1) % (len(DASHES) - 1)]
        else:
            dash = "solid"
        mean = np.asarray(ln.mean, dtype=float)
        lo, hi = np.asarray(ln.lo, dtype=float), np.asarray(ln.hi, dtype=float)
        up, down = np.where(np.isfinite(hi), hi - mean, np.nan), np.where(np.isfinite(lo), mean - lo, np.nan)
        traces.append(
            dict(
                type="scatter",
                x=xs,
                y=mean,
                name=ln.label,
                mode="lines+markers",
                line=dict(color=color, width=2, dash=dash),
                marker=dict(symbol=SYMBOLS[k % len(SYMBOLS)], size=8, color=color),
                error_y=dict(type="data", array=up, arrayminus=down, visible=True, thickness=1.2, width=4),
                customdata=np.stack([lo, hi, np.asarray(ln.n, dtype=float)], axis=-1),  # (lengths, 3)
                hovertemplate=(
                    f"{escape(x_title)}: %{{x}}<br>{escape(y_title)}: %{{y:.3f}} "
                    "[%{customdata[0]:.3f}, %{customdata[1]:.3f}]<br>n = %{customdata[2]:.0f}"
                    f"<extra>{escape(ln.label)}</extra>"
                ),
            )
        )
    annotations = []
    if note:
        annotations.append(
            dict(
                text=escape(note),
                xref="paper",
                yref="paper",
                x=1,
                y=1,
                xanchor="right",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=12, color="#5e6069"),
            )
        )
    annotations.append(
        dict(
            text=escape(train_mark),
            x=float(np.log10(train_length)),  # a log axis places annotations at log10(x)
            xref="x",
            yref="paper",
            y=0,
            xanchor="left",
            yanchor="bottom",
            showarrow=False,
            font=dict(size=11, color="#5e6069"),
        )
    )
    return make_figure(
        traces,
        title,
        height + 60,
        xaxis=dict(
            title=x_title,
            type="log",
            tickmode="array",
            tickvals=list(xs),
            ticktext=[f"{int(v)} (×{v / train_length:g})" for v in xs],
        ),
        yaxis=dict(title=y_title, zeroline=False),
        shapes=[vline(float(train_length), dict(color="#9a9ca5", width=1, dash="dot"))],
        annotations=annotations,
        legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0),
        margin=dict(l=10, r=10, t=70, b=10),
    )


def curve_lines(
    steps: Sequence[int],
    ys: Mapping[str, Sequence[float]],
    title: str,
    *,
    x_title: str,
    y_title: str,
    height: int = 380,
) -> go.Figure:
    """Training curves, one line per model in the same colour as on the length chart (the k-th
    model: FAMILY_COLORS[k]) and its own dash pattern — past the last pattern, the same patterns
    drawn thicker — so colour is never the only channel."""
    traces = [
        dict(
            type="scatter",
            x=list(steps),
            y=np.asarray(y, dtype=float),
            name=name,
            mode="lines",
            line=dict(
                color=FAMILY_COLORS[k % len(FAMILY_COLORS)],
                width=2 + 2 * (k // len(DASHES)),
                dash=DASHES[k % len(DASHES)],
            ),
            hovertemplate=f"{escape(x_title)}: %{{x}}<br>{escape(y_title)}: %{{y:.3f}}<extra>{escape(name)}</extra>",
        )
        for k, (name, y) in enumerate(ys.items())
    ]
    return make_figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=x_title, zeroline=False),
        yaxis=dict(title=y_title, zeroline=False),
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )
