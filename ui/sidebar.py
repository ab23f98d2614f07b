"""The shared sidebar: the learner's sentence, the seed and example sentences.

Values live in st.session_state under fixed keys ("sentence", "seed") and are mirrored in the URL
query string (?s=…&seed=…) so that a link restores them. Everything is bounded: the text box takes
MAX_CHARS characters, the seed 0…MAX_SEED, and a URL cannot smuggle in more.
"""

from __future__ import annotations

import streamlit as st

from encoders.text import MAX_CHARS, MAX_TOKENS
from explain.i18n import t as t_in
from ui import classroom
from ui.i18n import t

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
    "cope_counting": "a a a a b a a a b b",
    "paragraph": (
        "Attention compares every word with every other word at once. That is its strength: no "
        "recurrence, no waiting. It is also its blind spot, because a set of words has no order. "
        "Positional encodings put the order back. Some add a vector to each word, some rotate the "
        "queries and keys, some bend the scores directly. Which one a model uses decides what it can "
        "learn about distance, and how it behaves on texts longer than any it saw in training."
    ),
}


def _restore_from_url() -> None:
    """First run of a session: take sentence and seed from the URL if present, else defaults.
    A session that opens in Korean starts from a Korean sentence."""
    params = st.query_params
    if "sentence" not in st.session_state:
        default = t("common.sidebar.default_sentence")
        st.session_state.sentence = str(params.get("s", default))[:MAX_CHARS]
    if "seed" not in st.session_state:
        try:
            seed = int(str(params.get("seed", "0"))[:12])
        except ValueError:
            seed = 0
        st.session_state.seed = min(max(seed, 0), MAX_SEED)


def _load_example() -> None:
    choice = st.session_state.get("example")
    if choice in EXAMPLES:
        st.session_state.sentence = EXAMPLES[choice]
    st.session_state.example = None  # the box shows its placeholder again


def shared_sidebar() -> None:
    _restore_from_url()
    classroom.restore_presenter()
    classroom.restore_lesson()
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
            # Names looked up once per run: AppTest calls format_func again outside the run, where
            # the language is not this session's.
            format_func={k: t(f"common.examples.{k}") for k in EXAMPLES}.get,
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
        classroom.presenter_toggle()
        classroom.lesson_sidebar()
    _mirror_to_url()
    classroom.mirror_presenter()
    classroom.mirror_lesson()


def _mirror_to_url() -> None:
    wanted = {"s": st.session_state.sentence, "seed": str(st.session_state.seed)}
    for key, value in wanted.items():
        if st.query_params.get(key) != value:
            st.query_params[key] = value
