"""What a section on the learned distance biases can draw: KERPLE's kernels and FIRE's interpolated
MLP, per head and over distances (numbers only; a page or a chapter declaration calls these).

Axis legend: h heads, r distance |i − j|, i query, j key, n tokens.

    kerple_curves   every head's b_h(r) over r = 0 … R, its r₁ and r₂, the line ALiBi would draw with
                    the same slope, how far each head reaches before its penalty passes one logit,
                    and how much more the penalty grows from R/2 to R (2 for a line, less for a log)
    kerple_matrix   the (h, n, n) bias a sentence of n tokens gets
    fire_row        one query's keys: the MLP's input ψ(i − j)/ψ(max(L, i)) and every head's bias
    fire_grid       progressive interpolation: the inputs of several queries, how many rows share the
                    normaliser ψ(L) (the Toeplitz part) and how the grid gets finer past L
    fire_matrix     the (h, n, n) bias

All go through the registered encoders (encoders/kerple.py, encoders/fire.py), seeded like every
chapter's untrained layer, so a picture is the code that runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders.fire import Fire, FireConfig
from encoders.kerple import Kerple, KerpleConfig, Variant

from .common import TOY_D_MODEL, TOY_HEADS

KERPLE = "kerple"  # the registry names this section runs (data: it draws these two methods)
FIRE = "fire"
MAX_DISTANCE = 512  # the longest distance a curve is drawn to (bounded: a slider's top)
MAX_TOKENS = 256  # the largest matrix (n × n per head)


def _kerple(variant: Variant, n_heads: int, seed: int) -> Kerple:
    enc = build(KERPLE, TOY_D_MODEL, n_heads, seed, KerpleConfig(variant=variant))
    assert isinstance(enc, Kerple)
    return enc


def _fire(n_heads: int, seed: int, threshold: float, c: float) -> Fire:
    enc = build(FIRE, TOY_D_MODEL, n_heads, seed, FireConfig(threshold=threshold, c_init=c))
    assert isinstance(enc, Fire)
    return enc


def _check(n: int, top: int, what: str) -> None:
    if not 1 <= n <= top:
        raise ValueError(f"{what} must be 1 … {top}, not {n}")


@dataclass(frozen=True)
class KerpleCurves:
    variant: str
    distances: np.ndarray  # (R + 1,) 0 … R
    bias: np.ndarray  # (h, R + 1) b_h(r), float64
    r1: np.ndarray  # (h,) as the bias uses it (≥ eps)
    r2: np.ndarray  # (h,)
    line: np.ndarray  # (h, R + 1) −r₁·r: ALiBi's penalty with the same slope, for comparison
    reach: np.ndarray  # (h,) the farthest r whose penalty stays within one logit (b ≥ −1); R if every one does
    growth: np.ndarray  # (h,) b(R)/b(R/2): 2 for a line, 2^r₂ for power, below 2 for the logarithm


def kerple_curves(
    variant: Variant = "log", n_heads: int = TOY_HEADS, seed: int = 0, max_distance: int = 64
) -> KerpleCurves:
    _check(max_distance, MAX_DISTANCE, "max_distance")
    enc = _kerple(variant, n_heads, seed)
    r = torch.arange(max_distance + 1)
    with torch.no_grad():
        bias = enc.bias(torch.zeros(1, dtype=torch.long), r)[:, 0, :].numpy()  # (h, R + 1): query 0, keys r
        r1, r2 = (p.numpy() for p in enc.parameters_in_range())
    dist = r.numpy().astype(np.float64)
    line = -r1[:, None] * dist[None, :]  # (h, R + 1)
    within = bias >= -1.0  # (h, R + 1); b is non-increasing in r, so this is a prefix
    reach = within.sum(axis=1) - 1  # (h,)
    half = max(1, max_distance // 2)
    growth = bias[:, max_distance] / bias[:, half] if max_distance >= 2 else np.full(n_heads, np.nan)
    return KerpleCurves(variant, dist, bias, r1, r2, line, reach, growth)


def kerple_matrix(variant: Variant = "log", n: int = 16, n_heads: int = TOY_HEADS, seed: int = 0) -> np.ndarray:
    """(h, n, n) float64: b_h(|i − j|) for a sentence of n tokens (symmetric; a causal page masks j > i)."""
    _check(n, MAX_TOKENS, "n")
    pos = torch.arange(n)
    with torch.no_grad():
        return _kerple(variant, n_heads, seed).bias(pos, pos).numpy()


@dataclass(frozen=True)
class FireRow:
    query: int
    threshold: float  # L
    keys: np.ndarray  # (i + 1,) j = 0 … i
    normalised: np.ndarray  # (i + 1,) ψ(i − j)/ψ(max(L, i)), in [0, 1]
    bias: np.ndarray  # (h, i + 1) f_θ(normalised) per head


def fire_row(query: int, n_heads: int = TOY_HEADS, seed: int = 0, threshold: float = 512.0, c: float = 0.1) -> FireRow:
    _check(query + 1, MAX_DISTANCE + 1, "query + 1")
    enc = _fire(n_heads, seed, threshold, c)
    q, k = torch.tensor([query]), torch.arange(query + 1)
    with torch.no_grad():
        x = enc.normalised(q, k)[0].numpy()  # (i + 1,)
        b = enc.bias(q, k)[:, 0, :].numpy()  # (h, i + 1)
    return FireRow(query, float(enc.threshold().detach()), k.numpy(), x, b)


@dataclass(frozen=True)
class FireGrid:
    queries: tuple[int, ...]
    threshold: float
    inputs: dict[int, np.ndarray]  # query i → its keys' inputs ψ(i − j)/ψ(max(L, i)), j = i … 0 (ascending)
    largest_gap: dict[int, float]  # query i → the widest step between neighbouring inputs
    toeplitz_rows: int  # queries 0 … ⌊L⌋ share the normaliser ψ(L): there the bias depends on i − j only


def fire_grid(queries: tuple[int, ...] = (8, 16, 32, 64), threshold: float = 8.0, c: float = 0.1) -> FireGrid:
    """Progressive interpolation (FIRE §3.2): past L, a longer query spreads its keys over the same
    [0, 1], more densely, so a long input lands between inputs the MLP saw in training."""
    for i in queries:
        _check(i + 1, MAX_DISTANCE + 1, "query + 1")
    enc = _fire(1, 0, threshold, c)
    inputs: dict[int, np.ndarray] = {}
    gaps: dict[int, float] = {}
    for i in queries:
        with torch.no_grad():
            x = enc.normalised(torch.tensor([i]), torch.arange(i, -1, -1))[0].numpy()  # (i + 1,) j = i … 0
        inputs[i] = x
        gaps[i] = float(np.diff(x).max()) if i else 0.0
    return FireGrid(tuple(queries), threshold, inputs, gaps, math.floor(threshold) + 1)


def fire_matrix(n: int = 16, n_heads: int = TOY_HEADS, seed: int = 0, threshold: float = 512.0) -> np.ndarray:
    """(h, n, n) float64 FIRE bias; defined for j ≤ i (a causal page masks the rest)."""
    _check(n, MAX_TOKENS, "n")
    pos = torch.arange(n)
    with torch.no_grad():
        return _fire(n_heads, seed, threshold, 0.1).bias(pos, pos).numpy()
