"""Shareable state in the page address: one abstraction for every value a link restores.

Two kinds of control live in the address:

Bound widgets
    A slider, toggle, checkbox or select_slider over numbers keeps a language-neutral value; pass
    ``**URL`` and Streamlit binds it itself (``st.slider(..., key="t5_buckets", **URL)``): the key is
    the parameter's name, a bad value is dropped for the widget's default, and the default leaves
    the address clean.
Linked values (``Param``)
    Everything else: a choice whose options are shown translated (Streamlit's binding would write
    the *shown* label, so a link made in Korean would only work in Korean), an integer number_input
    (Streamlit's binding crashes on ``?x=inf``), a key that clashes with another page's parameter,
    and the frame's own values (sentence, seed, language, presenter mode, lesson). A ``Param`` names
    its key, its parameter, its default and a parser that accepts only valid values; on the first
    run of a session it restores a valid value from the address into session state, and after the
    widget it mirrors the value back (the default removes the parameter).

    BASE = Param.choice("trouble_base", ("classic", "sidebar"), default="classic")
    base = BASE.widget(st.radio, label, BASE.options, format_func=names.get)

Never bind (``**URL``) a key that a Param also writes: Streamlit refuses to set a bound parameter by
hand and raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

import streamlit as st


class Bound(TypedDict):
    bind: Literal["query-params"]


URL: Bound = {"bind": "query-params"}  # spread into a bound widget: st.slider(..., key="rs_d", **URL)
MAX_RAW = 256  # characters of a parameter ever read (a hand-edited address can hold anything)


@dataclass(frozen=True)
class Param:
    key: str  # session-state (widget) key
    param: str  # the address's parameter name
    default: Any
    parse: Callable[[str], Any]  # raw text → a valid value, or ValueError / TypeError
    dump: Callable[[Any], str] = str
    options: tuple[Hashable, ...] = ()  # for choices: the widget's options, in order
    max_raw: int = MAX_RAW  # characters of the parameter read before parsing

    # -- constructors for the usual kinds ---------------------------------------------------------
    @classmethod
    def choice(cls, key: str, options: Sequence[Hashable], default: Hashable, param: str | None = None) -> Param:
        """One of `options` (ids, shown translated by the widget's format_func), written as str(id)."""
        opts = tuple(options)
        if default not in opts:
            raise ValueError(f"{key}: default {default!r} is not among {opts!r}")
        by_text = {str(o): o for o in opts}

        def parse(raw: str) -> Hashable:
            return by_text[raw]  # KeyError for anything else

        return cls(key, param or key, default, _strict(parse), str, opts)

    @classmethod
    def integer(cls, key: str, lo: int, hi: int, default: int, step: int = 1, param: str | None = None) -> Param:
        """A plain integer in [lo, hi] on the step grid (no floats, no "inf", no "1e9")."""

        def parse(raw: str) -> int:
            if not raw.strip().lstrip("+-").isdigit():
                raise ValueError(raw)
            v = int(raw)
            if not (lo <= v <= hi and (v - lo) % step == 0):
                raise ValueError(raw)
            return v

        return cls(key, param or key, default, parse)

    @classmethod
    def flag(cls, key: str, default: bool = False, param: str | None = None) -> Param:
        """On/off, written as 1 (and absent when it is the default)."""

        def parse(raw: str) -> bool:
            value = raw.strip().lower()
            if value in ("1", "true"):
                return True
            if value in ("0", "false", ""):
                return False
            raise ValueError(raw)

        return cls(key, param or key, default, parse, lambda v: "1" if v else "0")

    @classmethod
    def text(cls, key: str, default: str, max_chars: int, param: str | None = None) -> Param:
        """Free text, cut to max_chars."""
        return cls(key, param or key, default, lambda raw: raw[:max_chars], max_raw=max_chars)

    # -- the two halves ---------------------------------------------------------------------------
    def from_url(self) -> Any | None:
        """The address's valid value for this parameter, or None."""
        raw = st.query_params.get(self.param)
        if raw is None:
            return None
        try:
            return self.parse(str(raw)[: self.max_raw])
        except (ValueError, TypeError, KeyError):
            return None

    def restore(self, always: bool = False) -> None:
        """First run of a session: a valid, non-default value from the address into session state.
        `always`: also when the key already has a value (the frame's own values, set before any
        widget of theirs exists, use it with their own guard)."""
        if self.key in st.session_state and not always:
            return
        value = self.from_url()
        if value is not None and value != self.default:
            st.session_state[self.key] = value

    def mirror(self, value: Any) -> None:
        """Write `value` to the address; the default removes the parameter."""
        if value == self.default:
            if self.param in st.query_params:
                del st.query_params[self.param]
            return
        text = self.dump(value)
        if st.query_params.get(self.param) != text:
            st.query_params[self.param] = text

    def settle(self, options: Sequence[Hashable]) -> None:
        """Before a widget whose options or labels change under it (a new sentence renames every
        word; a new head count renames every slope): restore, then make the session's value one of
        `options` again, so code that reads it before the widget sees a valid option.

        Read before its widget, a selectbox whose labels changed hands back the old *label* (a str
        such as "3 · cat"), not the option: a number is recovered from the label's first digits, an
        integer beyond the options is clamped to the nearest, anything else falls back to the
        default (or the first option when the default is gone)."""
        self.restore()
        opts = tuple(options)
        if not opts:
            return
        value = st.session_state.get(self.key, self.default)
        if isinstance(value, str) and value not in opts:
            number = re.search(r"\d+", value)  # "3 · cat", "head 3 · m = 1/8": the option's number
            try:
                value = self.parse(number.group() if number else value)
            except (ValueError, TypeError, KeyError):
                value = self.default
        numbers = [o for o in opts if isinstance(o, int)]
        if value not in opts and isinstance(value, int) and len(numbers) == len(opts):
            value = min(max(value, min(numbers)), max(numbers))
        if value not in opts:
            value = self.default if self.default in opts else opts[0]
        st.session_state[self.key] = value

    def widget(self, make: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """restore → the widget (``make(*args, key=self.key, **kwargs)``) → mirror; returns its value.
        Pass no value=/index= default: the widget's own default must equal `default`."""
        self.restore()
        value = make(*args, key=self.key, **kwargs)
        self.mirror(value)
        return value


def _strict(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def wrapped(raw: str) -> Any:
        try:
            return parse(raw)
        except KeyError:
            raise ValueError(raw) from None

    return wrapped
