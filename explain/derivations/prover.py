"""The prover: every step of a derivation checked against the one before it, by sympy.

`verify(derivation)` proves each equality step (structural, evaluate, per-term, expand,
expand_trig, complex, trigsimp, simplify — the first that works is named in the report) and checks
each substitution step by applying its stated replacement; `numeric_check` and `step_values`
evaluate the lines at a learner's numbers. Matrix atoms (atoms.py) are expanded to their explicit
entries here and only here.

sympy ships no type information: its results are `Any` to the type checker, so the annotations
below say which sympy object is meant, and a `cast` marks where a sympy result becomes a Python
value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

import sympy as sp
from sympy.matrices.expressions import BlockDiagMatrix, MatAdd, MatMul, MatrixExpr, Transpose

from explain import i18n
from explain.derivations.atoms import Atom, Named
from explain.derivations.types import Derivation, Pair, Reason, StepCheck, VerifyReport

# A number a learner gives for one line's value: float, or rows of floats for a matrix.
Value = float | list[list[float]]


def _w(lang: str, key: str, /, **values: object) -> str:
    """A word of this module from the catalogue: derivations.<key> in `lang`."""
    return i18n.t(f"derivations.{key}", lang, **values)


def _reason(key: str, **values: object) -> Reason:
    """One part of why a check failed, as a catalogue key (message.<key>) and its values."""
    return ((key, tuple(values.items())),)


def _render_reason(parts: Reason, lang: str) -> str:
    return "".join(_w(lang, f"message.{key}", **dict(values)) for key, values in parts)


def message_text(check: StepCheck, lang: str = i18n.DEFAULT) -> str:
    """Why `check` failed, in `lang` ("" when it passed); a check without parts keeps its message."""
    return _render_reason(check.reason, lang) if check.reason else check.message


def _failed(index: int, rule: str, parts: Reason) -> StepCheck:
    return StepCheck(index, rule, False, "", _render_reason(parts, i18n.DEFAULT), parts)


# ---------------------------------------------------------------------------------------------
# Turning expressions into something a CAS can compare
# ---------------------------------------------------------------------------------------------


def _is_matrix(e: sp.Basic) -> bool:
    return bool(getattr(e, "is_Matrix", False))


def _explicit(e: sp.Basic) -> sp.Basic:
    """Replace every matrix expression by its explicit entries; scalars pass through."""
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e)
    if isinstance(e, Atom):
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


def _unfold_one(e: sp.Basic, old: sp.Basic, new: sp.Basic) -> sp.Basic:
    if isinstance(old, sp.FunctionClass):
        return e.replace(old, new)
    if isinstance(old, sp.IndexedBase):
        return e.replace(
            lambda x: isinstance(x, sp.Indexed) and x.base == old,
            lambda x: new(*x.indices) if isinstance(new, sp.Lambda) else new,
        )
    return e.xreplace({old: new})


def _unfold(e: sp.Basic, pairs: tuple[Pair, ...]) -> sp.Basic:
    """Apply `where` (or stand-in) replacements to an explicit expression or matrix."""
    if not pairs:
        return e
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e.applyfunc(lambda x: _unfold(x, pairs)))
    for old, new in pairs:
        e = _unfold_one(e, old, new)
    return e


def _prepare(e: sp.Basic, pairs: tuple[Pair, ...]) -> sp.Basic:
    e = _unfold(_explicit(e), pairs)
    if isinstance(e, sp.MatrixBase) and e.shape == (1, 1):
        # A 1×1 matrix is the scalar qᵀk; compare it with scalar lines directly.
        return e[0, 0]
    return e


# Order of the scalar tests, cheapest first; a report names the first that succeeded.
_METHODS = ("structural", "evaluate", "per-term", "expand", "expand_trig", "complex", "trigsimp", "simplify")


def _scalar_equal(a: sp.Expr, b: sp.Expr) -> str | None:
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


def _nonzero_somewhere(expr: sp.Expr) -> bool:
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


def _equal(a: sp.Basic, b: sp.Basic, where: tuple[Pair, ...]) -> tuple[str | None, Reason]:
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


def _replace(e: sp.Basic, old: sp.Basic, new: sp.Basic) -> tuple[sp.Basic, int]:
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
        out: list[sp.Basic] = []
        count, i = 0, 0
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


def apply_substitution(expr: sp.Basic, pairs: Iterable[Pair]) -> tuple[sp.Basic, list[sp.Basic]]:
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


def _symbols_of(e: sp.Basic) -> set[sp.Basic]:
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
    return dict(_free_symbols(derivation))


# A Numbers panel evaluates its derivation at every number a learner types; what does not depend on
# the numbers (which symbols need one, each step's explicit entries) is the same each time, and was
# half of the ~50 ms an evaluation took. Bounded by the registry's size (17 derivations, 2 languages).
@lru_cache(maxsize=64)
def _free_symbols(derivation: Derivation) -> tuple[tuple[str, sp.Basic], ...]:
    pairs = derivation.where + derivation.stand_ins
    found: set[sp.Basic] = set()
    for s in derivation.steps:
        shown = _explicit(s.expr)
        found |= _symbols_of(shown) | _symbols_of(shown.doit())
        found |= _symbols_of(_unfold(shown, pairs).doit())
    return tuple((str(x), x) for x in found)


@lru_cache(maxsize=256)  # the steps of the registry's derivations in both languages
def _explicit_done(expr: sp.Basic) -> sp.Basic:
    return _explicit(expr).doit()


def _bind(derivation: Derivation, values: Mapping[str, float] | None) -> dict[sp.Basic, sp.Basic]:
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


def _to_float(x: sp.Expr) -> float:
    z = complex(sp.N(x))
    if abs(z.imag) > 1e-9 * max(1.0, abs(z.real)):
        raise ValueError(f"value {z} is not real")
    return z.real


def _evaluate(expr: sp.Basic, derivation: Derivation, subs: dict[sp.Basic, sp.Basic]) -> Value:
    # Numbers go in before the definitions are unfolded, so that b(i + c, j + c) is evaluated
    # at the shifted positions rather than after sympy has already cancelled c. doit() first
    # expands sums over concrete ranges so that their ω[0], ω[1], … can receive numbers.
    e = _explicit_done(expr).xreplace(subs)
    # The definitions bring their own constants (ALiBi's slope): give those numbers too.
    e = _unfold(e, derivation.where + derivation.stand_ins).xreplace(subs).doit()
    if isinstance(e, sp.MatrixBase):
        if e.shape == (1, 1):
            return _to_float(e[0, 0])
        return [[_to_float(e[r, c]) for c in range(e.cols)] for r in range(e.rows)]
    return _to_float(e)


def step_values(derivation: Derivation, values: Mapping[str, float] | None = None) -> list[Value]:
    """The learner's numbers at every step (float, or a list of rows for a matrix)."""
    subs = _bind(derivation, values)
    return [_evaluate(s.expr, derivation, subs) for s in derivation.steps]


def numeric_check(derivation: Derivation, values: Mapping[str, float] | None = None) -> tuple[Value, Value]:
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
