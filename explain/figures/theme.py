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


def make_figure(data: Any, title: str, height: int, *, _validate: bool = True, **layout: Any) -> go.Figure:
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
        title=dict(text=title, x=0, xanchor="left", font=dict(size=15, color="#31333f", weight=600)),
        font=FONT,
        height=height,
        margin=dict(l=10, r=10, t=50, b=10),
        hoverlabel=dict(font=dict(family=FONT["family"])),
    )
    spec.update(layout)
    return go.Figure(data=data, layout=spec, _validate=_validate)


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


def escape(token: str) -> str:
    """Hover text is rendered as HTML by plotly.js: a typed '<b>' must show as text, not markup."""
    return token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def wire(z: np.ndarray) -> np.ndarray:
    """What a heatmap sends to the browser: float32 (7 significant digits, more than any colour or
    6-digit hover shows) halves the payload of float64; a 512 × 512 map is 1 MB instead of 2."""
    return np.asarray(z, dtype=np.float32)


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
