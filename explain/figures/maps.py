"""Maps several chapters draw: token × token heatmaps, matrices, grids of small maps.

Numbers in, plotly Figure out, in the atlas's one look (theme.py). A figure only one chapter draws
lives beside that chapter (explain/chapters/<chapter>_figures.py) and is built from these parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explain.i18n import t as _t

from .theme import (
    HOVER_NAMES_MAX_CELLS,
    INDEX,
    MAX_TICKS,
    SCREEN_CELLS,
    SIGNED,
    WEIGHTS,
    axis_words,
    block_centres,
    block_how,
    block_label,
    block_name,
    block_spans,
    colorbar,
    escape,
    make_figure,
    panel_cells,
    panel_title,
    screen_blocks,
    screen_factor,
    short,
    signed_range,
    token_axis,
)


def token_heatmap(
    z: np.ndarray,
    row_tokens: Sequence[str],
    col_tokens: Sequence[str] | None,
    title: str,
    *,
    kind: str = "signed",
    row_title: str | None = None,  # default "query i" in the current language
    col_title: str | None = None,  # default "key j"
    value_label: str | None = None,  # default "value"
    zmin: float | None = None,
    zmax: float | None = None,
    show_values: bool | None = None,
    height: int | None = None,
    max_ticks: int = MAX_TICKS,
) -> go.Figure:
    """A (rows × cols) matrix with tokens on both axes. NaN cells (e.g. causally masked) stay blank.

    col_tokens=None: the columns are channels (numbered), not tokens.

    kind: "signed" (diverging, symmetric around 0), "weights" (0…1) or "index" (sequential).
    """
    traces, layout = token_heatmap_parts(
        z,
        row_tokens,
        col_tokens,
        title,
        kind=kind,
        row_title=row_title,
        col_title=col_title,
        value_label=value_label,
        zmin=zmin,
        zmax=zmax,
        show_values=show_values,
        height=height,
        max_ticks=max_ticks,
    )
    return make_figure(traces, **layout)


def token_heatmap_parts(
    z: np.ndarray,
    row_tokens: Sequence[str],
    col_tokens: Sequence[str] | None,
    title: str,
    *,
    kind: str = "signed",
    row_title: str | None = None,
    col_title: str | None = None,
    value_label: str | None = None,
    zmin: float | None = None,
    zmax: float | None = None,
    show_values: bool | None = None,
    height: int | None = None,
    max_ticks: int = MAX_TICKS,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """token_heatmap's traces and layout (title and height included), for builders that add to it
    before the figure is made."""
    row_title, col_title, value_label = axis_words(row_title, col_title, value_label)
    z = np.asarray(z, dtype=float)
    n_rows, n_cols = z.shape
    # Past SCREEN_CELLS² cells an axis longer than SCREEN_CELLS draws block means; cells keep their
    # place on the numeric axes (block centres), so ticks and marks at positions stay where they were.
    f, g = (screen_factor(k, SCREEN_CELLS) if n_rows * n_cols > SCREEN_CELLS**2 else 1 for k in (n_rows, n_cols))
    how = block_how(kind)
    value_label = block_label(value_label, f, g, how)
    # Token names in the hover need one string per cell: ~3 MB and ~0.8 s per 256 × 256 map. Past
    # HOVER_NAMES_MAX_CELLS the hover names positions only (the thinned axis labels name tokens).
    custom = None
    if n_rows * n_cols <= HOVER_NAMES_MAX_CELLS and f == g == 1:
        rows = [f"{i} · {escape(t)}" for i, t in enumerate(row_tokens)]
        cols = [f"{j} · {escape(t)}" for j, t in enumerate(col_tokens)] if col_tokens else list(range(n_cols))
        custom = np.empty((n_rows, n_cols, 2), dtype=object)
        custom[:, :, 0] = np.asarray(rows, dtype=object)[:, None]
        custom[:, :, 1] = np.asarray(cols, dtype=object)[None, :]
    where = "%{customdata[0]}", "%{customdata[1]}"
    if custom is None:
        where = "%{y}", "%{x}"
    scale = dict(signed=SIGNED, weights=WEIGHTS, index=INDEX)[kind]
    if kind == "signed":
        r = signed_range(z, zmax)
        zmin, zmax = -r, r
    elif kind == "weights":
        zmin = 0.0 if zmin is None else zmin
        zmax = 1.0 if zmax is None else zmax
    if show_values is None:
        show_values = max(n_rows, n_cols) <= 12
    heat = dict(
        type="heatmap",
        z=screen_blocks(z, f, g, how),
        x=block_centres(range(n_cols), g) if g > 1 else list(range(n_cols)),
        y=block_centres(range(n_rows), f) if f > 1 else list(range(n_rows)),
        colorscale=scale,
        zmin=zmin,
        zmax=zmax,
        customdata=custom,
        hovertemplate=(
            f"{row_title}: {where[0]}<br>{col_title}: {where[1]}<br>{value_label}: %{{z:.6g}}<extra></extra>"
        ),
        colorbar=colorbar(value_label),
        hoverongaps=False,
        texttemplate="%{z:.2f}" if show_values else None,
        textfont=dict(size=10),
    )
    if col_tokens:
        xaxis = dict(
            title=col_title,
            side="bottom",
            tickangle=-45,
            zeroline=False,
            **token_axis(col_tokens, max_ticks=max_ticks),
        )
    else:
        xaxis = dict(title=col_title, side="bottom", showgrid=False)
    # No zero lines: they would cross the blank (NaN, masked) cells of row 0 / column 0.
    yaxis = dict(title=row_title, autorange="reversed", zeroline=False, **token_axis(row_tokens, max_ticks=max_ticks))
    side = max(n_rows, 4)
    return [heat], dict(
        title=title, height=height or int(min(720, max(340, 130 + 22 * side))), xaxis=xaxis, yaxis=yaxis
    )


def matrix_heatmap(
    z: np.ndarray,
    title: str,
    *,
    x_title: str,
    y_title: str,
    value_label: str | None = None,  # default "value"
    kind: str = "signed",
    x: Sequence[Any] | None = None,
    y: Sequence[Any] | None = None,
    zmax: float | None = None,
    height: int = 420,
    max_cells: int = SCREEN_CELLS,
) -> go.Figure:
    """A numeric matrix on numeric axes (the PE matrix: position × channel; a bucket map; …).
    max_cells: cells per axis drawn at most (a caller that pooled its matrix itself passes its own)."""
    value_label = _t("figures.value") if value_label is None else value_label
    z = np.asarray(z, dtype=float)
    scale = dict(signed=SIGNED, weights=WEIGHTS, index=INDEX)[kind]
    r = signed_range(z, zmax) if kind == "signed" else None
    xs = list(x) if x is not None else list(range(z.shape[1]))
    ys = list(y) if y is not None else list(range(z.shape[0]))
    # Past SCREEN_CELLS a numeric axis draws block means at the blocks' mean coordinates (an axis of
    # names, such as T5's buckets, is drawn whole: it is short, and a name has no mean).
    big = len(xs) * len(ys) > max_cells**2  # a long thin matrix (1024 positions × 8 channels) stays whole
    g, f = (screen_factor(len(v), max_cells) if big and _numeric(v) else 1 for v in (xs, ys))
    value_label = block_label(value_label, f, g, block_how(kind))
    heat = dict(
        type="heatmap",
        z=screen_blocks(z, f, g, block_how(kind)),
        x=block_centres(xs, g) if g > 1 else xs,
        y=block_centres(ys, f) if f > 1 else ys,
        colorscale=scale,
        zmin=-r if r is not None else None,
        zmax=r,
        hovertemplate=f"{y_title}: %{{y}}<br>{x_title}: %{{x}}<br>{value_label}: %{{z:.6g}}<extra></extra>",
        colorbar=colorbar(value_label),
    )
    return make_figure(
        [heat],
        title,
        height,
        xaxis=dict(title=x_title, showgrid=False),
        yaxis=dict(title=y_title, autorange="reversed", showgrid=False),
    )


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, (int, float, np.integer, np.floating)) for v in values)


def token_heatmap_grid(
    zs: np.ndarray,
    tokens: Sequence[str],
    title: str,
    *,
    panel_titles: Sequence[str],
    kind: str = "signed",
    value_label: str | None = None,  # default "value"
    row_title: str | None = None,  # default "query i"
    col_title: str | None = None,  # default "key j"
    zmin: float | None = None,
    zmax: float | None = None,
    cols: int = 4,
    panel_height: int = 250,
    max_ticks: int | None = None,
    max_cells: int | None = None,
) -> go.Figure:
    """Small multiples: one (n × n) token heatmap per panel (zs: (panels, n, n)), one shared colour
    scale so panels compare at a glance. NaN cells stay blank. Rows and columns are named
    "position · token" so repeated words keep their own cells and hover names both tokens; tick
    labels are thinned to a few per panel, on the left column and the bottom row only.
    The layout is built as one dict (not make_subplots + per-axis updates, which cost ~1 s for 16
    panels in plotly's validation). max_cells: cells per panel axis drawn at most (default
    theme.panel_cells: the grid's share of FIGURE_CELLS); past it a panel draws block means."""
    row_title, col_title, value_label = axis_words(row_title, col_title, value_label)
    zs = np.asarray(zs, dtype=float)
    n_panels, n_rows, n_cols = zs.shape
    cols = max(1, min(cols, n_panels))
    rows = int(np.ceil(n_panels / cols))
    # Past the screen's cells a panel draws the mean of f × f blocks, named "12–13 · the … cat".
    f = screen_factor(max(n_rows, n_cols), max_cells or panel_cells(n_panels))
    how = block_how(kind)
    value_label = block_label(value_label, f, f, how)
    n_names = max(n_rows, n_cols) if f > 1 else len(tokens)
    spans = block_spans(n_names, f)
    names = (
        [f"{k} · {escape(t)}" for k, t in enumerate(tokens)] if f == 1 else [block_name(a, b, tokens) for a, b in spans]
    )
    # Labels per panel axis: fewer as panels get narrower. The caller knows when the whole figure
    # itself sits in a narrow page column (max_ticks).
    step = max(1, int(np.ceil(len(names) / (max_ticks or {1: MAX_TICKS, 2: 24}.get(cols, 8)))))
    tick_idx = list(range(0, len(names), step))
    ticks = dict(
        type="category",
        tickmode="array",
        tickvals=[names[k] for k in tick_idx],
        ticktext=[escape(short(tokens[spans[k][0]], 8)) for k in tick_idx],
        showgrid=False,
        zeroline=False,
        tickfont=dict(size=10),
    )
    scale = dict(signed=SIGNED, weights=WEIGHTS, index=INDEX)[kind]
    if kind == "signed":
        r = signed_range(zs, zmax)
        zmin, zmax = -r, r
    elif kind == "weights":
        zmin = 0.0 if zmin is None else zmin
        zmax = 1.0 if zmax is None else zmax
    h_gap, v_gap = (0.05 if cols > 1 else 0.0), (min(0.1, 0.45 / rows) if rows > 1 else 0.0)
    width, height = (1 - h_gap * (cols - 1)) / cols, (1 - v_gap * (rows - 1)) / rows
    traces: list[dict[str, Any]] = []
    layout: dict[str, Any] = {}
    notes: list[dict[str, Any]] = []
    for p in range(n_panels):
        row, col = p // cols, p % cols
        suffix = "" if p == 0 else str(p + 1)
        x0, y1 = col * (width + h_gap), 1 - row * (height + v_gap)
        last_row = p + cols >= n_panels
        layout[f"xaxis{suffix}"] = dict(
            ticks,
            domain=[max(0.0, x0), min(1.0, x0 + width)],
            anchor=f"y{suffix}",
            showticklabels=last_row,
            tickangle=-45,
            title=dict(text=col_title) if last_row and col == 0 else None,
        )
        layout[f"yaxis{suffix}"] = dict(
            ticks,
            domain=[max(0.0, y1 - height), min(1.0, y1)],
            anchor=f"x{suffix}",
            autorange="reversed",
            showticklabels=col == 0,
            title=dict(text=row_title) if col == 0 and row == 0 else None,
        )
        notes.append(panel_title(panel_titles[p], x0 + width / 2, y1))
        traces.append(
            dict(
                type="heatmap",
                z=screen_blocks(zs[p], f, f, how),  # float32 halves what the browser receives
                x=names[: -(-n_cols // f)],
                y=names[: -(-n_rows // f)],
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
                coloraxis="coloraxis",
                hoverongaps=False,
                hovertemplate=(
                    f"{escape(panel_titles[p])}<br>{row_title}: %{{y}}<br>{col_title}: %{{x}}"
                    f"<br>{value_label}: %{{z:.4g}}<extra></extra>"
                ),
            )
        )
    layout["coloraxis"] = dict(colorscale=scale, cmin=zmin, cmax=zmax, colorbar=colorbar(value_label))
    layout["annotations"] = notes
    return make_figure(traces, title, rows * panel_height + 110, **layout)


def token_map(
    z: np.ndarray, tokens: Sequence[str], title: str, *, kind: str = "signed", value_label: str | None = None
) -> go.Figure:
    """A token × token map that stays light at any length: token_heatmap (numbers in the cells,
    per-cell hover) up to 64 tokens, one panel of the categorical token_heatmap_grid beyond (a
    256 × 256 map with per-cell hover labels would be megabytes)."""
    if len(tokens) <= 64:
        return token_heatmap(z, tokens, tokens, title, kind=kind, value_label=value_label)
    return token_heatmap_grid(
        np.asarray(z)[None],
        tokens,
        title,
        panel_titles=[""],
        kind=kind,
        value_label=value_label,
        cols=1,
        panel_height=560,
    )


def lab_map(
    z: np.ndarray,
    tokens: Sequence[str],
    title: str,
    *,
    kind: str = "weights",
    value_label: str | None = None,
    zmax: float | None = None,
    height: int | None = None,
    max_ticks: int = MAX_TICKS,
    max_cells: int | None = None,
) -> go.Figure:
    """token_map with a colour range the caller may fix (the attention lab shares one signed range
    across its panels, so "bigger" means the same in every encoding): token_heatmap up to 64 tokens,
    one categorical panel of token_heatmap_grid beyond. max_ticks: token labels per axis at most
    (fewer for a map drawn in half a page's width, where 40 rotated labels run into each other);
    max_cells: cells per axis drawn at most beyond 64 tokens (default SCREEN_CELLS)."""
    value_label = _t("figures.weight") if value_label is None else value_label
    if len(tokens) <= 64:
        return token_heatmap(
            z, tokens, tokens, title, kind=kind, value_label=value_label, zmax=zmax, height=height, max_ticks=max_ticks
        )
    return token_heatmap_grid(
        np.asarray(z)[None],
        tokens,
        title,
        panel_titles=[""],
        kind=kind,
        value_label=value_label,
        zmax=zmax,
        cols=1,
        panel_height=(height or 560) - 110,
        max_ticks=max_ticks,
        max_cells=max_cells,
    )
