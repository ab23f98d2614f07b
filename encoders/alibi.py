"""ALiBi: Attention with Linear Biases (Press, Smith, Lewis; ICLR 2022, "Train Short, Test Long").

Axis legend: b batch, h heads, i query position, j key position, n length, d head dimension.

Nothing is added to the input. Each head h adds a fixed penalty, linear in the distance, to its
already scaled logits (paper §3):

    logit_hij = q_i·k_j / √d − m_h · (i − j)        for j ≤ i (the causal mask hides j > i)

    m_h: one fixed slope per head, a geometric sequence (alibi_slopes); nothing is learned.

Relative sign: i − j (query − key), ≥ 0 wherever the causal mask lets a query look.

The reference code (ofirpress/attention_with_linear_biases, fairseq `buffered_future_mask`) adds
+m_h · j instead: one row (h, 1, j), the same for every query. That is −m_h·(i − j) plus m_h·i, a
constant along each query row, and softmax ignores a per-row constant. Both forms therefore give
identical attention — under the mask and even without it, since both are linear in j. What the mask
provides is that every visible key has j ≤ i, so the linear term *is* a distance penalty. Without a
mask the linear term rewards keys after the query; bidirectional use needs a symmetric distance
(−m·|i − j|), which the paper does not define (its README points to issue #5 for it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

from .base import AttentionTerms, Difference, Paper, PositionalEncoding, content_logits

PAPER = Paper(
    "Press, Smith, Lewis",
    2022,
    "Train Short, Test Long: Attention with Linear Biases Enables Input Length Extrapolation",
    "https://arxiv.org/abs/2108.12409",
)


def _power_of_two_slopes(n_heads: int) -> Tensor:
    """m_h = 2^(−8h/H), h = 1 … H (paper §3): a geometric sequence whose start and ratio are 2^(−8/H)."""
    h = torch.arange(1, n_heads + 1, dtype=torch.float64)  # (h,)
    return 2.0 ** (-8.0 * h / n_heads)


def alibi_slopes(n_heads: int) -> Tensor:
    """The per-head slopes m_h (h,) float64, in head order, exactly as the reference rule builds them.

    H a power of two: 2^(−8/H), 2^(−16/H), …, 2^(−8) (paper §3; for H = 8: 1/2, 1/4, …, 1/256).
    Otherwise, with c = 2^⌊log2 H⌋: the c slopes of the c-head rule, then the first H − c slopes
    at every other position (the 1st, 3rd, 5th, …) of the 2c-head rule, i.e. 2^(−4(2t−1)/c) for
    t = 1 … H − c. For H = 6: 1/4, 1/16, 1/64, 1/256, then 1/2, 1/8.
    The result is *not* monotone in the head index for such H; it must not be sorted — a trained
    checkpoint's head k was trained with exactly the k-th slope of this list.
    """
    if n_heads < 1:
        raise ValueError("n_heads must be at least 1")
    c = 1 << (n_heads.bit_length() - 1)  # 2^⌊log2 H⌋, in integers (no float log2 rounding)
    if c == n_heads:
        return _power_of_two_slopes(n_heads)
    extra = _power_of_two_slopes(2 * c)[0::2][: n_heads - c]  # (H − c,)
    return torch.cat([_power_of_two_slopes(c), extra])  # (h,)


def alibi_bias(slopes: Tensor, q_positions: Tensor, k_positions: Tensor) -> Tensor:
    """The paper's bias −m_h·(i − j) (paper §3 and the right-hand matrix of its Figure 3:
    softmax(q_i Kᵀ + m·[−(i−1), …, −1, 0]) in its 1-based notation), (h, i, j) float64.

    Defined by the paper for j ≤ i only; above the diagonal it is positive and the causal mask hides it.
    Depends on i − j only, so shifting every position by the same amount leaves it unchanged.
    """
    i = q_positions.to(torch.float64)[:, None]  # (i, 1)
    j = k_positions.to(torch.float64)[None, :]  # (1, j)
    # Computed as m·(j − i), which is exactly −m·(i − j) (negation is exact), in one pass over the
    # (h, i, j) grid instead of two; and the diagonal is m·0 = +0.0, not −0.0 (which hover labels
    # would print as "−0").
    return slopes.to(torch.float64)[:, None, None] * (j - i)[None]  # (h, i, j)


def alibi_bias_symmetric(slopes: Tensor, q_positions: Tensor, k_positions: Tensor) -> Tensor:
    """−m_h·|i − j| (h, i, j) float64: a penalty for distance in either direction, used when
    attention has no causal mask. On the causal side (j ≤ i) it equals the paper's bias exactly."""
    # Deviation from paper: the paper defines ALiBi for causal language models only (j ≤ i). Without
    # a mask we use the symmetric distance |i − j|, the form the reference README points to (its
    # issue #5). The literal −m·(i − j) would *reward* keys after the query, more the further away.
    i = q_positions.to(torch.float64)[:, None]  # (i, 1)
    j = k_positions.to(torch.float64)[None, :]  # (1, j)
    return 0.0 - slopes.to(torch.float64)[:, None, None] * (i - j).abs()[None]  # (h, i, j)


