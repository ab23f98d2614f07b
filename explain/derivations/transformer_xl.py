"""Absolute positions inside attention, and Transformer-XL's relative reparametrisation (Dai et al.
2019, §3.3; METHODS.md §4): the four terms of (W_q(x + p))ᵀ W_k(x + p), then p_n → R_{m−n}, W_k
split in two, and the query's position replaced by the learned u and v."""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions import MatAdd, MatMul

from explain import i18n
from explain.derivations.atoms import Named
from explain.derivations.common import T, four_terms, m, mat, minus, n, position_params, real, texts, vec, word
from explain.derivations.types import Derivation, Parameter, substitute


def absolute_pe_attention(lang: str = i18n.DEFAULT) -> Derivation:
    """The four terms of absolute-PE attention and Transformer-XL's substitution
    (Dai et al. 2019, §3.3; METHODS.md §4; R_{i−j}, query − key)."""
    wq, pw = mat("W_q", r"W_q", lang)
    wk, pk_ = mat("W_k", r"W_k", lang)
    xm, px = vec("x_m", r"\mathbf{x}_m", lang)
    pm, ppm = vec("p_m", r"\mathbf{p}_m", lang)
    xn, pxn = vec("x_n", r"\mathbf{x}_n", lang)
    pn, ppn = vec("p_n", r"\mathbf{p}_n", lang)
    wke, pwe = mat("W_kE", r"W_{k,E}", lang)
    wkr, pwr = mat("W_kR", r"W_{k,R}", lang)
    u, pu = vec("u", r"\mathbf{u}", lang)
    v, pv = vec("v", r"\mathbf{v}", lang)
    w = real("omega_0")
    # Transformer-XL's R is the sinusoid encoding of the distance itself (here with d = 2).
    rel = minus(m, n)
    r_rel = Named(r"\mathbf{R}_{m-n}", [sp.sin(rel * w), sp.cos(rel * w)])

    expansion = four_terms(wq, wk, xm, pm, xn, pn, lang)
    term_a = MatMul(T(xm), T(wq), wke, xn)
    term_b = MatMul(T(xm), T(wq), wkr, r_rel)
    after_key = MatAdd(term_a, term_b, MatMul(T(pm), T(wq), wke, xn), MatMul(T(pm), T(wq), wkr, r_rel))
    final = MatAdd(term_a, term_b, MatMul(T(u), wke, xn), MatMul(T(v), wkr, r_rel))
    steps = (
        *expansion,
        substitute(
            MatAdd(
                MatMul(T(xm), T(wq), wk, xn),
                MatMul(T(xm), T(wq), wkr, r_rel),
                MatMul(T(pm), T(wq), wk, xn),
                MatMul(T(pm), T(wq), wkr, r_rel),
            ),
            word(lang, "absolute-pe-attention.step3"),
            [(MatMul(wk, pn), MatMul(wkr, r_rel))],
            changed=r_rel,
        ),
        substitute(
            after_key, word(lang, "absolute-pe-attention.step4"), [(MatMul(wk, xn), MatMul(wke, xn))], changed=wke
        ),
        substitute(
            final,
            word(lang, "absolute-pe-attention.step5"),
            [(MatMul(T(pm), T(wq), wke), MatMul(T(u), wke)), (MatMul(T(pm), T(wq), wkr), MatMul(T(v), wkr))],
        ),
    )
    return Derivation(
        id="absolute-pe-attention",
        steps=steps,
        claim_expr=final,
        parameters=tuple(
            [
                *position_params(lang, "m", "n"),
                Parameter("omega_0", word(lang, "param.omega_R"), 1.0),
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
        **texts(lang, "absolute-pe-attention", notes=2),
    )
