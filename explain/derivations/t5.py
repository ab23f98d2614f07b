"""T5's relative bias (Raffel et al. 2020, §2.1; METHODS.md §5): b(i, j) = β_h(bucket(j − i))
depends only on j − i, by construction; numbers use T5's real bucket rule."""

from __future__ import annotations

import sympy as sp

from explain import i18n
from explain.derivations.common import i_, j_, minus, position_params, shifted, texts, word
from explain.derivations.types import Derivation, start, step


def _t5_bucket(r: sp.Expr, num_buckets: int = 32, max_distance: int = 128) -> sp.Expr:
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
        start(b(shifted(i_), shifted(j_)), word(lang, "t5-shift-invariance.step0")),
        step(beta(bucket(minus(shifted(j_), shifted(i_)))), word(lang, "t5-shift-invariance.step1")),
        step(beta(bucket(minus(j_, i_))), word(lang, "t5-shift-invariance.step2"), changed=minus(j_, i_)),
        step(b(i_, j_), word(lang, "t5-shift-invariance.step3")),
    )
    return Derivation(
        id="t5-shift-invariance",
        steps=steps,
        claim_expr=sp.Eq(b(shifted(i_), shifted(j_)), b(i_, j_), evaluate=False),
        parameters=tuple(position_params(lang, "i", "j", "c")),
        where=((b, sp.Lambda((i_, j_), beta(bucket(j_ - i_)))),),
        # Deviation: numbers need concrete functions. bucket is T5's real bidirectional rule
        # (32 buckets, max distance 128); β_h stands in for the learned table.
        stand_ins=((bucket, sp.Lambda(r, _t5_bucket(r))), (beta, sp.Lambda(r, -r / sp.Integer(10)))),
        **texts(lang, "t5-shift-invariance", notes=1),
    )
