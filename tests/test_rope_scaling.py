"""Stretching RoPE: encoders/rope_scaling.py, its chapter and page (pages/rotary/rope_scaling.py).

Properties (identities at s = 1, which pairs each scheme touches), independent float64 formulas
written from METHODS.md §9–10, the HF transformers oracles (ROPE_INIT_FUNCTIONS 'linear', 'dynamic',
'yarn' and LlamaRotaryEmbedding end to end), a torchscale-style xPos re-computation, the page.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from encoders import REGISTRY, build
from encoders.rope import RoPE, RopeConfig, apply_rotary, half_split_permutation, rope_frequencies
from encoders.rope_scaling import (
    DynamicNTKRoPE,
    NTKAwareRoPE,
    PositionInterpolationRoPE,
    ScaledRopeConfig,
    XPos,
    XposConfig,
    YarnConfig,
    YaRNRoPE,
    dynamic_ntk_frequencies,
    dynamic_ntk_scale,
    ntk_base,
    ntk_frequencies,
    pi_frequencies,
    xpos_scales,
    xpos_zeta,
    yarn_attention_factor,
    yarn_frequencies,
    yarn_ramp,
)
from explain.chapters import rope_scaling as ch
from explain.figures.theme import panel_cells, screen_factor
from explain.i18n import t
from tests.helpers import chart, errors, fig_array, open_page, rand

PAGE = "pages/rotary/rope_scaling.py"


@pytest.fixture(autouse=True)
def _no_grad():
    with torch.no_grad():
        yield


# -- independent float64 formulas (METHODS.md §9–10), loops and math only ------------------------------


def naive_theta(d, base):
    return [base ** (-2.0 * f / d) for f in range(d // 2)]


def naive_yarn(d, base, s, L, beta_fast=32.0, beta_slow=1.0, truncate=True):
    def corr(beta):
        return d * math.log(L / (2 * math.pi * beta)) / (2 * math.log(base))

    low, high = corr(beta_fast), corr(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    out = []
    for f, th in enumerate(naive_theta(d, base)):
        ramp = min(max((f - low) / (high - low), 0.0), 1.0)
        out.append(th / s * ramp + th * (1 - ramp))
    mscale = 0.1 * math.log(s) + 1 if s > 1 else 1.0
    return out, mscale


def naive_ntk(d, base, alpha):
    return naive_theta(d, base * alpha ** (d / (d - 2)))


# -- properties ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [4, 16, 64, 128])
def test_every_scheme_is_the_identity_at_scale_one(d):
    theta = rope_frequencies(d)
    assert torch.equal(pi_frequencies(d, scale=1.0), theta)
    assert ntk_base(d, 10000.0, 1.0) == 10000.0
    assert torch.allclose(ntk_frequencies(d, scale=1.0), theta, rtol=1e-15)
    assert torch.allclose(yarn_frequencies(d, scale=1.0, original_length=64), theta, rtol=1e-15)
    assert yarn_attention_factor(1.0) == 1.0
    # dynamic NTK is plain RoPE up to the trained length, whatever the factor
    for s in (1.0, 4.0):
        for seq_len in (1, 32, 64):
            assert dynamic_ntk_scale(s, 64, seq_len) == 1.0
            assert torch.allclose(dynamic_ntk_frequencies(d, 10000.0, s, 64, seq_len), theta, rtol=1e-15)


def test_pi_is_positions_divided_by_s():
    x = rand(3, 20, 16, seed=1)
    pos = torch.arange(20) * 7 - 30
    for s in (2.0, 4.0, 32.0):
        a = apply_rotary(x, pos, inv_freq=pi_frequencies(16, scale=s))
        b = apply_rotary(x, pos / s)
        assert torch.allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("d", [8, 64, 128])
@pytest.mark.parametrize("s", [2.0, 4.0, 16.0])
def test_ntk_keeps_the_fastest_pair_and_divides_the_slowest_by_s(d, s):
    theta, ntk = rope_frequencies(d), ntk_frequencies(d, scale=s)
    assert ntk[0] == theta[0] == 1.0
    assert ntk[-1].item() == pytest.approx(theta[-1].item() / s, rel=1e-12)
    ratio = (ntk / theta).numpy()
    assert (np.diff(ratio) < 0).all()  # a smooth geometric slide from 1 down to 1/s


@pytest.mark.parametrize("d,L,s", [(128, 4096, 4.0), (64, 2048, 8.0), (16, 32, 4.0), (128, 512, 2.0)])
def test_yarn_keeps_the_highest_frequencies_and_divides_the_lowest_by_s(d, L, s):
    theta, yarn = rope_frequencies(d), yarn_frequencies(d, 10000.0, s, L)
    ramp = yarn_ramp(d, 10000.0, L)
    keep, divide = ramp == 0, ramp == 1
    assert keep[0] and divide[-1]  # the fastest pair is kept, the slowest divided
    assert torch.equal(yarn[keep], theta[keep])
    assert torch.allclose(yarn[divide], theta[divide] / s, rtol=1e-15)
    between = ~keep & ~divide
    assert ((yarn[between] < theta[between]) & (yarn[between] > theta[between] / s)).all()
    assert (torch.diff(ramp) >= 0).all()
    assert yarn_attention_factor(s) == pytest.approx(0.1 * math.log(s) + 1)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="scale"):
        pi_frequencies(8, scale=0.0)
    with pytest.raises(ValueError, match="d ≥ 4"):
        ntk_base(2, 10000.0, 2.0)
    with pytest.raises(ValueError, match="beta"):
        yarn_ramp(16, 10000.0, 64, beta_fast=1.0, beta_slow=2.0)
    with pytest.raises(ValueError, match="even head dimension"):
        xpos_zeta(7)
    with pytest.raises(ValueError):
        YaRNRoPE(16, 1, YarnConfig(scale=-1.0))
    with pytest.raises(ValueError, match="scale_base"):
        XPos(16, 1, XposConfig(scale_base=0.0))
    with pytest.raises(KeyError):
        ch.scheme_encoder("longrope", 16, 10000.0, 2.0, 64)
    with pytest.raises(ValueError, match="beta"):
        YaRNRoPE(32, 2, YarnConfig(beta_fast=1.0, beta_slow=2.0))
    # YaRN takes the config PI and NTK take, with its own defaults for the rest
    cfg = YaRNRoPE(32, 2, ScaledRopeConfig(scale=2.0, original_length=8)).config
    assert isinstance(cfg, YarnConfig) and (cfg.scale, cfg.original_length, cfg.beta_fast) == (2.0, 8, 32.0)


# -- pinned numbers --------------------------------------------------------------------------------------


def test_pinned_values():
    # the TOOLING.md example: yarn, d = 16, L = 64, s = 4 → attention factor 1.1386
    assert yarn_attention_factor(4.0) == pytest.approx(1.1386294361)
    assert ntk_base(128, 10000.0, 4.0) == pytest.approx(10000 * 4 ** (128 / 126))
    assert torch.allclose(xpos_zeta(8), torch.tensor([0.4 * 8, 2 + 3.2, 4 + 3.2, 6 + 3.2], dtype=torch.float64) / 11.2)
    assert yarn_ramp(16, 10000.0, 32).tolist() == [0.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert dynamic_ntk_scale(4.0, 100, 400) == 13.0  # s·ℓ/L − (s − 1) = 16 − 3


# -- independent computations and the HF oracles ---------------------------------------------------------


@pytest.mark.parametrize(
    "d,base,s,L",
    [
        (16, 10000.0, 4.0, 64),
        (128, 10000.0, 8.0, 4096),
        (64, 500000.0, 2.0, 8192),
        (32, 1000.0, 16.0, 100),
        (8, 10000.0, 1.5, 16),
    ],
)
def test_schemes_equal_the_float64_formulas(d, base, s, L):
    assert np.allclose(pi_frequencies(d, base, s).numpy(), [t / s for t in naive_theta(d, base)], rtol=1e-14)
    assert np.allclose(ntk_frequencies(d, base, s).numpy(), naive_ntk(d, base, s), rtol=1e-13)
    for ell in (L, 2 * L, int(s * L) + 5):
        alpha = s * max(ell, L) / L - (s - 1)
        assert np.allclose(dynamic_ntk_frequencies(d, base, s, L, ell).numpy(), naive_ntk(d, base, alpha), rtol=1e-13)
    for bf, bs, tr in ((32.0, 1.0, True), (32.0, 1.0, False), (16.0, 2.0, True), (64.0, 0.5, False)):
        want, mscale = naive_yarn(d, base, s, L, bf, bs, tr)
        assert np.allclose(yarn_frequencies(d, base, s, L, bf, bs, tr).numpy(), want, rtol=1e-13)
        enc = YaRNRoPE(d, 1, YarnConfig(base=base, scale=s, original_length=L, beta_fast=bf, beta_slow=bs, truncate=tr))
        assert np.allclose(enc.frequencies(round(s * L)).numpy(), want, rtol=1e-13)
        assert enc.attention_factor(round(s * L)) == pytest.approx(mscale)


def _llama(d, base, rope_parameters, max_pos, heads=2):
    from transformers import LlamaConfig

    return LlamaConfig(
        hidden_size=d * heads,
        num_attention_heads=heads,
        max_position_embeddings=max_pos,
        rope_parameters={"rope_theta": base, **rope_parameters},
    )


CASES = [
    (16, 10000.0, 4.0, 64),
    (64, 10000.0, 8.0, 2048),
    (128, 10000.0, 4.0, 4096),
    (128, 500000.0, 16.0, 8192),
    (32, 1000.0, 2.0, 100),
    (8, 10000.0, 1.0, 32),
]


@pytest.mark.parametrize("d,base,s,L", CASES)
def test_frequencies_equal_hf_rope_init_functions(d, base, s, L):
    from transformers import modeling_rope_utils as R

    inv, att = R.ROPE_INIT_FUNCTIONS["linear"](_llama(d, base, {"rope_type": "linear", "factor": s}, L), "cpu")
    assert att == 1.0 and torch.allclose(inv.double(), pi_frequencies(d, base, s), rtol=2e-6)

    cfg = _llama(d, base, {"rope_type": "dynamic", "factor": s}, L)
    for seq_len in (L // 2, L, 3 * L, int(s * L)):
        inv, _ = R.ROPE_INIT_FUNCTIONS["dynamic"](cfg, "cpu", seq_len=seq_len)
        assert torch.allclose(inv.double(), dynamic_ntk_frequencies(d, base, s, L, seq_len), rtol=2e-6)

    for extra in ({}, {"beta_fast": 16.0, "beta_slow": 2.0}, {"truncate": False}):
        params = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": L, **extra}
        inv, att = R.ROPE_INIT_FUNCTIONS["yarn"](_llama(d, base, params, int(s * L)), "cpu")
        ours = yarn_frequencies(
            d, base, s, L, extra.get("beta_fast", 32.0), extra.get("beta_slow", 1.0), extra.get("truncate", True)
        )
        assert torch.allclose(inv.double(), ours, rtol=2e-6)
        assert att == pytest.approx(yarn_attention_factor(s), rel=1e-12)


@pytest.mark.parametrize(
    "rope_type,cls,config",
    [
        ("linear", PositionInterpolationRoPE, ScaledRopeConfig(layout="half", scale=4.0, original_length=16)),
        ("dynamic", DynamicNTKRoPE, ScaledRopeConfig(layout="half", scale=4.0, original_length=16)),
        ("yarn", YaRNRoPE, YarnConfig(layout="half", scale=4.0, original_length=16)),
    ],
)
def test_encoders_equal_hf_llama_rotary_end_to_end(rope_type, cls, config):
    """Our encoder in the half-split layout against LlamaRotaryEmbedding + apply_rotary_pos_emb,
    positions past the trained length (dynamic NTK recomputes from max position + 1)."""
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    d, h, n = 16, 2, 40
    params = {"rope_type": rope_type, "factor": config.scale}
    if rope_type == "yarn":
        params["original_max_position_embeddings"] = config.original_length
    max_pos = config.original_length * 4 if rope_type == "yarn" else config.original_length
    rot = LlamaRotaryEmbedding(_llama(d, 10000.0, params, max_pos, heads=h))
    q, k = rand(1, h, n, d, seed=2, dtype=torch.float32), rand(1, h, n, d, seed=3, dtype=torch.float32)
    pos = torch.arange(n)
    cos, sin = rot(q, pos[None])
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    want = q_hf @ k_hf.transpose(-1, -2) / math.sqrt(d)
    got = cls(d * h, h, config).logit_terms(q, k, pos, pos, causal=False).total()
    assert torch.allclose(got, want, atol=2e-5)
    # and it is not plain RoPE
    plain = RoPE(d * h, h, RopeConfig(layout="half")).logit_terms(q, k, pos, pos, causal=False).total()
    assert (plain - want).abs().max() > 1e-3


def torchscale_xpos_logits(q: np.ndarray, k: np.ndarray, gamma: float) -> np.ndarray:
    """The procedure of torchscale XPOS (METHODS.md §10) re-done by hand for keys and queries at
    0 … n−1, float64: positions centred at min_pos = −⌈n/2⌉ for the scale, 0-based for the angle,
    interleaved pairs; the key takes the reciprocal scale (downscale=True)."""
    n, d = q.shape
    min_pos = -(n // 2 + n % 2)
    zeta = [(2 * f + 0.4 * d) / (1.4 * d) for f in range(d // 2)]

    def rotate(x, t, sign):
        out = [0.0] * d
        for f in range(d // 2):
            ang = t * 10000 ** (-2 * f / d)
            sc = zeta[f] ** (sign * (t + min_pos) / gamma)
            a, b = x[2 * f], x[2 * f + 1]
            out[2 * f] = (a * math.cos(ang) - b * math.sin(ang)) * sc
            out[2 * f + 1] = (a * math.sin(ang) + b * math.cos(ang)) * sc
        return out

    Q = [rotate(q[i], i, +1) for i in range(n)]
    K = [rotate(k[j], j, -1) for j in range(n)]
    return np.array(
        [[sum(a * b for a, b in zip(Q[i], K[j], strict=False)) / math.sqrt(d) for j in range(n)] for i in range(n)]
    )


@pytest.mark.parametrize("gamma", [512.0, 8.0])
def test_xpos_equals_a_torchscale_style_recomputation(gamma):
    d, n = 8, 9
    q, k = rand(1, 1, n, d, seed=4), rand(1, 1, n, d, seed=5)
    enc = XPos(d, 1, XposConfig(scale_base=gamma))
    got = enc.logit_terms(q, k, torch.arange(n), torch.arange(n), causal=True).total()[0, 0].numpy()
    assert np.allclose(got, torchscale_xpos_logits(q[0, 0].numpy(), k[0, 0].numpy(), gamma), atol=1e-12)


def test_xpos_decays_with_distance_and_depends_only_on_it():
    d = 16
    enc = XPos(d, 1, XposConfig(scale_base=16.0))
    ones = torch.ones(1, 1, 1, d, dtype=torch.float64)
    # q = k = 1, key at 0, query at Δ: the score is Σ_f 2cos(Δθ_f)ζ_f^(Δ/γ) / √d
    for delta in (0, 1, 5, 40, 200):
        got = enc.logit_terms(ones, ones, torch.tensor([delta]), torch.tensor([0]), True).total().item()
        want = sum(
            2 * math.cos(delta * t) * z ** (delta / 16.0)
            for t, z in zip(naive_theta(d, 10000.0), xpos_zeta(d).tolist(), strict=False)
        ) / math.sqrt(d)
        assert got == pytest.approx(want, abs=1e-12)
    far = enc.logit_terms(ones, ones, torch.tensor([400]), torch.tensor([0]), True).total().item()
    near = enc.logit_terms(ones, ones, torch.tensor([0]), torch.tensor([0]), True).total().item()
    assert abs(far) < 0.05 * near
    # shifting every position: same logits, even far from 0 (the centring keeps ζ^(±pos/γ) finite)
    q, k = rand(1, 1, 6, d, seed=6), rand(1, 1, 6, d, seed=7)
    pos = torch.arange(6)
    a = enc.logit_terms(q, k, pos, pos, True).total()
    b = enc.logit_terms(q, k, pos + 100_000, pos + 100_000, True).total()
    assert torch.isfinite(b).all() and torch.allclose(a, b, atol=1e-8)
    # the per-position factors themselves: query ζ^((n−c)/γ), key the reciprocal
    up, down = xpos_scales([3.0], d, 16.0, 1.0), xpos_scales([3.0], d, 16.0, 1.0, downscale=True)
    assert torch.allclose(up * down, torch.ones_like(up)) and (up < 1).all()


def test_all_scaled_encoders_are_registered_rotary_and_keep_the_relative_identity():
    for name, cls in (
        ("rope-pi", PositionInterpolationRoPE),
        ("rope-ntk", NTKAwareRoPE),
        ("rope-dynamic", DynamicNTKRoPE),
        ("rope-yarn", YaRNRoPE),
        ("xpos", XPos),
    ):
        assert REGISTRY[name] is cls and cls.kind == "rotary" and cls.term_names == ("content", "position")
        enc = build(name, 32, 2, seed=1)
        q, k = rand(1, 2, 5, 16, seed=8), rand(1, 2, 5, 16, seed=9)
        pos = torch.arange(5)
        a = enc.logit_terms(q, k, pos, pos, True).total()
        # a shift that keeps the sequence length the same (dynamic NTK reads max position + 1)
        b = enc.logit_terms(q, k, pos - 3, pos - 3, True).total()
        assert torch.allclose(a, b, atol=1e-10), name
        half = cls(32, 2, type(enc.config)(**{**enc.config.__dict__, "layout": "half"}))
        perm = half_split_permutation(16)
        c = half.logit_terms(q[..., perm], k[..., perm], pos, pos, True).total()
        assert torch.allclose(a, c, atol=1e-10), name


# -- the chapter's numbers --------------------------------------------------------------------------------


def test_out_of_distribution_pairs_for_llama2_settings():
    fr = ch.frequencies(128, 10000.0, 4.0, 4096)
    counts = {k: int(v.sum()) for k, v in fr.out_of_distribution.items()}
    # pairs 46…63 never complete a turn in 4,096 positions (L·θ_f < 2π from f = 46 on)
    assert counts == {"rope": 18, "pi": 0, "ntk": 17, "dynamic": 0, "yarn": 0}
    assert np.flatnonzero(fr.out_of_distribution["rope"]).tolist() == list(range(46, 64))
    assert fr.dynamic_alpha == 13.0
    assert np.allclose(fr.max_angle_new["pi"], fr.max_angle_trained)
    assert np.allclose(fr.ratio["pi"], 0.25)


def test_distance_curves_window_means_equal_brute_force_and_the_encoders():
    args = (32, 10000.0, 4.0, 64, 32.0)
    lv = ch.logit_vs_distance(*args)
    for k, curve in lv.curves.items():
        brute = [ch.logit_exact(k, np.arange(a, b), *args).mean() for a, b in zip(lv.starts, lv.stops, strict=False)]
        assert np.allclose(curve, brute, atol=1e-12), k
    # logit_exact against the registered encoders' own logit_terms, q = k = 1, key at 0
    d, base, s, L, gamma = args
    dist = np.arange(0, 256)
    q = torch.ones(1, 1, dist.size, d, dtype=torch.float64)
    k = torch.ones(1, 1, 1, d, dtype=torch.float64)
    for scheme in ch.ALL_SCHEMES:
        enc = build(ch.SCHEMES[scheme].name, d, 1, 0, ch.scheme_config(scheme, base, s, L, gamma))
        # dynamic NTK reads the length from the positions: put one key at the far end (s·L − 1)
        kpos = torch.tensor([0, int(s * L) - 1])
        kk = torch.ones(1, 1, 2, d, dtype=torch.float64)
        got = enc.logit_terms(q, kk, torch.from_numpy(dist), kpos, False).total()[0, 0, :, 0].numpy()
        want = ch.logit_exact(scheme, dist, d, base, s, L, gamma) * math.sqrt(d)
        assert np.allclose(got, want, atol=1e-9), scheme
    # at distance 0 every pair agrees: plain RoPE scores 1, YaRN its temperature (0.1 ln 4 + 1)²
    assert ch.logit_exact("rope", [0], *args)[0] == pytest.approx(1.0, abs=1e-15)
    assert ch.logit_exact("yarn", [0], *args)[0] == pytest.approx((0.1 * math.log(4) + 1) ** 2, abs=1e-14)
    # xPos (γ = 32) sits below plain RoPE far away: its decay multiplies every pair
    far = lv.starts >= 128
    assert (lv.curves["xpos"][far] < lv.curves["rope"][far] + 1e-12).mean() > 0.9


def test_sentence_attention_shapes_and_scale():
    toks = tuple(["the", "cat", "sat", "on", "the", "mat", "and", "the", "dog", "sat", "on", "the", "log"])
    run = ch.sentence_attention(toks, 0, 4, True, scale_base=32.0)
    assert run.scale == pytest.approx(13 / 4)
    assert run.weights.shape == (6, 13, 13)
    assert np.allclose(run.weights.sum(-1), 1, atol=1e-5)
    assert np.allclose(np.triu(run.weights, 1), 0)
    assert np.abs(run.weights[1] - run.weights[0]).max() > 1e-3  # PI changed the map
    assert run.offsets.tolist() == list(range(13))
    short = ch.sentence_attention(toks[:3], 0, 8, False)
    assert short.scale == 1.0
    # at s = 1, PI, NTK, dynamic NTK and YaRN are plain RoPE
    assert np.allclose(short.weights[1:5], short.weights[0], atol=1e-6)


# -- the chapter's question and claims, over the whole control space ----------------------------------


def naive_ramp0(d, base, L, beta_fast, beta_slow):
    """YaRN's ramp at pair 0 from METHODS.md §9, written out (truncate=True, as the page)."""
    low, high = naive_yarn_bounds(d, base, L, beta_fast, beta_slow)
    return min(max((0 - low) / (high - low), 0.0), 1.0)


