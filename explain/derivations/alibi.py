"""ALiBi (Press et al. 2022, §3; METHODS.md §8): the bias b(i, j) = −m_h·(i − j) is unchanged when
both positions shift by the same c."""

from __future__ import annotations

import sympy as sp

from explain import i18n
from explain.derivations.common import i_, j_, minus, position_params, real, shifted, texts, word
from explain.derivations.types import Derivation, Parameter, start, step


def alibi_shift_invariance(lang: str = i18n.DEFAULT) -> Derivation:
    """ALiBi's bias b(i, j) = −m·(i − j) is unchanged when both positions shift
    (Press et al. 2022, §3; METHODS.md §8, query − key)."""
    slope = real("m_h")
    b = sp.Function("b")
    steps = (
        start(b(shifted(i_), shifted(j_)), word(lang, "alibi-shift-invariance.step0")),
        step(-slope * minus(shifted(i_), shifted(j_)), word(lang, "alibi-shift-invariance.step1")),
        step(-slope * minus(i_, j_), word(lang, "alibi-shift-invariance.step2"), changed=minus(i_, j_)),
        step(b(i_, j_), word(lang, "alibi-shift-invariance.step3")),
    )
    return Derivation(
        id="alibi-shift-invariance",
        steps=steps,
        claim_expr=sp.Eq(b(shifted(i_), shifted(j_)), b(i_, j_), evaluate=False),
        parameters=(
            Parameter("m_h", word(lang, "param.slope"), 0.25),
            *position_params(lang, "i", "j", "c"),
        ),
        where=((b, sp.Lambda((i_, j_), -slope * (i_ - j_))),),
        **texts(lang, "alibi-shift-invariance", notes=1),
    )
