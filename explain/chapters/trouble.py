"""What "The trouble with absolute positions" shows, computed from the live encoders (numbers only).

Three troubles, one function each:
    shift_experiment   put a prefix ("Well,") in front: every position vector moves, and so does the
                       logit between the *same* two words
    length_experiment  positions past the training length: the sinusoidal table has vectors there, but
                       vectors (and angles) it never saw; a learned table has no rows at all
    four_terms         (W_q(x_i + p_i))ᵀ(W_k(x_j + p_j)) split into content–content, content–position,
                       position–content and position–position; none of them is a function of j − i

Axis legend: n tokens, i query position, j key position, D model dimension, f frequency pair.
Row-vector convention as in encoders/attention.py: q_i = (x_i + p_i) @ w_q, so the paper's W_q is
w_qᵀ; logits are q·k/√d with d the head dimension (one head here, d = D).

Every function takes primitives and returns numpy arrays or dataclasses of them, so pages can cache
them with st.cache_data and tests can check them without Streamlit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders.attention import toy_layer
from encoders.base import PositionOutOfRange
from encoders.learned import LearnedConfig
from encoders.sinusoidal import sinusoidal_frequencies, sinusoidal_rows
from encoders.text import token_embeddings, token_key

from .common import run_tokens

D_MODEL = 64  # the toy layer's size on every page: one head of dimension 64
MAX_PREFIX_CHARS = 60  # the prefix box takes this many characters …
MAX_PREFIX_TOKENS = 16  # … and at most this many of its tokens are used
MAX_TRAIN_LEN = 256  # bounds of the length sliders (the page's help texts say so)
MAX_TEST_LEN = 1024


@dataclass(frozen=True)
class Example:
    """The chapter's example in one language: a three-word sentence, then the same with a two-token
    prefix in front. The prose of that language discusses exactly these tokens; `query` and `key`
    index the pair the page's predict question asks about."""

    sentence: str
    prefix: str
    query: int
    key: int


EXAMPLES = {
    "en": Example("I like CV", "Well,", query=1, key=2),  # "like" → "CV"
    "ko": Example("나는 CV를 좋아해", "음,", query=2, key=1),  # "좋아해" → "CV를"
}


# -- 1. shift sensitivity ------------------------------------------------------------------------


@dataclass
class ShiftResult:
    tokens: tuple[str, ...]  # the original words (n,)
    prefix: tuple[str, ...]  # the prefix tokens (k,)
    shift: int  # k: every original word moves from position p to p + k
    pe_before: np.ndarray  # (n, D) the vector added under each word, positions 0 … n−1
    pe_after: np.ndarray  # (n, D) the same words at positions k … k+n−1
    pe_cosine: np.ndarray  # (n,) cos(PE(p), PE(p+k)) per word
    logits_before: np.ndarray  # (n, n) query i, key j, among the original words
    logits_after: np.ndarray  # (n, n) the same pairs of words after the prefix
    max_abs_change: float
    mean_abs_change: float
    mean_abs_logit: float  # mean |logit| before, to judge the size of the change
    largest_pair: tuple[int, int]  # (i, j) of the largest |change|
    content_max_change: float  # the position-free baseline (NoPE logits): 0 exactly
    prefixed_run_max_diff: float  # whole prefixed sentence vs positions_offset = k: the same logits

    @property
    def logits_diff(self) -> np.ndarray:
        return self.logits_after - self.logits_before  # (n, n)


