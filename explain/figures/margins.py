"""The margins a figure will need, estimated before it is sent, so the browser draws it once.

Every figure starts from the theme's thin margins (10 px) and lets plotly grow them to fit tick
labels, axis titles, legends and colour bars (the template's automargin). Plotly can only know
those sizes by drawing: it draws the whole figure, measures what sticks out, and, when the margins
changed, draws the whole figure again. That second draw was a third of plotly's time in the
browser, measured by drawing every default figure of every page in Chromium (153 figures: 9.0 s
as sent, 6.1 s with the final margins given up front).

So the margins are estimated here from what the figure will show: tick labels (the ticks given, the
categories, or the round numbers plotly will pick for the data's range), axis titles, the rows of a
legend below the plot and a colour bar's labels. Automargin stays on: where an estimate falls short
(a wider font, a narrower column than assumed) plotly grows the margin as before, and the picture is
the one it always was. An estimate that is too large leaves a few pixels of extra white space, which
tests/e2e/test_margins_browser.py bounds, chart by chart, against what plotly measures in Chromium.

Text widths come from a per-character table (em units), a little wider than the fonts the atlas asks
for (Inter, Noto Sans, Noto Sans CJK), so a shortfall is rare.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .labels import (
    SAFETY,
    finite_numbers,
    linear_labels,
    linear_ticks,
    log_labels,
    number_label,
    strings,
    text_lines,
    text_width,
)
from .spec import figure_parts, relayout

# Plotly's own constants (plotly.js 3, src/plots/cartesian/axes.js, src/constants/alignment.js).
CAP_SHIFT = 0.7  # an axis title with a standoff is this many font sizes deep

# What the estimate assumes (calibrated in Chromium against plotly's own margins).
STANDOFF = 15  # the template's axis title standoff
LABEL_GAP = {"l": 11.0, "b": 13.0}  # between the axis line and its tick labels, and a label's slack
LINE_HEIGHT = 1.25  # a tick label's height, in font sizes
ASSUMED_PLOT_WIDTH = 860  # px: a full-width chart's plot on a 1400 px wide screen (legends wrap at it)
HALF_PLOT_WIDTH = 390  # px: the plot of a chart in one of two columns on that screen (462 px wide)
COLORBAR_PLOT_WIDTH = 900  # px: a colour bar at x = 1.02 (plotly's default) sits 2 % of this right of the plot
LEGEND_ROW = 1.5  # a legend row's height, in font sizes …
LEGEND_PAD = 21  # … and what plotly adds to a legend's height (padding) when it pushes a margin
LEGEND_ITEM_EXTRA = 40  # px beside an item's text: its symbol (plotly's legend textGap)
LEGEND_ITEM_GAP = 5  # px between two items (plotly's legend itemGap)
X_LABEL_ROOM = 9  # px plotly keeps beside an x tick label that sticks out past the plot (measured)
PUSH_SLACK = 3  # px: 2 measured, and 1 for rounding
MAX_SIDE = 0.4 * ASSUMED_PLOT_WIDTH  # px: the most a side is given in advance
# A legend's rows follow from its items' widths, and one row too many wastes a whole row's height:
# there, widths are taken as measured, not on the safe side. The text table reads legend names 9 %
# wide on top of SAFETY (median over the 56 legends of the English pages, drawn in Chromium); with
# this scale and HALF_PLOT_WIDTH it gets 53 of those 56 legends' rows right, and none too few.
LEGEND_TEXT_SCALE = 1 / (SAFETY * 1.09)

# --- the axes of a figure ------------------------------------------------------------------------


def _axis_values(data: Sequence[dict[str, Any]], letter: str, ref: str) -> list[Any]:
    """Every coordinate the traces on axis `ref` ("x", "x2") put along it; plotly's autorange spans them."""
    out: list[Any] = []
    for trace in data:
        if (trace.get(f"{letter}axis") or letter) != ref:
            continue
        kind = trace.get("type", "scatter")
        if kind == "heatmap":
            shape = np.shape(trace.get("z", []))
            n = shape[1 if letter == "x" else 0] if len(shape) == 2 else 0
            coords = trace.get(letter)
            if coords is None:
                out.extend([-0.5, n - 0.5])
            else:
                out.append(list(coords) if not isinstance(coords, np.ndarray) else coords)
            continue
        coords = trace.get(letter)
        other = trace.get("y" if letter == "x" else "x")
        if coords is None:
            n = len(other) if other is not None else 0
            out.extend([0, max(n - 1, 0)])
        else:
            out.append(coords)
        if kind == "bar" and (trace.get("orientation", "v") == "v") == (letter == "y"):
            out.append([0])
    return out


