"""What the identities share: their words, their symbols, and the parameters a learner may set.

A paper's file (sinusoidal.py, rope.py, …) builds its identities from these: `word` and `texts`
read the catalogue (explain/text/<lang>/strings/derivations.toml), `vec` / `mat` make a named
vector or matrix of real symbols with one labelled parameter per entry, `minus` / `times` keep a
difference or product in the paper's order on screen, and `position_params` gives the positions
and shifts their defaults.
"""

from __future__ import annotations

import math
from typing import TypedDict

import sympy as sp
from sympy.matrices.expressions import MatAdd, MatMul, Transpose

from explain import i18n
from explain.derivations.atoms import Named
from explain.derivations.types import Parameter, Step, start, step

# ---------------------------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------------------------


def word(lang: str, key: str, /, **values: object) -> str:
    """A word of the derivations from the catalogue: derivations.<key> in `lang`."""
    return i18n.t(f"derivations.{key}", lang, **values)


class Texts(TypedDict):
    """The words of one identity, passed to `Derivation(**texts(lang, key))`."""

    title: str
    intro: str
    claim: str
    source: str
    notes: tuple[str, ...]


def texts(lang: str, key: str, notes: int = 0) -> Texts:
    """title, intro, claim, source and the notes of one identity, from the catalogue table `key`."""
    return {
        "title": word(lang, f"{key}.title"),
        "intro": word(lang, f"{key}.intro"),
        "claim": word(lang, f"{key}.claim"),
        "source": word(lang, f"{key}.source"),
        "notes": tuple(word(lang, f"{key}.note{k}") for k in range(1, notes + 1)),
    }


# ---------------------------------------------------------------------------------------------
# Symbols, vectors and matrices
# ---------------------------------------------------------------------------------------------


def real(name: str) -> sp.Symbol:
    return sp.Symbol(name, real=True)


def integer(name: str) -> sp.Symbol:
    return sp.Symbol(name, integer=True)


def _default(k: int) -> float:
    """Deterministic, varied, readable defaults for matrix/vector entries."""
    return round(math.sin(1.7 * k + 0.3), 2)


def _entries(base: str, rows: int, cols: int, label: str) -> tuple[sp.ImmutableMatrix, list[Parameter]]:
    """A matrix (or column vector) of real symbols, with labelled parameters for each entry
    (label: the group's words, e.g. "x_m (query content)"; each entry adds " [1]" or " [1,2]")."""
    matrix: list[list[sp.Symbol]] = []
    params: list[Parameter] = []
    for r in range(rows):
        row = []
        for c in range(cols):
            name = f"{base}{r + 1}" if cols == 1 else f"{base}{r + 1}{c + 1}"
            sym = real(name)
            row.append(sym)
            where = f"[{r + 1}]" if cols == 1 else f"[{r + 1},{c + 1}]"
            params.append(Parameter(name, f"{label} {where}", _default(len(params) + 7 * len(base))))
        matrix.append(row)
    return sp.ImmutableMatrix(matrix), params


def vec(base: str, tex: str, lang: str, dim: int = 2) -> tuple[Named, list[Parameter]]:
    """A named column vector; its entries' labels are param.group.<base> in `lang`."""
    m, p = _entries(base, dim, 1, word(lang, f"param.group.{base}"))
    return Named(tex, m), p


def mat(base: str, tex: str, lang: str, dim: int = 2) -> tuple[Named, list[Parameter]]:
    """A named square matrix; its entries' labels are param.group.<base> in `lang`."""
    m, p = _entries(base, dim, dim, word(lang, f"param.group.{base}"))
    return Named(tex, m), p


def minus(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """a − b kept in that order on screen (sympy would print −b + a)."""
    return sp.Add(a, sp.Mul(-1, b, evaluate=False), evaluate=False)


def times(*factors: sp.Expr) -> sp.Expr:
    return sp.Mul(*factors, evaluate=False)


def T(expr: sp.Basic) -> Transpose:
    return Transpose(expr)


# Shared symbols. Positions are real so the identities hold for any shift, not just integers.
m, n, p, delta, theta = real("m"), real("n"), real("p"), real("Delta"), real("theta")
i_, j_, c_ = integer("i"), integer("j"), integer("c")
f_ = sp.Symbol("f", integer=True, nonnegative=True)
omega = sp.IndexedBase("omega", real=True)


def shifted(x: sp.Expr) -> sp.Expr:
    """x + c: a position moved by the shift c, kept unevaluated so the page shows it."""
    return sp.Add(x, c_, evaluate=False)


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------

# The positions and shifts a learner may set, with their defaults; the label is param.<name>.
POSITION_DEFAULTS: dict[str, float] = {"m": 3, "n": 7, "p": 5, "Delta": 2, "theta": 0.3, "i": 6, "j": 2, "c": 4}
# Parameters that are shifts (any sign) rather than 0-based positions, and the frequencies.
SHIFT_PARAMETERS = frozenset({"Delta", "c"})


def is_frequency(name: str) -> bool:
    """θ, θ_f, ω_f: the rotation and sinusoid frequencies (θ_1 … of the d-dimensional RoPE too)."""
    return name.startswith(("theta", "omega"))


def position_params(lang: str, *names: str) -> list[Parameter]:
    return [Parameter(nm, word(lang, f"param.{nm}"), POSITION_DEFAULTS[nm]) for nm in names]


def omega_params(pairs: int, lang: str) -> list[Parameter]:
    # Paper frequencies ω_f = 10000^(−2f/d) for d = 2·pairs (METHODS.md §1).
    d = 2 * pairs
    return [Parameter(f"omega[{f}]", word(lang, "param.omega_f", f=f), 10000 ** (-2 * f / d)) for f in range(pairs)]


# ---------------------------------------------------------------------------------------------
# Absolute positions inside attention (Transformer-XL and DeBERTa both start here)
# ---------------------------------------------------------------------------------------------


def four_terms(wq: Named, wk: Named, xq: Named, pq: Named, xk: Named, pk: Named, lang: str) -> tuple[Step, Step, Step]:
    """(W_q(x_q + p_q))ᵀ W_k(x_k + p_k) and its expansion, as steps (Vaswani et al. 2017's
    attention with absolute positions added to the words; Transformer-XL §3.3 and DeBERTa §3.1
    both rewrite it)."""
    steps = (
        start(MatMul(T(MatMul(wq, MatAdd(xq, pq))), MatMul(wk, MatAdd(xk, pk))), word(lang, "four-terms.step0")),
        step(MatMul(T(MatAdd(xq, pq)), T(wq), wk, MatAdd(xk, pk)), word(lang, "four-terms.step1")),
        step(
            MatAdd(
                MatMul(T(xq), T(wq), wk, xk),
                MatMul(T(xq), T(wq), wk, pk),
                MatMul(T(pq), T(wq), wk, xk),
                MatMul(T(pq), T(wq), wk, pk),
            ),
            word(lang, "four-terms.step2"),
        ),
    )
    return steps
