"""RoPE in practice: what the RoPE chapter's last part computes (pages/rotary/rope.py).

Four things real checkpoints do that the paper does not say: rotate only part of each head (GPT-J's
`rotary_dim`, GPT-NeoX's and Phi's `partial_rotary_factor`), keep the angles out of bfloat16, store
Meta's Llama weights with their rows permuted for Hugging Face's half-split layout, and stretch
Llama 3.1's frequencies. Every number comes from encoders/rope.py and encoders/rope_scaling.py; each
`*_section` function also returns the words that state facts about its numbers, in `lang`.

Axis legend: P frequency pairs (d/2), K offsets, M sampled positions, H heads, d head size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders.attention import toy_layer
from encoders.rope import RoPE, RopeConfig, half_split_permutation, meta_to_hf_rows, rope_frequencies
from encoders.rope_scaling import llama3_frequencies, ntk_frequencies, pi_frequencies, yarn_frequencies
from encoders.text import token_embeddings, token_key
from explain.bounds import bounded
from explain.i18n import t

from .rope import word_vectors

# -- 1. partial rotary --------------------------------------------------------------------------------
PARTIAL_D = 32  # the section's head size: four rotated sizes r = 8, 16, 24, 32 fit it
ROTARY_DIMS = (8, 16, 24, 32)  # the r select-slider's options: partial_rotary_factor 0.25 … 1
PARTIAL_OFFSETS = 64  # offsets n − m drawn: −64 … 64
PARTIAL_QUERY = 1_000  # the query's position for the curve (any works: only n − m counts)
PARTIAL_MAP = 32  # the N × N map whose diagonals are checked


@dataclass(frozen=True)
class PartialSection:
    r: int
    d: int
    offsets: np.ndarray  # (K,) n − m
    curves: dict[str, np.ndarray]  # legend → (K,): rotated part, unrotated part, their sum (the logit)
    pass_term: float  # q[r:]·k[r:]/√d: the same at every (m, n)
    rotated_lo: float  # smallest and largest rotated part over the drawn offsets
    rotated_hi: float
    spread: float  # largest (max − min) of the logit along any diagonal of the N × N map
    pass_spread: float  # largest − smallest unrotated part over the whole map (0: position-free)
    full_gap: float  # r = d through the config against the encoder with no rotary_dim: largest gap
    sentence: str


def _logits(enc: RoPE, q: np.ndarray, k: np.ndarray, qpos: np.ndarray, kpos: np.ndarray) -> np.ndarray:
    """The encoder's logit q′·k′/√d for one q at each query position and one k at each key position."""
    qq = torch.from_numpy(np.tile(q, (qpos.size, 1)))[None, None]  # (1, 1, i, d)
    kk = torch.from_numpy(np.tile(k, (kpos.size, 1)))[None, None]  # (1, 1, j, d)
    with torch.inference_mode():
        terms = enc.logit_terms(qq, kk, torch.from_numpy(qpos), torch.from_numpy(kpos), causal=False)
    return terms.total()[0, 0].numpy()  # (i, j)


def partial_section(
    tokens: tuple[str, ...], seed: int, r: int, query_index: int, key_index: int, lang: str
) -> PartialSection:
    """The query word's q and the key word's k (head size PARTIAL_D) through RoPE with rotary_dim r."""
    d = PARTIAL_D
    q, k = word_vectors(tokens, seed, d, query_index, key_index)
    enc = RoPE(d, 1, RopeConfig(rotary_dim=r))
    offsets = np.arange(-PARTIAL_OFFSETS, PARTIAL_OFFSETS + 1)
    qpos = np.array([float(PARTIAL_QUERY)])
    kpos = (PARTIAL_QUERY + offsets).astype(np.float64)
    total = _logits(enc, q, k, qpos, kpos)[0]  # (K,)
    q_rot, k_rot = q.copy(), k.copy()
    q_rot[r:], k_rot[r:] = 0.0, 0.0
    rotated = _logits(enc, q_rot, k_rot, qpos, kpos)[0]  # (K,): the rotated channels alone
    pass_term = float(q[r:] @ k[r:] / math.sqrt(d))
    pos = np.arange(PARTIAL_MAP, dtype=np.float64)
    grid = _logits(enc, q, k, pos, pos)  # (N, N)
    q_pass, k_pass = q - q_rot, k - k_rot
    pass_grid = _logits(enc, q_pass, k_pass, pos, pos)  # the unrotated channels through the encoder
    spread = max(float(np.ptp(np.diagonal(grid, offset=o))) for o in range(-(PARTIAL_MAP - 1), PARTIAL_MAP))
    full = _logits(RoPE(d, 1, RopeConfig(rotary_dim=d)), q, k, pos, pos)
    plain = _logits(RoPE(d, 1, RopeConfig()), q, k, pos, pos)
    curves = {
        t("rope.practice.partial.rotated", lang, r=r): rotated,
        t("rope.practice.partial.unrotated", lang, rest=d - r): total - rotated,
        t("rope.practice.partial.sum", lang): total,
    }
    sentence = t(
        "rope.practice.partial.numbers" if r < d else "rope.practice.partial.numbers_full",
        lang,
        r=r,
        d=d,
        rest=d - r,
        pass_term=pass_term,
        pass_spread=float(np.ptp(pass_grid)),
        lo=float(rotated.min()),
        hi=float(rotated.max()),
        K=PARTIAL_OFFSETS,
        N=PARTIAL_MAP,
        spread=spread,
        full_gap=float(np.abs(full - plain).max()),
    ).replace("-", "−")
    return PartialSection(
        r,
        d,
        offsets,
        curves,
        pass_term,
        float(rotated.min()),
        float(rotated.max()),
        spread,
        float(np.ptp(pass_grid)),
        float(np.abs(full - plain).max()),
        sentence,
    )