def axis_labels(
    axis: dict[str, Any], data: Sequence[dict[str, Any]], letter: str, ref: str, length: float
) -> list[str]:
    """The tick labels an axis will show (as plotly will write them), or [] when it shows none."""
    if axis.get("showticklabels") is False or axis.get("visible") is False:
        return []
    if axis.get("ticktext") is not None:
        return strings(axis["ticktext"])
    texts: list[str] = []
    numbers: list[np.ndarray] = []
    for group in _axis_values(data, letter, ref):
        arr = group if isinstance(group, np.ndarray) else np.asarray(group, dtype=object).ravel()
        if arr.dtype.kind in "OUS" and any(isinstance(v, str) for v in arr.ravel()[:50]):
            texts.extend(str(v) for v in arr.ravel() if v is not None)
            continue
        nums = finite_numbers(arr)
        if nums is not None and nums.size:
            numbers.append(nums)
    if texts or axis.get("type") == "category":
        return texts if texts else [number_label(v, 1.0) for v in np.unique(np.concatenate(numbers or [np.zeros(0)]))]
    if axis.get("tickvals") is not None:
        nums = finite_numbers(axis["tickvals"])
        return [] if nums is None else [number_label(v, _step(nums)) for v in nums]
    power = axis.get("exponentformat") == "power"
    if axis.get("type") == "log":
        given = _given_range(axis)
        if given is not None:  # in powers of ten; past 10^±30 nothing is legible anyway
            lo, hi = given
            return log_labels(10 ** min(max(lo, -30), 30), 10 ** min(max(hi, -30), 30), power)
        if not numbers:
            return []
        positive = [n[n > 0] for n in numbers]
        lo = min((float(p.min()) for p in positive if p.size), default=1.0)
        return log_labels(lo, max(float(n.max()) for n in numbers), power)
    span = _linear_span(axis, numbers)
    return [] if span is None else linear_labels(*span, length, letter)


def _given_range(axis: dict[str, Any]) -> tuple[float, float] | None:
    rng = axis.get("range")
    if rng is not None and len(rng) == 2 and all(isinstance(r, (int, float)) for r in rng):
        lo, hi = sorted(float(r) for r in rng)
        return lo, hi
    return None


def _linear_span(axis: dict[str, Any], numbers: Sequence[np.ndarray]) -> tuple[float, float] | None:
    """The range a linear axis shows: its own, or the data's (lines get no padding in plotly)."""
    given = _given_range(axis)
    if given is not None:
        return given
    if not numbers:
        return None
    lo, hi = min(float(n.min()) for n in numbers), max(float(n.max()) for n in numbers)
    if axis.get("rangemode") == "tozero":
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return lo, hi


def _bare_line(trace: dict[str, Any]) -> bool:
    """A scatter trace drawn as a line only (plotly's default mode draws markers below 20 points)."""
    if trace.get("type", "scatter") != "scatter":
        return False
    mode = trace.get("mode") or ("lines" if np.size(trace.get("y", [])) >= 20 else "lines+markers")
    return "markers" not in mode and "text" not in mode


def x_label_overhang(
    axis: dict[str, Any], data: Sequence[dict[str, Any]], ref: str, length: float, font: float
) -> tuple[float, float]:
    """How far (px) an x axis's first and last auto tick labels stick out past the plot's left and
    right edges, plus the room plotly keeps beside them: a label centred on a tick at the axis's end
    pushes that side's margin. Only plain linear axes with auto ticks are modelled ((0, 0) otherwise)."""
    if (
        axis.get("showticklabels") is False
        or axis.get("visible") is False
        or axis.get("type") in ("log", "category", "date")
        or axis.get("ticktext") is not None
        or axis.get("tickvals") is not None
        or axis.get("tickangle")
    ):
        return 0.0, 0.0
    if _given_range(axis) is None and not all(_bare_line(t) for t in data if (t.get("xaxis") or "x") == ref):
        return 0.0, 0.0  # markers, bars and heatmap cells pad the range by an amount not modelled
    numbers: list[np.ndarray] = []
    for group in _axis_values(data, "x", ref):
        nums = finite_numbers(group if isinstance(group, np.ndarray) else np.asarray(group, dtype=object).ravel())
        if nums is None:
            return 0.0, 0.0  # words on the axis: a category axis
        if nums.size:
            numbers.append(nums)
    span = _linear_span(axis, numbers)
    if span is None or not span[1] > span[0]:
        return 0.0, 0.0
    lo, hi = span
    ticks = linear_ticks(lo, hi, length, "x")
    if not ticks:
        return 0.0, 0.0
    size = _size(axis.get("tickfont"), font)

    def over(value: float, label: str, edge: float) -> float:
        return max(0.0, text_width(label, size) / 2 - abs(edge - value) / (hi - lo) * length)

    (first, first_label), (last, last_label) = ticks[0], ticks[-1]
    left, right = over(first, first_label, lo), over(last, last_label, hi)
    return (left + X_LABEL_ROOM if left else 0.0), (right + X_LABEL_ROOM if right else 0.0)


