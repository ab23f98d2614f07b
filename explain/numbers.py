"""A figure's numbers as tables: what the "Numbers" panel under every chart shows and downloads.

Pure (no Streamlit): a plotly Figure in, pandas DataFrames out, headed the way the figure's axes are
labelled, in the current run's language. ui.common.plot draws them.
"""

from __future__ import annotations

import html
import re
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explain.i18n import language
from explain.i18n import t as _tr

MAX_TABLE_CELLS = 65_536  # a numbers table larger than this (a 256 × 256 map) is offered as CSV only


def t(key: str, /, **values: Any) -> str:
    return _tr(key, language(), **values)


def _label(v: object) -> str:
    """A tick label or token name as plain text: the figures escape HTML for plotly."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        v = int(v)
    return html.unescape(str(v))


def _unique(labels: list[str]) -> list[str]:
    """Column / row headers must be unique: repeated tokens become "3·the"."""
    if len(set(labels)) == len(labels):
        return labels
    return [f"{k}·{t}" for k, t in enumerate(labels)]


def _axis_labels(values: Any, axis: Any, n: int) -> list[str]:
    """Headers for one heatmap axis: its values, or the axis's tick text where every value has one."""
    values = list(values) if values is not None else list(range(n))
    ticks = getattr(axis, "tickvals", None) if axis is not None else None
    text = getattr(axis, "ticktext", None) if axis is not None else None
    if ticks is not None and text is not None and len(ticks) == len(text):
        lookup = {_label(t): _label(x) for t, x in zip(ticks, text, strict=False)}
        if all(_label(v) in lookup for v in values):
            return [lookup[_label(v)] for v in values]
    return [_label(v) for v in values]


def _axis(fig: go.Figure, ref: str | None, letter: str) -> Any:
    name = f"{letter}axis" + ("" if not ref or ref == letter else ref[1:])
    return getattr(fig.layout, name, None)


def heatmap_tables(fig: go.Figure) -> list[tuple[str, pd.DataFrame]]:
    """One table per heatmap trace, or per tile of a tiled one: rows and columns named as on the
    figure's axes (unique)."""
    heat = [tr for tr in fig.data if tr.type == "heatmap" and tr.z is not None]
    notes = [html.unescape(a.text or "") for a in (fig.layout.annotations or ())]
    # A grid drawn as one heatmap (e.g. MiniLM's heads) names its maps' places in layout.meta.
    meta = fig.layout.meta
    tiles = meta.get("tiles", ()) if isinstance(meta, dict) else ()
    out: list[tuple[str, pd.DataFrame]] = []
    for k, tr in enumerate(heat):
        z = np.asarray(tr.z, dtype=float)
        if z.ndim != 2:
            continue
        custom = np.asarray(tr.customdata, dtype=object) if tr.customdata is not None else None
        if custom is not None and custom.shape[:2] == z.shape and custom.ndim == 3:
            rows, cols = [_label(v) for v in custom[:, 0, 0]], [_label(v) for v in custom[0, :, 1]]
        else:
            rows = _axis_labels(tr.y, _axis(fig, tr.yaxis, "y"), z.shape[0])
            cols = _axis_labels(tr.x, _axis(fig, tr.xaxis, "x"), z.shape[1])
        if len(rows) != z.shape[0] or len(cols) != z.shape[1]:
            rows, cols = [str(i) for i in range(z.shape[0])], [str(j) for j in range(z.shape[1])]
        if tiles and len(heat) == 1:  # one heatmap tiling many maps: a table per map
            for tile in tiles:
                (r0, r1), (c0, c1) = tile["rows"], tile["cols"]
                out.append((tile["name"], pd.DataFrame(z[r0:r1, c0:c1], index=rows[r0:r1], columns=cols[c0:c1])))
            continue
        name = tr.name or (
            notes[k] if len(notes) == len(heat) and notes[k] else t("common.numbers.panel_name", k=k + 1)
        )
        out.append((name, pd.DataFrame(z, index=_unique(rows), columns=_unique(cols))))
    return out


