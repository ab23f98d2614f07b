"""What the Sinusoidal APE chapter shows, computed from encoders/sinusoidal.py.

Every function takes primitives and returns numpy arrays (or dataclasses of them, with the slices the
page draws as properties), so the page can cache them and the tests can check them without
Streamlit.

Axis legend: n positions, d channels, f frequency pair (channels 2f and 2f+1), p position, Δ shift.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import sinusoidal as enc
from encoders.sinusoidal import (
    concatenated_permutation,
    shift_matrix,
    sinusoidal_frequencies,
    sinusoidal_rows,
    sinusoidal_table,
)
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

from .common import LayerView, run_layer

DEFAULT_CHANNELS = (0, 1, 6, 14)  # the waves drawn first: a sin/cos pair, then two slower sines
BINARY_POSITIONS = 32  # positions of the binary-counter comparison, at most
BINARY_BITS = 6
BINARY_CHANNELS = 12  # PE channels beside the bits
SHIFT_CHANNELS = 32  # channels of the two shifted vectors drawn
T_BLOCK = 16  # rows and columns of T(Δ) drawn
LAYOUT_MAX = 64  # positions and channels of the two layout maps (and of the t2t table check)
SENTENCE_D = 64  # the toy layer on the learner's sentence


# Cache bounds (pages/absolute/sinusoidal.py): A PE matrix is at most 512 × 512 float32 (1 MB) and a
# dot-product view 512 × 512 float64 (2 MB), hence 16 entries for those.
@bounded(16)
def pe_matrix(n: int, d: int, base: float) -> np.ndarray:
    """(n, d) float32 — float32 halves what the browser receives and is exact enough to draw."""
    return sinusoidal_table(n, d, base).numpy()


def wavelengths(d: int, base: float) -> np.ndarray:
    """λ_f = 2π/ω_f per pair (⌈d/2⌉,): how many positions one full turn of pair f takes."""
    return np.asarray((2 * np.pi / sinusoidal_frequencies(d, base)).numpy())


def binary_digits(n: int, n_bits: int) -> np.ndarray:
    """(n, n_bits) 0/1: bit b of each position, least significant first — the analogy: bit b flips
    every 2^b positions, as pair f turns every λ_f positions; sinusoids are its smooth version."""
    pos = np.arange(n)[:, None]
    return ((pos >> np.arange(n_bits)[None, :]) & 1).astype(float)


# ------------------------------------------------------------------------------ channels as waves


def default_channels(d: int) -> list[int]:
    """The channels drawn before the learner picks any: those of DEFAULT_CHANNELS that exist."""
    return [c for c in DEFAULT_CHANNELS if c < d]


@dataclass
class Waves:
    positions: np.ndarray  # (n,) 0 … n−1
    columns: dict[int, np.ndarray]  # channel c → (n,) PE(p, c)

    @staticmethod
    def is_sin(channel: int) -> bool:
        """Channel 2f is sin(p·ω_f), 2f+1 its cos (interleaved layout)."""
        return channel % 2 == 0

    @staticmethod
    def pair(channel: int) -> int:
        return channel // 2


def waves(n: int, d: int, base: float, channels: tuple[int, ...]) -> Waves:
    P = pe_matrix(n, d, base)  # (n, d)
    return Waves(np.arange(n), {c: P[:, c] for c in channels if 0 <= c < d})


# --------------------------------------------------------------------------------- wavelengths


@dataclass
class WavelengthSection:
    pairs: np.ndarray  # (⌈d/2⌉,) f
    wavelengths: np.ndarray  # (⌈d/2⌉,) λ_f
    n: int  # the sequence length, drawn as a line

    @property
    def length_line(self) -> np.ndarray:
        """(⌈d/2⌉,) n at every pair: the dashed "sequence length" line (integers, as n is)."""
        return np.full(self.pairs.size, self.n)


def wavelength_section(n: int, d: int, base: float) -> WavelengthSection:
    lam = wavelengths(d, base)
    return WavelengthSection(np.arange(lam.size), lam, n)


def wavelength_question(d: int, base: float, lang: str) -> Question | None:
    """Which pair has the longest wavelength? Offered: the first, middle and last pair. None for
    d = 2, where there is only one pair. Answer and facts from the wavelengths the plot draws."""
    lam = wavelengths(d, base)
    options = tuple(sorted({0, lam.size // 2, lam.size - 1}))
    if len(options) < 2:
        return None
    longest = int(np.argmax(lam))
    facts: dict[str, object] = {
        "longest": longest,
        "base": int(base),
        "first": float(lam[0]),
        "last": float(lam[-1]),
        "last_pair": lam.size - 1,
        "d": d,
    }
    return Question(
        key="sin_q",
        prompt=t("sinusoidal.wavelengths.question", lang, d=d, base=int(base)),
        options=options,
        labels=tuple(t("sinusoidal.wavelengths.option", lang, f=f) for f in options),
        answer=longest,
        explanation=t("sinusoidal.wavelengths.explanation", lang, **facts),
        facts=facts,
    )


# ------------------------------------------------------------------------------------- binary


@dataclass
class BinaryView:
    last: int  # the last position shown
    digits: np.ndarray  # (n_b, BINARY_BITS)
    pe: np.ndarray  # (n_b, BINARY_CHANNELS) float32


def binary_view(n: int, base: float) -> BinaryView:
    nb = min(n, BINARY_POSITIONS)
    return BinaryView(nb - 1, binary_digits(nb, BINARY_BITS), pe_matrix(nb, BINARY_CHANNELS, base))


# ---------------------------------------------------------------------------------- dot products


@dataclass
class DotProducts:
    similarity: np.ndarray  # (n, n) PE(m)·PE(n)
    offsets: np.ndarray  # (2n−1,) Δ = n − m from −(n−1) to n−1
    closed_form: np.ndarray  # (2n−1,) Σ_f cos(ω_f Δ)
    from_rows: dict[int, np.ndarray]  # reference position p → PE(p)·PE(p+Δ) where both exist (NaN else)

    @property
    def gap(self) -> float:
        """Largest |measured − closed form| over every reference position and offset."""
        return max(float(np.nanmax(np.abs(c - self.closed_form))) for c in self.from_rows.values())


def reference_positions(n: int) -> tuple[int, ...]:
    """The first, middle and last position: the curves drawn from the table."""
    return tuple(sorted({0, n // 2, n - 1}))


def dot_products(n: int, d: int, base: float, reference_positions: tuple[int, ...]) -> DotProducts:
    """PE·PE two ways: measured from the table, and the closed form Σ_f cos(ω_f (m − n)).

    Equal curves for different reference positions are the numerical face of "depends only on Δ".
    (For odd d the lone sin channel adds sin(ω m)sin(ω n), which is not a function of Δ alone.)
    """
    P = sinusoidal_table(n, d, base, dtype=torch.float64).numpy()  # (n, d)
    sim = P @ P.T  # (n, n)
    offsets = np.arange(-(n - 1), n)
    omega = sinusoidal_frequencies(d, base).numpy()[: d // 2]  # paired channels only
    closed = np.cos(np.outer(offsets, omega)).sum(axis=1)
    rows = {}
    for p in reference_positions:
        curve = np.full(offsets.shape, np.nan)
        ok = (p + offsets >= 0) & (p + offsets < n)
        curve[ok] = sim[p, p + offsets[ok]]
        rows[int(p)] = curve
    return DotProducts(sim, offsets, closed, rows)


@bounded(16)
def dot_view(n: int, d: int, base: float) -> DotProducts:
    """The page's dot products: measured from the first, middle and last position."""
    return dot_products(n, d, base, reference_positions(n))


