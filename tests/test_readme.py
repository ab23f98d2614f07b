"""The README's chapter list is the app's own: every chapter, in order, with the title and the one-line
idea the app shows under it (explain/text/en/strings/chapters.toml). A summary fixed in the app and
not in the README (or the other way round) fails here."""

from __future__ import annotations

import re
from pathlib import Path

from explain.i18n import t
from ui.chapters import CHAPTERS, part_title

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def chapter_list() -> str:
    """The README's "## Chapters" block as the declarations make it: parts in order, each chapter's
    title and one-line idea (English catalogue)."""
    out, part = ["## Chapters\n"], None
    for c in CHAPTERS:
        if c.part != part:
            part = c.part
            out.append(f"\n**{part_title(part, 'en')}**\n\n")
        out.append(f"- **{t(f'chapters.{c.key}.title', 'en')}** — {t(f'chapters.{c.key}.idea', 'en')}\n")
    return "".join(out) + "\n"


def test_readme_lists_every_chapter_with_its_idea_in_order():
    """The block is derived from the chapters' declarations; on a change, paste chapter_list()."""
    block = README[README.index("## Chapters\n") : README.index("## English and")]
    assert block == chapter_list()
    assert len(re.findall(r"^- \*\*", block, re.M)) == len(CHAPTERS)


def test_readme_starts_with_the_two_commands():
    block = README.split("```", 2)[1]
    assert "./run-app" in block and "./run-tests" in block
