"""The atlas's one look: colour scales, font, the lean plotly template, and the one way a figure is
made (make_figure), plus the small helpers every builder shares (token axes, escaping, wire dtype).

Colour rules (colour-blind safe, and legible on a classroom projector):
    SIGNED   diverging, centred on 0: blue negative, white zero, red positive (ColorBrewer RdBu)
    WEIGHTS  sequential for values in [0, 1] such as attention weights: white at 0, so the few
             strong weights stand out on a projector (ColorBrewer Blues)
    INDEX    sequential for counts and indices (cividis)
Token axes use integer positions with the words as tick text, so repeated words ("the … the") keep
their own rows; hover text always shows position, token and the exact number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas  # noqa: F401  (see below)
import plotly.graph_objects as go
import plotly.io as pio

from explain.i18n import t as _t

from .spec import AtlasFigure

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


# What a map draws at most per axis. A plot ~450 px high shows 128 cells at ~3.5 px each; 256 cells
# get under 2 px, which a screen cannot tell apart, yet a 256 × 256 map is 370 KB on the wire and a
# page at maximum sizes drew 5–14 of them (4 MB). Past the cap a map draws the mean of f × g blocks
# (screen_blocks), says so in its value label, and hover names each block and its exact mean.
SCREEN_CELLS = 128
# A grid of small maps shares a budget: all its panels draw at most FIGURE_CELLS cells (~90 KB as
# float32), as one full map does: each of 2 panels at most 90 × 90, of 8 at most 45 × 45, of 16 at
# most 32 × 32 — a panel of a 4-column grid (~200 px wide) then gets 4 px or more per cell.
FIGURE_CELLS = 16 * 1024


def panel_cells(n_panels: int) -> int:
    """Cells per axis one panel of a grid of n_panels draws at most."""
    return min(SCREEN_CELLS, int((FIGURE_CELLS / max(1, n_panels)) ** 0.5))


# The look is plotly_white's. But setting a template on a figure makes plotly copy and validate all
# of it, and plotly_white carries defaults for 24 kinds of trace: ~11 ms per figure, measured as a
# third of a whole page's rerun. So the atlas registers, once, a template with plotly_white's layout
# and the defaults of the three trace kinds it draws, as the default every new figure starts from.
# The template travels inside every figure sent: its defaults for map, polar, 3-D and ternary plots,
# which the atlas never draws, are left out (1 KB a figure, 10–14 figures a page).
_WHITE = pio.templates["plotly_white"]
_UNUSED_SUBPLOTS = ("geo", "polar", "scene", "ternary")


# ticklabeloverflow="allow": plotly's default on a numeric axis ("hide past div") measures every
# tick label's box after drawing it to hide the ones that stick out of the chart's div: ~50 ms of the
# ~1 s a page with 11 charts takes to redraw in Chromium. Automargin keeps every label inside the div
# (and margins.py sends the room up front), so there is nothing to hide.
pio.templates["pe_atlas"] = go.layout.Template(
    layout={
        k: {**v, "ticklabeloverflow": "allow"} if k in ("xaxis", "yaxis") else v
        for k, v in _WHITE.layout.to_plotly_json().items()
        if k not in _UNUSED_SUBPLOTS
    },
    data={kind: _WHITE.data[kind] for kind in ("heatmap", "scatter", "bar")},
)


pio.templates.default = "pe_atlas"


def make_figure(
    data: Any,
    title: str,
    height: int,
    *,
    _validate: bool = True,
    frames: list[dict[str, Any]] | None = None,
    **layout: Any,
) -> go.Figure:
    """The one way a figure is made here: traces and the whole layout (the shared look below, then
    the builder's own keys: xaxis=…, shapes=[…], a margin of its own…) given at once, as plain dicts
    (type="heatmap", …), and animation frames as plain dicts too. An AtlasFigure sends them without
    building plotly's objects at all (see there). A builder or page that adds to a figure changes
    its spec through spec.relayout (as mark_lines and presenter scaling do): every
    fig.update_layout / add_shape / add_vline goes through plotly's relayout machinery (batch_update,
    dispatch plans), 3–6 ms each, and builds the figure first."""
    # Streamlit's import sets plotly's default template to "streamlit", this module's import sets
    # "pe_atlas": whichever ran last would decide every figure's look. Re-asserting ours here (a
    # string compare, nearly free) makes a figure the same whatever the import order; copying the
    # template object into each layout instead would cost the validation the lean template avoids.
    if pio.templates.default != "pe_atlas":
        pio.templates.default = "pe_atlas"
    spec = dict(
        title=dict(text=title, x=0, xanchor="left", font=dict(size=15, color="#31333f", weight=600)),
        font=FONT,
        height=height,
        margin=dict(l=10, r=10, t=50, b=10),
        hoverlabel=dict(font=dict(family=FONT["family"])),
    )
    spec.update(layout)
    return AtlasFigure(data=data, layout=spec, frames=frames, _validate=_validate)


def colorbar(title: str) -> dict[str, Any]:
    """A map's colour bar: thin, titled on its right, and set a fixed 14 px right of the plot (x=1)
    instead of plotly's 2 % of the plot's width (x=1.02), so the margin it needs does not depend on
    how wide the learner's column is, and explain/figures/margins.py can give it in advance. Its
    labels are not measured to be hidden past the div (see the template's axes)."""
    return dict(title=dict(text=title, side="right"), thickness=12, x=1, xpad=14, ticklabeloverflow="allow")


def tick_positions(n: int, max_ticks: int = MAX_TICKS) -> list[int]:
    step = max(1, int(np.ceil(n / max_ticks)))
    return list(range(0, n, step))


def token_axis(tokens: Sequence[str], max_chars: int = 14, max_ticks: int = MAX_TICKS) -> dict[str, Any]:
    ticks = tick_positions(len(tokens), max_ticks)
    text = [escape(short(tokens[t], max_chars)) for t in ticks]
    return dict(tickmode="array", tickvals=ticks, ticktext=text, showgrid=False)


def short(token: str, max_chars: int) -> str:
    return token if len(token) <= max_chars else token[: max_chars - 1] + "…"


def axis_words(row_title: str | None, col_title: str | None, value_label: str | None) -> tuple[str, str, str]:
    """The default axis and value words of a token map, in the current language."""
    return (
        _t("figures.query_i") if row_title is None else row_title,
        _t("figures.key_j") if col_title is None else col_title,
        _t("figures.value") if value_label is None else value_label,
    )


def panel_title(text: str, x: float, y: float) -> dict[str, Any]:
    """The title of one small panel of a grid of maps: an annotation centred above the panel's top
    edge at (x, y) in paper coordinates (the grids of maps.py, MiniLM and the trained models)."""
    return dict(
        text=escape(text),
        x=x,
        y=y,
        xref="paper",
        yref="paper",
        xanchor="center",
        yanchor="bottom",
        showarrow=False,
        font=dict(size=12),
    )


def rgba(hex_color: str, alpha: float) -> str:
    """A "#rrggbb" colour at the given opacity (plotly's fill colours take rgba())."""
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def escape(token: str) -> str:
    """Hover text is rendered as HTML by plotly.js: a typed '<b>' must show as text, not markup."""
    return token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def wire(z: np.ndarray) -> np.ndarray:
    """What a heatmap sends to the browser: float32 (7 significant digits, more than any colour or
    6-digit hover shows) halves the payload of float64; a 512 × 512 map is 1 MB instead of 2."""
    return np.asarray(z, dtype=np.float32)


def screen_factor(n: int, max_cells: int) -> int:
    """How many cells of an axis of n one drawn cell stands for (1: drawn as is)."""
    return max(1, -(-n // max_cells))


def screen_blocks(z: np.ndarray, f: int, g: int, how: str = "mean") -> np.ndarray:
    """(rows, cols) → (⌈rows/f⌉, ⌈cols/g⌉) float32: each f × g block's mean, or its largest value
    (how="max": attention weights, whose few large values are the picture and whose mean over a
    block would fade a sharp diagonal to a third), blocks starting at 0 (a ragged last block takes
    the cells it has). NaN cells (causally masked) are left out; a block of NaN only (a masked
    corner) stays NaN, so it stays blank."""
    z = np.asarray(z, dtype=np.float64)
    if f == g == 1:
        return z.astype(np.float32)
    r, c = z.shape
    big_r, big_c = -(-r // f), -(-c // g)
    padded = np.full((big_r * f, big_c * g), np.nan)
    padded[:r, :c] = z
    blocks = padded.reshape(big_r, f, big_c, g)  # (rows / f, f, cols / g, g)
    seen = np.isfinite(blocks)
    counts: np.ndarray = seen.sum(axis=(1, 3))
    if how == "max":
        top: np.ndarray = np.where(seen, blocks, -np.inf).max(axis=(1, 3))
        return np.where(counts > 0, top, np.nan).astype(np.float32)
    sums: np.ndarray = np.where(seen, blocks, 0.0).sum(axis=(1, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        means: np.ndarray = (sums / counts).astype(np.float32)  # 0 / 0 → NaN: an all-masked block
    return means


def block_how(kind: str) -> str:
    """How a map of this kind draws a block: the largest weight (attention), else the mean."""
    return "max" if kind == "weights" else "mean"


def block_spans(n: int, f: int) -> list[tuple[int, int]]:
    """(first, last) cell of each block of f along an axis of n."""
    return [(a, min(n, a + f) - 1) for a in range(0, n, f)]


def block_centres(coords: Sequence[Any], f: int) -> list[float]:
    """The mean coordinate of each block of f along a numeric axis: cells keep their place on it."""
    x = np.asarray(coords, dtype=np.float64)
    return [float(x[a : b + 1].mean()) for a, b in block_spans(len(x), f)]


def block_name(first: int, last: int, labels: Sequence[str]) -> str:
    """A block of a category axis as hover names it: its positions and the token it starts with,
    "12–13 · the" (one cell: "12 · the"). Every panel's axes repeat every name: kept short."""
    if first == last:
        return f"{first} · {escape(labels[first])}"
    return f"{first}–{last} · {escape(short(labels[first], 12))}"


def block_label(value_label: str, f: int, g: int, how: str = "mean") -> str:
    """The value label of a map drawn in f × g blocks: says what a cell's colour and hover are."""
    return value_label if f == g == 1 else _t(f"figures.block_{how}", value=value_label, f=f, g=g)


def wire_values(v: Any) -> np.ndarray:
    """A line's or bar's values as sent: floats as float32 (drawn on a screen and hovered to at most
    6 digits, which float32's 7 keep), integers and anything else as they are."""
    a = np.asarray(v)
    return a.astype(np.float32) if a.dtype.kind == "f" else a


def signed_range(z: np.ndarray, zmax: float | None) -> float:
    if zmax is not None:
        return zmax
    finite = np.abs(z[np.isfinite(z)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


# Second channels beside colour (WCAG 1.4.1): the n-th series of a chart gets the n-th dash pattern
# (lines), marker symbol (where dashes already mean something else, e.g. a dotted prediction) or
# fill pattern (grouped bars).
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "triangle-down", "cross", "star", "pentagon", "hexagon")
PATTERNS = ("", "/", ".", "x", "\\", "+", "-", "|")