# -- 2. angles in float32 and bfloat16 ----------------------------------------------------------------
PRECISION_D = 128  # Llama's head size
PRECISION_BASES = (10_000, 500_000)  # Llama 2's base and Llama 3's
PRECISION_LENGTHS = (8_192, 32_768, 131_072)
PRECISION_SAMPLES = 240  # log-spaced positions drawn per curve


def angle_errors(base: float, max_position: int, pair: int, d: int = PRECISION_D) -> dict[str, np.ndarray]:
    """|m·θ_f computed in a low precision − m·θ_f in float64| for every position m = 0 … max_position.

    "bfloat16": the position and θ_f rounded to bfloat16 and multiplied there (a model cast whole to
    bfloat16, inv_freq buffer included); "float32": both in float32, as transformers does
    (`position_ids.float() * inv_freq` with inv_freq in float32). Radians, float64 (max_position + 1,).
    """
    theta = rope_frequencies(d, base)[pair]  # float64 scalar
    m = torch.arange(max_position + 1, dtype=torch.float64)  # (M,)
    exact = m * theta
    bf16 = (m.to(torch.bfloat16) * theta.to(torch.bfloat16)).double()
    f32 = (m.float() * theta.float()).double()
    return {"bfloat16": (bf16 - exact).abs().numpy(), "float32": (f32 - exact).abs().numpy()}


def cos_sin_rounding(base: float, max_position: int, pair: int, d: int = PRECISION_D) -> float:
    """Largest |bfloat16(cos, sin of the float32 angle) − (cos, sin) of the exact angle|: what casting
    only cos and sin to bfloat16 costs (transformers' `cos.to(dtype=x.dtype)`)."""
    theta = rope_frequencies(d, base)[pair]
    m = torch.arange(max_position + 1, dtype=torch.float64)
    exact = m * theta
    f32 = m.float() * theta.float()
    gaps = [
        (fn(f32).to(torch.bfloat16).double() - fn(exact)).abs().max() for fn in (torch.cos, torch.sin)
    ]  # float32 angle → float32 cos/sin → bfloat16
    return float(max(gaps))


@dataclass(frozen=True)
class PrecisionSection:
    positions: np.ndarray  # (M,) sampled positions, log-spaced
    curves: dict[str, np.ndarray]  # legend → (M,): largest error up to each position (NaN where 0)
    fast_bf16: float  # largest bfloat16 error of pair 0 up to max_position, radians
    fast_f32: float
    slow_bf16: float  # … of the slowest pair
    slow_f32: float
    slow_bf16_positions: float  # the slowest pair's bfloat16 error, in positions (error / θ_slow)
    slow_f32_positions: float
    quarter_turn: int | None  # first position whose bfloat16 angle of pair 0 is off by more than π/2
    spacing: float  # distance between neighbouring bfloat16 numbers at max_position
    cos_sin: float  # largest error of cos and sin rounded to bfloat16 after float32 angles (both pairs)
    sentences: tuple[str, ...]


