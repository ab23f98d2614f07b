"""Every st.fragment of the app sets its run's language first. A fragment rerun (a widget inside it
moved) runs only the decorated function, not app.py, whose activate() sets the language of a full
run; without its own call the section redraws in English for a Korean learner (seen on Learned
APE's table section). Swept over every file in pages/ and ui/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*ROOT.glob("pages/**/*.py"), *ROOT.glob("ui/*.py")])


def is_fragment(dec: ast.expr) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    return isinstance(target, ast.Attribute) and target.attr == "fragment"


def fragments(tree: ast.AST) -> list[ast.FunctionDef]:
    return [
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and any(is_fragment(d) for d in n.decorator_list)
    ]


def first_call(fn: ast.FunctionDef) -> str | None:
    body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Call):
        f = body[0].value.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    return None


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fragment_sets_its_language_first(path):
    tree = ast.parse(path.read_text())
    bad = [fn.name for fn in fragments(tree) if first_call(fn) != "activate"]
    assert not bad, f"{path.name}: {bad} must call activate() first"


def test_the_sweep_sees_fragments():
    """Not blind: the app has fragments, and a fragment without the call is caught."""
    found = sum(len(fragments(ast.parse(p.read_text()))) for p in FILES)
    assert found >= 10, found
    planted = ast.parse("import streamlit as st\n@st.fragment\ndef f():\n    '''doc'''\n    st.write(1)\n")
    assert [first_call(fn) for fn in fragments(planted)] == ["write"]