def shift_experiment(
    tokens: tuple[str, ...], prefix: tuple[str, ...], seed: int, d_model: int = D_MODEL
) -> ShiftResult:
    """The same words without and with a prefix, through the seeded one-head sinusoidal layer.

    A logit involves only the query word, the key word and their two positions, so the prefix words
    themselves never enter the logits among the original words — only how many there are (k). We run
    the original words at positions k … k+n−1 (positions_offset = k) and check against running the
    whole prefixed sentence and keeping the original words' rows and columns.
    """
    n, k = len(tokens), len(prefix)
    if n == 0:
        raise ValueError("the sentence to shift has no tokens")
    before = run_tokens(tokens, seed, "sinusoidal", d_model, 1, float64=True)
    after = run_tokens(tokens, seed, "sinusoidal", d_model, 1, positions_offset=k, float64=True)
    whole = run_tokens(tuple(prefix) + tuple(tokens), seed, "sinusoidal", d_model, 1, float64=True)
    nope_before = run_tokens(tokens, seed, "none", d_model, 1, float64=True)
    nope_after = run_tokens(tokens, seed, "none", d_model, 1, positions_offset=k, float64=True)

    # What the encoder added under each word: the layer's input minus the bare token embedding.
    pe_before = before.inputs - nope_before.inputs  # (n, D)
    pe_after = after.inputs - nope_after.inputs  # (n, D)
    norms = np.linalg.norm(pe_before, axis=1) * np.linalg.norm(pe_after, axis=1)
    cosine = (pe_before * pe_after).sum(axis=1) / norms  # (n,)

    lb, la = before.logits[0], after.logits[0]  # (i, j)
    diff = np.abs(la - lb)
    i, j = np.unravel_index(int(np.argmax(diff)), diff.shape)
    return ShiftResult(
        tokens=tuple(tokens),
        prefix=tuple(prefix),
        shift=k,
        pe_before=pe_before,
        pe_after=pe_after,
        pe_cosine=cosine,
        logits_before=lb,
        logits_after=la,
        max_abs_change=float(diff.max()),
        mean_abs_change=float(diff.mean()),
        mean_abs_logit=float(np.abs(lb).mean()),
        largest_pair=(int(i), int(j)),
        content_max_change=float(np.abs(nope_after.logits[0] - nope_before.logits[0]).max()),
        prefixed_run_max_diff=float(np.abs(whole.logits[0, k:, k:] - la).max()),  # (i, j) of the words
    )


# -- 2. length -----------------------------------------------------------------------------------


@dataclass
class LengthResult:
    l_train: int
    l_test: int
    pe: np.ndarray  # (l_test, D) float32: the sinusoidal table for positions 0 … l_test−1
    omega: np.ndarray  # (D/2,) ω_f
    train_max_angle: np.ndarray  # (D/2,) (l_train − 1)·ω_f, the largest angle pair f reached in training
    test_max_angle: np.ndarray  # (D/2,) (l_test − 1)·ω_f
    wrapped_in_training: np.ndarray  # (D/2,) bool: the pair turned a full circle within training
    angle_gap: np.ndarray  # (D/2,) radians: farthest a test angle (mod 2π) lies from every training angle
    nearest_distance: np.ndarray  # (l_test,) |PE(p) − PE(p')|, p' the nearest training position's vector
    learned_table: np.ndarray  # (l_test, D): the learned table's rows, NaN where no row exists
    learned_error: str | None  # the PositionOutOfRange message, or None when every position has a row
    learned_bad_position: int | None  # the position the encoder reported


def circular_gap(train_angles: np.ndarray, test_angles: np.ndarray) -> float:
    """Largest distance (radians, along the circle) from a test angle to its nearest training angle."""
    if test_angles.size == 0:
        return 0.0
    seen = np.sort(np.mod(train_angles, 2 * np.pi))
    new = np.mod(test_angles, 2 * np.pi)
    idx = np.searchsorted(seen, new)  # seen[idx−1] ≤ new < seen[idx], wrapping at both ends
    above = seen[idx % seen.size] + np.where(idx == seen.size, 2 * np.pi, 0.0)
    below = seen[idx - 1] - np.where(idx == 0, 2 * np.pi, 0.0)
    return float(np.minimum(above - new, new - below).max())


