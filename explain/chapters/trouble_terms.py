"""The third trouble of "The trouble with absolute positions": no direct distance.

One score of the sinusoidal toy layer split into its four terms (Dai et al. 2019, §3.3), which of them
depend on j − i alone (Toeplitz maps), the part of W_qᵀW_k that would make the position–position term
relative — and TUPE's untied form of the same score (Ke, He and Liu 2021), computed on the same
sentence beside the four terms.

Axis legend: n tokens, i query position, j key position, D model dimension, f frequency pair.
Row-vector convention as in encoders/attention.py: q_i = (x_i + p_i) @ w_q, so the paper's W_q is
w_qᵀ; logits are q·k/√d with d the head dimension (one head here, d = D).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders.attention import toy_layer
from encoders.base import derived_seed
from encoders.sinusoidal import Sinusoidal, sinusoidal_rows
from encoders.text import token_embeddings, token_key

from .common import TOY_D_MODEL, run_tokens

D_MODEL = TOY_D_MODEL  # the toy layer's size on every page, here as one head of dimension 64


def relative_part(a: torch.Tensor) -> torch.Tensor:
    """The part of a (D, D) matrix A for which p_iᵀ A p_j depends on i − j only (sinusoidal p).

    For pair f the two channels of p_i are (sin iω_f, cos iω_f). A 2×2 diagonal block [[a, b], [−b, a]]
    gives a·cos((i−j)ω_f) + b·sin((i−j)ω_f): a function of the offset, and with b ≠ 0 not even
    symmetric, so it tells left from right. Everything else — the symmetric traceless part of each
    block (terms in (i+j)ω_f) and every block mixing two frequencies — depends on absolute positions.
    This keeps the first kind (the orthogonal projection of each diagonal block onto span{I, J}) and
    zeroes the rest. It is what RoPE builds in by construction.
    """
    D = a.shape[0]
    out = torch.zeros_like(a)
    for f in range(D // 2):
        s, c = 2 * f, 2 * f + 1
        rot = (a[s, s] + a[c, c]) / 2  # the identity part
        turn = (a[s, c] - a[c, s]) / 2  # the quarter-turn part
        out[s, s] = out[c, c] = rot
        out[s, c], out[c, s] = turn, -turn
    return out  # a lone sin channel (odd D) has no partner: it is dropped


def toeplitz_deviation(m: np.ndarray) -> float:
    """How far a square matrix is from depending on j − i only: the standard deviation of the
    entries along each diagonal, averaged over the diagonals that have at least two entries.
    0 for a Toeplitz matrix; NaN for a 1×1 matrix (no diagonal to compare along)."""
    n = m.shape[0]
    stds = [np.std(np.diagonal(m, offset=o)) for o in range(-(n - 2), n - 1)]
    return float(np.mean(stds)) if stds else float("nan")


def diagonal_spread(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets j − i, std along that diagonal) for the diagonals with at least two entries."""
    n = m.shape[0]
    offsets = np.arange(-(n - 2), n - 1)
    return offsets, np.array([np.std(np.diagonal(m, offset=int(o))) for o in offsets])


@dataclass
class FourTerms:
    tokens: tuple[str, ...]
    terms: dict[str, np.ndarray]  # name → (n, n): query i (rows), key j (columns), scaled by 1/√d
    layer_logits: np.ndarray  # (n, n) the sinusoidal layer's own logits (run_tokens, float64)
    sum_max_diff: float  # |Σ terms − layer logits|, the check that the split is the layer's
    pp_plain: np.ndarray  # (n, n) p_i·p_j, no projections (unscaled)
    position_maps: dict[str, np.ndarray]  # the position-only maps by display name (MAP_NAMES): p·p, its
    # projected term, and p_iᵀ relative_part(W_qᵀW_k) p_j / √d
    toeplitz: dict[str, float]  # name → toeplitz_deviation of that position–position matrix
    toeplitz_relative: dict[str, float]  # the same divided by the matrix's overall std (scale-free)
    offsets: np.ndarray  # (2n−3,) j − i of the diagonals with at least two entries
    spread: dict[str, np.ndarray]  # name → std along each of those diagonals
    relative_shift_change: float  # |relative part at positions k… − at 0…| for the prefix length k

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def stacked(self) -> np.ndarray:
        """(4, i, j) the four terms in TERM_NAMES order: the grid's panels."""
        return np.stack([self.terms[name] for name in TERM_NAMES])

    @property
    def mean_sizes(self) -> dict[str, float]:
        """name → mean |term| over all pairs."""
        return {name: float(np.abs(term).mean()) for name, term in self.terms.items()}

    @property
    def panel_height(self) -> int:
        """Pixels per panel of the grid: grows with the sentence, within 300 … 560."""
        return max(300, min(560, 120 + 16 * self.n))

    @property
    def map_charts(self) -> tuple[tuple[str, str, np.ndarray], ...]:
        """(chart key, map name, map) of the three position-only maps, in MAP_NAMES order."""
        return tuple((f"toeplitz_{k}", name, m) for k, (name, m) in enumerate(self.position_maps.items()))