def trace_table(fig: go.Figure) -> pd.DataFrame | None:
    """Line, marker and bar traces as one table: a column per trace over a shared x when they share
    it, else one row per point (trace, x, y)."""
    traces = [tr for tr in fig.data if tr.type in ("scatter", "scattergl", "bar") and tr.y is not None]
    if not traces:
        return None
    series: list[tuple[str, np.ndarray, np.ndarray]] = []
    for k, tr in enumerate(traces):
        y = np.asarray(tr.y)
        x = np.asarray(tr.x) if tr.x is not None else np.arange(y.size)
        custom = np.asarray(tr.customdata, dtype=object) if tr.customdata is not None else None
        if custom is not None and custom.ndim == 1 and custom.size == y.size:
            x = np.asarray([_label(v) for v in custom], dtype=object)  # bars: "position · token"
        series.append((html.unescape(tr.name) if tr.name else t("common.numbers.trace_name", k=k + 1), x, y))
    x0 = series[0][1]
    shared = all(x.shape == x0.shape and (x == x0).all() for _, x, _ in series)
    x_title = getattr(fig.layout.xaxis.title, "text", None) or "x"
    if shared:
        data: dict[str, np.ndarray] = {html.unescape(x_title): x0}
        for name, _, y in series:
            while name in data:
                name += " ′"
            data[name] = y
        return pd.DataFrame(data)
    return pd.DataFrame(
        {
            "trace": [n for n, x, _ in series for _ in range(x.size)],
            html.unescape(x_title): np.concatenate([np.asarray(x, dtype=object) for _, x, _ in series]),
            "y": np.concatenate([np.asarray(y, dtype=object) for _, _, y in series]),
        }
    )


MAX_SUMMARY_LINES = 12  # a figure with more panels or traces is summarised by its first dozen


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def figure_summary(fig: go.Figure) -> list[str]:
    """What a figure shows, in a few computed sentences for a screen reader (and anyone): for every
    heatmap panel its largest and smallest value and where they are (row → column, named as on the
    axes); for every line or bar its highest and lowest point. Computed from the figure's own data,
    in the current run's language."""
    out: list[str] = []
    tables = heatmap_tables(fig)
    title = html.unescape(re.sub(r"<[^>]+>", " ", getattr(fig.layout.title, "text", None) or "")).strip()
    for name, df in tables:
        if len(tables) == 1 and title:  # one map: the chart's title says more than "panel 1"
            name = title
        z = df.to_numpy(dtype=float)
        if not np.isfinite(z).any():
            continue
        zz = np.where(np.isfinite(z), z, np.nan)
        hi = np.unravel_index(np.nanargmax(zz), z.shape)
        lo = np.unravel_index(np.nanargmin(zz), z.shape)
        out.append(
            t(
                "common.numbers.summary_heat",
                panel=name,
                hi=_fmt(z[hi]),
                hi_row=df.index[hi[0]],
                hi_col=df.columns[hi[1]],
                lo=_fmt(z[lo]),
                lo_row=df.index[lo[0]],
                lo_col=df.columns[lo[1]],
            )
        )
    lines = trace_table(fig)
    if lines is not None:
        if lines.columns[0] == "trace" and list(lines.columns)[2:] == ["y"]:  # one row per point
            x_name = lines.columns[1]
            groups = [(str(n), g[x_name].to_numpy(), g["y"].to_numpy()) for n, g in lines.groupby("trace", sort=False)]
        else:
            x = lines.iloc[:, 0].to_numpy()
            groups = [(str(c), x, lines[c].to_numpy()) for c in lines.columns[1:]]
        for name, x, y in groups:
            try:
                yy = np.asarray(y, dtype=float)
            except (TypeError, ValueError):
                continue
            if not np.isfinite(yy).any():
                continue
            yy = np.where(np.isfinite(yy), yy, np.nan)
            i, j = int(np.nanargmax(yy)), int(np.nanargmin(yy))
            out.append(
                t(
                    "common.numbers.summary_line",
                    name=name,
                    hi=_fmt(yy[i]),
                    hi_x=_label(x[i]),
                    lo=_fmt(yy[j]),
                    lo_x=_label(x[j]),
                )
            )
    return out[:MAX_SUMMARY_LINES]
