"""T5 relative position bias (Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a
Unified Text-to-Text Transformer", §2.1).

Axis legend: b batch, h heads, i query, j key, d head dimension, N num_buckets.

    r      = j − i                                       key − query (positive: key to the right)
    e_ij   = q_i · k_j  +  β_h[bucket(r)]                no 1/√d: T5's choice (see T5Bias)
    bucket(r): distances below E ("max_exact") get a bucket each; larger ones share buckets whose
               width grows logarithmically up to max_distance; everything beyond shares the last one.

Reference: HF transformers `models/t5/modeling_t5.py`, `T5Attention._relative_position_bucket` and
`compute_bias` (ported from Mesh TensorFlow). The tests compare `relative_position_bucket` with it.
Only layer 0 of a T5 stack owns the (N, H) table; every later layer reuses the same bias
(shared_across_layers: a stack such as lab/model.py's ties the later layers' tables to layer 0's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .base import AttentionTerms, Difference, Paper, PositionalEncoding, normal_

PAPER = Paper(
    "Raffel, Shazeer, Roberts, Lee, Narang, Matena, Zhou, Li, Liu",
    2020,
    "Exploring the Limits of Transfer Learning with a Unified Text-to-Text Transformer",
    "https://arxiv.org/abs/1910.10683",
)


def bucket_layout(bidirectional: bool, num_buckets: int) -> tuple[int, int]:
    """(buckets per side N', exact buckets E): bidirectional splits N in half, one half per side."""
    per_side = num_buckets // 2 if bidirectional else num_buckets
    return per_side, per_side // 2


def check_bucket_config(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    """Raise ValueError for settings where T5's formula is undefined.

    E = 0 divides by zero inside log(a/E); max_distance ≤ E makes log(D/E) ≤ 0, so the log region
    would run backwards (HF computes garbage there rather than raising).
    """
    _per_side, exact = bucket_layout(bidirectional, num_buckets)
    if exact < 1:
        raise ValueError(f"num_buckets={num_buckets} leaves no exact bucket (need ≥ {4 if bidirectional else 2})")
    if max_distance <= exact:
        raise ValueError(f"max_distance={max_distance} must exceed the exact region E={exact}")


def relative_position_bucket(
    relative_position: Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> Tensor:
    """Bucket id of each relative position r = j − i (key − query), exactly as T5 / HF compute it.

    Bidirectional (encoder): half the buckets for r ≤ 0, half (offset N/2) for r > 0, a = |r|.
    Causal (decoder): all N buckets for the past, a = max(−r, 0): every future key lands in bucket 0.
    Then, with E = N'/2:  a < E → a;  else min(E + trunc(ln(a/E) / ln(D/E) · (N' − E)), N' − 1).
    """
    check_bucket_config(bidirectional, num_buckets, max_distance)
    r = relative_position.long()
    per_side, exact = bucket_layout(bidirectional, num_buckets)
    # Causal: future keys (r > 0) fold into a = 0, i.e. bucket 0.
    a = r.abs() if bidirectional else (-r).clamp(min=0)
    # Same float32 arithmetic and operation order as HF: at a bucket boundary, float64 could round to
    # the other side (the tests compare with HF over thousands of distances).
    # clamp(min=1) only keeps log() finite for a = 0, which takes the exact branch anyway.
    # The in-place steps (…_) compute exactly the same numbers; they only skip temporary L×L copies,
    # which is what an L = 1024 grid spends its time on.
    log_ratio = torch.log(a.clamp(min=1).float().div_(exact)).div_(math.log(max_distance / exact))
    large = log_ratio.mul_(per_side - exact).to(torch.long).add_(exact)  # .to(long) truncates toward 0
    large.clamp_(max=per_side - 1)
    bucket = torch.where(a < exact, a, large)
    if bidirectional:
        bucket.add_((r > 0) * per_side)  # keys to the right use the upper half
    return bucket


@dataclass(frozen=True)
class T5Config:
    num_buckets: int = 32  # T5's relative_attention_num_buckets
    max_distance: int = 128  # T5's relative_attention_max_distance: beyond it, one shared bucket
    # Std of the untrained (N, H) bias table; None means √d_head, the typical size of the toy
    # layer's *unscaled* q·k (unit-scale q and k entries), so the content and position terms start
    # equally visible. (HF draws it with std d_model^−½ and lets training set the size.)
    init_std: float | None = None
    # False: q·k unscaled, as the T5 paper writes it (every chapter's picture). True: q·k/√d, which
    # is what T5's own initialisation amounts to (Mesh TF draws W^Q with std (d_model·d_kv)^−½, i.e.
    # the 1/√d of the other encodings folded into W^Q). The toy lab's projections are shared by
    # every encoding, so a trained stand-in states the factor here; without it its content logits
    # start √d = 4× larger than every other encoding's (issue 19).
    scale_content: bool = False


class T5Bias(PositionalEncoding):
    """One learned scalar per (bucket, head), added to the unscaled q·k logits."""

    name = "t5"
    label = "T5 bias (Raffel et al. 2020)"
    kind = "bias"
    paper = PAPER
    relative_sign = Difference("key", "query")  # j − i
    term_names = ("content", "position")
    shift_invariant = True
    shared_across_layers = ("table",)  # one (N, h) table for the whole stack, owned by layer 0
    config: T5Config

    def __init__(
        self, d_model: int, n_heads: int, config: T5Config | None = None, generator: torch.Generator | None = None
    ) -> None:
        config = config or T5Config()
        # The bidirectional rule has the smaller exact region (N/4), so a config valid for it can
        # still be invalid for the causal rule (N/2); that case raises when a causal call is made.
        check_bucket_config(True, config.num_buckets, config.max_distance)
        super().__init__(d_model, n_heads, config, generator)
        std = config.init_std if config.init_std is not None else math.sqrt(self.d_head)
        self.table = nn.Parameter(normal_((config.num_buckets, n_heads), std, generator))  # (N, h)

    @classmethod
    def training_config(cls, max_len: int) -> T5Config:
        """The chapter's untrained table is drawn at the size of unscaled q·k so that it is visible;
        a model learns it, so it starts small (HF draws it with std d_model^-½). max_distance ≥ the
        longest string, so every distance in play gets its own bucket range. scale_content: the 1/√d
        T5 folds into its initialisation, so its content logits start as large as every other
        encoding's rather than √d times larger."""
        return T5Config(num_buckets=32, max_distance=max(128, max_len), init_std=0.1, scale_content=True)

    def buckets(self, q_positions: Tensor, k_positions: Tensor, causal: bool) -> Tensor:
        """Bucket id per pair (i, j) from the positions, so a shifted sentence gets the same ids."""
        relative = k_positions.long()[None, :] - q_positions.long()[:, None]  # (i, j)  key − query
        return relative_position_bucket(
            relative,
            bidirectional=not causal,
            num_buckets=self.config.num_buckets,
            max_distance=self.config.max_distance,
        )  # (i, j)

    def bias(self, buckets: Tensor) -> Tensor:
        """β_h[bucket(j − i)] for every head: (i, j) bucket ids → (1, h, i, j), like HF compute_bias."""
        return self.table[buckets].permute(2, 0, 1)[None]  # (i, j, h) → (1, h, i, j)

    def logit_terms(
        self, q: Tensor, k: Tensor, q_positions: Tensor, k_positions: Tensor, causal: bool
    ) -> AttentionTerms:
        buckets = self.buckets(q_positions, k_positions, causal).to(q.device)  # (i, j)
        # Deviation from the shared content_logits: T5 uses no 1/√d (the paper's choice; Mesh TF
        # folds that factor into the initialisation of W^Q instead). The toy layer's projections are
        # shared with every chapter, so here the content term is √d times larger than elsewhere,
        # unless the config restores the factor T5's initialisation supplies (scale_content).
        content = q @ k.transpose(-1, -2)  # (b, h, i, j)
        if self.config.scale_content:
            content = content / math.sqrt(self.d_head)
        position = self.bias(buckets).to(q.dtype).expand_as(content)  # (b, h, i, j)
        return AttentionTerms({"content": content, "position": position}, extras={"buckets": buckets})
