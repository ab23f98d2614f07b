"""axe-core, the standard accessibility engine, over every chapter in both languages (real Chromium).

For every page and language: no critical or serious violation in the app's own markup, no heading
out of order, no empty table header; Streamlit's own frame (its sidebar navigation, its header) may
only break the rules listed in tests/support/axe.STREAMLIT_ONLY, each with its reason. Presenter mode
is checked on one chapter with captions, a citation and a proof. The first test shows that the
checks catch a low-contrast caption, a skipped heading level and a faded chart label, planted in a
real page. Chart words (SVG text, which axe does not check) are measured by chart_text_findings.

Fast on purpose: every chapter in each language is opened once, at 1400 px, for this file, the margins
check and the glyph check together (tests/e2e/visits.py runs axe there); the planted faults and
presenter mode use one tab of their own.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.support.axe import SEVERE, STREAMLIT_ONLY, Finding, axe_script, chapter_url, page_violations
from tests.support.browser import RENDERED_JS, TRACK_RUNS_JS, nav_link
from ui.chapters import BY_KEY, CHAPTERS, part_title

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 90_000  # generous for a busy 2-core CI machine; a passing run never waits this long
# Moderate rules the app fixed and keeps fixed (axe rates them below "serious").
KEPT_CLEAN = ("heading-order", "empty-table-header", "page-has-heading-one")


class Tab:
    """One tab that remembers which chapter and language it shows."""

    def __init__(self, page: Page, base: str) -> None:
        self.page, self.base, self.where = page, base, ("", "")
        self.script = axe_script()

    def wait(self, done: int = 1) -> None:
        self.page.wait_for_function(RENDERED_JS, arg=done, polling=50, timeout=TIMEOUT_MS)

    def open(self, key: str, lang: str) -> Page:
        page = self.page
        if self.where == (key, lang):
            return page
        if self.where[1] == lang and key != CHAPTERS[0].key:
            link = nav_link(page, part_title(BY_KEY[key].part, lang), key)
            done = page.evaluate("() => window.__peDone")
            link.click()
            self.wait(done + 1)
        else:
            page.goto(chapter_url(self.base, key, lang))
            self.wait()
        self.where = (key, lang)
        return page

    def findings(self) -> list[Finding]:
        return page_violations(self.page, self.script)


@pytest.fixture(scope="module")
def tab(browser, served):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(TRACK_RUNS_JS)
    yield Tab(page, served)
    context.close()


def problems(found: list[Finding]) -> list[str]:
    app = [f for f in found if f.owner == "app" and (f.impact in SEVERE or f.rule in KEPT_CLEAN)]
    unlisted = [f for f in found if f.owner == "streamlit" and f.rule not in STREAMLIT_ONLY]
    return [f"{f.impact} {f.rule} [{f.where}] {f.summary[:200]!r} :: {f.html[:120]!r}" for f in app + unlisted]


PLANT_JS = """() => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const p = document.createElement('p');
  p.id = 'planted-grey'; p.textContent = 'a faded caption'; p.style.color = '#aaaaaa';
  const h = document.createElement('h4');
  h.id = 'planted-h4'; h.textContent = 'a skipped level';
  main.prepend(p);
  main.querySelector('h1').closest('[data-testid="stElementContainer"]').after(h);  // h1 → h4
  const tick = document.querySelector('.js-plotly-plot svg .xtick text');
  tick.textContent = 'a faded tick'; tick.style.fill = '#aaaaaa';  // Streamlit's chart theme was 3.8:1
}"""


def test_the_checks_catch_planted_faults(tab):
    # A chapter with a chart's axis to spoil (Start here's diagram has none).
    page = tab.open("why-order", "en")
    try:
        page.evaluate(PLANT_JS)
        found = problems(tab.findings())
        assert any("color-contrast" in f and "faded caption" in f for f in found), found
        assert any("heading-order" in f and "skipped level" in f for f in found), found
        assert any("chart-text-contrast" in f and "faded tick" in f for f in found), found
    finally:
        tab.where = ("", "")  # the page is spoiled: the next test opens its own


@pytest.mark.parametrize(
    ("lang", "key"), [(lang, c.key) for lang in ("en", "ko") for c in CHAPTERS], ids=lambda v: str(v)
)
def test_axe_finds_nothing_serious(visits, lang, key):
    # axe ran on the page when it was opened for the margins and glyph checks too (tests/e2e/visits.py)
    assert problems(visits(key, lang).axe) == []


def test_presenter_mode(tab):
    tab.page.goto(chapter_url(tab.base, "rope", "en", {"present": "1"}))
    tab.wait()
    tab.where = ("", "")
    assert problems(tab.findings()) == []
