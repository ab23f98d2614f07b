"""Derivations that prove themselves.

Every relative-position identity the app shows is built here as a list of sympy steps, and
`verify` proves each step from the one before it with a computer algebra system. The page that
displays an identity renders these same objects (`to_latex`), so a formula on screen cannot
disagree with the proof the tests run.

Conventions (../shared/METHODS.md): positions are 0-based; i is the query and j the key; in RoPE
m is the query position and n the key position. Each method keeps its paper's relative sign, so
RoPE's matrix form ends in n − m (key − query) while its complex form ends in m − n; both are the
same number because cos is even and the sin term flips sign with it.

Public API
----------
- `Step`, `Derivation`, `Parameter`: frozen data.
- `verify(derivation) -> VerifyReport`: checks every consecutive pair of steps.
- `numeric_check(derivation, values) -> (first, last)`: the learner's numbers at both ends.
- `step_values(derivation, values)`: the learner's numbers at every step.
- `to_latex(step_or_expr, highlight=False)`, `claim_latex(derivation)`.
- `ALL_DERIVATIONS`, `get(id, lang)`, `all_derivations(lang)`, `message_text(check, lang)`, and one
  builder function per identity.

Words: every title, intro, claim, rule, note and parameter label comes from the catalogue
(explain/text/<lang>/strings/derivations.toml). A builder takes `lang` and returns the same sympy
objects in any language, so `get(id, "ko")` differs from `get(id)` only in its words; proofs run on
the English registry and their reports are language-free apart from the English `message`, which
`message_text` renders in any language from the check's `reason`.

Pure sympy: no streamlit, no torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import sympy as sp
from sympy.core.symbol import Str
from sympy.matrices.expressions import (
    BlockDiagMatrix,
    MatAdd,
    MatMul,
    MatrixExpr,
    Transpose,
    ZeroMatrix,
)
from sympy.printing.latex import LatexPrinter

from explain import i18n

__all__ = [
    "ALL_DERIVATIONS",
    "Derivation",
    "Named",
    "Parameter",
    "RopeMatrix",
    "Rot",
    "Step",
    "StepCheck",
    "VerifyReport",
    "absolute_pe_attention",
    "alibi_shift_invariance",
    "all_derivations",
    "apply_substitution",
    "claim_latex",
    "cope_all_gates_open",
    "deberta_three_terms",
    "free_symbols",
    "get",
    "message_text",
    "numeric_check",
    "registered",
    "rope_block_diagonal",
    "rope_complex_2d",
    "rope_matrix_2d",
    "rope_relative_block",
    "sinusoidal_dot_product",
    "sinusoidal_shift",
    "start",
    "step",
    "step_values",
    "substitute",
    "t5_shift_invariance",
    "to_latex",
    "verify",
]


# ---------------------------------------------------------------------------------------------
# Matrix atoms: a name for the page, an explicit matrix for the proof.
#
# A step such as  qᵀ R(−mθ) R(nθ) k  should read like the paper, yet be checkable entry by entry.
# These atoms print as their symbol and expand to an explicit sympy matrix only inside
# `verify` / `numeric_check`, so display and proof are the same object.
# ---------------------------------------------------------------------------------------------


class _Atom(MatrixExpr):
    """A matrix expression whose explicit entries are known (see `as_explicit`)."""

    def _entry(self, i, j, **kwargs):
        return self.as_explicit()[i, j]


class Named(_Atom):
    """A named matrix or vector: prints as `name` (LaTeX), proves with `matrix`.

    Defining a compound name (e.g. Q^c_i := W_q x_i) is just giving `matrix` the explicit
    product, which makes "name the projections" a checkable equality instead of prose.
    """

    def __new__(cls, name, matrix):
        name = name if isinstance(name, Str) else Str(name)
        return MatrixExpr.__new__(cls, name, sp.ImmutableMatrix(matrix))

    @property
    def name(self) -> str:
        return self.args[0].name

    @property
    def shape(self):
        return self.args[1].shape

    def as_explicit(self):
        return self.args[1]

    def _latex(self, printer):
        return self.name


class Rot(_Atom):
    """The 2-D rotation R(a) = [[cos a, −sin a], [sin a, cos a]] (RoFormer §3.2.1)."""

    def __new__(cls, angle):
        return MatrixExpr.__new__(cls, sp.sympify(angle))

    @property
    def angle(self):
        return self.args[0]

    @property
    def shape(self):
        return (sp.Integer(2), sp.Integer(2))

    def as_explicit(self):
        a = self.angle
        return sp.ImmutableMatrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])

    def _latex(self, printer):
        return rf"R\left({printer._print(self.angle)}\right)"


class RopeMatrix(_Atom):
    """RoFormer's block-diagonal R^d_{Θ,pos} = diag(R(pos·θ_1), …, R(pos·θ_{d/2})) (§3.2.2)."""

    def __new__(cls, position, thetas):
        return MatrixExpr.__new__(cls, sp.sympify(position), sp.Tuple(*thetas))

    @property
    def position(self):
        return self.args[0]

    @property
    def thetas(self):
        return tuple(self.args[1])

    @property
    def shape(self):
        d = 2 * len(self.thetas)
        return (sp.Integer(d), sp.Integer(d))

    def as_explicit(self):
        blocks = [Rot(self.position * t).as_explicit() for t in self.thetas]
        return sp.ImmutableMatrix(sp.diag(*blocks))

    def _latex(self, printer):
        return rf"R^{{{2 * len(self.thetas)}}}_{{\Theta,\,{printer._print(self.position)}}}"


class _Printer(LatexPrinter):
    """sympy's LaTeX printer with a paper-like transpose (no parentheses around a name)."""

    def _print_Transpose(self, expr):
        arg = expr.arg
        if isinstance(arg, (Named, Rot, RopeMatrix)):
            return rf"{{{self._print(arg)}}}^{{\top}}"
        return rf"\left({self._print(arg)}\right)^{{\top}}"


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------

STEP_KINDS = ("start", "equal", "substitution")


def _freeze(expr):
    """Mutable sympy matrices are unhashable; steps are frozen, so store immutable ones."""
    if isinstance(expr, sp.MatrixBase):
        return sp.ImmutableMatrix(expr)
    return sp.sympify(expr)


@dataclass(frozen=True)
class Step:
    """One line of a derivation.

    expr          the expression on this line (scalar, explicit Matrix, or a matrix expression
                  built from `Named`, `Rot`, `RopeMatrix`, MatMul, Transpose, ...).
    rule          how it follows from the line before, in words ("angle-sum identity").
    changed       optional sub-expression that changed, for highlighting (`to_latex`).
    kind          "start" (first line), "equal" (an equality the CAS must prove) or
                  "substitution" (a modelling choice: not an equality, but checked by applying
                  `substitution` to the previous line).
    substitution  (old, new) pairs, applied in order; `old` may be a run of factors inside a
                  product (a MatMul), which is how "W_k p_n → W_{k,R} R_{m−n}" is stated.
    """

    expr: sp.Basic
    rule: str
    changed: sp.Basic | None = None
    kind: str = "equal"
    substitution: tuple[tuple[sp.Basic, sp.Basic], ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "expr", _freeze(self.expr))
        if self.changed is not None:
            object.__setattr__(self, "changed", _freeze(self.changed))
        object.__setattr__(self, "substitution", tuple((_freeze(a), _freeze(b)) for a, b in self.substitution))
        if self.kind not in STEP_KINDS:
            raise ValueError(f"unknown step kind {self.kind!r}; expected one of {STEP_KINDS}")
        if (self.kind == "substitution") != bool(self.substitution):
            raise ValueError("a substitution step needs its (old, new) pairs, and only it has them")


