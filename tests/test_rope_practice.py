"""RoPE in practice: partial rotary (encoders/rope.py rotary_dim), angles in float32 vs bfloat16, the
Meta → Hugging Face row permutation (meta_to_hf_rows) and Llama 3.1's scaling (llama3_frequencies);
their section data (explain/chapters/rope_practice.py) and the RoPE page's last part, in both languages.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from encoders.rope import RoPE, RopeConfig, apply_rotary, half_split_permutation, meta_to_hf_rows, rope_frequencies
from encoders.rope_scaling import PositionInterpolationRoPE, ScaledRopeConfig, llama3_frequencies, pi_frequencies
from explain.chapters import rope_practice as P
from explain.chapters.rope import word_vectors
from explain.i18n import t
from tests.helpers import chart_elements, errors, open_page

PAGE = "pages/rotary/rope.py"
TOKENS = ("the", "cat", "sat", "on", "the", "mat")


def rand(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def naive_partial_logits(q: torch.Tensor, k: torch.Tensor, r: int, base: float, layout: str) -> torch.Tensor:
    """A loop over positions and pairs with math.cos / math.sin: the first r channels rotate in pairs
    ((2f, 2f+1) or (f, f + r/2)) by position · base^(−2f/r), the others are copied. q, k (n, d)."""
    n, d = q.shape

    def turn(x: torch.Tensor, p: int) -> torch.Tensor:
        y = x.clone()
        for f in range(r // 2):
            a, b = (2 * f, 2 * f + 1) if layout == "interleaved" else (f, f + r // 2)
            ang = p * base ** (-2.0 * f / r)
            y[a] = x[a] * math.cos(ang) - x[b] * math.sin(ang)
            y[b] = x[a] * math.sin(ang) + x[b] * math.cos(ang)
        return y

    qr = torch.stack([turn(q[i], i) for i in range(n)])
    kr = torch.stack([turn(k[j], j) for j in range(n)])
    return qr @ kr.T / math.sqrt(d)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("d,r", [(8, 2), (8, 4), (16, 6), (16, 16), (32, 8)])
def test_partial_rotary_equals_a_naive_loop(d, r, layout):
    q, k = rand(7, d, seed=1), rand(7, d, seed=2)
    enc = RoPE(d, 1, RopeConfig(layout=layout, rotary_dim=r, base=100.0))
    pos = torch.arange(7)
    got = enc.logit_terms(q[None, None], k[None, None], pos, pos, causal=False).total()[0, 0]
    assert torch.allclose(got, naive_partial_logits(q, k, r, 100.0, layout), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    pairs=st.integers(2, 8),
    rotated=st.integers(1, 8),
    shift=st.integers(-100_000, 100_000),
    seed=st.integers(0, 2**16),
    layout=st.sampled_from(["interleaved", "half"]),
)
def test_partial_rotary_logits_depend_only_on_the_offset(pairs, rotated, shift, seed, layout):
    d, r = 2 * pairs, 2 * min(rotated, pairs)
    enc = RoPE(d, 1, RopeConfig(layout=layout, rotary_dim=r))
    q, k = rand(1, 1, 6, d, seed=seed), rand(1, 1, 6, d, seed=seed + 1)
    pos = torch.arange(6, dtype=torch.float64)
    at0 = enc.logit_terms(q, k, pos, pos, causal=False).total()
    moved = enc.logit_terms(q, k, pos + shift, pos + shift, causal=False).total()
    assert torch.allclose(at0, moved, atol=1e-9)
    # The unrotated channels alone: a content term, the same at every pair of positions.
    q_pass, k_pass = q.clone(), k.clone()
    q_pass[..., :r], k_pass[..., :r] = 0.0, 0.0
    passed = enc.logit_terms(q_pass, k_pass, pos, pos + 3 * shift, causal=False).total()
    assert torch.allclose(passed, q_pass @ k_pass.transpose(-1, -2) / math.sqrt(d), atol=1e-12)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("d", [2, 8, 32])
def test_rotary_dim_d_is_the_existing_encoder_exactly(d, layout):
    q, k = rand(2, 2, 9, d, seed=3), rand(2, 2, 9, d, seed=4)
    pos = torch.arange(9) * 37
    a = RoPE(2 * d, 2, RopeConfig(layout=layout)).logit_terms(q, k, pos, pos, causal=False)
    b = RoPE(2 * d, 2, RopeConfig(layout=layout, rotary_dim=d)).logit_terms(q, k, pos, pos, causal=False)
    for name in a.terms:
        assert torch.equal(a.terms[name], b.terms[name])


def test_partial_rotary_matches_gpt_neox_in_transformers():
    """GPT-NeoX's own apply_rotary_pos_emb (rotary part half-split, q_pass appended) as the oracle."""
    from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb, rotate_half

    d, r, n = 16, 8, 10
    q, k = rand(1, 1, n, d, seed=5).float(), rand(1, 1, n, d, seed=6).float()
    pos = torch.arange(n)
    inv = 1.0 / (10000.0 ** (torch.arange(0, r, 2, dtype=torch.float) / r))
    ang = torch.cat([pos[:, None].float() * inv] * 2, dim=-1)[None]  # (1, n, r)
    q_hf, k_hf = apply_rotary_pos_emb(q, k, ang.cos(), ang.sin())
    assert rotate_half is not None and q_hf.shape == q.shape
    want = q_hf @ k_hf.transpose(-1, -2) / math.sqrt(d)
    got = RoPE(d, 1, RopeConfig(layout="half", rotary_dim=r)).logit_terms(q, k, pos, pos, causal=False).total()
    assert torch.allclose(got, want, atol=1e-5)


