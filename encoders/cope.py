"""CoPE: Contextual Position Encoding (Golovneva, Wang, Weston, Sukhbaatar 2024, arXiv 2405.18719).

Axis legend: b batch, h heads, i query position, j key position, t a token between them,
n length, d head dimension, P number of position embeddings (npos_max).

Positions are not fixed indices but *counts*, decided by the query (paper §3, and its appendix
listing, which this file follows step by step):

    g_ij = σ(q_i·k_j / √d)                 gate: does key j count for query i? (§3, Eq. 3 is σ(q_i·k_j);
                                           the 1/√d comes from the appendix listing)
    p_ij = Σ_{t=j..i} g_it                 position: how many counted tokens from j up to i (Eq. 4)
    e[p] = (p − ⌊p⌋)·e[⌈p⌉] + (1 − p + ⌊p⌋)·e[⌊p⌋]     interpolated position embedding (Eq. 5)
    a_ij = Softmax_j(q_i·k_j / √d + q_i·e[p_ij])          (Eq. 6; the 1/√d is the listing's, not Eq. 6's)

Relative sign: p_ij ≥ 0 is counted back from the query i to the key j (a count, not a signed offset).

Gates come from the same, already scaled and causally masked logits the attention uses (future
gates are exactly σ(−∞) = 0; the diagonal gate g_ii is included, so p_ii = g_ii, not 0). Positions
are a reverse cumulative sum over j; they are clamped at P − 1. The position logits q_i·e[n] are
computed once per integer n (an (i, P) table, never an (i, j, d) tensor) and interpolated between
⌊p⌋ and ⌈p⌉. In the paper's listing they are added *after* the 1/√d scaling.

variant="official" is the facebookresearch/RAM code (projects/cope/src/cope/context_position.py,
ContextPosSelfAttn, default flags): same gates, but the position logits are added to the *unscaled*
q·k and the sum is divided by √d, so the position term is divided by √d too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from .base import AttentionTerms, CountBack, Paper, PositionalEncoding, content_logits, normal_

PAPER = Paper(
    "Golovneva, Wang, Weston, Sukhbaatar",
    2024,
    "Contextual Position Encoding: Learning to Count What's Important",
    "https://arxiv.org/abs/2405.18719",
)


def contextual_positions(attn_logits: Tensor) -> Tensor:
    """Gates → positions (paper §3, Eqs. 3–4; appendix listing): p_ij = Σ_{t ≥ j} σ(logit_it).

    attn_logits: (..., i, j), already scaled by 1/√d, with −inf on masked (future) entries, so those
    gates are exactly 0 and the sum over t ≥ j is the sum over t = j … i. The diagonal is included.
    Returns p (..., i, j) ≥ 0, unclamped; non-increasing in j along each row.
    """
    gates = torch.sigmoid(attn_logits)  # (..., i, j); σ(−∞) = 0 exactly
    return gates.flip(-1).cumsum(-1).flip(-1)  # (..., i, j) reverse cumulative sum over j


def contextual_positions_bidirectional(attn_logits: Tensor) -> Tensor:
    """Positions without a causal mask: the count runs from the query towards the key, either way.

    p_ij = Σ_{t=j..i} g_it for j ≤ i (the paper's count) and Σ_{t=i..j} g_it for j > i.
    attn_logits: (..., i, j), unmasked. Returns (..., i, j) ≥ 0.
    """
    # Deviation from paper: CoPE is defined for causal attention only. Without a mask we count the
    # gated tokens between query and key in whichever direction the key lies, so a key after the
    # query gets a count as well (instead of all future keys sharing the sum of every gate).
    gates = torch.sigmoid(attn_logits)  # (..., i, j)
    n_i, n_j = gates.shape[-2], gates.shape[-1]
    i = torch.arange(n_i, device=gates.device)[:, None]  # (i, 1)
    j = torch.arange(n_j, device=gates.device)[None, :]  # (1, j)
    back = (gates * (j <= i)).flip(-1).cumsum(-1).flip(-1)  # (..., i, j) Σ_{t=j..i}
    ahead = (gates * (j >= i)).cumsum(-1)  # (..., i, j) Σ_{t=i..j}
    return torch.where(j <= i, back, ahead)  # (..., i, j)


def gate_logits_from_counted(counted: Tensor, sharpness: float) -> Tensor:
    """Hand-set gate logits for the chapter: +s on every key that counts, −s elsewhere, −inf after
    the query (the causal mask). counted: bool (j,) → (i, j) float64 with i = j = n.

    s = 0 opens every gate halfway (σ(0) = ½); s = ∞ gives gates of exactly 1 and 0. A trained model
    learns its gates from q·k; this function only stands in for a head that has learned "count these".
    """
    counted = torch.as_tensor(counted, dtype=torch.bool)
    n = counted.numel()
    s = float(sharpness)
    row = torch.where(counted, torch.tensor(s, dtype=torch.float64), torch.tensor(-s, dtype=torch.float64))  # (j,)
    logits = row[None, :].expand(n, n).clone()  # (i, j): every query sees the same gate per key
    future = torch.arange(n)[None, :] > torch.arange(n)[:, None]  # (i, j)
    return logits.masked_fill(future, float("-inf"))  # (i, j)


def integer_position_logits(q: Tensor, table: Tensor) -> Tensor:
    """z_i[n] = q_i·e[n] for every integer position n (appendix listing, `pos_logits_fixed`).

    q: (b, h, i, d), table: (h, d, P) or (1, d, P) (one table shared by every head, as in the paper)
    → (b, h, i, P). Computed once: no (i, j, d) tensor is built.
    """
    return q @ table[None]  # (b, h, i, P); a (1, 1, d, P) table broadcasts over the heads


def interpolate_position_logits(z: Tensor, positions: Tensor) -> Tensor:
    """q_i·e[p_ij] for fractional p (paper Eq. 5; linear, so interpolating the logits equals the
    logit of the interpolated embedding): w·z[⌈p⌉] + (1 − w)·z[⌊p⌋] with w = p − ⌊p⌋.

    z: (b, h, i, P), positions: (b, h, i, j) already clamped to [0, P − 1] → (b, h, i, j).
    """
    lo = positions.floor().long()  # (b, h, i, j) integer indices: no gradient flows through them
    hi = positions.ceil().long()  # (b, h, i, j)
    w = positions - lo.to(positions.dtype)  # (b, h, i, j) differentiable w.r.t. the gates
    z_lo = z.gather(-1, lo)  # (b, h, i, j)
    z_hi = z.gather(-1, hi)  # (b, h, i, j)
    return w * z_hi + (1 - w) * z_lo  # (b, h, i, j)


Variant = Literal["paper", "official"]


@dataclass(frozen=True)
class CoPEConfig:
    # P, the number of position embeddings e[0] … e[P−1]; counts saturate at P − 1.
    # The paper uses 64 for a context of 1024 (positions grow only when gates fire).
    npos_max: int = 64
    # "paper": the appendix listing, position logits added after the 1/√d scaling.
    # "official": facebookresearch/RAM's default, position logits added before it (divided by √d).
    variant: Variant = "paper"
    # Std of the seeded position table; None = 1/√d, which gives q·e[p] of order 1 for unit-scale q.
    # 0.0 = the paper's zero initialisation (right for training, but then the untrained term is 0).
    init_std: float | None = None
    # False: one table per head (every head counts its own way; what every chapter draws). True: one
    # table e[0] … e[P−1] shared by every head, as in the paper's listing and facebookresearch/RAM.
    shared_table: bool = False


class CoPE(PositionalEncoding):
    """Contextual positions: each head counts the keys its gates open, back from the query."""

    name = "cope"
    label = "CoPE (Golovneva et al. 2024)"
    kind = "contextual"
    paper = PAPER
    relative_sign = CountBack("p_ij = Σ_{t=j..i} g_it", "query")  # a count ≥ 0, not a signed offset
    term_names = ("content", "position")
    shift_invariant = True  # the counts come from q·k alone
    config: CoPEConfig

    def __init__(
        self, d_model: int, n_heads: int, config: CoPEConfig | None = None, generator: torch.Generator | None = None
    ) -> None:
        config = config or CoPEConfig()
        if config.variant not in ("paper", "official"):
            raise ValueError(f"variant must be 'paper' or 'official', not {config.variant!r}")
        if config.npos_max < 2:
            raise ValueError("npos_max must be at least 2")
        super().__init__(d_model, n_heads, config, generator)
        std = 1.0 / math.sqrt(self.d_head) if config.init_std is None else float(config.init_std)
        # Deviation from paper: the listing zero-initialises E and training fills it. An untrained toy
        # with a zero table would show no position term at all, so we draw a seeded N(0, std²) table
        # (init_std=0.0 restores the zeros). By default one table per head: every head counts its own
        # way (a deviation from the paper's one shared table, which config.shared_table restores).
        rows = 1 if config.shared_table else n_heads
        self.table = nn.Parameter(normal_((rows, self.d_head, config.npos_max), std, generator))  # (h or 1, d, P)

    @property
    def head_tables(self) -> Tensor:
        """The position table each head reads, (h, d, P): a shared table repeated, not copied."""
        return self.table.expand(self.n_heads, -1, -1)  # (h, d, P)

    @classmethod
    def training_config(cls, max_len: int) -> CoPEConfig:
        """The paper's zero-initialised position table (appendix listing), P = 64 as in the paper."""
        return CoPEConfig(npos_max=64, init_std=0.0)

    def positions(self, scaled_logits: Tensor, causal: bool) -> Tensor:
        """Counted positions (b, h, i, j), clamped at P − 1 (appendix listing)."""
        if causal:
            n_i, n_j = scaled_logits.shape[-2:]
            # Same alignment as encoders.attention.causal_mask (queries at the end of the keys).
            future = torch.arange(n_j)[None, :] > torch.arange(n_i)[:, None] + (n_j - n_i)  # (i, j)
            p = contextual_positions(scaled_logits.masked_fill(future, float("-inf")))  # (b, h, i, j)
        else:
            p = contextual_positions_bidirectional(scaled_logits)  # (b, h, i, j)
        return p.clamp(max=self.config.npos_max - 1)  # (b, h, i, j)

    def logit_terms(
        self, q: Tensor, k: Tensor, q_positions: Tensor, k_positions: Tensor, causal: bool
    ) -> AttentionTerms:
        content = content_logits(q, k)  # (b, h, i, j), q·k/√d
        p = self.positions(content, causal)  # (b, h, i, j)
        z = integer_position_logits(q, self.table.to(q.dtype))  # (b, h, i, P)
        position = interpolate_position_logits(z, p)  # (b, h, i, j)
        if self.config.variant == "official":
            # RAM adds the position logits to the unscaled q·k and then divides the sum by √d.
            position = position / math.sqrt(q.shape[-1])
        gates = torch.sigmoid(content)  # (b, h, i, j)
        if causal:
            n_i, n_j = content.shape[-2:]
            future = torch.arange(n_j)[None, :] > torch.arange(n_i)[:, None] + (n_j - n_i)  # (i, j)
            gates = gates.masked_fill(future, 0.0)
        return AttentionTerms({"content": content, "position": position}, {"gates": gates, "positions": p})
