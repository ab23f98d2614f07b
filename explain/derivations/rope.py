"""RoPE (Su et al., RoFormer, §3.2; METHODS.md §7): after rotating q by mθ and k by nθ, their dot
product depends only on n − m — in the complex form, the 2-D matrix form, for every block of the
d-dimensional rotation, and for one block with a symbolic frequency."""

from __future__ import annotations

from functools import lru_cache
from typing import cast

import sympy as sp
from sympy.matrices.expressions import BlockDiagMatrix, MatAdd, MatMul, MatrixExpr
from sympy.printing.latex import LatexPrinter

from explain import i18n
from explain.derivations.atoms import Atom, Named, RopeMatrix, Rot
from explain.derivations.common import (
    POSITION_DEFAULTS,
    T,
    m,
    mat,
    minus,
    n,
    p,
    position_params,
    real,
    texts,
    theta,
    times,
    vec,
    word,
)
from explain.derivations.types import Derivation, Parameter, start, step, substitute

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


# ---------------------------------------------------------------------------------------------
# Designing the rotation: from RoFormer's goal to RoPE, and why the matrix is block-diagonal
# ---------------------------------------------------------------------------------------------
#
# RoFormer (§3.1, Eq. 11) asks for position maps f_q, f_k with ⟨f_q(x_m, m), f_k(x_n, n)⟩ =
# g(x_m, x_n, m − n). The identities below carry the computations of that design: the 2-D design
# (`rope_from_the_goal`), and for d dimensions why every answer is a block-diagonal rotation up to a
# change of basis (`rope_skew_generator`, `rope_skew_exponential_2d`, `rope_block_exponential`,
# `rope_absorb_basis`). The steps of the argument that are theorems, not computations (a continuous
# one-parameter group is an exponential; a real skew-symmetric matrix is block-diagonal in some
# orthonormal basis), are stated as such in their notes and in the RoPE chapter's prose.


class MatExp(Atom):
    """The matrix exponential e^{M} of a square matrix expression: prints as e^{…}; proves with
    sympy's own matrix exponential (Matrix.exp, a Jordan-form computation) of the explicit entries."""

    def __new__(cls, arg: MatrixExpr) -> MatExp:
        return cast(MatExp, MatrixExpr.__new__(cls, arg))

    @property
    def shape(self) -> tuple[sp.Integer, sp.Integer]:
        return cast(tuple[sp.Integer, sp.Integer], self.args[0].shape)

    def as_explicit(self) -> sp.ImmutableMatrix:
        return _matrix_exp(sp.ImmutableMatrix(self.args[0].as_explicit()))

    def _latex(self, printer: LatexPrinter) -> str:
        return rf"e^{{{printer._print(self.args[0])}}}"


@lru_cache(maxsize=32)  # a 4×4 exponential takes sympy ~2 s; proofs and numbers reuse it
def _matrix_exp(matrix: sp.ImmutableMatrix) -> sp.ImmutableMatrix:
    return sp.ImmutableMatrix(sp.Matrix(matrix).exp())


class DirectSum(Atom):
    """B_1 ⊕ B_2 ⊕ …: the block-diagonal matrix with these square blocks (prints with ⊕)."""

    def __new__(cls, *blocks: MatrixExpr) -> DirectSum:
        return cast(DirectSum, MatrixExpr.__new__(cls, *blocks))

    @property
    def shape(self) -> tuple[sp.Integer, sp.Integer]:
        size = sum(b.shape[0] for b in self.args)
        return (sp.Integer(size), sp.Integer(size))

    def as_explicit(self) -> sp.ImmutableMatrix:
        return sp.ImmutableMatrix(sp.diag(*[b.as_explicit() for b in self.args]))

    def _latex(self, printer: LatexPrinter) -> str:
        return r"\left(" + r" \oplus ".join(printer._print(b) for b in self.args) + r"\right)"


