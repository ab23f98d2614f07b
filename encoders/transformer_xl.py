"""Transformer-XL relative attention (Dai et al. 2019, "Transformer-XL: Attentive Language Models
Beyond a Fixed-Length Context", §3.3; reference: kimiyoung/transformer-xl
pytorch/mem_transformer.py::RelPartialLearnableMultiHeadAttn).

Axis legend: b batch, h heads, i query, j key, d head dimension, D model dimension (h·d),
             r column of the raw position scores (one column per distance, descending).

Relative sign: δ = i − j (query − key), as in the paper's R_{i−j}. With a memory of m earlier keys
the query at row i sits at absolute position m + i, and the distance is (m + i) − j.

    A_ij = [ q_i·k_j              (a) content–content
           + q_i·(W_kR R_{i−j})   (b) content-dependent position bias
           + u·k_j                (c) global content bias
           + v·(W_kR R_{i−j}) ]   (d) global position bias
           / √d

q_i = W_q x_i and k_j = W_kE x_j come from the attention layer (encoders/attention.py); R_δ is the
*fixed* sinusoid of the distance δ; W_kR (D → h·d), u and v (h, d) are this encoder's parameters.
The reference computes AC = (q + u)·k and BD = (q + v)·(W_kR R) and divides their sum by √d; the
four named terms below are the same numbers split apart, so a page can switch each one off.

The rel-shift trick (reference `_rel_shift`): BD is first computed against one row of distances
klen−1, klen−2, …, 0 (cheap: qlen × klen dot products instead of one R per (i, j) pair), then
shifted so that entry (i, j) lands on distance (mlen + i) − j. See `rel_shift`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import AttentionTerms, Difference, Paper, PositionalEncoding, normal_
from .sinusoidal import concatenated_permutation, sinusoidal_rows

PAPER = Paper(
    "Dai, Yang, Yang, Carbonell, Le, Salakhutdinov",
    2019,
    "Transformer-XL: Attentive Language Models Beyond a Fixed-Length Context",
    "https://arxiv.org/abs/1901.02860",
)


class RelShiftSteps(NamedTuple):
    """The four stages of the rel-shift trick on x (..., qlen, klen); all share x-padded's memory."""

    padded: Tensor  # (..., qlen, klen+1)  a zero column on the left
    reshaped: Tensor  # (..., klen+1, qlen)  the same memory read in rows of qlen
    sliced: Tensor  # (..., klen, qlen)    the first row dropped
    result: Tensor  # (..., qlen, klen)    read back in rows of klen


def rel_shift_steps(x: Tensor) -> RelShiftSteps:
    """Transformer-XL's pad–reshape–slice trick with every stage kept (reference `_rel_shift`; the
    paper's appendix B describes computing the shifted matrix efficiently — not confirmed against the
    paper text). `rel_shift` returns the last stage; the chapter draws all four."""
    *lead, qlen, klen = x.shape
    padded = F.pad(x, (1, 0))  # (..., qlen, klen+1): the pad makes every row one entry longer
    reshaped = padded.reshape(*lead, klen + 1, qlen)  # (..., klen+1, qlen): same memory, new row length
    sliced = reshaped[..., 1:, :]  # (..., klen, qlen): drop the first row (row 0's pad and first entries)
    result = sliced.reshape(*lead, qlen, klen)  # (..., qlen, klen): row i now starts qlen−1−i entries later
    return RelShiftSteps(padded, reshaped, sliced, result)


def rel_shift(x: Tensor) -> Tensor:
    """Shift row i of x (..., qlen, klen) left by qlen − 1 − i entries (reference `_rel_shift`).

        out[i, j] = x[i, j + qlen − 1 − i]        valid for j ≤ i + (klen − qlen)

    If column r of x holds distance klen − 1 − r (the reference's descending distances), out[i, j]
    holds distance (mlen + i) − j with mlen = klen − qlen: query position minus key position.
    Entries with j > i + mlen (the future of a causal model) are garbage — the next row's values or
    the zero pad — and must be masked.
    """
    return rel_shift_steps(x).result


def rel_shift_valid(qlen: int, klen: int) -> Tensor:
    """Bool (i, j): where `rel_shift` is exact, j ≤ i + (klen − qlen)."""
    i = torch.arange(qlen)[:, None]  # (i, 1)
    j = torch.arange(klen)[None, :]  # (1, j)
    return j <= i + (klen - qlen)  # (i, j)


def relative_distances(qlen: int, klen: int, causal: bool) -> Tensor:
    """The distances the raw position scores are computed against, descending (reference `pos_seq`).

    Causal (the reference): klen−1, …, 0 — every distance a query sees in its past.
    Bidirectional: klen−1, …, −(qlen−1) — the future keys' negative distances too, so that after
    the shift every (i, j) is exact and no cell is garbage.
    """
    # Deviation from paper: the reference is causal only; the negative distances are PE Atlas's
    # extension so the same trick serves bidirectional attention (the math is the paper's R_{i−j}).
    last = 0 if causal else -(qlen - 1)
    return torch.arange(klen - 1, last - 1, -1)  # (r,)


def relative_encoding(distances: Tensor, d_model: int, layout: str = "concatenated") -> Tensor:
    """R_δ for each distance δ (r,) → (r, D) float64: the sinusoid of the distance itself.

    Built from encoders.sinusoidal (the paper's frequencies ω_f = 10000^(−2f/D)). The reference stores
    it concatenated, [sin(all f) | cos(all f)]; "interleaved" gives the Vaswani layout. Because R only
    ever enters through W_kR·R, a channel permutation of R is a row permutation of W_kR: with a
    learned W_kR both layouts produce exactly the same family of logits (see the chapter).
    """
    table = sinusoidal_rows(distances, d_model)  # (r, D) interleaved sin, cos, sin, cos, …
    if layout == "interleaved":
        return table
    if layout == "concatenated":
        return table[:, concatenated_permutation(d_model)]  # (r, D) sins | cosines
    raise ValueError(f"layout must be 'concatenated' or 'interleaved', not {layout!r}")


