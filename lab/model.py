"""A tiny decoder-only Transformer whose positional encoding is any entry of the registry.

Axis legend: b batch, n length, D model dim, V vocabulary, L layers.

    ids (b, n) ─embed→ (b, n, D) ─input encoding (sinusoidal / learned only)→
      L × TransformerBlock (encoders/attention.py: pre-norm attention + MLP, causal) ─norm→
      ─unembed→ logits (b, n, V): position t predicts token t + 1

The attention inside every block is the one the chapters draw (encoders.attention.SelfAttention
through TransformerBlock); this file only stacks blocks. Every parameter is drawn from a seeded
torch.Generator, so the same seed gives the same initial model in every process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, is_dataclass, replace
from typing import Literal, overload

import torch
from torch import Tensor, nn

import encoders
from encoders.attention import AttentionResult, TransformerBlock
from encoders.base import derived_seed


@dataclass(frozen=True)
class ModelConfig:
    encoding: str  # a registry name (encoders.REGISTRY)
    vocab_size: int
    max_len: int  # longest sequence the lab will feed (sizes a learned table; the rest ignore it)
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    mlp_ratio: int = 4
    # (field, value) pairs changed in the encoder's training config (lab.train.TrainConfig); () = none.
    encoder_options: tuple[tuple[str, object], ...] = ()


def encoder_config(name: str, max_len: int, options: tuple[tuple[str, object], ...] = ()) -> object:
    """The training-time configuration of an encoder (None = the registry default): each encoder
    class says its own (training_config), e.g. a learned table with a row for every test position;
    `options` then change named fields of it (an unknown field is an error, never ignored)."""
    conf = encoders.REGISTRY[name].training_config(max_len)
    if not options:
        return conf
    if conf is None:
        conf = encoders.build(name, 4, 1, 0).config  # the registry default, to change a field of
    if not is_dataclass(conf) or isinstance(conf, type):
        raise TypeError(f"{name!r} has no config dataclass to set {dict(options)} on")
    return replace(conf, **dict(options))


class TinyTransformer(nn.Module):
    def __init__(self, cfg: ModelConfig, seed: int = 0):
        super().__init__()
        self.cfg = cfg
        D = cfg.d_model
        g = torch.Generator().manual_seed(derived_seed(seed, "lab-model"))
        self.embed = nn.Parameter(torch.randn(cfg.vocab_size, D, generator=g))  # (V, D), unit scale
        kind = encoders.REGISTRY[cfg.encoding].kind
        conf = encoder_config(cfg.encoding, cfg.max_len, cfg.encoder_options)
        # An input encoding (sinusoidal, learned) is added once, below the first block, as in the
        # papers; its blocks then attend by content alone — NoPE's logit terms, which are exactly
        # the base class's, so no unused per-layer tables are trained or shipped.
        self.input_encoding = (
            encoders.build(cfg.encoding, D, cfg.n_heads, derived_seed(seed, "input"), conf) if kind == "input" else None
        )
        block_name = "none" if kind == "input" else cfg.encoding
        blocks = [
            TransformerBlock(
                encoders.build(
                    block_name, D, cfg.n_heads, derived_seed(seed, f"layer{layer}"), None if kind == "input" else conf
                ),
                cfg.mlp_ratio,
                generator=g,
            )
            for layer in range(cfg.n_layers)
        ]
        # Tables the encoder class says a stack shares (T5's bias: computed in layer 0, reused by
        # every layer) are tied to the first block's: one parameter set, trained by every layer.
        first = blocks[0].attn.encoder
        for block in blocks[1:]:
            for attr in type(block.attn.encoder).shared_across_layers:
                setattr(block.attn.encoder, attr, getattr(first, attr))
        self.blocks = nn.ModuleList(blocks)
        self.norm = nn.LayerNorm(D)
        self.unembed = nn.Parameter(torch.randn(D, cfg.vocab_size, generator=g) / math.sqrt(D))  # (D, V)

    @overload
    def forward(self, ids: Tensor, return_attention: Literal[False] = False) -> Tensor: ...

    @overload
    def forward(self, ids: Tensor, return_attention: Literal[True]) -> tuple[Tensor, list[AttentionResult]]: ...

    def forward(self, ids: Tensor, return_attention: bool = False) -> Tensor | tuple[Tensor, list[AttentionResult]]:
        """ids (b, n) int64 → logits (b, n, V); with return_attention also one AttentionResult per
        layer (weights, terms, and extras such as CoPE's gates and counted positions)."""
        n = ids.shape[1]
        positions = torch.arange(n)
        x = self.embed[ids]  # (b, n, D)
        if self.input_encoding is not None:
            x = self.input_encoding.encode_input(x, positions)  # (b, n, D)
        results: list[AttentionResult] = []
        for block in self.blocks:
            x, r = block(x, positions=positions, causal=True)  # (b, n, D)
            if return_attention:
                results.append(r)
        logits: Tensor = self.norm(x) @ self.unembed  # (b, n, V)
        return (logits, results) if return_attention else logits

    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