class DerivativeAt(Atom):
    """d/dv of a matrix expression, taken at v = point: prints as (d/dv …)|_{v = point}; proves by
    differentiating the explicit entries."""

    def __new__(cls, arg: MatrixExpr, variable: sp.Symbol, point: object) -> DerivativeAt:
        return cast(DerivativeAt, MatrixExpr.__new__(cls, arg, variable, sp.sympify(point)))

    @property
    def shape(self) -> tuple[sp.Integer, sp.Integer]:
        return cast(tuple[sp.Integer, sp.Integer], self.args[0].shape)

    def as_explicit(self) -> sp.ImmutableMatrix:
        arg, variable, point = self.args
        return sp.ImmutableMatrix(sp.Matrix(arg.as_explicit()).diff(variable).subs(variable, point))

    def _latex(self, printer: LatexPrinter) -> str:
        arg, variable, point = (printer._print(a) for a in self.args)
        return rf"\left.\frac{{d}}{{d{variable}}}\left({arg}\right)\right|_{{{variable}={point}}}"


# J = [[0, −1], [1, 0]]: the generator of 2-D rotations, R(a) = e^{aJ}.
J = Named("J", [[0, -1], [1, 0]])


def rope_from_the_goal(lang: str = i18n.DEFAULT) -> Derivation:
    """RoPE designed from its goal, in 2-D (RoFormer §3.1 Eq. 11 and §3.4.1, in the matrix form).

    A position map that keeps lengths is a rotation by some angle φ(position); the score then sees
    only φ(n) − φ(m), and the goal (a function of n − m only) forces φ(p) = pθ. The forcing step is a
    modelling choice here (a substitution), argued in the notes: Cauchy's equation on integers."""
    phi = sp.Function("phi", real=True)
    q = Named(r"\mathbf{q}", [q1, q2])
    k = Named(r"\mathbf{k}", [k1, k2])
    gap = minus(phi(n), phi(m))
    rel = times(minus(n, m), theta)
    steps = (
        start(MatMul(T(MatMul(Rot(phi(m)), q)), MatMul(Rot(phi(n)), k)), word(lang, "rope-from-the-goal.step0")),
        step(MatMul(T(q), T(Rot(phi(m))), Rot(phi(n)), k), word(lang, "rope-from-the-goal.step1")),
        step(MatMul(T(q), Rot(-phi(m)), Rot(phi(n)), k), word(lang, "rope-from-the-goal.step2")),
        step(MatMul(T(q), Rot(gap), k), word(lang, "rope-from-the-goal.step3"), changed=Rot(gap)),
        substitute(MatMul(T(q), Rot(rel), k), word(lang, "rope-from-the-goal.step4"), [(gap, rel)], changed=Rot(rel)),
        step(MatMul(T(MatMul(Rot(m * theta), q)), MatMul(Rot(n * theta), k)), word(lang, "rope-from-the-goal.step5")),
    )
    return Derivation(
        id="rope-from-the-goal",
        steps=steps,
        claim_expr=steps[-1].expr,
        parameters=tuple(position_params(lang, "m", "n", "theta") + _qk_params(lang)),
        # Deviation: numbers need a concrete angle law for the lines before the goal is imposed; any
        # φ shows that those lines agree. This one is not linear, so it is not RoPE's.
        stand_ins=((phi, sp.Lambda(p, sp.Rational(3, 10) * p + sp.Rational(1, 50) * p**2)),),
        **texts(lang, "rope-from-the-goal", notes=2),
    )


