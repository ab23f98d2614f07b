"""CoPE (Golovneva et al. 2024, method section; METHODS.md §11): with every gate open, the
contextual position of key j seen from query i is i − j + 1."""

from __future__ import annotations

import sympy as sp

from explain import i18n
from explain.derivations.common import i_, j_, position_params, texts, word
from explain.derivations.types import Derivation, start, step


def cope_all_gates_open(lang: str = i18n.DEFAULT) -> Derivation:
    """With every gate g_it = 1, CoPE's position p_ij = Σ_{t=j..i} g_it is i − j + 1
    (Golovneva et al. 2024, method section; METHODS.md §11)."""
    t = sp.Symbol("t", integer=True)
    g = sp.IndexedBase("g", real=True)
    steps = (
        start(sp.Sum(g[i_, t], (t, j_, i_)), word(lang, "cope-all-gates-open.step0")),
        step(sp.Sum(1, (t, j_, i_)), word(lang, "cope-all-gates-open.step1")),
        step(sp.Add(i_, -j_, 1, evaluate=False), word(lang, "cope-all-gates-open.step2")),
    )
    return Derivation(
        id="cope-all-gates-open",
        steps=steps,
        claim_expr=sp.Add(i_, -j_, 1, evaluate=False),
        parameters=tuple(position_params(lang, "i", "j")),
        where=((g, sp.Lambda((i_, t), 1)),),
        **texts(lang, "cope-all-gates-open"),
    )