def length_experiment(l_train: int, l_test: int, seed: int, d_model: int = D_MODEL) -> LengthResult:
    """A model trained on l_train positions meets l_test positions.

    Sinusoidal: every position has a vector, but pair f has only ever shown the model the angles
    t·ω_f for t < l_train. Pairs with (l_train − 1)·ω_f ≥ 2π went round the circle during training;
    slower pairs had seen only an arc, and positions past l_train take them off it.
    Learned: the table (drawn through the registry with max_len = l_train) has no row past l_train − 1,
    and the encoder raises PositionOutOfRange.
    """
    if not (1 <= l_train <= MAX_TRAIN_LEN and 1 <= l_test <= MAX_TEST_LEN):
        raise ValueError(f"lengths must be 1…{MAX_TRAIN_LEN} (training) and 1…{MAX_TEST_LEN} (test)")
    if d_model % 2:
        raise ValueError("d_model must be even: every sin channel needs its cos partner here")
    sin_enc = build("sinusoidal", d_model, 1, seed)
    base = sin_enc.config.base
    positions = torch.arange(l_test)  # (l_test,)
    pe = sinusoidal_rows(positions, d_model, base)  # (l_test, D) float64
    omega = sinusoidal_frequencies(d_model, base).numpy()  # (D/2,)

    train_max = (l_train - 1) * omega
    test_max = (l_test - 1) * omega
    t_train = np.arange(l_train)
    t_new = np.arange(l_train, l_test)  # empty when the test fits in training
    gap = np.array([circular_gap(t_train * w, t_new * w) for w in omega])

    # Distance of each position's whole vector to the nearest vector seen in training.
    seen = sinusoidal_rows(torch.arange(l_train), d_model, base)  # (l_train, D)
    # Direct differences, not the |a|² + |b|² − 2a·b shortcut, so a seen position is at distance 0 exactly.
    dist = torch.cdist(pe[None], seen[None], compute_mode="donot_use_mm_for_euclid_dist")[0]  # (l_test, l_train)
    nearest = dist.min(dim=1).values.numpy()  # (l_test,)

    learned = build("learned", d_model, 1, seed, LearnedConfig(max_len=l_train))
    table = learned.table.detach().double().numpy()  # (l_train, D)
    padded = np.full((l_test, d_model), np.nan)
    rows = min(l_train, l_test)
    padded[:rows] = table[:rows]
    error, bad = None, None
    try:
        learned.encode_input(torch.zeros(1, l_test, d_model), positions)  # (1, l_test, D)
    except PositionOutOfRange as e:
        error, bad = str(e), e.position
    return LengthResult(
        l_train,
        l_test,
        pe.float().numpy(),
        omega,
        train_max,
        test_max,
        train_max >= 2 * np.pi,
        gap,
        nearest,
        padded,
        error,
        bad,
    )


# -- 3. the four terms ---------------------------------------------------------------------------


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
    pp_relative: np.ndarray  # (n, n) p_iᵀ relative_part(W_qᵀW_k) p_j / √d
    position_maps: dict[str, np.ndarray]  # the three position-only maps above, by display name
    toeplitz: dict[str, float]  # name → toeplitz_deviation of that position–position matrix
    toeplitz_relative: dict[str, float]  # the same divided by the matrix's overall std (scale-free)
    offsets: np.ndarray  # (2n−3,) j − i of the diagonals with at least two entries
    spread: dict[str, np.ndarray]  # name → std along each of those diagonals
    relative_shift_change: float  # |pp_relative at positions k… − at 0…| for the prefix length k


TERM_NAMES = ("content–content", "content–position", "position–content", "position–position")
# Stable ids of the names above and of the three position-only maps: the dicts are keyed by the
# English names (tests read them); pages show each through its catalogue entry "trouble.term.<id>".
TERM_IDS = dict(zip(TERM_NAMES, ("cc", "cp", "pc", "pp"), strict=False))
MAP_NAMES = ("p·p (no projections)", "with W_q, W_k", "relative part of W_qᵀW_k")
MAP_IDS = dict(zip(MAP_NAMES, ("plain", "projected", "relative"), strict=False))


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
        pp_rel,
        mats,
        tz,
        tz_rel,
        offsets,
        spread,
        float(np.abs(pp_rel_shifted - pp_rel).max()),
    )
