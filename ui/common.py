"""Streamlit-side helpers every chapter page shares: header, the learner's tokens, plots, prose.

Pages stay thin: widgets → a cached call into explain/ → a figure from explain/figures → these.
"""

from __future__ import annotations

import inspect

import streamlit as st

from encoders.base import Paper
from encoders.text import MAX_TOKENS, Tokens, tokenize
from explain.prose import section
from ui.chapters import BY_KEY

PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"scale": 2}}


def header(chapter_key: str, paper: Paper | None = None, sources: tuple = ()) -> None:
    """Title, the one-line idea, the paper, and the live source of what the page runs."""
    chapter = BY_KEY[chapter_key]
    st.title(chapter.title)
    st.markdown(f"*{chapter.idea}*")
    if paper is not None:
        st.caption(f"📄 {paper.authors} ({paper.year}). [{paper.title}]({paper.url})")
    if sources:
        with st.expander("Show the code this page runs"):
            st.caption(
                "The source of the functions this page runs, read live from the running program — "
                "not a copy."
            )
            for obj in sources:
                st.code(inspect.getsource(obj), language="python")


def prose(chapter_key: str, key: str) -> None:
    st.markdown(section(chapter_key, key))


def sentence_tokens(max_tokens: int = MAX_TOKENS) -> Tokens:
    """The shared sentence, tokenised. Stops the page with a friendly note when there is no text,
    and says how many tokens were kept when the text is longer than the page draws."""
    tokens = tokenize(st.session_state.get("sentence", ""), max_tokens=max_tokens)
    if tokens.empty:
        st.info(
            "There is no text to work on yet. Type a sentence in the sidebar (or pick an example) "
            "and this page will draw it."
        )
        st.stop()
    if tokens.truncated:
        st.warning(
            f"Your text has {tokens.n_found:,} tokens; this page draws the first {len(tokens)}."
            + (" (The text itself was cut at 10,000 characters.)" if tokens.chars_cut else "")
        )
    return tokens


def inline_tokens(tokens) -> str:
    """Tokens as Markdown code spans, safe for any typed text: inside a code span nothing is
    interpreted (no links, no emphasis, no math). The tokenizer makes a backtick a token of its
    own, and a lone backtick needs a double-backtick fence with spaces."""
    return " · ".join(f"`` {t} ``" if "`" in t else f"`{t}`" for t in tokens)


def seed() -> int:
    return int(st.session_state.get("seed", 0))


def plot(fig, key: str) -> None:
    st.plotly_chart(fig, key=key, width="stretch", config=PLOT_CONFIG)
