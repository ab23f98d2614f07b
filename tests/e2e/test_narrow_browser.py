"""Every chapter in a narrow window (900 px: a small laptop with the sidebar open, the main column
about 600 px), in English and in Korean, and on a phone (390 px, as a class on its own devices):
no control's label is cut off, and nothing is wider than the page.

Streamlit cuts a widget's label that does not fit its column with an ellipsis. In fixed-ratio
st.columns a toggle's label showed 15 of its 98 px ("Causal (decoder)" on T5) at this width;
ui.common.control_row lets a row wrap instead. A formula wider than its column scrolls sideways
inside its own box (ui.presenter.ATLAS_CSS shows its scrollbar), never the page; so does a markdown
table (the Derivations catalogue made a phone's whole page scroll sideways by 133 px).

Each window walks the chapters in one tab: a page load for the first, then the browser's history
(tests/e2e/visits.Walker: a rerun in the same session, as back and forward; about half the time of a
page load), each page checked to be the chapter asked for by its title.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from explain.i18n import t
from tests.e2e.test_pages_browser import new_tab, no_exception, path_of
from tests.e2e.visits import Walker
from ui.chapters import CHAPTERS

pytestmark = pytest.mark.e2e

# (window width, language): a small laptop in both languages, a phone in English.
WINDOWS = [(900, "en"), (900, "ko"), (390, "en")]

# Every label Streamlit may cut (a widget's, an expander's, a metric's) that is cut now: its text,
# the width shown and the width it needs; any element of the main column wider than the column (a
# formula or a table scrolls inside its own box, which fits); and how far the page itself scrolls
# sideways.
CUT_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const labels = main.querySelectorAll(
    '[data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"],'
    + ' [data-testid="stExpander"] summary [data-testid="stMarkdownContainer"],'
    + ' [data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"]');
  const cut = Array.from(labels).filter(e => e.offsetParent && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.textContent + ' [' + e.clientWidth + '/' + e.scrollWidth + ' px]');
  const column = main.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect();
  const wide = Array.from(main.querySelectorAll('[data-testid="stElementContainer"]'))
    .filter(e => e.offsetParent && e.getBoundingClientRect().right > column.right + 1)
    .map(e => (e.className.match(/st-key-\\S+/) || [e.textContent.slice(0, 40)])[0]);
  return {cut, wide, page: Math.round(main.scrollWidth - main.clientWidth)};
}"""


@pytest.fixture(scope="module")
def tabs(browser, served):
    """One tab per window (width and language), opened when first asked for, closed with the
    module. Its first chapter is a page load; the others are reached as the browser's back and
    forward buttons reach them (tests/e2e/visits.Walker: a rerun, not a page load)."""
    contexts = {}
    opened: dict[tuple[int, str], Walker] = {}

    def tab(width: int, lang: str) -> Walker:
        if (width, lang) not in opened:
            contexts[width, lang] = browser.new_context(viewport={"width": width, "height": 1000})
            opened[width, lang] = Walker(new_tab(contexts[width, lang], served))
        return opened[width, lang]

    yield tab
    for context in contexts.values():
        context.close()


@pytest.mark.parametrize(("width", "lang"), WINDOWS, ids=[f"{w}px-{lang}" for w, lang in WINDOWS])
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.key for c in CHAPTERS])
def test_no_label_is_cut_and_nothing_is_wider_than_the_page(tabs, chapter, width, lang):
    walker = tabs(width, lang)
    walker.go(f"{path_of(chapter)}?lang={lang}")
    page = walker.tab.page
    expect(page.locator("h1").first).to_contain_text(t(f"chapters.{chapter.key}.title", lang))
    no_exception(page)
    found = page.evaluate(CUT_JS)
    assert found["cut"] == [], f"labels cut at {width} px: {found['cut']}"
    assert found["wide"] == [] and found["page"] <= 0, found
