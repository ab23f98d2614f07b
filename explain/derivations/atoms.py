"""Matrix atoms and the LaTeX printer: what a step looks like on the page.

A step such as  qᵀ R(−mθ) R(nθ) k  should read like the paper, yet be checkable entry by entry.
The atoms here print as their symbol and expand to an explicit sympy matrix only inside `verify` /
`numeric_check` (prover.py), so display and proof are the same object.
"""

from __future__ import annotations

from typing import cast

import sympy as sp
from sympy.core.symbol import Str
from sympy.matrices.expressions import MatrixExpr
from sympy.printing.latex import LatexPrinter

from explain.derivations.types import Derivation, Step

HIGHLIGHT_COLOR = "#d62728"


# sympy ships no type information, so its classes are `Any` to the type checker.
class Atom(MatrixExpr):  # type: ignore[misc]
    """A matrix expression whose explicit entries are known (see `as_explicit`)."""

    def _entry(self, i: int, j: int, **kwargs: object) -> sp.Basic:
        return self.as_explicit()[i, j]


class Named(Atom):
    """A named matrix or vector: prints as `name` (LaTeX), proves with `matrix`.

    Defining a compound name (e.g. Q^c_i := W_q x_i) is just giving `matrix` the explicit
    product, which makes "name the projections" a checkable equality instead of prose.
    """

    def __new__(cls, name: str | Str, matrix: object) -> Named:
        name = name if isinstance(name, Str) else Str(name)
        return cast(Named, MatrixExpr.__new__(cls, name, sp.ImmutableMatrix(matrix)))

    @property
    def name(self) -> str:
        return cast(str, self.args[0].name)

    @property
    def shape(self) -> tuple[int, int]:
        return cast(tuple[int, int], self.args[1].shape)

    def as_explicit(self) -> sp.ImmutableMatrix:
        return self.args[1]

    def _latex(self, printer: LatexPrinter) -> str:
        return self.name


class Rot(Atom):
    """The 2-D rotation R(a) = [[cos a, −sin a], [sin a, cos a]] (RoFormer §3.2.1)."""

    def __new__(cls, angle: object) -> Rot:
        return cast(Rot, MatrixExpr.__new__(cls, sp.sympify(angle)))

    @property
    def angle(self) -> sp.Expr:
        return self.args[0]

    @property
    def shape(self) -> tuple[sp.Integer, sp.Integer]:
        return (sp.Integer(2), sp.Integer(2))

    def as_explicit(self) -> sp.ImmutableMatrix:
        a = self.angle
        return sp.ImmutableMatrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])

    def _latex(self, printer: LatexPrinter) -> str:
        return rf"R\left({printer._print(self.angle)}\right)"


class RopeMatrix(Atom):
    """RoFormer's block-diagonal R^d_{Θ,pos} = diag(R(pos·θ_1), …, R(pos·θ_{d/2})) (§3.2.2)."""

    def __new__(cls, position: object, thetas: list[sp.Symbol]) -> RopeMatrix:
        return cast(RopeMatrix, MatrixExpr.__new__(cls, sp.sympify(position), sp.Tuple(*thetas)))

    @property
    def position(self) -> sp.Expr:
        return self.args[0]

    @property
    def thetas(self) -> tuple[sp.Expr, ...]:
        return tuple(self.args[1])

    @property
    def shape(self) -> tuple[sp.Integer, sp.Integer]:
        d = 2 * len(self.thetas)
        return (sp.Integer(d), sp.Integer(d))

    def as_explicit(self) -> sp.ImmutableMatrix:
        blocks = [Rot(self.position * t).as_explicit() for t in self.thetas]
        return sp.ImmutableMatrix(sp.diag(*blocks))

    def _latex(self, printer: LatexPrinter) -> str:
        return rf"R^{{{2 * len(self.thetas)}}}_{{\Theta,\,{printer._print(self.position)}}}"


class _Printer(LatexPrinter):  # type: ignore[misc]  # sympy's classes are `Any` to the type checker
    """sympy's LaTeX printer with a paper-like transpose (no parentheses around a name)."""

    def _print_Transpose(self, expr: sp.Transpose) -> str:
        arg = expr.arg
        if isinstance(arg, (Named, Rot, RopeMatrix)):
            return rf"{{{self._print(arg)}}}^{{\top}}"
        return rf"\left({self._print(arg)}\right)^{{\top}}"


def to_latex(obj: Step | sp.Basic, highlight: bool = False, color: str = HIGHLIGHT_COLOR) -> str:
    """LaTeX for a Step (or any sympy expression).

    With highlight=True the step's `changed` sub-expression is coloured (KaTeX \\textcolor) when
    it appears verbatim in the printed line.
    """
    printer = _Printer({"order": "none"})
    expr = obj.expr if isinstance(obj, Step) else obj
    tex: str = printer.doprint(expr)
    if highlight and isinstance(obj, Step) and obj.changed is not None:
        part: str = printer.doprint(obj.changed)
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
