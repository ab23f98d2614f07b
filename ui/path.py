"""The learner's path, on every page: the core path marked in the navigation, and a link to the next
chapter at the end of each page (the next on the core path, and the next in the navigation where it
differs). The path itself is declared once, in explain/chapters/start.py (PATH); app.py calls these.
"""

from __future__ import annotations

import streamlit as st

from explain.chapter import Chapter
from explain.chapters.start import CHAPTER as START
from explain.chapters.start import CORE, next_chapters
from ui.chapters import BY_KEY, CHAPTERS
from ui.i18n import t
from ui.lessons import current_step

ORDER = tuple(c.key for c in CHAPTERS)


def nav_title(chapter: Chapter) -> str:
    """A chapter's title in the navigation: ★ after each chapter of the core path."""
    return f"{chapter.title} ★" if chapter.key in CORE else chapter.title


def next_links(key: str) -> None:
    """The end of the page `key`: where to go next. Nothing during a lesson (its own banner leads)."""
    if key not in BY_KEY or current_step() is not None:
        return
    core_next, nav_next = next_chapters(key, ORDER)
    st.divider()
    row = st.container(horizontal=True, gap="medium")
    if core_next is not None:
        label = "start.next.start" if key == START.key else "start.next.core"
        row.page_link(BY_KEY[core_next].path, label=t(label, title=BY_KEY[core_next].title), icon=":material/star:")
    elif key in CORE:
        row.page_link(BY_KEY[START.key].path, label=t("start.next.end"), icon=":material/explore:")
    if nav_next is not None and nav_next != core_next:
        row.page_link(
            BY_KEY[nav_next].path,
            label=t("start.next.nav", title=BY_KEY[nav_next].title),
            icon=":material/arrow_forward:",
        )
