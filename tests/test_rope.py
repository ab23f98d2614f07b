"""RoPE: encoders/rope.py, its chapter (explain/chapters/rope.py) and page (pages/rotary/rope.py).

Properties first (relative identity, norms, layouts), then pinned numbers, then independent float64
loops and the HF transformers oracles (Llama: half-split; GPT-J: interleaved).
"""

from __future__ import annotations

import cmath
import dataclasses
import math

import numpy as np
import pytest
import torch

from encoders import REGISTRY, build
from encoders.base import content_logits
from encoders.rope import (
    RoPE,
    RopeConfig,
    apply_rotary,
    half_split_permutation,
    long_term_decay,
    rope_frequencies,
    rotation_matrix,
)
from explain import derivations as D
from explain.chapters import rope as ch
from explain.chapters import rope_figures
from explain.chapters import rope_generator as gen
from explain.derivations import view as DV
from explain.i18n import t
from tests.helpers import chart, chart_elements, errors, fig_array, open_page, rand

PAGE = "pages/rotary/rope.py"
KOREAN_EMOJI = "고양이가 🐱 매트 위에 앉았다 👩‍💻 and 東京 🇰🇷!"


@pytest.fixture(autouse=True)
def _no_grad():
    with torch.no_grad():
        yield


def naive_rotate(x: list[float], m: float, base: float = 10000.0, layout: str = "interleaved") -> list[float]:
    """RoFormer Eq. (13)–(15) with explicit loops and math.cos/sin, nothing shared with the code."""
    d = len(x)
    out = list(x)
    for f in range(d // 2):
        theta = base ** (-2.0 * f / d)
        c, s = math.cos(m * theta), math.sin(m * theta)
        a, b = (2 * f, 2 * f + 1) if layout == "interleaved" else (f, f + d // 2)
        out[a] = x[a] * c - x[b] * s
        out[b] = x[a] * s + x[b] * c
    return out


# -- properties -------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_logits_depend_only_on_the_offset(layout):
    q, k = rand(16, seed=1), rand(16, seed=2)
    pos = torch.arange(-40, 41)
    Q = apply_rotary(q.expand(pos.numel(), 16), pos, layout=layout)  # q at every position
    K = apply_rotary(k.expand(pos.numel(), 16), pos, layout=layout)
    L = (Q @ K.T).numpy()  # (m, n)
    for off in range(-80, 81):
        diag = np.diagonal(L, offset=off)
        assert diag.max() - diag.min() < 1e-12
    # and the value is qᵀ R_(n−m) k (key − query)
    for m, n in [(0, 5), (7, 2), (-30, 40), (3, 3)]:
        R = rotation_matrix(n - m, 16, layout=layout)
        assert abs(L[m + 40, n + 40] - float(q @ R @ k)) < 1e-12
    # the wrong sign gives a different number: the identity is R_(n−m), not R_(m−n)
    R_wrong = rotation_matrix(-(5 - 0), 16, layout=layout)
    assert abs(L[40, 45] - float(q @ R_wrong @ k)) > 1e-3


def test_shifting_every_position_changes_nothing_even_far_away():
    q, k = rand(2, 7, 32, seed=3), rand(2, 7, 32, seed=4)
    pos = torch.arange(7)
    ref = apply_rotary(q, pos) @ apply_rotary(k, pos).transpose(-1, -2)
    for c in (-1_000_000, -13, 1, 4096, 1_000_000):
        moved = apply_rotary(q, pos + c) @ apply_rotary(k, pos + c).transpose(-1, -2)
        assert (moved - ref).abs().max() < 1e-8  # float64; c·θ_0 = 1e6 rad costs ~1e-10
    # but moving only the keys does change the scores
    moved_k = apply_rotary(q, pos) @ apply_rotary(k, pos + 3).transpose(-1, -2)
    assert (moved_k - ref).abs().max() > 0.1


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rotation_preserves_norms_of_the_vector_and_of_every_pair(layout):
    x = rand(3, 50, 24, seed=5)
    pos = torch.arange(-25, 25) * 997  # large and negative positions
    y = apply_rotary(x, pos, layout=layout)
    assert torch.allclose(y.norm(dim=-1), x.norm(dim=-1), atol=1e-12)
    idx = half_split_permutation(24) if layout == "half" else torch.arange(24)
    # pair f is channels (2f, 2f+1) interleaved, (f, f+d/2) half-split: its norm is kept too
    a, b = (x[..., 0::2], x[..., 1::2]) if layout == "interleaved" else (x[..., :12], x[..., 12:])
    ya, yb = (y[..., 0::2], y[..., 1::2]) if layout == "interleaved" else (y[..., :12], y[..., 12:])
    assert torch.allclose(ya**2 + yb**2, a**2 + b**2, atol=1e-12)
    assert idx.numel() == 24
    assert not torch.allclose(y, x)  # it did rotate


def test_layouts_are_equal_up_to_the_permutation_and_give_equal_logits():
    d = 16
    perm = half_split_permutation(d)
    assert perm.tolist() == [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15]
    x = rand(2, 3, 9, d, seed=6)
    pos = torch.arange(9) + 100
    inter = apply_rotary(x, pos, layout="interleaved")
    half = apply_rotary(x[..., perm], pos, layout="half")
    assert torch.allclose(half, inter[..., perm], atol=1e-13)
    q, k = rand(5, d, seed=7), rand(5, d, seed=8)
    li = apply_rotary(q, pos[:5]) @ apply_rotary(k, pos[:5]).T
    lh = apply_rotary(q[:, perm], pos[:5], layout="half") @ apply_rotary(k[:, perm], pos[:5], layout="half").T
    assert torch.allclose(li, lh, atol=1e-12)
    # the same (unpermuted) weights in the other layout give different scores
    lw = apply_rotary(q, pos[:5], layout="half") @ apply_rotary(k, pos[:5], layout="half").T
    assert (lw - li).abs().max() > 0.1
    # rotation matrices: R_half = P R_interleaved Pᵀ
    P = torch.eye(d, dtype=torch.float64)[perm]
    for m in (0, 1, 7, -3):
        assert torch.allclose(rotation_matrix(m, d, layout="half"), P @ rotation_matrix(m, d) @ P.T, atol=1e-15)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rotation_matrix_is_block_rotation_and_matches_apply_rotary(layout):
    d = 10
    x = rand(d, seed=9)
    for m in (0, 1, 5, -17, 123456):
        R = rotation_matrix(m, d, layout=layout)
        assert torch.allclose(R.T @ R, torch.eye(d, dtype=torch.float64), atol=1e-13)
        assert abs(torch.linalg.det(R) - 1) < 1e-12
        assert torch.allclose(R @ x, apply_rotary(x[None], [m], layout=layout)[0], atol=1e-9)
    # R_mᵀ R_n = R_(n−m)
    assert torch.allclose(
        rotation_matrix(3, d, layout=layout).T @ rotation_matrix(11, d, layout=layout),
        rotation_matrix(8, d, layout=layout),
        atol=1e-13,
    )
    # block structure (interleaved): nothing outside the 2×2 diagonal blocks
    if layout == "interleaved":
        R = rotation_matrix(4, d)
        mask = torch.zeros(d, d, dtype=torch.bool)
        for f in range(d // 2):
            mask[2 * f : 2 * f + 2, 2 * f : 2 * f + 2] = True
        assert (R[~mask] == 0).all() and (R[mask] != 0).any()


def test_odd_and_tiny_dimensions_and_bad_inputs_are_refused_clearly():
    for d in (1, 3, 15):
        with pytest.raises(ValueError, match="even head dimension"):
            rope_frequencies(d)
        with pytest.raises(ValueError, match="even head dimension"):
            apply_rotary(torch.zeros(4, d), torch.arange(4))
    with pytest.raises(ValueError, match="even head dimension"):
        RoPE(12, 4)  # d_head = 3
    with pytest.raises(ValueError, match="layout"):
        apply_rotary(torch.zeros(2, 4), torch.arange(2), layout="neox")
    with pytest.raises(ValueError, match="positions"):
        apply_rotary(torch.zeros(3, 4), torch.arange(2))
    with pytest.raises(ValueError, match="base"):
        rope_frequencies(8, base=1.0)
    with pytest.raises(ValueError, match="inv_freq"):
        apply_rotary(torch.zeros(3, 8), torch.arange(3), inv_freq=torch.ones(3))


# -- pinned numbers ------------------------------------------------------------------------------


def test_pinned_frequencies_and_a_quarter_turn():
    assert torch.allclose(rope_frequencies(8), torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=torch.float64))
    assert torch.allclose(rope_frequencies(4, base=100.0), torch.tensor([1.0, 0.1], dtype=torch.float64))
    assert rope_frequencies(128).shape == (64,)
    assert rope_frequencies(16).dtype == torch.float64
    # d = 2, θ = 1: position π/2 turns (1, 0) into (0, 1); position 1 into (cos 1, sin 1)
    y = apply_rotary(torch.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=torch.float64), [math.pi / 2, 1.0])
    assert torch.allclose(y, torch.tensor([[0.0, 1.0], [math.cos(1), math.sin(1)]], dtype=torch.float64), atol=1e-15)


def test_long_term_decay_pinned_values_and_shape():
    # Δ = 0: every phase is 1, |S_u| = u, mean over u = 1…d/2 is (d/2 + 1)/2
    assert long_term_decay(128, [0]).item() == pytest.approx(32.5)
    curve = long_term_decay(128, np.arange(0, 257)).numpy()
    assert np.allclose(curve, long_term_decay(128, -np.arange(0, 257)).numpy())  # even in Δ
    assert curve[200:].max() < 0.5 * curve[0]  # it decays…
    assert (np.diff(curve[:60]) > 0).any() or curve[10] < curve[0]  # …with ripples, overall down
    # a larger base decays later
    slow = long_term_decay(128, np.arange(0, 257), base=500_000.0).numpy()
    assert slow[50:250].mean() > curve[50:250].mean()


def test_long_term_decay_against_a_complex_loop():
    d, base = 16, 10000.0
    for delta in (0, 1, 3, 17, 250, -9):
        total, s = 0.0, 0j
        for u in range(1, d // 2 + 1):
            s = sum(cmath.exp(1j * delta * base ** (-2 * f / d)) for f in range(u))
            total += abs(s)
        assert long_term_decay(d, [delta], base).item() == pytest.approx(total / (d // 2), abs=1e-12)


# -- independent computations and oracles ---------------------------------------------------------


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_apply_rotary_equals_an_explicit_float64_loop(layout):
    rng = np.random.default_rng(0)
    for d, base in ((2, 10000.0), (8, 10000.0), (14, 500.0), (64, 10000.0)):
        x = rng.standard_normal((6, d))
        pos = [0, 1, -1, 255, 70000, -123456]
        got = apply_rotary(torch.from_numpy(x), torch.tensor(pos), base=base, layout=layout).numpy()
        for r, m in enumerate(pos):
            assert np.allclose(got[r], naive_rotate(list(x[r]), m, base, layout), atol=1e-9)


def test_frequencies_equal_hf_llama_default_rope():
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    for d, base in ((8, 10000.0), (64, 10000.0), (128, 500000.0), (32, 1000.0)):
        cfg = LlamaConfig(
            hidden_size=d * 2,
            num_attention_heads=2,
            max_position_embeddings=256,
            rope_parameters={"rope_type": "default", "rope_theta": base},
        )
        inv, factor = LlamaRotaryEmbedding.compute_default_rope_parameters(cfg)
        assert factor == 1.0
        assert torch.allclose(inv.double(), rope_frequencies(d, base), rtol=1e-6)


def test_half_split_equals_hf_llama_apply_rotary_pos_emb():
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    d, h, n = 32, 2, 40
    cfg = LlamaConfig(
        hidden_size=d * h,
        num_attention_heads=h,
        max_position_embeddings=512,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )
    rot = LlamaRotaryEmbedding(cfg)
    q, k = rand(1, h, n, d, seed=10, dtype=torch.float32), rand(1, h, n, d, seed=11, dtype=torch.float32)
    pos = torch.arange(n)[None] + 200
    cos, sin = rot(q, pos)
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    # HF computes the angles m·θ in float32: at m ≈ 240 that alone costs ~1e-5 (240 · 2⁻²⁴ rad).
    assert torch.allclose(apply_rotary(q, pos[0], layout="half"), q_hf, atol=1e-4)
    assert torch.allclose(apply_rotary(k, pos[0], layout="half"), k_hf, atol=1e-4)
    # near position 0 the two agree to float32 rounding
    cos0, sin0 = rot(q, torch.arange(n)[None])
    q0, _ = apply_rotary_pos_emb(q, k, cos0, sin0)
    assert torch.allclose(apply_rotary(q, torch.arange(n), layout="half"), q0, atol=1e-5)
    # and the interleaved layout is genuinely different from HF Llama's on the same tensor
    assert not torch.allclose(apply_rotary(q, pos[0]), q_hf, atol=1e-2)


def test_interleaved_equals_hf_gptj_rotary():
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb, create_sinusoidal_positions

    d, n = 16, 30
    table = create_sinusoidal_positions(n, d)  # (n, d): [sin | cos] per position
    sin, cos = table[:, : d // 2][None], table[:, d // 2 :][None]  # (1, n, d/2)
    x = rand(1, n, 3, d, seed=12, dtype=torch.float32)  # GPT-J: (b, n, h, d)
    want = apply_rotary_pos_emb(x, sin, cos)
    got = apply_rotary(x.transpose(1, 2), torch.arange(n)).transpose(1, 2)
    assert torch.allclose(got, want, atol=1e-5)


# -- the encoder ----------------------------------------------------------------------------------


def naive_rope_logits(q: np.ndarray, k: np.ndarray, qpos, kpos, base=10000.0) -> np.ndarray:
    """(i, j) logits of one head by explicit loops over i, j in float64."""
    d = q.shape[-1]
    out = np.zeros((len(qpos), len(kpos)))
    for i, m in enumerate(qpos):
        qr = naive_rotate(list(q[i]), m, base)
        for j, n in enumerate(kpos):
            kr = naive_rotate(list(k[j]), n, base)
            out[i, j] = sum(a * b for a, b in zip(qr, kr, strict=False)) / math.sqrt(d)
    return out


def test_encoder_terms_sum_to_rope_logits_from_an_explicit_loop():
    assert REGISTRY["rope"] is RoPE and RoPE.kind == "rotary" and RoPE.term_names == ("content", "position")
    enc = build("rope", 32, 2, seed=0)
    q, k = rand(1, 2, 6, 16, seed=13), rand(1, 2, 6, 16, seed=14)
    qpos, kpos = torch.arange(6) + 3, torch.arange(6) - 2
    terms = enc.logit_terms(q, k, qpos, kpos, causal=False)
    assert set(terms.terms) == {"content", "position"}
    assert torch.allclose(terms.terms["content"], content_logits(q, k), atol=1e-14)
    total = terms.total().numpy()
    for h in range(2):
        want = naive_rope_logits(q[0, h].numpy(), k[0, h].numpy(), qpos.tolist(), kpos.tolist())
        assert np.allclose(total[0, h], want, atol=1e-10)
    # switching the position term off gives the unrotated score
    assert torch.allclose(terms.total({"position": 0.0}), content_logits(q, k), atol=1e-14)


def test_position_term_is_zero_where_query_and_key_share_a_position_and_nonzero_elsewhere():
    enc = build("rope", 16, 1, seed=0)
    q, k = rand(1, 1, 8, 16, seed=15), rand(1, 1, 8, 16, seed=16)
    pos = torch.arange(8) * 5
    term = enc.logit_terms(q, k, pos, pos, causal=True).terms["position"][0, 0]
    assert torch.allclose(torch.diagonal(term), torch.zeros(8, dtype=torch.float64), atol=1e-14)
    assert term.abs().max() > 0.1


def test_encoder_is_shift_invariant_and_half_layout_is_a_permutation():
    q, k = rand(1, 2, 7, 8, seed=17), rand(1, 2, 7, 8, seed=18)
    pos = torch.arange(7)
    inter = RoPE(16, 2)
    half = RoPE(16, 2, RopeConfig(layout="half"))
    a = inter.logit_terms(q, k, pos, pos, False).total()
    b = inter.logit_terms(q, k, pos + 50_000, pos + 50_000, False).total()
    assert torch.allclose(a, b, atol=1e-9)
    perm = half_split_permutation(8)
    c = half.logit_terms(q[..., perm], k[..., perm], pos, pos, False).total()
    assert torch.allclose(a, c, atol=1e-12)
    assert (half.logit_terms(q, k, pos, pos, False).total() - a).abs().max() > 1e-2


# -- the chapter's numbers --------------------------------------------------------------------------

TOKS = ("The", "cat", "sat", "on", "the", "mat", ".")


def test_circles_angles_follow_the_identity_and_stay_fixed_when_both_move():
    c = ch.circles(TOKS, 0, 16, 10000.0, 1, 5, 2, 6, 30, "both")
    assert c.q_xy.shape == (30, 8, 2) and c.angle.shape == (30, 8)
    gap = np.abs((c.angle - c.predicted_angle + 180) % 360 - 180).max()
    assert gap < 1e-9
    assert np.allclose(c.angle, c.angle[0], atol=1e-9)  # n − m fixed → every angle fixed
    assert np.allclose(c.score, c.score[0], atol=1e-12)
    assert np.allclose(c.contribution.sum(1), c.score)
    # the arrows themselves do move (fast pair 0 turns 1 rad per step)
    assert np.abs(c.q_xy[1, 0] - c.q_xy[0, 0]).max() > 0.1
    only_q = ch.circles(TOKS, 0, 16, 10000.0, 1, 5, 2, 6, 30, "query")
    assert np.abs(only_q.angle[5, 0] - only_q.angle[0, 0]) > 1.0
    assert (only_q.n == 6).all() and only_q.m[-1] == 31
    # rotation keeps each pair's length
    assert np.allclose(np.linalg.norm(c.q_xy, axis=-1), np.linalg.norm(c.q_xy[0], axis=-1))


def test_relative_identity_map_is_toeplitz_and_shift_invariant():
    r = ch.relative_identity(TOKS, 3, 16, 10000.0, 1, 5, 20, 1_000_000)
    assert r.logits.shape == (20, 20)
    assert r.diagonal_spread < 1e-12 and r.max_change < 1e-8
    for row, curve in r.by_offset.items():
        ok = ~np.isnan(curve)
        assert np.allclose(curve[ok], r.by_offset[0][ok] if row == 0 else curve[ok])
    # rows agree wherever both exist
    a, b = r.by_offset[0], r.by_offset[19]
    both = ~np.isnan(a) & ~np.isnan(b)
    assert both.sum() == 1 and np.allclose(a[both], b[both])  # only n − m = 0 is shared by rows 0 and 19
    mid = r.by_offset[10]
    both = ~np.isnan(a) & ~np.isnan(mid)
    assert both.sum() == 10 and np.allclose(a[both], mid[both], atol=1e-12)


def test_layout_view_numbers():
    lay = ch.layouts(TOKS, 0, 8, 10000.0, 1, 5, 16, 3)
    assert lay.layout_gap < 1e-12 and lay.logit_gap < 1e-12 and lay.same_weights_gap > 0.05
    assert lay.R_interleaved.shape == (8, 8) and lay.R_half.shape == (8, 8)


# -- the chapter's sections, with their words ------------------------------------------------------


def independent_logits(q: np.ndarray, k: np.ndarray, d: int, base: float, positions: np.ndarray) -> np.ndarray:
    """(m, n) logits qᵀR_mᵀR_n k/√d with the rotation written out in numpy (cos/sin per pair),
    nothing shared with encoders/rope.py."""
    theta = base ** (-2.0 * np.arange(d // 2) / d)  # (P,)
    ang = positions[:, None] * theta[None, :]  # (N, P)
    c, s = np.cos(ang), np.sin(ang)

    def rot(v):  # (d,) → (N, d): pair f = channels 2f, 2f+1
        a, b = v[0::2], v[1::2]
        out = np.empty((positions.size, d))
        out[:, 0::2], out[:, 1::2] = a * c - b * s, a * s + b * c
        return out

    return rot(q) @ rot(k).T / math.sqrt(d)


@pytest.mark.parametrize("d", range(2, 33, 2))
def test_identity_question_over_the_control_space(d):
    """The shift question at every head size and base, sizes at both ends and between, shifts from
    −1,000,000 to 1,000,000 (the number input's range) and 0, two word pairs, both languages: the
    answer is an option, it is "no" (the identity), and the change it states is the largest change an
    independent numpy rotation measures — below float64 rounding."""
    for qi, ki in ((1, 5), (3, 3)):
        q, k = ch.word_vectors(TOKS, 0, d, qi, ki)
        for base in ch.BASES:
            for size in (4, 5, 24, 63, 64):
                pos = np.arange(size, dtype=np.float64)
                ref = independent_logits(q, k, d, float(base), pos)
                for shift in (-1_000_000, -999_900, -100, 0, 100, 1000, 1_000_000):
                    view = ch.relative_identity(TOKS, 0, d, float(base), qi, ki, size, shift)
                    moved = independent_logits(q, k, d, float(base), pos + shift)
                    change = float(np.abs(moved - ref).max())
                    assert np.allclose(view.logits, ref, atol=1e-12)
                    assert change < ch.NO_CHANGE and view.max_change < ch.NO_CHANGE, (base, size, shift)
                    for lang in ("en", "ko"):
                        question = ch.identity_question(view, shift, lang)
                        assert question.answer in question.options and question.answer == "no"
                        assert question.facts == {"shift": shift, "change": view.max_change, "answer": "no"}
                        assert f"{view.max_change:.1e}" in question.explanation
                        assert question.labels == tuple(t(f"rope.identity.answer_{a}", lang) for a in question.options)


def test_identity_answers_follow_the_measured_change():
    assert [ch.identity_answer(c) for c in (0.0, 9.9e-7, 1e-6, 0.05, 0.1, 3.0)] == [
        "no",
        "no",
        "little",
        "little",
        "lot",
        "lot",
    ]
    view = ch.relative_identity(TOKS, 0, 8, 10000.0, 1, 5, 8, 100)
    broken = dataclasses.replace(view, max_change=0.5)  # as if the identity failed
    q = ch.identity_question(broken, 100, "en")
    assert q.answer == "lot" and "rounding" not in q.explanation.split("That is")[0]
    assert "0.5" in q.explanation and "more than rounding" in q.explanation


def test_circles_section_words_follow_the_numbers():
    for lang in ("en", "ko"):
        cs = ch.circles_section(TOKS, 0, 8, 10000.0, 1, 5, 2, 6, "both", lang)
        c = cs.circles
        assert cs.notes.shape == (ch.FRAMES, 4) and len(cs.frame_titles) == ch.FRAMES and len(cs.panel_titles) == 4
        assert cs.gap == pytest.approx(float(np.abs((c.angle - c.predicted_angle + 180) % 360 - 180).max()))
        assert cs.gap < 1e-9
        # the note under circle f states its angle and its share; the title the logit of the frame
        assert f"{c.angle[0, 0]:+.0f}°".replace("-", "−") in cs.notes[0, 0]
        assert f"{c.score[7]:+.3f}".replace("-", "−") in cs.frame_titles[7]
        assert f"n − m = {c.n[7] - c.m[7]}" in cs.frame_titles[7]
        assert f"{c.wavelength[3]:,.0f}" in cs.panel_titles[3]  # λ ≈ 6,283: a slow pair


def test_sentence_view():
    toks = TOKS
    a = ch.sentence_view(toks, 0, True, 0)
    assert a.change == 0.0 and a.panels.shape == (2, 7, 7) and a.terms.shape == (3, 7, 7)
    content, position, total = a.terms
    assert np.allclose(content + position, total, equal_nan=True)
    assert np.isnan(total[0, 1]) and not np.isnan(total[1, 0])  # causal: the future is blank
    assert np.allclose(np.nansum(a.panels, axis=2), 1.0)
    b = ch.sentence_view(toks, 0, True, 100_000)
    assert 0 < b.change < 1e-4  # float32 rounding of the large angles
    assert np.allclose(b.panels, a.panels, atol=1e-4, equal_nan=True)
    assert np.abs(a.panels[0] - a.panels[1]).max() > 1e-3  # RoPE changed the map


# -- why block-diagonal: the numbers beside the proofs ------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("d", [2, 4, 6, 8])
def test_real_canonical_form_against_scipy_real_schur(d, seed):
    """QᵀAQ = ⊕ θ_f J with Q orthogonal; the frequencies are those of scipy's real Schur form (whose
    T is block-diagonal for a normal matrix), found by an independent algorithm."""
    from scipy.linalg import schur

    a = gen.random_skew(d, seed)
    assert np.allclose(a, -a.T)
    q, thetas = gen.real_canonical_form(a)
    assert np.allclose(q.T @ q, np.eye(d), atol=1e-12)
    assert np.allclose(q.T @ a @ q, gen.block_generator(thetas), atol=1e-12)
    assert (np.diff(thetas) <= 1e-12).all() and (thetas >= 0).all()
    T, Z = schur(a, output="real")
    assert np.allclose(Z @ T @ Z.T, a, atol=1e-12)
    blocks = sorted(abs(T[2 * f + 1, 2 * f]) for f in range(d // 2))
    assert np.allclose(sorted(thetas), blocks, atol=1e-10)
    off = T.copy()
    for f in range(d // 2):
        off[2 * f : 2 * f + 2, 2 * f : 2 * f + 2] = 0
    assert np.abs(off).max() < 1e-12  # scipy too: a normal matrix's real Schur form is block-diagonal


def test_real_canonical_form_with_repeated_and_zero_frequencies():
    rng = np.random.default_rng(3)
    for thetas in ([1.0, 1.0, 0.5], [2.0, 0.0], [0.0, 0.0], [1.5, 1.5, 1.5, 1.5]):
        basis = np.linalg.qr(rng.standard_normal((2 * len(thetas),) * 2))[0]
        a = basis @ gen.block_generator(np.array(thetas)) @ basis.T
        q, found = gen.real_canonical_form(a)
        assert np.allclose(q.T @ q, np.eye(a.shape[0]), atol=1e-10)
        assert np.allclose(q.T @ a @ q, gen.block_generator(found), atol=1e-10)
        assert np.allclose(found, sorted(thetas, reverse=True), atol=1e-8)
    with pytest.raises(ValueError, match="skew"):
        gen.real_canonical_form(np.eye(4))
    with pytest.raises(ValueError, match="even"):
        gen.real_canonical_form(np.zeros((3, 3)))


@pytest.mark.parametrize("seed", range(4))
def test_skew_view_exponential_is_ropes_rotation_in_the_basis_q(seed):
    from scipy.linalg import expm

    v = gen.skew_view(seed)
    assert v.generator.shape == (gen.SKEW_D, gen.SKEW_D) and v.frequencies.shape == (gen.SKEW_D // 2,)
    assert max(v.off_block, v.block_gap, v.orthogonality_gap, v.exponential_gap, v.relative_gap) < 1e-10
    # independently: scipy's expm, and RoPE's own rotation_matrix with these frequencies
    R = rotation_matrix(v.m, gen.SKEW_D, inv_freq=torch.from_numpy(v.frequencies)).numpy()
    assert np.allclose(expm(v.m * v.generator), v.basis @ R @ v.basis.T, atol=1e-10)
    for m, n in ((0, 3), (5, 2), (7, 7)):
        Rm, Rn = expm(m * v.generator), expm(n * v.generator)
        assert np.allclose(Rm.T @ Rn, expm((n - m) * v.generator), atol=1e-10)
    assert v.frequencies_text == ", ".join(f"{x:.3f}" for x in v.frequencies)
    # a matrix that is not of this form is caught: a non-skew A's exponential is not orthogonal
    e = expm(v.generator + np.eye(gen.SKEW_D) * 0.1)
    assert np.abs(e.T @ e - np.eye(gen.SKEW_D)).max() > 0.1


# -- the page ---------------------------------------------------------------------------------------


def test_page_runs_and_its_figures_show_the_identity():
    at = open_page(PAGE)
    assert not errors(at)
    fig = chart(at, "rope_circles")
    assert len(fig["frames"]) == 41
    q_arrows = fig_array(fig["data"][3]["x"])  # origin, tip, gap per pair
    assert q_arrows.size == 3 * 8
    z = fig_array(chart(at, "rope_identity")["data"][0]["z"])
    assert z.shape == (24, 24)
    for off in range(-23, 24):
        diag = np.diagonal(z, offset=off)
        assert np.ptp(diag) < 1e-9
    md = " ".join(m.value for m in at.markdown)
    assert "largest gap" in md
    assert "Largest spread along any diagonal" not in md  # it states the answer: it waits for Reveal
    w = chart(at, "rope_attention")
    panels = [fig_array(t["z"]) for t in w["data"]]
    assert len(panels) == 2 and np.allclose(panels[1].sum(1), 1, atol=1e-5)
    assert np.abs(panels[0] - panels[1]).max() > 1e-3  # RoPE changed the map
    # the question is the chapter's, answered by the map
    radio = at.radio(key="rope_q__choice")
    radio.set_value(t("rope.identity.answer_no", "en")).run()
    at.button(key="rope_q__reveal").click().run()
    assert any(s.value.startswith("Right:") for s in at.success)
    assert "Largest spread along any diagonal" in " ".join(m.value for m in at.markdown)
    # the goal's proof and the block-diagonal panel are closed until opened; opened, the proof is there
    goal = D.get("rope-from-the-goal").steps
    assert not any(DV.step_latex(s) in el.value for s in goal for el in at.latex)
    assert not [c for c in chart_elements(at) if c.key == "rope_skew_blocks"]
    at.session_state["rope_goal__proof"] = True  # open the expander, as a click would
    at.run()
    assert not errors(at)
    bodies = [el.value for el in at.latex]
    for s in goal:
        assert any(DV.step_latex(s) in b for b in bodies)


def test_why_block_diagonal_panel_shows_every_proof_and_the_numbers():
    at = open_page(PAGE)
    at.session_state["rope_why_block"] = True  # open the panel, as a click would
    at.run()
    assert not errors(at)
    bodies = [el.value for el in at.latex]
    for derivation_id in (
        "rope-skew-generator",
        "rope-skew-exponential-2d",
        "rope-block-exponential",
        "rope-absorb-basis",
    ):
        for s in D.get(derivation_id).steps:
            assert any(DV.step_latex(s) in b for b in bodies), (derivation_id, s.rule)
    md = "\n".join(m.value for m in at.markdown)
    assert md.count(":green-badge[:material/verified: Verified by sympy]") >= 4
    for theorem in ("spectral theorem for normal matrices", "continuous", "theorem, not a"):
        assert theorem in md
    v = gen.skew_view(0)
    generator = fig_array(chart(at, "rope_skew_generator")["data"][0]["z"])
    blocks = fig_array(chart(at, "rope_skew_blocks")["data"][0]["z"])
    assert np.allclose(generator, v.generator) and np.allclose(blocks, v.blocks)
    assert f"θ_f = {v.frequencies_text}" in md


def test_page_widgets_at_their_extremes():
    """Every widget at one end, then every widget at the other (widgets set together, one rerun each:
    each rerun draws the whole page)."""
    at = open_page(PAGE)
    at.select_slider(key="rope_d").set_value(2)
    at.select_slider(key="rope_base").set_value(10)
    at.slider(key="rope_m").set_value(200)
    at.slider(key="rope_n").set_value(0)
    at.radio(key="rope_move").set_value("query")
    at.slider(key="rope_size").set_value(4)
    at.number_input(key="rope_shift").set_value(-1_000_000)
    at.select_slider(key="rope_decay_d").set_value(16)
    at.slider(key="rope_decay_dist").set_value(4096)
    at.select_slider(key="rope_matrix_d").set_value(2)
    at.slider(key="rope_matrix_m").set_value(200)
    at.toggle(key="rope_causal").set_value(True)
    at.number_input(key="rope_offset").set_value(100_000)
    at.run()
    assert not errors(at)
    circles = chart(at, "rope_circles")
    assert fig_array(circles["data"][3]["x"]).size == 3  # d = 2: one circle
    assert "n − m = −200" in circles["layout"]["title"]["text"]
    assert "n − m = −240" in circles["frames"][-1]["layout"]["title"]["text"]  # the query moves alone
    assert fig_array(chart(at, "rope_identity")["data"][0]["z"]).shape == (4, 4)
    assert fig_array(chart(at, "rope_decay")["data"][0]["y"]).size == 4097
    R = fig_array(chart(at, "rope_R_interleaved")["data"][0]["z"])
    assert np.allclose(R, [[math.cos(200), -math.sin(200)], [math.sin(200), math.cos(200)]])
    md = " ".join(m.value for m in at.markdown)
    assert "starts at 100,000" in md
    terms = chart(at, "rope_terms_grid")
    content, position, total = (fig_array(t["z"]) for t in terms["data"])
    assert np.allclose(content + position, total, atol=1e-4, equal_nan=True)
    assert np.isnan(total[0, 1]) and not np.isnan(total[1, 0])  # causal: the future is blank

    at.select_slider(key="rope_d").set_value(32)
    at.select_slider(key="rope_base").set_value(1_000_000)
    at.slider(key="rope_m").set_value(0)
    at.slider(key="rope_n").set_value(200)
    at.radio(key="rope_move").set_value("both")
    at.slider(key="rope_size").set_value(64)
    at.number_input(key="rope_shift").set_value(1_000_000)
    at.select_slider(key="rope_decay_d").set_value(256)
    at.slider(key="rope_decay_dist").set_value(16)
    at.select_slider(key="rope_matrix_d").set_value(16)
    at.slider(key="rope_matrix_m").set_value(0)
    at.number_input(key="rope_offset").set_value(0)
    at.toggle(key="rope_terms").set_value(False)
    at.run()
    assert not errors(at)
    assert "rope_terms_grid" not in [c.key for c in chart_elements(at)]
    circles = chart(at, "rope_circles")
    assert fig_array(circles["data"][3]["x"]).size == 3 * 16
    assert all("n − m = 200" in f["layout"]["title"]["text"] for f in circles["frames"])
    z = fig_array(chart(at, "rope_identity")["data"][0]["z"])
    assert z.shape == (64, 64) and np.ptp(np.diagonal(z, offset=5)) < 1e-9
    assert np.allclose(fig_array(chart(at, "rope_R_interleaved")["data"][0]["z"]), np.eye(16))


def test_page_with_300_tokens_korean_emoji_and_a_single_token():
    long = " ".join(f"w{i % 41}" for i in range(300))
    at = open_page(PAGE, sentence=long)
    assert not errors(at)
    assert any("first 256" in w.value for w in at.warning)
    w = chart(at, "rope_attention")
    assert fig_array(w["data"][1]["z"]).shape == (86, 86)  # 2 panels: 256 a side in blocks of 3
    assert "largest of 3 × 3 cells" in w["data"][1]["hovertemplate"]
    at.selectbox(key="rope_q_word").set_value(255).run()
    assert not errors(at) and "query “w9”" in chart(at, "rope_circles")["layout"]["title"]["text"]
    # the sentence shrinks under the chosen word: the picker falls back to the last word
    at.session_state["sentence"] = "a b c"
    at.run()
    assert not errors(at) and at.selectbox(key="rope_q_word").value == 2

    at = open_page(PAGE, sentence=KOREAN_EMOJI)
    assert not errors(at)
    at.selectbox(key="rope_q_word").set_value(1).run()
    assert "“🐱”" in chart(at, "rope_circles")["layout"]["title"]["text"]

    at = open_page(PAGE, sentence="alone")
    assert not errors(at)
    assert "query “alone”" in chart(at, "rope_circles")["layout"]["title"]["text"]


def test_page_switches_to_korean_and_keeps_every_control():
    typed = "Seven quick zebras jump over the lazy dogs today"  # not a default: it stays in Korean
    at = open_page(PAGE, sentence=typed)
    at.selectbox(key="rope_q_word").set_value(3).run()
    at.radio(key="rope_move").set_value("query").run()
    at.select_slider(key="rope_d").set_value(8).run()
    at.number_input(key="rope_shift").set_value(-500).run()
    logits_en = fig_array(chart(at, "rope_identity")["data"][0]["z"])
    at.button_group(key="lang").set_value("ko").run()
    assert not errors(at)
    assert at.session_state["sentence"] == typed
    assert at.selectbox(key="rope_q_word").value == 3 and at.radio(key="rope_move").value == "query"
    assert at.select_slider(key="rope_d").value == 8 and at.number_input(key="rope_shift").value == -500
    assert np.array_equal(fig_array(chart(at, "rope_identity")["data"][0]["z"]), logits_en)
    assert at.radio(key="rope_move").options == [t("rope.circles.move_both", "ko"), t("rope.circles.move_query", "ko")]
    assert at.query_params["rope_move"] == "query" and at.query_params["rope_q_word"] == "3"


def test_rotation_circles_frames_send_only_what_moves():
    """A frame carries only the points, hover text and notes that change; merged into the drawn
    traces as plotly's animate does (a frame's keys replace the trace's), it gives exactly the
    figure that opens on that frame."""
    import json

    c = ch.circles(TOKS, 0, 16, 10000.0, 1, 5, 2, 6, 12, "both")
    pairs = c.q_xy.shape[1]

    def build(start):
        return rope_figures.rotation_circles(
            c.q_xy,
            c.k_xy,
            "Rotation",
            panel_titles=[f"pair {p}" for p in range(pairs)],
            notes=np.array([[f"note {k}.{p}" for p in range(pairs)] for k in range(12)]),
            frame_titles=[f"t={k}" for k in range(12)],
            frame_labels=[str(k) for k in range(12)],
            start=start,
        ).to_dict()

    first = build(0)
    for step, frame in enumerate(first["frames"]):
        assert all(set(trace) <= {"type", "x", "y", "text"} for trace in frame["data"])
        merged = [dict(trace) for trace in first["data"]]
        for index, change in zip(frame["traces"], frame["data"], strict=True):
            merged[index].update(change)
        assert json.dumps(merged, sort_keys=True) == json.dumps(build(step)["data"], sort_keys=True)


def test_rotation_circles_unvalidated_build_is_valid_plotly():
    """rope_figures.rotation_circles skips plotly's validation for speed: rebuilding the same figure
    with full validation must give exactly the same figure, frames included."""
    import json

    import plotly.graph_objects as go

    c = ch.circles(TOKS, 0, 16, 10000.0, 1, 5, 2, 6, 12, "both")
    pairs = c.q_xy.shape[1]
    fig = rope_figures.rotation_circles(
        c.q_xy,
        c.k_xy,
        "Rotation <circles>",
        panel_titles=[f"pair {p}" for p in range(pairs)],
        notes=np.full(c.q_xy.shape[:2], "note"),
        frame_titles=[f"t={k}" for k in range(12)],
        frame_labels=[str(k) for k in range(12)],
        cols=4,
    )
    fast = fig.to_dict()
    checked = go.Figure(fast).to_dict()  # every attribute validated (raises on an invalid one)
    assert len(fast["frames"]) == 12 and len(fast["frames"][0]["data"]) == 4
    assert json.dumps(fast, sort_keys=True, default=str) == json.dumps(checked, sort_keys=True, default=str)
