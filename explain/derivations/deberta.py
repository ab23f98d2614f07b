"""DeBERTa's disentangled attention (He et al. 2021, §3.1, Eq. 4; METHODS.md §6): from the same
four-term expansion, content-to-content + content-to-position + position-to-content."""

from __future__ import annotations

from sympy.matrices.expressions import MatAdd, MatMul, ZeroMatrix

from explain import i18n
from explain.derivations.atoms import Named
from explain.derivations.common import T, four_terms, mat, texts, vec, word
from explain.derivations.types import Derivation, step, substitute


def deberta_three_terms(lang: str = i18n.DEFAULT) -> Derivation:
    """DeBERTa's disentangled attention (He et al. 2021, §3.1, Eq. 4; METHODS.md §6),
    from the same four-term expansion, i = query, j = key, r = i − j (query − key)."""
    wq, pw = mat("W_qc", r"W_{q,c}", lang)
    wk, pk_ = mat("W_kc", r"W_{k,c}", lang)
    xi, px = vec("x_i", r"\mathbf{x}_i", lang)
    pi, ppi = vec("p_i", r"\mathbf{p}_i", lang)
    xj, pxj = vec("x_j", r"\mathbf{x}_j", lang)
    pj, ppj = vec("p_j", r"\mathbf{p}_j", lang)
    wkr, pwkr = mat("W_kr", r"W_{k,r}", lang)
    wqr, pwqr = mat("W_qr", r"W_{q,r}", lang)
    prel, pp = vec("P_d", r"\mathbf{P}_{\delta(i,j)}", lang)

    expansion = four_terms(wq, wk, xi, pi, xj, pj, lang)
    c2c = MatMul(T(xi), T(wq), wk, xj)
    c2p = MatMul(T(xi), T(wq), wkr, prel)
    p2c = MatMul(T(prel), T(wqr), wk, xj)
    # Name the projections (paper: Q_c = H W_q,c, K_r = P W_k,r, ...): definitions, so equalities.
    qc = Named(r"\mathbf{Q}^{c}_{i}", wq.as_explicit() * xi.as_explicit())
    kc = Named(r"\mathbf{K}^{c}_{j}", wk.as_explicit() * xj.as_explicit())
    kr = Named(r"\mathbf{K}^{r}_{\delta(i,j)}", wkr.as_explicit() * prel.as_explicit())
    qr = Named(r"\mathbf{Q}^{r}_{\delta(i,j)}", wqr.as_explicit() * prel.as_explicit())
    named = MatAdd(MatMul(T(qc), kc), MatMul(T(qc), kr), MatMul(T(qr), kc))
    steps = (
        *expansion,
        substitute(
            MatAdd(MatMul(T(xi), T(wq), wk, xj), MatMul(T(xi), T(wq), wk, pj), MatMul(T(pi), T(wq), wk, xj)),
            word(lang, "deberta-three-terms.step3"),
            [(MatMul(T(pi), T(wq), wk, pj), ZeroMatrix(1, 1))],
        ),
        substitute(
            MatAdd(c2c, c2p, MatMul(T(pi), T(wq), wk, xj)),
            word(lang, "deberta-three-terms.step4"),
            [(MatMul(wk, pj), MatMul(wkr, prel))],
            changed=prel,
        ),
        substitute(
            MatAdd(c2c, c2p, p2c),
            word(lang, "deberta-three-terms.step5"),
            [(MatMul(T(pi), T(wq)), MatMul(T(prel), T(wqr)))],
        ),
        step(named, word(lang, "deberta-three-terms.step6")),
    )
    return Derivation(
        id="deberta-three-terms",
        steps=steps,
        claim_expr=named,
        parameters=tuple(pw + pk_ + px + ppi + pxj + ppj + pwkr + pwqr + pp),
        **texts(lang, "deberta-three-terms", notes=2),
    )
