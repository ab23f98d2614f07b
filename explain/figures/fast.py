"""The plotly fast paths, in one clearly marked place.

Building a figure through plotly's own helpers (fig.add_vline, add_shape, update_layout, validated
animation frames) costs milliseconds per call, and a page builds 5–14 figures per rerun. The
functions here write out, as plain dicts and pre-encoded arrays, exactly what those helpers would
have produced, so a builder can hand the whole figure to the constructor at once. Each one is pinned
against plotly's own result by tests/test_figures_speed.py; change one only with that test green.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

Spec = dict[str, Any]  # a plotly shape / annotation / trace, as the plain dict the constructor takes


def vline(x: float, line: Spec) -> Spec:
    """The shape fig.add_vline(x=…) makes: a line at data x across the whole plot height."""
    return dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain", line=line)


def hline(y: float, line: Spec) -> Spec:
    """The shape fig.add_hline(y=…) makes: a line at data y across the whole plot width."""
    return dict(type="line", x0=0, x1=1, xref="x domain", y0=y, y1=y, yref="y", line=line)


def vrect(x0: float, x1: float, **shape: Any) -> Spec:
    """The shape fig.add_vrect(x0=…, x1=…) makes: a band over an x range, full plot height."""
    return dict(type="rect", x0=x0, x1=x1, xref="x", y0=0, y1=1, yref="y domain", **shape)


# Where fig.add_vline / add_hline / add_vrect put their annotation= at these annotation_position
# values (plotly.shapeannotation), written out so the figure can be built in one go.
def vline_note(x: float, position: str, **note: Any) -> Spec:
    xanchor, yanchor, y = dict(top_right=("left", "top", 1), bottom_right=("left", "bottom", 0))[position]
    return dict(note, x=x, y=y, xref="x", yref="y domain", xanchor=xanchor, yanchor=yanchor, showarrow=False)


def hline_note(y: float, position: str, **note: Any) -> Spec:
    xanchor, yanchor, x = dict(bottom_left=("left", "top", 0), top_left=("left", "bottom", 0))[position]
    return dict(note, x=x, y=y, xref="x domain", yref="y", xanchor=xanchor, yanchor=yanchor, showarrow=False)


def vrect_note(x0: float, x1: float, position: str, **note: Any) -> Spec:
    yanchor, y = dict(top_left=("top", 1), bottom_left=("bottom", 0))[position]
    return dict(note, x=min(x0, x1), y=y, xref="x", yref="y domain", xanchor="left", yanchor=yanchor, showarrow=False)


# plotly.js typed-array names of the numpy dtypes plotly's JSON encoder sends as binary.
TYPED_CODES = {
    "int8": "i1",
    "uint8": "u1",
    "int16": "i2",
    "uint16": "u2",
    "int32": "i4",
    "uint32": "u4",
    "float32": "f4",
    "float64": "f8",
}


def typed_array(v: np.ndarray) -> Spec | None:
    """A numeric numpy array as plotly's JSON encoder sends it, a typed-array spec {"dtype",
    "bdata", "shape"} (int64 narrowed as plotly narrows it), made without plotly's narwhals detour;
    None for what plotly sends otherwise (text, bool, uint64, an int64 too wide, an empty array)."""
    if v.dtype == np.int64 and v.size:
        lo, hi = int(v.min()), int(v.max())
        v = next((v.astype(t) for t, (a, b) in _NARROW if a <= lo and hi <= b), v)
    code = TYPED_CODES.get(v.dtype.name) if v.dtype.isnative else None
    if code is None or v.size == 0:
        return None
    spec = {"dtype": code, "bdata": base64.b64encode(np.ascontiguousarray(v).tobytes()).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = str(v.shape)[1:-1]
    return spec


_NARROW = (("int8", (-128, 127)), ("int16", (-32768, 32767)), ("int32", (-(2**31), 2**31 - 1)))