def _step(nums: np.ndarray) -> float:
    d = np.diff(np.unique(nums))
    return float(d.min()) if d.size else 1.0


def _title_text(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj.get("text") or "")
    return str(obj or "")


def _size(font: Any, default: float) -> float:
    return float(font.get("size") or default) if isinstance(font, dict) else default


# --- the estimate -----------------------------------------------------------------------------------


def _axis_name(ref: str) -> str:
    return ref[0] + "axis" + ref[1:]  # "x2" → "xaxis2"


def _axis_title(axis: dict[str, Any], font: float) -> float:
    """How deep an axis title reaches beyond its tick labels (0 without a title)."""
    title = axis.get("title")
    text = _title_text(title)
    if not text:
        return 0.0
    size = _size(title.get("font") if isinstance(title, dict) else None, font)
    return size * (CAP_SHIFT + 0.6 * (text_lines(text) - 1)) + STANDOFF


def _x_label_depth(axis: dict[str, Any], labels: list[str], font: float) -> float:
    """How far an x axis's tick labels reach below the plot (rotated labels reach further)."""
    if not labels:
        return 0.0
    size = _size(axis.get("tickfont"), font)
    angle = math.radians(abs(float(axis.get("tickangle") or 0)))
    widest = max(text_width(s, size) for s in labels)
    return widest * math.sin(angle) + size * LINE_HEIGHT * math.cos(angle) + LABEL_GAP["b"] + 3 * (angle > 0)


def _y_label_depth(axis: dict[str, Any], labels: list[str], font: float) -> float:
    """How far a y axis's tick labels reach left of the plot."""
    if not labels:
        return 0.0
    return max(text_width(s, _size(axis.get("tickfont"), font)) for s in labels) + LABEL_GAP["l"]


