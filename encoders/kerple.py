"""KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation (Chi, Fan, Ramadge,
Rudnicky; NeurIPS 2022).

Axis legend: b batch, h heads, i query position, j key position, n length, d head dimension.

Nothing is added to the input. Each head h adds a learned penalty of the distance |i − j| to its
scaled logits: a conditionally positive definite kernel −k̃, made a bias by the paper's shift (§3,
"Kernelized Relative Positional Embedding"; §4 gives the two variants):

    logit_hij = q_i·k_j / √d + b_h(|i − j|)

    logarithmic  b_h(r) = −r₁·log(1 + r₂·r)        r₁, r₂ > 0
    power        b_h(r) = −r₁·r^r₂                  r₁ > 0, 0 < r₂ ≤ 2

    r₁, r₂: two learned scalars per head (the paper's r_1, r_2). Power with r₂ = 1 is ALiBi with a
    learned slope; the paper reports the logarithmic variant as its best.

Relative sign: the bias depends on |i − j|; causally (j ≤ i) that is i − j (query − key), the sign
ALiBi uses, so the two chapters' axes read alike.

Reference: chijames/KERPLE (a gpt-neox fork), `ParallelKerpleLog` and `ParallelKerplePower` in
megatron/model/positional_embeddings.py: the log kernel is −p·log(1 + a·|m − n|) (p = r₁, a = r₂),
the power kernel −a·|m − n|^p (a = r₁, p = r₂); both are added to the already scaled scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from .base import AttentionTerms, Difference, Paper, PositionalEncoding, content_logits

PAPER = Paper(
    "Chi, Fan, Ramadge, Rudnicky",
    2022,
    "KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation",
    "https://arxiv.org/abs/2205.09921",
)

Variant = Literal["log", "power"]
POWER_MAX = 2.0  # §4: the power kernel −r₁·r^r₂ is conditionally positive definite only for 0 < r₂ ≤ 2


def distance(q_positions: Tensor, k_positions: Tensor) -> Tensor:
    """|i − j| (i, j) float64: the only thing about the positions a KERPLE bias sees."""
    i = q_positions.to(torch.float64)[:, None]  # (i, 1)
    j = k_positions.to(torch.float64)[None, :]  # (1, j)
    return (i - j).abs()  # (i, j)


def kerple_log_bias(r1: Tensor, r2: Tensor, dist: Tensor) -> Tensor:
    """Logarithmic variant (paper §4, "logarithmic variant"): b_h(i, j) = −r₁·log(1 + r₂·|i − j|).

    r1, r2: (h,) positive; dist: (i, j) = |i − j| → (h, i, j). Zero on the diagonal, decreasing with
    the distance, but ever more slowly: a far key keeps a chance that a linear penalty takes away.
    """
    # 0.0 − …, not −…: the diagonal is +0.0, not −0.0 (which hover labels print as "−0").
    return 0.0 - r1[:, None, None] * torch.log1p(r2[:, None, None] * dist[None])  # (h, i, j)


def kerple_power_bias(r1: Tensor, r2: Tensor, dist: Tensor) -> Tensor:
    """Power variant (paper §4, "power variant"): b_h(i, j) = −r₁·|i − j|^r₂, 0 < r₂ ≤ 2.

    r1, r2: (h,) positive; dist: (i, j) → (h, i, j). r₂ = 1 is ALiBi's linear penalty with slope r₁.
    """
    return 0.0 - r1[:, None, None] * dist[None] ** r2[:, None, None]  # (h, i, j)


def project(raw: Tensor, low: float, high: float | None = None) -> Tensor:
    """raw clamped to [low, high] in the forward pass, with raw's gradient passed straight through.

    The reference clamps the stored parameter in place before every use (`bias_p.data.clamp(…)`),
    a projected gradient step. An encoder here is pure at call time, so it clamps a copy instead;
    passing the gradient through keeps a parameter that strayed below `low` able to come back, as
    the in-place projection does (a plain clamp would give it zero gradient there for good).
    """
    # raw − raw.detach() is exactly 0 in value and the identity in gradient.
    return raw.detach().clamp(min=low, max=high) + (raw - raw.detach())


@dataclass(frozen=True)
class KerpleConfig:
    variant: Variant = "log"  # "log" (the paper's best, §5) or "power"
    # The smallest r₁, r₂ may take; the reference's eps (1e-2) keeps both strictly positive.
    eps: float = 1e-2
    # Initial draws, as the reference: r ~ U(0, scale) per head, then clamped to ≥ eps. Log: r₁ (its
    # p) ~ U(0, 2), r₂ (its a) ~ U(0, 1); power: r₁ (its a) ~ U(0, 1), r₂ (its p) ~ U(0, 2).
    r1_init_scale: float | None = None  # None: 2 for log, 1 for power
    r2_init_scale: float | None = None  # None: 1 for log, 2 for power


class Kerple(PositionalEncoding):
    """A learned kernel of the distance per head, added to the scaled content logits."""

    name = "kerple"
    label = "KERPLE (Chi et al. 2022)"
    kind = "bias"
    paper = PAPER
    relative_sign = Difference("query", "key")  # i − j (the bias sees |i − j|)
    term_names = ("content", "position")
    shift_invariant = True
    config: KerpleConfig

    def __init__(
        self, d_model: int, n_heads: int, config: KerpleConfig | None = None, generator: torch.Generator | None = None
    ) -> None:
        config = config or KerpleConfig()
        if config.variant not in ("log", "power"):
            raise ValueError(f"variant must be 'log' or 'power', not {config.variant!r}")
        if not 0 < config.eps <= 1:
            raise ValueError(f"eps must lie in (0, 1], not {config.eps}")
        super().__init__(d_model, n_heads, config, generator)
        log = config.variant == "log"
        s1 = config.r1_init_scale if config.r1_init_scale is not None else (2.0 if log else 1.0)
        s2 = config.r2_init_scale if config.r2_init_scale is not None else (1.0 if log else POWER_MAX)
        r1 = torch.rand(n_heads, generator=generator) * s1  # (h,)
        r2 = torch.rand(n_heads, generator=generator) * s2  # (h,)
        self.r1 = nn.Parameter(r1.clamp(min=config.eps))  # (h,)
        self.r2 = nn.Parameter(r2.clamp(min=config.eps, max=None if log else POWER_MAX))  # (h,)

    def parameters_in_range(self) -> tuple[Tensor, Tensor]:
        """(r₁, r₂) (h,) float64 as the bias uses them: r₁, r₂ ≥ eps and, for power, r₂ ≤ 2."""
        eps, high = self.config.eps, (POWER_MAX if self.config.variant == "power" else None)
        r1 = project(self.r1.to(torch.float64), eps)  # (h,)
        r2 = project(self.r2.to(torch.float64), eps, high)  # (h,)
        return r1, r2

    def bias(self, q_positions: Tensor, k_positions: Tensor) -> Tensor:
        """The (h, i, j) float64 bias for these positions, on both sides of the diagonal (|i − j|)."""
        r1, r2 = self.parameters_in_range()
        dist = distance(q_positions, k_positions).to(r1.device)  # (i, j)
        if self.config.variant == "log":
            return kerple_log_bias(r1, r2, dist)
        return kerple_power_bias(r1, r2, dist)

    def logit_terms(
        self, q: Tensor, k: Tensor, q_positions: Tensor, k_positions: Tensor, causal: bool
    ) -> AttentionTerms:
        # Added after the 1/√d of content_logits, as the reference adds it to gpt-neox's scaled scores.
        # The paper's kernel is of |m − n|, so it needs no other form without a causal mask: a key
        # after the query is penalised like one as far before it.
        content = content_logits(q, k)  # (b, h, i, j)
        position = self.bias(q_positions, k_positions).to(q.dtype)[None].expand_as(content)  # (b, h, i, j)
        r1, r2 = self.parameters_in_range()
        return AttentionTerms({"content": content, "position": position}, {"r1": r1.detach(), "r2": r2.detach()})
