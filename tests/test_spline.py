"""B-spline math in encoders/spline.py: properties, pinned numbers, and scipy.interpolate.BSpline
as an independent oracle (scipy is a test-only dependency)."""

import numpy as np
import pytest
import torch
from scipy.interpolate import BSpline

from encoders import spline as S

KINDS = {"clamped": S.clamped_knots, "uniform": S.uniform_knots}


def scipy_basis(knots: np.ndarray, degree: int, t: np.ndarray) -> np.ndarray:
    K = knots.size - degree - 1
    return np.stack([BSpline(knots, np.eye(K)[i], degree, extrapolate=False)(t) for i in range(K)], axis=1)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("n_ctrl", [6, 9])
def test_basis_matches_scipy(kind, degree, n_ctrl):
    knots = KINDS[kind](n_ctrl, degree)
    t = S.sample_positions(257, knots, degree)  # includes both ends of the domain
    ours = S.bspline_basis(t, knots, degree).numpy()
    ref = scipy_basis(knots.numpy(), degree, t.numpy())
    assert ours.shape == (257, n_ctrl)
    np.testing.assert_allclose(ours, ref, atol=1e-12)


def test_basis_matches_scipy_non_uniform_knots():
    knots = torch.tensor([0, 0, 0, 0.1, 0.15, 0.5, 0.5, 0.9, 1, 1, 1], dtype=torch.float64)  # a double knot
    t = torch.linspace(0, 1, 301, dtype=torch.float64)
    ours = S.bspline_basis(t, knots, 2).numpy()
    np.testing.assert_allclose(ours, scipy_basis(knots.numpy(), 2, t.numpy()), atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("degree", [2, 3, 4, 5])
def test_derivative_matches_scipy_between_knots(kind, degree):
    knots = KINDS[kind](8, degree)
    lo, hi = S.domain(knots, degree)
    t = torch.linspace(lo, hi, 400, dtype=torch.float64)[1:-1] + 1e-4  # avoid landing exactly on a knot
    t = t[(t - knots[:, None]).abs().min(0).values > 1e-6]
    for r in (1, 2):
        ours = S.bspline_basis_derivative(t, knots, degree, r).numpy()
        K = 8
        ref = np.stack([BSpline(knots.numpy(), np.eye(K)[i], degree).derivative(r)(t.numpy()) for i in range(K)], 1)
        np.testing.assert_allclose(ours, ref, atol=1e-9 * 10**r)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("degree", [0, 1, 2, 3, 4, 5])
def test_partition_of_unity_and_non_negative(kind, degree):
    knots = KINDS[kind](7, degree)
    N = S.bspline_basis(S.sample_positions(500, knots, degree), knots, degree)
    assert torch.allclose(N.sum(1), torch.ones(500, dtype=torch.float64), atol=1e-12)
    assert (N >= -1e-15).all()


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5])
def test_each_basis_function_lives_on_degree_plus_one_spans(degree):
    knots = S.uniform_knots(9, degree)
    t = torch.linspace(float(knots[0]), float(knots[-1]), 2001, dtype=torch.float64)[:-1]
    N = S.bspline_basis(t, knots, degree)
    for i in range(9):
        inside = (t > knots[i]) & (t < knots[i + degree + 1])
        assert (N[inside, i] > 0).all() and (N[~inside, i] == 0).all()


def test_pinned_numbers_cubic_uniform():
    # A uniform cubic B-spline at a knot weighs its neighbours 1/6, 4/6, 1/6 (the M matrix in METHODS §12).
    knots = S.uniform_knots(6, 3)
    N = S.bspline_basis(torch.tensor([0.0]), knots, 3)[0]
    np.testing.assert_allclose(N.numpy(), [1 / 6, 4 / 6, 1 / 6, 0, 0, 0], atol=1e-15)