def estimate_margins(
    data: Sequence[dict[str, Any]], layout: dict[str, Any], plot_width: float = ASSUMED_PLOT_WIDTH
) -> dict[str, int] | None:
    """The left, right and bottom margins (px) plotly's automargin will settle on, or None for a
    figure this does not model (traces other than scatter, bar and heatmap; axes on the other side
    or placed freely; a legend beside the plot; a colour bar for markers; sliders and buttons): those
    keep their margins and plotly's second draw. Subplot grids are modelled: only the axes on the
    paper's left and bottom edges push a margin. plot_width: the plot's width the figure will be
    drawn at (its x axes' auto ticks and its legend's rows depend on it)."""
    if (
        any((t.get("marker") or {}).get("showscale") for t in data)
        or layout.get("sliders")
        or layout.get("updatemenus")
    ):
        return None
    if not {t.get("type", "scatter") for t in data} <= {"scatter", "bar", "heatmap"}:
        return None
    refs = {("x", "x"), ("y", "y")} | {(ax[0], t.get(ax, ax[0])) for t in data for ax in ("xaxis", "yaxis")}
    refs |= {(k[0], k[0] + k[5:]) for k in layout if re.fullmatch(r"[xy]axis\d*", k)}
    axes = {ref: dict(layout.get(_axis_name(ref)) or {}) for _, ref in refs}
    for letter, ref in refs:
        axis = axes[ref]
        anchor = axis.get("anchor", "y" if letter == "x" else "x")
        if anchor == "free" or "position" in axis or axis.get("overlaying"):
            return None
        if axis.get("side") not in (None, "bottom" if letter == "x" else "left"):
            return None
    font = _size(layout.get("font"), 12)
    margin = dict(layout.get("margin") or {})
    height = float(layout.get("height") or 450)
    t = float(margin.get("t", 100))
    guess = {"l": float(margin.get("l", 80)), "r": float(margin.get("r", 80)), "b": float(margin.get("b", 80))}

    def domain(ref: str) -> tuple[float, float]:
        d = axes.get(ref, {}).get("domain") or (0.0, 1.0)
        return float(d[0]), float(d[1])

    def at_edge(letter: str, ref: str) -> bool:
        # An x axis sits at the bottom of its anchor's domain: on the paper's edge when that starts at 0.
        anchor = axes[ref].get("anchor", "y" if letter == "x" else "x")
        return domain(anchor)[0] <= 1e-6

    def on_edge(letter: str) -> Iterator[tuple[str, dict[str, Any], float]]:
        """The axes of one letter on the paper's bottom (x) or left (y) edge: ref, axis, share of the paper."""
        for axis_letter, ref in refs:
            if axis_letter == letter and at_edge(letter, ref):
                lo, hi = domain(ref)
                yield ref, axes[ref], hi - lo

    # Bottom: the tick labels and titles of the x axes along the bottom edge, a legend below.
    bottom = max(
        (
            _x_label_depth(x, axis_labels(x, data, "x", ref, share * plot_width), font) + _axis_title(x, font)
            for ref, x, share in on_edge("x")
        ),
        default=0.0,
    )
    legend = legend_below(data, layout, font, height, t, plot_width)
    if legend is not None:
        bottom = max(bottom, legend)
    elif _shows_legend(data, layout):
        return None  # a legend beside the plot (plotly's default place): not modelled
    paper_h = max(height - t - max(guess["b"], bottom), 40)  # the plot area's height

    # Left: the tick labels and titles of the y axes along the left edge.
    left = max(
        (
            _y_label_depth(y, axis_labels(y, data, "y", ref, share * paper_h), font) + _axis_title(y, font)
            for ref, y, share in on_edge("y")
        ),
        default=0.0,
    )

    # Right: an x tick label at the plot's right end, a colour bar beside the plot (a trace's own,
    # or a shared colour axis's). An end label on the left can stick out past the y labels' room.
    right = 0.0
    for ref, x, share in on_edge("x"):
        lo, hi = domain(ref)
        past_left, past_right = x_label_overhang(x, data, ref, share * plot_width, font)
        left = max(left, past_left if lo <= 0 else 0.0)
        right = max(right, past_right if hi >= 1 else 0.0)
    shared: dict[str, list[dict[str, Any]]] = {}
    for trace in data:
        if trace.get("type") != "heatmap":
            continue
        if trace.get("coloraxis"):
            shared.setdefault(str(trace["coloraxis"]), []).append(trace)
            continue
        if trace.get("showscale", True) is not False:
            bar = colorbar_width(trace, trace.get("colorbar"), font, paper_h)
            if bar is None:
                return None
            right = max(right, bar)
    for name, traces in shared.items():
        ca = dict(layout.get(name) or {})
        if ca.get("showscale", True) is False:
            continue
        scale: dict[str, Any] = {k: ca.get("c" + k[1:]) for k in ("zmin", "zmax", "zmid")}
        scale["z"] = [finite_numbers(tr.get("z", [])) for tr in traces]
        bar = colorbar_width(scale, ca.get("colorbar"), font, paper_h)
        if bar is None:
            return None
        right = max(right, bar)

    # Plotly gives up pushing past about half the figure; a bound here keeps an absurd label (a
    # 14-character token in 60 px type) from reserving more than that before plotly has measured.
    need = {"l": min(left, MAX_SIDE), "r": min(right, MAX_SIDE), "b": min(bottom, height / 2)}
    # A margin that a push only just fits is grown 2 px more by plotly (measured), and redrawn.
    return {side: math.ceil(max(guess[side], need[side] + PUSH_SLACK if need[side] else 0.0)) for side in need}


def colorbar_width(trace: dict[str, Any], bar: Any, font: float, plot_h: float) -> float | None:
    """A heatmap's colour bar with its title on the right (the atlas's maps), or None for another
    kind. Measured in Chromium: the bar's box starts x − 1 of the plot's width right of the plot (the
    atlas sets x = 1: theme.colorbar), then xpad, the bar, 13 px, the rotated title (1.85 font sizes
    wide) and xpad again. Plotly sets the title
    off to the right of the tick labels level with it (the labels within the title's extent around
    the bar's middle); with none there, by 3.9 px."""
    bar = dict(bar or {})
    title = bar.get("title")
    if not (isinstance(title, dict) and title.get("side") == "right" and _title_text(title)):
        return None
    if bar.get("len", 1) != 1 or bar.get("lenmode", "fraction") != "fraction" or bar.get("ticktext") is not None:
        return None
    lo, hi = _z_range(trace)
    length = plot_h - 2 * float(bar.get("ypad", 10))  # the bar: the plot's height less ypad at each end
    dtick_labels = linear_ticks(lo, hi, length, "y")
    size = _size(bar.get("tickfont"), font)
    tsize = _size(title.get("font"), font)
    # Level with the title: a label within half the title's text and 1.3 font sizes of the bar's
    # middle (fitted in Chromium to titles of 20–76 px and labels 22–92 px from the middle).
    reach = text_width(_title_text(title), tsize) / 2 + 1.3 * size
    span = hi - lo
    if not (math.isfinite(span) and span > 0):  # a scale too narrow or too wide to tick
        dtick_labels = []
    level = [text_width(label, size) for v, label in dtick_labels if abs((v - lo) / span - 0.5) * length <= reach]
    off = max(level) + 2 if level else 3.9
    thickness = float(bar.get("thickness", 30))
    gap = max(float(bar.get("x", 1.02)) - 1, 0.0) * COLORBAR_PLOT_WIDTH
    return gap + 2 * float(bar.get("xpad", 10)) + thickness + 13 + off + 1.85 * tsize


