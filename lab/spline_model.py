"""A small Spline-based Transformer autoencoder (Chandran et al., ECCV 2024) and its PE baseline.

Axis legend: b batch, n sequence length, K control points, D model/latent dimension.

Spline model ("spline"), no positional encoding anywhere:
    points (b, n, 2) ─embed→ tokens (b, n, D) ‖ K learned control tokens (K, D) → (b, n + K, D)
      ─encoder blocks (bidirectional, no PE)→ outputs at the K control slots ─linear→ control
      points P (b, K, D) ─B-spline sampled at n parameters→ (b, n, D) ─decoder blocks→ (b, n, 2)

Baseline ("pe-cat"), the same blocks and the same K-vector bottleneck, but positions from a
sinusoidal encoding instead of a spline:
    encoder input = embed(points) + PE(0…n−1), control tokens appended as above → P (b, K, D);
    decoder input = [P ; q + PE(0…n−1)] (K + n tokens, q one learned query vector), read at the n
    query slots. "Cat" because the latent vectors are concatenated with the position queries.

Baseline ("alibi-cat"), the paper's kind of baseline (ALiBi, per a secondary summary): the same, but
nothing is added to any token; every block adds the symmetric ALiBi bias −m_h·|i − j| over the
token positions (encoder: inputs 0…n−1, control tokens n…n+K−1; decoder: latents 0…K−1, queries
K…K+n−1). Our reconstruction of "ALiBi-Cat"; the paper's exact variant is unknown.

Our choices where the paper is silent (METHODS §12 "Unknown"): clamped cubic B-spline, K = 10
control points, control tokens appended after the input tokens, the decoder sees the spline samples
only, 2 encoder + 2 decoder blocks, D = 32, 4 heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from encoders import build
from encoders.attention import TransformerBlock
from encoders.spline import SplineBottleneck


@dataclass(frozen=True)
class SplineAEConfig:
    kind: str = "spline"  # "spline" (no PE, B-spline bottleneck), "pe-cat" (sinusoidal) or "alibi-cat" (ALiBi)
    d_model: int = 32  # token, latent and control-point dimension D
    n_heads: int = 4
    n_enc: int = 2  # encoder blocks
    n_dec: int = 2  # decoder blocks
    n_ctrl: int = 10  # K control points (the paper does not say; our choice: a cubic then has 7 knot spans, so
    # one control point acts on at most 4 of them — at K = 6 a middle point would act on all 3)
    degree: int = 3  # cubic (our choice)
    knots: str = "clamped"  # the curve starts at P_0 and ends at P_{K−1} (our choice)
    point_dim: int = 2  # (x, y)
    seed: int = 0


KINDS = ("spline", "pe-cat", "alibi-cat")


class SplineAutoencoder(nn.Module):
    def __init__(self, config: SplineAEConfig = SplineAEConfig()):
        super().__init__()
        if config.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {config.kind!r}")
        self.config = c = config
        g = torch.Generator().manual_seed(c.seed)
        torch.manual_seed(c.seed)  # nn.Linear / LayerNorm defaults draw from the global RNG
        D = c.d_model
        pe = {"spline": "none", "pe-cat": "sinusoidal", "alibi-cat": "alibi"}[c.kind]
        self.embed = nn.Linear(c.point_dim, D)
        # The control tokens must differ from each other: with no positional encoding, identical
        # tokens would get identical outputs (and identical gradients) forever.
        self.control_tokens = nn.Parameter(torch.randn(c.n_ctrl, D, generator=g))  # (K, D)
        self.enc = nn.ModuleList(
            TransformerBlock(build(pe, D, c.n_heads, c.seed + k), generator=g) for k in range(c.n_enc)
        )
        self.enc_norm = nn.LayerNorm(D)
        self.to_ctrl = nn.Linear(D, D)
        self.dec = nn.ModuleList(
            TransformerBlock(build(pe, D, c.n_heads, c.seed + 100 + k), generator=g) for k in range(c.n_dec)
        )
        self.dec_norm = nn.LayerNorm(D)
        self.out = nn.Linear(D, c.point_dim)
        if c.kind == "spline":
            self.spline = SplineBottleneck(c.n_ctrl, c.degree, c.knots)
        else:
            if c.kind == "pe-cat":
                self.pe = build("sinusoidal", D, c.n_heads, c.seed)
            self.query = nn.Parameter(torch.randn(D, generator=g))  # (D,)

    # --- the two halves, separately, so the page can edit control points in between ---------------
    def encode(self, points: Tensor) -> Tensor:
        """points (b, n, 2) → control points (b, K, D)."""
        b, n, _ = points.shape
        x = self.embed(points)  # (b, n, D)
        if self.config.kind == "pe-cat":
            x = self.pe.encode_input(x, torch.arange(n))  # (b, n, D)
        x = torch.cat([x, self.control_tokens.expand(b, -1, -1)], dim=1)  # (b, n + K, D)
        for block in self.enc:
            x, _ = block(x, causal=False)  # (b, n + K, D)
        return self.to_ctrl(self.enc_norm(x[:, n:]))  # (b, K, D)

    def trajectory(self, ctrl: Tensor, n: int) -> Tensor:
        """Spline model only: control points (b, K, D) → the latent trajectory sampled n times (b, n, D)."""
        return self.spline(ctrl, n)  # (b, n, D)

    def decode(self, ctrl: Tensor, n: int) -> Tensor:
        """control points (b, K, D) → reconstructed points (b, n, 2)."""
        if self.config.kind == "spline":
            x = self.trajectory(ctrl, n)  # (b, n, D)
        else:
            b = ctrl.shape[0]
            q = self.query.expand(b, n, -1)  # (b, n, D) identical query tokens ...
            if self.config.kind == "pe-cat":
                q = self.pe.encode_input(q, torch.arange(n))  # (b, n, D) ... told apart by PE(j)
            # ... or, for ALiBi, only by their distances to the other tokens (positions 0 … K + n − 1)
            x = torch.cat([ctrl, q], dim=1)  # (b, K + n, D)
        for block in self.dec:
            x, _ = block(x, causal=False)
        x = x[:, -n:]  # (b, n, D) the query slots (all of x for the spline model)
        return self.out(self.dec_norm(x))  # (b, n, 2)

    def forward(self, points: Tensor) -> Tensor:
        return self.decode(self.encode(points), points.shape[1])  # (b, n, 2)
