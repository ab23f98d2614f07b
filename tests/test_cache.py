"""ui/cache.py: one Streamlit cache wrapper per function, however often a page script wraps it.

A page wraps its functions at the top of its script, so each full rerun calls cached() again;
making a wrapper hashes the function's source (~1 ms). The wrappers are memoized, and what they
cache is unchanged: the same arguments are computed once, other arguments are computed."""

from __future__ import annotations

from ui.cache import cached, resource

CALLS: list[int] = []


def _square(x: int) -> int:
    CALLS.append(x)
    return x * x


def test_the_same_function_gets_the_same_wrapper():
    assert cached(_square) is cached(_square)
    assert resource(_square) is resource(_square)
    assert cached(_square) is not resource(_square)
    assert cached(_square, max_entries=2) is not cached(_square)  # a bound is part of the wrapper


def test_a_memoized_wrapper_still_caches_per_argument():
    f = cached(_square, max_entries=8)
    f.clear()
    CALLS.clear()
    assert [f(3), cached(_square, max_entries=8)(3), f(4)] == [9, 9, 16]
    assert CALLS == [3, 4]


def _page_function(source: str):
    """A function as a page script makes it: Streamlit runs the script as __main__ in fresh globals."""
    namespace = {"__name__": "__main__"}
    exec(source, namespace)
    return namespace["f"]


def test_a_page_scripts_function_is_not_memoized():
    """Each run of a page makes its functions anew, each holding that run's globals: memoizing their
    wrappers would keep every run's names alive. They get a fresh wrapper, which still caches."""
    first, second = _page_function("def f(x):\n    return x + 1\n"), _page_function("def f(x):\n    return x + 1\n")
    assert cached(first) is not cached(first)
    assert cached(first)(1) == cached(second)(1) == 2
    assert resource(first) is not resource(first)


def test_a_declared_bound_is_the_caches_bound():
    """explain/bounds.py: a bound written beside the function is the one its cache gets; a function
    with none gets the default; a page may still pass one for a function of its own."""
    from explain.bounds import DEFAULT_ENTRIES, bound_of, bounded

    @bounded(3)
    def small(x: int) -> int:
        return x

    assert bound_of(small) == 3 and bound_of(_square) == DEFAULT_ENTRIES
    import streamlit as st

    seen: list[int] = []
    real = st.cache_data

    def spy(**kwargs):
        seen.append(kwargs["max_entries"])
        return real(**kwargs)

    st.cache_data = spy  # type: ignore[assignment]
    try:
        cached(small)
        cached(_page_function("def f(x):\n    return x\n"))
    finally:
        st.cache_data = real
    assert seen == [3, DEFAULT_ENTRIES]


def test_pages_never_bound_an_imported_function_themselves():
    """A page wraps explain/ functions without a bound: the bound sits beside the function, where
    the size of its result is known. Only functions a page or ui/ defines itself pass one."""
    import ast

    from tests.helpers import ROOT

    for path in [*ROOT.glob("pages/**/*.py"), *ROOT.glob("ui/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            wraps = isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("cached", "resource")
            if wraps and node.args and isinstance(node.args[0], ast.Attribute):
                assert not any(k.arg == "max_entries" for k in node.keywords), (path.name, ast.unparse(node))


def _worded(n: int, lang: str | None = None) -> str:
    CALLS.append(n)
    return f"{lang}:{n}"


def test_the_language_is_part_of_the_key_without_being_passed():
    """A function with a `lang` parameter is cached per language even when the caller leaves it
    out: the wrapper fills in this run's language (explain.i18n), so a Korean learner never gets
    the words an English learner's call cached, and no page passes the language by hand."""
    from explain import i18n

    f = cached(_worded)
    f.clear()
    CALLS.clear()
    before = i18n.language()
    try:
        i18n.set_language("en")
        assert f(1) == "en:1" and f(1) == "en:1"
        i18n.set_language("ko")
        assert f(1) == "ko:1"
        assert f(1, "en") == "en:1" and f(1, lang="en") == "en:1"  # given, it is used
    finally:
        i18n.set_language(before)
    assert CALLS == [1, 1]  # once per language
