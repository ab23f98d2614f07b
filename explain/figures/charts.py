"""Charts several chapters draw: lines, bars, marks on lines, the bucket staircase, per-token bars.

Numbers in, plotly Figure out, in the atlas's one look (theme.py). A figure only one chapter draws
lives beside that chapter (explain/chapters/<chapter>_figures.py) and is built from these parts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .fast import hline, hline_note, vline, vline_note, vrect, vrect_note
from .spec import layout_get, relayout
from .theme import (
    DASHES,
    LINES,
    PATTERNS,
    SYMBOLS,
    escape,
    make_figure,
    rgba,
    token_axis,
    wire_values,
)


def lines(
    x: Sequence[float] | np.ndarray,
    ys: Mapping[str, Sequence[float] | np.ndarray],
    title: str,
    *,
    x_title: str,
    y_title: str,
    log_x: bool = False,
    log_y: bool = False,
    markers: bool = False,
    height: int = 380,
    dashed: Sequence[str] = (),
) -> go.Figure:
    """One line per named series over a shared x. Colour is not the only channel (WCAG 1.4.1): with
    several series and no `dashed` of the caller's, each series also gets its own dash pattern,
    which the legend shows. Where the caller's dash means something (e.g. "dashed = closed form"),
    dashes stay theirs and series that share a line style (two undashed, two dashed) get a marker
    symbol each instead."""
    traces = []
    patterns = len(ys) > 1 and not dashed
    n_dashed = sum(name in dashed for name in ys)
    for k, (name, y) in enumerate(ys.items()):
        dash = DASHES[k % len(DASHES)] if patterns else ("dash" if name in dashed else None)
        marker: dict[str, Any] = {}
        if dashed and (n_dashed if name in dashed else len(ys) - n_dashed) > 1:
            # a few symbols along the line are enough to tell it apart; one per point would clutter
            marker = dict(symbol=SYMBOLS[k % len(SYMBOLS)], size=7, maxdisplayed=12)
        traces.append(
            dict(
                type="scatter",
                x=np.asarray(x),
                y=wire_values(y),
                name=name,
                mode="lines+markers" if markers or marker else "lines",
                marker=marker or None,
                line=dict(color=LINES[k % len(LINES)], width=2, dash=dash),
                hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y:.6g}}<extra>{escape(name)}</extra>",
            )
        )
    return make_figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=x_title, zeroline=True, **_log_axis(log_x, [x])),
        yaxis=dict(title=y_title, zeroline=True, **_log_axis(log_y, ys.values())),
        # Legend under the plot: above it, it collides with the title on narrow columns.
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )


def _log_axis(log: bool, series: Iterable[Sequence[float] | np.ndarray]) -> dict[str, Any]:
    """A log axis; below 0.001 its ticks as powers of ten (10⁻⁶), not plotly's SI prefixes: "1μ" on
    an axis of radians or attention weights reads as a unit (micro-something) to a learner."""
    if not log:
        return dict(type=None)
    values = np.concatenate([np.asarray(v, dtype=float).ravel() for v in series] or [np.zeros(0)])
    tiny = bool(np.any((values > 0) & (values < 1e-3)))
    return dict(type="log", exponentformat="power") if tiny else dict(type="log")


def band_line(
    x: np.ndarray,
    mean: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    name: str,
    k: int,
    symbol: str,
    marker_size: int,
    x_title: str,
    y_title: str,
    x_format: str = "",
    y_format: str = ".3g",
) -> list[dict[str, Any]]:
    """The k-th series as a mean line (the k-th colour and dash) with its interval as a shaded band
    behind it (the band shares the line's legend entry, so a click hides both). The band is drawn
    over the x where both ends are finite and left out when there is none (one seed or one window:
    no interval). The hover shows x, the mean and [lo, hi] in the given formats."""
    color, dash = LINES[k % len(LINES)], DASHES[k % len(DASHES)]
    xf = f":{x_format}" if x_format else ""
    hovertemplate = (
        f"{escape(x_title)}: %{{x{xf}}}<br>{escape(y_title)}: %{{y:{y_format}}} "
        f"[%{{customdata[0]:{y_format}}}, %{{customdata[1]:{y_format}}}]<extra>{escape(name)}</extra>"
    )
    traces: list[dict[str, Any]] = []
    ok = np.isfinite(lo) & np.isfinite(hi)
    if ok.any():
        traces.append(
            dict(
                type="scatter",
                x=np.concatenate([x[ok], x[ok][::-1]]),
                y=np.concatenate([hi[ok], lo[ok][::-1]]),
                fill="toself",
                fillcolor=rgba(color, 0.15),
                mode="lines",  # no markers on the band's outline
                line=dict(width=0),
                hoverinfo="skip",
                legendgroup=name,
                showlegend=False,
                name=name,
            )
        )
    traces.append(
        dict(
            type="scatter",
            x=x,
            y=mean,
            mode="lines+markers",
            name=name,
            legendgroup=name,
            line=dict(color=color, width=2, dash=dash),
            marker=dict(symbol=symbol, size=marker_size, color=color),
            customdata=np.stack([lo, hi], axis=-1),
            hovertemplate=hovertemplate,
        )
    )
    return traces


def bars(
    labels: Sequence[str],
    values: Sequence[float] | np.ndarray,
    title: str,
    *,
    x_title: str,
    y_title: str,
    highlight: Sequence[int] = (),
    height: int = 340,
) -> go.Figure:
    """Bars over tokens (by position, so repeated words stay apart); `highlight` marks some bars."""
    values = np.asarray(values, dtype=float)
    colors = [LINES[1] if i in set(highlight) else LINES[0] for i in range(len(values))]
    # A highlighted bar is also hatched: colour is not the only channel (WCAG 1.4.1).
    hatch = ["/" if i in set(highlight) else "" for i in range(len(values))]
    names = [f"{i} · {escape(t)}" for i, t in enumerate(labels)]
    bar = dict(
        type="bar",
        x=list(range(len(values))),
        y=values,
        marker=dict(color=colors, pattern=dict(shape=hatch)) if highlight else dict(color=colors),
        customdata=names,
        hovertemplate=f"%{{customdata}}<br>{y_title}: %{{y:.6g}}<extra></extra>",
    )
    return make_figure(
        [bar], title, height, xaxis=dict(title=x_title, tickangle=-45, **token_axis(labels)), yaxis=dict(title=y_title)
    )


def mark_lines(
    fig: go.Figure,
    *,
    x: Mapping[str, float] | None = None,
    y: Mapping[str, float] | None = None,
) -> go.Figure:
    """Labelled dashed reference lines on a figure from this module: vertical at each x, horizontal
    at each y (label → coordinate), e.g. "end of training" under the last trained position.
    Labels are escaped: they may contain typed text."""
    # plotly.js places annotations on a log axis at 10^coordinate (shapes take plain data values),
    # so the label of a line on a log axis must be given its log10 to land on the line.
    if not x and not y:
        return fig
    log_x, log_y = layout_get(fig, "xaxis.type") == "log", layout_get(fig, "yaxis.type") == "log"
    line = dict(color=LINES[7], width=2, dash="dash")
    shapes, notes = list(layout_get(fig, "shapes") or ()), list(layout_get(fig, "annotations") or ())
    for label, value in (x or {}).items():
        shapes.append(vline(value, line))
        notes.append(
            vline_note(
                float(np.log10(value)) if log_x and value > 0 else value,
                "top_right",
                text=escape(label),
                font=dict(size=12),
                bgcolor="rgba(255,255,255,0.8)",
            )
        )
    for label, value in (y or {}).items():
        shapes.append(hline(value, line))
        notes.append(
            hline_note(
                float(np.log10(value)) if log_y and value > 0 else value,
                "bottom_left",
                text=escape(label),
                font=dict(size=12),
                bgcolor="rgba(255,255,255,0.8)",
            )
        )
    # One change for all the lines (each add_vline / add_hline would be one relayout, at 3–6 ms
    # apiece), to the spec if the figure is not built; the figure is changed in place, as callers expect.
    return relayout(fig, shapes=shapes, annotations=notes)


def staircase(
    x: Sequence[int] | np.ndarray,
    y: Sequence[int] | np.ndarray,
    region: Sequence[int] | np.ndarray,
    title: str,
    *,
    regions: Sequence[str],
    x_title: str,
    y_title: str,
    height: int = 440,
    band: tuple[float, float] | None = None,
    band_label: str = "",
) -> go.Figure:
    """A step function over integers (T5's distance → bucket map): a thin grey step line, and one
    marker per x coloured by its region (region[k] indexes `regions`, Okabe–Ito colours).
    `band` (lo, hi) shades an x range with a label (e.g. the distances a sentence reaches)."""
    x, y, region = np.asarray(x), np.asarray(y), np.asarray(region)
    traces = [
        dict(
            type="scatter",
            x=x,
            y=y,
            mode="lines",
            line=dict(shape="hv", color="#9a9a9a", width=1),
            hoverinfo="skip",
            showlegend=False,
        )
    ]
    bands: dict[str, Any] = {}
    if band is not None:
        bands = dict(
            shapes=[vrect(band[0], band[1], fillcolor="rgba(120, 120, 120, 0.13)", line=dict(width=0), layer="below")],
            annotations=[vrect_note(band[0], band[1], "top_left", text=escape(band_label), font=dict(size=12))],
        )
    for k, name in enumerate(regions):
        sel = region == k
        if not sel.any():
            continue
        traces.append(
            dict(
                type="scatter",
                x=x[sel],
                y=y[sel],
                mode="markers",
                name=name,
                marker=dict(color=LINES[k % len(LINES)], size=6 if x.size <= 400 else 4),
                hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y}}<extra>{escape(name)}</extra>",
            )
        )
    return make_figure(
        traces,
        title,
        height,
        xaxis=dict(title=x_title, zeroline=True),
        yaxis=dict(title=y_title, zeroline=False, rangemode="tozero"),
        legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0),
        **bands,
    )


def token_bars(
    labels: Sequence[str],
    series: Mapping[str, Sequence[float] | np.ndarray],
    title: str,
    *,
    x_title: str,
    y_title: str,
    height: int = 360,
) -> go.Figure:
    """Grouped bars over tokens (by position), one colour and one fill pattern per named series
    (colour is not the only channel, WCAG 1.4.1; the legend shows both)."""
    names = [f"{i} · {escape(t)}" for i, t in enumerate(labels)]
    traces = []
    for k, (name, values) in enumerate(series.items()):
        traces.append(
            dict(
                type="bar",
                x=list(range(len(labels))),
                y=np.asarray(values, dtype=float),
                name=name,
                marker=dict(color=LINES[k % len(LINES)], pattern=dict(shape=PATTERNS[k % len(PATTERNS)])),
                customdata=names,
                hovertemplate=f"%{{customdata}}<br>{y_title}: %{{y:.6g}}<extra>{escape(name)}</extra>",
            )
        )
    return make_figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=x_title, tickangle=-45, **token_axis(labels)),
        yaxis=dict(title=y_title),
        barmode="group",
        bargap=0.15,
        legend=dict(orientation="h", yanchor="top", y=-0.3, xanchor="left", x=0),
    )
