"""Chapter: Derivations — every relative-position identity, each step proven by sympy on this server."""

import numpy as np
import streamlit as st

from explain import derivations as D
from explain.chapters import sinusoidal as sin_ch
from ui import derivation as UD
from ui.classroom import URL, predict
from ui.common import header, prose

KEY = "derivations"
header(KEY, sources=(D.verify, D._check_step, D._scalar_equal))
prose(KEY, "intro")

ids = [d.id for d in D.ALL_DERIVATIONS]
reports = {i: UD.verified(i)[0] for i in ids}  # cached per id: proven once per server, not per rerun

st.subheader(f"All {len(ids)} identities")
st.markdown(UD.catalogue(reports))

st.subheader("How to read a derivation")
prose(KEY, "reading")

# The answer is measured on the sinusoidal table itself (32 positions, d = 16): is PE(m)·PE(n) constant
# along diagonals (a function of n − m), along anti-diagonals (of m + n), or neither?
_P = sin_ch.pe_matrix(32, 16, 10_000.0)
_S = _P @ _P.T  # (m, n)
_by_diff = max(float(np.ptp(np.diagonal(_S, k))) for k in range(-31, 32))
_by_sum = max(float(np.ptp(np.diagonal(_S[:, ::-1], k))) for k in range(-31, 32))
_options = ("only on the distance n − m", "only on the sum m + n", "on m and n separately")
predict(
    "derivations_q", "Before reading the first proof: the dot product PE(m)·PE(n) of two sinusoidal "
    "position vectors depends…", _options,
    _options[0] if _by_diff < 1e-9 else _options[1] if _by_sum < 1e-9 else _options[2],
    f"Only on n − m. Measured on 32 positions with d = 16: along every diagonal n − m = const the dot product "
    f"varies by at most {_by_diff:.1e}, along m + n = const by up to {_by_sum:.2f}. The identity "
    "sin a·sin b + cos a·cos b = cos(a − b) turns each pair's product into cos((n − m)ω_f); the derivation "
    f"“{D.get('sinusoidal-dot-product').title}” proves it line by line.",
)

# The chosen identity is shareable: ?d=<id> in the address opens it.
if "derivation" not in st.session_state:
    wanted = st.query_params.get("d")
    st.session_state.derivation = wanted if wanted in ids else ids[0]
pick, every = st.columns([3, 1], vertical_alignment="bottom")
show_all = every.toggle(
    "Show all on one page", key="derivations_all", **URL,
    help=f"All {len(ids)} derivations one after another, for scrolling or printing.",
)
choice = pick.selectbox(
    "Identity", ids, key="derivation", disabled=show_all,
    format_func=lambda i: f"{D.get(i).title}  ·  {UD.CHAPTER_OF.get(i, '')}",
    help=f"One of the {len(ids)} identities; the address keeps your choice, so a link opens it.",
)
if st.query_params.get("d") != choice:
    st.query_params["d"] = choice

for derivation_id in (ids if show_all else [choice]):
    with st.container(border=False):
        UD.show_derivation(derivation_id, key_prefix="all" if show_all else "one")
    if show_all:
        st.divider()

st.subheader("What “verified” means")
prose(KEY, "verified")
st.subheader("Substitution steps: modelling choices, checked as replacements")
prose(KEY, "substitution")