@bounded(16)  # one entry: four curves of 240 points and a few numbers
def precision_section(base: int, max_position: int, lang: str) -> PrecisionSection:
    """Pair 0 (θ_0 = 1, the fastest) and the slowest pair, d = 128, positions 0 … max_position."""
    slow = PRECISION_D // 2 - 1
    theta_slow = float(rope_frequencies(PRECISION_D, base)[slow])
    fast_err, slow_err = angle_errors(base, max_position, 0), angle_errors(base, max_position, slow)
    sample = np.unique(np.geomspace(1, max_position, PRECISION_SAMPLES).round().astype(np.int64))  # (M,)

    def running(err: np.ndarray) -> np.ndarray:
        top = np.maximum.accumulate(err)[sample]
        return np.where(top > 0, top, np.nan)  # a log axis cannot show 0 (float32's pair 0 is exact)

    curves = {
        t("rope.practice.precision.series_fast", lang, dtype="bfloat16"): running(fast_err["bfloat16"]),
        t("rope.practice.precision.series_slow", lang, dtype="bfloat16", f=slow): running(slow_err["bfloat16"]),
        t("rope.practice.precision.series_slow", lang, dtype="float32", f=slow): running(slow_err["float32"]),
    }
    if fast_err["float32"].any():  # pair 0 in float32 is exact for every position offered (θ₀ = 1)
        curves[t("rope.practice.precision.series_fast", lang, dtype="float32")] = running(fast_err["float32"])
    off = np.nonzero(fast_err["bfloat16"] > math.pi / 2)[0]
    quarter = int(off[0]) if off.size else None
    top = torch.tensor(float(max_position), dtype=torch.bfloat16)
    spacing = float(torch.nextafter(top, torch.tensor(math.inf, dtype=torch.bfloat16)).double() - top.double())
    cos_sin = max(cos_sin_rounding(base, max_position, p) for p in (0, slow))
    fb, ff = float(fast_err["bfloat16"].max()), float(fast_err["float32"].max())
    sb, sf = float(slow_err["bfloat16"].max()), float(slow_err["float32"].max())
    facts = dict(
        L=max_position,
        base=base,
        f=slow,
        fast_bf16=fb,
        fast_turns=fb / (2 * math.pi),
        fast_f32=ff,
        slow_bf16=sb,
        slow_f32=sf,
        slow_bf16_pos=sb / theta_slow,
        slow_f32_pos=sf / theta_slow,
        spacing=spacing,
        cos_sin=cos_sin,
        quarter=quarter,
    )
    sentences = (
        t(
            "rope.practice.precision.fast" if quarter is not None else "rope.practice.precision.fast_never",
            lang,
            **facts,
        ),
        t("rope.practice.precision.slow", lang, **facts),
        t("rope.practice.precision.cast", lang, **facts),
    )
    return PrecisionSection(
        sample.astype(np.float64),
        curves,
        fb,
        ff,
        sb,
        sf,
        sb / theta_slow,
        sf / theta_slow,
        quarter,
        spacing,
        cos_sin,
        sentences,
    )


# -- 3. Meta → Hugging Face ---------------------------------------------------------------------------
PERMUTE_HEAD_SIZES = (4, 6, 8, 10, 12, 14, 16)
PERMUTE_HEADS = (1, 2, 3, 4)


@dataclass(frozen=True)
class PermuteSection:
    matrix: np.ndarray  # (H·d, H·d): 1 where HF row (y) takes Meta row (x)
    rows_text: str  # head 0's Meta rows in HF order: "0, 2, 4, …"
    matches_layout_perm: bool  # per head, the script's permute is half_split_permutation(d)
    q_gap: float  # largest |q from the permuted W_q − q_meta[perm]| (a reordering: exactly 0)
    logit_gap: float  # largest |half-split logits of the permuted weights − interleaved logits|
    unpermuted_gap: float  # half-split on the Meta weights as they are: the logits change
    sentence: str


def _head_logits(enc: RoPE, q: torch.Tensor, k: torch.Tensor, n: int) -> torch.Tensor:
    """Every head's logits for q, k (n, H·d) at positions 0 … n−1 → (H, n, n)."""
    H, d = enc.n_heads, enc.d_head
    qh = q.reshape(n, H, d).transpose(0, 1)[None]  # (1, H, n, d)
    kh = k.reshape(n, H, d).transpose(0, 1)[None]
    pos = torch.arange(n, dtype=torch.float64)
    return enc.logit_terms(qh, kh, pos, pos, causal=False).total()[0]  # (H, n, n)


