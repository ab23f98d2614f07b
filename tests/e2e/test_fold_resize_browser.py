"""A chart folded in a closed box until Reveal (ui/question.folded: questions that wait) fits its box
when the box is opened after the window changed width (issue 43).

Before, a closed box measures 0 and its ResizeObserver reports nothing, so the chart kept the width it
was first drawn at: opened after the window went from 1366 to 900 px, ALiBi's folded slopes chart was
872 px wide in a 406 px box (and 406 px in an 872 px box the other way). ui/chart.py now compares the
opened box with the width the chart was drawn at.
"""

from __future__ import annotations

import pytest

from tests.e2e.test_pages_browser import TIMEOUT_MS, fresh_tab, wait_rendered

pytestmark = pytest.mark.e2e

FOLDS_JS = """() => Array.from(document.querySelectorAll('[class*="__folds_"]'))
  .map(e => e.className.match(/st-key-(\\S+__folds_\\S+)/)[1])"""
MEASURE_JS = """key => { const f = document.querySelector('.st-key-' + key); const c = f.querySelector('.pe-chart');
  return {open: f.querySelector('details').open, chart: c._fullLayout.width,
          box: c.parentElement.getBoundingClientRect().width}; }"""


@pytest.mark.parametrize(("before", "after"), [(1366, 900), (900, 1366)])
def test_a_folded_chart_fits_its_box_when_opened_after_a_resize(browser, served, before, after):
    with fresh_tab(browser, served, width=before, height=800) as tab:
        page = tab.page
        page.goto(f"{served}/alibi", timeout=TIMEOUT_MS)
        wait_rendered(page)
        folds = page.evaluate(FOLDS_JS)
        assert folds, "ALiBi folds its slopes chart until Reveal"
        page.set_viewport_size({"width": after, "height": 800})
        page.wait_for_timeout(1000)
        for key in folds:
            fold = page.locator(f".st-key-{key}")
            fold.scroll_into_view_if_needed()
            fold.locator("summary").first.click()
            page.wait_for_function(
                "key => { const c = document.querySelector('.st-key-' + key + ' .pe-chart');"
                " return Math.abs(c._fullLayout.width - c.parentElement.getBoundingClientRect().width) <= 2; }",
                arg=key,
                timeout=10_000,
            )
            m = page.evaluate(MEASURE_JS, key)
            assert m["open"] and abs(m["chart"] - m["box"]) <= 2, (key, m)
        assert tab.page_errors == []
