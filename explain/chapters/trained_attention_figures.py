"""Figures of a trained byte-level model reading the learner's text (explain/chapters/trained_attention.py):
the every-head grid, the next-byte readout, the surprise per byte. Built from explain.figures' look."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explain.figures.theme import (
    LINES,
    WEIGHTS,
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
)

GRID_TICKS = 8  # byte labels per small panel axis at most (thinned past that)
# Cells per panel axis of the real-text chapter's grid, its main picture, which can afford more than a
# grid beside others (theme.panel_cells): 256 bytes in blocks of 3, both default sentences whole.
READING_CELLS = 86
MARK = dict(color="#31333f", width=1.5, dash="dash")  # the training-length line: dashed, not a colour


def _ticks(labels: Sequence[str], max_ticks: int) -> tuple[list[int], list[str]]:
    """At most max_ticks evenly spaced labels; each moves forward within its step to the first byte
    that starts a character (a "·" continuation byte says nothing on an axis)."""
    step = max(1, int(np.ceil(len(labels) / max_ticks)))
    idx = []
    for k in range(0, len(labels), step):
        end = min(k + step, len(labels))
        idx.append(next((j for j in range(k, end) if labels[j] != "·"), k))
    return idx, [escape(short(labels[k], 6)) for k in idx]


def grid_factor(m: int, max_cells: int, mark_at: int | None) -> int:
    """Bytes per drawn cell of a grid of m bytes: the least f that draws at most max_cells a side and
    divides mark_at (the training length), so its dashed line runs between blocks, not through one."""
    f = screen_factor(m, max_cells)
    while mark_at and 1 < f < mark_at and mark_at % f:
        f += 1
    return f


def head_grid(
    zs: np.ndarray,
    labels: Sequence[str],
    title: str,
    *,
    panel_titles: Sequence[str],
    cols: int,
    value_label: str,
    row_title: str,
    col_title: str,
    mark_at: int | None = None,
    mark_label: str = "",
    zmax: float = 1.0,
    scale_title: str | None = None,
    panel_height: int = 240,
    max_ticks: int = GRID_TICKS,
    max_cells: int | None = None,  # default: panel_cells(the number of panels)
) -> go.Figure:
    """Every head of a model as small maps, zs: (L·H, m, m) layer-major, one row per layer and one
    column per head (cols = H), one shared 0…zmax scale (scale_title names it), no per-cell text.
    Byte labels on the axes (thinned to max_ticks per axis); hover names the panel, both bytes
    (position · label) and the value. mark_at: a dashed line on both axes before that position
    (the training length), with `mark_label` under the grid's right edge. Past max_cells bytes (default
    theme.panel_cells: what a small panel shows) a panel draws the largest value of each f × f block,
    named by its bytes ("12–15 · a"); the scale title says so."""
    zs = np.asarray(zs, dtype=np.float32)
    n_panels, m, _ = zs.shape
    cols = max(1, min(cols, n_panels))
    rows = int(np.ceil(n_panels / cols))
    f = grid_factor(m, max_cells or panel_cells(n_panels), mark_at)
    if f == 1:
        names = [f"{k} · {escape(s)}" for k, s in enumerate(labels[:m])]
    else:
        names = [block_name(a, b, labels) for a, b in block_spans(m, f)]
        # Weights, gates and the other maps of a read are all in [0, 1] with a few large values
        # that make the picture: a block draws its largest (theme.screen_blocks).
        value_label = block_label(value_label, f, f, "max")
        scale_title = block_label(scale_title, f, f, "max") if scale_title else None
    idx, text = _ticks(labels[:m], max_ticks)
    blocks = [k // f for k in idx]
    keep = [j for j in range(len(idx)) if j == 0 or blocks[j] != blocks[j - 1]]  # one label per block
    ticks = dict(
        type="category",
        tickmode="array",
        tickvals=[names[blocks[j]] for j in keep],
        ticktext=[text[j] for j in keep],
        showgrid=False,
        zeroline=False,
        tickfont=dict(size=9),
    )
    h_gap, v_gap = (0.04 if cols > 1 else 0.0), (min(0.12, 0.5 / rows) if rows > 1 else 0.0)
    width, height = (1 - h_gap * (cols - 1)) / cols, (1 - v_gap * (rows - 1)) / rows
    traces: list[dict[str, Any]] = []
    layout: dict[str, Any] = {}
    notes: list[dict[str, Any]] = []
    shapes: list[dict[str, Any]] = []
    show_mark = mark_at is not None and mark_at < m
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
            tickangle=-60,
            title=dict(text=col_title, font=dict(size=11)) if last_row and col == 0 else None,
        )
        layout[f"yaxis{suffix}"] = dict(
            ticks,
            domain=[max(0.0, y1 - height), min(1.0, y1)],
            anchor=f"x{suffix}",
            autorange="reversed",
            showticklabels=col == 0,
            title=dict(text=row_title, font=dict(size=11)) if col == 0 else None,
        )
        notes.append(panel_title(panel_titles[p], x0 + width / 2, y1))
        traces.append(
            dict(
                type="heatmap",
                z=screen_blocks(zs[p], f, f, "max"),
                x=names,
                y=names,
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
                coloraxis="coloraxis",
                hoverongaps=False,
                hovertemplate=(
                    f"{escape(panel_titles[p])}<br>{row_title}: %{{y}}<br>{col_title}: %{{x}}"
                    f"<br>{value_label}: %{{z:.3f}}<extra></extra>"
                ),
            )
        )
        if show_mark and mark_at is not None:
            # On a category axis a number is the category's index: k / f − 0.5 is the edge before
            # byte k (block k / f when drawn in blocks of f).
            edge, end = mark_at / f - 0.5, len(names) - 0.5
            xr, yr = f"x{suffix}", f"y{suffix}"
            shapes.append(dict(type="line", xref=xr, yref=yr, x0=edge, x1=edge, y0=-0.5, y1=end, line=MARK))
            shapes.append(dict(type="line", xref=xr, yref=yr, x0=-0.5, x1=end, y0=edge, y1=edge, line=MARK))
    if show_mark and mark_label:
        notes.append(
            dict(
                text=escape(mark_label),
                x=1.0,
                y=0.0,
                xref="paper",
                yref="paper",
                xanchor="right",
                yanchor="top",
                yshift=-40,
                showarrow=False,
                font=dict(size=11),
            )
        )
        layout["margin"] = dict(l=10, r=10, t=50, b=70)  # room for the note under the tick labels
    layout["coloraxis"] = dict(
        colorscale=WEIGHTS,
        cmin=0.0,
        cmax=zmax,
        colorbar=colorbar(scale_title or value_label),
    )
    layout["annotations"] = notes
    layout["shapes"] = shapes
    return make_figure(traces, title, rows * panel_height + 130, **layout)


def next_bytes(labels: Sequence[str], probs: Sequence[float], title: str, *, x_title: str) -> go.Figure:
    """The readout: one horizontal bar per candidate next byte, most likely on top, its probability
    printed on the bar (the number, not only the length, carries the value)."""
    names = [f"{k + 1}. «{escape(s)}»" for k, s in enumerate(labels)]
    bar = dict(
        type="bar",
        orientation="h",
        x=list(probs),
        y=names,
        marker=dict(color=LINES[0]),
        text=[f"{p:.3f}" for p in probs],
        textposition="outside",
        cliponaxis=False,
        hovertemplate=f"%{{y}}<br>{x_title}: %{{x:.4f}}<extra></extra>",
    )
    top = max([*probs, 0.0])
    return make_figure(
        [bar],
        title,
        60 + 36 * max(1, len(names)) + 60,
        xaxis=dict(title=x_title, range=[0, min(1.0, top * 1.25) or 1.0]),
        yaxis=dict(autorange="reversed", type="category", automargin=True),
    )


def surprise_bars(
    labels: Sequence[str],
    bits: np.ndarray,
    title: str,
    *,
    x_title: str,
    y_title: str,
    mark_at: int | None = None,
    mark_label: str = "",
    max_ticks: int = 40,
) -> go.Figure:
    """Bits paid for each byte 1 … n − 1 (bits[k] is byte k + 1's), byte labels on the axis (thinned);
    the most surprising byte is hatched as well as coloured; a dashed line before `mark_at`."""
    bits = np.asarray(bits, dtype=float)
    x = list(range(1, len(bits) + 1))
    worst = int(np.argmax(bits)) if len(bits) else -1
    colors = [LINES[1] if k == worst else LINES[0] for k in range(len(bits))]
    hatch = ["/" if k == worst else "" for k in range(len(bits))]
    names = [f"{k} · {escape(labels[k])}" for k in x]
    bar = dict(
        type="bar",
        x=x,
        y=bits.astype(np.float32),
        marker=dict(color=colors, pattern=dict(shape=hatch)),
        customdata=names,
        hovertemplate=f"%{{customdata}}<br>{y_title}: %{{y:.2f}}<extra></extra>",
    )
    step = max(1, int(np.ceil(len(x) / max_ticks)))
    tickvals = x[::step]
    layout: dict[str, Any] = dict(
        xaxis=dict(
            title=x_title,
            tickmode="array",
            tickvals=tickvals,
            ticktext=[escape(short(labels[k], 6)) for k in tickvals],
            tickangle=-60,
            showgrid=False,
        ),
        yaxis=dict(title=y_title),
        bargap=0.1,
    )
    if mark_at is not None and 0 < mark_at <= len(bits):
        layout["shapes"] = [
            dict(type="line", xref="x", yref="paper", x0=mark_at - 0.5, x1=mark_at - 0.5, y0=0, y1=1, line=MARK)
        ]
        layout["annotations"] = [
            dict(
                text=escape(mark_label),
                x=mark_at - 0.5,
                y=1,
                xref="x",
                yref="paper",
                xanchor="left",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=11),
            )
        ]
    return make_figure([bar], title, 340, **layout)