def permute_section(tokens: tuple[str, ...], seed: int, d: int, heads: int, lang: str) -> PermuteSection:
    """The toy layer's W_q, W_k (H heads of size d) stored Meta's way, converted as HF's script does."""
    D = d * heads
    x = token_embeddings(tuple(token_key(w) for w in tokens), D, seed).double()  # (n, D)
    layer = toy_layer(build("rope", D, heads, seed), seed).double()
    w_q_meta, w_k_meta = layer.w_q.detach().T, layer.w_k.detach().T  # (out, in): rows are channels
    w_q_hf, w_k_hf = meta_to_hf_rows(w_q_meta, heads), meta_to_hf_rows(w_k_meta, heads)
    index = meta_to_hf_rows(torch.arange(D, dtype=torch.float64)[:, None], heads)[:, 0].long()  # (D,)
    perm = half_split_permutation(d)
    per_head = torch.cat([h * d + perm for h in range(heads)])
    n = len(tokens)
    with torch.inference_mode():
        q_meta, k_meta = x @ w_q_meta.T, x @ w_k_meta.T  # (n, D)
        q_hf, k_hf = x @ w_q_hf.T, x @ w_k_hf.T
        meta = _head_logits(RoPE(D, heads, RopeConfig(layout="interleaved")), q_meta, k_meta, n)
        half = RoPE(D, heads, RopeConfig(layout="half"))
        hf = _head_logits(half, q_hf, k_hf, n)
        wrong = _head_logits(half, q_meta, k_meta, n)
    matrix = np.zeros((D, D))
    matrix[np.arange(D), index.numpy()] = 1.0
    q_gap = float((q_hf - q_meta[:, per_head]).abs().max())
    logit_gap, unpermuted = float((hf - meta).abs().max()), float((wrong - meta).abs().max())
    same = bool(torch.equal(index, per_head))
    rows_text = ", ".join(str(int(v)) for v in index[:d])
    sentence = t(
        "rope.practice.permute.numbers",
        lang,
        d=d,
        heads=heads,
        rows=rows_text,
        same=t("rope.practice.permute.same_yes" if same else "rope.practice.permute.same_no", lang),
        q_gap=q_gap,
        n=n,
        logit_gap=logit_gap,
        unpermuted=unpermuted,
    )
    return PermuteSection(matrix, rows_text, same, q_gap, logit_gap, unpermuted, sentence)


# -- 4. Llama 3.1's scaling -----------------------------------------------------------------------------
LLAMA3 = dict(d=128, base=500_000.0, original_length=8_192, low_freq_factor=1.0, high_freq_factor=4.0)
LLAMA3_FACTORS = (2, 4, 8, 16, 32)  # the factor select-slider's options; Llama 3.1 ships 8


@dataclass(frozen=True)
class Llama3Section:
    wavelengths: np.ndarray  # (P,) λ_f = 2π/θ_f of plain RoPE, positions
    slowdown: dict[str, np.ndarray]  # legend → (P,) θ_f/θ′_f: how many times slower each pair turns
    marks: dict[str, float]  # label → wavelength of the two thresholds, L/high and L/low
    kept: int  # pairs Llama 3.1 leaves alone (λ < L/high)
    divided: int  # pairs divided by the whole factor (λ > L/low)
    between: int  # pairs on the smooth ramp
    sentence: str


@bounded(16)  # one entry: four curves of 64 pairs
def llama3_section(factor: int, lang: str) -> Llama3Section:
    """Per-pair slow-down θ_f/θ′_f at Llama 3.1's settings (d = 128, base 500,000, L = 8,192) for its
    own scaling and for PI, NTK-aware and YaRN stretched by the same factor."""
    d, base, L = int(LLAMA3["d"]), LLAMA3["base"], int(LLAMA3["original_length"])
    lo, hi = LLAMA3["low_freq_factor"], LLAMA3["high_freq_factor"]
    theta = rope_frequencies(d, base)
    wavelength = (2 * math.pi / theta).numpy()
    schemes = {
        "llama3": llama3_frequencies(d, base, factor, lo, hi, L),
        "pi": pi_frequencies(d, base, factor),
        "ntk": ntk_frequencies(d, base, factor),
        "yarn": yarn_frequencies(d, base, factor, L),
    }
    slowdown = {t(f"rope.practice.llama3.series_{k}", lang): (theta / v).numpy() for k, v in schemes.items()}
    kept = int((wavelength < L / hi).sum())
    divided = int((wavelength > L / lo).sum())
    between = d // 2 - kept - divided
    ramp = (theta / schemes["llama3"]).numpy()[(wavelength >= L / hi) & (wavelength <= L / lo)]
    marks = {
        t("rope.practice.llama3.mark_high", lang, wl=L / hi): L / hi,
        t("rope.practice.llama3.mark_low", lang, wl=L / lo): L / lo,
    }
    sentence = t(
        "rope.practice.llama3.numbers",
        lang,
        pairs=d // 2,
        kept=kept,
        divided=divided,
        between=between,
        factor=factor,
        ramp_lo=float(ramp.min()) if ramp.size else 1.0,
        ramp_hi=float(ramp.max()) if ramp.size else 1.0,
        high_wl=L / hi,
        low_wl=L / lo,
        ntk_fast=float((theta / schemes["ntk"])[1]),
        yarn_kept=int(((theta / schemes["yarn"]).numpy() == 1.0).sum()),
    )
    return Llama3Section(wavelength, slowdown, marks, kept, divided, between, sentence)