@dataclass(frozen=True)
class TransformerXLConfig:
    # R's channel order; the reference's is concatenated [sin | cos] (it does not change what the
    # model can express: see relative_encoding).
    r_layout: str = "concatenated"
    # Deviation from paper: the reference initialises u and v at N(0, 0.02²) and lets training grow
    # them. Untrained at that size, terms (c) and (d) would be invisible next to (a) and (b), so PE
    # Atlas draws them at the scale of a query vector (entries of q are about N(0, 1)).
    bias_std: float = 1.0


class TransformerXL(PositionalEncoding):
    """Relative attention with four named terms a, b, c, d (Dai et al. 2019, §3.3)."""

    name = "transformer-xl"
    label = "Transformer-XL (Dai et al. 2019)"
    kind = "bias"
    paper = PAPER
    relative_sign = Difference("query", "key")  # i − j
    term_names = ("a", "b", "c", "d")
    # (a) E·W_q·W_k·E and (c) u·W_k·E hold no position: (c) is a global content bias.
    content_terms = ("a", "c")
    shift_invariant = True
    config: TransformerXLConfig

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        config: TransformerXLConfig | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        config = config or TransformerXLConfig()
        if config.r_layout not in ("concatenated", "interleaved"):
            raise ValueError(f"r_layout must be 'concatenated' or 'interleaved', not {config.r_layout!r}")
        super().__init__(d_model, n_heads, config, generator)
        H, d, D = n_heads, self.d_head, d_model
        # W_kR: the reference's r_net, a bias-free linear map D → h·d used only for R. Same scale as
        # the layer's W_q, W_k (std 1/√D) so W_kR·R and k are comparable.
        self.w_kr = nn.Parameter(normal_((D, H * d), 1.0 / math.sqrt(D), generator))  # (D, h·d)
        self.u = nn.Parameter(normal_((H, d), config.bias_std, generator))  # (h, d) r_w_bias
        self.v = nn.Parameter(normal_((H, d), config.bias_std, generator))  # (h, d) r_r_bias

    def position_keys(self, distances: Tensor) -> Tensor:
        """W_kR R_δ per head for each distance δ (r,) → (h, r, d)."""
        R = relative_encoding(distances, self.d_model, self.config.r_layout).to(self.w_kr.dtype)  # (r, D)
        rk = R @ self.w_kr  # (r, h·d)
        return rk.view(-1, self.n_heads, self.d_head).transpose(0, 1)  # (h, r, d)

    def logit_terms(
        self, q: Tensor, k: Tensor, q_positions: Tensor, k_positions: Tensor, causal: bool
    ) -> AttentionTerms:
        """Eq. in §3.3: A = (a) + (b) + (c) + (d), each divided by √d as the reference does to AC + BD.

        q: (b, h, i, d), k: (b, h, j, d). Keys must sit at consecutive positions and the queries at
        the last qlen of them (a memory of mlen = klen − qlen keys before): the rel-shift relies on it.
        """
        qlen, klen = q.shape[-2], k.shape[-2]
        mlen = klen - qlen
        _check_positions(q_positions, k_positions, mlen)
        scale = 1.0 / math.sqrt(self.d_head)
        u = self.u.to(q.dtype)[None, :, None, :]  # (1, h, 1, d)
        v = self.v.to(q.dtype)[None, :, None, :]  # (1, h, 1, d)

        distances = relative_distances(qlen, klen, causal)  # (r,)
        rk = self.position_keys(distances).to(q.dtype)[None]  # (1, h, r, d)
        a = q @ k.transpose(-1, -2)  # (b, h, i, j)
        c = (u @ k.transpose(-1, -2)).expand_as(a)  # (b, h, i, j): the same row for every query
        b_raw = q @ rk.transpose(-1, -2)  # (b, h, i, r): column r is distance klen−1−r
        d_raw = (v @ rk.transpose(-1, -2)).expand(*b_raw.shape)  # (b, h, i, r)
        b = rel_shift(b_raw)[..., :klen]  # (b, h, i, j): now at distance (mlen + i) − j
        d = rel_shift(d_raw)[..., :klen]  # (b, h, i, j)
        if causal:
            # Above j = i + mlen the shift leaves garbage (the next row's values, the pad). The
            # attention mask removes it anyway; zeroing it (the reference's `zero_triu` option)
            # keeps the returned terms free of numbers that mean nothing.
            future = ~rel_shift_valid(qlen, klen).to(q.device)  # (i, j)
            b = b.masked_fill(future, 0.0)
            d = d.masked_fill(future, 0.0)
        terms = {"a": a * scale, "b": b * scale, "c": c * scale, "d": d * scale}
        return AttentionTerms(terms, {"distances": distances})


def _check_positions(q_positions: Tensor, k_positions: Tensor, mlen: int) -> None:
    if mlen < 0:
        raise ValueError("Transformer-XL needs at least as many keys as queries")
    steps = k_positions[1:] - k_positions[:-1]
    if (steps != 1).any() or not torch.equal(q_positions, k_positions[mlen:]):
        raise ValueError(
            "Transformer-XL's rel-shift needs keys at consecutive positions with the queries at the last qlen of them"
        )
