"""Every figure in PE Atlas: numbers in, plotly Figure out, one shared look.

Colour rules (colour-blind safe, and legible on a classroom projector):
    SIGNED   diverging, centred on 0: blue negative, white zero, red positive (ColorBrewer RdBu)
    WEIGHTS  sequential for values in [0, 1] such as attention weights: white at 0, so the few
             strong weights stand out on a projector (ColorBrewer Blues)
    INDEX    sequential for counts and indices (cividis)
Token axes use integer positions with the words as tick text, so repeated words ("the … the") keep
their own rows; hover text always shows position, token and the exact number.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence

import numpy as np
import pandas  # noqa: F401  (see below)
import plotly.graph_objects as go
import plotly.io as pio

from explain.i18n import t as _t

# plotly's array validators look pandas up in sys.modules without importing it
# (_plotly_utils.optional_imports.get_module("pandas", should_load=False)). On a cold server another
# thread can be halfway through importing pandas at that moment, and building a figure then fails
# with "partially initialized module 'pandas' has no attribute 'Series'" (seen once, on the Learned
# APE page). Importing it here, fully, in the importing thread (which waits on another thread's
# import of the same module) closes that window. Streamlit needs pandas anyway.

SIGNED = "RdBu_r"
WEIGHTS = "Blues"
INDEX = "Cividis"
# Okabe–Ito: the qualitative palette that stays distinct under every common colour-vision deficiency.
LINES = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
# Hangul is not in Inter or Noto Sans: the browser takes it from the first Korean font installed
# (Linux: Noto Sans CJK KR, macOS: Apple SD Gothic Neo, Windows: Malgun Gothic).
FONT = dict(
    family="Inter, 'Noto Sans', 'Noto Sans KR', 'Noto Sans CJK KR', 'Apple SD Gothic Neo', 'Malgun Gothic', sans-serif",
    size=13,
)
MAX_TICKS = 40  # beyond this many tokens, label every k-th one; hover still names every cell
HOVER_NAMES_MAX_CELLS = 100 * 100  # token_heatmap: larger maps name positions, not tokens, on hover


# The look is plotly_white's. But setting a template on a figure makes plotly copy and validate all
# of it, and plotly_white carries defaults for 24 kinds of trace: ~11 ms per figure, measured as a
# third of a whole page's rerun. So the atlas registers, once, a template with plotly_white's layout
# and the defaults of the three trace kinds it draws, as the default every new figure starts from.
_WHITE = pio.templates["plotly_white"]
pio.templates["pe_atlas"] = go.layout.Template(
    layout=_WHITE.layout, data={kind: _WHITE.data[kind] for kind in ("heatmap", "scatter", "bar")}
)
pio.templates.default = "pe_atlas"


def _figure(data, title: str, height: int, *, _validate: bool = True, **layout) -> go.Figure:
    """The one way a figure is made here: traces and the whole layout (the shared look below, then
    the builder's own keys: xaxis=…, shapes=[…], a margin of its own…) handed to the constructor once.
    Every fig.update_layout / update_xaxes / add_shape / add_vline on a built figure goes through
    plotly's relayout machinery (batch_update, dispatch plans): 3–6 ms each, measured as most of a
    page's rerun; one constructor call gives the same figure 5–10× faster. Traces are passed as
    plain dicts (type="heatmap", …), not go.Heatmap objects: the constructor validates a trace
    object's properties all over again, so building one first doubles the work for the same result."""
    # Streamlit's import sets plotly's default template to "streamlit", this module's import sets
    # "pe_atlas": whichever ran last would decide every figure's look. Re-asserting ours here (a
    # string compare, nearly free) makes a figure the same whatever the import order; copying the
    # template object into each layout instead would cost the validation the lean template avoids.
    if pio.templates.default != "pe_atlas":
        pio.templates.default = "pe_atlas"
    spec = dict(
        title=dict(text=title, x=0, xanchor="left", font=dict(size=15)),
        font=FONT,
        height=height,
        margin=dict(l=10, r=10, t=50, b=10),
        hoverlabel=dict(font=dict(family=FONT["family"])),
    )
    spec.update(layout)
    return go.Figure(data=data, layout=spec, _validate=_validate)


def _vline(x: float, line: dict) -> dict:
    """The shape fig.add_vline(x=…) makes: a line at data x across the whole plot height."""
    return dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain", line=line)


def _hline(y: float, line: dict) -> dict:
    """The shape fig.add_hline(y=…) makes: a line at data y across the whole plot width."""
    return dict(type="line", x0=0, x1=1, xref="x domain", y0=y, y1=y, yref="y", line=line)


def _vrect(x0: float, x1: float, **shape) -> dict:
    """The shape fig.add_vrect(x0=…, x1=…) makes: a band over an x range, full plot height."""
    return dict(type="rect", x0=x0, x1=x1, xref="x", y0=0, y1=1, yref="y domain", **shape)


# Where fig.add_vline / add_hline / add_vrect put their annotation= at these annotation_position
# values (plotly.shapeannotation), written out so the figure can be built in one go.
def _vline_note(x: float, position: str, **note) -> dict:
    xanchor, yanchor, y = dict(top_right=("left", "top", 1), bottom_right=("left", "bottom", 0))[position]
    return dict(note, x=x, y=y, xref="x", yref="y domain", xanchor=xanchor, yanchor=yanchor, showarrow=False)


def _hline_note(y: float, position: str, **note) -> dict:
    xanchor, yanchor, x = dict(bottom_left=("left", "top", 0), top_left=("left", "bottom", 0))[position]
    return dict(note, x=x, y=y, xref="x domain", yref="y", xanchor=xanchor, yanchor=yanchor, showarrow=False)


def _vrect_note(x0: float, x1: float, position: str, **note) -> dict:
    yanchor, y = dict(top_left=("top", 1), bottom_left=("bottom", 0))[position]
    return dict(note, x=min(x0, x1), y=y, xref="x", yref="y domain", xanchor="left", yanchor=yanchor, showarrow=False)


def _tick_positions(n: int, max_ticks: int = MAX_TICKS) -> list[int]:
    step = max(1, int(np.ceil(n / max_ticks)))
    return list(range(0, n, step))


def _token_axis(tokens: Sequence[str], max_chars: int = 14, max_ticks: int = MAX_TICKS) -> dict:
    ticks = _tick_positions(len(tokens), max_ticks)
    text = [_escape(_short(tokens[t], max_chars)) for t in ticks]
    return dict(tickmode="array", tickvals=ticks, ticktext=text, showgrid=False)


def _short(token: str, max_chars: int) -> str:
    return token if len(token) <= max_chars else token[: max_chars - 1] + "…"


def _words(row_title: str | None, col_title: str | None, value_label: str | None) -> tuple[str, str, str]:
    """The default axis and value words of a token map, in the current language."""
    return (
        _t("figures.query_i") if row_title is None else row_title,
        _t("figures.key_j") if col_title is None else col_title,
        _t("figures.value") if value_label is None else value_label,
    )


def _escape(token: str) -> str:
    """Hover text is rendered as HTML by plotly.js: a typed '<b>' must show as text, not markup."""
    return token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _wire(z: np.ndarray) -> np.ndarray:
    """What a heatmap sends to the browser: float32 (7 significant digits, more than any colour or
    6-digit hover shows) halves the payload of float64; a 512 × 512 map is 1 MB instead of 2."""
    return np.asarray(z, dtype=np.float32)


def _signed_range(z: np.ndarray, zmax: float | None) -> float:
    if zmax is not None:
        return zmax
    finite = np.abs(z[np.isfinite(z)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


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
    traces, layout = _token_heatmap_parts(
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
    return _figure(traces, **layout)


def _token_heatmap_parts(
    z,
    row_tokens,
    col_tokens,
    title,
    *,
    kind="signed",
    row_title=None,
    col_title=None,
    value_label=None,
    zmin=None,
    zmax=None,
    show_values=None,
    height=None,
    max_ticks=MAX_TICKS,
) -> tuple[list, dict]:
    """token_heatmap's traces and layout (title and height included), for builders that add to it
    before the figure is made."""
    row_title, col_title, value_label = _words(row_title, col_title, value_label)
    z = np.asarray(z, dtype=float)
    n_rows, n_cols = z.shape
    # Token names in the hover need one string per cell: ~3 MB and ~0.8 s per 256 × 256 map. Past
    # HOVER_NAMES_MAX_CELLS the hover names positions only (the thinned axis labels name tokens).
    custom = None
    if n_rows * n_cols <= HOVER_NAMES_MAX_CELLS:
        rows = [f"{i} · {_escape(t)}" for i, t in enumerate(row_tokens)]
        cols = [f"{j} · {_escape(t)}" for j, t in enumerate(col_tokens)] if col_tokens else list(range(n_cols))
        custom = np.empty((n_rows, n_cols, 2), dtype=object)
        custom[:, :, 0] = np.asarray(rows, dtype=object)[:, None]
        custom[:, :, 1] = np.asarray(cols, dtype=object)[None, :]
    where = "%{customdata[0]}", "%{customdata[1]}"
    if custom is None:
        where = "%{y}", "%{x}"
    scale = dict(signed=SIGNED, weights=WEIGHTS, index=INDEX)[kind]
    if kind == "signed":
        r = _signed_range(z, zmax)
        zmin, zmax = -r, r
    elif kind == "weights":
        zmin = 0.0 if zmin is None else zmin
        zmax = 1.0 if zmax is None else zmax
    if show_values is None:
        show_values = max(n_rows, n_cols) <= 12
    heat = dict(
        type="heatmap",
        z=_wire(z),
        x=list(range(n_cols)),
        y=list(range(n_rows)),
        colorscale=scale,
        zmin=zmin,
        zmax=zmax,
        customdata=custom,
        hovertemplate=(
            f"{row_title}: {where[0]}<br>{col_title}: {where[1]}<br>{value_label}: %{{z:.6g}}<extra></extra>"
        ),
        colorbar=dict(title=dict(text=value_label, side="right"), thickness=12),
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
            **_token_axis(col_tokens, max_ticks=max_ticks),
        )
    else:
        xaxis = dict(title=col_title, side="bottom", showgrid=False)
    # No zero lines: they would cross the blank (NaN, masked) cells of row 0 / column 0.
    yaxis = dict(title=row_title, autorange="reversed", zeroline=False, **_token_axis(row_tokens, max_ticks=max_ticks))
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
    x: Sequence | None = None,
    y: Sequence | None = None,
    zmax: float | None = None,
    height: int = 420,
) -> go.Figure:
    """A numeric matrix on numeric axes (the PE matrix: position × channel; a bucket map; …)."""
    value_label = _t("figures.value") if value_label is None else value_label
    z = np.asarray(z, dtype=float)
    scale = dict(signed=SIGNED, weights=WEIGHTS, index=INDEX)[kind]
    r = _signed_range(z, zmax) if kind == "signed" else None
    heat = dict(
        type="heatmap",
        z=_wire(z),
        x=list(x) if x is not None else list(range(z.shape[1])),
        y=list(y) if y is not None else list(range(z.shape[0])),
        colorscale=scale,
        zmin=-r if r is not None else None,
        zmax=r,
        hovertemplate=f"{y_title}: %{{y}}<br>{x_title}: %{{x}}<br>{value_label}: %{{z:.6g}}<extra></extra>",
        colorbar=dict(title=dict(text=value_label, side="right"), thickness=12),
    )
    return _figure(
        [heat],
        title,
        height,
        xaxis=dict(title=x_title, showgrid=False),
        yaxis=dict(title=y_title, autorange="reversed", showgrid=False),
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
    """One line per named series over a shared x."""
    traces = []
    for k, (name, y) in enumerate(ys.items()):
        traces.append(
            dict(
                type="scatter",
                x=np.asarray(x),
                y=np.asarray(y),
                name=name,
                mode="lines+markers" if markers else "lines",
                line=dict(color=LINES[k % len(LINES)], width=2, dash="dash" if name in dashed else None),
                hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y:.6g}}<extra>{_escape(name)}</extra>",
            )
        )
    return _figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=x_title, type="log" if log_x else None, zeroline=True),
        yaxis=dict(title=y_title, type="log" if log_y else None, zeroline=True),
        # Legend under the plot: above it, it collides with the title on narrow columns.
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )


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
    names = [f"{i} · {_escape(t)}" for i, t in enumerate(labels)]
    bar = dict(
        type="bar",
        x=list(range(len(values))),
        y=values,
        marker_color=colors,
        customdata=names,
        hovertemplate=f"%{{customdata}}<br>{y_title}: %{{y:.6g}}<extra></extra>",
    )
    return _figure(
        [bar], title, height, xaxis=dict(title=x_title, tickangle=-45, **_token_axis(labels)), yaxis=dict(title=y_title)
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
    log_x, log_y = fig.layout.xaxis.type == "log", fig.layout.yaxis.type == "log"
    line = dict(color=LINES[7], width=2, dash="dash")
    shapes, notes = list(fig.layout.shapes), list(fig.layout.annotations)
    for label, value in (x or {}).items():
        shapes.append(_vline(value, line))
        notes.append(
            _vline_note(
                float(np.log10(value)) if log_x and value > 0 else value,
                "top_right",
                text=_escape(label),
                font=dict(size=12),
                bgcolor="rgba(255,255,255,0.8)",
            )
        )
    for label, value in (y or {}).items():
        shapes.append(_hline(value, line))
        notes.append(
            _hline_note(
                float(np.log10(value)) if log_y and value > 0 else value,
                "bottom_left",
                text=_escape(label),
                font=dict(size=12),
                bgcolor="rgba(255,255,255,0.8)",
            )
        )
    # One relayout for all the lines (each add_vline / add_hline would be one, at 3–6 ms apiece); the
    # figure is changed in place, as callers expect.
    fig.update_layout(shapes=shapes, annotations=notes)
    return fig


def token_heatmap_marked(
    z: np.ndarray,
    row_tokens: Sequence[str],
    col_tokens: Sequence[str] | None,
    title: str,
    *,
    mark: np.ndarray,
    **kwargs,
) -> go.Figure:
    """token_heatmap with the cells where `mark` is True veiled in translucent grey (e.g. Shaw's
    clipped pairs, which all share one vector). The veil takes no hover: the cell below still
    answers. Say what the veil means in the title."""
    traces, layout = _token_heatmap_parts(z, row_tokens, col_tokens, title, **kwargs)
    veil = np.where(np.asarray(mark, dtype=bool), 1.0, np.nan)
    grey = "rgba(60, 60, 60, 0.42)"
    traces.append(
        dict(
            type="heatmap",
            z=veil,
            x=list(range(veil.shape[1])),
            y=list(range(veil.shape[0])),
            colorscale=[[0, grey], [1, grey]],
            zmin=0,
            zmax=1,
            showscale=False,
            hoverinfo="skip",
            hoverongaps=False,
        )
    )
    return _figure(traces, **layout)


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
    bands = {}
    if band is not None:
        bands = dict(
            shapes=[_vrect(band[0], band[1], fillcolor="rgba(120, 120, 120, 0.13)", line=dict(width=0), layer="below")],
            annotations=[_vrect_note(band[0], band[1], "top_left", text=_escape(band_label), font=dict(size=12))],
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
                hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y}}<extra>{_escape(name)}</extra>",
            )
        )
    return _figure(
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
    """Grouped bars over tokens (by position), one colour per named series."""
    names = [f"{i} · {_escape(t)}" for i, t in enumerate(labels)]
    traces = []
    for k, (name, values) in enumerate(series.items()):
        traces.append(
            dict(
                type="bar",
                x=list(range(len(labels))),
                y=np.asarray(values, dtype=float),
                name=name,
                marker_color=LINES[k % len(LINES)],
                customdata=names,
                hovertemplate=f"%{{customdata}}<br>{y_title}: %{{y:.6g}}<extra>{_escape(name)}</extra>",
            )
        )
    return _figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=x_title, tickangle=-45, **_token_axis(labels)),
        yaxis=dict(title=y_title),
        barmode="group",
        bargap=0.15,
        legend=dict(orientation="h", yanchor="top", y=-0.3, xanchor="left", x=0),
    )


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
            row_text.append(f"{p} · {_escape(tokens[p])}")
        elif p < max_len:
            row_text.append(f"{p} · {_t('figures.lookup.not_yours')}")
        else:
            row_text.append(f"{p} · {_escape(tokens[p])} {_t('figures.lookup.no_row_suffix')}")
    custom = np.broadcast_to(np.asarray(row_text, dtype=object)[:, None], (n_rows, d))
    r = _signed_range(z, None)
    heat = dict(
        type="heatmap",
        z=_wire(z),
        x=list(range(d)),
        y=list(range(n_rows)),
        colorscale=SIGNED,
        zmin=-r,
        zmax=r,
        customdata=custom,
        hovertemplate=(
            f"{_t('figures.position')}: %{{customdata}}<br>{col_title}: %{{x}}"
            f"<br>{value_label}: %{{z:.4g}}<extra></extra>"
        ),
        hoverongaps=False,
        colorbar=dict(title=dict(text=value_label, side="right"), thickness=12),
    )
    height = height or int(min(760, max(360, 150 + 14 * n_rows)))
    # About one label per 14 px of plot height, so labels never overlap (hover names every row).
    step = max(1, int(np.ceil(n_rows / max(2, (height - 150) // 14))))
    ticks = list(range(0, n_rows, step))
    text = [f"{p} {_escape(_short(tokens[p], 10))}" if p < n else str(p) for p in ticks]
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
    return _figure(
        [heat],
        title,
        height,
        xaxis=dict(title=col_title, showgrid=False, range=[-0.5, d - 0.5]),
        yaxis=dict(
            title=_t("figures.lookup.row_axis"),
            autorange="reversed",
            showgrid=False,
            tickmode="array",
            tickvals=ticks,
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
    **kwargs,
) -> go.Figure:
    """token_heatmap over all tokens, where only the first n_fit can take part (a table ran out).

    Rows and columns from n_fit on should hold NaN (blank cells); they get a shaded band and a note,
    so the learner sees which tokens are missing instead of a smaller map that hides them.
    """
    note = _t("figures.lookup.cut_note") if note is None else note
    traces, layout = _token_heatmap_parts(z, tokens, tokens, title, **kwargs)
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
    return _figure(traces, **layout)


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
            colorbar=dict(title=dict(text=order_title, side="right"), thickness=12),
        ),
        customdata=order,
        hovertemplate=(
            f"{order_title}: %{{customdata}}<br>{x_title}: %{{x:.4g}}<br>{y_title}: %{{y:.4g}}<extra></extra>"
        ),
    )
    return _figure(
        [path],
        title,
        height,
        xaxis=dict(title=x_title, zeroline=True),
        yaxis=dict(title=y_title, zeroline=True, scaleanchor="x", scaleratio=1),
    )


def head_colors(slopes: Sequence[float] | np.ndarray, steepest: float = 1.0, flattest: float = 2.0**-8) -> list[str]:
    """One colour per attention head from its ALiBi-style slope (viridis on log2 m): steep heads dark
    purple, flat heads green, the same slope always the same colour whatever the head count, so
    non-monotone slope orders (H = 6: 1/4, 1/16, 1/64, 1/256, 1/2, 1/8) show as such. The bright
    yellow end of viridis is left out: it vanishes on a white background."""
    from plotly.colors import sample_colorscale

    lo, hi = np.log2(flattest), np.log2(steepest)
    t = (np.log2(np.asarray(slopes, dtype=float)) - lo) / (hi - lo)  # 1 steepest … 0 flattest
    # Viridis by name, not WEIGHTS: head colours must not look like attention weights.
    return sample_colorscale("Viridis", [float(v) for v in 0.82 * (1.0 - np.clip(t, 0.0, 1.0))])


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
        marker_color=list(colors) if colors is not None else LINES[0],
        text=list(text) if text is not None else None,
        textposition="outside",
        cliponaxis=False,
        customdata=list(hover) if hover is not None else [""] * values.size,
        hovertemplate=f"{_t('figures.head_hover')}<br>{y_title}: %{{y:.6g}}<br>%{{customdata}}<extra></extra>",
    )
    return _figure(
        [bar],
        title,
        height,
        xaxis=dict(title=_t("figures.head"), tickmode="array", tickvals=heads, showgrid=False),
        yaxis=dict(title=y_title, type="log" if log_y else None),
    )


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
) -> go.Figure:
    """Small multiples: one (n × n) token heatmap per panel (zs: (panels, n, n)), one shared colour
    scale so panels compare at a glance. NaN cells stay blank. Rows and columns are named
    "position · token" so repeated words keep their own cells and hover names both tokens; tick
    labels are thinned to a few per panel, on the left column and the bottom row only.
    The layout is built as one dict (not make_subplots + per-axis updates, which cost ~1 s for 16
    panels in plotly's validation)."""
    row_title, col_title, value_label = _words(row_title, col_title, value_label)
    zs = np.asarray(zs, dtype=float)
    n_panels, n_rows, n_cols = zs.shape
    cols = max(1, min(cols, n_panels))
    rows = int(np.ceil(n_panels / cols))
    names = [f"{k} · {_escape(t)}" for k, t in enumerate(tokens)]
    # Labels per panel axis: fewer as panels get narrower. The caller knows when the whole figure
    # itself sits in a narrow page column (max_ticks).
    step = max(1, int(np.ceil(len(names) / (max_ticks or {1: MAX_TICKS, 2: 24}.get(cols, 8)))))
    tick_idx = list(range(0, len(names), step))
    ticks = dict(
        type="category",
        tickmode="array",
        tickvals=[names[k] for k in tick_idx],
        ticktext=[_escape(_short(tokens[k], 8)) for k in tick_idx],
        showgrid=False,
        zeroline=False,
        tickfont=dict(size=10),
    )
    scale = dict(signed=SIGNED, weights=WEIGHTS, index=INDEX)[kind]
    if kind == "signed":
        r = _signed_range(zs, zmax)
        zmin, zmax = -r, r
    elif kind == "weights":
        zmin = 0.0 if zmin is None else zmin
        zmax = 1.0 if zmax is None else zmax
    h_gap, v_gap = (0.05 if cols > 1 else 0.0), (min(0.1, 0.45 / rows) if rows > 1 else 0.0)
    width, height = (1 - h_gap * (cols - 1)) / cols, (1 - v_gap * (rows - 1)) / rows
    traces, layout, notes = [], {}, []
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
        notes.append(
            dict(
                text=_escape(panel_titles[p]),
                x=x0 + width / 2,
                y=y1,
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=12),
            )
        )
        traces.append(
            dict(
                type="heatmap",
                z=zs[p].astype(np.float32),  # float32 halves what the browser receives
                x=names[:n_cols],
                y=names[:n_rows],
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
                coloraxis="coloraxis",
                hoverongaps=False,
                hovertemplate=(
                    f"{_escape(panel_titles[p])}<br>{row_title}: %{{y}}<br>{col_title}: %{{x}}"
                    f"<br>{value_label}: %{{z:.4g}}<extra></extra>"
                ),
            )
        )
    layout["coloraxis"] = dict(
        colorscale=scale, cmin=zmin, cmax=zmax, colorbar=dict(title=dict(text=value_label, side="right"), thickness=12)
    )
    layout["annotations"] = notes
    return _figure(traces, title, rows * panel_height + 110, **layout)


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
                y=ys[h],
                name=names[h],
                mode="lines",
                legendgroup=str(h),
                line=dict(color=colors[h], width=2),
                hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y:.4g}}<extra>{_escape(names[h])}</extra>",
            )
        )
        if dashed_ys is not None:
            label = names[h] + dashed_suffix
            traces.append(
                dict(
                    type="scatter",
                    x=x[h],
                    y=np.asarray(dashed_ys[h], dtype=float),
                    name=label,
                    mode="lines",
                    legendgroup=str(h),
                    showlegend=False,
                    line=dict(color=colors[h], width=1.5, dash="dot"),
                    hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y:.4g}}<extra>{_escape(label)}</extra>",
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
                text=["", _escape(label)],
                textposition="top right",
                hoverinfo="skip",
                cliponaxis=False,
            )
        )
    return _figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=x_title, type="log" if log_x else None, zeroline=True),
        yaxis=dict(title=y_title, type="log" if log_y else None, zeroline=True),
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )


def rotation_circles(
    q_xy: np.ndarray,
    k_xy: np.ndarray,
    title: str,
    *,
    panel_titles: Sequence[str],
    notes: np.ndarray,
    frame_titles: Sequence[str],
    frame_labels: Sequence[str],
    q_name: str | None = None,  # default "query"
    k_name: str | None = None,  # default "key"
    slider_prefix: str = "",
    cols: int = 4,
    frame_ms: int = 160,
    panel_height: int = 300,
) -> go.Figure:
    """RoPE's rotation circles: one circle per 2-D pair (q_xy, k_xy: (frames, pairs, 2)), the query
    pair as a blue arrow and the key pair as a vermillion one, a grey arc for the angle between
    them, and a note under each circle (notes: (frames, pairs) strings). Frames animate with a
    Play/Pause button and a slider (short frame_labels, shown after slider_prefix); the second title
    line (frame_titles) changes with the frame, after the colour key for q and k.

    All circles share one pair of axes (circle p centred on a grid), so a frame updates four traces
    whatever the number of pairs: fast to build, light to animate. Each circle is scaled so the
    longer of its two arrows touches the rim (rotation keeps lengths, so the scale is the same in
    every frame); hover on an arrow tip gives the true coordinates. All text is escaped.
    """
    q_name = _t("figures.query") if q_name is None else q_name
    k_name = _t("figures.key") if k_name is None else k_name
    q_xy, k_xy = np.asarray(q_xy, dtype=float), np.asarray(k_xy, dtype=float)
    n_frames, n_pairs, _ = q_xy.shape
    cols = max(1, min(cols, n_pairs))
    rows = int(np.ceil(n_pairs / cols))
    step_x, step_y = 2.9, 3.3  # grid spacing in circle radii: room for a title above and a note below
    cx = (np.arange(n_pairs) % cols) * step_x  # (pairs,)
    cy = -(np.arange(n_pairs) // cols) * step_y
    radius = np.maximum(np.linalg.norm(q_xy[0], axis=-1), np.linalg.norm(k_xy[0], axis=-1))  # (pairs,)
    radius = np.where(radius > 0, radius, 1.0)
    q_color, k_color, arc_color = LINES[0], LINES[1], "#555555"
    key_line = (
        f"<span style='color:{q_color}'>━▶ {_escape(q_name)}</span>   "
        f"<span style='color:{k_color}'>━▶ {_escape(k_name)}</span>   "
    )

    def heading(t):  # the fixed title; under it the colour key and what this frame shows
        return (
            f"<b>{_escape(title)}</b><br><span style='font-size:15px;font-weight:normal'>{key_line}"
            f"{_escape(frame_titles[t])}</span>"
        )

    def gaps(parts):  # segments joined into one float array, separated by NaN (a gap in the line)
        return np.concatenate([np.append(np.asarray(seg, dtype=float), np.nan) for seg in parts])

    def arrows(xy, color, name):  # (pairs, 2) → one trace of origin→tip segments
        tips = xy / radius[:, None]
        xs = gaps([[cx[p], cx[p] + tips[p, 0]] for p in range(n_pairs)])
        ys = gaps([[cy[p], cy[p] + tips[p, 1]] for p in range(n_pairs)])
        hover = [
            h
            for p in range(n_pairs)
            for h in ("", f"{_escape(name)} · {_t('figures.pair', p=p)}: ({xy[p, 0]:.3f}, {xy[p, 1]:.3f})", "")
        ]
        return dict(
            type="scatter",
            x=xs,
            y=ys,
            mode="lines+markers",
            showlegend=False,
            line=dict(color=color, width=5),
            marker=dict(
                symbol=np.array(["circle", "arrow", "circle"] * n_pairs),
                size=np.tile([7, 20, 0], n_pairs),
                angleref="previous",
                color=color,
            ),
            text=hover,
            hovertemplate="%{text}<extra></extra>",
        )

    def arcs(q, k):  # the shortest way round from the query arrow to the key arrow, radius 0.36
        parts_x, parts_y = [], []
        for p in range(n_pairs):
            a0 = np.arctan2(q[p, 1], q[p, 0])
            delta = (np.arctan2(k[p, 1], k[p, 0]) - a0 + np.pi) % (2 * np.pi) - np.pi
            t = a0 + np.linspace(0.0, delta, 30)
            parts_x.append(cx[p] + 0.36 * np.cos(t))
            parts_y.append(cy[p] + 0.36 * np.sin(t))
        return dict(
            type="scatter",
            x=gaps(parts_x),
            y=gaps(parts_y),
            mode="lines",
            line=dict(color=arc_color, width=3),
            hoverinfo="skip",
            showlegend=False,
        )

    def texts(ys, labels, size, color):
        return dict(
            type="scatter",
            x=cx,
            y=np.asarray(ys, dtype=float),
            mode="text",
            text=[_escape(str(v)) for v in labels],
            textposition="middle center",
            textfont=dict(size=size, color=color),
            hoverinfo="skip",
            showlegend=False,
        )

    def frame_traces(t):
        return [
            arcs(q_xy[t], k_xy[t]),
            arrows(q_xy[t], q_color, q_name),
            arrows(k_xy[t], k_color, k_name),
            texts(cy - 1.36, notes[t], 16, "#222222"),
        ]

    ring = np.linspace(0, 2 * np.pi, 121)
    static = [
        dict(
            type="scatter",
            x=gaps([cx[p] + np.cos(ring) for p in range(n_pairs)]),
            y=gaps([cy[p] + np.sin(ring) for p in range(n_pairs)]),
            mode="lines",
            line=dict(color="#c8c8c8", width=2),
            hoverinfo="skip",
            showlegend=False,
        ),
        texts(cy + 1.3, panel_titles, 15, "#333333"),
    ]
    animated = list(range(len(static), len(static) + 4))  # the traces frames replace
    still = {"frame": {"duration": 0, "redraw": True}, "mode": "immediate", "transition": {"duration": 0}}
    axis = dict(visible=False, fixedrange=True)
    layout = dict(
        xaxis=dict(range=[-1.45, (cols - 1) * step_x + 1.45], **axis),
        yaxis=dict(range=[-(rows - 1) * step_y - 1.7, 1.55], scaleanchor="x", scaleratio=1, **axis),
        updatemenus=[
            dict(
                type="buttons",
                direction="left",
                x=0,
                y=0,
                xanchor="left",
                yanchor="top",
                pad=dict(t=10, r=10),
                showactive=False,
                font=dict(size=15),
                buttons=[
                    dict(
                        label=_t("figures.play"),
                        method="animate",
                        args=[
                            None,
                            {
                                "frame": {"duration": frame_ms, "redraw": True},
                                "fromcurrent": True,
                                "transition": {"duration": 0},
                                "mode": "immediate",
                            },
                        ],
                    ),
                    dict(label=_t("figures.pause"), method="animate", args=[[None], still]),
                ],
            )
        ],
        sliders=[
            dict(
                active=0,
                x=0.2,
                len=0.8,
                y=0,
                yanchor="top",
                pad=dict(t=10),
                currentvalue=dict(prefix=_escape(slider_prefix), font=dict(size=15)),
                font=dict(size=11),
                steps=[
                    dict(label=_escape(frame_labels[t]), method="animate", args=[[str(t)], still])
                    for t in range(n_frames)
                ],
            )
        ]
        if n_frames > 1
        else [],
    )
    # The whole title object in every frame: an animated layout replaces it, so a bare text would
    # lose its font and place.
    frames = [
        dict(
            data=frame_traces(t),
            traces=animated,
            name=str(t),
            layout=dict(title=dict(text=heading(t), x=0, xanchor="left", font=dict(size=15))),
        )
        for t in range(n_frames)
    ]
    # Built from plain dicts without validation: the frames hold thousands of points, and checking
    # each trace again costs seconds; every key above is a standard plotly attribute
    # (tests/test_rope.py rebuilds the figure with full validation and compares).
    fig = _figure(
        static + frame_traces(0),
        heading(0),
        rows * panel_height + 160,
        _validate=False,
        **layout,
        margin=dict(l=10, r=10, t=100, b=100),
    )
    # go.Figure(frames=…) validates every frame even with _validate=False (its frames validator
    # copies each Frame through the validating constructor): ~150 ms for 41 frames, a third of the
    # RoPE page's rerun. Frames made unvalidated and attached directly cost ~20 ms. _frame_objs is
    # where plotly's own constructor keeps them (plotly is pinned in requirements.txt).
    fig._frame_objs = [go.Frame(**_typed_arrays(f), _validate=False) for f in frames]
    return fig


# plotly.js typed-array names of the numpy dtypes plotly's JSON encoder sends as binary.
_TYPED = {
    "int8": "i1",
    "uint8": "u1",
    "int16": "i2",
    "uint16": "u2",
    "int32": "i4",
    "uint32": "u4",
    "float32": "f4",
    "float64": "f8",
}


def _typed_arrays(obj):
    """Every numpy array in `obj` (nested dicts and lists) as plotly's JSON encoder would send it,
    made ahead of time: a typed-array spec {"dtype", "bdata"} for numbers (int64 narrowed as plotly
    narrows it), a list for anything else. The encoder's own conversion first passes every array
    through narwhals, ~50 µs each; an animation's frames hold ~800 small arrays, a quarter of the
    RoPE page's rerun. The JSON a browser gets is byte-for-byte the same (tools/figure_snapshots.py)."""
    if isinstance(obj, dict):
        return {k: _typed_arrays(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_typed_arrays(v) for v in obj]
    if not isinstance(obj, np.ndarray):
        return obj
    v = obj
    if v.dtype == np.int64 and v.size:
        lo, hi = int(v.min()), int(v.max())
        v = next(
            (
                v.astype(t)
                for t, (a, b) in (("int8", (-128, 127)), ("int16", (-32768, 32767)), ("int32", (-(2**31), 2**31 - 1)))
                if a <= lo and hi <= b
            ),
            v,
        )
    kind = _TYPED.get(str(v.dtype))
    if kind is None or v.size == 0:
        return v.tolist()
    spec = {"dtype": kind, "bdata": base64.b64encode(np.ascontiguousarray(v)).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = str(v.shape)[1:-1]
    return spec


def labelled_grid(
    z: np.ndarray,
    labels: Sequence[Sequence[str]],
    title: str,
    *,
    x_title: str,
    y_title: str,
    value_label: str | None = None,  # default "value"
    veil: np.ndarray | None = None,
    x_ticks: Sequence[str] | None = None,
    y_ticks: Sequence[str] | None = None,
    zmin: float | None = None,
    zmax: float | None = None,
    height: int | None = None,
) -> go.Figure:
    """A small matrix with a label written in every cell (e.g. the rel-shift trick's "q2·R3"),
    coloured by z (INDEX; NaN cells stay white, e.g. a zero pad). Cells where `veil` is True get a
    translucent grey veil and a "✗" before their label (e.g. garbage that must be masked). Meant for
    a few dozen cells; labels are escaped, but pass program-made labels, not typed text."""
    value_label = _t("figures.value") if value_label is None else value_label
    z = np.asarray(z, dtype=float)
    n_rows, n_cols = z.shape
    text = np.asarray([[_escape(str(s)) for s in row] for row in labels], dtype=object)
    veiled = np.zeros(z.shape, dtype=bool) if veil is None else np.asarray(veil, dtype=bool)
    finite = z[np.isfinite(z)]
    lo = float(finite.min()) if zmin is None and finite.size else (zmin if zmin is not None else 0.0)
    hi = float(finite.max()) if zmax is None and finite.size else (zmax if zmax is not None else 1.0)
    hi = hi if hi > lo else lo + 1.0
    traces = [
        dict(
            type="heatmap",
            z=z,
            x=list(range(n_cols)),
            y=list(range(n_rows)),
            colorscale=INDEX,
            zmin=lo,
            zmax=hi,
            xgap=2,
            ygap=2,
            customdata=text,
            hovertemplate=(
                f"{y_title}: %{{y}}<br>{x_title}: %{{x}}<br>{_t('figures.cell')}: %{{customdata}}"
                f"<br>{value_label}: %{{z}}<extra></extra>"
            ),
            hoverongaps=False,
            colorbar=dict(title=dict(text=value_label, side="right"), thickness=12),
        )
    ]
    if veiled.any():
        grey = "rgba(60, 60, 60, 0.55)"
        traces.append(
            dict(
                type="heatmap",
                z=np.where(veiled, 1.0, np.nan),
                x=list(range(n_cols)),
                y=list(range(n_rows)),
                colorscale=[[0, grey], [1, grey]],
                zmin=0,
                zmax=1,
                showscale=False,
                xgap=2,
                ygap=2,
                hoverinfo="skip",
                hoverongaps=False,
            )
        )
    rr, cc = np.meshgrid(np.arange(n_rows), np.arange(n_cols), indexing="ij")
    shade = np.where(np.isfinite(z), (np.nan_to_num(z) - lo) / (hi - lo), 1.0)
    colors = np.where(veiled | (shade < 0.5), "white", "black")
    shown = np.where(veiled, "✗ " + text.astype(str), text.astype(str))
    traces.append(
        dict(
            type="scatter",
            x=cc.ravel(),
            y=rr.ravel(),
            mode="text",
            text=list(shown.ravel()),
            textfont=dict(color=list(colors.ravel()), size=12 if n_cols <= 6 else 10),
            hoverinfo="skip",
            showlegend=False,
        )
    )
    xt = dict(tickmode="array", tickvals=list(range(n_cols)), ticktext=[_escape(t) for t in x_ticks]) if x_ticks else {}
    yt = dict(tickmode="array", tickvals=list(range(n_rows)), ticktext=[_escape(t) for t in y_ticks]) if y_ticks else {}
    return _figure(
        traces,
        title,
        height or int(min(600, 190 + 52 * n_rows)),
        xaxis=dict(title=x_title, showgrid=False, zeroline=False, **xt),
        yaxis=dict(title=y_title, autorange="reversed", showgrid=False, zeroline=False, **yt),
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
                line=dict(color=LINES[k % len(LINES)], width=2, shape="hvh"),
                hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y:.4g}}<extra>{_escape(name)}</extra>",
            )
        )
    return _figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=x_title, zeroline=True),
        yaxis=dict(title=y_title, zeroline=True),
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )


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
) -> go.Figure:
    """token_map with a colour range the caller may fix (the attention lab shares one signed range
    across its panels, so "bigger" means the same in every encoding): token_heatmap up to 64 tokens,
    one categorical panel of token_heatmap_grid beyond. max_ticks: token labels per axis at most
    (fewer for a map drawn in half a page's width, where 40 rotated labels run into each other)."""
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
        x=[_escape(s) for s in labels],
        y=shown,
        marker_color=colors,
        text=list(text) if text is not None else [f"{v:.2g}" for v in values],
        textposition="outside",
        cliponaxis=False,
        customdata=values,
        hovertemplate=f"%{{x}}<br>{y_title}: %{{customdata:.3g}}<extra></extra>",
    )
    return _figure(
        [bar],
        title,
        height,
        xaxis=dict(tickangle=0 if len(labels) <= 4 else -30, automargin=True),
        # Powers of ten, not SI prefixes: "1f" and "1µ" mean nothing to a learner reading a weight.
        yaxis=dict(title=y_title, type="log" if log_y else None, exponentformat="power"),
    )


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
        r = _signed_range(zs, zmax)
        zmin, zmax = -r, r
    else:
        zmin, zmax = 0.0, (1.0 if zmax is None else zmax)
    h_gap, v_gap = (0.06 if cols > 1 else 0.0), (min(0.16, 0.6 / rows) if rows > 1 else 0.0)
    width, height = (1 - h_gap * (cols - 1)) / cols, (1 - v_gap * (rows - 1)) / rows
    traces, layout, notes = [], {}, []
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
        notes.append(
            dict(
                text=_escape(panel_titles[p]),
                x=x0 + width / 2,
                y=y1,
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=12),
            )
        )
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
                    f"{_escape(panel_titles[p])}<br>{_t('figures.layer_head_hover')}"
                    f"<br>{value_label}: %{{z:.3f}}<extra></extra>"
                ),
            )
        )
    layout["coloraxis"] = dict(
        colorscale=scale, cmin=zmin, cmax=zmax, colorbar=dict(title=dict(text=value_label, side="right"), thickness=12)
    )
    layout["annotations"] = notes
    return _figure(traces, title, rows * panel_height + 90, **layout)


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
    query and key positions and the weight."""
    w = np.asarray(weights, dtype=np.float32)
    n_layers, n_heads, n, _ = w.shape
    marks = marks or {}
    h_gap, v_gap = 0.012, 0.045 if n_layers > 1 else 0.0
    width, height = (1 - h_gap * (n_heads - 1)) / n_heads, (1 - v_gap * (n_layers - 1)) / n_layers
    idx = list(range(n))
    traces, layout, notes = [], {}, []
    for layer in range(n_layers):
        for head in range(n_heads):
            p = layer * n_heads + head
            suffix = "" if p == 0 else str(p + 1)
            x0, y1 = head * (width + h_gap), 1 - layer * (height + v_gap)
            layout[f"xaxis{suffix}"] = dict(
                domain=[x0, min(1.0, x0 + width)],
                anchor=f"y{suffix}",
                showticklabels=False,
                showgrid=False,
                zeroline=False,
                ticks="",
                constrain="domain",
            )
            layout[f"yaxis{suffix}"] = dict(
                domain=[max(0.0, y1 - height), y1],
                anchor=f"x{suffix}",
                showticklabels=False,
                showgrid=False,
                zeroline=False,
                ticks="",
                autorange="reversed",
            )
            label = marks.get((layer, head), "")
            traces.append(
                dict(
                    type="heatmap",
                    z=w[layer, head],
                    x=idx,
                    y=idx,
                    xaxis=f"x{suffix}",
                    yaxis=f"y{suffix}",
                    coloraxis="coloraxis",
                    hovertemplate=(
                        f"{_t('figures.layer_head', layer=layer + 1, head=head + 1)}"
                        f"<br>{_t('figures.query_i')}: %{{y}}<br>{_t('figures.key_j')}: %{{x}}"
                        f"<br>{_t('figures.weight')}: %{{z:.3f}}<extra></extra>"
                    ),
                )
            )
            if label:
                notes.append(
                    dict(
                        text=_escape(label),
                        x=x0 + width / 2,
                        y=y1,
                        xref="paper",
                        yref="paper",
                        xanchor="center",
                        yanchor="bottom",
                        showarrow=False,
                        font=dict(size=10, color=LINES[1]),
                    )
                )
        notes.append(
            dict(
                text=f"L{layer + 1}",
                x=-0.005,
                y=1 - layer * (height + v_gap) - height / 2,
                xref="paper",
                yref="paper",
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
                x=head * (width + h_gap) + width / 2,
                y=0,
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="top",
                yshift=-4,
                showarrow=False,
                font=dict(size=11),
            )
        )
    layout["coloraxis"] = dict(
        colorscale=WEIGHTS,
        cmin=0.0,
        cmax=1.0,
        colorbar=dict(title=dict(text=_t("figures.weight"), side="right"), thickness=12),
    )
    layout["annotations"] = notes
    return _figure(traces, title, n_layers * panel_height + 110, **layout, margin=dict(l=40, r=10, t=60, b=30))


# --- Spline-based Transformers ------------------------------------------------------------------------


def spline_basis(
    t: np.ndarray,
    N: np.ndarray,
    knots: np.ndarray,
    domain: tuple[float, float],
    title: str,
    *,
    height: int = 380,
) -> go.Figure:
    """B-spline basis functions N_i(t) (one Okabe–Ito line each), their sum (dashed black), the
    knots as dotted verticals and the valid domain (where the sum is 1) shaded."""
    traces = []
    shapes = [_vrect(domain[0], domain[1], fillcolor="rgba(0,0,0,0.05)", line=dict(width=0))]
    notes = [_vrect_note(domain[0], domain[1], "bottom_left", text=_t("figures.domain"), font=dict(size=11))]
    for k in np.unique(knots):
        count = int(np.sum(knots == k))
        shapes.append(_vline(float(k), dict(color="rgba(0,0,0,0.35)", width=1, dash="dot")))
        if count > 1:
            notes.append(dict(x=float(k), y=1.08, text=f"×{count}", showarrow=False, font=dict(size=11)))
    for i in range(N.shape[1]):
        traces.append(
            dict(
                type="scatter",
                x=t,
                y=N[:, i],
                mode="lines",
                name=f"N{i}",
                line=dict(color=LINES[i % (len(LINES) - 1)], width=2),
                hovertemplate=f"t: %{{x:.3f}}<br>N{i}(t): %{{y:.4f}}<extra></extra>",
            )
        )
    traces.append(
        dict(
            type="scatter",
            x=t,
            y=N.sum(axis=1),
            mode="lines",
            name="Σ N_i",
            line=dict(color=LINES[7], width=2, dash="dash"),
            hovertemplate=f"t: %{{x:.3f}}<br>{_t('figures.sum')}: %{{y:.4f}}<extra></extra>",
        )
    )
    return _figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=_t("figures.spline.parameter")),
        yaxis=dict(title="N_i(t)", range=[-0.05, 1.15]),
        shapes=shapes,
        annotations=notes,
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )


def curve_edit(
    before: np.ndarray,
    after: np.ndarray,
    changed: np.ndarray,
    title: str,
    *,
    ctrl_before: np.ndarray | None = None,
    ctrl_after: np.ndarray | None = None,
    reference: np.ndarray | None = None,
    names: tuple[str, str, str] | None = None,  # default ("before", "after", "changed stretch")
    markers: bool = False,
    height: int = 420,
) -> go.Figure:
    """A 2-D curve before (grey) and after (blue) an edit, the stretch that changed drawn thick in
    orange; optional control polygons before (grey, dashed) and after (numbered), and an optional
    reference curve (black dotted, e.g. the input a model should reproduce). Equal axis scales."""
    if names is None:
        names = (_t("figures.spline.before"), _t("figures.spline.after"), _t("figures.spline.changed_stretch"))
    traces = []
    mode = "lines+markers" if markers else "lines"
    if reference is not None:
        traces.append(
            dict(
                type="scatter",
                x=reference[:, 0],
                y=reference[:, 1],
                mode="lines+markers",
                name=_t("figures.spline.input"),
                line=dict(color=LINES[7], width=1, dash="dot"),
                marker=dict(size=4, color=LINES[7]),
                hovertemplate=(
                    f"{_t('figures.spline.input')} %{{customdata}}<br>x: %{{x:.3f}}<br>y: %{{y:.3f}}<extra></extra>"
                ),
                customdata=np.arange(len(reference)),
            )
        )
    if ctrl_before is not None:
        traces.append(
            dict(
                type="scatter",
                x=ctrl_before[:, 0],
                y=ctrl_before[:, 1],
                mode="lines+markers",
                name=_t("figures.control_points_before"),
                line=dict(color="rgba(120,120,120,0.6)", dash="dash"),
                marker=dict(size=8, symbol="square-open", color="rgba(120,120,120,0.9)"),
                hovertemplate=(
                    _t("figures.spline.point_before", k="%{customdata}") + "<br>(%{x:.3f}, %{y:.3f})<extra></extra>"
                ),
                customdata=np.arange(len(ctrl_before)),
            )
        )
    if ctrl_after is not None:
        traces.append(
            dict(
                type="scatter",
                x=ctrl_after[:, 0],
                y=ctrl_after[:, 1],
                mode="lines+markers+text",
                name=_t("figures.control_points"),
                line=dict(color=LINES[2], width=1, dash="dash"),
                marker=dict(size=10, color=LINES[2]),
                text=[f"P{i}" for i in range(len(ctrl_after))],
                textposition="top center",
                hovertemplate="%{text}<br>(%{x:.3f}, %{y:.3f})<extra></extra>",
            )
        )
    idx = np.arange(len(before))
    traces.append(
        dict(
            type="scatter",
            x=before[:, 0],
            y=before[:, 1],
            mode=mode,
            name=names[0],
            line=dict(color="rgba(120,120,120,0.8)", width=2),
            marker=dict(size=5),
            customdata=idx,
            hovertemplate="%{customdata}<br>x: %{x:.3f}<br>y: %{y:.3f}<extra></extra>",
        )
    )
    traces.append(
        dict(
            type="scatter",
            x=after[:, 0],
            y=after[:, 1],
            mode=mode,
            name=names[1],
            line=dict(color=LINES[0], width=2),
            marker=dict(size=5),
            customdata=idx,
            hovertemplate="%{customdata}<br>x: %{x:.3f}<br>y: %{y:.3f}<extra></extra>",
        )
    )
    hot = np.where(np.asarray(changed, dtype=bool)[:, None], after, np.nan)  # gaps where nothing changed
    traces.append(
        dict(
            type="scatter",
            x=hot[:, 0],
            y=hot[:, 1],
            mode=mode,
            name=names[2],
            line=dict(color=LINES[1], width=6),
            marker=dict(size=7, color=LINES[1]),
            opacity=0.75,
            connectgaps=False,
            customdata=idx,
            hovertemplate=(
                _t("figures.spline.changed", name="%{customdata}") + "<br>x: %{x:.3f}<br>y: %{y:.3f}<extra></extra>"
            ),
        )
    )
    return _figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title="x", zeroline=False),
        yaxis=dict(title="y", zeroline=False, scaleanchor="x", scaleratio=1),
        legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0),
    )


def latent_trajectory(
    traj: np.ndarray,
    ctrl: np.ndarray,
    title: str,
    *,
    t: np.ndarray | None = None,
    traj_after: np.ndarray | None = None,
    ctrl_after: np.ndarray | None = None,
    moved: int | None = None,
    axis_titles: tuple[str, str] = ("PC 1", "PC 2"),
    height: int = 440,
) -> go.Figure:
    """A latent trajectory projected to 2-D: samples coloured by sequence position (cividis), the
    control polygon with numbered points; optionally the edited trajectory (orange) and moved point."""
    n = len(traj)
    traces = []
    traces.append(
        dict(
            type="scatter",
            x=ctrl[:, 0],
            y=ctrl[:, 1],
            mode="lines+markers+text",
            name=_t("figures.control_points"),
            line=dict(color=LINES[2], width=1, dash="dash"),
            marker=dict(size=11, color=LINES[2]),
            text=[f"P{i}" for i in range(len(ctrl))],
            textposition="top center",
            hovertemplate="%{text}<br>PC 1: %{x:.3f}<br>PC 2: %{y:.3f}<extra></extra>",
        )
    )
    hover = (
        _t("figures.position")
        + " %{customdata[0]}<br>t = %{customdata[1]:.3f}<br>PC 1: %{x:.3f}<br>PC 2: %{y:.3f}<extra></extra>"
    )
    tt = np.linspace(0, 1, n) if t is None else np.asarray(t)
    if traj_after is not None:  # drawn before the original, so under it: visible only where it moved away
        traces.append(
            dict(
                type="scatter",
                x=traj_after[:, 0],
                y=traj_after[:, 1],
                mode="lines+markers",
                name=_t("figures.after_edit"),
                line=dict(color=LINES[1], width=3),
                marker=dict(size=5, color=LINES[1]),
                opacity=0.8,
                customdata=np.stack([np.arange(n), tt], axis=1),
                hovertemplate=hover,
            )
        )
    traces.append(
        dict(
            type="scatter",
            x=traj[:, 0],
            y=traj[:, 1],
            mode="lines+markers",
            name=_t("figures.trajectory"),
            line=dict(color="rgba(120,120,120,0.6)", width=1),
            marker=dict(
                color=np.arange(n),
                colorscale=INDEX,
                size=7,
                showscale=True,
                colorbar=dict(title=dict(text=_t("figures.position_j"), side="right"), thickness=12),
            ),
            customdata=np.stack([np.arange(n), tt], axis=1),
            hovertemplate=hover,
        )
    )
    if ctrl_after is not None and moved is not None:
        traces.append(
            dict(
                type="scatter",
                x=[ctrl[moved, 0], ctrl_after[moved, 0]],
                y=[ctrl[moved, 1], ctrl_after[moved, 1]],
                mode="lines+markers",
                name=_t("figures.moved", k=moved),
                line=dict(color=LINES[1], width=2, dash="dot"),
                marker=dict(size=[8, 14], color=LINES[1], symbol=["circle-open", "star"]),
                hovertemplate="PC 1: %{x:.3f}<br>PC 2: %{y:.3f}<extra></extra>",
            )
        )
    return _figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=axis_titles[0], zeroline=False),
        yaxis=dict(title=axis_titles[1], zeroline=False, scaleanchor="x", scaleratio=1),
        legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0),
    )


def curves_2d(
    curves: Mapping[str, np.ndarray],
    title: str,
    *,
    dotted: Sequence[str] = (),
    height: int = 420,
) -> go.Figure:
    """Several 2-D point sequences (n, 2) on equal axes, one Okabe–Ito colour each, the first point
    of each marked with a larger symbol so the drawing direction shows; `dotted` names are drawn as
    thin dotted references (e.g. the input), still in their own colour."""
    traces = []
    for k, (name, pts) in enumerate(curves.items()):
        pts = np.asarray(pts)
        ref = name in dotted
        color = LINES[k % (len(LINES) - 1)]
        sizes = np.full(len(pts), 4 if ref else 6)
        sizes[0] = 11
        traces.append(
            dict(
                type="scatter",
                x=pts[:, 0],
                y=pts[:, 1],
                mode="lines+markers",
                name=_escape(name),
                line=dict(color=color, width=1.5 if ref else 2, dash="dot" if ref else None),
                marker=dict(size=sizes, color=color),
                customdata=np.arange(len(pts)),
                hovertemplate=(
                    f"{_escape(name)}<br>{_t('figures.position')} %{{customdata}}<br>x: %{{x:.3f}}"
                    "<br>y: %{y:.3f}<extra></extra>"
                ),
            )
        )
    return _figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title="x", zeroline=False),
        yaxis=dict(title="y", zeroline=False, scaleanchor="x", scaleratio=1),
        legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0),
    )


def grouped_bars(
    categories: Sequence[str],
    series: Mapping[str, Sequence[float] | np.ndarray],
    title: str,
    *,
    x_title: str,
    y_title: str,
    counts: Sequence[int] | None = None,
    height: int = 380,
) -> go.Figure:
    """One bar per series in each category (error % per distance bin, one colour per encoding).
    NaN values draw no bar. `counts` (one per category) are shown in the hover and under the
    category name, so a bar over 3 examples is not read like one over 3,000."""
    cats = list(categories)
    ticks = [f"{_escape(c)}<br>(n={int(counts[k])})" if counts is not None else _escape(c) for k, c in enumerate(cats)]
    traces = []
    for k, (name, ys) in enumerate(series.items()):
        traces.append(
            dict(
                type="bar",
                x=list(range(len(cats))),
                y=np.asarray(ys, dtype=float),
                name=name,
                marker_color=LINES[k % len(LINES)],
                customdata=[_escape(c) for c in cats],
                hovertemplate=f"{x_title}: %{{customdata}}<br>{y_title}: %{{y:.3g}}<extra>{_escape(name)}</extra>",
            )
        )
    return _figure(
        traces,
        title,
        height + 60,
        xaxis=dict(title=x_title, tickmode="array", tickvals=list(range(len(cats))), ticktext=ticks),
        yaxis=dict(title=y_title, zeroline=True, rangemode="tozero"),
        barmode="group",
        legend=dict(orientation="h", yanchor="top", y=-0.3, xanchor="left", x=0),
    )
