"""Chapter: Derivations — every relative-position identity, each step proven by sympy on this server."""

import streamlit as st

from explain import derivations as D
from ui import derivation as UD
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

# The chosen identity is shareable: ?d=<id> in the address opens it.
if "derivation" not in st.session_state:
    wanted = st.query_params.get("d")
    st.session_state.derivation = wanted if wanted in ids else ids[0]
pick, every = st.columns([3, 1], vertical_alignment="bottom")
show_all = every.toggle(
    "Show all on one page", key="derivations_all",
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