def test_partial_rotary_reaches_the_stretching_schemes_and_refuses_bad_sizes():
    d, r = 16, 8
    enc = PositionInterpolationRoPE(d, 1, ScaledRopeConfig(rotary_dim=r, scale=4.0, original_length=8))
    assert torch.equal(enc.frequencies(8), pi_frequencies(r, 10000.0, 4.0))
    for bad in (0, 3, 18):
        with pytest.raises(ValueError, match="rotary_dim"):
            RoPE(d, 1, RopeConfig(rotary_dim=bad))


@pytest.mark.parametrize("heads,d", [(1, 2), (2, 8), (4, 6), (3, 16)])
def test_meta_to_hf_rows_is_the_half_split_permutation_in_each_head(heads, d):
    w = rand(heads * d, 5, seed=7)
    perm = torch.cat([h * d + half_split_permutation(d) for h in range(heads)])
    assert torch.equal(meta_to_hf_rows(w, heads), w[perm])
    # …and the script's rows with half-split rotation give the interleaved logits on Meta's rows.
    x = rand(6, 5, seed=8)
    q_meta, k_meta = x @ w.T, x @ rand(heads * d, 5, seed=9).T
    pos = torch.arange(6) + 1000
    for h in range(heads):
        sl = slice(h * d, (h + 1) * d)
        inter = apply_rotary(q_meta[:, sl], pos) @ apply_rotary(k_meta[:, sl], pos).T
        p = half_split_permutation(d)
        half = (
            apply_rotary(q_meta[:, sl][:, p], pos, layout="half")
            @ apply_rotary(k_meta[:, sl][:, p], pos, layout="half").T
        )
        assert torch.allclose(inter, half, atol=1e-10)
    with pytest.raises(ValueError):
        meta_to_hf_rows(rand(6, 2), 4)


def _llama_config(d: int, base: float, params: dict) -> Any:
    from transformers import LlamaConfig

    return LlamaConfig(
        hidden_size=d * 2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=params["original_max_position_embeddings"] * int(params["factor"]),
        rope_parameters={"rope_theta": base, **params},
    )


@pytest.mark.parametrize(
    "d,base,factor,low,high,L",
    [
        (128, 500000.0, 8.0, 1.0, 4.0, 8192),  # Llama 3.1
        (64, 500000.0, 32.0, 1.0, 4.0, 8192),  # Llama 3.2's factor
        (128, 10000.0, 4.0, 1.0, 4.0, 4096),
        (32, 10000.0, 2.0, 2.0, 8.0, 256),
        (16, 1000.0, 16.0, 1.0, 2.0, 64),
    ],
)
def test_llama3_frequencies_equal_transformers(d, base, factor, low, high, L):
    from transformers import modeling_rope_utils as R

    params = {
        "rope_type": "llama3",
        "factor": factor,
        "low_freq_factor": low,
        "high_freq_factor": high,
        "original_max_position_embeddings": L,
    }
    inv, att = R._compute_llama3_parameters(_llama_config(d, base, params))
    ours = llama3_frequencies(d, base, factor, low, high, L)
    assert att == 1.0 and torch.allclose(inv.double(), ours, rtol=2e-6)
    theta = rope_frequencies(d, base)
    lam = 2 * math.pi / theta
    assert torch.equal(ours[lam < L / high], theta[lam < L / high])
    assert torch.allclose(ours[lam > L / low], theta[lam > L / low] / factor, rtol=1e-15)


def test_llama3_refuses_bad_factors():
    with pytest.raises(ValueError):
        llama3_frequencies(16, low_freq_factor=4.0, high_freq_factor=1.0)
    with pytest.raises(ValueError):
        llama3_frequencies(16, factor=0.0)


# -- the section data -------------------------------------------------------------------------------