TERM_NAMES = ("content–content", "content–position", "position–content", "position–position")
# Stable ids of the names above and of the three position-only maps: the dicts are keyed by the
# English names (tests read them); pages show each through its catalogue entry "trouble.term.<id>".
TERM_IDS = dict(zip(TERM_NAMES, ("cc", "cp", "pc", "pp"), strict=False))
MAP_NAMES = ("p·p (no projections)", "with W_q, W_k", "relative part of W_qᵀW_k")
MAP_IDS = dict(zip(MAP_NAMES, ("plain", "projected", "relative"), strict=False))
# What each term depends on (id → (the words, the positions)): only content–content ignores the
# positions, only position–position ignores the words; the positions are absolute ones.
TERM_DEPENDS = {"cc": (True, False), "cp": (True, True), "pc": (True, True), "pp": (False, True)}


def four_terms(tokens: tuple[str, ...], seed: int, d_model: int = D_MODEL, shift: int = 1) -> FourTerms:
    """The sinusoidal layer's logit split into four terms (Dai et al. 2019, §3.3: the expansion of
    the absolute-position score A^abs_ij into its terms (a)–(d)):

        (W_q(x_i + p_i))ᵀ(W_k(x_j + p_j)) / √d
          = x_iᵀW_qᵀW_k x_j + x_iᵀW_qᵀW_k p_j + p_iᵀW_qᵀW_k x_j + p_iᵀW_qᵀW_k p_j   (all / √d)

    computed from the very W_q, W_k, token vectors and PE rows the layer uses (float64), and checked
    against the layer's own logits. `shift` moves every position to test the relative part's
    shift-invariance (the prefix length of the first experiment).
    """
    n = len(tokens)
    if n == 0:
        raise ValueError("no tokens")
    enc = build("sinusoidal", d_model, 1, seed)
    assert isinstance(enc, Sinusoidal)
    layer = toy_layer(enc, seed)
    w_q = layer.w_q.detach().double()  # (D, D) row convention: q = x @ w_q, the paper's W_q is w_qᵀ
    w_k = layer.w_k.detach().double()  # (D, D)
    # The exact float32 toy vectors the layer receives, widened, so the check below is tight.
    x = token_embeddings(tuple(token_key(t) for t in tokens), d_model, seed).double()  # (n, D)
    p = sinusoidal_rows(torch.arange(n), d_model, enc.config.base)  # (n, D) float64
    scale = 1.0 / math.sqrt(enc.d_head)  # the layer's 1/√d, d = head dimension
    qx, qp = x @ w_q, p @ w_q  # (n, D) each
    kx, kp = x @ w_k, p @ w_k  # (n, D) each
    terms = {
        "content–content": (qx @ kx.T * scale).numpy(),  # (i, j)
        "content–position": (qx @ kp.T * scale).numpy(),  # query's word, key's position
        "position–content": (qp @ kx.T * scale).numpy(),  # query's position, key's word
        "position–position": (qp @ kp.T * scale).numpy(),  # positions only
    }
    layer_logits = run_tokens(tuple(tokens), seed, "sinusoidal", d_model, 1, float64=True).logits[0]
    total = sum(terms.values())

    a_rel = relative_part(w_q @ w_k.T)  # (D, D): p_i @ w_q @ w_kᵀ @ p_jᵀ is the position–position term
    pp_plain = (p @ p.T).numpy()  # (i, j)
    pp_rel = (p @ a_rel @ p.T * scale).numpy()  # (i, j)
    p_shift = sinusoidal_rows(torch.arange(n) + shift, d_model, enc.config.base)  # (n, D)
    pp_rel_shifted = (p_shift @ a_rel @ p_shift.T * scale).numpy()

    mats = dict(zip(MAP_NAMES, (pp_plain, terms["position–position"], pp_rel), strict=False))
    tz = {k: toeplitz_deviation(v) for k, v in mats.items()}
    tz_rel = {k: (tz[k] / float(np.std(v)) if np.std(v) > 0 else float("nan")) for k, v in mats.items()}
    offsets = diagonal_spread(pp_plain)[0]
    spread = {k: diagonal_spread(v)[1] for k, v in mats.items()}
    return FourTerms(
        tuple(tokens),
        terms,
        layer_logits,
        float(np.abs(total - layer_logits).max()),
        pp_plain,
        mats,
        tz,
        tz_rel,
        offsets,
        spread,
        float(np.abs(pp_rel_shifted - pp_rel).max()),
    )


# -- TUPE: the same score, untied ------------------------------------------------------------------