def start(expr, rule: str = "start") -> Step:
    return Step(expr, rule, kind="start")


def step(expr, rule: str, changed=None) -> Step:
    return Step(expr, rule, changed=changed)


def substitute(expr, rule: str, pairs, changed=None) -> Step:
    return Step(expr, rule, changed=changed, kind="substitution", substitution=tuple(pairs))


class Parameter(NamedTuple):
    """A free symbol the learner may set: `name` is the key for `values`, `label` is for humans.

    An int default means the parameter is an integer (a position or a shift); a page can pass
    `value=default` to a number input and get the right step type.
    """

    name: str
    label: str
    default: float


@dataclass(frozen=True)
class Derivation:
    """An identity as a chain of steps, ending in `claim`.

    where       definitions and assumptions the steps use, as (old, new) pairs: a function
                class with a Lambda (b ↦ −m(i − j)), an IndexedBase with a Lambda over its
                indices (g_it ↦ 1), or a symbol with a value. `verify` and `numeric_check`
                unfold them before comparing; a page shows them as "where …".
    stand_ins   replacements used only for numbers, never for proofs: a concrete function in
                place of something the identity leaves arbitrary (T5's learned bias table).
    claim_expr  optional sympy form of the claim: an unevaluated Eq(lhs, rhs), proven as
                lhs = first step and rhs = last step, or a single expression equal to the last
                step.
    """

    id: str
    title: str
    intro: str
    steps: tuple[Step, ...]
    claim: str
    claim_expr: sp.Basic | None = None
    parameters: tuple[Parameter, ...] = ()
    where: tuple[tuple[sp.Basic, sp.Basic], ...] = ()
    stand_ins: tuple[tuple[sp.Basic, sp.Basic], ...] = ()
    source: str = ""
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "steps", tuple(self.steps))
        object.__setattr__(self, "parameters", tuple(Parameter(*p) for p in self.parameters))
        object.__setattr__(self, "notes", tuple(self.notes))
        if not self.steps or self.steps[0].kind != "start":
            raise ValueError(f"{self.id}: the first step must be the start")
        if any(s.kind == "start" for s in self.steps[1:]):
            raise ValueError(f"{self.id}: only the first step may be a start")
        names = [p.name for p in self.parameters]
        if len(names) != len(set(names)):
            raise ValueError(f"{self.id}: duplicate parameter names")

    @property
    def exact(self) -> bool:
        """True when every step is an equality, so the first and last lines are equal."""
        return all(s.kind != "substitution" for s in self.steps)

    @property
    def equality_span(self) -> tuple[int, int]:
        """(0, k): the leading run of steps that are all equal to the first one.

        Substitution steps are modelling choices, so numbers cannot agree across them.
        """
        for idx, s in enumerate(self.steps):
            if s.kind == "substitution":
                return (0, idx - 1)
        return (0, len(self.steps) - 1)

    @property
    def defaults(self) -> dict[str, float]:
        return {p.name: p.default for p in self.parameters}


@dataclass(frozen=True)
class StepCheck:
    """How step `index` was checked against step `index − 1`.

    method names the first test that succeeded ("structural", "evaluate", "per-term",
    "expand", "expand_trig", "complex", "trigsimp", "simplify"; substitution steps are
    "substitution" or "substitution + <method>"), or is "" when the check failed.
    message says why a check failed, in English; reason holds the same as catalogue parts
    ((key, ((name, value), ...)), ...) so that `message_text` can say it in any language.
    """

    index: int
    rule: str
    ok: bool
    method: str = ""
    message: str = ""
    reason: tuple = ()


@dataclass(frozen=True)
class VerifyReport:
    """All step checks of one derivation; index len(steps) stands for the claim."""

    derivation_id: str
    checks: tuple[StepCheck, ...]
    claim_check: StepCheck | None = None

    @property
    def all_checks(self) -> tuple[StepCheck, ...]:
        return self.checks + ((self.claim_check,) if self.claim_check else ())

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.all_checks)

    @property
    def first_failure(self) -> StepCheck | None:
        return next((c for c in self.all_checks if not c.ok), None)

    @property
    def failed_index(self) -> int | None:
        f = self.first_failure
        return None if f is None else f.index

    @property
    def failed_rule(self) -> str | None:
        f = self.first_failure
        return None if f is None else f.rule


def _w(lang: str, key: str, /, **values) -> str:
    """A word of this module from the catalogue: derivations.<key> in `lang`."""
    return i18n.t(f"derivations.{key}", lang, **values)


def _reason(key: str, **values) -> tuple:
    """One part of why a check failed, as a catalogue key (message.<key>) and its values."""
    return ((key, tuple(values.items())),)


def _render_reason(parts: tuple, lang: str) -> str:
    return "".join(_w(lang, f"message.{key}", **dict(values)) for key, values in parts)


def message_text(check: StepCheck, lang: str = i18n.DEFAULT) -> str:
    """Why `check` failed, in `lang` ("" when it passed); a check without parts keeps its message."""
    return _render_reason(check.reason, lang) if check.reason else check.message


def _failed(index: int, rule: str, parts: tuple) -> StepCheck:
    return StepCheck(index, rule, False, "", _render_reason(parts, i18n.DEFAULT), parts)


# ---------------------------------------------------------------------------------------------
# Turning expressions into something a CAS can compare
# ---------------------------------------------------------------------------------------------


def _is_matrix(e) -> bool:
    return bool(getattr(e, "is_Matrix", False))


def _explicit(e):
    """Replace every matrix expression by its explicit entries; scalars pass through."""
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e)
    if isinstance(e, _Atom):
        return e.as_explicit()
    if isinstance(e, BlockDiagMatrix):
        return sp.ImmutableMatrix(sp.diag(*[_explicit(b) for b in e.args]))
    if isinstance(e, MatMul):
        scalar, product = sp.Integer(1), None
        for a in e.args:
            if _is_matrix(a):
                m = _explicit(a)
                product = m if product is None else product * m
            else:
                scalar = scalar * a
        return sp.ImmutableMatrix(scalar * product)
    if isinstance(e, MatAdd):
        total = None
        for a in e.args:
            m = _explicit(a)
            total = m if total is None else total + m
        return sp.ImmutableMatrix(total)
    if isinstance(e, Transpose):
        return sp.ImmutableMatrix(_explicit(e.arg).T)
    if isinstance(e, MatrixExpr):
        return sp.ImmutableMatrix(e.as_explicit())
    return e


def _unfold_one(e, old, new):
    if isinstance(old, sp.FunctionClass):
        return e.replace(old, new)
    if isinstance(old, sp.IndexedBase):
        return e.replace(
            lambda x: isinstance(x, sp.Indexed) and x.base == old,
            lambda x: new(*x.indices) if isinstance(new, sp.Lambda) else new,
        )
    return e.xreplace({old: new})


