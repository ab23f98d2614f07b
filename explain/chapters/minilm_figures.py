"""Figures only the minilm chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explain.figures.theme import (
    INDEX,
    LINES,
    SIGNED,
    WEIGHTS,
    colorbar,
    escape,
    make_figure,
    panel_title,
    signed_range,
)
from explain.i18n import t as _t


def layer_head_maps(
    zs: np.ndarray,
    title: str,
    *,
    panel_titles: Sequence[str],
    value_label: str,
    kind: str = "weights",
    zmax: float | None = None,
    cols: int = 3,
    panel_height: int = 230,
) -> go.Figure:
    """Small multiples of (layers × heads) tables, zs: (panels, L, H), with the number printed in
    every cell and one shared colour scale: e.g. a pretrained model's attention share on the
    previous token, per layer and head. Rows are layers 1…L (top to bottom), columns heads 1…H."""
    zs = np.asarray(zs, dtype=float)
    n_panels, n_layers, n_heads = zs.shape
    cols = max(1, min(cols, n_panels))
    rows = int(np.ceil(n_panels / cols))
    scale = dict(signed=SIGNED, weights=WEIGHTS, index=INDEX)[kind]
    if kind == "signed":
        r = signed_range(zs, zmax)
        zmin, zmax = -r, r
    else:
        zmin, zmax = 0.0, (1.0 if zmax is None else zmax)
    h_gap, v_gap = (0.06 if cols > 1 else 0.0), (min(0.16, 0.6 / rows) if rows > 1 else 0.0)
    width, height = (1 - h_gap * (cols - 1)) / cols, (1 - v_gap * (rows - 1)) / rows
    traces: list[dict[str, Any]] = []
    layout: dict[str, Any] = {}
    notes: list[dict[str, Any]] = []
    heads, layers = list(range(1, n_heads + 1)), list(range(1, n_layers + 1))
    for p in range(n_panels):
        row, col = p // cols, p % cols
        suffix = "" if p == 0 else str(p + 1)
        x0, y1 = col * (width + h_gap), 1 - row * (height + v_gap)
        layout[f"xaxis{suffix}"] = dict(
            domain=[x0, min(1.0, x0 + width)],
            anchor=f"y{suffix}",
            tickmode="array",
            tickvals=heads,
            showgrid=False,
            zeroline=False,
            tickfont=dict(size=10),
            title=dict(text=_t("figures.head"), font=dict(size=11)) if p + cols >= n_panels else None,
        )
        layout[f"yaxis{suffix}"] = dict(
            domain=[max(0.0, y1 - height), y1],
            anchor=f"x{suffix}",
            tickmode="array",
            tickvals=layers,
            autorange="reversed",
            showgrid=False,
            zeroline=False,
            tickfont=dict(size=10),
            title=dict(text=_t("figures.layer"), font=dict(size=11)) if col == 0 else None,
        )
        notes.append(panel_title(panel_titles[p], x0 + width / 2, y1))
        z = zs[p]
        traces.append(
            dict(
                type="heatmap",
                z=z,
                x=heads,
                y=layers,
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
                coloraxis="coloraxis",
                xgap=1,
                ygap=1,
                texttemplate="%{z:.2f}",
                textfont=dict(size=10 if cols <= 2 else 8),
                hovertemplate=(
                    f"{escape(panel_titles[p])}<br>{_t('figures.layer_head_hover')}"
                    f"<br>{value_label}: %{{z:.3f}}<extra></extra>"
                ),
            )
        )
    layout["coloraxis"] = dict(colorscale=scale, cmin=zmin, cmax=zmax, colorbar=colorbar(value_label))
    layout["annotations"] = notes
    return make_figure(traces, title, rows * panel_height + 90, **layout)


def attention_thumbnails(
    weights: np.ndarray,
    title: str,
    *,
    marks: Mapping[tuple[int, int], str] | None = None,
    panel_height: int = 96,
) -> go.Figure:
    """Every head of a model at a glance: weights (L, H, i, j) as an L × H grid of small attention
    maps without tick labels (patterns, not words: enlarge one to read it), one shared 0…1 scale.
    Rows are layers 1…L, columns heads 1…H; `marks` ((layer, head) 0-based → short text) writes a
    label above a panel, e.g. the position role measured for that head. Hover gives layer, head,
    query and key positions and the weight.

    The grid is ONE heatmap: the maps tiled into one matrix with empty (NaN) rows and columns
    between them, on category axes whose labels name the layer and query of a row, the head and
    key of a column (what hover shows). 72 heatmaps on 144 axes cost plotly 270–640 ms a draw in
    Chromium; one costs a fraction of that. `layout.meta["tiles"]` says where each map sits, so
    the Numbers panel still offers one table per head (explain.numbers.heatmap_tables)."""
    w = np.asarray(weights, dtype=np.float32)
    n_layers, n_heads, n, _ = w.shape
    marks = marks or {}
    # Gaps in cells, sized like the old subplot gaps (≈ 10 px between columns of ≈ 60 px maps,
    # ≈ 27 px between rows of ≈ 77 px maps, room for a mark), at least one cell.
    gx, gy = max(1, round(0.17 * n)), max(1, round(0.35 * n))
    sx, sy = n + gx, n + gy  # the stride from one map to the next
    z = np.full((n_layers * sy - gy, n_heads * sx - gx), np.nan, dtype=np.float32)
    for layer in range(n_layers):
        for head in range(n_heads):
            z[layer * sy : layer * sy + n, head * sx : head * sx + n] = w[layer, head]
    # Category labels must be unique: the k-th gap row (column) is named by k + 1 spaces (never
    # shown, never hovered; a few bytes each).
    rows = [
        _t("figures.layer_query", layer=r // sy + 1, i=r % sy)
        if r % sy < n
        else " " * (1 + (r // sy) * gy + r % sy - n)
        for r in range(z.shape[0])
    ]
    cols = [
        _t("figures.head_key", head=c // sx + 1, j=c % sx) if c % sx < n else " " * (1 + (c // sx) * gx + c % sx - n)
        for c in range(z.shape[1])
    ]
    axis = dict(type="category", showticklabels=False, showgrid=False, zeroline=False, ticks="")
    notes: list[dict[str, Any]] = []
    for (layer, head), label in marks.items():
        if label:
            notes.append(
                dict(
                    text=escape(label),
                    x=head * sx + (n - 1) / 2,
                    y=layer * sy - 0.5,
                    xref="x",
                    yref="y",
                    xanchor="center",
                    yanchor="bottom",
                    showarrow=False,
                    font=dict(size=10, color=LINES[1]),
                )
            )
    for layer in range(n_layers):
        notes.append(
            dict(
                text=f"L{layer + 1}",
                x=-0.005,
                y=layer * sy + (n - 1) / 2,
                xref="paper",
                yref="y",
                xanchor="right",
                yanchor="middle",
                showarrow=False,
                font=dict(size=11),
            )
        )
    for head in range(n_heads):
        notes.append(
            dict(
                text=f"H{head + 1}",
                x=head * sx + (n - 1) / 2,
                y=0,
                xref="x",
                yref="paper",
                xanchor="center",
                yanchor="top",
                yshift=-4,
                showarrow=False,
                font=dict(size=11),
            )
        )
    trace = dict(
        type="heatmap",
        z=z,
        x=cols,
        y=rows,
        coloraxis="coloraxis",
        hoverongaps=False,
        hovertemplate=f"%{{y}}<br>%{{x}}<br>{_t('figures.weight')}: %{{z:.3f}}<extra></extra>",
    )
    tiles = [
        dict(
            name=_t("figures.layer_head", layer=layer + 1, head=head + 1),
            rows=[layer * sy, layer * sy + n],
            cols=[head * sx, head * sx + n],
        )
        for layer in range(n_layers)
        for head in range(n_heads)
    ]
    return make_figure(
        [trace],
        title,
        n_layers * panel_height + 110,
        xaxis=dict(axis, range=[-0.5, z.shape[1] - 0.5]),
        yaxis=dict(axis, range=[z.shape[0] - 0.5, -0.5]),
        coloraxis=dict(colorscale=WEIGHTS, cmin=0.0, cmax=1.0, colorbar=colorbar(_t("figures.weight"))),
        annotations=notes,
        meta=dict(tiles=tiles),
        margin=dict(l=40, r=10, t=60, b=30),
    )
