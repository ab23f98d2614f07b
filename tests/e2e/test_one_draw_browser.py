"""Each chart Streamlit mounts is drawn once (ui.presenter.ONE_DRAW_JS), and a chart off screen is
not laid out until it is scrolled to (ui.presenter.ATLAS_CSS), in a real browser.

Streamlit 1.67 hands plotly.js every mounted chart twice, the second time as the same figure in new
objects (its re-theming effect), and plotly redraws it all. The frame's script makes plotly's
react() skip a call whose figure, size and config are the ones just drawn in that div. These tests
check that the skip happens for every chart of a page, that what is shown is then the figure at its
container's size, and that a real change (a new sentence, a narrower window) still draws.
"""

from __future__ import annotations

import pytest

from tests.e2e.test_pages_browser import TIMEOUT_MS, fresh_tab, no_exception, type_sentence, wait_rendered

pytestmark = pytest.mark.e2e

# Every chart: its key, the width plotly drew it at, its element's width, the height drawn and asked
# for, the width its figure now holds (Streamlit's state reads it back) and its x tick labels.
CHARTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'), gd => {
  const box = gd.closest('[data-testid="stElementContainer"]');
  const key = ((box && box.className.match(/st-key-(\\S+)/)) || [0, '?'])[1];
  const ticks = Array.from(gd.querySelectorAll('.xtick text'), t => t.textContent);
  return {key, drawn: gd._fullLayout.width, room: Math.round(box.getBoundingClientRect().width),
          height: gd._fullLayout.height, asked: gd.layout.height, held: gd.layout.width, ticks};
})"""
SKIPPED_JS = "() => window.__peSkippedDraws || 0"


def _charts(page) -> list[dict]:
    return page.evaluate(CHARTS_JS)


def _drawn_at_their_size(charts: list[dict]) -> None:
    for c in charts:
        assert abs(c["drawn"] - c["room"]) <= 1, c
        # plotly keeps a width to a thousandth of a pixel: a column's 302.65625 is drawn at 302.656
        assert abs(c["held"] - c["drawn"]) < 0.01 and c["height"] == c["asked"], c


# Shaw's charts span the page; the first page has three in columns, whose widths are fractional.
@pytest.mark.parametrize("path", ["shaw", ""])
def test_every_mounted_chart_is_drawn_once_at_its_size(browser, served, path):
    with fresh_tab(browser, served) as tab:
        page = tab.page
        page.goto(f"{served}/{path}?s=the%20cat%20sat%20on%20the%20mat", timeout=TIMEOUT_MS)
        wait_rendered(page)
        no_exception(page)
        charts = _charts(page)
        assert len(charts) >= 6
        # Each chart's second call was skipped (one per chart: the re-theming effect runs once).
        assert page.evaluate(SKIPPED_JS) >= len(charts)
        _drawn_at_their_size(charts)

        # A new sentence remounts the charts that read it: drawn once each, with the new words.
        before = page.evaluate(SKIPPED_JS)
        type_sentence(page, "a dog ran far away today")
        after = _charts(page)
        changed = [c for c in after if "dog" in " ".join(c["ticks"])]
        assert changed, [c["key"] for c in after]
        assert page.evaluate(SKIPPED_JS) - before >= len(changed)
        _drawn_at_their_size(after)

        # A narrower window is a real change: every chart is drawn again at its new size.
        page.set_viewport_size({"width": 1000, "height": 1000})
        page.wait_for_function(
            """() => Array.from(document.querySelectorAll('.js-plotly-plot')).every(gd => {
                 const box = gd.closest('[data-testid="stElementContainer"]').getBoundingClientRect();
                 return Math.abs(gd._fullLayout.width - Math.round(box.width)) <= 1; })""",
            timeout=TIMEOUT_MS,
        )
        narrow = _charts(page)
        assert all(n["drawn"] < w["drawn"] for n, w in zip(narrow, after, strict=True))
        _drawn_at_their_size(narrow)
        assert tab.page_errors == []


def test_the_script_is_what_skips(browser, served):
    """With the frame's script switched off (its guard set first), nothing is skipped: the counter
    above is the script's own, and the page still draws every chart at its size."""
    with fresh_tab(browser, served) as tab:
        page = tab.page
        page.add_init_script("window.__peOneDraw = true;")
        page.goto(f"{served}/shaw?s=the%20cat%20sat%20on%20the%20mat", timeout=TIMEOUT_MS)
        wait_rendered(page)
        assert page.evaluate(SKIPPED_JS) == 0
        _drawn_at_their_size(_charts(page))
        assert tab.page_errors == []


# The charts' boxes (ui.presenter.ATLAS_CSS, content-visibility: auto): is each one's content skipped
# by the browser's rendering right now, and its plot's size as drawn and as laid out on the page.
SKIPPED_CHARTS_JS = """() => Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'), box => {
  const gd = box.querySelector('.js-plotly-plot');
  const svg = gd.querySelector('.main-svg').getBoundingClientRect();
  return {skipped: !gd.checkVisibility({contentVisibilityAuto: true}), drawn: gd._fullLayout.height,
          laid: Math.round(svg.height), top: Math.round(box.getBoundingClientRect().top)};
})"""


def test_charts_off_screen_skip_rendering_until_scrolled_to(browser, served):
    """A long page (ALiBi): the charts far below the viewport are drawn by plotly but not laid out
    or painted by the browser; scrolled to, each is shown at the height plotly drew it, and the
    charts in view never are skipped."""
    with fresh_tab(browser, served) as tab:
        page = tab.page
        page.goto(f"{served}/alibi?s=the%20cat%20sat%20on%20the%20mat", timeout=TIMEOUT_MS)
        wait_rendered(page)
        no_exception(page)
        charts = page.evaluate(SKIPPED_CHARTS_JS)
        assert len(charts) >= 6
        height = page.viewport_size["height"]
        assert not any(c["skipped"] for c in charts if c["top"] < height), charts
        far = [k for k, c in enumerate(charts) if c["top"] > 3 * height]
        assert far and all(charts[k]["skipped"] for k in far), charts
        for k in far:
            page.locator('[data-testid="stPlotlyChart"]').nth(k).scroll_into_view_if_needed()
            page.wait_for_function(
                "k => document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')[k]"
                ".checkVisibility({contentVisibilityAuto: true})",
                arg=k,
                timeout=TIMEOUT_MS,
            )
            shown = page.evaluate(SKIPPED_CHARTS_JS)[k]
            assert not shown["skipped"] and abs(shown["laid"] - shown["drawn"]) <= 1, shown
        assert tab.page_errors == []
