"""Chapter prose: Markdown files in explain/text/<lang>/<chapter>.md, split into named sections.

A section starts with a line `## key` and runs to the next one; pages ask for sections by key, so
the words live in one file per chapter and language, never in the page code.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from explain.i18n import language, valid

TEXT_DIR = Path(__file__).resolve().parent / "text"
_SECTION = re.compile(r"^## +([\w-]+) *$", re.MULTILINE)


# The files are part of the source tree: read once per process, per (chapter, language) — about 20
# chapters × LANGS, hence 64; `section` passes only a language we ship (a stray one is English, as
# t() does, not a new entry).
@lru_cache(maxsize=64)
def sections(chapter: str, lang: str = "en") -> dict[str, str]:
    path = TEXT_DIR / lang / f"{chapter}.md"
    if not path.exists() and lang != "en":
        # tests/test_i18n.py proves every chapter has its Korean file; at run time English prose
        # is kinder than a traceback if one is ever missing.
        path = TEXT_DIR / "en" / f"{chapter}.md"
    text = path.read_text(encoding="utf-8")
    parts = _SECTION.split(text)
    # parts = [preamble, key1, body1, key2, body2, …]
    return {key: body.strip() for key, body in zip(parts[1::2], parts[2::2], strict=False)}


def section(chapter: str, key: str, lang: str | None = None) -> str:
    """One prose section in `lang` (default: the current run's language, explain.i18n)."""
    lang = language() if lang is None else valid(lang)
    try:
        return sections(chapter, lang)[key]
    except KeyError:
        raise KeyError(f"explain/text/{lang}/{chapter}.md has no section '## {key}'") from None
