"""What hover says, in a real browser: MiniLM's grid of 72 heads is one heatmap (one trace on one
pair of category axes, explain.chapters.minilm_figures.attention_thumbnails), so the hover label is
built from the row's and column's category names. Pointing at a cell of a head's map must name that
layer, head, query and key, in English and in Korean; pointing between two maps shows nothing."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from explain.i18n import t
from tests.e2e.test_pages_browser import TIMEOUT_MS, fresh_tab, no_exception, wait_rendered

pytestmark = pytest.mark.e2e

# The page pixel of category cell (row r, column c) of the grid's heatmap, from plotly's own axes.
CELL_JS = """([r, c]) => {
  const el = document.querySelector('.st-key-minilm_grid .js-plotly-plot');
  el.scrollIntoView({block: 'center'});
  const fl = el._fullLayout, box = el.querySelector('.nsewdrag').getBoundingClientRect();
  return [box.left + fl.xaxis.c2p(c), box.top + fl.yaxis.c2p(r), fl.meta.tiles.map(tl => [tl.rows[0], tl.cols[0]])];
}"""
HOVER_JS = """() => Array.from(document.querySelectorAll('.st-key-minilm_grid .hoverlayer .hovertext'),
  h => h.querySelector('text').textContent)"""


def _hover(page: Page, r: int, c: int) -> str:
    x, y, _ = page.evaluate(CELL_JS, [r, c])
    page.mouse.move(x, y)
    page.wait_for_timeout(150)  # plotly throttles hover to one event per frame
    return "\n".join(page.evaluate(HOVER_JS))


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_minilm_grid_hover_names_layer_head_query_and_key(browser, served, lang):
    with fresh_tab(browser, served) as tab:
        page = tab.page
        page.goto(f"{served}/minilm?lang={lang}&s=the%20cat%20sat%20on%20the%20mat", timeout=TIMEOUT_MS)
        wait_rendered(page)
        no_exception(page)
        _, _, tiles = page.evaluate(CELL_JS, [0, 0])
        assert len(tiles) == 72
        (r0, c0), c1 = tiles[2 * 12 + 5], tiles[2 * 12 + 6][1]  # layer 3, heads 6 and 7
        text = _hover(page, r0 + 1, c0 + 2)
        assert t("figures.layer_query", lang, layer=3, i=1) in text, text
        assert t("figures.head_key", lang, head=6, j=2) in text, text
        assert t("figures.weight", lang) in text, text
        assert _hover(page, r0 + 1, c1 - 1) == ""  # the empty column between heads 6 and 7
        assert tab.page_errors == []
