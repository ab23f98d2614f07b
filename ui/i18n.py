"""The language switch: English or Korean, kept in the session and in the URL (?lang=ko).

The switch is created in the frame before anything else renders, and `activate()` tells
explain.i18n which language this script run speaks; every page then asks `t("file.name")` for its
words and `ui.common.prose` for its paragraphs.
"""

from __future__ import annotations

import streamlit as st

from explain import i18n
from explain.i18n import LANGS, NAMES

KEY = "lang"  # session-state key and URL parameter (?lang=ko)


def lang() -> str:
    """This learner's language: the switch's value, or on the very first run the URL's."""
    value = st.session_state.get(KEY)
    if value is None:
        value = st.query_params.get(KEY)
    return i18n.valid(value)


def activate() -> str:
    """Set the language of this script run (call first thing in every run)."""
    current = lang()
    i18n.set_language(current)
    return current


def t(key: str, /, **values) -> str:
    return i18n.t(key, i18n.language(), **values)


def language_switch() -> None:
    """English / 한국어 in the sidebar, mirrored in the URL by hand as ?lang=ko (English, the
    default, leaves the URL clean). Not bound with bind="query-params": for a segmented control
    that writes the shown name ("?lang=한국어"), not the value, into the address."""
    if KEY not in st.session_state:
        st.session_state[KEY] = lang()  # first run of a session: a ?lang=ko link
    with st.sidebar:
        st.segmented_control(
            t("common.language_label"),
            LANGS,
            key=KEY,
            format_func=NAMES.get,
            selection_mode="single",
            label_visibility="collapsed",
            required=True,
        )
    current = activate()
    if current == i18n.DEFAULT:
        if KEY in st.query_params:
            del st.query_params[KEY]
    elif st.query_params.get(KEY) != current:
        st.query_params[KEY] = current
