"""Learned absolute positional embeddings (BERT, GPT-2): a lookup table with one row per position.

Axis legend: n positions, D model dimension.

    x'_pos = x_pos + P[pos],   P ∈ R^(max_len × D), trained with the model

The table has exactly max_len rows. A position ≥ max_len has no row: there is no extrapolation.
HF GPT-2 (`wpe`, 1024 rows) and BERT (`position_embeddings`, 512 rows) raise an index error there;
PE Atlas raises PositionOutOfRange, which the chapter explains instead of crashing.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .base import Paper, PositionalEncoding, PositionOutOfRange, normal_

PAPER = Paper(
    "Devlin, Chang, Lee, Toutanova (BERT); Radford et al. (GPT-2)",
    2019,
    "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
    "https://arxiv.org/abs/1810.04805",
)


@dataclass(frozen=True)
class LearnedConfig:
    max_len: int = 32  # rows in the table; the chapter lets the learner shrink it below the sentence
    # BERT/GPT-2 draw token and position tables from the same N(0, 0.02²). PE Atlas's toy token
    # embeddings have unit scale, so the untrained table does too: the same ratio, larger numbers.
    init_std: float = 1.0


class LearnedAbsolute(PositionalEncoding):
    """Adds a row of a (here untrained, seeded) table to each token embedding."""

    name = "learned"
    label = "Learned absolute (BERT / GPT-2)"
    kind = "input"
    paper = PAPER
    config: LearnedConfig

    def __init__(
        self, d_model: int, n_heads: int, config: LearnedConfig | None = None, generator: torch.Generator | None = None
    ) -> None:
        config = config or LearnedConfig()
        if config.max_len < 1:
            raise ValueError("max_len must be at least 1")
        super().__init__(d_model, n_heads, config, generator)
        self.table = nn.Parameter(normal_((config.max_len, d_model), config.init_std, generator))  # (max_len, D)

    @classmethod
    def config_covering(cls, n: int) -> LearnedConfig:
        """Exactly n rows: one per position 0 … n−1 (the attention lab gives BERT's 512)."""
        return LearnedConfig(max_len=n)

    @classmethod
    def config_for_lengths(cls, trained: int, run: int) -> LearnedConfig:
        """Rows for the trained positions only: the run's later positions have none, by design."""
        return LearnedConfig(max_len=trained)

    @classmethod
    def training_config(cls, max_len: int) -> LearnedConfig:
        """One row per position up to the longest *test* string, as in the CoPE paper's Absolute PE:
        rows past the training length exist but are never trained. Token embeddings are drawn with
        std 1, so the table is too (LearnedConfig's default)."""
        return LearnedConfig(max_len=max_len, init_std=1.0)

    def encode_input(self, x: Tensor, positions: Tensor) -> Tensor:
        if positions.numel():
            lo, hi = int(positions.min()), int(positions.max())
            if lo < 0:
                raise PositionOutOfRange(lo, self.config.max_len, self.label)
            if hi >= self.config.max_len:
                first = int(positions[positions >= self.config.max_len].min())
                raise PositionOutOfRange(first, self.config.max_len, self.label, last=hi)
        return x + self.table[positions][None].to(x.dtype)  # (b, n, D)