def naive_yarn_bounds(d, base, L, beta_fast, beta_slow):
    def corr(beta):
        return d * math.log(L / (2 * math.pi * beta)) / (2 * math.log(base))

    low, high = max(math.floor(corr(beta_fast)), 0), min(math.ceil(corr(beta_slow)), d - 1)
    return low, (high + 0.001 if low == high else high)


def check_question(d, base, L, s, bf, bs):
    fr = ch.frequencies(d, float(base), s, L, bf, bs)
    ramp0 = naive_ramp0(d, base, L, bf, bs)
    want = {"pi": 1 / s, "ntk": 1.0, "dynamic": 1.0, "yarn": 1 - ramp0 * (1 - 1 / s)}
    for lang in ("en", "ko"):
        q = ch.frequency_question(fr, s, lang)
        assert q.answer in q.options and q.options == (*ch.STRETCHES, ch.NOBODY)
        f = q.facts
        assert f["s"] == s and f["ramp0"] == pytest.approx(ramp0, abs=1e-12) == 0.0
        for k, v in want.items():
            assert f[f"ratio_{k}"] == pytest.approx(v, rel=1e-12), (k, d, base, L, s, bf, bs)
        moved = tuple(k for k, v in want.items() if abs(v - 1) > 1e-9)
        assert f["moved"] == moved and q.answer == (moved[0] if moved else ch.NOBODY)
        assert moved == (("pi",) if s > 1 else ())
        if moved:
            assert f["name"] == ch.label("pi", lang) and f"{1 / s:.4g}" in q.explanation
            for k in ("ntk", "dynamic", "yarn"):
                assert f"{want[k]:.4g}" in q.explanation
            assert f"{ramp0:g}" in q.explanation
        assert q.label(q.answer) == q.answer_label