def rope_skew_generator(lang: str = i18n.DEFAULT) -> Derivation:
    """A family of 2×2 matrices R(m) with R(0) = I: the derivative of R(m)ᵀR(m) at 0 is Aᵀ + A,
    A = R′(0). When every R(m) is orthogonal (RoFormer's goal at n = m), R(m)ᵀR(m) = I is constant,
    so Aᵀ + A = 0: the generator is skew-symmetric. Any differentiable family; 2×2 for display, the
    computation (the product rule) is the same for every size."""
    t = real("m")
    funcs = [[sp.Function(f"r_{r}{c}", real=True) for c in (1, 2)] for r in (1, 2)]
    r_of_m = Named("R(m)", [[f(t) for f in row] for row in funcs])
    r_at_0 = Named("R(0)", [[f(0) for f in row] for row in funcs])
    slope = [[sp.Derivative(f(t), t).subs(t, 0) for f in row] for row in funcs]
    r_prime = Named(r"R'(0)", slope)
    gen = Named("A", slope)
    steps = (
        start(DerivativeAt(MatMul(T(r_of_m), r_of_m), t, 0), word(lang, "rope-skew-generator.step0")),
        step(MatAdd(MatMul(T(r_prime), r_at_0), MatMul(T(r_at_0), r_prime)), word(lang, "rope-skew-generator.step1")),
        step(MatAdd(T(r_prime), r_prime), word(lang, "rope-skew-generator.step2")),
        step(MatAdd(T(gen), gen), word(lang, "rope-skew-generator.step3")),
    )
    identity = {(0, 0): 1, (0, 1): 0, (1, 0): 0, (1, 1): 1}
    # Numbers: one concrete family with R(0) = I stands in for the arbitrary one (not orthogonal:
    # the identity holds for any family).
    family = {
        (0, 0): sp.cos(sp.Rational(7, 10) * p) + p**2 / 5,
        (0, 1): -sp.sin(sp.Rational(7, 10) * p) + p / 3,
        (1, 0): sp.sin(sp.Rational(7, 10) * p) + p**2,
        (1, 1): sp.cos(sp.Rational(7, 10) * p) - p / 2,
    }
    return Derivation(
        id="rope-skew-generator",
        steps=steps,
        claim_expr=sp.Eq(steps[0].expr, steps[-1].expr, evaluate=False),
        where=tuple((funcs[r][c](0), sp.Integer(v)) for (r, c), v in identity.items()),
        stand_ins=tuple((funcs[r][c], sp.Lambda(p, e)) for (r, c), e in family.items()),
        **texts(lang, "rope-skew-generator", notes=2),
    )


def rope_skew_exponential_2d(lang: str = i18n.DEFAULT) -> Derivation:
    """Any skew-symmetric 2×2 generator, exponentiated, is RoPE's rotation: for a general
    A = [[a11, a12], [a21, a22]], e^{m(A − Aᵀ)/2} = R(mθ) with θ = (a21 − a12)/2."""
    a, params = mat("A", "A", lang)
    a12, a21 = a.as_explicit()[0, 1], a.as_explicit()[1, 0]
    half = sp.Rational(1, 2)
    freq = sp.Mul(half, minus(a21, a12), evaluate=False)
    angle = times(m, freq)
    eye = Named("I", [[1, 0], [0, 1]])
    steps = (
        start(MatExp(MatMul(half * m, MatAdd(a, -T(a)))), word(lang, "rope-skew-exponential-2d.step0")),
        step(MatExp(MatMul(angle, J)), word(lang, "rope-skew-exponential-2d.step1")),
        step(
            MatAdd(MatMul(sp.cos(angle), eye), MatMul(sp.sin(angle), J)), word(lang, "rope-skew-exponential-2d.step2")
        ),
        step(Rot(angle), word(lang, "rope-skew-exponential-2d.step3")),
    )
    return Derivation(
        id="rope-skew-exponential-2d",
        steps=steps,
        claim_expr=sp.Eq(steps[0].expr, steps[-1].expr, evaluate=False),
        # The diagonal entries a11, a22 cancel in A − Aᵀ: only a12 and a21 are numbers to give.
        parameters=tuple([*position_params(lang, "m"), *(q for q in params if q.name in ("A12", "A21"))]),
        **texts(lang, "rope-skew-exponential-2d"),
    )


# The 4×4 case: positions are 0-based (m ≥ 0) and frequencies positive, which lets sympy's matrix
# exponential write √(θ²) as θ. Q = I − ½·𝟙𝟙ᵀ: an orthonormal basis (a Householder reflection, Qᵀ = Q,
# QᵀQ = I) that mixes all four channels, standing in for the basis the spectral theorem provides.
m_pos = sp.Symbol("m", nonnegative=True)
n_pos = sp.Symbol("n", nonnegative=True)
FREQS_4 = (sp.Symbol("theta_1", positive=True), sp.Symbol("theta_2", positive=True))
BASIS_4 = Named("Q", sp.eye(4) - sp.ones(4, 4) / 2)


def _freq_params(lang: str) -> list[Parameter]:
    # RoFormer's θ_f = 10000^(−2(f−1)/d) for d = 4, 1-based as in the paper.
    return [
        Parameter(str(t), word(lang, "param.theta_f", f=f), 10000 ** (-2 * (f - 1) / 4))
        for f, t in enumerate(FREQS_4, 1)
    ]


