"""RoPE (Su et al., RoFormer, §3.2; METHODS.md §7): after rotating q by mθ and k by nθ, their dot
product depends only on n − m — in the complex form, the 2-D matrix form, for every block of the
d-dimensional rotation, and for one block with a symbolic frequency."""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions import BlockDiagMatrix, MatMul

from explain import i18n
from explain.derivations.atoms import Named, RopeMatrix, Rot
from explain.derivations.common import T, m, minus, n, position_params, real, texts, theta, times, word
from explain.derivations.types import Derivation, Parameter, start, step

# ---------------------------------------------------------------------------------------------
# 2-D, complex form
# ---------------------------------------------------------------------------------------------

q1, q2, k1, k2 = (real(s) for s in ("q1", "q2", "k1", "k2"))


def _qk_params(lang: str) -> list[Parameter]:
    defaults = {"q1": 0.8, "q2": -0.5, "k1": 0.3, "k2": 1.1}
    return [Parameter(name, word(lang, f"param.{name}"), value) for name, value in defaults.items()]


def rope_complex_2d(lang: str = i18n.DEFAULT) -> Derivation:
    """⟨q e^{imθ}, k e^{inθ}⟩ = Re[q k̄ e^{i(m−n)θ}] (RoFormer §3.2.1, 2-D case).

    q = q1 + i q2 and k = k1 + i k2 are the 2-vectors read as complex numbers; the real inner
    product of two 2-vectors a, b is Re a·Re b + Im a·Im b = Re(a b̄).
    """
    iu = sp.I  # the imaginary unit
    zq, zk = sp.Add(q1, iu * q2), sp.Add(k1, iu * k2)
    zk_bar = sp.Add(k1, -iu * k2)
    rq = sp.Mul(zq, sp.exp(iu * m * theta), evaluate=False)
    rk = sp.Mul(zk, sp.exp(iu * n * theta), evaluate=False)
    angle = times(minus(m, n), theta)

    def re(x: sp.Expr) -> sp.Expr:
        return sp.re(x, evaluate=False)

    def im(x: sp.Expr) -> sp.Expr:
        return sp.im(x, evaluate=False)

    # Built unevaluated so the page shows the paper's order, e.g. e^{i(m−n)θ}, not e^{iθ(m−n)}.
    phase = sp.exp(sp.Mul(iu, angle, evaluate=False), evaluate=False)
    euler = sp.Add(sp.cos(angle), sp.Mul(iu, sp.sin(angle), evaluate=False), evaluate=False)
    inner = sp.Add(sp.Mul(re(rq), re(rk), evaluate=False), sp.Mul(im(rq), im(rk), evaluate=False), evaluate=False)
    steps = (
        start(inner, word(lang, "rope-complex-2d.step0")),
        step(re(sp.Mul(rq, sp.conjugate(rk, evaluate=False), evaluate=False)), word(lang, "rope-complex-2d.step1")),
        step(re(sp.Mul(zq, zk_bar, phase, evaluate=False)), word(lang, "rope-complex-2d.step2"), changed=phase),
        step(re(sp.Mul(zq, zk_bar, euler, evaluate=False)), word(lang, "rope-complex-2d.step3"), changed=euler),
        step(
            (q1 * k1 + q2 * k2) * sp.cos(angle) + (q1 * k2 - q2 * k1) * sp.sin(angle),
            word(lang, "rope-complex-2d.step4"),
        ),
    )
    return Derivation(
        id="rope-complex-2d",
        steps=steps,
        claim_expr=re(sp.Mul(zq, zk_bar, phase, evaluate=False)),
        parameters=tuple(position_params(lang, "m", "n", "theta") + _qk_params(lang)),
        **texts(lang, "rope-complex-2d", notes=1),
    )


# ---------------------------------------------------------------------------------------------
# 2-D, matrix form
# ---------------------------------------------------------------------------------------------


