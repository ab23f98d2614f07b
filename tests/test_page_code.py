""" "Show the code this page runs" on every chapter: closed, nothing is built or sent (no st.code on
the page, so a browser never loads the syntax highlighter for it); opened, the page shows the live
source of what it runs — real Python definitions, each one complete."""

from __future__ import annotations

import ast
import textwrap

import pytest

from tests.helpers import errors, open_page
from ui.chapters import CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.key)
def test_the_code_panel_is_built_only_when_opened(chapter):
    at = open_page(chapter.path)
    assert not errors(at)
    assert len(at.code) == 0  # closed: nothing sent
    if "page_code" not in at.session_state:  # a page without sources has no panel
        return
    at.session_state["page_code"] = True  # open the expander, as a click would
    at.run()
    assert not errors(at)
    sources = [c.value for c in at.code]
    assert sources, chapter.key
    for src in sources:
        tree = ast.parse(textwrap.dedent(src))  # a method's source comes indented
        assert any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) for n in tree.body), src[:80]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.key)
def test_every_declared_source_names_a_function_of_the_house(chapter):
    """A chapter names what its code panel shows ("module:qualified.name"); each name resolves to a
    function, method or class of the app's own packages, and the panel shows it in that order."""
    import inspect

    from explain.chapter import resolve

    for source in chapter.sources:
        module = source.partition(":")[0]
        assert module.split(".")[0] in ("encoders", "explain", "lab", "models"), source
        obj = resolve(source)
        assert inspect.isfunction(obj) or inspect.isclass(obj), source
        assert f"{obj.__module__}:{obj.__qualname__}" == source, source