def tupe_projections(seed: int, d_model: int = D_MODEL) -> tuple[torch.Tensor, torch.Tensor]:
    """(U_q, U_k), each (D, D) float64 in the row convention (p @ u_q), drawn from the seed in a
    stream of their own (std 1/√D, like the layer's W_q and W_k): TUPE's separate projections of
    the position vectors. Untrained, as every projection of the toy layer."""
    g = torch.Generator().manual_seed(derived_seed(seed, "tupe position projections"))
    std = 1.0 / math.sqrt(d_model)
    u_q = torch.randn(d_model, d_model, generator=g, dtype=torch.float64) * std
    u_k = torch.randn(d_model, d_model, generator=g, dtype=torch.float64) * std
    return u_q, u_k


@dataclass
class TupeTerms:
    tokens: tuple[str, ...]
    content: np.ndarray  # (i, j) x_iᵀW_qᵀW_k x_j / √(2d): the layer's own W_q, W_k
    position: np.ndarray  # (i, j) p_iᵀU_qᵀU_k p_j / √(2d): positions through their own projections
    content_check: float  # max |content·√2 − the four-term split's content–content| (rounding only)
    dropped: tuple[float, float]  # mean |content–position|, |position–content| of the four-term split
    shift: int  # positions moved by this many for the check below
    position_shift_change: float  # max |position term at positions shift… − at 0…|: still absolute

    @property
    def total(self) -> np.ndarray:
        """(i, j) TUPE's score: the two terms, nothing mixed."""
        return np.asarray(self.content + self.position)

    @property
    def stacked(self) -> np.ndarray:
        """(3, i, j) content, position, total: the grid's panels."""
        return np.stack([self.content, self.position, self.total])

    @property
    def mean_sizes(self) -> tuple[float, float]:
        """Mean |content term|, mean |position term|."""
        return float(np.abs(self.content).mean()), float(np.abs(self.position).mean())


def tupe_score(
    x: torch.Tensor, p: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, u_q: torch.Tensor, u_k: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """TUPE's untied attention score (Ke, He and Liu 2021, "Rethinking Positional Encoding in Language
    Pre-training", §3.1, Eq. (7)), row convention:

        α_ij = (x_i W_q)(x_j W_k)ᵀ / √(2d)  +  (p_i U_q)(p_j U_k)ᵀ / √(2d)

    x (n, D) word vectors, p (n, D) position vectors → (content (n, n), position (n, n)). The words
    and the positions each meet only their own kind, through their own projections; the two mixed
    terms of (x + p)W_q W_kᵀ(x + p)ᵀ are gone, and √(2d) keeps the sum of two terms at the scale
    of one. (TUPE-A, Eq. (10), also unties the [CLS] token, which this toy sentence does not have;
    TUPE-R, Eq. (11), adds a relative bias b_{j−i} on top.)"""
    scale = 1.0 / math.sqrt(2 * x.shape[1])
    content = (x @ w_q) @ (x @ w_k).T * scale  # (i, j)
    position = (p @ u_q) @ (p @ u_k).T * scale  # (i, j)
    return content, position


def tupe_terms(tokens: tuple[str, ...], seed: int, d_model: int = D_MODEL, shift: int = 1) -> TupeTerms:
    """TUPE's two terms on the sentence, from the very W_q, W_k, word vectors and (sinusoidal) position
    vectors of the four-term split, with position projections U_q, U_k of their own. (TUPE learns its
    p_i, as BERT does; here they are the toy layer's sinusoidal rows, so the two splits compare.)"""
    n = len(tokens)
    if n == 0:
        raise ValueError("no tokens")
    enc = build("sinusoidal", d_model, 1, seed)
    assert isinstance(enc, Sinusoidal)
    layer = toy_layer(enc, seed)
    w_q, w_k = layer.w_q.detach().double(), layer.w_k.detach().double()  # (D, D) each
    x = token_embeddings(tuple(token_key(t) for t in tokens), d_model, seed).double()  # (n, D)
    base = enc.config.base
    p = sinusoidal_rows(torch.arange(n), d_model, base)  # (n, D)
    p_shift = sinusoidal_rows(torch.arange(n) + shift, d_model, base)  # (n, D)
    u_q, u_k = tupe_projections(seed, d_model)
    content, position = tupe_score(x, p, w_q, w_k, u_q, u_k)
    _, position_shifted = tupe_score(x, p_shift, w_q, w_k, u_q, u_k)
    four = four_terms(tokens, seed, d_model, shift)
    return TupeTerms(
        tuple(tokens),
        content.numpy(),
        position.numpy(),
        float(np.abs(content.numpy() * math.sqrt(2) - four.terms["content–content"]).max()),
        (
            float(np.abs(four.terms["content–position"]).mean()),
            float(np.abs(four.terms["position–content"]).mean()),
        ),
        shift,
        float(np.abs(position_shifted.numpy() - position.numpy()).max()),
    )
