"""Figures only the alibi chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from explain.figures.theme import (
    LINES,
    SYMBOLS,
    escape,
    make_figure,
    wire_values,
)
from explain.i18n import t as _t


def head_colors(slopes: Sequence[float] | np.ndarray, steepest: float = 1.0, flattest: float = 2.0**-8) -> list[str]:
    """One colour per attention head from its ALiBi-style slope (viridis on log2 m): steep heads dark
    purple, flat heads green, the same slope always the same colour whatever the head count, so
    non-monotone slope orders (H = 6: 1/4, 1/16, 1/64, 1/256, 1/2, 1/8) show as such. The bright
    yellow end of viridis is left out: it vanishes on a white background."""
    from plotly.colors import sample_colorscale

    lo, hi = np.log2(flattest), np.log2(steepest)
    t = (np.log2(np.asarray(slopes, dtype=float)) - lo) / (hi - lo)  # 1 steepest … 0 flattest
    # Viridis by name, not WEIGHTS: head colours must not look like attention weights.
    colors: list[str] = sample_colorscale("Viridis", [float(v) for v in 0.82 * (1.0 - np.clip(t, 0.0, 1.0))])
    return colors


def head_bars(
    values: Sequence[float] | np.ndarray,
    title: str,
    *,
    y_title: str,
    colors: Sequence[str] | None = None,
    text: Sequence[str] | None = None,
    hover: Sequence[str] | None = None,
    log_y: bool = False,
    height: int = 340,
) -> go.Figure:
    """One bar per attention head (x = head 1 … H). `text` is printed on the bars, `hover` adds a
    line to each tooltip; neither may contain typed text unescaped (pass numbers, not words)."""
    values = np.asarray(values, dtype=float)
    heads = list(range(1, values.size + 1))
    bar = dict(
        type="bar",
        x=heads,
        y=values,
        marker=dict(color=list(colors) if colors is not None else LINES[0]),
        text=list(text) if text is not None else None,
        textposition="outside",
        cliponaxis=False,
        customdata=list(hover) if hover is not None else [""] * values.size,
        hovertemplate=f"{_t('figures.head_hover')}<br>{y_title}: %{{y:.6g}}<br>%{{customdata}}<extra></extra>",
    )
    return make_figure(
        [bar],
        title,
        height,
        xaxis=dict(title=_t("figures.head"), tickmode="array", tickvals=heads, showgrid=False),
        yaxis=dict(title=y_title, type="log" if log_y else None),
    )


def head_lines(
    x: Sequence[float] | np.ndarray,
    ys: np.ndarray,
    title: str,
    *,
    names: Sequence[str],
    colors: Sequence[str],
    x_title: str,
    y_title: str,
    dashed_ys: np.ndarray | None = None,
    dashed_suffix: str = "",
    marks: Mapping[str, float] | None = None,
    log_x: bool = False,
    log_y: bool = False,
    height: int = 400,
) -> go.Figure:
    """One curve per head (ys: (h, n)) in the head's own colour (head_colors); optionally a dashed
    companion per head (dashed_ys, same colour, legend entry `name + dashed_suffix`), e.g. a
    prediction drawn under the measurement. x is shared (n,) or per head (h, n), e.g. a distance
    in units of each head's own scale. `marks` (label → x) draws labelled vertical dashed lines
    as traces, so they sit right on log axes too. Clicking a legend entry hides a head."""
    ys = np.asarray(ys, dtype=float)
    x = np.broadcast_to(np.asarray(x), ys.shape)  # (h, n)
    traces = []
    for h in range(ys.shape[0]):
        traces.append(
            dict(
                type="scatter",
                x=x[h],
                y=wire_values(ys[h]),
                name=names[h],
                # A symbol per head, a few per curve: colour is not the only channel (WCAG 1.4.1);
                # dashes are taken (a dotted companion means a prediction).
                mode="lines+markers",
                marker=dict(symbol=SYMBOLS[h % len(SYMBOLS)], size=7, color=colors[h], maxdisplayed=8),
                legendgroup=str(h),
                line=dict(color=colors[h], width=2),
                hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y:.4g}}<extra>{escape(names[h])}</extra>",
            )
        )
        if dashed_ys is not None:
            label = names[h] + dashed_suffix
            traces.append(
                dict(
                    type="scatter",
                    x=x[h],
                    y=wire_values(np.asarray(dashed_ys[h], dtype=float)),
                    name=label,
                    mode="lines",
                    legendgroup=str(h),
                    showlegend=False,
                    line=dict(color=colors[h], width=1.5, dash="dot"),
                    hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y:.4g}}<extra>{escape(label)}</extra>",
                )
            )
    finite = ys[np.isfinite(ys)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    for label, value in (marks or {}).items():
        traces.append(
            dict(
                type="scatter",
                x=[value, value],
                y=[lo, hi],
                mode="lines+text",
                name=label,
                showlegend=False,
                line=dict(color=LINES[7], width=2, dash="dash"),
                text=["", escape(label)],
                textposition="top right",
                hoverinfo="skip",
                cliponaxis=False,
            )
        )
    return make_figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=x_title, type="log" if log_x else None, zeroline=True),
        yaxis=dict(title=y_title, type="log" if log_y else None, zeroline=True),
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )
