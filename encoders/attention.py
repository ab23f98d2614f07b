"""The one attention path: every chapter, the attention lab and the toy trainer go through here.

Axis legend: b batch, h heads, i query, j key, n length, d head dim, D model dim (h·d).

    x (b, n, D) ─encode_input→ x' ─W_q,W_k,W_v→ q, k, v (b, h, n, d)
      ─encoder.logit_terms→ named terms (b, h, i, j) ─scale & sum→ logits ─mask→ softmax → weights
      ─weights @ v (+ encoder.value_terms)→ heads (b, h, i, d) ─merge, W_o→ output (b, n, D)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from .base import AttentionTerms, PositionalEncoding, derived_seed


def causal_mask(n_queries: int, n_keys: int, device: torch.device | None = None) -> Tensor:
    """Bool (i, j): True where query i may see key j.

    When there are more keys than queries (a cache), queries are aligned to the *end* of the keys,
    as in tensor2tensor and Transformer-XL: query i sits at key position i + (n_keys − n_queries).
    """
    offset = n_keys - n_queries
    i = torch.arange(n_queries, device=device)[:, None]  # (i, 1)
    j = torch.arange(n_keys, device=device)[None, :]  # (1, j)
    return j <= i + offset  # (i, j)


def split_heads(x: Tensor, n_heads: int) -> Tensor:
    b, n, D = x.shape
    return x.view(b, n, n_heads, D // n_heads).transpose(1, 2)  # (b, h, n, d)


def merge_heads(x: Tensor) -> Tensor:
    b, h, n, d = x.shape
    return x.transpose(1, 2).reshape(b, n, h * d)  # (b, n, D)


@dataclass
class AttentionResult:
    """Everything a page may want to draw, for one layer of self-attention."""

    inputs: Tensor  # (b, n, D)  token embeddings after encode_input
    q: Tensor  # (b, h, i, d)
    k: Tensor  # (b, h, j, d)
    v: Tensor  # (b, h, j, d)
    terms: dict[str, Tensor]  # name → (b, h, i, j), unscaled, unmasked, as the encoder returned them
    logits: Tensor  # (b, h, i, j)  scaled sum of terms, −inf where masked
    weights: Tensor  # (b, h, i, j)  softmax over j; rows sum to 1
    output: Tensor  # (b, n, D)
    extras: dict[str, Tensor] = field(default_factory=dict)


def attend(
    encoder: PositionalEncoding,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    q_positions: Tensor,
    k_positions: Tensor,
    causal: bool,
    term_scales: Mapping[str, float] | None = None,
) -> tuple[AttentionTerms, Tensor, Tensor, Tensor]:
    """Multi-head attention on already projected q, k, v (b, h, n, d).

    Returns (terms, logits, weights, heads) with heads (b, h, i, d).
    """
    parts = encoder.logit_terms(q, k, q_positions, k_positions, causal)
    logits = parts.total(term_scales)  # (b, h, i, j)
    if causal:
        allowed = causal_mask(q.shape[-2], k.shape[-2], device=q.device)  # (i, j)
        logits = logits.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(logits, dim=-1)  # (b, h, i, j)
    heads = weights @ v  # (b, h, i, d)
    extra = encoder.value_terms(weights, q_positions, k_positions)
    if extra is not None:
        heads = heads + extra
    return parts, logits, weights, heads


class SelfAttention(nn.Module):
    """One multi-head self-attention layer with seeded projections and any positional encoding.

    The projections are drawn with std 1/√D so that, for unit-scale inputs, q and k have
    unit-scale entries and q·k/√d is of order 1 — pictures are neither flat nor one-hot.
    """

    def __init__(self, encoder: PositionalEncoding, generator: torch.Generator | None = None):
        super().__init__()
        D = encoder.d_model
        self.encoder = encoder
        self.n_heads = encoder.n_heads
        std = 1.0 / math.sqrt(D)
        self.w_q, self.w_k, self.w_v, self.w_o = (
            nn.Parameter(torch.randn(D, D, generator=generator) * std) for _ in range(4)
        )

    def forward(
        self,
        x: Tensor,
        positions: Tensor | None = None,
        causal: bool = False,
        term_scales: Mapping[str, float] | None = None,
        add_input_encoding: bool = True,
    ) -> AttentionResult:
        """x: token embeddings (b, n, D). `positions` (n,) default 0…n−1.

        `add_input_encoding` is True for a single layer on raw token embeddings (every chapter);
        a deeper model adds the input encoding once, below its first layer, and passes False.
        """
        n = x.shape[1]
        if positions is None:
            positions = torch.arange(n)
        inputs = self.encoder.encode_input(x, positions) if add_input_encoding else x  # (b, n, D)
        q = split_heads(inputs @ self.w_q, self.n_heads)  # (b, h, n, d)
        k = split_heads(inputs @ self.w_k, self.n_heads)  # (b, h, n, d)
        v = split_heads(inputs @ self.w_v, self.n_heads)  # (b, h, n, d)
        parts, logits, weights, heads = attend(self.encoder, q, k, v, positions, positions, causal, term_scales)
        output = merge_heads(heads) @ self.w_o  # (b, n, D)
        return AttentionResult(inputs, q, k, v, parts.terms, logits, weights, output, parts.extras)


def toy_layer(encoder: PositionalEncoding, seed: int) -> SelfAttention:
    """The one-layer model every chapter draws: projections depend on the seed only, never on the
    encoder, so two encodings compared side by side see the same W_q, W_k, W_v, W_o."""
    return SelfAttention(encoder, torch.Generator().manual_seed(derived_seed(seed, "projections")))


class TransformerBlock(nn.Module):
    """One pre-norm Transformer block (attention + MLP, each in a residual) over any encoding.

    The trainable models (the toy-task lab, the spline autoencoder) stack these. Each block owns its
    own encoder instance, so its tables (T5 buckets, CoPE's position embeddings, ALiBi slopes) are per
    layer. # Deviation from paper: T5 computes one bias table in layer 0 and reuses it in every layer,
    and Transformer-XL shares u and v across layers; a block does not share them by itself. A stack
    ties what the encoder class lists in shared_across_layers (the toy lab's TinyTransformer ties
    T5's table; Transformer-XL's u and v stay per layer). The input encoding (sinusoidal, learned)
    is *not* added here: a model adds it once, below its first block, exactly as the papers do.
    """

    def __init__(self, encoder: PositionalEncoding, mlp_ratio: int = 4, generator: torch.Generator | None = None):
        super().__init__()
        D = encoder.d_model
        self.norm1 = nn.LayerNorm(D)
        self.attn = SelfAttention(encoder, generator)
        self.norm2 = nn.LayerNorm(D)
        grow, shrink = nn.Linear(D, mlp_ratio * D), nn.Linear(mlp_ratio * D, D)
        self.mlp = nn.Sequential(grow, nn.GELU(), shrink)  # parameters mlp.0.* and mlp.2.* in checkpoints
        if generator is not None:
            # nn.Linear draws from the global RNG; redraw from the model's generator for determinism.
            for lin in (grow, shrink):
                bound = 1.0 / math.sqrt(lin.in_features)
                with torch.no_grad():
                    lin.weight.copy_((torch.rand(lin.weight.shape, generator=generator) * 2 - 1) * bound)
                    lin.bias.zero_()

    def forward(
        self,
        x: Tensor,
        positions: Tensor | None = None,
        causal: bool = True,
        term_scales: Mapping[str, float] | None = None,
    ) -> tuple[Tensor, AttentionResult]:
        """x (b, n, D) → (x', the attention result for pictures: weights, terms, extras)."""
        r = self.attn(
            self.norm1(x), positions=positions, causal=causal, term_scales=term_scales, add_input_encoding=False
        )
        x = x + r.output  # (b, n, D)
        x = x + self.mlp(self.norm2(x))  # (b, n, D)
        return x, r
