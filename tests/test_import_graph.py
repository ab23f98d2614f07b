"""No import circles: the module import graph of the app (app.py, serve_app.py, ui, explain, lab,
encoders, models), its tools and its tests, built from the source (AST), has no cycle, counting the
imports inside functions too (an import moved into a function to dodge a circle is still a circle:
the two modules still need each other). And tests/ and tools/ never import each other both ways:
test support lives in tests/support/, which tools may use; tests import no tool.

An edge a → b means module a imports module b: `import b`, `from b import name` (b.name when that is
a module itself), relative imports resolved. Importing a.b.c does not count as importing the
package a's __init__ (a package that lists its own submodules is not a circle).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ui", "explain", "lab", "encoders", "models", "tools", "tests")
SCRIPTS = ("app.py", "serve_app.py")
# Tests that still import a tool, each with its reason; nothing else in tests/ may.
TESTS_OF_TOOLS = {
    # The serving tools' own tests (./run-app --workers, deploy/haproxy.cfg): they test the tool itself,
    # and serving may move out of tools/ into deploy/.
    "tests.test_deploy",
    "tests.e2e.test_workers",
}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources(root: Path = ROOT) -> dict[str, Path]:
    """Module name → file, for every module the graph covers."""
    paths = [root / s for s in SCRIPTS if (root / s).exists()]
    paths += [p for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py"))]
    return {module_name(p, root): p for p in paths}


def _targets(node: ast.AST, here: str, is_package: bool, known: set[str]) -> Iterable[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        if node.level:  # relative: from the module's own package upwards
            base = here.split(".") if is_package else here.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            module = ".".join([*base, *([node.module] if node.module else [])])
        else:
            module = node.module or ""
        for alias in node.names:
            sub = f"{module}.{alias.name}"
            yield sub if sub in known else module


@functools.lru_cache(maxsize=2048)
def _imports(text: str) -> tuple[ast.AST, ...]:
    """The import statements of a file's text, anywhere in it (parsed once per text: three tests
    here read the graph of the whole project, ~5 s each when each parsed every file)."""
    return tuple(n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Import, ast.ImportFrom)))


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module → the project modules it imports anywhere in its file (functions included)."""
    mods = sources(root)
    known = set(mods)
    out: dict[str, set[str]] = {}
    for name, path in mods.items():
        edges: set[str] = set()
        for node in _imports(path.read_text(encoding="utf-8")):
            for target in _targets(node, name, path.name == "__init__.py", known):
                if target in known and target != name:
                    edges.add(target)
        out[name] = edges
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        # Iterative depth-first search: the graph is deep enough to matter for Python's recursion.
        work = [(v, iter(sorted(g.get(v, ()))))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(found)


def _edges_between(g: dict[str, set[str]], a: str, b: str) -> list[str]:
    top = lambda m: m.split(".")[0]  # noqa: E731
    return sorted(f"{m} → {t}" for m, ts in g.items() if top(m) == a for t in ts if top(t) == b)


def test_no_import_cycles():
    found = cycles(graph())
    assert not found, "modules that import each other (split out what both need):\n" + "\n".join(
        " ⇄ ".join(c) for c in found
    )


def test_tests_do_not_import_tools():
    g = {m: ts for m, ts in graph().items() if m not in TESTS_OF_TOOLS}
    down = _edges_between(g, "tests", "tools")
    assert not down, "test support belongs in tests/support/ (tools may use it):\n" + "\n".join(down)


def test_tests_and_tools_do_not_import_each_other_both_ways():
    g = graph()
    down, up = _edges_between(g, "tests", "tools"), _edges_between(g, "tools", "tests")
    down = [e for e in down if e.split(" → ")[0] not in TESTS_OF_TOOLS]
    assert not (down and up), "tests → tools:\n" + "\n".join(down) + "\ntools → tests:\n" + "\n".join(up)


def test_the_graph_sees_a_cycle(tmp_path):
    """The check is not blind: a planted circle through a function-level import is found, a package
    that imports its own submodule is not a circle."""
    for pkg in ("lab", "tools", "tests"):
        (tmp_path / pkg).mkdir()
    (tmp_path / "lab" / "__init__.py").write_text("from lab import a\n")
    (tmp_path / "lab" / "a.py").write_text("from lab.b import X\n")
    (tmp_path / "lab" / "b.py").write_text("X = 1\n\ndef f():\n    from . import a\n    return a\n")
    (tmp_path / "tools" / "t.py").write_text("from tests.s import Y\n")
    (tmp_path / "tests" / "s.py").write_text("import tools.t\nY = 2\n")
    g = graph(tmp_path)
    assert g["lab"] == {"lab.a"} and g["lab.a"] == {"lab.b"} and g["lab.b"] == {"lab.a"}
    assert cycles(g) == [["lab.a", "lab.b"], ["tests.s", "tools.t"]]
    assert _edges_between(g, "tests", "tools") == ["tests.s → tools.t"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
