"""Linked values (ui/url_state.Param) when a widget's options or labels change under the learner.

A selectbox read from session state before its widget hands back its old *label* (a str) once the
labels changed: a new sentence renames every word of RoPE's word pickers, a new head count renames
every ALiBi slope. In a browser that crashed RoPE's page (`'>=' between str and int`) the moment the
learner typed a new sentence; these tests put the same stale values into a session."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import TIMEOUT, errors, open_page


def _settled(stored: object, options: list, default: object) -> object:
    """Param.settle run in a bare script on `stored`; the value it leaves in session state."""

    def script(stored, options, default) -> None:
        import streamlit as st

        from ui.url_state import Param

        if all(isinstance(o, int) for o in options):
            p = Param.integer("x", min(options), max(options) + 10, default=default)
        else:
            p = Param.choice("x", options + [default] * (default not in options), default=default)
        if stored is not None:
            st.session_state.x = stored
        p.settle(options)
        st.write(repr(st.session_state.x))

    at = AppTest.from_function(script, args=(stored, options, default), default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    return at.session_state["x"]


@pytest.mark.parametrize(
    ("stored", "options", "default", "expected"),
    [
        (None, [0, 1, 2], 1, 1),  # nothing chosen yet: the default
        (2, [0, 1, 2], 1, 2),  # a valid choice stays
        (7, [0, 1, 2], 1, 2),  # the sentence shrank: the nearest word
        ("5 · cat", [0, 1, 2, 3, 4, 5, 6], 1, 5),  # a stale label: its number
        ("9 · cat", [0, 1, 2], 1, 2),  # a stale label beyond the options: clamped
        ("head 3 · m = 1/8", [1, 2, 3], 1, 3),  # the label's first number
        ("cat", [0, 1, 2], 1, 1),  # a label with no number: the default
        (1, [0], 1, 0),  # the default itself is gone: the nearest option
        ("b", ["a", "b"], "a", "b"),
        ("gone", ["a", "b"], "b", "b"),  # a split of another task: the default
        ("c", ["a", "b"], "c", "a"),  # default gone too: the first option
    ],
)
def test_settle_leaves_a_valid_option(stored, options, default, expected):
    assert _settled(stored, options, default) == expected


def _send_stale_label(at: AppTest, key: str, label: str) -> None:
    """Make the selectbox `key` send `label` on the next run, as a browser does that still shows the
    label of the sentence before (AppTest itself always sends a current label)."""
    box = at.selectbox(key=key)

    class Stale(type(box)):  # type: ignore[misc]
        @property
        def _widget_state(self):
            state = super()._widget_state
            state.string_value = label
            return state

    box.__class__ = Stale


def test_rope_word_pickers_survive_stale_labels_after_a_new_sentence():
    at = open_page("pages/rotary/rope.py", sentence="the cat sat on the mat by the door")
    at.session_state["sentence"] = "a short one"
    at.run()
    assert not errors(at), errors(at)
    _send_stale_label(at, "rope_q_word", "7 · the")
    _send_stale_label(at, "rope_k_word", "1 · cat")
    at.run()
    assert not errors(at), errors(at)
    q = at.selectbox(key="rope_q_word").value
    k = at.selectbox(key="rope_k_word").value
    assert (q, k) == (2, 1), (q, k)  # word 7 is clamped to the last of three; word 1 is kept


def test_alibi_head_picker_survives_a_stale_label_after_fewer_heads():
    at = open_page("pages/bias/alibi.py")
    at.slider(key="alibi_heads").set_value(3).run()
    assert not errors(at), errors(at)
    _send_stale_label(at, "alibi_head", "head 8 · m = 1/256")
    at.run()
    assert not errors(at), errors(at)
    assert at.selectbox(key="alibi_head").value == 3  # head 8 of 8 → the last of 3