def rope_matrix_2d(lang: str = i18n.DEFAULT) -> Derivation:
    """(R(mθ)q)ᵀ(R(nθ)k) = qᵀ R((n−m)θ) k (RoFormer §3.2.1; METHODS.md §7)."""
    q = Named(r"\mathbf{q}", [q1, q2])
    k = Named(r"\mathbf{k}", [k1, k2])
    angle = times(minus(n, m), theta)
    r_neg = Rot(-m * theta)
    r_rel = Rot(angle)
    steps = (
        start(MatMul(T(MatMul(Rot(m * theta), q)), MatMul(Rot(n * theta), k)), word(lang, "rope-matrix-2d.step0")),
        step(MatMul(T(q), T(Rot(m * theta)), Rot(n * theta), k), word(lang, "rope-matrix-2d.step1")),
        step(MatMul(T(q), r_neg, Rot(n * theta), k), word(lang, "rope-matrix-2d.step2"), changed=r_neg),
        step(MatMul(T(q), r_rel, k), word(lang, "rope-matrix-2d.step3"), changed=r_rel),
        step(
            (q1 * k1 + q2 * k2) * sp.cos(angle) + (q2 * k1 - q1 * k2) * sp.sin(angle),
            word(lang, "rope-matrix-2d.step4"),
        ),
    )
    return Derivation(
        id="rope-matrix-2d",
        steps=steps,
        claim_expr=sp.Eq(steps[0].expr, MatMul(T(q), r_rel, k), evaluate=False),
        parameters=tuple(position_params(lang, "m", "n", "theta") + _qk_params(lang)),
        **texts(lang, "rope-matrix-2d"),
    )


# ---------------------------------------------------------------------------------------------
# d dimensions
# ---------------------------------------------------------------------------------------------


def rope_block_diagonal(d: int = 4, lang: str = i18n.DEFAULT) -> Derivation:
    """R_{Θ,m}ᵀ R_{Θ,n} = R_{Θ,n−m} for a concrete d with independent θ_1 … θ_{d/2}
    (RoFormer §3.2.2; METHODS.md §7: "the blocks are commuting rotations")."""
    if d % 2 or d < 2:
        raise ValueError("RoPE needs an even head dimension")
    thetas = [real(f"theta_{f}") for f in range(1, d // 2 + 1)]  # 1-based, as in the paper
    rel = minus(n, m)
    diag_t = BlockDiagMatrix(*[T(Rot(m * t)) for t in thetas])
    diag_n = BlockDiagMatrix(*[Rot(n * t) for t in thetas])
    steps = (
        start(MatMul(T(RopeMatrix(m, thetas)), RopeMatrix(n, thetas)), word(lang, "rope-relative-d.step0", d=d)),
        step(MatMul(diag_t, diag_n), word(lang, "rope-relative-d.step1")),
        step(
            BlockDiagMatrix(*[MatMul(T(Rot(m * t)), Rot(n * t)) for t in thetas]), word(lang, "rope-relative-d.step2")
        ),
        step(BlockDiagMatrix(*[MatMul(Rot(-m * t), Rot(n * t)) for t in thetas]), word(lang, "rope-relative-d.step3")),
        step(BlockDiagMatrix(*[Rot(times(rel, t)) for t in thetas]), word(lang, "rope-relative-d.step4")),
        step(RopeMatrix(rel, thetas), word(lang, "rope-relative-d.step5")),
    )
    words = texts(lang, "rope-relative-d")
    return Derivation(
        id=f"rope-relative-d{d}",
        steps=steps,
        claim_expr=sp.Eq(steps[0].expr, RopeMatrix(rel, thetas), evaluate=False),
        parameters=tuple(
            position_params(lang, "m", "n")
            + [
                Parameter(str(t), word(lang, "param.theta_f", f=f), 10000 ** (-2 * (f - 1) / d))
                for f, t in enumerate(thetas, 1)
            ]
        ),
        **(
            words
            | {"title": word(lang, "rope-relative-d.title", d=d), "claim": word(lang, "rope-relative-d.claim", d=d)}
        ),
    )


def rope_relative_block(lang: str = i18n.DEFAULT) -> Derivation:
    """The general-d argument: one block f of R_{Θ,m}ᵀR_{Θ,n}, for a symbolic frequency θ_f
    (RoFormer §3.2.2). Every block reduces exactly as the 2-D matrix form does."""
    theta_f = real("theta_f")
    rel = times(minus(n, m), theta_f)
    steps = (
        start(MatMul(T(Rot(m * theta_f)), Rot(n * theta_f)), word(lang, "rope-relative-block.step0")),
        step(MatMul(Rot(-m * theta_f), Rot(n * theta_f)), word(lang, "rope-relative-block.step1")),
        step(Rot(rel), word(lang, "rope-relative-block.step2")),
    )
    return Derivation(
        id="rope-relative-block",
        steps=steps,
        claim_expr=Rot(rel),
        parameters=tuple(
            [*position_params(lang, "m", "n"), Parameter("theta_f", word(lang, "param.theta_f", f="f"), 0.1)]
        ),
        **texts(lang, "rope-relative-block"),
    )
