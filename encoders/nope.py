"""No positional encoding at all ("NoPE": Kazemnejad et al. 2023).

Without positions, bidirectional self-attention is permutation-equivariant: shuffle the tokens and
the outputs come out shuffled the same way, nothing else changes. Under a causal mask it is not —
the mask itself tells a token how many tokens precede it — which is why NoPE decoders still work.

Axis legend: b batch, h heads, i query position, j key position, n length, d head dimension.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .attention import attend
from .base import Paper, PositionalEncoding

PAPER = Paper(
    "Kazemnejad, Padhi, Natesan Ramamurthy, Das, Reddy",
    2023,
    "The Impact of Positional Encoding on Length Generalization in Transformers",
    "https://arxiv.org/abs/2305.19466",
)


class NoPositionalEncoding(PositionalEncoding):
    """The identity: the base class's hooks already add nothing, so this only names the method."""

    name = "none"
    label = "No positional encoding (NoPE)"
    kind = "none"
    paper = PAPER
    shift_invariant = True  # no positions at all, so no shift can change anything


def equal_logit_weights(n: int, causal: bool, dtype: torch.dtype = torch.float64) -> Tensor:
    """Attention weights (n, n) when every logit is equal, computed through the one attention path.

    A head with q = 0 (or any head on identical tokens) gives every key the same logit. Without a
    mask each query then spreads its weight evenly over all n keys: 1/n, the same for every query.
    Under the causal mask query i sees only keys 0 … i, so each gets 1/(i + 1) — a number that
    depends on the query's position. That is the position signal a NoPE decoder starts from.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    encoder = NoPositionalEncoding(1, 1)
    q = torch.zeros(1, 1, n, 1, dtype=dtype)  # (b, h, i, d): q = 0 makes every q·k equal (0)
    k = torch.ones(1, 1, n, 1, dtype=dtype)  # (b, h, j, d): any keys give the same result
    v = torch.zeros(1, 1, n, 1, dtype=dtype)  # (b, h, j, d): values do not affect the weights
    positions = torch.arange(n)  # (n,)
    _, _, weights, _ = attend(encoder, q, k, v, positions, positions, causal)
    return weights[0, 0]  # (i, j)
