"""Section-level reruns in a real browser, in Korean: moving a slider that lives in an st.fragment
reruns only its section — the rest of the page is not redrawn (a chart outside keeps its very DOM
node) — and the section comes back in the learner's language (a fragment rerun skips app.py, which
sets the language of a full run; tests/test_fragments.py checks the call, this checks the effect)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_pages_browser import new_tab, rerun, wait_rendered

pytestmark = pytest.mark.e2e

HANGUL = re.compile("[가-힣]")
# (chapter, a slider inside one of its fragments, a chart outside that fragment)
CASES = [
    ("learned", "max_len", "real_table"),
    ("alibi", "alibi_train_len", "slopes"),
    ("alibi", "nope_count_n", "slopes"),
    ("rope", "rope_m", "rope_decay"),
]

MARK_JS = """key => { const el = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
  if (el) el.__peMark = true; return !!el; }"""
MARKED_JS = """key => { const el = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
  return !!(el && el.__peMark); }"""


@pytest.mark.parametrize(("chapter", "slider", "outside"), CASES, ids=lambda v: str(v))
def test_a_fragment_slider_reruns_its_section_in_korean(browser, served, chapter, slider, outside):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        tab = new_tab(context, served)
        page = tab.page
        page.goto(f"{served}/{chapter}?lang=ko")
        wait_rendered(page)
        label = page.locator(f'.st-key-{slider} [data-testid="stWidgetLabel"]').first
        before = label.inner_text()
        assert HANGUL.search(before), before
        assert page.evaluate(MARK_JS, outside), f"no chart {outside} on {chapter}"
        thumb = page.locator(f".st-key-{slider} input[type='range']").first
        value = thumb.input_value()
        thumb.focus()
        rerun(page, lambda: thumb.press("ArrowRight"))
        assert thumb.input_value() != value  # it moved
        assert label.inner_text() == before  # the section came back in Korean
        assert page.evaluate(MARKED_JS, outside)  # the chart outside was not redrawn: a section rerun
        assert not page.locator('[data-testid="stException"]').count()
    finally:
        context.close()
