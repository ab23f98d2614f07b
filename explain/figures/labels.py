"""What plotly will write on an axis, and how wide it is: the text widths and tick labels that
explain/figures/margins.py estimates margins from, as plotly.js 3 writes them (auto ticks of 2, 5 or
10 × 10ⁿ, its number format, SI prefixes on log axes), checked in tests/test_margins.py against labels
read off charts drawn in Chromium."""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

import numpy as np

MIN_PX = {"x": 80, "y": 40}  # auto ticks: at most one per this many pixels, 5–10 of them
ROUND_BASE = (2, 5, 10)
SAFETY = 1.06  # text widths: a little wider than measured, so a shortfall is rare

_TAG = re.compile(r"<[^>]+>")
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)


def char_em(c: str) -> float:
    """The width of one character in em (font sizes), a little on the wide side."""
    if c in "⁰⁻":
        return 0.4
    if c.isdigit():
        return 0.58
    if c in " ":
        return 0.28
    if c in ".,:;'|!iljI()[]{}":
        return 0.32
    if c in "−-–+=×·<>~^*/\\":
        return 0.62
    if unicodedata.east_asian_width(c) in ("W", "F"):
        return 1.0
    if c.isupper():
        return 0.7
    if c.isascii():
        return 0.58
    return 0.72


def text_width(text: str, size: float) -> float:
    """Estimated width in px of plotly text: its widest line (lines split at <br>, tags dropped,
    entities read)."""
    lines = [html.unescape(_TAG.sub("", line)) for line in _BR.split(str(text))]
    return max(sum(char_em(c) for c in line) for line in lines) * size * SAFETY


def text_lines(text: str) -> int:
    return 1 + str(text).count("<br>") + str(text).count("<br />")


# --- tick labels -------------------------------------------------------------------------------


def number_label(v: float, dtick: float) -> str:
    """A linear axis's tick label as plotly writes it (no trailing zeros, U+2212 minus, k/M/G from 10⁴)."""
    if abs(v) < dtick * 1e-6:
        v = 0.0
    div, suffix = next(((d, x) for d, x in ((1e9, "G"), (1e6, "M"), (1e3, "k")) if abs(v) >= max(d, 1e4)), (1.0, ""))
    step = dtick / div
    decimals = min(max(0, -math.floor(math.log10(step) + 1e-9)), 15) if step > 0 and math.isfinite(step) else 0
    s = f"{v / div:.{decimals}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s.replace("-", "−") + suffix


def linear_labels(lo: float, hi: float, length: float, letter: str) -> list[str]:
    """The labels plotly's auto ticks give a linear axis over [lo, hi] drawn `length` px long."""
    return [label for _, label in linear_ticks(lo, hi, length, letter)]


def linear_ticks(lo: float, hi: float, length: float, letter: str) -> list[tuple[float, str]]:
    """Plotly's auto ticks of a linear axis over [lo, hi] drawn `length` px long: (value, label)."""
    if not (math.isfinite(lo) and math.isfinite(hi) and math.isfinite(hi - lo)):
        return []
    if hi - lo <= 0:
        lo, hi = lo - 1, hi + 1
    nt = min(max(length / MIN_PX[letter], 4), 9) + 1
    rough = (hi - lo) / nt
    if not rough > 1e-300:  # a range too small to tick (subnormal): plotly shows about one label
        return [(lo, number_label(lo, abs(lo) or 1.0))]
    base = 10 ** math.floor(math.log10(rough))
    dtick = base * next(r for r in ROUND_BASE if r >= rough / base - 1e-9)
    first = math.ceil(lo / dtick - 1e-9)
    last = math.floor(hi / dtick + 1e-9)
    return [(k * dtick, number_label(k * dtick, dtick)) for k in range(first, last + 1)][:200]


SI_SMALL = ((1e-15, "f"), (1e-12, "p"), (1e-9, "n"), (1e-6, "μ"))


def log_labels(lo: float, hi: float, power: bool = False) -> list[str]:
    """A log axis (values, not their logarithms): its powers of ten, as plotly writes them ("0.001",
    then SI prefixes below: "100μ"; with exponentformat="power", 10 with a small exponent)."""
    if not (lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi)):
        return []
    out = []
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for e in range(max(first, last - 60), last + 1):  # plotly thins out long runs of decades anyway
        v = 10.0**e
        if power and not 0 <= e <= 1:
            out.append("10" + "⁻" * (e < 0) + "⁰" * len(str(abs(e))))  # superscripts: narrow stand-ins
        elif 1e-3 <= v < 1e4:
            out.append(number_label(v, min(v, 1.0)))
        elif v < 1e-3:
            div, prefix = max(((d, p) for d, p in SI_SMALL if d <= v * 1.0001), default=SI_SMALL[0])
            out.append(f"{v / div:.3g}{prefix}")
        else:
            out.append(number_label(v, v))
    return out


def finite_numbers(values: Iterable[Any]) -> np.ndarray | None:
    """The finite numbers among `values` (None counts as missing), or None when some are not numbers."""
    try:
        a = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=float).ravel()
    except (TypeError, ValueError):
        return None
    finite: np.ndarray = a[np.isfinite(a)]
    return finite


def strings(values: Iterable[Any]) -> list[str]:
    return [str(v) for v in values if v is not None]
