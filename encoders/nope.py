"""No positional encoding at all ("NoPE": Kazemnejad et al. 2023).

Without positions, bidirectional self-attention is permutation-equivariant: shuffle the tokens and
the outputs come out shuffled the same way, nothing else changes. Under a causal mask it is not —
the mask itself tells a token how many tokens precede it — which is why NoPE decoders still work.
"""

from __future__ import annotations

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
