"""Every word a learner sees, in English and Korean: one catalogue per language.

Short strings (titles, labels, help texts, captions, axis titles, messages) live in
explain/text/<lang>/strings/<file>.toml; a key is "<file>.<name>", e.g. "shaw.k_label". Chapter
prose lives next to them in explain/text/<lang>/<chapter>.md (explain/prose.py). Both languages have
the same keys and the same {placeholders}; tests/test_i18n.py proves it.

The language of the current script run is a ContextVar: the app sets it at the top of every run
(ui/i18n.py), and Streamlit runs each session's script in its own thread, so one learner's language
never leaks into another's. Code outside the app (tests, tools) gets English unless it asks.
A function cached with st.cache_data must not read the ContextVar for words it returns — its cache
key would not see the language — so such functions take `lang` as an argument instead.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from string import Formatter
from typing import Any

LANGS = ("en", "ko")
DEFAULT = "en"
NAMES = {"en": "English", "ko": "한국어"}  # each language named in itself, as a switch should
TEXT_DIR = Path(__file__).resolve().parent / "text"

_current: ContextVar[str] = ContextVar("pe_atlas_language", default=DEFAULT)


def valid(lang: object) -> str:
    """`lang` if it is a language we ship, else the default (a hand-edited URL can hold anything)."""
    return lang if isinstance(lang, str) and lang in LANGS else DEFAULT


def from_locale(locale: object) -> str | None:
    """The language we ship that a browser's locale asks for ("ko-KR", "ko_KR", "ko" → "ko";
    "en-GB" → "en"), or None for any other (or no) locale."""
    if not isinstance(locale, str):
        return None
    primary = locale.strip().replace("_", "-").split("-", 1)[0].lower()
    return primary if primary in LANGS else None


def choose(url: object, locale: object) -> str:
    """A new session's language: a valid ?lang= in the address, else the browser's language, else
    the default. (Within a session the switch decides; this is only where it starts.)"""
    if isinstance(url, str) and url in LANGS:
        return url
    return from_locale(locale) or DEFAULT


def follow(value: object, defaults: Mapping[str, str], lang: str) -> object:
    """A value to keep after switching to `lang`: another language's default (`defaults`: language →
    its default) becomes `lang`'s own, since the learner never chose it; anything typed stays."""
    for other, default in defaults.items():
        if other != lang and value == default and lang in defaults:
            return defaults[lang]
    return value


def sentence_for(sentence: str, lang: str) -> str:
    """The sentence to keep after switching to `lang` (follow, with the default sentences)."""
    return str(follow(sentence, {other: t("common.sidebar.default_sentence", other) for other in LANGS}, lang))


def set_language(lang: str) -> None:
    _current.set(valid(lang))


def language() -> str:
    return _current.get()


def _flatten(prefix: str, table: dict[str, Any], out: dict[str, str]) -> None:
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if isinstance(value, dict):
            _flatten(key, value, out)
        else:
            out[key] = value


@lru_cache(maxsize=4)  # part of the source tree: read once per process and language (LANGS; callers pass valid())
def catalogue(lang: str) -> dict[str, str]:
    """All short strings of one language: {"file.name": text}."""
    out: dict[str, str] = {}
    for path in sorted((TEXT_DIR / lang / "strings").glob("*.toml")):
        with path.open("rb") as f:
            _flatten(path.stem, tomllib.load(f), out)
    return out


def placeholders(text: str) -> set[str]:
    """The {names} a string expects (format specs like {x:.2f} count as x)."""
    return {name for _, name, _, _ in Formatter().parse(text) if name}


def t(key: str, lang: str | None = None, /, **values: Any) -> str:
    """The string `key` in `lang` (default: the current run's language), with {placeholders}
    filled from `values`. A string is formatted only when values are given, so LaTeX braces in a
    string without placeholders need no escaping. An unknown key raises KeyError naming the file."""
    lang = valid(lang) if lang is not None else language()
    table = catalogue(lang)
    try:
        text = table[key]
    except KeyError:
        # Tests prove both catalogues have the same keys; at run time an English string is kinder
        # than a traceback if one ever slips through.
        fallback = catalogue(DEFAULT).get(key) if lang != DEFAULT else None
        if fallback is None:
            file = key.split(".", 1)[0]
            raise KeyError(f"no string '{key}' in explain/text/{lang}/strings/{file}.toml") from None
        text = fallback
    return text.format(**values) if values else text