def _unfold(e, pairs):
    """Apply `where` (or stand-in) replacements to an explicit expression or matrix."""
    if not pairs:
        return e
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e.applyfunc(lambda x: _unfold(x, pairs)))
    for old, new in pairs:
        e = _unfold_one(e, old, new)
    return e


def _prepare(e, pairs):
    e = _unfold(_explicit(e), pairs)
    if isinstance(e, sp.MatrixBase) and e.shape == (1, 1):
        # A 1×1 matrix is the scalar qᵀk; compare it with scalar lines directly.
        return e[0, 0]
    return e


# Order of the scalar tests, cheapest first; a report names the first that succeeded.
_METHODS = ("structural", "evaluate", "per-term", "expand", "expand_trig", "complex", "trigsimp", "simplify")


def _scalar_equal(a, b) -> str | None:
    diff = a - b
    if diff == 0:
        return "structural"
    # Two sums over the same range are equal if their summands are: this proves the identity
    # for a symbolic index f, i.e. for every pair, not just for the concrete range shown.
    if (
        isinstance(a, sp.Sum)
        and isinstance(b, sp.Sum)
        and a.limits == b.limits
        and _scalar_equal(a.function, b.function) is not None
    ):
        return "per-term"
    if diff.has(sp.Sum):
        a2, b2 = a.doit(), b.doit()
        if a2.has(sp.Sum) or b2.has(sp.Sum):
            return None
        return _scalar_equal(a2, b2)
    # doit() evaluates what a step deliberately left unevaluated for display (re, conjugate,
    # (i + c) − (j + c)).
    diff = diff.doit()
    if diff == 0:
        return "evaluate"
    if sp.expand(diff) == 0:
        return "expand"
    if sp.expand(diff, trig=True) == 0:
        return "expand_trig"
    if diff.has(sp.I, sp.re, sp.im, sp.conjugate, sp.exp) and sp.expand(sp.expand_complex(diff), trig=True) == 0:
        return "complex"
    # The remaining tests are slow. A false step is refuted fast by one exact point where the
    # difference is clearly nonzero; this can only reject, never accept, a step.
    if _nonzero_somewhere(diff):
        return None
    if sp.trigsimp(diff) == 0:
        return "trigsimp"
    if sp.simplify(diff) == 0:
        return "simplify"
    return None


def _nonzero_somewhere(expr) -> bool:
    """True if `expr` is provably nonzero at a fixed rational point (evaluated to 30 digits)."""
    symbols = sorted(expr.free_symbols, key=str)
    for trial in range(2):
        point = {
            s: sp.Integer(3 + 2 * k + trial) if s.is_integer else sp.Rational(5 * k + 7 + trial, 13)
            for k, s in enumerate(symbols)
        }
        value = expr.xreplace(point).evalf(30)
        if value.is_number and value.is_finite and abs(complex(value)) > 1e-20:
            return True
    return False


def _strongest(methods: Iterable[str]) -> str:
    return max(methods, key=_METHODS.index, default="structural")


def _equal(a, b, where) -> tuple[str | None, tuple]:
    """(method, reason): method is None when a = b could not be proven; reason says why (`_reason`)."""
    if a == b:
        return "structural", ()
    a, b = _prepare(a, where), _prepare(b, where)
    am, bm = isinstance(a, sp.MatrixBase), isinstance(b, sp.MatrixBase)
    if am != bm:
        return None, _reason("matrix_scalar")
    if am:
        if a.shape != b.shape:
            return None, _reason("shape", a=str(a.shape), b=str(b.shape))
        methods = []
        for r in range(a.rows):
            for c in range(a.cols):
                m = _scalar_equal(a[r, c], b[r, c])
                if m is None:
                    return None, _reason("entry", r=r, c=c)
                methods.append(m)
        return _strongest(methods), ()
    m = _scalar_equal(a, b)
    return m, () if m else _reason("not_zero")


def _replace(e, old, new) -> tuple[sp.Basic, int]:
    """Replace `old` by `new` in `e`; return (result, number of replacements).

    A MatMul `old` also matches a contiguous run of factors inside a longer product, because
    a substitution such as W_k p_n → W_{k,R} R_{m−n} names two factors of xᵀW_qᵀW_k p_n.
    Named atoms are not entered: their explicit entries are not part of the display.
    """
    if e == old:
        return new, 1
    if isinstance(e, Named) or not e.args:
        return e, 0
    if isinstance(e, MatMul) and isinstance(old, MatMul):
        args, pattern, k = list(e.args), old.args, len(old.args)
        replacement = list(new.args) if isinstance(new, MatMul) else [new]
        out, count, i = [], 0, 0
        while i < len(args):
            if tuple(args[i : i + k]) == pattern:
                out.extend(replacement)
                count += 1
                i += k
            else:
                sub, n = _replace(args[i], old, new)
                out.append(sub)
                count += n
                i += 1
        return (MatMul(*out) if count else e), count
    new_args, count = [], 0
    for a in e.args:
        sub, n = _replace(a, old, new)
        new_args.append(sub)
        count += n
    return (e.func(*new_args) if count else e), count


def apply_substitution(expr, pairs) -> tuple[sp.Basic, list]:
    """Apply (old, new) pairs in order; also return the `old`s that matched nothing."""
    missing = []
    for old, new in pairs:
        expr, n = _replace(expr, old, new)
        if n == 0:
            missing.append(old)
    return expr, missing


# ---------------------------------------------------------------------------------------------
# verify / numeric_check
# ---------------------------------------------------------------------------------------------


def _check_step(derivation: Derivation, index: int) -> StepCheck:
    prev, cur = derivation.steps[index - 1], derivation.steps[index]
    if cur.kind == "substitution":
        # A modelling choice is not an equality; what *can* be checked is that this line is
        # exactly the previous one with the stated replacement applied.
        applied, missing = apply_substitution(prev.expr, cur.substitution)
        if missing:
            names = ", ".join(sp.sstr(m) for m in missing)
            return _failed(index, cur.rule, _reason("pattern_missing", names=names))
        method, reason = _equal(applied, cur.expr, derivation.where)
        if method is None:
            return _failed(index, cur.rule, _reason("not_this_step") + reason)
        return StepCheck(
            index, cur.rule, True, "substitution" if method == "structural" else f"substitution + {method}"
        )
    method, reason = _equal(prev.expr, cur.expr, derivation.where)
    if method is None:
        return _failed(index, cur.rule, reason)
    return StepCheck(index, cur.rule, True, method)


def _check_claim(derivation: Derivation) -> StepCheck | None:
    claim = derivation.claim_expr
    if claim is None:
        return None
    index, rule = len(derivation.steps), "claim"
    if isinstance(claim, sp.Equality):
        first, last = derivation.steps[0].expr, derivation.steps[-1].expr
        lhs_method, reason = _equal(claim.lhs, first, derivation.where)
        if lhs_method is None:
            return _failed(index, rule, _reason("claim_lhs") + reason)
        rhs_method, reason = _equal(claim.rhs, last, derivation.where)
        if rhs_method is None:
            return _failed(index, rule, _reason("claim_rhs") + reason)
        return StepCheck(index, rule, True, _strongest([lhs_method, rhs_method]))
    method, reason = _equal(claim, derivation.steps[-1].expr, derivation.where)
    if method is None:
        return _failed(index, rule, reason)
    return StepCheck(index, rule, True, method)


