"""Synthetic 2-D curves for the spline autoencoder: sines, arcs, spirals and letters drawn as strokes.

Every curve is n points (x, y) in [−1, 1]², listed in drawing order. Each shape is a deterministic
function of its parameters (`curve`), so the page can offer "pick a shape and move its parameters";
the training and test sets draw those parameters from a seeded numpy generator (`dataset`).

Our choice: every family has a fixed drawing direction (sines left → right, arcs and spirals
counter-clockwise, letters in their usual stroke order). The spline model has no positional
encoding, so its encoder sees the points as a *set*; a fixed direction per family is what lets it
recover the order from the shape alone.
"""

from __future__ import annotations

import numpy as np

KINDS = ("sine", "arc", "spiral", "letter")
LETTERS = {  # polyline strokes in a unit box, in the order a hand draws them
    "L": [(-0.5, 0.8), (-0.5, -0.8), (0.5, -0.8)],
    "V": [(-0.6, 0.8), (0.0, -0.8), (0.6, 0.8)],
    "Z": [(-0.6, 0.8), (0.6, 0.8), (-0.6, -0.8), (0.6, -0.8)],
    "N": [(-0.6, -0.8), (-0.6, 0.8), (0.6, -0.8), (0.6, 0.8)],
    "M": [(-0.7, -0.8), (-0.7, 0.8), (0.0, -0.2), (0.7, 0.8), (0.7, -0.8)],
    "W": [(-0.8, 0.8), (-0.4, -0.8), (0.0, 0.3), (0.4, -0.8), (0.8, 0.8)],
    "U": [(-0.5, 0.8), (-0.5, -0.4), (-0.3, -0.75), (0.0, -0.85), (0.3, -0.75), (0.5, -0.4), (0.5, 0.8)],
}
LETTER_NAMES = tuple(LETTERS)


def _resample(poly: np.ndarray, n: int) -> np.ndarray:
    """n points evenly spaced by arc length along a polyline (m, 2) → (n, 2)."""
    seg = np.linalg.norm(np.diff(poly, axis=0), axis=1)  # (m − 1,)
    s = np.concatenate([[0.0], np.cumsum(seg)])  # (m,)
    u = np.linspace(0.0, s[-1], n)  # (n,)
    return np.stack([np.interp(u, s, poly[:, 0]), np.interp(u, s, poly[:, 1])], axis=1)  # (n, 2)


def _rotate(p: np.ndarray, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return p @ np.array([[c, s], [-s, c]])  # (n, 2)


def curve(kind: str, n: int = 32, *, a: float = 0.5, b: float = 0.5, c: float = 0.0, letter: str = "L") -> np.ndarray:
    """One curve (n, 2). The three shape parameters a, b, c ∈ [0, 1] mean, per family:
    sine   — a: amplitude, b: number of half-waves (1–4), c: phase;
    arc    — a: radius, b: sweep (180°–330°), c: start angle;
    spiral — a: outer radius, b: turns (1–2), c: start angle;
    letter — a: size, b: slant, c: rotation (±0.4 rad); `letter` picks the stroke."""
    a, b, c = (float(np.clip(v, 0.0, 1.0)) for v in (a, b, c))
    r: float | np.ndarray
    u = np.linspace(0.0, 1.0, n)  # (n,)
    if kind == "sine":
        x = -0.9 + 1.8 * u
        y = (0.2 + 0.6 * a) * np.sin(np.pi * (1 + 3 * b) * u + 2 * np.pi * c)
        return np.stack([x, y], axis=1)  # (n, 2)
    if kind == "arc":
        r = 0.4 + 0.5 * a
        theta = 2 * np.pi * c + np.deg2rad(180 + 150 * b) * u  # counter-clockwise
        return np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1)  # (n, 2)
    if kind == "spiral":
        turns = 1.0 + b
        r = 0.1 + (0.5 + 0.4 * a - 0.1) * u
        theta = 2 * np.pi * c + 2 * np.pi * turns * u  # counter-clockwise, growing outwards
        return np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1)  # (n, 2)
    if kind == "letter":
        if letter not in LETTERS:
            raise ValueError(f"unknown letter {letter!r}; choose from {LETTER_NAMES}")
        poly = np.asarray(LETTERS[letter], dtype=float)  # (m, 2)
        poly = poly * (0.6 + 0.4 * a)
        poly[:, 0] += (b - 0.5) * 0.6 * poly[:, 1]  # slant: shear x by y
        return _rotate(_resample(poly, n), 0.8 * (c - 0.5))  # (n, 2)
    raise ValueError(f"unknown kind {kind!r}; choose from {KINDS}")


def dataset(n_curves: int, n: int = 32, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n_curves random curves (float32, (N, n, 2)) and their family index (N,), families in turn so
    that every family has the same share; parameters drawn from numpy's PCG64 seeded with `seed`."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_curves, n, 2), dtype=np.float32)
    kinds = np.arange(n_curves) % len(KINDS)
    for k in range(n_curves):
        a, b, c = rng.random(3)
        letter = LETTER_NAMES[rng.integers(len(LETTER_NAMES))]
        out[k] = curve(KINDS[kinds[k]], n, a=a, b=b, c=c, letter=letter)
    return out, kinds
