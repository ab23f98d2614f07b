"""The README's chapter list is the app's own: every chapter, in order, with the title and the one-line
idea the app shows under it (explain/text/en/strings/chapters.toml). A summary fixed in the app and
not in the README (or the other way round) fails here."""

from __future__ import annotations

import re
from pathlib import Path

from explain.i18n import t
from ui.chapters import CHAPTERS

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_readme_lists_every_chapter_with_its_idea_in_order():
    listed = re.findall(r"^- \*\*(.+?)\*\* — (.+)$", README, re.M)
    expected = [(t(f"chapters.{c.key}.title", "en"), t(f"chapters.{c.key}.idea", "en")) for c in CHAPTERS]
    assert listed == expected


def test_readme_starts_with_the_two_commands():
    block = README.split("```", 2)[1]
    assert "./run-app" in block and "./run-tests" in block
