"""Chapter: Derivations — every relative-position identity, each step proven by sympy on this server.

A page only shows: the proofs come from explain/derivations/ (drawn by ui/derivation.py, cached per
identity), the question from explain/chapters/derivations.py.
"""

import streamlit as st

from explain import derivations as D
from explain.chapters import derivations as ch
from explain.derivations import view as DV
from ui import derivation as UD
from ui.cache import cached
from ui.chapters import CHAPTER_OF, chapter_title_of
from ui.common import control_row
from ui.i18n import current, t
from ui.question import ask_alone
from ui.section import open_chapter
from ui.url_state import URL

# The question's one result per language (a few numbers and words).
dot_product_question = cached(ch.dot_product_question)
page = open_chapter(ch.CHAPTER)
page.prose("intro")

ids = [d.id for d in D.ALL_DERIVATIONS]
reports = {i: UD.verified(i)[0] for i in ids}  # cached per id: proven once per server, not per rerun

st.header(t("derivations.page.all_identities", n=len(ids)))
st.markdown(DV.catalogue(reports, CHAPTER_OF))

st.header(t("derivations.page.how_to_read"))
page.prose("reading")

ask_alone(dot_product_question(current()))


@page.section(owns=("derivations_all", "derivation"))
def identities_part() -> None:
    """The identity picker, "show all" and the derivations they draw: choosing an identity or showing
    them all reruns this part alone, not the frame, the catalogue and the question above it (show all,
    timed alone: 82–96 ms as a full rerun, 62–77 ms as this fragment)."""
    lang = current()
    # The chosen identity is shareable: ?d=<id> in the address opens it.
    if "derivation" not in st.session_state:
        wanted = st.query_params.get("d")
        st.session_state.derivation = wanted if wanted in ids else ids[0]
    # The picker takes what the toggle's whole label leaves (as [3, 1] columns it read "Sho…"). Its
    # slot comes first in the row but is filled after the toggle, whose value disables it.
    row = control_row()
    pick = row.container(width="stretch")
    show_all = row.toggle(
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
            "derivations.page.identity_option", title=D.get(i, lang).title, chapter=chapter_title_of(i, lang)
        ),
        help=t("derivations.page.identity_help", n=len(ids)),
    )
    if st.query_params.get("d") != choice:
        st.query_params["d"] = choice

    for derivation_id in ids if show_all else [choice]:
        with st.container(border=False):
            UD.show_derivation(derivation_id, key_prefix="all" if show_all else "one", fold_numbers=show_all)
        if show_all:
            st.divider()


identities_part()

st.header(t("derivations.page.verified_heading"))
page.prose("verified")
st.header(t("derivations.page.substitution_heading"))
page.prose("substitution")
