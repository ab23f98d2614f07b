"""Spline-based Transformers (Chandran, Serifi, Gross, Bächer et al., ECCV 2024): the B-spline math.

Axis legend: t curve parameter values (n of them), K control points, D latent/point dimension,
p spline degree, m = K + p + 1 knots, b batch.

    control points P (b, K, D) ─ B-spline basis N (n, K) ─→ curve samples s(t) = N(t) · P  (b, n, D)

The paper has no positional encoding: a Transformer encoder turns the input tokens plus K learned
control tokens into K control points; the decoder reads samples of the B-spline they shape (it
approximates them, passing through the first and last only, with clamped knots).
Where a sample sits on the curve is what tells the decoder "where in the sequence" it is. This file
holds only the spline part (pure torch); the autoencoder that uses it lives in lab/spline_model.py.

What the paper does not say (METHODS §12, "Unknown") and this file chooses:
- Our choice: clamped knot vectors by default, so the curve starts at the first and ends at the last
  control point; uniform (unclamped) knots are available for comparison.
- Our choice: curve parameter t in [0, 1] for both knot kinds; sample j of n sits at t = j / (n − 1).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .base import Paper

PAPER = Paper(
    "Chandran, Serifi, Gross, Bächer et al.",
    2024,
    "Spline-based Transformers (ECCV 2024)",
    "https://arxiv.org/abs/2504.02797",
)


def clamped_knots(n_ctrl: int, degree: int) -> Tensor:
    """Clamped (open) uniform knot vector on [0, 1]: degree + 1 zeros, evenly spaced interior knots,
    degree + 1 ones. The curve then starts at the first control point and ends at the last."""
    _check(n_ctrl, degree)
    n_interior = n_ctrl - degree - 1
    interior = torch.arange(1, n_interior + 1, dtype=torch.float64) / (n_interior + 1)
    return torch.cat(
        [torch.zeros(degree + 1, dtype=torch.float64), interior, torch.ones(degree + 1, dtype=torch.float64)]
    )  # (K + p + 1,)


def uniform_knots(n_ctrl: int, degree: int) -> Tensor:
    """Uniform (unclamped) knot vector, evenly spaced, scaled so that the valid domain
    [knots[p], knots[K]] — where the basis sums to 1 — is [0, 1]. The curve then does not pass
    through its end control points."""
    _check(n_ctrl, degree)
    return (torch.arange(n_ctrl + degree + 1, dtype=torch.float64) - degree) / (n_ctrl - degree)  # (K + p + 1,)


def _check(n_ctrl: int, degree: int) -> None:
    if degree < 0:
        raise ValueError(f"degree must be ≥ 0, got {degree}")
    if n_ctrl < degree + 1:
        raise ValueError(f"a degree-{degree} B-spline needs at least {degree + 1} control points, got {n_ctrl}")


def domain(knots: Tensor, degree: int) -> tuple[float, float]:
    """The valid parameter interval [knots[p], knots[K]]: there the K basis functions sum to 1."""
    n_ctrl = knots.numel() - degree - 1
    return float(knots[degree]), float(knots[n_ctrl])


def bspline_basis(t: Tensor, knots: Tensor, degree: int) -> Tensor:
    """All B-spline basis functions N_{i,p}(t) by the Cox–de Boor recursion → (len(t), n_basis).

    Degree 0: N_{i,0}(t) = 1 if knots[i] ≤ t < knots[i+1], else 0 (a step over one knot span).
    Degree p: N_{i,p}(t) = (t − t_i)/(t_{i+p} − t_i) · N_{i,p−1}(t)
                         + (t_{i+p+1} − t)/(t_{i+p+1} − t_{i+1}) · N_{i+1,p−1}(t),
    with 0/0 read as 0 (a repeated knot makes a span of length zero). There are
    n_basis = len(knots) − degree − 1 functions; N_{i,p} is non-zero only on [t_i, t_{i+p+1}), that is
    on p + 1 knot spans.

    The right end of the valid domain, t = knots[n_basis], belongs to the last span (otherwise the
    half-open steps would make every function 0 there and a clamped curve would miss its last point).
    """
    t = torch.as_tensor(t, dtype=torch.float64).reshape(-1)  # (n,)
    knots = torch.as_tensor(knots, dtype=torch.float64).reshape(-1)  # (m,)
    n_basis = knots.numel() - degree - 1
    _check(n_basis, degree)
    if torch.any(knots[1:] < knots[:-1]):
        raise ValueError("knots must be non-decreasing")
    lo, hi = knots[:-1], knots[1:]  # (m − 1,) one entry per knot span
    N = ((t[:, None] >= lo[None]) & (t[:, None] < hi[None])).to(torch.float64)  # (n, m − 1) degree 0
    # The closed right end of the domain: t == knots[n_basis] counts in the last non-empty span
    # that ends there.
    end = knots[n_basis]
    last = max(i for i in range(hi.numel()) if hi[i] == end and lo[i] < hi[i])
    at_end = t == end  # (n,)
    N[at_end] = 0.0
    N[at_end, last] = 1.0
    for p in range(1, degree + 1):
        count = knots.numel() - p - 1  # functions of degree p
        # t_i, t_{i+p}, t_{i+1}, t_{i+p+1} for every i = 0 … count − 1 at once
        ti, tip, ti1, tip1 = knots[:count], knots[p : p + count], knots[1 : count + 1], knots[p + 1 : p + 1 + count]
        left = _safe_div(t[:, None] - ti[None], (tip - ti)[None])  # (n, count)
        right = _safe_div(tip1[None] - t[:, None], (tip1 - ti1)[None])  # (n, count)
        N = left * N[:, :count] + right * N[:, 1 : count + 1]  # (n, count)
    return N  # (n, n_basis)


def _safe_div(num: Tensor, den: Tensor) -> Tensor:
    """num / den with x/0 := 0 — the Cox–de Boor convention for repeated knots."""
    den = den.expand_as(num)
    return torch.where(den != 0, num / torch.where(den != 0, den, torch.ones_like(den)), torch.zeros_like(num))


def bspline_basis_derivative(t: Tensor, knots: Tensor, degree: int, order: int = 1) -> Tensor:
    """The order-r derivative of every basis function → (len(t), n_basis), by the standard rule
    N'_{i,p} = p/(t_{i+p} − t_i) · N_{i,p−1} − p/(t_{i+p+1} − t_{i+1}) · N_{i+1,p−1} (0/0 read as 0)."""
    if order == 0:
        return bspline_basis(t, knots, degree)
    if order > degree:
        n = torch.as_tensor(t).reshape(-1).numel()
        return torch.zeros(n, knots.numel() - degree - 1, dtype=torch.float64)
    knots = torch.as_tensor(knots, dtype=torch.float64).reshape(-1)
    lower = bspline_basis_derivative(t, knots, degree - 1, order - 1)  # (n, n_basis + 1)
    count = knots.numel() - degree - 1
    a = _safe_div(
        torch.full((count,), float(degree), dtype=torch.float64), knots[degree : degree + count] - knots[:count]
    )
    c = _safe_div(
        torch.full((count,), float(degree), dtype=torch.float64),
        knots[degree + 1 : degree + 1 + count] - knots[1 : count + 1],
    )
    return a[None] * lower[:, :count] - c[None] * lower[:, 1 : count + 1]  # (n, n_basis)