def verify(derivation: Derivation) -> VerifyReport:
    """Prove every step from the one before it, and the claim from the ends.

    Equality steps try, in order: structural equality, evaluation of deliberately unevaluated
    parts, summand-by-summand for sums over the same range, expand, expand(trig=True),
    expand_complex, trigsimp, simplify; matrices are compared entry by entry after expanding
    their named atoms. Substitution steps are checked by applying their stated replacement.
    Deterministic; nothing is cached.
    """
    checks = tuple(_check_step(derivation, k) for k in range(1, len(derivation.steps)))
    return VerifyReport(derivation.id, checks, _check_claim(derivation))


def _symbols_of(e) -> set:
    free = set(e.free_symbols)
    # sympy reports an IndexedBase's label (ω) and an Indexed with a bound index (ω[f] inside a
    # Sum over f) as free; neither is a number a learner could type.
    labels = {x.base.label for x in free if isinstance(x, sp.Indexed)}
    return {
        x
        for x in free
        if x not in labels and not (isinstance(x, sp.Indexed) and not all(k.is_number for k in x.indices))
    }


def free_symbols(derivation: Derivation) -> dict[str, sp.Basic]:
    """name → symbol for every free symbol a number must be given for.

    Both the displayed form (b(i + c, j + c) has c) and the unfolded form (which adds the
    definition's constants, like ALiBi's slope) count.
    """
    pairs = derivation.where + derivation.stand_ins
    found: set = set()
    for s in derivation.steps:
        shown = _explicit(s.expr)
        found |= _symbols_of(shown) | _symbols_of(shown.doit())
        found |= _symbols_of(_unfold(shown, pairs).doit())
    return {str(x): x for x in found}


def _bind(derivation: Derivation, values) -> dict:
    values = dict(values or {})
    names = {p.name for p in derivation.parameters}
    unknown = sorted(set(map(str, values)) - names)
    if unknown:
        raise ValueError(f"{derivation.id}: unknown parameters {unknown}; known: {sorted(names)}")
    symbols = free_symbols(derivation)
    merged = {**derivation.defaults, **{str(k): v for k, v in values.items()}}
    missing = sorted(set(symbols) - set(merged))
    if missing:
        raise ValueError(f"{derivation.id}: no value for {missing}")
    return {symbols[name]: sp.sympify(merged[name]) for name in symbols}


def _to_float(x) -> float:
    z = complex(sp.N(x))
    if abs(z.imag) > 1e-9 * max(1.0, abs(z.real)):
        raise ValueError(f"value {z} is not real")
    return z.real


def _evaluate(expr, derivation: Derivation, subs: dict):
    # Numbers go in before the definitions are unfolded, so that b(i + c, j + c) is evaluated
    # at the shifted positions rather than after sympy has already cancelled c. doit() first
    # expands sums over concrete ranges so that their ω[0], ω[1], … can receive numbers.
    e = _explicit(expr).doit().xreplace(subs)
    # The definitions bring their own constants (ALiBi's slope): give those numbers too.
    e = _unfold(e, derivation.where + derivation.stand_ins).xreplace(subs).doit()
    if isinstance(e, sp.MatrixBase):
        if e.shape == (1, 1):
            return _to_float(e[0, 0])
        return [[_to_float(e[r, c]) for c in range(e.cols)] for r in range(e.rows)]
    return _to_float(e)


def step_values(derivation: Derivation, values: dict | None = None) -> list:
    """The learner's numbers at every step (float, or a list of rows for a matrix)."""
    subs = _bind(derivation, values)
    return [_evaluate(s.expr, derivation, subs) for s in derivation.steps]


def numeric_check(derivation: Derivation, values: dict | None = None):
    """(first_value, last_value) for the learner's numbers; missing values take defaults.

    "last" is the last step of `derivation.equality_span`: for an exact derivation that is
    the final line; where a substitution (a modelling choice) follows, it is the last line
    still equal to the first, since numbers cannot agree across a substitution.
    """
    subs = _bind(derivation, values)
    first, last = derivation.equality_span
    return (
        _evaluate(derivation.steps[first].expr, derivation, subs),
        _evaluate(derivation.steps[last].expr, derivation, subs),
    )


# ---------------------------------------------------------------------------------------------
# LaTeX
# ---------------------------------------------------------------------------------------------

HIGHLIGHT_COLOR = "#d62728"


def to_latex(obj, highlight: bool = False, color: str = HIGHLIGHT_COLOR) -> str:
    """LaTeX for a Step (or any sympy expression).

    With highlight=True the step's `changed` sub-expression is coloured (KaTeX \\textcolor) when
    it appears verbatim in the printed line.
    """
    printer = _Printer({"order": "none"})
    expr = obj.expr if isinstance(obj, Step) else obj
    tex = printer.doprint(expr)
    if highlight and isinstance(obj, Step) and obj.changed is not None:
        part = printer.doprint(obj.changed)
        if part and part in tex:
            tex = tex.replace(part, rf"\textcolor{{{color}}}{{{part}}}", 1)
    return tex


def claim_latex(derivation: Derivation) -> str:
    """The claim's formula, or '' when the derivation states it in words only."""
    claim = derivation.claim_expr
    if claim is None:
        return ""
    if isinstance(claim, sp.Equality):
        return f"{to_latex(claim.lhs)} = {to_latex(claim.rhs)}"
    return to_latex(claim)


# ---------------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------------


def _texts(lang: str, key: str, notes: int = 0) -> dict:
    """title, intro, claim, source and the notes of one identity, from the catalogue table `key`."""
    return {
        "title": _w(lang, f"{key}.title"),
        "intro": _w(lang, f"{key}.intro"),
        "claim": _w(lang, f"{key}.claim"),
        "source": _w(lang, f"{key}.source"),
        "notes": tuple(_w(lang, f"{key}.note{k}") for k in range(1, notes + 1)),
    }


def _real(name: str) -> sp.Symbol:
    return sp.Symbol(name, real=True)


def _integer(name: str) -> sp.Symbol:
    return sp.Symbol(name, integer=True)


def _default(k: int) -> float:
    """Deterministic, varied, readable defaults for matrix/vector entries."""
    return round(math.sin(1.7 * k + 0.3), 2)


def _entries(base: str, rows: int, cols: int, label: str) -> tuple[sp.ImmutableMatrix, list[Parameter]]:
    """A matrix (or column vector) of real symbols, with labelled parameters for each entry
    (label: the group's words, e.g. "x_m (query content)"; each entry adds " [1]" or " [1,2]")."""
    matrix, params = [], []
    for r in range(rows):
        row = []
        for c in range(cols):
            name = f"{base}{r + 1}" if cols == 1 else f"{base}{r + 1}{c + 1}"
            sym = _real(name)
            row.append(sym)
            where = f"[{r + 1}]" if cols == 1 else f"[{r + 1},{c + 1}]"
            params.append(Parameter(name, f"{label} {where}", _default(len(params) + 7 * len(base))))
        matrix.append(row)
    return sp.ImmutableMatrix(matrix), params


