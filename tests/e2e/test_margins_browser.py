"""The margins figures are sent with (explain/figures/margins.py), checked against plotly in Chromium.

Every chapter, in English and in Korean, at the width the browser benchmark uses (1400 px). For
every chart the page draws, the test reads what was sent (layout.margin) and what plotly settled on
(_fullLayout._size), and draws the same figure again, off screen, from the theme's 10 px margins,
to get the margins plotly needs on its own (tests/e2e/visits.py: MARGINS_JS; each page is opened once
for this file, axe and the glyph check together). Then:

- nothing is cut: plotly's margins are never smaller than what it needs on its own;
- most charts are drawn once: plotly kept the margins sent (no second draw to grow them); the
  ones it did not are mostly a label or a colour bar a pixel or two wider than estimated, and
  figures the estimate does not model;
- little room is wasted: on a single plot with no labels of its own in the margins, a margin sent
  is at most 24 px wider than plotly's own.
"""

from __future__ import annotations

import pytest

from tests.e2e.visits import LANGS
from ui.chapters import CHAPTERS

pytestmark = pytest.mark.e2e

THEME = [10, 10, 10]  # the theme's l, r, b (explain/figures/theme.py): what a figure has unestimated


@pytest.fixture(scope="module")
def charts(visits):
    """Every chart of every chapter in both languages: (language, chapter, title, sent, got, own,
    whether plotly's own margins are all it needs: one plot and no labels in the margins). Read from
    the shared visits (tests/e2e/visits.py: MARGINS_JS), which axe and the glyph check read too."""
    rows = []
    for lang in LANGS:
        for chapter in CHAPTERS:
            visit = visits(chapter.key, lang)
            assert visit.exceptions == [], (lang, chapter.key, visit.exceptions)
            for c in visit.charts:
                rows.append(
                    (
                        lang,
                        chapter.key,
                        c["title"],
                        c["sent"],
                        c["got"],
                        c["own"],
                        c["subplots"] == 1 and not c["outside"],
                    )
                )
    assert len(rows) > 200, len(rows)
    return rows


def test_plotly_never_has_less_room_than_it_needs(charts):
    for lang, key, title, _sent, got, own, _plain in charts:
        # (within 2 px: two draws of one figure can round a colour bar's labels differently)
        assert all(g >= o - 2 for g, o in zip(got, own, strict=True)), (lang, key, title, got, own)


def test_most_estimated_charts_are_drawn_once(charts):
    estimated = [c for c in charts if c[3] != THEME]
    once = [c for c in estimated if all(abs(s - g) < 0.01 for s, g in zip(c[3], c[4], strict=True))]
    assert len(estimated) > 0.7 * len(charts)
    # the rest: mostly a y axis's labels or a colour bar a pixel or two wider than estimated, and
    # charts in columns other than halves (measured: 90 % of the English pages' charts drawn once)
    twice = [(c[0], c[1], c[2], c[3], c[4]) for c in estimated if c not in once]
    assert len(once) >= 0.8 * len(estimated), (f"{len(once)} of {len(estimated)} drawn once", twice)


def test_little_room_is_wasted(charts):
    wasted = []
    for lang, key, title, sent, _got, own, plain in charts:
        # A grid's builder may set margins of its own for its panel labels (MiniLM's layers).
        if plain and sent != THEME and max(s - o for s, o in zip(sent, own, strict=True)) > 24:
            wasted.append((lang, key, title, sent, own))
    assert not wasted, "\n".join(map(str, wasted))
