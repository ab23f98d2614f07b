"""Sinusoidal absolute positional encoding (Vaswani et al. 2017, "Attention Is All You Need", §3.5).

Axis legend: n positions, d channels (the model dimension), f frequency pair (channels 2f and 2f+1).

    PE(pos, 2f)   = sin(pos · ω_f)
    PE(pos, 2f+1) = cos(pos · ω_f)        ω_f = base^(−2f/d),  base = 10000

The reference layout here is the paper's *interleaved* one. Transformer-XL builds the same sinusoids
*concatenated*, [sin(all f) | cos(all f)]; `concatenated_permutation` maps one to the other (the
chapter shows both side by side). tensor2tensor's timing signal is concatenated too but uses other
frequencies, base^(−f/(d/2 − 1)): not a permutation of this table. (GPT-J's sin/cos table is RoPE's
angles, not an absolute encoding.)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .base import Paper, PositionalEncoding

PAPER = Paper(
    "Vaswani, Shazeer, Parmar, Uszkoreit, Jones, Gomez, Kaiser, Polosukhin",
    2017,
    "Attention Is All You Need",
    "https://arxiv.org/abs/1706.03762",
)


def sinusoidal_frequencies(d: int, base: float = 10000.0, dtype: torch.dtype = torch.float64) -> Tensor:
    """ω_f = base^(−2f/d) for f = 0 … ⌈d/2⌉−1, shape (⌈d/2⌉,).

    This indexes *pairs*: channels c = 2f (sin) and c = 2f+1 (cos) share f = c // 2, so channel c
    turns at base^(−2·(c // 2)/d). The classic mistake puts the *channel* index c where 2f belongs,
    base^(−c/d): each sin channel (c = 2f) still gets ω_f, but its cos partner (c = 2f+1) gets
    base^(−(2f+1)/d), base^(1/d) times slower, so a pair is no longer (sin, cos) of one angle and
    PE(p+Δ) = T(Δ)·PE(p) fails. The opposite slip, the pair index f in that channel formula
    (base^(−f/d)), halves every exponent: the slowest pair turns at about base^(−1/2) instead of
    base^(−1 + 2/d). (tests/test_sinusoidal.py builds both mistakes and shows what breaks.)
    With odd d there is one more sin channel than cos channels; its ω follows the same rule.
    """
    if d < 1:
        raise ValueError("d must be at least 1")
    if base <= 1:
        raise ValueError("base must be greater than 1")
    f = torch.arange((d + 1) // 2, dtype=torch.float64)  # (⌈d/2⌉,)
    return (float(base) ** (-2.0 * f / d)).to(dtype)


def sinusoidal_table(
    n_positions: int, d: int, base: float = 10000.0, dtype: torch.dtype = torch.float32, offset: int = 0
) -> Tensor:
    """The PE matrix (n_positions, d) for positions offset … offset+n_positions−1, interleaved layout.

    Channel 2f is sin(pos·ω_f), channel 2f+1 is cos(pos·ω_f). Odd d: the last channel is a lone sin.
    Computed in float64 (large pos·ω loses digits in float32) and then cast.
    """
    if n_positions < 0:
        raise ValueError("n_positions must be non-negative")
    positions = torch.arange(offset, offset + n_positions)  # (n,)
    return sinusoidal_rows(positions, d, base).to(dtype)


def sinusoidal_rows(positions: Tensor, d: int, base: float = 10000.0) -> Tensor:
    """PE rows for any integer positions (shifted, negative, past any length), (n, d) float64."""
    omega = sinusoidal_frequencies(d, base)  # (⌈d/2⌉,)
    angles = positions.to(torch.float64)[:, None] * omega[None, :]  # (n, ⌈d/2⌉)
    table = torch.empty(positions.numel(), d, dtype=torch.float64)  # (n, d)
    table[:, 0::2] = torch.sin(angles)  # ⌈d/2⌉ sin channels
    table[:, 1::2] = torch.cos(angles[:, : d // 2])  # ⌊d/2⌋ cos channels
    return table


def concatenated_permutation(d: int) -> Tensor:
    """perm with concatenated = interleaved[:, perm]: [sin_0 … sin_last | cos_0 … cos_last].

    Interleaved channel 2f is concatenated channel f; interleaved 2f+1 is concatenated ⌈d/2⌉ + f.
    """
    half = (d + 1) // 2
    sins = torch.arange(0, d, 2)  # interleaved positions of sin_f, f = 0 … ⌈d/2⌉−1
    coss = torch.arange(1, d, 2)  # interleaved positions of cos_f
    perm = torch.cat([sins, coss])  # (d,)
    assert perm.numel() == d and sins.numel() == half
    return perm


def shift_matrix(delta: float, d: int, base: float = 10000.0, dtype: torch.dtype = torch.float64) -> Tensor:
    """T(Δ) (d, d) with PE(p + Δ) = T(Δ) · PE(p) for every p (interleaved layout, even d).

    Per pair f, acting on (sin, cos):  [[cos ω_fΔ, sin ω_fΔ], [−sin ω_fΔ, cos ω_fΔ]]
    — a rotation that depends on Δ only, which is why a fixed linear map can move attention by Δ.
    """
    if d % 2:
        raise ValueError("the shift property needs even d: a lone sin channel has no cos partner")
    omega = sinusoidal_frequencies(d, base, dtype=torch.float64)  # (d/2,)
    c, s = torch.cos(omega * delta), torch.sin(omega * delta)
    T = torch.zeros(d, d, dtype=torch.float64)
    idx = torch.arange(d // 2)
    T[2 * idx, 2 * idx] = c
    T[2 * idx, 2 * idx + 1] = s
    T[2 * idx + 1, 2 * idx] = -s
    T[2 * idx + 1, 2 * idx + 1] = c
    return T.to(dtype)


@dataclass(frozen=True)
class SinusoidalConfig:
    base: float = 10000.0  # the paper's base: wavelengths run from 2π up to almost 2π·base


class Sinusoidal(PositionalEncoding):
    """Adds PE(pos) to each token embedding; no parameters, any position has a vector."""

    name = "sinusoidal"
    label = "Sinusoidal (Vaswani et al. 2017)"
    kind = "input"
    paper = PAPER
    config: SinusoidalConfig

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        config: SinusoidalConfig | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(d_model, n_heads, config or SinusoidalConfig(), generator)

    def encode_input(self, x: Tensor, positions: Tensor) -> Tensor:
        # Deviation from paper: the paper multiplies token embeddings by √d_model (§3.4) because its
        # embeddings are initialised at scale 1/√d_model. PE Atlas's toy embeddings already have
        # unit-scale entries, which is what that multiplication achieves, so we add PE directly.
        pe = sinusoidal_rows(positions, self.d_model, self.config.base).to(x.dtype)  # (n, D)
        return x + pe[None]  # (b, n, D)
