"""What the RoPE chapter shows, computed from encoders/rope.py (numbers only).

Every function takes primitives and returns numpy arrays (or dataclasses of them), so pages can
cache them with st.cache_data and tests can check them without Streamlit. The query and key
vectors are the toy layer's own q and k for the learner's words (one head of size d), so the
circles, the heatmaps and the attention maps all show the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders.attention import toy_layer
from encoders.rope import (
    apply_rotary,
    half_split_permutation,
    long_term_decay,
    rope_frequencies,
    rotation_matrix,
)
from encoders.text import token_embeddings, token_key


def word_vectors(
    tokens: tuple[str, ...], seed: int, d: int, query_index: int, key_index: int
) -> tuple[np.ndarray, np.ndarray]:
    """The unrotated query vector of tokens[query_index] and key vector of tokens[key_index],
    float64 (d,) each: token embedding @ W_q (resp. W_k) of the toy layer with one head of size d."""
    keys = tuple(token_key(t) for t in tokens)
    x = token_embeddings(keys, d, seed).double()  # (n, d)
    layer = toy_layer(build("rope", d, 1, seed), seed).double()
    with torch.inference_mode():
        q = (x[query_index] @ layer.w_q).numpy()  # (d,)
        k = (x[key_index] @ layer.w_k).numpy()  # (d,)
    return q, k


def _rotate(v: np.ndarray, positions, base: float, layout: str = "interleaved") -> np.ndarray:
    """apply_rotary on one vector placed at several positions → (len(positions), d) float64."""
    pos = np.asarray(positions, dtype=np.float64).reshape(-1)
    x = torch.from_numpy(np.tile(v, (pos.size, 1)))  # (n, d)
    return apply_rotary(x, torch.from_numpy(pos), base=base, layout=layout).numpy()


def _wrap_degrees(a: np.ndarray) -> np.ndarray:
    """Angles in degrees wrapped to (−180, 180]."""
    w = (np.asarray(a) + 180.0) % 360.0 - 180.0
    return np.where(w == -180.0, 180.0, w)


@dataclass
class Circles:
    """The rotation circles: pair f of the query and of the key, frame by frame.

    Frame t puts the query at m_t and the key at n_t (the Play button steps through the frames).
    """

    theta: np.ndarray  # (P,) θ_f, radians per position
    wavelength: np.ndarray  # (P,) 2π/θ_f, positions per full turn
    m: np.ndarray  # (T,) query position per frame
    n: np.ndarray  # (T,) key position per frame
    q_xy: np.ndarray  # (T, P, 2) rotated query pair f
    k_xy: np.ndarray  # (T, P, 2) rotated key pair f
    angle: np.ndarray  # (T, P) angle from the query arrow to the key arrow, degrees in (−180, 180]
    contribution: np.ndarray  # (T, P) pair f's share of the score: q'_f·k'_f / √d
    score: np.ndarray  # (T,) the logit q'·k'/√d = Σ_f contribution
    predicted_angle: np.ndarray  # (T, P) angle at (0, 0) + (n − m)·θ_f, wrapped — the identity


def circles(
    tokens: tuple[str, ...],
    seed: int,
    d: int,
    base: float,
    query_index: int,
    key_index: int,
    m: int,
    n: int,
    n_frames: int,
    move: str,
) -> Circles:
    """Rotate the query word's pairs by m·θ_f and the key word's by n·θ_f, for frames t = 0…T−1.

    move = "both": query at m + t and key at n + t (the offset n − m never changes);
    move = "query": query at m + t, key stays at n.
    """
    if move not in ("both", "query"):
        raise ValueError("move must be 'both' or 'query'")
    q, k = word_vectors(tokens, seed, d, query_index, key_index)
    t = np.arange(n_frames)
    ms = m + t
    ns = n + t if move == "both" else np.full(n_frames, n)
    qr = _rotate(q, ms, base)  # (T, d) interleaved: pair f is channels 2f, 2f+1
    kr = _rotate(k, ns, base)  # (T, d)
    q_xy = qr.reshape(n_frames, d // 2, 2)  # (T, P, 2)
    k_xy = kr.reshape(n_frames, d // 2, 2)  # (T, P, 2)
    ang = np.degrees(np.arctan2(k_xy[..., 1], k_xy[..., 0]) - np.arctan2(q_xy[..., 1], q_xy[..., 0]))
    contribution = (q_xy * k_xy).sum(-1) / math.sqrt(d)  # (T, P)
    theta = rope_frequencies(d, base).numpy()  # (P,)
    q0, k0 = q.reshape(d // 2, 2), k.reshape(d // 2, 2)
    ang0 = np.degrees(np.arctan2(k0[:, 1], k0[:, 0]) - np.arctan2(q0[:, 1], q0[:, 0]))  # (P,)
    predicted = ang0[None, :] + np.degrees((ns - ms)[:, None] * theta[None, :])  # (T, P)
    return Circles(
        theta,
        2 * np.pi / theta,
        ms,
        ns,
        q_xy,
        k_xy,
        _wrap_degrees(ang),
        contribution,
        contribution.sum(-1),
        _wrap_degrees(predicted),
    )


@dataclass
class RelativeIdentity:
    logits: np.ndarray  # (N, N): q at query position m (row), k at key position n (column)
    shifted: np.ndarray  # (N, N): the same with every position + c
    max_change: float  # max |shifted − logits|
    diagonal_spread: float  # largest (max − min) along any diagonal n − m = const
    offsets: np.ndarray  # (2N−1,) n − m
    by_offset: dict[int, np.ndarray]  # query row m → logit at n = m + offset (NaN outside)


def relative_identity(
    tokens: tuple[str, ...], seed: int, d: int, base: float, query_index: int, key_index: int, size: int, shift: int
) -> RelativeIdentity:
    """qᵀ_m k_n for the query word at every m and the key word at every n in 0…N−1, and again with
    all positions moved by c. Float64, so the changes print as rounding (~1e-13 or less)."""
    q, k = word_vectors(tokens, seed, d, query_index, key_index)
    pos = np.arange(size)
    L = _rotate(q, pos, base) @ _rotate(k, pos, base).T / math.sqrt(d)  # (m, n)
    S = _rotate(q, pos + shift, base) @ _rotate(k, pos + shift, base).T / math.sqrt(d)  # (m, n)
    spread = 0.0
    for off in range(-(size - 1), size):
        diag = np.diagonal(L, offset=off)  # entries with n − m = off
        spread = max(spread, float(diag.max() - diag.min()))
    offsets = np.arange(-(size - 1), size)
    rows = {}
    for r in sorted({0, size // 2, size - 1}):
        curve = np.full(offsets.shape, np.nan)
        ok = (r + offsets >= 0) & (r + offsets < size)
        curve[ok] = L[r, r + offsets[ok]]
        rows[int(r)] = curve
    return RelativeIdentity(L, S, float(np.abs(S - L).max()), spread, offsets, rows)


def rotation_matrix_view(d: int, base: float, m: float, layout: str = "interleaved") -> np.ndarray:
    """R_m (d, d) float64, built entry by entry (encoders.rope.rotation_matrix)."""
    return rotation_matrix(m, d, base, layout).numpy()


@dataclass
class Decay:
    distances: np.ndarray  # (K,)
    curves: dict[float, np.ndarray]  # base → (1/(d/2)) Σ_u |S_u| at each distance


def decay_curves(d: int, bases: tuple[float, ...], max_distance: int) -> Decay:
    dist = np.arange(max_distance + 1)
    return Decay(dist, {float(b): long_term_decay(d, dist, b).numpy() for b in bases})


@dataclass
class Layouts:
    permutation: np.ndarray  # (d,) x_half = x_interleaved[perm]
    rotated_interleaved: np.ndarray  # (N, d) R_m q, interleaved layout
    rotated_half: np.ndarray  # (N, d) half-split rotation of Pq
    layout_gap: float  # max |rotated_half − rotated_interleaved[:, perm]|: P·R = R_half·P
    logits_interleaved: np.ndarray  # (N, N)
    logits_half: np.ndarray  # (N, N) half-split on Pq, Pk
    logit_gap: float  # max |logits_half − logits_interleaved|
    same_weights_gap: float  # half-split on the *unpermuted* q, k: not the same logits
    R_interleaved: np.ndarray  # (d, d) R_m, interleaved
    R_half: np.ndarray  # (d, d) R_m, half-split


def layouts(
    tokens: tuple[str, ...], seed: int, d: int, base: float, query_index: int, key_index: int, size: int, m: int
) -> Layouts:
    q, k = word_vectors(tokens, seed, d, query_index, key_index)
    perm = half_split_permutation(d).numpy()
    pos = np.arange(size)
    qi, ki = _rotate(q, pos, base, "interleaved"), _rotate(k, pos, base, "interleaved")  # (N, d)
    qh, kh = _rotate(q[perm], pos, base, "half"), _rotate(k[perm], pos, base, "half")  # (N, d)
    li = qi @ ki.T / math.sqrt(d)
    lh = qh @ kh.T / math.sqrt(d)
    wrong = _rotate(q, pos, base, "half") @ _rotate(k, pos, base, "half").T / math.sqrt(d)
    return Layouts(
        perm,
        qi,
        qh,
        float(np.abs(qh - qi[:, perm]).max()),
        li,
        lh,
        float(np.abs(lh - li).max()),
        float(np.abs(wrong - li).max()),
        rotation_matrix(m, d, base, "interleaved").numpy(),
        rotation_matrix(m, d, base, "half").numpy(),
    )
