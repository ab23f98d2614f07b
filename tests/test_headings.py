"""Headings in order on every page: one h1 (the chapter title), then sections as h2, their parts as h3.

A screen reader lists a page by its headings; a jump (h1 straight to h3) reads as a missing section,
and axe-core's heading-order rule flags it. Under AppTest every heading of the main area is read in
page order: st.title (h1), st.header (h2), st.subheader (h3), and Markdown headings ("### …").
"""

from __future__ import annotations

import itertools
import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import errors, open_page
from ui.chapters import CHAPTERS

LEVEL = {"title": 1, "header": 2, "subheader": 3}
MARKDOWN_HEADING = re.compile(r"^(#{1,6})\s")


def headings(node) -> list[tuple[int, str]]:
    """(level, text) of every heading under `node`, in page order (children by their index)."""
    out: list[tuple[int, str]] = []
    kind = getattr(node, "type", None)
    if kind in LEVEL:
        out.append((LEVEL[kind], node.value))
    elif kind == "markdown":
        m = MARKDOWN_HEADING.match(node.value or "")
        if m:
            out.append((len(m.group(1)), node.value))
    for k in sorted(getattr(node, "children", {}) or {}):
        out += headings(node.children[k])
    return out


def order_problems(levels: list[tuple[int, str]]) -> list[str]:
    """What is wrong with a page's heading outline: it must open with its one h1, and never go down
    more than one level at a time (h2 → h4 skips a level; going back up any number is fine)."""
    problems = []
    if not levels or levels[0][0] != 1:
        problems.append(f"the page does not open with its h1: {levels[:1]}")
    if sum(1 for level, _ in levels if level == 1) != 1:
        problems.append(f"not exactly one h1: {[text for level, text in levels if level == 1]}")
    for (a, ta), (b, tb) in itertools.pairwise(levels):
        if b > a + 1:
            problems.append(f"h{a} {ta!r} → h{b} {tb!r}")
    return problems


@pytest.mark.parametrize(
    ("levels", "broken"),
    [
        ([(1, "T"), (2, "a"), (3, "b"), (3, "c"), (2, "d"), (3, "e")], False),
        ([(1, "T"), (2, "a"), (3, "b"), (2, "c")], False),
        ([(1, "T")], False),
        ([(1, "T"), (3, "a")], True),  # the old chapter outline: title straight to subheader
        ([(1, "T"), (2, "a"), (4, "b")], True),
        ([(2, "a"), (1, "T")], True),
        ([(1, "T"), (2, "a"), (1, "U")], True),
        ([], True),
    ],
)
def test_order_problems_catches_broken_outlines(levels, broken):
    assert bool(order_problems(levels)) is broken


def test_headings_reads_the_tree_in_page_order():
    at = AppTest.from_string(
        """
import streamlit as st
st.title("T")
with st.container():
    st.subheader("deep")
st.header("later")
st.markdown("#### tiny")
"""
    ).run()
    assert headings(at.main) == [(1, "T"), (3, "deep"), (2, "later"), (4, "#### tiny")]
    assert order_problems(headings(at.main)) == ["h1 'T' → h3 'deep'", "h2 'later' → h4 '#### tiny'"]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.key)
def test_every_page_has_its_headings_in_order(chapter):
    at = open_page(chapter.path)
    assert not errors(at)
    levels = headings(at.main)
    assert order_problems(levels) == [], levels
