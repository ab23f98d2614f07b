"""The table of contents, derived: every chapter's declaration (explain/chapters/<name>.py: CHAPTER),
in the navigation's order.

app.py builds the navigation from it, the tests run every page in it, the benchmarks time them, and
the Derivations page reads which chapter shows each identity. A new chapter is its declaration: no
list here to edit. Page files live one folder below pages/ (pages/<part>/<chapter>.py) so that
Streamlit never treats them as legacy auto-discovered pages.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from types import MappingProxyType

import explain.chapters
from explain.chapter import PARTS, Chapter
from explain.i18n import t


def part_title(part: str, lang: str | None = None) -> str:
    return t(f"chapters.parts.{part}", lang)


def _declared() -> tuple[Chapter, ...]:
    """Every CHAPTER of explain/chapters, ordered by part, then by its order."""
    found = []
    for info in pkgutil.iter_modules(explain.chapters.__path__):
        chapter = getattr(importlib.import_module(f"explain.chapters.{info.name}"), "CHAPTER", None)
        if isinstance(chapter, Chapter):
            found.append(chapter)
    return tuple(sorted(found, key=lambda c: (PARTS.index(c.part), c.order, c.key)))


CHAPTERS: tuple[Chapter, ...] = _declared()
BY_KEY: Mapping[str, Chapter] = MappingProxyType({c.key: c for c in CHAPTERS})
# Which chapter shows each proven identity (the Derivations page's table and a proof's caption).
CHAPTER_OF: Mapping[str, str] = MappingProxyType({d: c.key for c in CHAPTERS for d in c.derivations})


def title(chapter_key: str, lang: str | None = None) -> str:
    return t(f"chapters.{chapter_key}.title", lang)


def chapter_title_of(derivation_id: str, lang: str | None = None) -> str:
    """The title of the chapter showing an identity ('—' if none shows it), in `lang`."""
    key = CHAPTER_OF.get(derivation_id)
    return title(key, lang) if key is not None else "—"
