"""Relative position representations (Shaw, Uszkoreit, Vaswani 2018, "Self-Attention with Relative
Position Representations", §3).

Axis legend: b batch, h heads, i query, j key, d head dimension (the paper's d_z),
             r clipped relative distance index 0 … 2k (row of the aᴷ / aⱽ tables).

    e_ij   = (x_i W^Q)(x_j W^K + aᴷ_ij)ᵀ / √d_z                           (§3.1, the logits)
    z_i    = Σ_j α_ij (x_j W^V + aⱽ_ij)                                    (§3.1, the outputs)
    aᴷ_ij  = wᴷ_clip(j−i, k),  aⱽ_ij = wⱽ_clip(j−i, k),  clip(x, k) = max(−k, min(k, x))   (§3.2)

Sign: j − i (key − query), as in tensor2tensor's `_generate_relative_positions_matrix`: positive means
the key is to the right of the query. There are 2k+1 learned vectors for keys and 2k+1 for values,
each of size d_z, shared by all heads of a layer; every pair farther apart than k shares the vector
of distance ±k.

The paper (§3.3) and tensor2tensor's `_relative_attention_inner` build the (i, j, d_z) tensor of
per-pair vectors aᴷ_ij, shared across heads and the batch, and multiply it with the queries. This file
uses a later, equivalent shortcut: compute q_i · wᴷ_r for the 2k+1 rows r once, (b, h, i, 2k+1), and
pick the right column for every key — O(n·k·d + n²) instead of O(n²·d); the chapter checks that both
give the same logits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .base import AttentionTerms, Difference, Paper, PositionalEncoding, content_logits, normal_

PAPER = Paper(
    "Shaw, Uszkoreit, Vaswani",
    2018,
    "Self-Attention with Relative Position Representations",
    "https://arxiv.org/abs/1803.02155",
)


def clipped_relative_index(q_positions: Tensor, k_positions: Tensor, max_relative_position: int) -> Tensor:
    """Row of the aᴷ / aⱽ tables for every (query, key) pair: clip(j − i, −k, k) + k  (§3.2).

    q_positions (i,), k_positions (j,) integer positions → LongTensor (i, j) with values in [0, 2k].
    Uses the positions themselves, not their indices, so shifting every position by the same amount
    leaves the result unchanged — the whole point of a relative encoding.
    """
    k = int(max_relative_position)
    if k < 0:
        raise ValueError("max_relative_position must be non-negative")
    distance = k_positions.long()[None, :] - q_positions.long()[:, None]  # (i, j)  key − query
    return distance.clamp(-k, k) + k  # (i, j)


def relative_position_index(n_queries: int, n_keys: int, max_relative_position: int) -> Tensor:
    """clip(j − i, −k, k) + k as an (n_queries, n_keys) LongTensor, as in tensor2tensor's
    `_generate_relative_positions_matrix` (non-cached path).

    When n_queries < n_keys the queries are aligned to the *end* of the keys: query i sits at key
    position i + (n_keys − n_queries), the convention of a decoder that attends to a cache of earlier
    keys. More queries than keys has no such alignment (tensor2tensor's slice would silently return
    the wrong number of rows), so it is an error here.
    """
    if n_queries < 0 or n_keys < 0:
        raise ValueError("lengths must be non-negative")
    if n_queries > n_keys:
        raise ValueError(f"n_queries={n_queries} > n_keys={n_keys}: queries are aligned to the end of the keys")
    k_positions = torch.arange(n_keys)  # (j,)
    q_positions = k_positions[n_keys - n_queries :]  # (i,)  the last n_queries key positions
    return clipped_relative_index(q_positions, k_positions, max_relative_position)


def relative_vectors(table: Tensor, index: Tensor) -> Tensor:
    """aᴷ_ij (or aⱽ_ij): the table row of every pair, (2k+1, d) gathered by (i, j) → (i, j, d).

    The explicit per-pair form of §3.1; the encoder uses the cheaper gather in `position_logits`,
    the chapter uses this one to show what each pair receives.
    """
    return table[index]  # (i, j, d)


def position_logits(q: Tensor, a_k: Tensor, index: Tensor) -> Tensor:
    """The position part of e_ij: q_i · aᴷ_ij / √d_z, by gathering per-row products (a shortcut equal
    to the paper's per-pair tensor of §3.3, not the paper's own form).

    q (b, h, i, d), a_k (2k+1, d), index (i, j) → (b, h, i, j)
    """
    b, h, n_i, d = q.shape
    per_row = q @ a_k.transpose(0, 1).to(q.dtype)  # (b, h, i, 2k+1)  q_i · wᴷ_r for every row r
    gather_at = index.expand(b, h, n_i, index.shape[-1])  # (b, h, i, j)
    return torch.gather(per_row, -1, gather_at) / math.sqrt(d)  # (b, h, i, j)


def value_position_term(weights: Tensor, a_v: Tensor, index: Tensor) -> Tensor:
    """The aⱽ part of z_i: Σ_j α_ij aⱽ_ij  (§3.1).

    weights (b, h, i, j), a_v (2k+1, d), index (i, j) → (b, h, i, d).
    Sums the attention mass that falls on each clipped distance r first (every key farther than k
    lands on the same r), then mixes the 2k+1 rows: O(n² + n·k·d) instead of O(n²·d).
    """
    b, h, n_i, n_j = weights.shape
    mass = weights.new_zeros(b, h, n_i, a_v.shape[0])  # (b, h, i, 2k+1)
    mass.scatter_add_(-1, index.expand(b, h, n_i, n_j), weights)  # (b, h, i, 2k+1)
    return mass @ a_v.to(weights.dtype)  # (b, h, i, d)


@dataclass(frozen=True)
class ShawConfig:
    # Clipping distance k. The paper's models clip at a larger k; PE Atlas's default is 4 because the
    # learner's sentences are short: with k = 16 a 13-token sentence would never reach the clip, and
    # the chapter's main lesson (every pair farther than k shares one vector) would be invisible.
    max_relative_position: int = 4
    # Std of the untrained aᴷ / aⱽ rows. The toy layer's q, k, v have unit-scale entries, so unit-scale
    # rows make the position term the same size as the content term: both are visible in the maps.
    init_std: float = 1.0


class ShawRelative(PositionalEncoding):
    """Learned vectors per clipped distance, added to the keys (aᴷ) and to the values (aⱽ)."""

    name = "shaw"
    label = "Shaw relative (Shaw et al. 2018)"
    kind = "bias"
    paper = PAPER
    relative_sign = Difference("key", "query")  # j − i
    term_names = ("content", "position")
    shift_invariant = True
    config: ShawConfig

    def __init__(
        self, d_model: int, n_heads: int, config: ShawConfig | None = None, generator: torch.Generator | None = None
    ) -> None:
        config = config or ShawConfig()
        if config.max_relative_position < 0:
            raise ValueError("max_relative_position must be non-negative")
        super().__init__(d_model, n_heads, config, generator)
        k, d = config.max_relative_position, self.d_head
        # Rows are drawn nearest distance first (0, −1, +1, −2, +2, …), a key row then a value row,
        # so raising k only *adds* rows: the vectors of the near distances stay the same numbers and
        # a learner moving the k slider sees only the far pairs change.
        a_k = torch.empty(2 * k + 1, d)  # (2k+1, d)
        a_v = torch.empty(2 * k + 1, d)  # (2k+1, d)
        for r in [0] + [s * m for m in range(1, k + 1) for s in (-1, 1)]:
            a_k[r + k] = normal_((d,), config.init_std, generator)
            a_v[r + k] = normal_((d,), config.init_std, generator)
        # Shared across heads: one table per layer of size d_z (the head dimension), as in the paper.
        self.a_k = nn.Parameter(a_k)
        self.a_v = nn.Parameter(a_v)

    def relative_index(self, q_positions: Tensor, k_positions: Tensor) -> Tensor:
        return clipped_relative_index(q_positions, k_positions, self.config.max_relative_position)  # (i, j)

    def logit_terms(
        self, q: Tensor, k: Tensor, q_positions: Tensor, k_positions: Tensor, causal: bool
    ) -> AttentionTerms:
        index = self.relative_index(q_positions, k_positions).to(q.device)  # (i, j)
        return AttentionTerms(
            {
                "content": content_logits(q, k),  # (b, h, i, j)  x_i W^Q (x_j W^K)ᵀ / √d_z
                "position": position_logits(q, self.a_k, index),  # (b, h, i, j)  x_i W^Q aᴷ_ijᵀ / √d_z
            },
            extras={"relative_index": index},
        )

    def value_terms(self, weights: Tensor, q_positions: Tensor, k_positions: Tensor) -> Tensor:
        index = self.relative_index(q_positions, k_positions).to(weights.device)  # (i, j)
        return value_position_term(weights, self.a_v, index)  # (b, h, i, d)
