"""What the Sinusoidal APE chapter shows, computed from encoders/sinusoidal.py (numbers only).

Every function takes primitives and returns numpy arrays, so pages can cache them with
st.cache_data and tests can check them without Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders.sinusoidal import (
    concatenated_permutation,
    shift_matrix,
    sinusoidal_frequencies,
    sinusoidal_rows,
    sinusoidal_table,
)


def pe_matrix(n: int, d: int, base: float) -> np.ndarray:
    """(n, d) float32 — float32 halves what the browser receives and is exact enough to draw."""
    return sinusoidal_table(n, d, base).numpy()


def wavelengths(d: int, base: float) -> np.ndarray:
    """λ_f = 2π/ω_f per pair (⌈d/2⌉,): how many positions one full turn of pair f takes."""
    return (2 * np.pi / sinusoidal_frequencies(d, base)).numpy()


def binary_digits(n: int, n_bits: int) -> np.ndarray:
    """(n, n_bits) 0/1: bit b of each position, least significant first — the analogy: bit b flips
    every 2^b positions, as pair f turns every λ_f positions; sinusoids are its smooth version."""
    pos = np.arange(n)[:, None]
    return ((pos >> np.arange(n_bits)[None, :]) & 1).astype(float)


@dataclass
class DotProducts:
    similarity: np.ndarray  # (n, n) PE(m)·PE(n)
    offsets: np.ndarray  # (2n−1,) Δ = n − m from −(n−1) to n−1
    closed_form: np.ndarray  # (2n−1,) Σ_f cos(ω_f Δ)
    from_rows: dict[int, np.ndarray]  # reference position p → PE(p)·PE(p+Δ) where both exist (NaN else)


def dot_products(n: int, d: int, base: float, reference_positions: tuple[int, ...]) -> DotProducts:
    """PE·PE two ways: measured from the table, and the closed form Σ_f cos(ω_f (m − n)).

    Equal curves for different reference positions are the numerical face of "depends only on Δ".
    (For odd d the lone sin channel adds sin(ω m)sin(ω n), which is not a function of Δ alone.)
    """
    P = sinusoidal_table(n, d, base, dtype=torch.float64).numpy()  # (n, d)
    sim = P @ P.T  # (n, n)
    offsets = np.arange(-(n - 1), n)
    omega = sinusoidal_frequencies(d, base).numpy()[: d // 2]  # paired channels only
    closed = np.cos(np.outer(offsets, omega)).sum(axis=1)
    rows = {}
    for p in reference_positions:
        curve = np.full(offsets.shape, np.nan)
        ok = (p + offsets >= 0) & (p + offsets < n)
        curve[ok] = sim[p, p + offsets[ok]]
        rows[int(p)] = curve
    return DotProducts(sim, offsets, closed, rows)


@dataclass
class ShiftCheck:
    pe_shifted: np.ndarray  # PE(p + Δ), (d,)
    rotated: np.ndarray  # T(Δ) · PE(p), (d,)
    T: np.ndarray  # (d, d)
    max_abs_diff: float


def shift_check(p: int, delta: int, d: int, base: float) -> ShiftCheck:
    """PE(p + Δ) against T(Δ)·PE(p), both in float64 (even d only: see shift_matrix)."""
    T = shift_matrix(delta, d, base)  # (d, d)
    pe_p = sinusoidal_rows(torch.tensor([p]), d, base)[0]  # (d,)
    pe_shifted = sinusoidal_rows(torch.tensor([p + delta]), d, base)[0]  # (d,)
    rotated = T @ pe_p
    return ShiftCheck(pe_shifted.numpy(), rotated.numpy(), T.numpy(), float((pe_shifted - rotated).abs().max()))


@dataclass
class Layouts:
    interleaved: np.ndarray  # (n, d)
    concatenated: np.ndarray  # (n, d), built directly as [sin(all f) | cos(all f)]
    permutation: np.ndarray  # (d,)  concatenated = interleaved[:, permutation]
    max_abs_diff: float  # |concatenated − interleaved[:, perm]|, should be 0
    max_abs_diff_unpermuted: float  # the two layouts are *not* equal element-wise


def layouts(n: int, d: int, base: float) -> Layouts:
    inter = sinusoidal_table(n, d, base, dtype=torch.float64)  # (n, d)
    # Built from the formula on its own — not by permuting — so that the check below is a check.
    omega = sinusoidal_frequencies(d, base)  # (⌈d/2⌉,)
    angles = torch.arange(n, dtype=torch.float64)[:, None] * omega[None, :]
    concat = torch.cat([torch.sin(angles), torch.cos(angles[:, : d // 2])], dim=1)  # (n, d)
    perm = concatenated_permutation(d)
    return Layouts(
        inter.numpy(),
        concat.numpy(),
        perm.numpy(),
        float((concat - inter[:, perm]).abs().max()),
        float((concat - inter).abs().max()),
    )
