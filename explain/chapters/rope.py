"""What the RoPE chapter shows, computed from encoders/rope.py.

Every function takes primitives and returns numpy arrays (or dataclasses of them), so the page can
cache it (ui.cache.cached) and tests can check it without Streamlit. The query and key vectors are
the toy layer's own q and k for the learner's words (one head of size d), so the circles, the
heatmaps and the attention maps all show the same numbers. The `*_section` functions also return
the words a section states about its numbers (captions, legends, the question), in `lang`.

Axis legend: T animation frames, P frequency pairs (d/2), N positions, n tokens, i query, j key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from encoders import build
from encoders import rope as enc
from encoders.attention import toy_layer
from encoders.rope import (
    apply_rotary,
    half_split_permutation,
    long_term_decay,
    rope_frequencies,
    rotation_matrix,
)
from encoders.text import token_embeddings, token_key
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

from .common import run_tokens

BASES = (10, 100, 1_000, 10_000, 100_000, 1_000_000)  # the base select-slider's options
MAX_POS = 200  # positions the sliders reach; the animation adds up to FRAMES − 1 more
FRAMES = 41  # animation frames of the rotation circles
MAX_SHIFT = 1_000_000  # |c| for "move every position by c"
MAX_OFFSET = 100_000  # the sentence's first position
MAX_WORDS = 256  # word pickers index the sentence's first 256 tokens (the tokenizer's limit)
NO_CHANGE = 1e-6  # a largest change below this is float64 rounding of the angles, not a change
LITTLE_CHANGE = 0.1  # … below this, a small one
DECAY_BASES = (1_000.0, 10_000.0, 500_000.0)  # the three long-term-decay curves
SENTENCE_D = 64  # the sentence section's one head


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


def _rotate(v: np.ndarray, positions: npt.ArrayLike, base: float, layout: str = "interleaved") -> np.ndarray:
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


@dataclass
class Decay:
    distances: np.ndarray  # (K,)
    curves: dict[float, np.ndarray]  # base → (1/(d/2)) Σ_u |S_u| at each distance


# Cache bounds (pages/rotary/rope.py): One circles entry holds 41 frames × 16 pairs of arrows and notes (~100
# KB); one sentence entry up to 5 maps of 256 × 256 float32 (~1.3 MB), hence 32.
@bounded(32)
def decay_curves(d: int, bases: tuple[float, ...], max_distance: int) -> Decay:
    dist = np.arange(max_distance + 1)
    return Decay(dist, {float(b): long_term_decay(d, dist, b).numpy() for b in bases})


@dataclass
class Layouts:
    permutation: np.ndarray  # (d,) x_half = x_interleaved[perm]
    layout_gap: float  # max |R_half·Pq − P·R q| over the positions: P·R = R_half·P
    logit_gap: float  # max |logits of the half-split on Pq, Pk − logits of the interleaved on q, k|
    same_weights_gap: float  # half-split on the *unpermuted* q, k: not the same logits
    R_interleaved: np.ndarray  # (d, d) R_m, interleaved
    R_half: np.ndarray  # (d, d) R_m, half-split

    @property
    def permutation_text(self) -> str:
        """perm as the page prints it: "0, 2, 4, …"."""
        return ", ".join(str(int(v)) for v in self.permutation)


@bounded(32)
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
        float(np.abs(qh - qi[:, perm]).max()),
        float(np.abs(lh - li).max()),
        float(np.abs(wrong - li).max()),
        rotation_matrix(m, d, base, "interleaved").numpy(),
        rotation_matrix(m, d, base, "half").numpy(),
    )


# ------------------------------------------------------------------------ sections, with their words


@dataclass(frozen=True)
class CirclesSection:
    circles: Circles
    notes: np.ndarray  # (T, P) str: the angle and the pair's share of the logit, under each circle
    panel_titles: tuple[str, ...]  # (P,) "pair f · λ = …"
    frame_titles: tuple[str, ...]  # (T,) positions, offset and logit of each frame
    frame_labels: tuple[str, ...]  # (T,) the animation slider's step labels: "0", "1", …
    gap: float  # largest |measured − predicted| angle over every pair and frame, degrees


def circles_section(
    tokens: tuple[str, ...],
    seed: int,
    d: int,
    base: float,
    query_index: int,
    key_index: int,
    m: int,
    n: int,
    move: str,
    lang: str,
) -> CirclesSection:
    """The rotation circles (FRAMES frames) and what the figure writes on them, in `lang`."""
    c = circles(tokens, seed, d, base, query_index, key_index, m, n, FRAMES, move)
    note = t("rope.circles.note", lang)  # one template for every circle and frame
    notes = np.array(
        [
            [note.format(angle=a, share=s).replace("-", "−") for a, s in zip(ang, con, strict=True)]
            for ang, con in zip(c.angle, c.contribution, strict=True)
        ]
    )
    panels = tuple(
        t("rope.circles.panel_fine" if lam < 100 else "rope.circles.panel_coarse", lang, f=f, wavelength=lam)
        for f, lam in enumerate(c.wavelength)
    )
    frame = t("rope.circles.frame", lang)
    frames = tuple(
        frame.format(m=a, n=b, offset=b - a, score=s).replace("-", "−")
        for a, b, s in zip(c.m, c.n, c.score, strict=True)
    )
    gap = float(np.abs((c.angle - c.predicted_angle + 180) % 360 - 180).max())
    return CirclesSection(c, notes, panels, frames, tuple(str(f) for f in range(FRAMES)), gap)


IDENTITY_ANSWERS = ("no", "little", "lot")  # stable ids; the words are rope.identity.answer_<id>


def identity_answer(max_change: float) -> str:
    """Does moving every position by c change the scores? Read off the largest change measured."""
    return "no" if max_change < NO_CHANGE else "little" if max_change < LITTLE_CHANGE else "lot"


def identity_question(view: RelativeIdentity, shift: int, lang: str) -> Question:
    """The shift question, answered by the map the page draws: its largest change under the shift."""
    answer = identity_answer(view.max_change)
    facts: dict[str, object] = {"shift": shift, "change": view.max_change, "answer": answer}
    # "Rounding only" is said only when the measured change is below NO_CHANGE; should the identity
    # ever fail, the explanation states the change without that claim.
    key = "rope.identity.explanation" if answer == "no" else "rope.identity.explanation_changed"
    return Question(
        key="rope_q",
        prompt=t("rope.identity.question", lang, shift=shift),
        options=IDENTITY_ANSWERS,
        labels=tuple(t(f"rope.identity.answer_{a}", lang) for a in IDENTITY_ANSWERS),
        answer=answer,
        explanation=t(key, lang, change=view.max_change, shift=shift),
        facts=facts,
    )


@dataclass(frozen=True)
class IdentitySection:
    view: RelativeIdentity
    question: Question
    rows: dict[str, np.ndarray]  # legend name → one row of the map against n − m
    dashed: tuple[str, ...]  # the middle rows: dashed, so the rows they overlap show through


def identity_section(
    tokens: tuple[str, ...],
    seed: int,
    d: int,
    base: float,
    query_index: int,
    key_index: int,
    size: int,
    shift: int,
    lang: str,
) -> IdentitySection:
    view = relative_identity(tokens, seed, d, base, query_index, key_index, size, shift)
    rows = {t("rope.identity.row", lang, m=r): v for r, v in view.by_offset.items()}
    names = tuple(rows)
    return IdentitySection(view, identity_question(view, shift, lang), rows, names[1:-1])


@dataclass(frozen=True)
class SentenceView:
    tokens: tuple[str, ...]
    offset: int
    panels: np.ndarray  # (2, n, n): weights without positions (NoPE), with RoPE from `offset`
    terms: np.ndarray  # (3, n, n): RoPE's content and position terms and their sum; masked cells NaN
    change: float  # largest |weights from `offset` − weights from 0| (0.0 when offset = 0)


@bounded(32)
def sentence_view(tokens: tuple[str, ...], seed: int, causal: bool, offset: int) -> SentenceView:
    """The toy layer (one head, d = SENTENCE_D) on the sentence without positions and with RoPE."""
    plain = run_tokens(tokens, seed, "none", SENTENCE_D, 1, causal)
    rope = run_tokens(tokens, seed, "rope", SENTENCE_D, 1, causal)
    moved = run_tokens(tokens, seed, "rope", SENTENCE_D, 1, causal, offset) if offset else rope
    veil = np.where(np.isnan(rope.logits[0]), np.nan, 1.0)  # blank the masked cells in every panel
    terms = np.stack([rope.terms["content"][0] * veil, rope.terms["position"][0] * veil, rope.logits[0]])
    change = float(np.nanmax(np.abs(moved.weights - rope.weights))) if offset else 0.0
    return SentenceView(tokens, offset, np.stack([plain.weights[0], moved.weights[0]]), terms, change)


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="rope",
    part="Rotary",
    page="pages/rotary/rope.py",
    icon=":material/rotate_right:",
    order=80,
    papers=(enc.PAPER,),
    sources=("encoders.rope:rope_frequencies", "encoders.rope:apply_rotary", "encoders.rope:RoPE.logit_terms"),
    encodings=("rope",),
    derivations=(
        "rope-complex-2d",
        "rope-matrix-2d",
        "rope-relative-d4",
        "rope-relative-d6",
        "rope-relative-block",
        "rope-from-the-goal",
        "rope-skew-generator",
        "rope-skew-exponential-2d",
        "rope-block-exponential",
        "rope-absorb-basis",
    ),
    link={
        "rope_d": "8",
        "rope_base": "100",
        "rope_m": "10",
        "rope_n": "3",
        "rope_size": "16",
        "rope_shift": "500",
        "rope_causal": "true",
        "rope_q_word": "3",
        "rope_move": "query",
    },
    link_shows={
        "rope_d": 8,
        "rope_base": 100,
        "rope_m": 10,
        "rope_n": 3,
        "rope_size": 16,
        "rope_shift": 500,
        "rope_causal": True,
        "rope_q_word": 3,
        "rope_move": "query",
    },
)
