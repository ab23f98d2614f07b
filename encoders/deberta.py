"""DeBERTa disentangled attention (He, Liu, Gao, Chen 2021, "DeBERTa: Decoding-enhanced BERT with
Disentangled Attention", §3.1 Eq. 4; references: HF models/deberta_v2/modeling_deberta_v2.py and
microsoft/DeBERTa DeBERTa/deberta/disentangled_attention.py, da_utils.py).

Axis legend: b batch, h heads, i query, j key, d head dimension, D model dimension (h·d),
             t row of the relative-embedding table (2k rows, k = att_span).

Relative sign: r = i − j (query − key), as the reference's build_relative_position.

    Ã_ij = [ Q^c_i·K^c_j             c2c  content-to-content
           + Q^c_i·K^r_{idx(i,j)}    c2p  content-to-position
           + K^c_j·Q^r_{idx(i,j)} ]  p2c  position-to-content
           / √(d · s)                s = 1 + [c2p on] + [p2c on]  (3 with both: the paper's √(3d))

    idx(i, j) = clamp(bucket(i − j) + k, 0, 2k − 1)

Q^c = W_q x and K^c = W_k x come from the attention layer; K^r = P W_k,r and Q^r = P W_q,r project
the rows of a relative-embedding table P (2k, D). bucket() is the identity, or DeBERTa-v2's log
buckets (`log_bucket_position`).

p2c follows the reference code: Q^r at the same index as c2p, clamp((i − j) + k). The paper writes
δ(j, i) there, i.e. the mirrored distance (microsoft/DeBERTa issue #162).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .base import AttentionTerms, Difference, Paper, PositionalEncoding, normal_

PAPER = Paper(
    "He, Liu, Gao, Chen",
    2021,
    "DeBERTa: Decoding-enhanced BERT with Disentangled Attention",
    "https://arxiv.org/abs/2006.03654",
)

POSITION_TERMS = ("c2p", "p2c")


def check_buckets(bucket_size: int, max_position: int) -> None:
    """The log part divides by ln((max_position − 1)/(bucket_size/2)), which must be positive."""
    if bucket_size < 2:
        raise ValueError(f"bucket_size must be at least 2, not {bucket_size}")
    if max_position - 1 <= bucket_size // 2:
        raise ValueError(
            f"max_position ({max_position}) must exceed bucket_size/2 + 1 ({bucket_size // 2 + 1}): "
            "the log part divides by ln((max_position − 1)/(bucket_size/2))"
        )


def log_bucket_position(relative_position: Tensor, bucket_size: int, max_position: int) -> Tensor:
    """DeBERTa-v2 log buckets of r = i − j (query − key) (HF make_log_bucket_position; METHODS §6).

        mid = bucket_size // 2
        |r| ≤ mid:  bucket = r                                          (exact, near the query)
        |r| > mid:  bucket = sign(r) · (mid + ⌈ln(|r|/mid) / ln((M−1)/mid) · (mid − 1)⌉)

    With M = max_position, |r| = M − 1 lands in bucket ±(2·mid − 1); larger |r| keep growing
    logarithmically (the table lookup later clamps them). Odd in r: bucket(−r) = −bucket(r).
    The log part is computed in float32, exactly as the reference does, because a trained model's
    buckets are the reference's. Where ln(|r|/mid)/ln((M−1)/mid)·(mid−1) is (almost) a whole number,
    rounding decides the ceiling: float32 and float64 then disagree in both directions (B = 128,
    M = 513, |r| = 128 is exactly 21: float32 gives bucket 85 as exact arithmetic does, float64 86;
    B = 98, M = 257, |r| = 112 is exactly 24: float32 gives 74, exact arithmetic 73).
    """
    check_buckets(bucket_size, max_position)
    r = relative_position.to(torch.long)
    mid = bucket_size // 2
    sign = torch.sign(r)
    # Inside the exact band the log branch is not used; mid − 1 only keeps its log finite.
    abs_pos = torch.where((r < mid) & (r > -mid), torch.full_like(r, mid - 1), r.abs())
    ratio = torch.log(abs_pos.to(torch.float32) / mid) / torch.log(torch.tensor((max_position - 1) / mid))
    log_pos = torch.ceil(ratio * (mid - 1)) + mid  # float32
    return torch.where(abs_pos <= mid, r, (log_pos * sign).to(torch.long))


@dataclass(frozen=True)
class DebertaConfig:
    # DeBERTa-v3 (rtd_base.json): 256 log buckets over relative positions up to 512. position_buckets
    # ≤ 0 switches the buckets off: plain r = i − j, clamped to [−M, M − 1], M = max_relative_positions
    # (v1; the table index clamp(r + M, 0, 2M − 1)).
    position_buckets: int = 256
    max_relative_positions: int = 512
    pos_att_type: tuple[str, ...] = ("c2p", "p2c")  # which position terms the model has
    # Deviation from paper: HF draws the table at N(0, 0.02²) and layer-normalises it
    # (norm_rel_ebd="layer_norm"), which gives rows of unit-scale entries; PE Atlas draws unit-scale
    # rows directly and has no LayerNorm.
    rel_init_std: float = 1.0


class DeBERTa(PositionalEncoding):
    """Disentangled attention with three named terms c2c, c2p, p2c (He et al. 2021, §3.1).

    Positional projections: separate seeded W_q,r and W_k,r (the paper's Eq. 4, DeBERTa v1,
    HF share_att_key=False). DeBERTa-v2/v3 reuse the content W_q, W_k instead (share_att_key=True);
    in PE Atlas the content projections belong to the attention layer, which encoders do not see.
    """

    name = "deberta"
    label = "DeBERTa (He et al. 2021)"
    kind = "bias"
    paper = PAPER
    relative_sign = Difference("query", "key")  # i − j
    term_names = ("c2c", "c2p", "p2c")
    content_terms = ("c2c",)  # content → content; c2p and p2c both involve the relative position
    shift_invariant = True
    config: DebertaConfig

    def __init__(
        self, d_model: int, n_heads: int, config: DebertaConfig | None = None, generator: torch.Generator | None = None
    ) -> None:
        config = config or DebertaConfig()
        unknown = set(config.pos_att_type) - set(POSITION_TERMS)
        if unknown:
            raise ValueError(f"pos_att_type may hold {POSITION_TERMS}, not {sorted(unknown)}")
        if config.max_relative_positions < 1:
            raise ValueError("max_relative_positions must be at least 1")
        if config.position_buckets > 0:
            check_buckets(config.position_buckets, config.max_relative_positions)
        super().__init__(d_model, n_heads, config, generator)
        D, k = d_model, self.att_span
        self.rel_embeddings = nn.Parameter(normal_((2 * k, D), config.rel_init_std, generator))  # (2k, D)
        std = 1.0 / math.sqrt(D)  # the attention layer's scale: Q^r, K^r entries like q, k
        # Deviation from paper: the reference's pos_key_proj / pos_query_proj have biases; PE Atlas's
        # projections have none (like its W_q, W_k), so a term is exactly a dot product.
        self.w_kr = nn.Parameter(normal_((D, D), std, generator))  # (D, h·d) pos_key_proj
        self.w_qr = nn.Parameter(normal_((D, D), std, generator))  # (D, h·d) pos_query_proj

    @property
    def att_span(self) -> int:
        """k: the table has 2k rows (reference pos_ebd_size)."""
        c = self.config
        return c.position_buckets if c.position_buckets > 0 else c.max_relative_positions

    @property
    def scale_factor(self) -> int:
        """s = 1 + [c2p] + [p2c] (reference scale_factor); logits are divided by √(d·s)."""
        return 1 + sum(t in self.config.pos_att_type for t in POSITION_TERMS)

    def relative_positions(self, q_positions: Tensor, k_positions: Tensor) -> Tensor:
        """r = i − j (query − key) per pair, log-bucketed when position_buckets > 0 → (i, j) long."""
        r = q_positions[:, None].long() - k_positions[None, :].long()  # (i, j)
        c = self.config
        if c.position_buckets > 0:
            r = log_bucket_position(r, c.position_buckets, c.max_relative_positions)  # (i, j)
        return r

    def table_index(self, q_positions: Tensor, k_positions: Tensor) -> Tensor:
        """idx(i, j) = clamp(bucket(i − j) + k, 0, 2k − 1): the table row each pair reads → (i, j)."""
        k = self.att_span
        return torch.clamp(self.relative_positions(q_positions, k_positions) + k, 0, 2 * k - 1)  # (i, j)

    def _project(self, w: Tensor, dtype: torch.dtype) -> Tensor:
        rows = self.rel_embeddings.to(dtype) @ w.to(dtype)  # (2k, h·d)
        return rows.view(-1, self.n_heads, self.d_head).transpose(0, 1)  # (h, 2k, d)

    def logit_terms(
        self, q: Tensor, k: Tensor, q_positions: Tensor, k_positions: Tensor, causal: bool
    ) -> AttentionTerms:
        """Eq. 4 with the reference's indexing; q: (b, h, i, d), k: (b, h, j, d)."""
        scale = 1.0 / math.sqrt(self.d_head * self.scale_factor)
        idx = self.table_index(q_positions, k_positions).to(q.device)  # (i, j)
        B, H, n_q, n_k = q.shape[0], q.shape[1], q.shape[-2], k.shape[-2]
        c2c = q @ k.transpose(-1, -2)  # (b, h, i, j)
        zeros = torch.zeros_like(c2c)
        c2p = p2c = zeros
        if "c2p" in self.config.pos_att_type:
            k_r = self._project(self.w_kr, q.dtype)[None]  # (1, h, 2k, d)
            every_row = q @ k_r.transpose(-1, -2)  # (b, h, i, 2k): query i against every table row
            c2p = torch.gather(every_row, -1, idx.expand(B, H, n_q, n_k))  # (b, h, i, j)
        if "p2c" in self.config.pos_att_type:
            q_r = self._project(self.w_qr, q.dtype)[None]  # (1, h, 2k, d)
            every_row = k @ q_r.transpose(-1, -2)  # (b, h, j, 2k): key j against every table row
            # Deviation from paper: Eq. 4 reads Q^r at δ(j, i); the reference code (HF and official)
            # gathers at (j, i) with index idx(i, j) and transposes, i.e. Q^r at δ(i, j), like c2p.
            p2c = torch.gather(every_row, -1, idx.T.expand(B, H, n_k, n_q)).transpose(-1, -2)  # (b, h, i, j)
        terms = {"c2c": c2c * scale, "c2p": c2p * scale, "p2c": p2c * scale}
        return AttentionTerms(terms, {"table_index": idx})