def _vec(base: str, tex: str, lang: str, dim: int = 2):
    """A named column vector; its entries' labels are param.group.<base> in `lang`."""
    m, p = _entries(base, dim, 1, _w(lang, f"param.group.{base}"))
    return Named(tex, m), p


def _mat(base: str, tex: str, lang: str, dim: int = 2):
    """A named square matrix; its entries' labels are param.group.<base> in `lang`."""
    m, p = _entries(base, dim, dim, _w(lang, f"param.group.{base}"))
    return Named(tex, m), p


def _minus(a, b):
    """a − b kept in that order on screen (sympy would print −b + a)."""
    return sp.Add(a, sp.Mul(-1, b, evaluate=False), evaluate=False)


def _times(*factors):
    return sp.Mul(*factors, evaluate=False)


def _T(expr):
    return Transpose(expr)


# Shared symbols. Positions are real so the identities hold for any shift, not just integers.
m, n, p, delta, theta = _real("m"), _real("n"), _real("p"), _real("Delta"), _real("theta")
i_, j_, c_ = _integer("i"), _integer("j"), _integer("c")
f_ = sp.Symbol("f", integer=True, nonnegative=True)
omega = sp.IndexedBase("omega", real=True)


# The positions and shifts a learner may set, with their defaults; the label is param.<name>.
_POSITION_DEFAULTS = {"m": 3, "n": 7, "p": 5, "Delta": 2, "theta": 0.3, "i": 6, "j": 2, "c": 4}
# Parameters that are shifts (any sign) rather than 0-based positions, and the frequencies.
SHIFT_PARAMETERS = frozenset({"Delta", "c"})


def is_frequency(name: str) -> bool:
    """θ, θ_f, ω_f: the rotation and sinusoid frequencies (θ_1 … of the d-dimensional RoPE too)."""
    return name.startswith(("theta", "omega"))


def _position_params(lang: str, *names):
    return [Parameter(nm, _w(lang, f"param.{nm}"), _POSITION_DEFAULTS[nm]) for nm in names]


def _omega_params(pairs: int, lang: str):
    # Paper frequencies ω_f = 10000^(−2f/d) for d = 2·pairs (METHODS.md §1).
    d = 2 * pairs
    return [Parameter(f"omega[{f}]", _w(lang, "param.omega_f", f=f), 10000 ** (-2 * f / d)) for f in range(pairs)]


# ---------------------------------------------------------------------------------------------
# 1. Sinusoidal: PE(m)·PE(n) = Σ_f cos(ω_f (m − n))
# ---------------------------------------------------------------------------------------------


def _sinusoid(position, pairs: int) -> sp.ImmutableMatrix:
    """Interleaved layout (paper §3.5): channel 2f = sin(p ω_f), channel 2f+1 = cos(p ω_f)."""
    entries = []
    for f in range(pairs):
        entries += [sp.sin(position * omega[f]), sp.cos(position * omega[f])]
    return sp.ImmutableMatrix(entries)


def _pe(position, pairs: int) -> Named:
    return Named(r"\mathrm{{PE}}({})".format(sp.latex(position, order="none")), _sinusoid(position, pairs))


def sinusoidal_dot_product(pairs: int = 3, lang: str = i18n.DEFAULT) -> Derivation:
    """PE(m)·PE(n) = Σ_f cos(ω_f (m − n)) (Vaswani et al. 2017 §3.5; METHODS.md §1).

    Shown for d = 2·pairs channels; the pair step is proven for a symbolic pair index f, which
    is the general case: every d is a sum of such pairs.
    """
    last = pairs - 1
    pe_m, pe_n = _pe(m, pairs), _pe(n, pairs)
    products = sp.sin(m * omega[f_]) * sp.sin(n * omega[f_]) + sp.cos(m * omega[f_]) * sp.cos(n * omega[f_])
    relative = sp.cos(_times(_minus(m, n), omega[f_]))
    steps = (
        start(MatMul(_T(pe_m), pe_n), _w(lang, "sinusoidal-dot-product.step0", d=2 * pairs)),
        step(sp.Sum(products, (f_, 0, last)), _w(lang, "sinusoidal-dot-product.step1")),
        step(sp.Sum(relative, (f_, 0, last)), _w(lang, "sinusoidal-dot-product.step2"), changed=relative),
    )
    return Derivation(
        id="sinusoidal-dot-product",
        steps=steps,
        claim_expr=sp.Eq(MatMul(_T(pe_m), pe_n), sp.Sum(relative, (f_, 0, last)), evaluate=False),
        parameters=tuple(_position_params(lang, "m", "n") + _omega_params(pairs, lang)),
        **_texts(lang, "sinusoidal-dot-product", notes=1),
    )


# ---------------------------------------------------------------------------------------------
# 2. Sinusoidal: PE(p + Δ) = T(Δ) PE(p)
# ---------------------------------------------------------------------------------------------


def _shift_block(angle) -> sp.ImmutableMatrix:
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
        start(_pe(shifted, pairs), _w(lang, "sinusoidal-shift.step0", d=2 * pairs)),
        step(sp.ImmutableMatrix(_sinusoid(shifted, pairs)), _w(lang, "sinusoidal-shift.step1")),
        step(sp.ImmutableMatrix(expanded), _w(lang, "sinusoidal-shift.step2")),
        step(MatMul(blocks, pe_p), _w(lang, "sinusoidal-shift.step3"), changed=blocks),
        step(MatMul(t_delta, pe_p), _w(lang, "sinusoidal-shift.step4"), changed=t_delta),
    )
    return Derivation(
        id="sinusoidal-shift",
        steps=steps,
        claim_expr=sp.Eq(_pe(shifted, pairs), MatMul(t_delta, pe_p), evaluate=False),
        parameters=tuple(_position_params(lang, "p", "Delta") + _omega_params(pairs, lang)),
        **_texts(lang, "sinusoidal-shift", notes=1),
    )


# ---------------------------------------------------------------------------------------------
# 3. RoPE 2-D, complex form
# ---------------------------------------------------------------------------------------------

q1, q2, k1, k2 = (_real(s) for s in ("q1", "q2", "k1", "k2"))


