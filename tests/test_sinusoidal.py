"""Sinusoidal APE: the formula, its properties, and the chapter's numbers."""

import math

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
