"""explain/chapters/bias_family.py: the numbers a KERPLE/FIRE section draws, and the facts it states,
against independent computations (plain Python over the encoders' own parameters)."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explain.chapters import bias_family as bf


@pytest.mark.parametrize("variant", ["log", "power"])
def test_kerple_curves_and_their_facts(variant):
    cv = bf.kerple_curves(variant, n_heads=4, seed=3, max_distance=40)
    assert cv.bias.shape == (4, 41) and cv.distances.tolist() == list(range(41))
    for h in range(4):
        r1, r2 = float(cv.r1[h]), float(cv.r2[h])
        want = [-r1 * (math.log(1 + r2 * r) if variant == "log" else r**r2) for r in range(41)]
        assert np.allclose(cv.bias[h], want, atol=1e-12, rtol=0)
        assert cv.line[h].tolist() == pytest.approx([-r1 * r for r in range(41)])
        reach = max(r for r in range(41) if want[r] >= -1.0)  # b is non-increasing: the last one within
        assert cv.reach[h] == reach
        assert cv.growth[h] == pytest.approx(want[40] / want[20])
        if variant == "power":
            assert cv.growth[h] == pytest.approx(2**r2)
        else:  # the logarithm grows less than a line would: more than 1×, less than 2×
            assert 1 < cv.growth[h] < 2


def test_kerple_matrix_is_the_curve_laid_out():
    cv = bf.kerple_curves("log", n_heads=2, seed=1, max_distance=11)
    m = bf.kerple_matrix("log", n=12, n_heads=2, seed=1)
    for i in range(12):
        for j in range(12):
            assert m[:, i, j] == pytest.approx(cv.bias[:, abs(i - j)], abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(query=st.integers(0, 80), threshold=st.integers(0, 40), seed=st.integers(0, 999))
def test_fire_row_is_the_papers_formula(query, threshold, seed):
    row = bf.fire_row(query, n_heads=2, seed=seed, threshold=float(threshold))
    c = float(np.float32(0.1))  # the encoder holds c as a float32 parameter
    norm = math.log(c * max(threshold, query) + 1) + 1e-6
    want = [math.log(c * (query - j) + 1) / norm for j in range(query + 1)]
    assert np.allclose(row.normalised, want, atol=1e-12, rtol=0)
    assert row.bias.shape == (2, query + 1) and row.keys.tolist() == list(range(query + 1))
    assert np.all(row.normalised >= 0) and np.all(row.normalised <= 1)


def test_fire_grid_gets_finer_past_the_threshold():
    g = bf.fire_grid((8, 16, 32, 64, 128), threshold=8.0)
    assert g.toeplitz_rows == 9  # queries 0 … 8 share ψ(L)
    for i in g.queries:
        x = g.inputs[i]
        assert x[0] == 0 and x[-1] == pytest.approx(1.0, rel=1e-4) and np.all(np.diff(x) > 0)
    gaps = [g.largest_gap[i] for i in g.queries]
    assert all(b < a for a, b in pairwise(gaps)), gaps
    # below the threshold the normaliser is ψ(L) for every row: the last input is below 1
    short = bf.fire_grid((3,), threshold=8.0)
    assert short.inputs[3][-1] == pytest.approx(math.log(1.3) / (math.log(1.8) + 1e-6))


def test_fire_matrix_is_toeplitz_below_the_threshold_only():
    m = bf.fire_matrix(n=20, n_heads=2, seed=0, threshold=512.0)
    assert np.allclose(m[:, 1:, 1:], m[:, :-1, :-1], atol=1e-12)
    m = bf.fire_matrix(n=20, n_heads=2, seed=0, threshold=4.0)
    assert not np.allclose(m[:, 10:, 10:], m[:, 9:-1, 9:-1], atol=1e-6)


def test_sizes_are_bounded():
    with pytest.raises(ValueError):
        bf.kerple_curves(max_distance=bf.MAX_DISTANCE + 1)
    with pytest.raises(ValueError):
        bf.kerple_matrix(n=bf.MAX_TOKENS + 1)
    with pytest.raises(ValueError):
        bf.fire_matrix(n=0)
