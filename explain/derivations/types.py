"""The data of a derivation: its steps, parameters and the reports `verify` writes about it.

Frozen and language-free apart from the words a builder puts in (titles, rules, labels). sympy ships
no type information, so to the type checker every sympy type below is `Any`; the annotations still
say which sympy object is meant.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import sympy as sp

# (old, new): a substitution, a definition (`where`) or a stand-in for numbers.
Pair = tuple[sp.Basic, sp.Basic]
# Why a check failed, as catalogue parts: ((key, ((name, value), ...)), ...) (prover.message_text).
Reason = tuple[tuple[str, tuple[tuple[str, object], ...]], ...]

STEP_KINDS = ("start", "equal", "substitution")


def _freeze(expr: object) -> sp.Basic:
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
    substitution: tuple[Pair, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "expr", _freeze(self.expr))
        if self.changed is not None:
            object.__setattr__(self, "changed", _freeze(self.changed))
        object.__setattr__(self, "substitution", tuple((_freeze(a), _freeze(b)) for a, b in self.substitution))
        if self.kind not in STEP_KINDS:
            raise ValueError(f"unknown step kind {self.kind!r}; expected one of {STEP_KINDS}")
        if (self.kind == "substitution") != bool(self.substitution):
            raise ValueError("a substitution step needs its (old, new) pairs, and only it has them")


def start(expr: object, rule: str = "start") -> Step:
    return Step(expr, rule, kind="start")


def step(expr: object, rule: str, changed: object = None) -> Step:
    return Step(expr, rule, changed=changed)


def substitute(expr: object, rule: str, pairs: Iterable[Pair], changed: object = None) -> Step:
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
    where: tuple[Pair, ...] = ()
    stand_ins: tuple[Pair, ...] = ()
    source: str = ""
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
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
    reason: Reason = ()


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