def _position_params(lang: str, *names: str) -> list[Parameter]:
    return [Parameter(nm, word(lang, f"param.{nm}"), POSITION_DEFAULTS[nm]) for nm in names]


def rope_block_exponential(lang: str = i18n.DEFAULT) -> Derivation:
    """e^{mA} for a 4×4 skew-symmetric A = Q(θ_1J ⊕ θ_2J)Qᵀ is Q R^4_{Θ,m} Qᵀ: RoPE's block-diagonal
    rotation seen in another orthonormal basis (RoFormer §3.2.2 gives R^d_{Θ,m}; this is why)."""
    t1, t2 = FREQS_4
    q = BASIS_4
    gen = DirectSum(MatMul(t1, J), MatMul(t2, J))
    steps = (
        start(MatExp(MatMul(m_pos, q, gen, T(q))), word(lang, "rope-block-exponential.step0")),
        step(MatMul(q, MatExp(MatMul(m_pos, gen)), T(q)), word(lang, "rope-block-exponential.step1")),
        step(
            MatMul(q, DirectSum(MatExp(MatMul(m_pos * t1, J)), MatExp(MatMul(m_pos * t2, J))), T(q)),
            word(lang, "rope-block-exponential.step2"),
        ),
        step(MatMul(q, DirectSum(Rot(m_pos * t1), Rot(m_pos * t2)), T(q)), word(lang, "rope-block-exponential.step3")),
        step(MatMul(q, RopeMatrix(m_pos, list(FREQS_4)), T(q)), word(lang, "rope-block-exponential.step4")),
    )
    return Derivation(
        id="rope-block-exponential",
        steps=steps,
        claim_expr=sp.Eq(steps[0].expr, steps[-1].expr, evaluate=False),
        parameters=tuple(_position_params(lang, "m") + _freq_params(lang)),
        **texts(lang, "rope-block-exponential", notes=2),
    )


def rope_absorb_basis(lang: str = i18n.DEFAULT) -> Derivation:
    """(QR_mQᵀq)ᵀ(QR_nQᵀk) = (R_m Qᵀq)ᵀ(R_n Qᵀk) = (Qᵀq)ᵀR_{n−m}(Qᵀk) for an orthogonal Q, 4×4:
    the basis change folds into W_q and W_k (q = W_q x_m, so Qᵀq = (QᵀW_q)x_m)."""
    q_vec, pq = vec("q", r"\mathbf{q}", lang, dim=4)
    k_vec, pk = vec("k", r"\mathbf{k}", lang, dim=4)
    basis = BASIS_4
    r_m, r_n = RopeMatrix(m_pos, list(FREQS_4)), RopeMatrix(n_pos, list(FREQS_4))
    rel = RopeMatrix(minus(n_pos, m_pos), list(FREQS_4))
    steps = (
        start(
            MatMul(T(MatMul(basis, r_m, T(basis), q_vec)), MatMul(basis, r_n, T(basis), k_vec)),
            word(lang, "rope-absorb-basis.step0"),
        ),
        step(
            MatMul(T(q_vec), basis, T(r_m), T(basis), basis, r_n, T(basis), k_vec),
            word(lang, "rope-absorb-basis.step1"),
        ),
        step(MatMul(T(q_vec), basis, T(r_m), r_n, T(basis), k_vec), word(lang, "rope-absorb-basis.step2")),
        step(
            MatMul(T(MatMul(r_m, T(basis), q_vec)), MatMul(r_n, T(basis), k_vec)), word(lang, "rope-absorb-basis.step3")
        ),
        step(
            MatMul(T(MatMul(T(basis), q_vec)), rel, MatMul(T(basis), k_vec)),
            word(lang, "rope-absorb-basis.step4"),
            changed=rel,
        ),
    )
    return Derivation(
        id="rope-absorb-basis",
        steps=steps,
        claim_expr=sp.Eq(steps[0].expr, steps[-1].expr, evaluate=False),
        parameters=tuple(_position_params(lang, "m", "n") + _freq_params(lang) + pq + pk),
        **texts(lang, "rope-absorb-basis"),
    )
