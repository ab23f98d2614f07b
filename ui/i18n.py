"""The language switch: English or Korean, kept in the session and in the URL (?lang=ko).

The switch is created in the frame before anything else renders, and `activate()` tells
explain.i18n which language this script run speaks; every page then asks `t("file.name")` for its
words and `ui.common.prose` for its paragraphs.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

import streamlit as st

from explain import i18n
from explain.i18n import LANGS, NAMES
from ui.url_state import Param

KEY = "lang"  # session-state key and URL parameter (?lang=ko)
LANG = Param.choice(KEY, LANGS, default=i18n.DEFAULT)


def browser_locale() -> str | None:
    """The browser's language ("ko-KR"), or None where there is no browser (AppTest, a bare run)."""
    try:
        locale = st.context.locale
    except Exception:  # outside a session Streamlit may raise rather than answer
        return None
    return locale if isinstance(locale, str) else None


def lang() -> str:
    """This learner's language: the switch's value, or on the very first run the URL's, else the
    browser's (a Korean browser opens the app in Korean with no ?lang in the address)."""
    value = st.session_state.get(KEY)
    if value is None:
        value = i18n.choose(LANG.from_url(), browser_locale())
    return i18n.valid(value)


def _switched() -> None:
    """After the switch moved: values left at the other language's default follow the new language
    (the sentence; the trouble chapter's typed prefix, “Well,” ↔ “음,”), typed ones stay."""
    from explain.chapters.trouble import EXAMPLES  # torch-heavy; the app has it loaded by now

    new = i18n.valid(st.session_state.get(KEY))
    if isinstance(st.session_state.get("sentence"), str):
        st.session_state["sentence"] = i18n.sentence_for(st.session_state["sentence"], new)
    if "trouble_prefix" in st.session_state:
        prefixes = {lang: example.prefix for lang, example in EXAMPLES.items()}
        st.session_state["trouble_prefix"] = i18n.follow(st.session_state["trouble_prefix"], prefixes, new)


def activate() -> str:
    """Set the language of this script run (call first thing in every run)."""
    current = lang()
    i18n.set_language(current)
    return current


def current() -> str:
    """This run's language, to pass to an explain/ function whose result holds words (its cache key
    must see the language)."""
    return i18n.language()


def t(key: str, /, **values) -> str:
    return i18n.t(key, i18n.language(), **values)


def language_switch() -> None:
    """English / 한국어 in the sidebar, mirrored in the URL by hand as ?lang=ko (English, the
    default, leaves the URL clean). Not bound with bind="query-params": for a segmented control
    that writes the shown name ("?lang=한국어"), not the value, into the address."""
    if KEY not in st.session_state:
        st.session_state[KEY] = lang()  # first run of a session: a ?lang=ko link
    with st.sidebar:
        # The value lives in session state (set above), so no default is passed; Streamlit's stubs
        # want one whenever required=True.
        st.segmented_control(  # type: ignore[call-overload]
            t("common.language_label"),
            LANGS,
            key=KEY,
            format_func=NAMES.get,
            selection_mode="single",
            label_visibility="collapsed",
            required=True,
            on_change=_switched,
        )
    current = activate()
    if current == i18n.DEFAULT and i18n.from_locale(browser_locale()) not in (None, i18n.DEFAULT):
        st.query_params[LANG.param] = current  # English chosen in a Korean browser: a link must say so
    else:
        LANG.mirror(current)


def option_names(options: Iterable[Hashable], name: Callable[[Any], str]) -> Callable[[Any], str]:
    """A widget's format_func: each option's name, looked up now in this run's language. (AppTest calls
    format_func again outside the run, where the language is not this session's; a table built
    during the run answers the same there.)"""
    table = {option: name(option) for option in options}
    return table.__getitem__
