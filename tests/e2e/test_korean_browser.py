"""Every chapter in Korean in a real browser: no missing glyphs, and the language switch works.

For each chapter, opened at /<key>?lang=ko (a Korean link, so a Korean sentence too) in a Korean
browser at 1400 px (the visit the margins and axe tests read too: tests/e2e/visits.py), the page and
its charts are waited for, a full-page screenshot is saved (in the pytest temp directory, or in
$PE_ATLAS_SCREENSHOTS when set), and every character the page shows — HTML text and the SVG text of
every plotly chart — is checked for a glyph (visits.GLYPHS_JS): each character is drawn on a canvas
in the font of the element that shows it and compared with the drawing of characters no font has
(U+0378, U+0379: unassigned). A character drawn exactly like those is a missing glyph, a "tofu"
box. The detector is checked against those unassigned characters first, so it can fail.

The switch itself: clicking 한국어 in the sidebar turns the page Korean, keeps the sentence, and
puts lang=ko in the address; clicking English turns it back.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from explain.i18n import t
from tests.e2e.test_pages_browser import TIMEOUT_MS, new_tab, no_exception, rerun, wait_rendered
from ui.chapters import CHAPTERS

pytestmark = pytest.mark.e2e

# The detector itself: a page-independent check that unassigned code points count as missing and
# Hangul, Latin and the atlas's symbols do not.
PROBE_JS = """(family) => {
  const canvas = document.createElement('canvas'); canvas.width = 64; canvas.height = 64;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const draw = ch => { ctx.clearRect(0, 0, 64, 64); ctx.font = `40px ${family}`; ctx.textBaseline = 'middle';
    ctx.fillText(ch, 8, 32); const px = ctx.getImageData(0, 0, 64, 64).data; let h = 0;
    for (let i = 3; i < px.length; i += 4) h = (h * 31 + px[i]) | 0;
    return h + ':' + ctx.measureText(ch).width.toFixed(2); };
  const tofu = new Set([draw('\\u0378'), draw('\\u0379')]);
  const probes = ['\\u037f', '\\u0380', '\\u0381', '한', '글', 'A', 'Σ', '·', '−', 'ᴷ', '‖'];
  return Object.fromEntries(probes.map(c => [c, tofu.has(draw(c))]));
}"""


def test_the_glyph_detector_can_fail(visits):
    visits("start", "ko")  # the Korean tab, on a page of the atlas (its fonts loaded)
    page = visits.tab("ko").page
    for family in ("sans-serif", "'Source Sans', sans-serif"):
        found = page.evaluate(PROBE_JS, family)
        assert found["\u037f"] is False  # Greek capital yot: a real letter, in DejaVu / Noto
        assert found["\u0380"] and found["\u0381"], found  # unassigned: no font has them
        assert not any(found[c] for c in "한글AΣ·−ᴷ‖"), found


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.key for c in CHAPTERS])
def test_korean_page_has_every_glyph(visits, chapter):
    visit = visits(chapter.key, "ko")
    assert t(f"chapters.{chapter.key}.title", "ko") in visit.h1, visit.h1
    assert visit.exceptions == [], visit.exceptions
    report = visit.glyphs
    assert report["probe"], "the glyph detector did not recognise an unassigned character"
    assert report["hangul"] >= 20, report  # the page really is Korean
    assert not report["missing"], report["missing"][:20]
    assert visit.leaving == []  # a Korean font is never downloaded


def switch_language(page: Page, button, title: str) -> None:
    """Click a language button, and wait until the page title is in that language and the page is
    drawn. Twice a loaded machine (load 6-10 on 2 cores) let a click go by without a rerun: one more
    click, bounded, if the title has not changed after a third of the wait (a click on the chosen
    language does nothing, so a second click cannot switch back)."""
    h1 = page.locator("h1").first
    button.click()
    try:
        expect(h1).to_contain_text(title, timeout=TIMEOUT_MS // 3)
    except AssertionError:
        button.click()
        expect(h1).to_contain_text(title, timeout=TIMEOUT_MS)
    wait_rendered(page, 0)  # the title is drawn by the run; wait until that run has finished drawing


def test_switching_language_in_the_sidebar(browser, served):
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    tab = new_tab(context, served)
    page = tab.page
    try:
        page.goto(f"{served}/shaw?s=one%20two%20three&seed=5")
        wait_rendered(page)
        expect(page.locator("h1").first).to_contain_text("Shaw relative positions")
        side = page.locator('[data-testid="stSidebar"]')
        switch_language(page, side.get_by_role("radio", name="한국어"), t("chapters.shaw.title", "ko"))
        assert "lang=ko" in page.url
        box = side.get_by_role("textbox", name=t("common.sidebar.sentence", "ko"))
        assert box.input_value() == "one two three"
        assert side.get_by_role("spinbutton", name=t("common.sidebar.seed", "ko")).input_value() == "5"
        switch_language(page, side.get_by_role("radio", name="English"), "Shaw relative positions")
        assert "lang=ko" not in page.url
        assert side.get_by_role("textbox", name="Sentence").input_value() == "one two three"
        no_exception(page)
    finally:
        context.close()


def test_a_korean_browser_opens_in_korean_with_no_lang_in_the_address(browser, served):
    """st.context.locale: a ko-KR browser gets Korean (and the Korean sentence) with no ?lang; the
    switch still overrides it, writes lang=en so a link keeps English, and the untouched default
    sentence follows the language."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="ko-KR")
    tab = new_tab(context, served)
    page = tab.page
    try:
        page.goto(f"{served}/shaw")
        wait_rendered(page)
        expect(page.locator("h1").first).to_contain_text(t("chapters.shaw.title", "ko"))
        side = page.locator('[data-testid="stSidebar"]')
        box = side.get_by_role("textbox", name=t("common.sidebar.sentence", "ko"))
        assert box.input_value() == t("common.sidebar.default_sentence", "ko")
        rerun(page, lambda: side.get_by_role("radio", name="English").click())
        expect(page.locator("h1").first).to_contain_text("Shaw relative positions")
        assert "lang=en" in page.url
        box = side.get_by_role("textbox", name="Sentence")
        # The box takes the English default in the run the switch starts, which may end after the h1
        # has changed: wait for the value rather than read it once (a read raced it once in CI).
        expect(box).to_have_value(t("common.sidebar.default_sentence", "en"), timeout=TIMEOUT_MS // 3)
        no_exception(page)
    finally:
        context.close()