def bspline_curve(control_points: Tensor, t: Tensor, knots: Tensor, degree: int) -> Tensor:
    """s(t) = Σ_i N_{i,p}(t) · P_i: the curve at parameters t. control_points (..., K, D) → (..., n, D).

    The spline the paper samples (METHODS §12, known item 3: the B-spline form comes from a secondary
    note, not confirmed against the paper text)."""
    N = bspline_basis(t, knots, degree).to(control_points.dtype)  # (n, K)
    if N.shape[1] != control_points.shape[-2]:
        raise ValueError(f"{N.shape[1]} basis functions but {control_points.shape[-2]} control points")
    return N @ control_points  # (..., n, D)


def bernstein_basis(t: Tensor, degree: int) -> Tensor:
    """Bernstein polynomials B_{i,p}(t) = C(p, i) · t^i · (1 − t)^(p − i) on [0, 1] → (len(t), p + 1).
    A Bézier curve uses them: every one is non-zero on all of (0, 1), so every control point moves
    every point of the curve (no local control)."""
    t = torch.as_tensor(t, dtype=torch.float64).reshape(-1, 1)  # (n, 1)
    i = torch.arange(degree + 1, dtype=torch.float64)[None]  # (1, p + 1)
    binom = torch.tensor([math.comb(degree, k) for k in range(degree + 1)], dtype=torch.float64)[None]
    return binom * t**i * (1 - t) ** (degree - i)  # (n, p + 1)


def bezier_curve(control_points: Tensor, t: Tensor) -> Tensor:
    """The Bézier curve of degree K − 1 of K control points (..., K, D) → (..., n, D); it passes through
    the first and the last of them only."""
    B = bernstein_basis(t, control_points.shape[-2] - 1).to(control_points.dtype)  # (n, K)
    return B @ control_points  # (..., n, D)


def support(knots: Tensor, degree: int, i: int) -> tuple[float, float]:
    """The parameter interval where N_{i,p} can be non-zero: [t_i, t_{i+p+1}], cut to the domain.
    Moving control point i changes the curve only there."""
    lo, hi = domain(knots, degree)
    return max(float(knots[i]), lo), min(float(knots[i + degree + 1]), hi)


def continuity_order(degree: int, multiplicity: int = 1) -> int:
    """At an interior knot repeated `multiplicity` times a degree-p B-spline is C^(p − multiplicity):
    its derivatives up to that order are continuous, the next one may jump. −1 means the curve itself
    may break there."""
    return degree - multiplicity


def sample_positions(n: int, knots: Tensor, degree: int) -> Tensor:
    """Our choice: n evenly spaced parameters over the valid domain, t_j = lo + (hi − lo) · j/(n − 1);
    sample j of the curve becomes decoder input j."""
    lo, hi = domain(knots, degree)
    if n == 1:
        return torch.tensor([lo], dtype=torch.float64)
    return lo + (hi - lo) * torch.arange(n, dtype=torch.float64) / (n - 1)  # (n,)


class SplineBottleneck(nn.Module):
    """K control points (b, K, D) → n samples of their B-spline (b, n, D).

    No parameters: the decoder learns nothing about positions; it only sees where each sample lies
    on a smooth curve. The basis is rebuilt on each call (it is tiny) so that any n works.
    """

    def __init__(self, n_ctrl: int, degree: int = 3, knots: str = "clamped"):
        super().__init__()
        if knots not in ("clamped", "uniform"):
            raise ValueError(f"knots must be 'clamped' or 'uniform', got {knots!r}")
        self.n_ctrl, self.degree = n_ctrl, degree
        self.knots = (clamped_knots if knots == "clamped" else uniform_knots)(n_ctrl, degree)  # (K + p + 1,)

    def basis(self, n: int) -> Tensor:
        return bspline_basis(sample_positions(n, self.knots, self.degree), self.knots, self.degree)  # (n, K)

    def forward(self, control_points: Tensor, n: int) -> Tensor:
        N = self.basis(n).to(control_points.dtype)  # (n, K)
        return N @ control_points  # (b, n, D)
