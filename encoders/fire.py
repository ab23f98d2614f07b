"""FIRE: Functional Interpolation for Relative Positions (Li, You, Guruganesh, Ainslie, Ontañón,
Zaheer, Sanghai, Yang, Kumar, Bhojanapalli; ICLR 2024, "Functional Interpolation for Relative
Positions Improves Long Context Transformers").

Axis legend: b batch, h heads, i query position, j key position, n length, d head dimension,
w the MLP's hidden width.

Nothing is added to the input. A small learned function of the *normalised* distance is added to the
scaled logits of each head (paper §3.2, "FIRE"):

    logit_hij = q_i·k_j / √d + b_h(i, j)

    b_h(i, j) = f_θ(ψ(i − j) / ψ(max(L, i)))_h          j ≤ i (the causal mask hides j > i)
    ψ(x)      = log(c·x + 1)                             c > 0, learned ("amplifying local differences")
    L         = |λ·L₀|                                   the learned threshold: L₀ fixed, λ learned
    f_θ       = W₂·ReLU(W₁·x + β₁) + β₂                  1 → w = 32 → h, one output per head

Progressive interpolation (§3.2): dividing by ψ(i) maps every key of query i into [0, 1], so a longer
input only fills [0, 1] more densely instead of reaching distances the MLP never saw. The threshold
L keeps short queries from being normalised by a tiny ψ(i): for i < L every row uses ψ(L), so there
the bias depends on i − j alone (a Toeplitz matrix); past L it depends on (i − j) and i together.

Defaults as the paper's appendix listing (not confirmed against the paper text in this file's
history): w = 32, ReLU, c₀ = 0.1, L₀ = 512 with λ₀ = 1, a 1e-6 added to the normaliser.

Relative sign: i − j (query − key), ≥ 0 wherever the causal mask lets a query look.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .base import AttentionTerms, Difference, Paper, PositionalEncoding, content_logits

PAPER = Paper(
    "Li, You, Guruganesh, Ainslie, Ontañón, Zaheer, Sanghai, Yang, Kumar, Bhojanapalli",
    2024,
    "Functional Interpolation for Relative Positions Improves Long Context Transformers",
    "https://arxiv.org/abs/2310.04418",
)


def psi(x: Tensor, c: Tensor) -> Tensor:
    """ψ(x) = log(c·x + 1) (paper §3.2, "amplifying the differences among local positions"): monotone,
    with a slope that falls, so near distances stay apart while far ones crowd together.

    Deviation from paper: taken of |c·x|, as the appendix listing does, so that a key after the query
    (x < 0, only seen without a causal mask) is treated like one as far before it.
    """
    return torch.log1p((c * x).abs())


def normalised_distance(q_positions: Tensor, k_positions: Tensor, c: Tensor, threshold: Tensor, eps: float) -> Tensor:
    """ψ(i − j) / ψ(max(L, i)) (paper §3.2, Eq. for b_FIRE with "thresholding the normaliser"), (i, j).

    In [0, 1] for 0 ≤ j ≤ i (ψ is increasing and i − j ≤ i ≤ max(L, i)); the +eps (the listing's
    1e-6) only keeps the division finite at i = 0, L = 0.
    """
    i = q_positions.to(c.dtype)  # (i,)
    j = k_positions.to(c.dtype)  # (j,)
    rel = psi(i[:, None] - j[None, :], c)  # (i, j)
    norm = psi(torch.maximum(i, threshold), c) + eps  # (i,)
    return rel / norm[:, None]  # (i, j)


def mlp(x: Tensor, w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor) -> Tensor:
    """f_θ(x) = W₂·ReLU(W₁·x + β₁) + β₂ (paper §3.2, f_θ "an MLP"), applied to every entry.

    x: (i, j); w1, b1: (w,); w2: (h, w); b2: (h,) → (h, i, j).
    """
    hidden = torch.relu(x[..., None] * w1 + b1)  # (i, j, w)
    return (hidden @ w2.T + b2).permute(2, 0, 1)  # (i, j, h) → (h, i, j)


@dataclass(frozen=True)
class FireConfig:
    width: int = 32  # the MLP's hidden width w (the paper's 32)
    c_init: float = 0.1  # ψ's c at the start (the paper's init_c); learned
    threshold: float = 512.0  # L₀ (the paper's init_L, fixed); L = |λ·L₀| with λ learned, λ₀ = 1
    eps: float = 1e-6  # added to ψ(max(L, i)) (the paper's listing)


class Fire(PositionalEncoding):
    """A learned MLP of the progressively interpolated distance, one output per head."""

    name = "fire"
    label = "FIRE (Li et al. 2024)"
    kind = "bias"
    paper = PAPER
    relative_sign = Difference("query", "key")  # i − j
    term_names = ("content", "position")
    # Past the threshold L the bias depends on the query's position too (ψ(i) normalises it): moving
    # every position by the same amount changes the picture.
    shift_invariant = False
    config: FireConfig
    threshold_init: Tensor  # () float32 buffer L₀, registered in __init__

    def __init__(
        self, d_model: int, n_heads: int, config: FireConfig | None = None, generator: torch.Generator | None = None
    ) -> None:
        config = config or FireConfig()
        if config.width < 1 or config.c_init <= 0 or config.threshold < 0 or config.eps <= 0:
            raise ValueError(f"FIRE needs width ≥ 1, c_init > 0, threshold ≥ 0 and eps > 0: {config}")
        super().__init__(d_model, n_heads, config, generator)
        w = config.width

        def uniform(shape: tuple[int, ...], bound: float) -> Tensor:  # torch.nn.Linear's default init
            return (torch.rand(shape, generator=generator) * 2 - 1) * bound

        self.w1 = nn.Parameter(uniform((w,), 1.0))  # (w,)  fan-in 1
        self.b1 = nn.Parameter(uniform((w,), 1.0))  # (w,)
        self.w2 = nn.Parameter(uniform((n_heads, w), 1 / math.sqrt(w)))  # (h, w)
        self.b2 = nn.Parameter(uniform((n_heads,), 1 / math.sqrt(w)))  # (h,)
        self.c = nn.Parameter(torch.tensor(config.c_init))  # ()
        self.threshold_scale = nn.Parameter(torch.tensor(1.0))  # () λ
        self.register_buffer("threshold_init", torch.tensor(config.threshold), persistent=False)  # () L₀

    @classmethod
    def config_for_lengths(cls, trained: int, run: int) -> FireConfig:
        """A model "trained" on `trained` tokens: the threshold at the paper's share of its training
        length (L₀ = 512 of 2048, a quarter), so queries past it are normalised by their position."""
        return FireConfig(threshold=max(1.0, trained / 4))

    @classmethod
    def training_config(cls, max_len: int) -> FireConfig:
        """The toy and byte models: the same quarter of the longest training string as L₀."""
        return FireConfig(threshold=max(1.0, max_len / 4))

    def relative_up_to(self) -> float:
        """Every query i ≤ L is normalised by the same ψ(L): up to L the bias is a function of i − j."""
        return float(self.threshold().detach())

    def threshold(self) -> Tensor:
        """L = |λ·L₀| () float64."""
        return (self.threshold_scale.to(torch.float64) * self.threshold_init.to(torch.float64)).abs()

    def normalised(self, q_positions: Tensor, k_positions: Tensor) -> Tensor:
        """ψ(i − j) / ψ(max(L, i)) (i, j) float64, what the MLP reads."""
        c = self.c.to(torch.float64)
        return normalised_distance(
            q_positions.to(c.device), k_positions.to(c.device), c, self.threshold(), self.config.eps
        )

    def bias(self, q_positions: Tensor, k_positions: Tensor) -> Tensor:
        """b_h(i, j) = f_θ(normalised) (h, i, j) float64, on both sides of the diagonal."""
        x = self.normalised(q_positions, k_positions)  # (i, j)
        f64 = torch.float64
        return mlp(x, self.w1.to(f64), self.b1.to(f64), self.w2.to(f64), self.b2.to(f64))  # (h, i, j)

    def logit_terms(
        self, q: Tensor, k: Tensor, q_positions: Tensor, k_positions: Tensor, causal: bool
    ) -> AttentionTerms:
        # Added to the scaled logits, like every other bias here (the paper writes the bias beside
        # the content logits, §2, and leaves the 1/√d to the attention it modifies).
        content = content_logits(q, k)  # (b, h, i, j)
        position = self.bias(q_positions, k_positions).to(q.dtype)[None].expand_as(content)  # (b, h, i, j)
        extras = {"normalised": self.normalised(q_positions, k_positions).detach()}
        return AttentionTerms({"content": content, "position": position}, extras)
