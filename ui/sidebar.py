"""The shared sidebar: the learner's sentence, the seed and example sentences.

Values live in st.session_state under fixed keys ("sentence", "seed") and are mirrored in the URL
query string (?s=…&seed=…) so that a link restores them. Everything is bounded: the text box takes
MAX_CHARS characters, the seed 0…MAX_SEED, and a URL cannot smuggle in more.
"""

from __future__ import annotations

import streamlit as st

from encoders.text import MAX_CHARS, MAX_TOKENS
from ui import classroom

DEFAULT_SENTENCE = "The cat sat on the mat. The dog sat on the log."
MAX_SEED = 9_999
EXAMPLES = {
    "Two cats and a dog (the default)": DEFAULT_SENTENCE,
    "Dog bites man": "dog bites man",
    "Man bites dog": "man bites dog",
    "I like CV (shift it in “The trouble…”)": "I like CV",
    "Korean: 고양이가 매트 위에 앉았다": "고양이가 매트 위에 앉았다. 강아지가 통나무 위에 앉았다.",
    "Emoji and mixed scripts": "I ❤️ 서울 and 東京 🇰🇷🇯🇵 — don't you? 👩‍💻",
    "CoPE's counting example": "a a a a b a a a b b",
    "A longer paragraph (60+ tokens)": (
        "Attention compares every word with every other word at once. That is its strength: no "
        "recurrence, no waiting. It is also its blind spot, because a set of words has no order. "
        "Positional encodings put the order back. Some add a vector to each word, some rotate the "
        "queries and keys, some bend the scores directly. Which one a model uses decides what it can "
        "learn about distance, and how it behaves on texts longer than any it saw in training."
    ),
}


def _restore_from_url() -> None:
    """First run of a session: take sentence and seed from the URL if present, else defaults."""
    params = st.query_params
    if "sentence" not in st.session_state:
        st.session_state.sentence = str(params.get("s", DEFAULT_SENTENCE))[:MAX_CHARS]
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
            "Sentence",
            key="sentence",
            max_chars=MAX_CHARS,
            height=110,
            help=(
                f"Every chapter runs on this text. Words and punctuation become tokens; any script "
                f"and emoji work. Up to {MAX_CHARS:,} characters; pages draw at most {MAX_TOKENS} "
                "tokens and say when they cut. Press Ctrl+Enter or click outside to apply."
            ),
        )
        st.selectbox(
            "Examples",
            list(EXAMPLES),
            index=None,
            key="example",
            placeholder="Load an example sentence…",
            on_change=_load_example,
        )
        st.number_input(
            "Seed",
            key="seed",
            min_value=0,
            max_value=MAX_SEED,
            step=1,
            help=(
                f"Fixes the random toy word vectors, projections and learned tables (0–{MAX_SEED}). "
                "Same sentence and seed, same pictures."
            ),
        )
        st.caption("The sentence, the seed and each page's main controls are kept in the page address: "
                   "copy it to share this view.")
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