# ----------------------------------------------------------------------------------------- shift


@dataclass
class ShiftCheck:
    pe_shifted: np.ndarray  # PE(p + Δ), (d,)
    rotated: np.ndarray  # T(Δ) · PE(p), (d,)
    T: np.ndarray  # (d, d)
    max_abs_diff: float

    @property
    def channels(self) -> np.ndarray:
        """(≤ 32,) the channels the vectors' plot draws."""
        return np.arange(min(self.pe_shifted.size, SHIFT_CHANNELS))

    @property
    def pe_shifted_shown(self) -> np.ndarray:
        return self.pe_shifted[:SHIFT_CHANNELS]

    @property
    def rotated_shown(self) -> np.ndarray:
        return self.rotated[:SHIFT_CHANNELS]

    @property
    def block(self) -> int:
        """Side of the top-left block of T drawn."""
        return min(int(self.T.shape[0]), T_BLOCK)

    @property
    def T_shown(self) -> np.ndarray:
        return self.T[:T_BLOCK, :T_BLOCK]


def shift_check(p: int, delta: int, d: int, base: float) -> ShiftCheck:
    """PE(p + Δ) against T(Δ)·PE(p), both in float64 (even d only: see shift_matrix)."""
    T = shift_matrix(delta, d, base)  # (d, d)
    pe_p = sinusoidal_rows(torch.tensor([p]), d, base)[0]  # (d,)
    pe_shifted = sinusoidal_rows(torch.tensor([p + delta]), d, base)[0]  # (d,)
    rotated = T @ pe_p
    return ShiftCheck(pe_shifted.numpy(), rotated.numpy(), T.numpy(), float((pe_shifted - rotated).abs().max()))


