"""Rotary position embedding, RoPE (Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary
Position Embedding", §3.2–3.4).

Axis legend: b batch, h heads, n / i / j positions (i query, j key), d head dimension,
f frequency pair (f = 0 … d/2−1; the paper counts 1 … d/2).

    θ_f = base^(−2f/d),   base = 10000
    R_m = block-diag( [[cos mθ_f, −sin mθ_f], [sin mθ_f, cos mθ_f]] )   one 2×2 block per pair f
    q'_m = R_m q_m,  k'_n = R_n k_n   →   q'_mᵀ k'_n = q_mᵀ R_(n−m) k_n

The score depends on the positions only through n − m, key − query (j − i), because the blocks are
commuting rotations: R_mᵀ R_n = R_(n−m). RoPE touches q and k only, never v, and adds nothing to
the input embeddings.

Layouts. The reference layout is the paper's *interleaved* pairs (x_2f, x_2f+1) (RoFormer, GPT-J,
torchscale xPos). GPT-NeoX and HF Llama pair channel f with channel f + d/2 ("half-split"). The two
are one fixed channel permutation apart (`half_split_permutation`); they give identical logits on
permuted inputs, but the same weights give different logits in the two layouts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

import numpy.typing as npt
import torch
from torch import Tensor

from .base import AttentionTerms, Difference, Paper, PositionalEncoding, content_logits

PAPER = Paper(
    "Su, Lu, Pan, Murtadha, Wen, Liu",
    2021,
    "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    "https://arxiv.org/abs/2104.09864",
)

LAYOUTS = ("interleaved", "half")
# Positions or distances: a tensor, a list, a range or a numpy array (made float64 by as_float64).
Numbers: TypeAlias = Tensor | npt.ArrayLike


def _check_dim(d: int) -> None:
    if d < 2 or d % 2:
        raise ValueError(
            f"RoPE needs an even head dimension (got d = {d}): it rotates channels in 2-D pairs, and "
            "an odd channel would have no partner to rotate with."
        )


def _check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")


def rope_frequencies(d: int, base: float = 10000.0, dtype: torch.dtype = torch.float64) -> Tensor:
    """θ_f = base^(−2f/d) for f = 0 … d/2−1, shape (d/2,) (RoFormer §3.2.2, Eq. 15, 0-based f).

    θ_0 = 1 radian per position (the fastest pair, wavelength 2π); θ_(d/2−1) = base^(−(d−2)/d), the
    slowest. Computed in float64: m·θ_f for large m loses digits in float32.
    """
    _check_dim(d)
    if base <= 1:
        raise ValueError(f"base must be greater than 1 (got {base}); the paper uses 10000")
    f = torch.arange(d // 2, dtype=torch.float64)  # (d/2,)
    return (float(base) ** (-2.0 * f / d)).to(dtype)


def as_float64(values: Numbers) -> Tensor:
    """Positions or distances as a flat float64 tensor. A Python list goes straight to float64:
    torch.as_tensor would first make it float32 and lose digits (π/2 → 1.5707963705…)."""
    if isinstance(values, Tensor):
        return values.to(torch.float64).reshape(-1)
    return torch.tensor(values, dtype=torch.float64).reshape(-1)


def rotation_angles(positions: Numbers, inv_freq: Tensor) -> Tensor:
    """m·θ_f for every position m and pair f, float64 (n, d/2)."""
    pos = as_float64(positions)  # (n,)
    return pos[:, None] * inv_freq.to(torch.float64)[None, :]  # (n, d/2)


def apply_rotary(
    x: Tensor,
    positions: Numbers,
    base: float = 10000.0,
    layout: str = "interleaved",
    inv_freq: Tensor | None = None,
) -> Tensor:
    """R_m x for every row of x: x (..., n, d), positions (n,) → (..., n, d), same dtype as x.

    The efficient form of RoFormer §3.4.2, Eq. (34): R_m x = x ⊙ cos(mθ) + rotate(x) ⊙ sin(mθ),
    pair by pair:  x'_a = x_a cos mθ_f − x_b sin mθ_f,   x'_b = x_a sin mθ_f + x_b cos mθ_f,
    where (a, b) = (2f, 2f+1) for layout "interleaved" (paper) and (f, f + d/2) for "half"
    (GPT-NeoX / HF Llama).

    positions may be any numbers: negative, past any trained length, or fractional (Position
    Interpolation divides them). inv_freq overrides θ (the context-extension schemes in
    encoders/rope_scaling.py change only the frequencies); base is ignored when it is given.
    """
    _check_layout(layout)
    d = x.shape[-1]
    _check_dim(d)
    if inv_freq is None:
        inv_freq = rope_frequencies(d, base)
    if inv_freq.shape != (d // 2,):
        raise ValueError(f"inv_freq has shape {tuple(inv_freq.shape)}; a head of size {d} needs ({d // 2},)")
    angles = rotation_angles(positions, inv_freq)  # (n, d/2) float64
    if angles.shape[0] != x.shape[-2]:
        raise ValueError(f"{angles.shape[0]} positions for {x.shape[-2]} rows of x")
    cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)  # (n, d/2)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]  # (..., n, d/2) each
        out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1)  # (..., n, d/2, 2)
        return out.flatten(-2)  # (..., n, d): a_0, b_0, a_1, b_1, …
    a, b = x[..., : d // 2], x[..., d // 2 :]  # (..., n, d/2) each
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)  # (..., n, d)


def rotation_matrix(
    position: float, d: int, base: float = 10000.0, layout: str = "interleaved", inv_freq: Tensor | None = None
) -> Tensor:
    """R_m as an explicit (d, d) float64 matrix (RoFormer §3.2.2, Eq. 13): block-diagonal 2×2
    rotations in the interleaved layout; the same blocks spread over (f, f + d/2) in the half one.

    Built entry by entry — not by calling apply_rotary — so the two can check each other.
    """
    _check_layout(layout)
    theta = rope_frequencies(d, base) if inv_freq is None else inv_freq.to(torch.float64)  # (d/2,)
    R = torch.zeros(d, d, dtype=torch.float64)
    for f in range(d // 2):
        a, b = (2 * f, 2 * f + 1) if layout == "interleaved" else (f, f + d // 2)
        c, s = math.cos(position * float(theta[f])), math.sin(position * float(theta[f]))
        R[a, a], R[a, b] = c, -s
        R[b, a], R[b, b] = s, c
    return R


def half_split_permutation(d: int) -> Tensor:
    """perm (d,) with x_half = x_interleaved[..., perm]: P sends interleaved channel 2f to f and
    2f+1 to f + d/2, so perm = [0, 2, 4, …, d−2, 1, 3, …, d−1].

    Then apply_rotary(x[..., perm], layout="half") == apply_rotary(x, layout="interleaved")[..., perm]
    and, because a permutation preserves dot products, both layouts give the same logits.
    """
    _check_dim(d)
    return torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])  # (d,)


def meta_to_hf_rows(w: Tensor, n_heads: int) -> Tensor:
    """The rows of a Meta Llama W_q or W_k (out, in), reordered for Hugging Face's half-split RoPE.

    Meta's reference code rotates interleaved pairs (2f, 2f+1) of each head; HF's `rotate_half`
    pairs channel f with f + d/2. Hugging Face's conversion script (convert_llama_weights_to_hf.py,
    `permute`) therefore reorders the rows of each head:

        w.view(n_heads, d/2, 2, in).transpose(1, 2).reshape(out, in)

    so HF row f of a head is Meta row 2f and HF row d/2 + f is Meta row 2f + 1: per head, exactly
    `half_split_permutation(d)`. Then q_hf = q_meta[perm] and, by that permutation's identity, the
    half-split rotation of q_hf gives the same logits as the interleaved rotation of q_meta.
    """
    rows, cols = w.shape
    if n_heads < 1 or rows % n_heads or (rows // n_heads) % 2:
        raise ValueError(f"{rows} rows do not split into {n_heads} heads of an even size")
    return w.reshape(n_heads, rows // n_heads // 2, 2, cols).transpose(1, 2).reshape(rows, cols)  # (out, in)


def long_term_decay(d: int, distances: Numbers, base: float = 10000.0, inv_freq: Tensor | None = None) -> Tensor:
    """The paper's long-term-decay bound, averaged over pairs (RoFormer §3.4.3, Eq. 37):

        S_u = Σ_(f<u) e^(ιΔθ_f),  u = 1 … d/2;    returns (1/(d/2)) Σ_u |S_u|   for each distance Δ.

    |Σ_f h_f e^(ιΔθ_f)| ≤ (max_f |h_(f+1) − h_f|) · Σ_u |S_u|: the bound on how large a q·k score can
    be at distance Δ shrinks (with oscillation) as |Δ| grows. |S_u| is even in Δ, so the sign
    convention does not matter here. Returns float64 (len(distances),).
    """
    theta = rope_frequencies(d, base) if inv_freq is None else inv_freq.to(torch.float64)  # (d/2,)
    delta = as_float64(distances)  # (K,)
    phase = delta[:, None] * theta[None, :]  # (K, d/2)
    re = torch.cumsum(torch.cos(phase), dim=1)  # Re S_u for u = 1 … d/2, (K, d/2)
    im = torch.cumsum(torch.sin(phase), dim=1)  # Im S_u
    return torch.sqrt(re**2 + im**2).mean(dim=1)  # (K,)


@dataclass(frozen=True)
class RopeConfig:
    base: float = 10000.0  # the paper's base: the slowest pair turns once every ~2π·base positions
    layout: str = "interleaved"  # "interleaved" (paper) or "half" (GPT-NeoX / HF Llama)
    # Partial rotary: only the first r channels of each head rotate, the rest pass unchanged; None
    # rotates all d. GPT-J's `rotary_dim`, GPT-NeoX's and Phi's `partial_rotary_factor` (r = d·factor).
    # As in both, θ_f = base^(−2f/r) over the r rotated channels, and the layout applies inside them.
    rotary_dim: int | None = None


class RoPE(PositionalEncoding):
    """Rotates each head's q and k by their positions before the dot product.

    Named terms — a choice, explained: the rotated score (R_i q)·(R_j k)/√d is split into
        content   q·k/√d                          what the same q and k score with no positions
        position  (R_i q)·(R_j k)/√d − q·k/√d     the change the rotation makes = qᵀ(R_(j−i) − I)k/√d
    The sum is exactly RoPE's logit. Scaling "position" to 0 gives the unrotated (NoPE) score, 1 gives
    RoPE, so the attention lab's content-vs-position dial interpolates between the two. Unlike an
    additive bias, the position term is *not* content-free: it is qᵀ(R_(j−i) − I)k, zero on the
    diagonal (i = j) and zero whenever q or k is zero — RoPE cannot express position without
    content, which is the point the dial makes visible.

    Subclasses (encoders/rope_scaling.py) override `frequencies`, `attention_factor` and
    `pair_scales`; the rotation itself is always `apply_rotary`.
    """

    name = "rope"
    label = "RoPE (Su et al. 2021)"
    kind = "rotary"
    paper = PAPER
    relative_sign = Difference("key", "query")  # j − i
    term_names = ("content", "position")
    shift_invariant = True
    # The "Stretching RoPE" chapter's short id for how this class sets θ_f (its catalogue key is
    # rope_scaling.scheme.<id>); every RoPE subclass in the registry is one scheme there.
    scheme: ClassVar[str] = "rope"
    # Whether stretching the context changes θ_f: PI, NTK and YaRN do; RoPE and xPos keep RoPE's.
    changes_frequencies: ClassVar[bool] = False
    config: RopeConfig

    def __init__(
        self, d_model: int, n_heads: int, config: RopeConfig | None = None, generator: torch.Generator | None = None
    ) -> None:
        super().__init__(d_model, n_heads, config or RopeConfig(), generator)
        _check_dim(self.d_head)
        _check_layout(self.config.layout)
        if self.config.base <= 1:
            raise ValueError("base must be greater than 1")
        r = self.d_head if self.config.rotary_dim is None else self.config.rotary_dim
        if r < 2 or r % 2 or r > self.d_head:
            raise ValueError(
                f"rotary_dim must be even and between 2 and the head size {self.d_head} (got {r}): the "
                "rotated channels turn in 2-D pairs, and a head has no more channels to rotate."
            )
        self.rotary_dim = r  # r: channels 0 … r−1 of each head rotate, r … d−1 pass unchanged

    # -- configuration -------------------------------------------------------------------------
    @classmethod
    def stretched_config(
        cls,
        base: float,
        scale: float,
        original_length: int,
        scale_base: float = 512.0,
        beta_fast: float = 32.0,
        beta_slow: float = 1.0,
    ) -> RopeConfig:
        """This scheme's config for a context stretched s = `scale` times past `original_length`
        trained positions; the keywords are other schemes' knobs (at their configs' defaults), taken
        by every scheme so that one call configures any of them. Plain RoPE has nothing to stretch."""
        return RopeConfig(base=base)

    @classmethod
    def config_for_lengths(cls, trained: int, run: int) -> RopeConfig:
        """Stretched just enough to cover the run: s = max(1, run / trained), L = trained."""
        return cls.stretched_config(RopeConfig.base, max(1.0, run / trained), trained)

    # -- what subclasses change ----------------------------------------------------------------
    def frequencies(self, seq_len: int) -> Tensor:
        """θ_f (r/2,) float64 used for a sequence whose largest position is seq_len − 1 (r = d unless
        the config's rotary_dim rotates fewer channels)."""
        return rope_frequencies(self.rotary_dim, self.config.base)

    def attention_factor(self, seq_len: int) -> float:
        """Multiplies both rotated q and k (so the logits by its square); 1 for plain RoPE."""
        return 1.0

    def pair_scales(self, positions: Tensor, role: str, centre: float) -> Tensor | None:
        """Per-position, per-pair magnitude factors (n, r/2) (xPos), or None."""
        return None

    def pair_decay(self) -> tuple[Tensor, float] | None:
        """(ζ_f (d/2,) float64, γ) when pair f's share of the score is multiplied by ζ_f^((i − j)/γ)
        (xPos); None for a pure rotation, which keeps the norms of q and k."""
        return None

    # -- the rotation --------------------------------------------------------------------------
    def rotate(self, x: Tensor, positions: Tensor, role: str, seq_len: int, centre: float) -> Tensor:
        """x (b, h, n, d) at `positions` (n,) → rotated (and, for subclasses, scaled) (b, h, n, d).

        role is "query" or "key"; seq_len and centre are shared by queries and keys of one call.
        With rotary_dim r < d, channels r … d−1 pass unchanged (GPT-NeoX's `q_pass`) and the
        scaling below touches only the rotated ones.
        """
        r = self.rotary_dim
        x_rot = x[..., :r]  # (b, h, n, r); all of x when r = d
        out = apply_rotary(x_rot, positions, layout=self.config.layout, inv_freq=self.frequencies(seq_len))
        scales = self.pair_scales(positions, role, centre)  # (n, r/2) or None
        if scales is not None:
            per_channel = _pairs_to_channels(scales, self.config.layout).to(x.dtype)  # (n, r)
            out = out * per_channel  # (b, h, n, r)
        factor = self.attention_factor(seq_len)
        out = out * factor if factor != 1.0 else out
        if r == x.shape[-1]:
            return out
        return torch.cat((out, x[..., r:]), dim=-1)  # (b, h, n, d)

    def logit_terms(
        self, q: Tensor, k: Tensor, q_positions: Tensor, k_positions: Tensor, causal: bool
    ) -> AttentionTerms:
        """q (b, h, i, d), k (b, h, j, d) → content and position terms (b, h, i, j)."""
        # One length for both sides, as HF computes max(position_ids) + 1 for the whole call.
        lo, hi = _position_range(q_positions, k_positions)
        seq_len = math.floor(hi) + 1
        # xPos centres the positions so that its factors ζ^(±pos/γ) stay near 1. Any common centre
        # cancels in q·k; the midpoint of the positions in play keeps the exponents smallest even
        # when all positions are shifted far from 0.
        # Deviation from torchscale: it centres at ⌈L/2⌉ for positions 0…L−1 (one position away from
        # the midpoint); the logits are identical.
        centre = (lo + hi) / 2
        content = content_logits(q, k)  # (b, h, i, j)
        rotated = content_logits(
            self.rotate(q, q_positions, "query", seq_len, centre),  # (b, h, i, d)
            self.rotate(k, k_positions, "key", seq_len, centre),  # (b, h, j, d)
        )  # (b, h, i, j)
        return AttentionTerms({"content": content, "position": rotated - content})


def _position_range(*position_sets: Numbers) -> tuple[float, float]:
    """(smallest, largest) position over all the given sets; (0, 0) when they are all empty."""
    flat = [as_float64(p) for p in position_sets]
    flat = [p for p in flat if p.numel()]
    if not flat:
        return 0.0, 0.0
    allpos = torch.cat(flat)
    return float(allpos.min()), float(allpos.max())


def _pairs_to_channels(per_pair: Tensor, layout: str) -> Tensor:
    """(n, d/2) → (n, d): each pair's value on both of its channels, in the given layout."""
    if layout == "interleaved":
        return per_pair.repeat_interleave(2, dim=-1)  # (n, d): v_0, v_0, v_1, v_1, …
    return torch.cat((per_pair, per_pair), dim=-1)  # (n, d): v_0 … v_last, v_0 … v_last
