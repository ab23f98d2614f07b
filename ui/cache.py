"""The one caching layer of the pages: every cache is bounded, and shared by every session.

A page wraps the explain/ function it calls: ``view = cached(ch.heads_view)``, then ``view(text,
seed(), H)``. Arguments must be primitives (strings, numbers, tuples of them): they are the cache
key, so the same sentence, seed and controls are computed once for the whole class. Results are
copied out per call (st.cache_data pickles them), so no learner can change another's numbers.

Bounds. A class types hundreds of sentences; an unbounded cache keyed on the sentence would grow the
server without limit. Every cache here holds at most `max_entries` results (least recently used go
first). The bound is declared beside the function, where the size of its result is known
(explain/bounds.py: `@bounded(16)`); a function without one gets the default, which suits small
results (a few arrays of a sentence's size). Only a function ui/ defines itself passes its bound here.

`resource` is for read-only objects that cannot be pickled and are the same for everyone (a model
in eval mode, loaded once per process); never for anything a session changes.

No other module calls st.cache_data or st.cache_resource (tests/test_architecture.py checks).
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import Any, ParamSpec, TypeVar

import streamlit as st

from explain import i18n
from explain.bounds import bound_of

P = ParamSpec("P")
R = TypeVar("R")

RESOURCE_ENTRIES = 4  # models: a handful per process


def cached(fn: Callable[P, R], *, max_entries: int | None = None) -> Callable[P, R]:
    """`fn` with a bounded, process-wide cache keyed on its arguments (at most `max_entries`, by
    default the bound declared on `fn`)."""
    max_entries = bound_of(fn) if max_entries is None else max_entries
    return _wrapper(fn, max_entries, "data") if _module_level(fn) else _make(fn, max_entries, "data")


def resource(fn: Callable[P, R], *, max_entries: int | None = None) -> Callable[P, R]:
    """`fn` returning a read-only object shared by every session (loaded once per argument); at most
    `max_entries`, by default the bound declared on `fn`, else RESOURCE_ENTRIES."""
    max_entries = bound_of(fn, RESOURCE_ENTRIES) if max_entries is None else max_entries
    return _wrapper(fn, max_entries, "resource") if _module_level(fn) else _make(fn, max_entries, "resource")


def _make(fn: Callable, max_entries: int, kind: str) -> Callable:
    if kind == "data":
        stored = st.cache_data(max_entries=max_entries, show_spinner=False)(fn)
    else:
        stored = st.cache_resource(max_entries=max_entries, show_spinner=False)(fn)
    at = _lang_position(fn)
    if at is None:
        return stored

    # The language is part of the key of anything that holds words. A call that leaves `lang` out
    # would cache the first learner's language for everyone (the function reads the current
    # language inside, where the key cannot see it); this fills it in, so no page passes it by hand.
    @functools.wraps(fn)
    def in_language(*args: Any, **kwargs: Any) -> Any:
        if len(args) <= at and "lang" not in kwargs:
            kwargs["lang"] = i18n.language()
        return stored(*args, **kwargs)

    in_language.clear = stored.clear  # type: ignore[attr-defined]
    return in_language


def _lang_position(fn: Callable) -> int | None:
    """The position of `fn`'s `lang` parameter (None if it has none)."""
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # a builtin without a signature
        return None
    return names.index("lang") if "lang" in names else None


# A page wraps its functions at the top of its script, so every full rerun wrapped them again, and
# making a Streamlit cache wrapper hashes the function's source: 0.85 ms each, 13 ms of every full
# rerun of the toy lab (15 wrappers). The wrapper is only a handle (the entries live in Streamlit's
# cache, keyed on the same source hash), so one per function serves every run: ~120 functions of
# imported modules, hence the bound.
_wrapper = lru_cache(maxsize=256)(_make)


def _module_level(fn: Callable) -> bool:
    """True for a function of an imported module (the same object every run). A function a page
    script defines is a new object each run and holds that run's globals: memoized, every run's
    names would stay alive in the memo until pushed out, so it gets a fresh wrapper instead."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    return module is not None and getattr(fn, "__globals__", None) is vars(module)


def clear_all() -> None:
    """Empty every cache of the process (benchmarks time a cold page with it)."""
    st.cache_data.clear()
    st.cache_resource.clear()
