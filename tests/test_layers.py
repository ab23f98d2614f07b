"""The house's rules about layers, caches and state, checked on the source (AST), so a change that
breaks one fails here with the file and line instead of surfacing as a slow page or a leak.

    pages/ → ui/ → explain/ → lab/ → models/, encoders/      (arrows point one way)

- pages/ and ui/ only show: they import no numpy, torch, sympy, pandas or scipy.
- encoders/, models/, explain/ and lab/ never import streamlit.
- Nothing imports a layer above its own.
- Every cache is bounded and made in one place: st.cache_data / st.cache_resource appear only in
  ui/cache.py (whose wrappers always pass max_entries).
- No module-level mutable state in ui/, explain/, lab/, encoders/, models/: a module-level list,
  dict or set is a constant (UPPER_CASE) that no code mutates, and nothing uses `global`.
  (Page scripts are excluded: their top-level names are locals of one script run.)
- No file over 500 lines without its reason stated in its docstring ("Longer than 500 lines: …").
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("pages", "ui", "explain", "lab", "models", "encoders")  # top to bottom
# What each layer may import from the project (models and encoders sit side by side at the bottom;
# models may use encoders' shared pieces).
MAY_IMPORT = {
    "pages": {"ui", "explain", "lab", "models", "encoders"},
    "ui": {"ui", "explain", "lab", "models", "encoders"},
    "explain": {"explain", "lab", "models", "encoders"},
    "lab": {"lab", "models", "encoders"},
    "models": {"models", "encoders"},
    "encoders": {"encoders"},
}
MATH = {"numpy", "torch", "sympy", "pandas", "scipy"}
MUTATORS = {
    "append",
    "add",
    "update",
    "pop",
    "clear",
    "setdefault",
    "extend",
    "insert",
    "remove",
    "discard",
    "popitem",
    "sort",
    "reverse",
}
MAX_LINES = 500


def files(*layers: str) -> list[Path]:
    out = [p for layer in layers for p in sorted((ROOT / layer).rglob("*.py"))]
    assert out, layers
    return out


def imports(path: Path) -> list[tuple[str, int]]:
    """(top-level package, line) of every absolute import in the file, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.module.split(".")[0], node.lineno))
    return out


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_pages_and_ui_import_no_math():
    bad = [f"{rel(p)}:{line} imports {pkg}" for p in files("pages", "ui") for pkg, line in imports(p) if pkg in MATH]
    assert not bad, "views only show; the numbers belong in explain/:\n" + "\n".join(bad)


def test_layers_below_the_pages_never_import_streamlit():
    bad = [
        f"{rel(p)}:{line}"
        for p in files("encoders", "models", "explain", "lab")
        for pkg, line in imports(p)
        if pkg == "streamlit"
    ]
    assert not bad, bad


@pytest.mark.parametrize("layer", LAYERS)
def test_no_layer_imports_one_above_it(layer):
    bad = [
        f"{rel(p)}:{line} imports {pkg}"
        for p in files(layer)
        for pkg, line in imports(p)
        if pkg in LAYERS and pkg not in MAY_IMPORT[layer]
    ]
    assert not bad, bad


def test_page_files_live_in_subfolders():
    pages = files("pages")
    assert not [p for p in pages if p.parent == ROOT / "pages"], "pages/<part>/<chapter>.py, never pages/x.py"


def _calls_cache(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in ("cache_data", "cache_resource"):
            lines.append(node.lineno)
    return lines


def test_caches_are_made_only_in_ui_cache():
    bad = [
        f"{rel(p)}:{line}"
        for p in [*files("pages", "ui", "explain", "lab", "tools"), ROOT / "app.py"]
        if p != ROOT / "ui" / "cache.py"
        for line in _calls_cache(p)
    ]
    assert not bad, "use ui.cache.cached / ui.cache.resource (bounded) instead:\n" + "\n".join(bad)
    source = (ROOT / "ui" / "cache.py").read_text(encoding="utf-8")
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)]
    makers = [c for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr in ("cache_data", "cache_resource")]
    assert makers and all(any(k.arg == "max_entries" for k in c.keywords) for c in makers)


def _mutable_value(node: ast.AST) -> bool:
    if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("list", "dict", "set", "defaultdict", "OrderedDict", "Counter", "deque")
    )


def _mutations(tree: ast.AST) -> set[str]:
    """Names a module mutates anywhere: name.append(…), name[k] = …, del name[k], name += …"""
    out: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
            and isinstance(node.func.value, ast.Name)
        ):
            out.add(node.func.value.id)
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                out.add(target.value.id)
            if isinstance(node, ast.AugAssign) and isinstance(target, ast.Name):
                out.add(target.id)
    return out


@pytest.mark.parametrize("layer", ("ui", "explain", "lab", "models", "encoders"))
def test_no_module_level_mutable_state(layer):
    bad = []
    for path in files(layer):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bad += [f"{rel(path)}:{n.lineno} uses global" for n in ast.walk(tree) if isinstance(n, ast.Global)]
        mutated = _mutations(tree)
        for node in tree.body:
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            if not _mutable_value(value):
                continue
            for target in targets:
                if not isinstance(target, ast.Name):
                    continue
                if target.id.startswith("__"):
                    continue  # __all__ and friends
                if not target.id.isupper():
                    bad.append(f"{rel(path)}:{node.lineno} module-level mutable {target.id!r}")
                elif target.id in mutated:
                    bad.append(f"{rel(path)}:{node.lineno} constant {target.id!r} is mutated")
    assert not bad, "\n".join(bad)


def test_no_file_over_500_lines_without_a_reason():
    bad = []
    for path in files("encoders", "models", "explain", "lab", "ui", "pages", "tools"):
        text = path.read_text(encoding="utf-8")
        n = text.count("\n")
        if n > MAX_LINES:
            doc = ast.get_docstring(ast.parse(text)) or ""
            if "Longer than 500 lines:" not in doc:
                bad.append(f"{rel(path)}: {n} lines")
    assert not bad, "split it along its seams, or say why not at its top:\n" + "\n".join(bad)
