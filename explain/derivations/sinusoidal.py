"""Sinusoidal positions (Vaswani et al. 2017, §3.5; METHODS.md §1): the dot product of two position
vectors depends only on m − n, and a shift by Δ is one fixed linear map T(Δ), whatever p is."""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions import BlockDiagMatrix, MatMul

from explain import i18n
from explain.derivations.atoms import Named
from explain.derivations.common import (
    T,
    delta,
    f_,
    m,
    minus,
    n,
    omega,
    omega_params,
    p,
    position_params,
    texts,
    times,
    word,
)
from explain.derivations.types import Derivation, start, step

# ---------------------------------------------------------------------------------------------
# PE(m)·PE(n) = Σ_f cos(ω_f (m − n))
# ---------------------------------------------------------------------------------------------


def _sinusoid(position: sp.Expr, pairs: int) -> sp.ImmutableMatrix:
    """Interleaved layout (paper §3.5): channel 2f = sin(p ω_f), channel 2f+1 = cos(p ω_f)."""
    entries = []
    for f in range(pairs):
        entries += [sp.sin(position * omega[f]), sp.cos(position * omega[f])]
    return sp.ImmutableMatrix(entries)


def _pe(position: sp.Expr, pairs: int) -> Named:
    return Named(r"\mathrm{{PE}}({})".format(sp.latex(position, order="none")), _sinusoid(position, pairs))


def sinusoidal_dot_product(pairs: int = 3, lang: str = i18n.DEFAULT) -> Derivation:
    """PE(m)·PE(n) = Σ_f cos(ω_f (m − n)) (Vaswani et al. 2017 §3.5; METHODS.md §1).

    Shown for d = 2·pairs channels; the pair step is proven for a symbolic pair index f, which
    is the general case: every d is a sum of such pairs.
    """
    last = pairs - 1
    pe_m, pe_n = _pe(m, pairs), _pe(n, pairs)
    products = sp.sin(m * omega[f_]) * sp.sin(n * omega[f_]) + sp.cos(m * omega[f_]) * sp.cos(n * omega[f_])
    relative = sp.cos(times(minus(m, n), omega[f_]))
    steps = (
        start(MatMul(T(pe_m), pe_n), word(lang, "sinusoidal-dot-product.step0", d=2 * pairs)),
        step(sp.Sum(products, (f_, 0, last)), word(lang, "sinusoidal-dot-product.step1")),
        step(sp.Sum(relative, (f_, 0, last)), word(lang, "sinusoidal-dot-product.step2"), changed=relative),
    )
    return Derivation(
        id="sinusoidal-dot-product",
        steps=steps,
        claim_expr=sp.Eq(MatMul(T(pe_m), pe_n), sp.Sum(relative, (f_, 0, last)), evaluate=False),
        parameters=tuple(position_params(lang, "m", "n") + omega_params(pairs, lang)),
        **texts(lang, "sinusoidal-dot-product", notes=1),
    )


# ---------------------------------------------------------------------------------------------
# PE(p + Δ) = T(Δ) PE(p)
# ---------------------------------------------------------------------------------------------


def _shift_block(angle: sp.Expr) -> sp.ImmutableMatrix:
    # METHODS.md §1: acting on (sin, cos) the block is [[cos, sin], [−sin, cos]] = R(−angle).
    return sp.ImmutableMatrix([[sp.cos(angle), sp.sin(angle)], [-sp.sin(angle), sp.cos(angle)]])


def sinusoidal_shift(pairs: int = 3, lang: str = i18n.DEFAULT) -> Derivation:
    """PE(p+Δ) = T(Δ)·PE(p) with T(Δ) block-diagonal and independent of p (paper §3.5;
    METHODS.md §1; the tensor2tensor get_timing_signal_1d docstring states the same)."""
    shifted = sp.Add(p, delta, evaluate=False)
    expanded = []
    for f in range(pairs):
        a, b = p * omega[f], delta * omega[f]
        expanded += [
            sp.sin(a) * sp.cos(b) + sp.cos(a) * sp.sin(b),
            sp.cos(a) * sp.cos(b) - sp.sin(a) * sp.sin(b),
        ]
    blocks = BlockDiagMatrix(*[_shift_block(delta * omega[f]) for f in range(pairs)])
    t_delta = Named(r"T(\Delta)", sp.diag(*[_shift_block(delta * omega[f]) for f in range(pairs)]))
    pe_p = _pe(p, pairs)
    steps = (
        start(_pe(shifted, pairs), word(lang, "sinusoidal-shift.step0", d=2 * pairs)),
        step(sp.ImmutableMatrix(_sinusoid(shifted, pairs)), word(lang, "sinusoidal-shift.step1")),
        step(sp.ImmutableMatrix(expanded), word(lang, "sinusoidal-shift.step2")),
        step(MatMul(blocks, pe_p), word(lang, "sinusoidal-shift.step3"), changed=blocks),
        step(MatMul(t_delta, pe_p), word(lang, "sinusoidal-shift.step4"), changed=t_delta),
    )
    return Derivation(
        id="sinusoidal-shift",
        steps=steps,
        claim_expr=sp.Eq(_pe(shifted, pairs), MatMul(t_delta, pe_p), evaluate=False),
        parameters=tuple(position_params(lang, "p", "Delta") + omega_params(pairs, lang)),
        **texts(lang, "sinusoidal-shift", notes=1),
    )
