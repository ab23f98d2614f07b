"""Sinusoidal APE: the formula, its properties, and the chapter's numbers."""

import math
from itertools import pairwise

import numpy as np
import pytest
import torch

from encoders.sinusoidal import (
    Sinusoidal,
    concatenated_permutation,
    shift_matrix,
    sinusoidal_frequencies,
    sinusoidal_rows,
    sinusoidal_table,
)
from explain.chapters import sinusoidal as ch

BASES = (10.0, 100.0, 1_000.0, 10_000.0, 100_000.0)  # every option of the page's base control


def naive_table(n, d, base=10000.0):
    """The paper's formula, one entry at a time, in plain Python floats."""
    out = np.zeros((n, d))
    for pos in range(n):
        for c in range(d):
            f = c // 2
            angle = pos / base ** (2 * f / d)
            out[pos, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return out


@pytest.mark.parametrize("n,d,base", [(50, 16, 10000.0), (7, 5, 10000.0), (33, 64, 100.0), (3, 1, 10.0)])
def test_table_matches_the_formula_entry_by_entry(n, d, base):
    got = sinusoidal_table(n, d, base, dtype=torch.float64).numpy()
    assert got.shape == (n, d)
    np.testing.assert_allclose(got, naive_table(n, d, base), atol=1e-12)


def test_pinned_values():
    t = sinusoidal_table(3, 4, dtype=torch.float64)
    # position 1: sin(1), cos(1), sin(1/100), cos(1/100)  (ω_1 = 10000^(-2/4) = 1/100)
    np.testing.assert_allclose(t[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], atol=1e-15)
    np.testing.assert_allclose(t[0], [0, 1, 0, 1])


def test_frequencies_use_the_pair_index_not_the_channel_index():
    w = sinusoidal_frequencies(8).numpy()
    np.testing.assert_allclose(w, [1, 10000**-0.25, 10000**-0.5, 10000**-0.75])
    assert sinusoidal_frequencies(5).numel() == 3  # odd d: one lone sin channel more
    with pytest.raises(ValueError):
        sinusoidal_frequencies(0)
    with pytest.raises(ValueError):
        sinusoidal_frequencies(8, base=1.0)


def test_dot_product_depends_only_on_the_offset():
    P = sinusoidal_table(80, 32, dtype=torch.float64)
    S = P @ P.T
    for delta in range(-20, 21):
        diag = torch.diagonal(S, offset=delta)
        assert float(diag.max() - diag.min()) < 1e-10, delta
    # and it equals Σ_f cos(ω_f Δ), symmetric in Δ, maximal at Δ = 0
    w = sinusoidal_frequencies(32)
    for delta in (0, 1, 5, 17):
        expected = torch.cos(w * delta).sum()
        assert abs(float(S[10, 10 + delta] - expected)) < 1e-10
        assert abs(float(S[10 + delta, 10] - expected)) < 1e-10
    assert torch.argmax(S[40]).item() == 40


def test_shift_is_a_fixed_rotation_for_every_position():
    d = 16
    for delta in (-7, 0, 3, 250):
        T = shift_matrix(delta, d)
        assert torch.allclose(T.T @ T, torch.eye(d, dtype=torch.float64), atol=1e-12)  # orthogonal
        for p in (0, 1, 11, 1000):
            lhs = sinusoidal_rows(torch.tensor([p + delta]), d)[0]
            rhs = T @ sinusoidal_rows(torch.tensor([p]), d)[0]
            assert float((lhs - rhs).abs().max()) < 1e-9
    with pytest.raises(ValueError):
        shift_matrix(1, 7)


def test_layouts_are_equal_up_to_the_permutation_only():
    lay = ch.layouts(20, 10, 10000.0)
    assert lay.max_abs_diff < 1e-15
    assert lay.max_abs_diff_unpermuted > 0.1
    assert concatenated_permutation(6).tolist() == [0, 2, 4, 1, 3, 5]
    assert concatenated_permutation(5).tolist() == [0, 2, 4, 1, 3]


def test_rows_accept_any_integer_positions():
    rows = sinusoidal_rows(torch.tensor([-3, 0, 10**6]), 6)
    assert torch.isfinite(rows).all()
    np.testing.assert_allclose(rows[0, 0], math.sin(-3))


def test_encoder_adds_the_table():
    enc = Sinusoidal(8, 2)
    x = torch.zeros(1, 5, 8)
    assert torch.allclose(enc.encode_input(x, torch.arange(5))[0], sinusoidal_table(5, 8))
    shifted = enc.encode_input(x, torch.arange(5) + 2)[0]
    assert torch.allclose(shifted, sinusoidal_table(7, 8)[2:])


def test_chapter_numbers():
    dp = ch.dot_products(40, 16, 10000.0, (0, 20, 39))
    for curve in dp.from_rows.values():
        ok = ~np.isnan(curve)
        assert ok.sum() >= 40 and np.abs(curve[ok] - dp.closed_form[ok]).max() < 1e-10
    assert np.allclose(dp.closed_form, dp.closed_form[::-1])  # symmetric in Δ
    chk = ch.shift_check(5, 3, 64, 10000.0)
    assert chk.max_abs_diff < 1e-12
    lam = ch.wavelengths(64, 10000.0)
    assert lam[0] == pytest.approx(2 * math.pi) and np.all(np.diff(lam) > 0)
    bits = ch.binary_digits(8, 3)
    assert bits[5].tolist() == [1, 0, 1]


# -- the classic mistake the frequency docstring names ------------------------------------------


def table_from_exponents(n, d, exponent, base=10000.0):
    """A table with channel c = sin/cos(pos · base^(−exponent(c))), interleaved."""
    out = np.zeros((n, d))
    for pos in range(n):
        for c in range(d):
            angle = pos * base ** (-exponent(c))
            out[pos, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return out


def test_the_classic_mistakes_break_what_the_docstring_says():
    n, d = 40, 16
    right = sinusoidal_table(n, d, dtype=torch.float64).numpy()
    np.testing.assert_allclose(right, table_from_exponents(n, d, lambda c: 2 * (c // 2) / d), atol=1e-12)
    # |PE(p)|² = d/2 for every p: each pair is (sin, cos) of one angle, so T(Δ) (orthogonal) can map rows.
    np.testing.assert_allclose((right**2).sum(axis=1), d / 2, atol=1e-12)
    channel = table_from_exponents(n, d, lambda c: c / d)  # the channel index where 2f belongs
    np.testing.assert_allclose(channel[:, 0::2], right[:, 0::2], atol=1e-12)  # the sines are right …
    assert np.abs(channel[:, 1::2] - right[:, 1::2]).max() > 0.1  # … their cos partners are not
    norms = (channel**2).sum(axis=1)
    assert norms.max() - norms.min() > 0.1  # no longer one angle per pair: no rotation maps row to row
    w = sinusoidal_frequencies(d).numpy()
    assert 10000 ** (-(2 * 3 + 1) / d) / w[3] == pytest.approx(10000 ** (-1 / d))  # cos 3: base^(1/d) slower
    half = [10000 ** (-f / d) for f in range(d // 2)]  # the pair index in the channel formula
    np.testing.assert_allclose(np.log(half), np.log(w) / 2, rtol=1e-12)  # every exponent halved
    assert half[-1] == pytest.approx(10000 ** (-(d // 2 - 1) / d)) and half[-1] > 10000**-0.5


# -- the chapter's question ----------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_wavelength_question_over_every_d_and_base(lang):
    """Every d of the page's slider (2 … 512, even) at every base: the answer is an option and is
    the pair the formula λ_f = 2π·base^(2f/d) makes longest; every stated number is that formula's."""
    for base in BASES:
        for d in range(2, 513, 2):
            q = ch.wavelength_question(d, base, lang)
            pairs = (d + 1) // 2
            if pairs == 1:
                assert q is None  # a single pair: nothing to choose from
                continue
            assert q is not None
            lam = [2 * math.pi * base ** (2 * f / d) for f in range(pairs)]
            longest = max(range(pairs), key=lam.__getitem__)
            assert q.answer == longest == pairs - 1 and q.answer in q.options
            assert set(q.options) == {0, pairs // 2, pairs - 1}
            f = q.facts
            assert f["first"] == pytest.approx(lam[0], rel=1e-12) and f["last"] == pytest.approx(lam[-1], rel=1e-12)
            assert f["last_pair"] == pairs - 1 and f["base"] == int(base) and f["longest"] == longest
            assert all(a < b for a, b in pairwise(lam))  # "grows with f"
            assert f"{f['last']:,.0f}" in q.explanation and f"{int(base):,}" in q.explanation


# -- tensor2tensor's frequencies ----------------------------------------------------------------


def t2t_reference(n, d, max_timescale=1.0e4, min_timescale=1.0):
    """get_timing_signal_1d's recipe written out: log-spaced timescales, increment
    ln(max/min)/max(d/2 − 1, 1), concatenated [sin | cos] (even d)."""
    half = d // 2
    inc = math.log(max_timescale / min_timescale) / max(half - 1, 1)
    inv = [min_timescale * math.exp(-k * inc) for k in range(half)]
    out = np.zeros((n, d))
    for p in range(n):
        for k in range(half):
            out[p, k] = math.sin(p * inv[k])
            out[p, half + k] = math.cos(p * inv[k])
    return np.array(inv), out


@pytest.mark.parametrize("base", BASES)
def test_t2t_comparison_against_the_recipe_for_every_d(base):
    for d in range(2, 513, 2):
        c = ch.t2t_comparison(64, d, base)
        inv, _ = t2t_reference(1, d, max_timescale=base)
        np.testing.assert_allclose(c.omega_t2t, inv, rtol=1e-12)
        np.testing.assert_allclose(c.omega_paper, [base ** (-2 * f / d) for f in range(d // 2)], rtol=1e-12)
        if d == 2:
            assert c.same and c.table_diff == 0.0
            continue
        assert not c.same
        r = c.ratio
        assert r[0] == pytest.approx(1.0) and np.all(np.diff(r) > 0)  # "slower, the more so the later"
        assert c.slowest_pair == d // 2 - 1
        assert c.max_ratio == pytest.approx(base ** (2 / d), rel=1e-12)  # "= base^(2/d)"
        assert c.omega_t2t[-1] == pytest.approx(1 / base, rel=1e-12)  # the last one is exactly 1/base


@pytest.mark.parametrize("n,d,base", [(64, 64, 10000.0), (2, 4, 10.0), (512, 512, 100000.0), (20, 8, 100.0)])
def test_t2t_table_difference_against_the_recipe(n, d, base):
    c = ch.t2t_comparison(n, d, base)
    rows = min(n, ch.LAYOUT_MAX)
    _, t2t = t2t_reference(rows, d, max_timescale=base)
    paper = naive_table(rows, d, base)[:, concatenated_permutation(d).numpy()]
    assert c.positions == rows
    assert c.table_diff == pytest.approx(np.abs(t2t - paper).max(), abs=1e-12)
    assert c.table_diff > 1e-3  # not a permutation: the numbers themselves differ


# -- the views the page draws --------------------------------------------------------------------


def test_views_hold_what_the_page_draws():
    w = ch.waves(10, 8, 10000.0, (0, 1, 6, 14))
    assert list(w.columns) == [0, 1, 6]  # channel 14 does not exist at d = 8
    np.testing.assert_array_equal(w.columns[6], ch.pe_matrix(10, 8, 10000.0)[:, 6])
    assert ch.Waves.is_sin(6) and not ch.Waves.is_sin(7) and ch.Waves.pair(7) == 3
    assert ch.default_channels(4) == [0, 1] and ch.default_channels(64) == [0, 1, 6, 14]
    wl = ch.wavelength_section(100, 16, 10000.0)
    np.testing.assert_array_equal(wl.pairs, np.arange(8))
    np.testing.assert_array_equal(wl.length_line, 100)
    b = ch.binary_view(100, 10.0)
    assert b.last == 31 and b.digits.shape == (32, 6) and b.pe.shape == (32, 12)
    dp = ch.dot_view(40, 16, 10000.0)
    assert sorted(dp.from_rows) == [0, 20, 39] and dp.gap < 1e-10
    chk = ch.shift_check(5, 3, 64, 10000.0)
    assert chk.channels.size == 32 and chk.block == 16 and chk.T_shown.shape == (16, 16)
    assert ch.shift_check(5, 3, 4, 10000.0).channels.size == 4
    lay = ch.layouts_view(512, 512, 10000.0)
    assert lay.interleaved.shape == (64, 64)
    assert lay.permutation_text() == "0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30 …"
    assert ch.layouts_view(4, 4, 10.0).permutation_text() == "0, 2, 1, 3"
    sv = ch.sentence_view("a b a", 0)
    assert sv.tokens == ("a", "b", "a") and sv.added.shape == (3, 64)
    np.testing.assert_allclose(sv.added, sinusoidal_table(3, 64).numpy(), atol=1e-6)