def _z_range(trace: dict[str, Any]) -> tuple[float, float]:
    """The colour scale's range, as plotly sets it: zmin/zmax when given, else the data's, made
    symmetric about zmid when there is one."""
    parts = trace.get("z", [])
    shared = isinstance(parts, list) and bool(parts) and all(p is None or isinstance(p, np.ndarray) for p in parts)
    zs = [z for z in (parts if shared else [finite_numbers(parts)]) if z is not None and z.size]
    dlo, dhi = (min(float(z.min()) for z in zs), max(float(z.max()) for z in zs)) if zs else (0.0, 1.0)
    lo = float(trace["zmin"]) if trace.get("zmin") is not None else dlo
    hi = float(trace["zmax"]) if trace.get("zmax") is not None else dhi
    mid = trace.get("zmid")
    if mid is not None and (trace.get("zmin") is None or trace.get("zmax") is None):
        half = max(abs(hi - float(mid)), abs(lo - float(mid)))
        lo, hi = float(mid) - half, float(mid) + half
    if not hi > lo:
        lo, hi = min(lo, hi) - 1, max(lo, hi) + 1
    return lo, hi


def _shows_legend(data: Sequence[dict[str, Any]], layout: dict[str, Any]) -> bool:
    if layout.get("showlegend") is False:
        return False
    named = [t for t in data if t.get("showlegend", True) is not False and t.get("type", "scatter") != "heatmap"]
    return len(named) > 1 or (layout.get("showlegend") is True and bool(named))


def legend_below(
    data: Sequence[dict[str, Any]],
    layout: dict[str, Any],
    font: float,
    height: float,
    t: float,
    plot_width: float = ASSUMED_PLOT_WIDTH,
) -> float | None:
    """The bottom margin a horizontal legend below the plot needs (its rows wrapped at the plot's
    width), or None when there is no such legend."""
    legend = dict(layout.get("legend") or {})
    if legend.get("orientation") != "h" or not _shows_legend(data, layout):
        return None
    y = float(legend.get("y", 1.0))
    if y >= 0 or legend.get("yanchor", "auto") not in ("top", "auto"):
        return None
    size = _size(legend.get("font"), font)
    widths = [
        text_width(str(trace.get("name", "")), size) * LEGEND_TEXT_SCALE + LEGEND_ITEM_EXTRA
        for trace in data
        if trace.get("showlegend", True) is not False and trace.get("type", "scatter") != "heatmap"
    ]
    rows = legend_rows(widths, plot_width)
    legend_h = rows * size * LEGEND_ROW + LEGEND_PAD
    # The legend's top sits |y| of the plot's height below it: b = |y|·(height − t − b) + legend_h.
    return (abs(y) * (height - t) + legend_h) / (1 + abs(y))


def legend_rows(widths: Sequence[float], plot_width: float) -> int:
    """How many rows plotly.js 3 lays a horizontal legend's items out in (legend/draw.js): one row
    when they all fit in the plot's width; otherwise every item takes the widest item's width (a
    grid), and a row ends before an item would reach the plot's right edge."""
    if not widths:
        return 1
    if sum(widths) + (len(widths) - 1) * LEGEND_ITEM_GAP < plot_width:
        return 1
    slot = max(widths)  # item k of a row starts at k·(slot + gap) and must end before the edge
    per_row = max(1, math.ceil((plot_width - slot) / (slot + LEGEND_ITEM_GAP)))
    return math.ceil(len(widths) / per_row)


def fit_margins(fig: go.Figure, plot_width: float = ASSUMED_PLOT_WIDTH) -> go.Figure:
    """Give a figure, before it is sent, the margins plotly's automargin would settle on (see the
    module's docstring) when its plot is drawn `plot_width` px wide; a figure this does not model
    keeps its own. In place; returns the figure."""
    data, layout = figure_parts(fig)
    margins = estimate_margins(data, layout, plot_width)
    if margins is not None:
        relayout(fig, margin=margins)
    return fig