def alibi_bias_code(slopes: Tensor, q_positions: Tensor, k_positions: Tensor) -> Tensor:
    """The reference code's bias +m_h·j (fairseq `buffered_future_mask`), repeated over the query
    rows so it has the same (h, i, j) shape as the others. float64.

    Every query row holds the same numbers: the bias knows nothing about the query's position. Under
    softmax it equals −m_h·(i − j), because the two differ by m_h·i, a constant along each row.
    """
    j = k_positions.to(torch.float64)  # (j,)
    row = slopes.to(torch.float64)[:, None] * j[None, :]  # (h, j)
    return row[:, None, :].expand(-1, q_positions.numel(), -1)  # (h, i, j)


@dataclass(frozen=True)
class AlibiConfig:
    # "paper": −m·(i − j) under the causal mask, −m·|i − j| without it (a deviation, see
    #          alibi_bias_symmetric). "code": the reference code's +m·j, whatever the mask.
    form: Literal["paper", "code"] = "paper"


class Alibi(PositionalEncoding):
    """Adds a fixed linear distance penalty per head to the scaled content logits. No parameters."""

    name = "alibi"
    label = "ALiBi (Press, Smith, Lewis 2022)"
    kind = "bias"
    paper = PAPER
    relative_sign = Difference("query", "key")  # i − j
    term_names = ("content", "position")
    shift_invariant = True
    config: AlibiConfig
    slopes: Tensor  # (h,) float64 buffer, registered in __init__

    def __init__(
        self, d_model: int, n_heads: int, config: AlibiConfig | None = None, generator: torch.Generator | None = None
    ) -> None:
        config = config or AlibiConfig()
        if config.form not in ("paper", "code"):
            raise ValueError(f"form must be 'paper' or 'code', not {config.form!r}")
        super().__init__(d_model, n_heads, config, generator)
        # float64 and not persistent: fixed by the rule, never trained, never saved in a checkpoint.
        self.register_buffer("slopes", alibi_slopes(n_heads), persistent=False)  # (h,)

    def bias(self, q_positions: Tensor, k_positions: Tensor, causal: bool) -> Tensor:
        """The (h, i, j) float64 bias this configuration adds for these positions."""
        slopes = self.slopes.to(torch.float64)  # a .float() on the module must not cost precision
        if self.config.form == "code":
            return alibi_bias_code(slopes, q_positions, k_positions)
        if causal:
            return alibi_bias(slopes, q_positions, k_positions)
        return alibi_bias_symmetric(slopes, q_positions, k_positions)

    def logit_terms(
        self, q: Tensor, k: Tensor, q_positions: Tensor, k_positions: Tensor, causal: bool
    ) -> AttentionTerms:
        # The reference passes its bias inside the attention mask to fairseq's MultiheadAttention,
        # which scales q (`q *= self.scaling`, 1/√d) before q·kᵀ and adds the mask afterwards: the
        # bias meets already scaled logits. So we add it after content_logits' division, not inside.
        content = content_logits(q, k)  # (b, h, i, j)
        bias = self.bias(q_positions, k_positions, causal).to(q.dtype)  # (h, i, j)
        position = bias[None].expand_as(content)  # (b, h, i, j), a view: no copy per batch item
        return AttentionTerms({"content": content, "position": position}, {"slopes": self.slopes})
