"""A method's words, in the learner's language: the one accessor every chapter calls.

Each registered method (encoders/__init__.py REGISTRY) has one entry per language in
explain/text/<lang>/strings/methods.toml, keyed by its registry name: `label` (its name with its
citation), `short` (its name in tables, legends and sentences) and, where a chapter needs another
form, `row` (the toy lab's name beside a paper row of another name) and `scheme` (RoPE and its
context-extension schemes, in the Stretching RoPE chapter). Adding a method adds its entry there and
nothing here; tests/test_methods_catalogue.py proves every registry name has one in both languages.

Functions take `lang` (default: the current run's language) so that cached callers can key on it.
"""

from __future__ import annotations

from encoders import REGISTRY
from explain.i18n import catalogue, language, t, valid


def _known(name: str) -> str:
    if name not in REGISTRY:
        raise KeyError(f"no method named {name!r}; registered: {sorted(REGISTRY)}")
    return name


def label(name: str, lang: str | None = None) -> str:
    """The method's name with its citation, e.g. "ALiBi (Press, Smith, Lewis 2022)"."""
    return t(f"methods.{_known(name)}.label", lang)


def bare(name: str, lang: str | None = None) -> str:
    """The label without its citation, for titles in narrow columns ("No positional encoding")."""
    return label(name, lang).split(" (")[0]


def short(name: str, lang: str | None = None) -> str:
    """The method's short name, as the labs' tables and legends show it ("RoPE + PI")."""
    return t(f"methods.{_known(name)}.short", lang)


def _optional(name: str, form: str, lang: str | None) -> str | None:
    key = f"methods.{_known(name)}.{form}"
    return t(key, lang) if key in catalogue(valid(lang) if lang is not None else language()) else None


def row_label(name: str, lang: str | None = None) -> str:
    """The toy lab's name: the short name, with the paper's row name where the method stands in
    for a row of another name ("Learned (Absolute PE)")."""
    return _optional(name, "row", lang) or short(name, lang)


def scheme(name: str, lang: str | None = None) -> str:
    """RoPE's and its context-extension schemes' names in the Stretching RoPE chapter ("plain RoPE",
    "NTK-aware"); KeyError for a method that is not one of them."""
    found = _optional(name, "scheme", lang)
    if found is None:
        raise KeyError(f"{name!r} has no scheme name (methods.{name}.scheme)")
    return found