def _qk_params(lang: str):
    defaults = {"q1": 0.8, "q2": -0.5, "k1": 0.3, "k2": 1.1}
    return [Parameter(name, _w(lang, f"param.{name}"), value) for name, value in defaults.items()]


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
    angle = _times(_minus(m, n), theta)

    def re(x):
        return sp.re(x, evaluate=False)

    def im(x):
        return sp.im(x, evaluate=False)

    # Built unevaluated so the page shows the paper's order, e.g. e^{i(m−n)θ}, not e^{iθ(m−n)}.
    phase = sp.exp(sp.Mul(iu, angle, evaluate=False), evaluate=False)
    euler = sp.Add(sp.cos(angle), sp.Mul(iu, sp.sin(angle), evaluate=False), evaluate=False)
    inner = sp.Add(sp.Mul(re(rq), re(rk), evaluate=False), sp.Mul(im(rq), im(rk), evaluate=False), evaluate=False)
    steps = (
        start(inner, _w(lang, "rope-complex-2d.step0")),
        step(re(sp.Mul(rq, sp.conjugate(rk, evaluate=False), evaluate=False)), _w(lang, "rope-complex-2d.step1")),
        step(re(sp.Mul(zq, zk_bar, phase, evaluate=False)), _w(lang, "rope-complex-2d.step2"), changed=phase),
        step(re(sp.Mul(zq, zk_bar, euler, evaluate=False)), _w(lang, "rope-complex-2d.step3"), changed=euler),
        step(
            (q1 * k1 + q2 * k2) * sp.cos(angle) + (q1 * k2 - q2 * k1) * sp.sin(angle),
            _w(lang, "rope-complex-2d.step4"),
        ),
    )
    return Derivation(
        id="rope-complex-2d",
        steps=steps,
        claim_expr=re(sp.Mul(zq, zk_bar, phase, evaluate=False)),
        parameters=tuple(_position_params(lang, "m", "n", "theta") + _qk_params(lang)),
        **_texts(lang, "rope-complex-2d", notes=1),
    )


# ---------------------------------------------------------------------------------------------
# 4. RoPE 2-D, matrix form
# ---------------------------------------------------------------------------------------------


def rope_matrix_2d(lang: str = i18n.DEFAULT) -> Derivation:
    """(R(mθ)q)ᵀ(R(nθ)k) = qᵀ R((n−m)θ) k (RoFormer §3.2.1; METHODS.md §7)."""
    q = Named(r"\mathbf{q}", [q1, q2])
    k = Named(r"\mathbf{k}", [k1, k2])
    angle = _times(_minus(n, m), theta)
    r_neg = Rot(-m * theta)
    r_rel = Rot(angle)
    steps = (
        start(MatMul(_T(MatMul(Rot(m * theta), q)), MatMul(Rot(n * theta), k)), _w(lang, "rope-matrix-2d.step0")),
        step(MatMul(_T(q), _T(Rot(m * theta)), Rot(n * theta), k), _w(lang, "rope-matrix-2d.step1")),
        step(MatMul(_T(q), r_neg, Rot(n * theta), k), _w(lang, "rope-matrix-2d.step2"), changed=r_neg),
        step(MatMul(_T(q), r_rel, k), _w(lang, "rope-matrix-2d.step3"), changed=r_rel),
        step(
            (q1 * k1 + q2 * k2) * sp.cos(angle) + (q2 * k1 - q1 * k2) * sp.sin(angle),
            _w(lang, "rope-matrix-2d.step4"),
        ),
    )
    return Derivation(
        id="rope-matrix-2d",
        steps=steps,
        claim_expr=sp.Eq(steps[0].expr, MatMul(_T(q), r_rel, k), evaluate=False),
        parameters=tuple(_position_params(lang, "m", "n", "theta") + _qk_params(lang)),
        **_texts(lang, "rope-matrix-2d"),
    )


# ---------------------------------------------------------------------------------------------
# 5. RoPE in d dimensions
# ---------------------------------------------------------------------------------------------


