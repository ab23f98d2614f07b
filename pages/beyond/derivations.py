"""Chapter: Derivations — every relative-position identity, each step proven by sympy on this server."""

import numpy as np
import streamlit as st

from explain import derivations as D
from explain import i18n
from explain.chapters import sinusoidal as sin_ch
from explain.derivations import prover
from explain.derivations import view as DV
from ui import derivation as UD
from ui.common import header, prose
from ui.i18n import t
from ui.question import predict
from ui.url_state import URL

KEY = "derivations"
header(KEY, sources=(prover.verify, prover._check_step, prover._scalar_equal))
prose(KEY, "intro")

ids = [d.id for d in D.ALL_DERIVATIONS]
reports = {i: UD.verified(i)[0] for i in ids}  # cached per id: proven once per server, not per rerun

st.subheader(t("derivations.page.all_identities", n=len(ids)))
st.markdown(DV.catalogue(reports))

st.subheader(t("derivations.page.how_to_read"))
prose(KEY, "reading")

# The answer is measured on the sinusoidal table itself (32 positions, d = 16): is PE(m)·PE(n) constant
# along diagonals (a function of n − m), along anti-diagonals (of m + n), or neither?
# The table is float32, so "constant" means constant up to its rounding: products of 16 entries of
# size ≤ 1 drift by ~1e-6, far below the spread of a real dependence (> 1 here).
_CONSTANT = 1e-4
_P = sin_ch.pe_matrix(32, 16, 10_000.0).astype(np.float64)
_S = _P @ _P.T  # (m, n)
_by_diff = max(float(np.ptp(np.diagonal(_S, k))) for k in range(-31, 32))
_by_sum = max(float(np.ptp(np.diagonal(_S[:, ::-1], k))) for k in range(-31, 32))
_options = ("difference", "sum", "separately")  # stable ids: the words come from the catalogue
_lang = i18n.language()
predict(
    "derivations_q",
    t("derivations.page.predict_question"),
    _options,
    _options[0] if _by_diff < _CONSTANT else _options[1] if _by_sum < _CONSTANT else _options[2],
    t(
        "derivations.page.predict_explanation",
        by_diff=_by_diff,
        by_sum=_by_sum,
        title=D.get("sinusoidal-dot-product", _lang).title,
    ),
    format_func=lambda v: t(f"derivations.page.option.{v}"),
)

# The chosen identity is shareable: ?d=<id> in the address opens it.
if "derivation" not in st.session_state:
    wanted = st.query_params.get("d")
    st.session_state.derivation = wanted if wanted in ids else ids[0]
pick, every = st.columns([3, 1], vertical_alignment="bottom")
show_all = every.toggle(
    t("derivations.page.show_all"),
    key="derivations_all",
    **URL,
    help=t("derivations.page.show_all_help", n=len(ids)),
)
choice = pick.selectbox(
    t("derivations.page.identity"),
    ids,
    key="derivation",
    disabled=show_all,
    format_func=lambda i: t(
        "derivations.page.identity_option", title=D.get(i, _lang).title, chapter=DV.chapter_title(i, _lang)
    ),
    help=t("derivations.page.identity_help", n=len(ids)),
)
if st.query_params.get("d") != choice:
    st.query_params["d"] = choice

for derivation_id in ids if show_all else [choice]:
    with st.container(border=False):
        UD.show_derivation(derivation_id, key_prefix="all" if show_all else "one")
    if show_all:
        st.divider()

st.subheader(t("derivations.page.verified_heading"))
prose(KEY, "verified")
st.subheader(t("derivations.page.substitution_heading"))
prose(KEY, "substitution")