# --------------------------------------------------------------------------------------- layouts


@dataclass
class Layouts:
    interleaved: np.ndarray  # (n, d)
    concatenated: np.ndarray  # (n, d), built directly as [sin(all f) | cos(all f)]
    permutation: np.ndarray  # (d,)  concatenated = interleaved[:, permutation]
    max_abs_diff: float  # |concatenated − interleaved[:, perm]|, should be 0
    max_abs_diff_unpermuted: float  # the two layouts are *not* equal element-wise

    def permutation_text(self, shown: int = 16) -> str:
        """perm[0], perm[1], … — the first `shown` entries, then "…" if there are more."""
        head = ", ".join(str(int(v)) for v in self.permutation[:shown])
        return head + (" …" if self.permutation.size > shown else "")


def layouts(n: int, d: int, base: float) -> Layouts:
    inter = sinusoidal_table(n, d, base, dtype=torch.float64)  # (n, d)
    # Built from the formula on its own — not by permuting — so that the check below is a check.
    omega = sinusoidal_frequencies(d, base)  # (⌈d/2⌉,)
    angles = torch.arange(n, dtype=torch.float64)[:, None] * omega[None, :]
    concat = torch.cat([torch.sin(angles), torch.cos(angles[:, : d // 2])], dim=1)  # (n, d)
    perm = concatenated_permutation(d)
    return Layouts(
        inter.numpy(),
        concat.numpy(),
        perm.numpy(),
        float((concat - inter[:, perm]).abs().max()),
        float((concat - inter).abs().max()),
    )


def layouts_view(n: int, d: int, base: float) -> Layouts:
    """The layout maps the page draws: at most LAYOUT_MAX positions and channels."""
    return layouts(min(n, LAYOUT_MAX), min(d, LAYOUT_MAX), base)


def t2t_frequencies(d: int, base: float) -> np.ndarray:
    """tensor2tensor's `get_timing_signal_1d` frequencies (layers/common_attention.py), (d//2,):

        ω_f = base^(−f/(d/2 − 1)),  f = 0 … d/2 − 1

    log-spaced timescales from 1 to `base` (max_timescale) with increment ln(base)/(d/2 − 1); the
    increment's divisor is at least 1, so d = 2 has the single frequency 1. Not the paper's
    base^(−2f/d): the last pair is exactly 1/base here, base^(−1 + 2/d) there."""
    half = d // 2
    f = np.arange(half, dtype=np.float64)
    return np.asarray(float(base) ** (-f / max(half - 1, 1)))


def t2t_signal(n: int, d: int, base: float) -> np.ndarray:
    """(n, d) tensor2tensor's timing signal for positions 0 … n−1, concatenated [sin | cos] (even d)."""
    angles = np.arange(n, dtype=np.float64)[:, None] * t2t_frequencies(d, base)[None, :]  # (n, d/2)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)  # (n, d)


@dataclass
class T2TComparison:
    d: int
    pairs: np.ndarray  # (d/2,) f
    omega_paper: np.ndarray  # (d/2,) base^(−2f/d)
    omega_t2t: np.ndarray  # (d/2,) base^(−f/(d/2 − 1))
    positions: int  # rows compared: 0 … positions − 1
    table_diff: float  # max |t2t signal − paper table in the same concatenated layout| over those rows

    @property
    def ratio(self) -> np.ndarray:
        """(d/2,) ω_paper / ω_t2t ≥ 1: how many times slower tensor2tensor's pair f turns."""
        return np.asarray(self.omega_paper / self.omega_t2t)

    @property
    def max_ratio(self) -> float:
        return float(self.ratio.max())

    @property
    def slowest_pair(self) -> int:
        """The pair whose two frequencies differ most (the last one)."""
        return int(np.argmax(self.ratio))

    @property
    def same(self) -> bool:
        """Do the two sets of frequencies agree (only for d = 2: one pair, ω = 1)?"""
        return bool(np.allclose(self.omega_paper, self.omega_t2t, rtol=1e-12, atol=0))


def t2t_comparison(n: int, d: int, base: float) -> T2TComparison:
    """tensor2tensor's frequencies against the paper's, and its timing signal against the paper's
    table permuted into the same concatenated layout (at most LAYOUT_MAX positions)."""
    omega_paper = sinusoidal_frequencies(d, base).numpy()[: d // 2]
    rows = min(n, LAYOUT_MAX)
    paper = sinusoidal_table(rows, d, base, dtype=torch.float64).numpy()[:, concatenated_permutation(d).numpy()]
    return T2TComparison(
        d,
        np.arange(d // 2),
        omega_paper,
        t2t_frequencies(d, base),
        rows,
        float(np.abs(t2t_signal(rows, d, base) - paper).max()),
    )


# ---------------------------------------------------------------------------------- the sentence


@dataclass
class SentenceView:
    tokens: tuple[str, ...]
    added: np.ndarray  # (n, D) the vector the encoder added under each token
    weights_nope: np.ndarray  # (i, j) the toy layer without positions
    weights_sinusoidal: np.ndarray  # (i, j) the same layer with sinusoidal PE


def sentence_view(sentence: str, seed: int) -> SentenceView:
    """The sentence through the one-head toy layer, with and without sinusoidal PE (d = 64)."""
    pos: LayerView = run_layer(sentence, seed, "sinusoidal", d_model=SENTENCE_D, n_heads=1)
    nope: LayerView = run_layer(sentence, seed, "none", d_model=SENTENCE_D, n_heads=1)
    return SentenceView(pos.tokens, pos.inputs - nope.inputs, nope.weights[0], pos.weights[0])


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="sinusoidal",
    part="Absolute",
    page="pages/absolute/sinusoidal.py",
    icon=":material/waves:",
    order=10,
    papers=(enc.PAPER,),
    sources=(
        "encoders.sinusoidal:sinusoidal_frequencies",
        "encoders.sinusoidal:sinusoidal_rows",
        "encoders.sinusoidal:shift_matrix",
    ),
    encodings=("sinusoidal",),
    derivations=("sinusoidal-dot-product", "sinusoidal-shift"),
    link={"n": "100", "sin_d": "32", "base": "100", "p": "7", "delta": "-4"},
    link_shows={"n": 100, "d": 32, "base": 100, "p": 7, "delta": -4},
)