def rope_block_diagonal(d: int = 4, lang: str = i18n.DEFAULT) -> Derivation:
    """R_{Θ,m}ᵀ R_{Θ,n} = R_{Θ,n−m} for a concrete d with independent θ_1 … θ_{d/2}
    (RoFormer §3.2.2; METHODS.md §7: "the blocks are commuting rotations")."""
    if d % 2 or d < 2:
        raise ValueError("RoPE needs an even head dimension")
    thetas = [_real(f"theta_{f}") for f in range(1, d // 2 + 1)]  # 1-based, as in the paper
    rel = _minus(n, m)
    diag_t = BlockDiagMatrix(*[_T(Rot(m * t)) for t in thetas])
    diag_n = BlockDiagMatrix(*[Rot(n * t) for t in thetas])
    steps = (
        start(MatMul(_T(RopeMatrix(m, thetas)), RopeMatrix(n, thetas)), _w(lang, "rope-relative-d.step0", d=d)),
        step(MatMul(diag_t, diag_n), _w(lang, "rope-relative-d.step1")),
        step(BlockDiagMatrix(*[MatMul(_T(Rot(m * t)), Rot(n * t)) for t in thetas]), _w(lang, "rope-relative-d.step2")),
        step(BlockDiagMatrix(*[MatMul(Rot(-m * t), Rot(n * t)) for t in thetas]), _w(lang, "rope-relative-d.step3")),
        step(BlockDiagMatrix(*[Rot(_times(rel, t)) for t in thetas]), _w(lang, "rope-relative-d.step4")),
        step(RopeMatrix(rel, thetas), _w(lang, "rope-relative-d.step5")),
    )
    words = _texts(lang, "rope-relative-d")
    return Derivation(
        id=f"rope-relative-d{d}",
        steps=steps,
        claim_expr=sp.Eq(steps[0].expr, RopeMatrix(rel, thetas), evaluate=False),
        parameters=tuple(
            _position_params(lang, "m", "n")
            + [
                Parameter(str(t), _w(lang, "param.theta_f", f=f), 10000 ** (-2 * (f - 1) / d))
                for f, t in enumerate(thetas, 1)
            ]
        ),
        **(words | {"title": _w(lang, "rope-relative-d.title", d=d), "claim": _w(lang, "rope-relative-d.claim", d=d)}),
    )


def rope_relative_block(lang: str = i18n.DEFAULT) -> Derivation:
    """The general-d argument: one block f of R_{Θ,m}ᵀR_{Θ,n}, for a symbolic frequency θ_f
    (RoFormer §3.2.2). Every block reduces exactly as the 2-D matrix form does."""
    theta_f = _real("theta_f")
    rel = _times(_minus(n, m), theta_f)
    steps = (
        start(MatMul(_T(Rot(m * theta_f)), Rot(n * theta_f)), _w(lang, "rope-relative-block.step0")),
        step(MatMul(Rot(-m * theta_f), Rot(n * theta_f)), _w(lang, "rope-relative-block.step1")),
        step(Rot(rel), _w(lang, "rope-relative-block.step2")),
    )
    return Derivation(
        id="rope-relative-block",
        steps=steps,
        claim_expr=Rot(rel),
        parameters=tuple(
            [*_position_params(lang, "m", "n"), Parameter("theta_f", _w(lang, "param.theta_f", f="f"), 0.1)]
        ),
        **_texts(lang, "rope-relative-block"),
    )


# ---------------------------------------------------------------------------------------------
# 6. Absolute PE inside attention, and Transformer-XL's relative reparametrisation
# ---------------------------------------------------------------------------------------------


def _four_terms(wq, wk, xq, pq, xk, pk, lang: str):
    """(W_q(x_q + p_q))ᵀ W_k(x_k + p_k) and its expansion, as steps (shared with DeBERTa)."""
    steps = (
        start(MatMul(_T(MatMul(wq, MatAdd(xq, pq))), MatMul(wk, MatAdd(xk, pk))), _w(lang, "four-terms.step0")),
        step(MatMul(_T(MatAdd(xq, pq)), _T(wq), wk, MatAdd(xk, pk)), _w(lang, "four-terms.step1")),
        step(
            MatAdd(
                MatMul(_T(xq), _T(wq), wk, xk),
                MatMul(_T(xq), _T(wq), wk, pk),
                MatMul(_T(pq), _T(wq), wk, xk),
                MatMul(_T(pq), _T(wq), wk, pk),
            ),
            _w(lang, "four-terms.step2"),
        ),
    )
    return steps


def absolute_pe_attention(lang: str = i18n.DEFAULT) -> Derivation:
    """The four terms of absolute-PE attention and Transformer-XL's substitution
    (Dai et al. 2019, §3.3; METHODS.md §4; R_{i−j}, query − key)."""
    wq, pw = _mat("W_q", r"W_q", lang)
    wk, pk_ = _mat("W_k", r"W_k", lang)
    xm, px = _vec("x_m", r"\mathbf{x}_m", lang)
    pm, ppm = _vec("p_m", r"\mathbf{p}_m", lang)
    xn, pxn = _vec("x_n", r"\mathbf{x}_n", lang)
    pn, ppn = _vec("p_n", r"\mathbf{p}_n", lang)
    wke, pwe = _mat("W_kE", r"W_{k,E}", lang)
    wkr, pwr = _mat("W_kR", r"W_{k,R}", lang)
    u, pu = _vec("u", r"\mathbf{u}", lang)
    v, pv = _vec("v", r"\mathbf{v}", lang)
    w = _real("omega_0")
    # Transformer-XL's R is the sinusoid encoding of the distance itself (here with d = 2).
    rel = _minus(m, n)
    r_rel = Named(r"\mathbf{R}_{m-n}", [sp.sin(rel * w), sp.cos(rel * w)])

    expansion = _four_terms(wq, wk, xm, pm, xn, pn, lang)
    term_a = MatMul(_T(xm), _T(wq), wke, xn)
    term_b = MatMul(_T(xm), _T(wq), wkr, r_rel)
    after_key = MatAdd(term_a, term_b, MatMul(_T(pm), _T(wq), wke, xn), MatMul(_T(pm), _T(wq), wkr, r_rel))
    final = MatAdd(term_a, term_b, MatMul(_T(u), wke, xn), MatMul(_T(v), wkr, r_rel))
    steps = (
        *expansion,
        substitute(
            MatAdd(
                MatMul(_T(xm), _T(wq), wk, xn),
                MatMul(_T(xm), _T(wq), wkr, r_rel),
                MatMul(_T(pm), _T(wq), wk, xn),
                MatMul(_T(pm), _T(wq), wkr, r_rel),
            ),
            _w(lang, "absolute-pe-attention.step3"),
            [(MatMul(wk, pn), MatMul(wkr, r_rel))],
            changed=r_rel,
        ),
        substitute(
            after_key, _w(lang, "absolute-pe-attention.step4"), [(MatMul(wk, xn), MatMul(wke, xn))], changed=wke
        ),
        substitute(
            final,
            _w(lang, "absolute-pe-attention.step5"),
            [(MatMul(_T(pm), _T(wq), wke), MatMul(_T(u), wke)), (MatMul(_T(pm), _T(wq), wkr), MatMul(_T(v), wkr))],
        ),
    )
    return Derivation(
        id="absolute-pe-attention",
        steps=steps,
        claim_expr=final,
        parameters=tuple(
            [
                *_position_params(lang, "m", "n"),
                Parameter("omega_0", _w(lang, "param.omega_R"), 1.0),
                *pw,
                *pk_,
                *px,
                *ppm,
                *pxn,
                *ppn,
                *pwe,
                *pwr,
                *pu,
                *pv,
            ]
        ),
        **_texts(lang, "absolute-pe-attention", notes=2),
    )


# ---------------------------------------------------------------------------------------------
# 7. DeBERTa: c2c + c2p + p2c
# ---------------------------------------------------------------------------------------------


def deberta_three_terms(lang: str = i18n.DEFAULT) -> Derivation:
    """DeBERTa's disentangled attention (He et al. 2021, §3.1, Eq. 4; METHODS.md §6),
    from the same four-term expansion, i = query, j = key, r = i − j (query − key)."""
    wq, pw = _mat("W_qc", r"W_{q,c}", lang)
    wk, pk_ = _mat("W_kc", r"W_{k,c}", lang)
    xi, px = _vec("x_i", r"\mathbf{x}_i", lang)
    pi, ppi = _vec("p_i", r"\mathbf{p}_i", lang)
    xj, pxj = _vec("x_j", r"\mathbf{x}_j", lang)
    pj, ppj = _vec("p_j", r"\mathbf{p}_j", lang)
    wkr, pwkr = _mat("W_kr", r"W_{k,r}", lang)
    wqr, pwqr = _mat("W_qr", r"W_{q,r}", lang)
    prel, pp = _vec("P_d", r"\mathbf{P}_{\delta(i,j)}", lang)

    expansion = _four_terms(wq, wk, xi, pi, xj, pj, lang)
    c2c = MatMul(_T(xi), _T(wq), wk, xj)
    c2p = MatMul(_T(xi), _T(wq), wkr, prel)
    p2c = MatMul(_T(prel), _T(wqr), wk, xj)
    # Name the projections (paper: Q_c = H W_q,c, K_r = P W_k,r, ...): definitions, so equalities.
    qc = Named(r"\mathbf{Q}^{c}_{i}", wq.as_explicit() * xi.as_explicit())
    kc = Named(r"\mathbf{K}^{c}_{j}", wk.as_explicit() * xj.as_explicit())
    kr = Named(r"\mathbf{K}^{r}_{\delta(i,j)}", wkr.as_explicit() * prel.as_explicit())
    qr = Named(r"\mathbf{Q}^{r}_{\delta(i,j)}", wqr.as_explicit() * prel.as_explicit())
    named = MatAdd(MatMul(_T(qc), kc), MatMul(_T(qc), kr), MatMul(_T(qr), kc))
    steps = (
        *expansion,
        substitute(
            MatAdd(MatMul(_T(xi), _T(wq), wk, xj), MatMul(_T(xi), _T(wq), wk, pj), MatMul(_T(pi), _T(wq), wk, xj)),
            _w(lang, "deberta-three-terms.step3"),
            [(MatMul(_T(pi), _T(wq), wk, pj), ZeroMatrix(1, 1))],
        ),
        substitute(
            MatAdd(c2c, c2p, MatMul(_T(pi), _T(wq), wk, xj)),
            _w(lang, "deberta-three-terms.step4"),
            [(MatMul(wk, pj), MatMul(wkr, prel))],
            changed=prel,
        ),
        substitute(
            MatAdd(c2c, c2p, p2c),
            _w(lang, "deberta-three-terms.step5"),
            [(MatMul(_T(pi), _T(wq)), MatMul(_T(prel), _T(wqr)))],
        ),
        step(named, _w(lang, "deberta-three-terms.step6")),
    )
    return Derivation(
        id="deberta-three-terms",
        steps=steps,
        claim_expr=named,
        parameters=tuple(pw + pk_ + px + ppi + pxj + ppj + pwkr + pwqr + pp),
        **_texts(lang, "deberta-three-terms", notes=2),
    )


# ---------------------------------------------------------------------------------------------
# 8. ALiBi and T5: the bias depends only on the offset
# ---------------------------------------------------------------------------------------------


def _shifted(x):
    return sp.Add(x, c_, evaluate=False)


def alibi_shift_invariance(lang: str = i18n.DEFAULT) -> Derivation:
    """ALiBi's bias b(i, j) = −m·(i − j) is unchanged when both positions shift
    (Press et al. 2022, §3; METHODS.md §8, query − key)."""
    slope = _real("m_h")
    b = sp.Function("b")
    steps = (
        start(b(_shifted(i_), _shifted(j_)), _w(lang, "alibi-shift-invariance.step0")),
        step(-slope * _minus(_shifted(i_), _shifted(j_)), _w(lang, "alibi-shift-invariance.step1")),
        step(-slope * _minus(i_, j_), _w(lang, "alibi-shift-invariance.step2"), changed=_minus(i_, j_)),
        step(b(i_, j_), _w(lang, "alibi-shift-invariance.step3")),
    )
    return Derivation(
        id="alibi-shift-invariance",
        steps=steps,
        claim_expr=sp.Eq(b(_shifted(i_), _shifted(j_)), b(i_, j_), evaluate=False),
        parameters=(
            Parameter("m_h", _w(lang, "param.slope"), 0.25),
            *_position_params(lang, "i", "j", "c"),
        ),
        where=((b, sp.Lambda((i_, j_), -slope * (i_ - j_))),),
        **_texts(lang, "alibi-shift-invariance", notes=1),
    )


def _t5_bucket(r, num_buckets: int = 32, max_distance: int = 128):
    """T5's bidirectional bucket of r = j − i (METHODS.md §5), as a sympy expression."""
    half = num_buckets // 2
    exact = half // 2
    a = sp.Abs(r)
    # Max(a, exact) keeps log finite at r = 0: sympy evaluates every Piecewise branch.
    log_part = sp.Min(
        exact + sp.floor(sp.log(sp.Max(a, exact) / exact) / sp.log(sp.Rational(max_distance, exact)) * (half - exact)),
        half - 1,
    )
    return sp.Piecewise((half, r > 0), (0, True)) + sp.Piecewise((a, a < exact), (log_part, True))


def t5_shift_invariance(lang: str = i18n.DEFAULT) -> Derivation:
    """T5's bias b(i, j) = β_h(bucket(j − i)) depends only on j − i, by construction
    (Raffel et al. 2020, §2.1; METHODS.md §5, key − query)."""
    b, beta, bucket = sp.Function("b"), sp.Function("beta_h"), sp.Function("bucket")
    r = sp.Symbol("r", integer=True)
    steps = (
        start(b(_shifted(i_), _shifted(j_)), _w(lang, "t5-shift-invariance.step0")),
        step(beta(bucket(_minus(_shifted(j_), _shifted(i_)))), _w(lang, "t5-shift-invariance.step1")),
        step(beta(bucket(_minus(j_, i_))), _w(lang, "t5-shift-invariance.step2"), changed=_minus(j_, i_)),
        step(b(i_, j_), _w(lang, "t5-shift-invariance.step3")),
    )
    return Derivation(
        id="t5-shift-invariance",
        steps=steps,
        claim_expr=sp.Eq(b(_shifted(i_), _shifted(j_)), b(i_, j_), evaluate=False),
        parameters=tuple(_position_params(lang, "i", "j", "c")),
        where=((b, sp.Lambda((i_, j_), beta(bucket(j_ - i_)))),),
        # Deviation: numbers need concrete functions. bucket is T5's real bidirectional rule
        # (32 buckets, max distance 128); β_h stands in for the learned table.
        stand_ins=((bucket, sp.Lambda(r, _t5_bucket(r))), (beta, sp.Lambda(r, -r / sp.Integer(10)))),
        **_texts(lang, "t5-shift-invariance", notes=1),
    )


# ---------------------------------------------------------------------------------------------
# 9. CoPE with every gate open
# ---------------------------------------------------------------------------------------------


def cope_all_gates_open(lang: str = i18n.DEFAULT) -> Derivation:
    """With every gate g_it = 1, CoPE's position p_ij = Σ_{t=j..i} g_it is i − j + 1
    (Golovneva et al. 2024, method section; METHODS.md §11)."""
    t = sp.Symbol("t", integer=True)
    g = sp.IndexedBase("g", real=True)
    steps = (
        start(sp.Sum(g[i_, t], (t, j_, i_)), _w(lang, "cope-all-gates-open.step0")),
        step(sp.Sum(1, (t, j_, i_)), _w(lang, "cope-all-gates-open.step1")),
        step(sp.Add(i_, -j_, 1, evaluate=False), _w(lang, "cope-all-gates-open.step2")),
    )
    return Derivation(
        id="cope-all-gates-open",
        steps=steps,
        claim_expr=sp.Add(i_, -j_, 1, evaluate=False),
        parameters=tuple(_position_params(lang, "i", "j")),
        where=((g, sp.Lambda((i_, t), 1)),),
        **_texts(lang, "cope-all-gates-open"),
    )


# ---------------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------------


def _build_all(lang: str) -> tuple[Derivation, ...]:
    return (
        sinusoidal_dot_product(lang=lang),
        sinusoidal_shift(lang=lang),
        rope_complex_2d(lang),
        rope_matrix_2d(lang),
        rope_block_diagonal(4, lang),
        rope_block_diagonal(6, lang),
        rope_relative_block(lang),
        absolute_pe_attention(lang),
        deberta_three_terms(lang),
        alibi_shift_invariance(lang),
        t5_shift_invariance(lang),
        cope_all_gates_open(lang),
    )


# Builders are cheap (expression construction only; no simplification), so the registry is
# built once at import as an immutable tuple: in English, the language of the proofs and tests.
# Another language's registry holds the same sympy objects with other words; it is built the
# first time it is asked for and kept.
ALL_DERIVATIONS: tuple[Derivation, ...] = _build_all(i18n.DEFAULT)

_BY_ID = {d.id: d for d in ALL_DERIVATIONS}
assert len(_BY_ID) == len(ALL_DERIVATIONS), "derivation ids must be unique"
_BY_LANG: dict[str, dict[str, Derivation]] = {i18n.DEFAULT: _BY_ID}


def _registry(lang: str) -> dict[str, Derivation]:
    lang = i18n.valid(lang)
    if lang not in _BY_LANG:
        _BY_LANG[lang] = {d.id: d for d in _build_all(lang)}  # a race builds it twice: harmless
    return _BY_LANG[lang]


def all_derivations(lang: str = i18n.DEFAULT) -> tuple[Derivation, ...]:
    """Every registered derivation, in the order of ALL_DERIVATIONS, with its words in `lang`."""
    return tuple(_registry(lang).values())


def get(derivation_id: str, lang: str = i18n.DEFAULT) -> Derivation:
    """The registered derivation with this id, its words in `lang` (KeyError lists the known ids)."""
    try:
        return _registry(lang)[derivation_id]
    except KeyError:
        raise KeyError(f"unknown derivation {derivation_id!r}; known: {sorted(_BY_ID)}") from None


def registered(derivation: Derivation) -> bool:
    """True if `derivation` is a registered one (in any language), not a test's modified copy."""
    return any(reg.get(derivation.id) is derivation for reg in list(_BY_LANG.values()))