@pytest.mark.parametrize("d", ch.HEAD_SIZES)
def test_frequency_question_over_the_control_space(d):
    """Which scheme moves pair 0? Every head size, stretch, trained length and β (both ends of the
    base, and every base at the other defaults), both languages: the answer is an option, and every
    ratio and the ramp value the explanation states agree with the formulas of METHODS.md §9 written
    out here. Only PI ever moves pair 0, and only for s > 1."""
    for base in (ch.BASES[0], ch.BASES[-1]):
        for L in ch.LENGTHS:
            for s in ch.STRETCH_FACTORS:
                for bf in ch.BETA_FAST:
                    for bs in ch.BETA_SLOW:
                        check_question(d, base, L, s, bf, bs)
    for base in ch.BASES:
        for s in ch.STRETCH_FACTORS:
            check_question(d, base, 4096, s, 32.0, 1.0)


@pytest.mark.parametrize("d", ch.HEAD_SIZES)
def test_who_overshoots_over_the_control_space(d):
    """The angles prose, checked at every setting: PI never leaves a pair out; NTK-aware overshoots on
    exactly the pairs that never completed a turn, except the last; YaRN leaves none out when
    β_slow ≥ 1 (the paper's 1), and with β_slow < 1 only pairs of fewer than one turn."""
    for base in ch.BASES:
        for L in ch.LENGTHS:
            uncovered = [f for f in range(d // 2) if L * base ** (-2 * f / d) < 2 * math.pi]
            for s in ch.STRETCH_FACTORS[1:]:
                for bs in ch.BETA_SLOW:
                    fr = ch.frequencies(d, float(base), s, L, 32.0, bs)
                    ood = {k: np.flatnonzero(v).tolist() for k, v in fr.out_of_distribution.items()}
                    assert ood["rope"] == uncovered
                    assert ood["pi"] == []
                    assert ood["ntk"] == [f for f in uncovered if f < d // 2 - 1]
                    if bs >= 1:
                        assert ood["yarn"] == []
                    else:
                        assert set(ood["yarn"]) <= set(uncovered)


@pytest.mark.parametrize("s", [1.5, 2.0, 4.0, 8.0, 32.0])
@pytest.mark.parametrize("d", [8, 32, 128])
def test_yarn_logits_are_the_plain_interpolated_logits_times_an_inverse_temperature(d, s):
    """YaRN's logits equal the logits of a rotation with YaRN's frequencies and no factor (computed
    here with apply_rotary and a dot product), multiplied by (0.1 ln s + 1)² = 1/t > 1: an inverse
    temperature, applied as 0.1 ln s + 1 on q and again on k."""
    L = 16
    enc = YaRNRoPE(d, 1, YarnConfig(scale=s, original_length=L))
    n = round(s * L)
    q, k = rand(1, 1, n, d, seed=11), rand(1, 1, n, d, seed=12)
    pos = torch.arange(n)
    got = enc.logit_terms(q, k, pos, pos, causal=False).total()
    inv = yarn_frequencies(d, 10000.0, s, L)
    plain = apply_rotary(q, pos, inv_freq=inv) @ apply_rotary(k, pos, inv_freq=inv).transpose(-1, -2) / math.sqrt(d)
    factor = (0.1 * math.log(s) + 1) ** 2
    assert factor > 1
    assert torch.allclose(got, factor * plain, atol=1e-12)
    # the factor sits on q and on k, once each: the scaled vectors reproduce the logits
    root = 0.1 * math.log(s) + 1
    qs, ks = apply_rotary(q, pos, inv_freq=inv) * root, apply_rotary(k, pos, inv_freq=inv) * root
    assert torch.allclose(got, qs @ ks.transpose(-1, -2) / math.sqrt(d), atol=1e-12)
    # a sharper softmax: the attention of every query is further from uniform (lower entropy)
    w_yarn, w_plain = torch.softmax(got, -1), torch.softmax(plain, -1)

    def entropy(w):
        return -(w * w.log()).sum(-1)

    assert (entropy(w_yarn) < entropy(w_plain)).all()


def test_pair_runs():
    assert ch.pair_runs([]) == ""
    assert ch.pair_runs([5]) == "5"
    assert ch.pair_runs([46, 47, 48]) == "46–48"
    assert ch.pair_runs(np.array([1, 2, 3, 7, 9, 10])) == "1–3, 7, 9–10"


def test_frequency_section_words_follow_the_numbers():
    for lang in ("en", "ko"):
        fs = ch.frequency_section(128, 10000.0, 4.0, 4096, 32.0, 1.0, lang)
        assert list(fs.ratios)[-1] == fs.ramp_name and list(fs.angles)[-1] == fs.trained_name
        assert len(fs.rows) == len(ch.FREQUENCY_SCHEMES)
        counts = [list(r.values())[1] for r in fs.rows]
        assert counts == [t("rope_scaling.angles.count", lang, bad=b, pairs=64) for b in (18, 0, 17, 0, 0)]
        assert list(fs.rows[0].values())[2] == "46–63"
        assert "1.1386" in fs.caption and "1.2965" in fs.caption  # 0.1 ln 4 + 1, and its square


# -- the page -----------------------------------------------------------------------------------------------


def test_page_runs_with_llama2_defaults():
    at = open_page(PAGE)
    assert not errors(at)
    ratio = chart(at, "rs_ratio")
    pi = next(t for t in ratio["data"] if t["name"] == "Position Interpolation")
    assert np.allclose(fig_array(pi["y"]), 0.25)
    angles = chart(at, "rs_angles")
    assert len(fig_array(angles["data"][0]["y"])) == 64
    ood = at.table[0].value  # a DataFrame, one row per frequency scheme
    assert ood["pairs out of distribution"].tolist() == ["18 of 64", "0 of 64", "17 of 64", "0 of 64", "0 of 64"]
    assert ood["which"].tolist()[:3] == ["46–63", "none", "46–62"]
    grid = chart(at, "rs_attention")
    assert len(grid["data"]) == 6
    # the question is the chapter's: PI moves pair 0
    at.radio(key="rs_q__choice").set_value("Position Interpolation").run()
    at.button(key="rs_q__reveal").click().run()
    assert any(s.value.startswith("Right:") for s in at.success)
    assert any("inverse temperature" in c.value for c in at.caption)


def test_page_widgets_at_their_extremes():
    at = open_page(PAGE)
    at.select_slider(key="rs_d").set_value(8)
    at.select_slider(key="rs_base").set_value(1_000)
    at.select_slider(key="rs_L").set_value(16)
    at.select_slider(key="rs_s").set_value(1.0)
    at.select_slider(key="rs_beta_fast").set_value(4.0)
    at.select_slider(key="rs_beta_slow").set_value(2.0)
    at.select_slider(key="rs_gamma").set_value(16.0)
    at.slider(key="rs_L_sentence").set_value(2)
    at.toggle(key="rs_causal").set_value(False)
    at.run()
    assert not errors(at)
    ratio = chart(at, "rs_ratio")
    for t_ in ratio["data"][:5]:
        assert np.allclose(fig_array(t_["y"]), 1.0), t_["name"]  # s = 1: nothing changes
    grid = chart(at, "rs_attention")
    assert fig_array(grid["data"][0]["z"]).shape == (14, 14)
    at.radio(key="rs_q__choice").set_value("none of them").run()
    at.button(key="rs_q__reveal").click().run()
    assert any(s.value.startswith("Right:") for s in at.success)

    at.select_slider(key="rs_d").set_value(256)
    at.select_slider(key="rs_base").set_value(500_000)
    at.select_slider(key="rs_L").set_value(8192)
    at.select_slider(key="rs_s").set_value(32.0)
    at.select_slider(key="rs_beta_fast").set_value(128.0)
    at.select_slider(key="rs_beta_slow").set_value(0.25)
    at.select_slider(key="rs_gamma").set_value(2048.0)
    at.slider(key="rs_L_sentence").set_value(128)
    at.toggle(key="rs_causal").set_value(True)
    at.run()
    assert not errors(at)
    dist = chart(at, "rs_distance")
    for t_ in dist["data"]:
        assert np.isfinite(fig_array(t_["y"])).all(), t_["name"]
    assert any("s = 1" in i.value for i in at.info)  # 14 tokens ≤ 128: nothing to stretch


def test_page_with_300_tokens_korean_emoji_and_a_single_token():
    long = " ".join(f"w{i % 41}" for i in range(300))
    at = open_page(PAGE, sentence=long)
    assert not errors(at)
    grid = chart(at, "rs_attention")
    side = -(-256 // screen_factor(256, panel_cells(len(grid["data"]))))  # the panels' share of cells
    assert fig_array(grid["data"][0]["z"]).shape == (side, side) and side < 256
    at = open_page(PAGE, sentence="고양이가 🐱 매트 위에 앉았다 👩‍💻 and 東京 🇰🇷!")
    assert not errors(at)
    names = chart(at, "rs_attention")["data"][0]["x"]  # "position · token"
    assert "1 · 🐱" in names and "5 · 👩‍💻" in names
    at = open_page(PAGE, sentence="alone")
    assert not errors(at)


def test_page_switches_to_korean_and_keeps_every_control():
    at = open_page(PAGE)
    at.select_slider(key="rs_d").set_value(64).run()
    at.select_slider(key="rs_s").set_value(8.0).run()
    ratios_en = [fig_array(tr["y"]) for tr in chart(at, "rs_ratio")["data"]]
    at.button_group(key="lang").set_value("ko").run()
    assert not errors(at)
    assert at.select_slider(key="rs_d").value == 64 and at.select_slider(key="rs_s").value == 8.0
    ratios_ko = [fig_array(tr["y"]) for tr in chart(at, "rs_ratio")["data"]]
    assert all(np.array_equal(a, b) for a, b in zip(ratios_en, ratios_ko, strict=True))
    assert at.radio(key="rs_q__choice").options[-1] == t("rope_scaling.frequencies.none", "ko")
