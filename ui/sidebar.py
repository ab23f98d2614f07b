"""The shared sidebar: the learner's sentence, the seed and example sentences.

Values live in st.session_state under fixed keys ("sentence", "seed") and are mirrored in the URL
query string (?s=…&seed=…) so that a link restores them. Everything is bounded: the text box takes
MAX_CHARS characters, the seed 0…MAX_SEED, and a URL cannot smuggle in more.
"""

from __future__ import annotations

import streamlit as st

from encoders.text import MAX_CHARS, MAX_TOKENS
from explain.i18n import t as t_in
from ui.i18n import lang, option_names, t
from ui.lessons import lesson_sidebar, mirror_lesson, restore_lesson
from ui.presenter import mirror_presenter, presenter_toggle, restore_presenter
from ui.url_state import Param

DEFAULT_SENTENCE = t_in("common.sidebar.default_sentence", "en")
MAX_SEED = 9_999
# Example sentences are data, the same in every language; their names in the box are words
# (common.examples.<key> in the catalogue).
EXAMPLES = {
    "default": DEFAULT_SENTENCE,
    "dog_bites_man": "dog bites man",
    "man_bites_dog": "man bites dog",
    "i_like_cv": "I like CV",
    "korean": t_in("common.sidebar.default_sentence", "ko"),
    "korean_cv": "나는 CV를 좋아해",
    "emoji": "I ❤️ 서울 and 東京 🇰🇷🇯🇵 — don't you? 👩‍💻",
    "cope_nearer_b": "a a a a b a a a b b",
    "paragraph": (
        "Attention compares every word with every other word at once. That is its strength: no "
        "recurrence, no waiting. It is also its blind spot, because a set of words has no order. "
        "Positional encodings put the order back. Some add a vector to each word, some rotate the "
        "queries and keys, some bend the scores directly. Which one a model uses decides what it can "
        "learn about distance, and how it behaves on texts longer than any it saw in training."
    ),
}


def _seed(raw: str) -> int:
    """A seed from the address: an integer (cut to 12 characters), clamped into 0…MAX_SEED."""
    return min(max(int(raw[:12]), 0), MAX_SEED)


# Always in the address (no default to drop it for): a link names the sentence and seed it shows.
SENTENCE = Param("sentence", "s", None, lambda raw: raw[:MAX_CHARS], max_raw=MAX_CHARS)
SEED = Param("seed", "seed", None, _seed)


def _restore_from_url() -> None:
    """First run of a session: take sentence and seed from the URL if present, else defaults.
    A session that opens in Korean starts from a Korean sentence."""
    SENTENCE.restore()
    SEED.restore()
    st.session_state.setdefault("sentence", t("common.sidebar.default_sentence"))
    st.session_state.setdefault("seed", 0)


def _load_example() -> None:
    choice = st.session_state.get("example")
    if choice == "default":  # the default of the learner's language, not always the English one
        st.session_state.sentence = t_in("common.sidebar.default_sentence", lang())
    elif choice in EXAMPLES:
        st.session_state.sentence = EXAMPLES[choice]
    st.session_state.example = None  # the box shows its placeholder again


def shared_sidebar() -> None:
    _restore_from_url()
    restore_presenter()
    restore_lesson()
    with st.sidebar:
        st.text_area(
            t("common.sidebar.sentence"),
            key="sentence",
            max_chars=MAX_CHARS,
            height=110,
            help=t("common.sidebar.sentence_help", max_chars=MAX_CHARS, max_tokens=MAX_TOKENS),
        )
        st.selectbox(
            t("common.sidebar.examples"),
            list(EXAMPLES),
            index=None,
            key="example",
            format_func=option_names(EXAMPLES, lambda k: t(f"common.examples.{k}")),
            placeholder=t("common.sidebar.examples_placeholder"),
            on_change=_load_example,
        )
        st.number_input(
            t("common.sidebar.seed"),
            key="seed",
            min_value=0,
            max_value=MAX_SEED,
            step=1,
            help=t("common.sidebar.seed_help", max_seed=MAX_SEED),
        )
        st.caption(t("common.sidebar.url_note"))
        st.divider()
        # The lessons before presenter mode: a learner's picker, above the lecturer's switch and its
        # link for students, so that it is on the first screen at 1280×720 in presenter mode too.
        lesson_sidebar()
        presenter_toggle()
    _mirror_to_url()
    mirror_presenter()
    mirror_lesson()


def _mirror_to_url() -> None:
    SENTENCE.mirror(st.session_state.sentence)
    SEED.mirror(st.session_state.seed)
