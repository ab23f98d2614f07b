"""House rules that code structure must keep (DESIGN.md, "The house").

Nothing outside encoders/ branches on a method's registry name: a fact about a method (which terms
are content, how it is configured for a trained length, its relative sign, its RoPE scheme) lives on
its encoder class. This test reads the source of every module above encoders/ (AST, not text) and
fails on a registry name used

    in a comparison            method == "learned", scheme != "rope"
    in a membership test       method in ("rope", "xpos")
    as a prefix test           method.startswith("rope")
    in a match case            case "t5":
    as a dict literal's key    {"transformer-xl": ("a", "c"), …}: a per-method table

A string constant anywhere else is data, not a branch: a chapter runs its own method by name
(run_tokens(…, "alibi", …)), a page preselects some (DEFAULT_METHODS = ("sinusoidal", "t5", …)).
A table keyed by methods is built from the registry instead (a comprehension), or keyed by what it
describes (the CoPE paper's row labels in explain/chapters/toy_tasks.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from encoders import REGISTRY
from tests.helpers import ROOT

NAMES = frozenset(REGISTRY)
# Everything above encoders/ (models/ sits beside it and must not branch either).
SCANNED = ("app.py", "explain", "lab", "models", "ui", "pages", "tools")


def _files() -> list[Path]:
    out: list[Path] = []
    for part in SCANNED:
        path = ROOT / part
        out += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return out


def _names_in(node: ast.AST | None) -> Iterator[ast.Constant]:
    """Registry-name string constants in `node` itself or directly in a tuple/list/set literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES:
        yield node
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for element in node.elts:
            yield from _names_in(element)


def violations(source: str) -> list[tuple[int, str, str]]:
    """(line, what, name) for every branch on a registry name in `source`."""
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            membership = any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
            what = "membership test" if membership else "comparison"
            found += [(c.lineno, what, c.value) for o in (node.left, *node.comparators) for c in _names_in(o)]
        elif isinstance(node, ast.MatchValue):
            found += [(c.lineno, "match case", c.value) for c in _names_in(node.value)]
        elif isinstance(node, ast.Dict):
            found += [(c.lineno, "dict key", c.value) for k in node.keys for c in _names_in(k)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
        ):
            found += [(c.lineno, "prefix test", c.value) for a in node.args for c in _names_in(a)]
    return found


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_branch_on_a_registry_name(path: Path) -> None:
    found = violations(path.read_text(encoding="utf-8"))
    assert not found, "\n".join(
        f"{path.relative_to(ROOT)}:{line}: {what} on registry name {name!r}; put the fact on the encoder class"
        for line, what, name in found
    )


def test_the_scan_covers_the_tree() -> None:
    files = {p.relative_to(ROOT).as_posix() for p in _files()}
    # one known file from every scanned folder, so a moved folder cannot silently empty the scan
    for expected in (
        "app.py",
        "explain/chapters/attention_lab.py",
        "lab/model.py",
        "models/minilm.py",
        "ui/common.py",
        "pages/rotary/rope_scaling.py",
        "tools/bench.py",
    ):
        assert expected in files
    assert {"rope", "learned", "none", "transformer-xl"} <= NAMES


def test_the_scan_finds_every_kind_of_branch() -> None:
    """The checker itself can fail: each form it forbids is found, and data is left alone."""
    source = """
if method == "learned":
    pass
ok = scheme != "rope" and name in ("t5", "alibi") and other not in {"cope"}
match method:
    case "deberta":
        pass
TABLE = {"transformer-xl": ("a", "c"), "shaw": 1}
prefixed = method.startswith("rope-")  # not a registry name: not flagged
stretched = method.startswith("xpos")
"""
    found = sorted(violations(source))
    assert found == [
        (2, "comparison", "learned"),
        (4, "comparison", "rope"),
        (4, "membership test", "alibi"),
        (4, "membership test", "cope"),
        (4, "membership test", "t5"),
        (6, "match case", "deberta"),
        (8, "dict key", "shaw"),
        (8, "dict key", "transformer-xl"),
        (10, "prefix test", "xpos"),
    ]
    data = """
DEFAULT_METHODS = ("sinusoidal", "t5", "rope", "alibi")
view = run_tokens(tokens, seed, "alibi", 64, 4)
pe = {"spline": "none", "pe-cat": "sinusoidal"}[kind]  # values are data; keys are not methods
by_name = {cls.name: cls for cls in classes}
if method == OTHER:
    pass
"""
    assert violations(data) == []


def test_pages_read_the_sentence_through_one_accessor():
    """Every page reads the learner's sentence through ui.common.sentence() (or sentence_tokens(),
    which calls it): one place decides what an absent or odd value means, and the hostile-input
    tests can sweep that one path instead of every page."""
    import re

    root = Path(__file__).resolve().parents[1]
    direct = re.compile(r"session_state(\.sentence\b|\.get\(\s*[\"']sentence[\"']|\[\s*[\"']sentence[\"']\s*\])")
    found = [p.name for p in sorted(root.glob("pages/**/*.py")) if direct.search(p.read_text(encoding="utf-8"))]
    assert not found, found
    assert direct.search('x = st.session_state.get("sentence", "")')  # the pattern sees what it bans
