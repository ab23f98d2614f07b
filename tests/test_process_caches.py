"""The process caches below the pages (functools caches in explain/, lab/, models/, encoders/; the
Streamlit ones are ui/cache.py's, tests/test_layers.py) are bounded, each with its bound written at
the decorator, and one whose result holds words is keyed on a language we ship: a hand-edited URL's
?lang=xyz must not add an entry."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("explain", "lab", "models", "encoders")


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def process_caches() -> list[tuple[str, str, ast.expr]]:
    """(file:line, function, decorator) of every functools cache decorator in the layers."""
    out = []
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for dec in node.decorator_list:
                        if _name(dec) in ("cache", "lru_cache", "cached_property"):
                            out.append((f"{path.relative_to(ROOT)}:{dec.lineno}", node.name, dec))
    return out


def unbounded(dec: ast.expr) -> bool:
    """@cache, @lru_cache, @lru_cache() and @lru_cache(maxsize=None) have no explicit bound."""
    if _name(dec) == "cached_property":
        return False  # per instance: goes with its object
    if _name(dec) == "cache" or not isinstance(dec, ast.Call):
        return True
    size = dec.args[0] if dec.args else next((k.value for k in dec.keywords if k.arg == "maxsize"), None)
    return size is None or (isinstance(size, ast.Constant) and size.value is None)


def test_every_process_cache_is_bounded():
    caches = process_caches()
    assert len(caches) >= 10  # the scan finds them (15 when written)
    bad = [f"{where} {fn}" for where, fn, dec in caches if unbounded(dec)]
    assert not bad, "give each a maxsize (and say why that many):\n" + "\n".join(bad)


def test_the_check_sees_an_unbounded_cache():
    for source, expected in (
        ("@cache\ndef f(): ...", True),
        ("@functools.cache\ndef f(): ...", True),
        ("@lru_cache\ndef f(): ...", True),
        ("@lru_cache(maxsize=None)\ndef f(): ...", True),
        ("@lru_cache(maxsize=8)\ndef f(): ...", False),
        ("@functools.lru_cache(len(X))\ndef f(): ...", False),
    ):
        fn = ast.parse(source).body[0]
        assert isinstance(fn, ast.FunctionDef)
        assert unbounded(fn.decorator_list[0]) is expected, source


def test_a_stray_language_adds_no_cached_words():
    from explain import i18n, prose

    key = next(iter(prose.sections("rope", "en")))
    before = prose.sections.cache_info().currsize
    assert prose.section("rope", key, "xyz") == prose.section("rope", key, "en")  # English, as t() does
    assert prose.sections.cache_info().currsize == before
    i18n.t(next(iter(i18n.catalogue("en"))), "xyz")
    assert i18n.catalogue.cache_info().currsize <= len(i18n.LANGS)