def test_clamped_curve_interpolates_end_points_uniform_does_not():
    P = torch.randn(7, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    for degree in (2, 3, 5):
        ends = S.bspline_curve(P, torch.tensor([0.0, 1.0]), S.clamped_knots(7, degree), degree)
        assert torch.allclose(ends, P[[0, -1]], atol=1e-12)
    ends = S.bspline_curve(P, torch.tensor([0.0, 1.0]), S.uniform_knots(7, 3), 3)
    assert not torch.allclose(ends, P[[0, -1]], atol=1e-3)
    assert torch.allclose(ends[0], (P[0] + 4 * P[1] + P[2]) / 6, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("degree", [1, 2, 3, 4])
def test_local_control_only_on_support(kind, degree):
    K = 8
    knots = KINDS[kind](K, degree)
    t = S.sample_positions(801, knots, degree)
    P = torch.randn(K, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    for i in range(K):
        Q = P.clone()
        Q[i] += torch.tensor([0.7, -0.3], dtype=torch.float64)
        moved = (S.bspline_curve(Q, t, knots, degree) - S.bspline_curve(P, t, knots, degree)).norm(dim=1) > 1e-12
        lo, hi = S.support(knots, degree, i)
        inside = (t > lo) & (t < hi)
        assert moved[inside].all() and not moved[(t < lo) | (t > hi)].any()
        assert moved.float().mean() < 1.0 or degree + 1 >= K


def test_bezier_every_point_moves():
    P = torch.randn(8, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    t = torch.linspace(0, 1, 201, dtype=torch.float64)[1:-1]
    B = S.bernstein_basis(t, 7)
    assert (B > 0).all()  # every Bernstein polynomial is positive on all of (0, 1) ...
    for i in range(8):
        Q = P.clone()
        Q[i, 0] += 0.5
        moved = S.bezier_curve(Q, t) - S.bezier_curve(P, t)
        # ... so moving point i by 0.5 moves every curve point by 0.5 · B_i(t) (up to rounding)
        np.testing.assert_allclose(moved[:, 0].numpy(), 0.5 * B[:, i].numpy(), atol=1e-14)
        assert (moved[(t > 0.1) & (t < 0.9), 0] > 1e-9).all()
    assert torch.allclose(B.sum(1), torch.ones_like(t), atol=1e-12)


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5])
def test_continuity_at_interior_knots(degree):
    """Derivatives 0 … p−1 are continuous across an interior knot, derivative p jumps (for random
    control points): C^(p−1), as continuity_order says."""
    K = 9
    knots = S.clamped_knots(K, degree)
    knot = float(knots[degree + 2])  # an interior knot
    P = torch.randn(K, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    eps = 1e-9
    t = torch.tensor([knot - eps, knot + eps], dtype=torch.float64)
    assert S.continuity_order(degree) == degree - 1
    for r in range(degree + 1):
        left, right = S.bspline_basis_derivative(t, knots, degree, r) @ P
        jump = float((right - left).abs())
        if r <= S.continuity_order(degree):
            assert jump < 1e-5
        else:
            assert jump > 1e-2


def test_bottleneck_shapes_and_ends():
    bn = S.SplineBottleneck(6, 3, "clamped")
    P = torch.randn(2, 6, 5)
    s = bn(P, 11)
    assert s.shape == (2, 11, 5)
    assert torch.allclose(s[:, 0], P[:, 0], atol=1e-6) and torch.allclose(s[:, -1], P[:, -1], atol=1e-6)
    with pytest.raises(ValueError):
        S.SplineBottleneck(3, 3)
    with pytest.raises(ValueError):
        S.bspline_basis(torch.zeros(1), torch.tensor([0.0, 1.0, 0.5, 1.0]), 1)


# --- a B-spline approximates its control points (the chapter's picture, every control value) -------


def _knots_by_hand(n_ctrl: int, degree: int, kind: str) -> np.ndarray:
    """The two knot vectors written out (independent of encoders/spline.py)."""
    if kind == "clamped":
        inner = n_ctrl - degree - 1
        return np.array([0.0] * (degree + 1) + [k / (inner + 1) for k in range(1, inner + 1)] + [1.0] * (degree + 1))
    return np.array([(k - degree) / (n_ctrl - degree) for k in range(n_ctrl + degree + 1)])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5])
def test_the_curve_passes_through_end_points_only_when_clamped_and_no_interior_point(kind, degree):
    """For the chapter's polygon at every K the page offers, measured with scipy's B-spline sampled
    200 001 times: from degree 2 on, a clamped curve passes through P0 and P(K−1) and a uniform one
    through neither, and neither passes through an interior control point; degree 1 is the polygon
    itself and passes through all of them. The page's sentence says what was measured."""
    from explain.chapters import spline as ch

    for K in range(ch.MIN_CTRL, ch.MAX_CTRL + 1):
        P = ch.default_polygon(K)
        knots = _knots_by_hand(K, degree, kind)
        t = np.linspace(knots[degree], knots[K], 200_001)
        curve = BSpline(knots, P, degree)(t)  # (n, 2)
        dense = np.array([np.linalg.norm(curve - P[i], axis=1).min() for i in range(K)])
        c = ch.control_point_contact(K, degree, kind)
        assert np.all(np.array(c.distances) <= dense + 1e-9)  # a refined minimum, never above the samples
        np.testing.assert_allclose(c.distances, dense, atol=1e-4)
        if degree == 1:
            expected: tuple[int, ...] = tuple(range(K))
        else:
            expected = (0, K - 1) if kind == "clamped" else ()
        assert c.through == expected, (K, c.distances)
        if degree >= 2:
            assert c.nearest_miss > 0.05 and dense[1:-1].min() > 0.05  # clearly off the curve, not a rounding
        if kind == "clamped":  # the clamped ends, exactly
            assert np.allclose(curve[[0, -1]], P[[0, -1]], atol=1e-12)
        elif degree >= 2:
            assert not np.allclose(curve[0], P[0], atol=1e-3) and not np.allclose(curve[-1], P[-1], atol=1e-3)
        for lang in ("en", "ko"):
            line = ch.contact_line(K, degree, kind, lang)
            assert f"P{K - 1}" in line or degree == 1
            if degree >= 2:
                assert f"{c.nearest_miss:.3f}" in line
            else:
                assert str(K) in line