@pytest.mark.parametrize("r", P.ROTARY_DIMS)
def test_partial_section_numbers(r):
    s = P.partial_section(TOKENS, 0, r, 1, 5, "en")
    names = list(s.curves)
    rotated, unrotated, total = (s.curves[n] for n in names)
    assert np.allclose(rotated + unrotated, total, atol=1e-12)
    assert np.allclose(unrotated, s.pass_term, atol=1e-12) and s.pass_spread < 1e-12 and s.spread < 1e-12
    assert s.full_gap == 0.0
    q, k = word_vectors(TOKENS, 0, P.PARTIAL_D, 1, 5)
    assert s.pass_term == pytest.approx(float(q[r:] @ k[r:]) / math.sqrt(P.PARTIAL_D), abs=1e-12)
    assert (s.pass_term == 0.0) == (r == P.PARTIAL_D)
    for value in (s.rotated_lo, s.rotated_hi):
        assert f"{value:+.3f}".replace("-", "−") in s.sentence


@pytest.mark.parametrize("base", P.PRECISION_BASES)
@pytest.mark.parametrize("length", P.PRECISION_LENGTHS)
def test_precision_section_against_an_independent_count(base, length):
    s = P.precision_section(base, length, "en")
    # bfloat16 keeps 8 significant bits: spacing 2^(e − 7) at 2^e ≤ m < 2^(e+1); every length is 2^e.
    assert s.spacing == 2.0 ** (math.log2(length) - 7)
    # Pair 0 (θ = 1): the angle is the position itself, rounded to bfloat16: half a spacing below
    # the length, where the spacing is half the length's.
    assert s.fast_bf16 == 2.0 ** (math.log2(length) - 9)
    assert s.fast_f32 == 0.0  # integers below 2^24 are exact in float32
    # From position 514 (spacing 4 past 512) the rounding reaches 2 > π/2; below it at most 1.
    assert s.quarter_turn == 514
    slow = P.PRECISION_D // 2 - 1
    theta = base ** (-2.0 * slow / P.PRECISION_D)
    assert s.slow_bf16_positions == pytest.approx(s.slow_bf16 / theta)
    assert s.slow_bf16 > 1e3 * s.slow_f32 and s.slow_f32_positions < 0.05 < 10 < s.slow_bf16_positions
    assert 2.0**-10 < s.cos_sin <= 2.0**-9 + 1e-7
    assert f"{s.fast_bf16:,.0f}" in s.sentences[0] and f"{s.quarter_turn:,}" in s.sentences[0]
    curves = list(s.curves.values())
    assert len(curves) == 3  # float32's pair 0 is exact everywhere: no curve to draw on a log axis
    assert all(np.all(np.diff(c[~np.isnan(c)]) >= 0) for c in curves)  # running maxima


@pytest.mark.parametrize("d", P.PERMUTE_HEAD_SIZES)
@pytest.mark.parametrize("heads", P.PERMUTE_HEADS)
def test_permute_section(d, heads):
    s = P.permute_section(TOKENS, 0, d, heads, "en")
    assert s.matches_layout_perm
    assert s.matrix.sum(0).tolist() == [1.0] * d * heads and s.matrix.sum(1).tolist() == [1.0] * d * heads
    assert s.q_gap < 1e-12 and s.logit_gap < 1e-12 and s.unpermuted_gap > 0.01
    assert s.rows_text == ", ".join(str(int(v)) for v in half_split_permutation(d))


@pytest.mark.parametrize("factor", P.LLAMA3_FACTORS)
def test_llama3_section(factor):
    s = P.llama3_section(factor, "en")
    llama3, pi, ntk, yarn = s.slowdown.values()
    assert np.allclose(pi, factor) and ntk[0] == 1.0 and ntk[-1] == pytest.approx(factor)
    assert yarn[0] == 1.0 and yarn[-1] == pytest.approx(factor) and f"keeps {int((yarn == 1.0).sum())} " in s.sentence
    assert (llama3 == 1.0).sum() >= s.kept and np.allclose(llama3[s.wavelengths > 8192], factor)
    assert s.kept + s.divided + s.between == 64
    assert np.all(np.diff(llama3) >= -1e-12) and llama3.max() <= factor + 1e-9
    assert f"**{s.kept}**" in s.sentence and f"**{s.divided}**" in s.sentence


# -- the page ----------------------------------------------------------------------------------------

PRACTICE_CHARTS = ("rope_partial", "rope_precision", "rope_permute", "rope_llama3")


def test_the_page_draws_the_practice_part_in_both_languages():
    at = open_page(PAGE)
    for lang in ("en", "ko"):
        if lang == "ko":
            at.button_group(key="lang").set_value("ko").run()
        assert not errors(at), errors(at)
        assert set(PRACTICE_CHARTS) <= {el.key for el in chart_elements(at)}
        headings = [h.value for h in at.subheader]
        for part in ("partial", "precision", "permute", "llama3"):
            assert t(f"rope.practice.{part}.subheader", lang) in headings
        assert t("rope.practice.subheader", lang) in [h.value for h in at.header]
        text = " ".join(m.value for m in at.markdown)
        pr = P.precision_section(500_000, 131_072, lang)
        assert all(sentence in text for sentence in pr.sentences)
        assert P.llama3_section(8, lang).sentence in text
