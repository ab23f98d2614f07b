"""Figures only the learned chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explain.figures.maps import token_heatmap_parts
from explain.figures.theme import (
    INDEX,
    LINES,
    SIGNED,
    colorbar,
    escape,
    make_figure,
    short,
    signed_range,
    wire,
)
from explain.i18n import t as _t


def lookup_table(
    table: np.ndarray,
    tokens: Sequence[str],
    title: str,
    *,
    col_title: str | None = None,  # default "channel"
    value_label: str | None = None,  # default "value"
    height: int | None = None,
) -> go.Figure:
    """A lookup table (rows = positions) with a sentence laid over it.

    The rows the sentence's tokens use are framed; positions the sentence needs past the last row
    are a shaded, labelled band with no cells at all — the picture of "there is no row". Hover names
    each row's position and token.
    """
    col_title = _t("figures.channel") if col_title is None else col_title
    value_label = _t("figures.value") if value_label is None else value_label
    table = np.asarray(table, dtype=float)
    max_len, d = table.shape
    n = len(tokens)
    n_rows, n_fit = max(max_len, n), min(n, max_len)
    z = np.full((n_rows, d), np.nan)  # (rows, channels): NaN past the table, drawn blank
    z[:max_len] = table
    row_text = []
    for p in range(n_rows):
        if p < n_fit:
            row_text.append(f"{p} · {escape(tokens[p])}")
        elif p < max_len:
            row_text.append(f"{p} · {_t('figures.lookup.not_yours')}")
        else:
            row_text.append(f"{p} · {escape(tokens[p])} {_t('figures.lookup.no_row_suffix')}")
    r = signed_range(z, None)
    # The rows are named on a category axis (one name per row, hover reads it), not per cell in
    # customdata: 256 rows × 64 channels of names were 320 KB. Shapes and notes keep their numeric
    # coordinates: on a category axis a number is the category's index, here the position.
    heat = dict(
        type="heatmap",
        z=wire(z),
        x=list(range(d)),
        y=row_text,
        colorscale=SIGNED,
        zmin=-r,
        zmax=r,
        hovertemplate=(
            f"{_t('figures.position')}: %{{y}}<br>{col_title}: %{{x}}<br>{value_label}: %{{z:.4g}}<extra></extra>"
        ),
        hoverongaps=False,
        colorbar=colorbar(value_label),
    )
    height = height or int(min(760, max(360, 150 + 14 * n_rows)))
    # About one label per 14 px of plot height, so labels never overlap (hover names every row).
    step = max(1, int(np.ceil(n_rows / max(2, (height - 150) // 14))))
    ticks = list(range(0, n_rows, step))
    text = [f"{p} {escape(short(tokens[p], 10))}" if p < n else str(p) for p in ticks]
    shapes, notes = [], []
    if n_fit:
        shapes.append(
            dict(type="rect", x0=-0.5, x1=d - 0.5, y0=-0.5, y1=n_fit - 0.5, line=dict(color=LINES[7], width=3))
        )
        notes.append(
            dict(
                x=d - 0.5,
                y=-0.5,
                xanchor="right",
                yanchor="bottom",
                showarrow=False,
                text=_t("figures.lookup.uses_rows", last=n_fit - 1),
                bgcolor="white",
                font=dict(size=12, color=LINES[7]),
            )
        )
    if n > max_len:
        shapes.append(
            dict(
                type="rect",
                x0=-0.5,
                x1=d - 0.5,
                y0=max_len - 0.5,
                y1=n - 0.5,
                fillcolor="rgba(120,120,120,0.22)",
                line=dict(color=LINES[1], width=2, dash="dash"),
            )
        )
        notes.append(
            dict(
                x=(d - 1) / 2,
                y=(max_len + n - 1) / 2,
                showarrow=False,
                bgcolor="white",
                bordercolor=LINES[1],
                font=dict(size=13, color=LINES[1]),
                text=(
                    _t("figures.lookup.no_row_one", p=max_len)
                    if n - max_len == 1
                    else _t("figures.lookup.no_row_many", first=max_len, last=n - 1)
                )
                + "<br>"
                + _t("figures.lookup.cannot_encode", k=n - max_len),
            )
        )
    return make_figure(
        [heat],
        title,
        height,
        xaxis=dict(title=col_title, showgrid=False, range=[-0.5, d - 0.5]),
        yaxis=dict(
            title=_t("figures.lookup.row_axis"),
            autorange="reversed",
            showgrid=False,
            type="category",
            tickmode="array",
            tickvals=[row_text[p] for p in ticks],
            ticktext=text,
        ),
        shapes=shapes,
        annotations=notes,
    )


def token_heatmap_cut(
    z: np.ndarray,
    tokens: Sequence[str],
    n_fit: int,
    title: str,
    *,
    note: str | None = None,  # default "no row: not in the model"
    **kwargs: Any,
) -> go.Figure:
    """token_heatmap over all tokens, where only the first n_fit can take part (a table ran out).

    Rows and columns from n_fit on should hold NaN (blank cells); they get a shaded band and a note,
    so the learner sees which tokens are missing instead of a smaller map that hides them.
    """
    note = _t("figures.lookup.cut_note") if note is None else note
    traces, layout = token_heatmap_parts(z, tokens, tokens, title, **kwargs)
    n = len(tokens)
    if n_fit < n:
        band = dict(fillcolor="rgba(120,120,120,0.22)", line=dict(width=0), layer="above")
        layout["shapes"] = [
            dict(type="rect", x0=n_fit - 0.5, x1=n - 0.5, y0=-0.5, y1=n - 0.5, **band),
            dict(type="rect", x0=-0.5, x1=n_fit - 0.5, y0=n_fit - 0.5, y1=n - 0.5, **band),
        ]
        layout["annotations"] = [
            dict(
                x=(n - 1) / 2,
                y=(n_fit + n - 1) / 2,  # the middle of the grey L's foot
                text=note,
                showarrow=False,
                bgcolor="white",
                bordercolor=LINES[1],
                font=dict(size=12, color=LINES[1]),
            )
        ]
    return make_figure(traces, **layout)


def path_2d(
    x: np.ndarray,
    y: np.ndarray,
    order: np.ndarray,
    title: str,
    *,
    x_title: str,
    y_title: str,
    order_title: str | None = None,  # default "position p"
    height: int = 440,
) -> go.Figure:
    """Points joined in order (a trajectory), coloured by their order; equal scales on both axes,
    so a circle looks like a circle."""
    order_title = _t("figures.position_p") if order_title is None else order_title
    order = np.asarray(order)
    path = dict(
        type="scatter",
        x=np.asarray(x),
        y=np.asarray(y),
        mode="lines+markers",
        line=dict(color="rgba(120,120,120,0.45)", width=1),
        marker=dict(
            color=order,
            colorscale=INDEX,
            size=6,
            showscale=True,
            colorbar=colorbar(order_title),
        ),
        customdata=order,
        hovertemplate=(
            f"{order_title}: %{{customdata}}<br>{x_title}: %{{x:.4g}}<br>{y_title}: %{{y:.4g}}<extra></extra>"
        ),
    )
    return make_figure(
        [path],
        title,
        height,
        xaxis=dict(title=x_title, zeroline=True),
        yaxis=dict(title=y_title, zeroline=True, scaleanchor="x", scaleratio=1),
    )
