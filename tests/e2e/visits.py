"""One visit per chapter and language at 1400 px, shared by the browser tests that only look.

Three files check every chapter in both languages at the browser benchmark's width without touching
a control: the margins figures are sent with (test_margins_browser.py), axe-core's accessibility
rules (test_axe.py) and, in Korean, a glyph for every character (test_korean_browser.py). Each used
to open every page itself: 100 page loads for 40 pages. A visit here opens a page once and measures
everything those tests read, in an order that keeps the measurements apart (the margins first, from
the page as drawn; axe; the glyphs; the screenshot last, as it may resize the page); the tests then
assert on the measurements, each in its own file, so each still fails on its own.

A visit is made the first time a test asks for it (any test of the three, in any order, or alone
with -k) and kept for the session (tests/e2e/conftest.py: `visits`). A visit that failed (the page
never drew, an exception in the browser) is kept as its failure: every test that reads it fails with
that message instead of waiting for the page again.

Korean pages are opened in a Korean browser (locale ko-KR), English pages in an English one; in
each, the first page by a page load, the others as the browser's back and forward buttons reach
them (Walker: a rerun in the same session, about half the time of a page load), each checked to be
the chapter asked for by its title.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, ViewportSize

from tests.e2e.test_pages_browser import TIMEOUT_MS, Tab, leaving, new_tab, path_of, wait_rendered
from tests.support.axe import Finding, axe_script, page_violations

VIEWPORT: ViewportSize = {"width": 1400, "height": 1000}  # the width tools/bench_browser.py measures at
LANGS = ("en", "ko")

# Every chart the page draws (tests/e2e/test_margins_browser.py): the margins sent (layout.margin),
# what plotly settled on (_fullLayout._size), and what plotly needs on its own: the same figure drawn
# again, off screen, from the theme's 10 px margins.
MARGINS_JS = """async () => {
  const out = [];
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const sent = gd.layout.margin || {};
    const size = gd._fullLayout._size;
    const probe = document.createElement('div');
    probe.style.cssText = 'position:absolute; left:-5000px; top:0; width:' + gd._fullLayout.width + 'px';
    document.body.appendChild(probe);
    const layout = JSON.parse(JSON.stringify(gd.layout));
    layout.margin = Object.assign({}, layout.margin, {l: 10, r: 10, b: 10});
    layout.width = gd._fullLayout.width;
    await window.Plotly.newPlot(probe, JSON.parse(JSON.stringify(gd.data)), layout, {staticPlot: true});
    const own = probe._fullLayout._size;
    out.push({title: (gd._fullLayout.title && gd._fullLayout.title.text) || '',
              subplots: gd._fullLayout._subplots.cartesian.length,
              // labels the builder put in the margins (annotations at paper x < 0, y ≤ 0): plotly
              // reserves no room for annotations, so such a builder sets a margin of its own
              outside: (gd.layout.annotations || []).some(a => (a.xref === 'paper' && a.x < 0)
                || (a.yref === 'paper' && a.y <= 0 && a.yanchor === 'top')),
              sent: [sent.l, sent.r, sent.b], got: [size.l, size.r, size.b], own: [own.l, own.r, own.b]});
    window.Plotly.purge(probe);
    probe.remove();
  }
  return out;
}"""

# Every character the page shows (tests/e2e/test_korean_browser.py), HTML text and the SVG text of
# every chart, drawn on a canvas in the font of the element that shows it and compared with the
# drawing of characters no font has (U+0378, U+0379: unassigned). Checked: everything outside ASCII
# except emoji (colour-font glyphs that a canvas draws unlike text), joiners, variation selectors and
# combining marks (no glyph of their own).
GLYPHS_JS = """() => {
  const skip = c => c <= 0x7f || (c >= 0x1f000) || (c >= 0xfe00 && c <= 0xfe0f) || c === 0x200d
    || (c >= 0x200b && c <= 0x200f) || (c >= 0x300 && c <= 0x36f) || (c >= 0x2600 && c <= 0x27bf && c !== 0x27a1);
  const byFont = new Map();  // font family → Set of characters shown in it
  const add = (text, el) => {
    if (!text) return;
    const family = getComputedStyle(el).fontFamily || 'sans-serif';
    if (!byFont.has(family)) byFont.set(family, new Set());
    const set = byFont.get(family);
    for (const ch of text) { const c = ch.codePointAt(0); if (!skip(c)) set.add(ch); }
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const el = node.parentElement;
    if (!el || el.closest('script,style,noscript,[aria-hidden="true"] .katex-mathml')) continue;
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') continue;
    add(node.nodeValue, el);
  }
  const canvas = document.createElement('canvas');
  canvas.width = 64; canvas.height = 64;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (ch, family) => {
    ctx.clearRect(0, 0, 64, 64);
    ctx.font = `40px ${family}`;
    ctx.textBaseline = 'middle';
    ctx.fillText(ch, 8, 32);
    const px = ctx.getImageData(0, 0, 64, 64).data;
    let h = 0;
    for (let i = 3; i < px.length; i += 4) h = (h * 31 + px[i]) | 0;
    return h + ':' + ctx.measureText(ch).width.toFixed(2);
  };
  const missing = [];
  let checked = 0, hangul = 0;
  const probe = [];
  for (const [family, chars] of byFont) {
    const tofu = new Set([draw('\\u0378', family), draw('\\u0379', family)]);
    probe.push(tofu.has(draw('\\u0378', family)));
    for (const ch of chars) {
      checked += 1;
      if (/[\\uac00-\\ud7a3]/.test(ch)) hangul += 1;
      if (tofu.has(draw(ch, family))) missing.push(ch + ' U+' + ch.codePointAt(0).toString(16) + ' in ' + family);
    }
  }
  return {missing, checked, hangul, fonts: byFont.size, probe: probe.every(x => x)};
}"""

WAIT_CHARTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).every(el => el._fullLayout)"""

# What the browser's back and forward buttons do: Streamlit's app listens to popstate and reruns the
# page the address names, in the same session. A page reached so is drawn by a rerun, not a page load
# (no new session, no second load of Streamlit's and plotly's code): 20 chapters at 900 px took 55-59 s
# this way and 121-151 s by page.goto, on the same busy machine.
GO_JS = """url => {
  history.pushState({}, '', url);
  window.dispatchEvent(new PopStateEvent('popstate', {state: {}}));
}"""


# A page reached by history, with nothing typed, settles in less calm (tests/support/browser.RENDERED_JS).
WALK_CALM_MS = 150


class Walker:
    """A tab that opens pages as back and forward do, after a page load for its first page (and
    after a page that did not draw: the next one starts afresh)."""

    def __init__(self, tab: Tab) -> None:
        self.tab, self.drawn = tab, False

    def go(self, url: str) -> None:
        """Open `url` (a path and query on the tab's server) and wait until it is drawn."""
        page, drawn = self.tab.page, self.drawn
        self.drawn = False
        if drawn:
            done = page.evaluate("() => window.__peDone")
            page.evaluate(GO_JS, url)
            wait_rendered(page, done + 1, calm_ms=WALK_CALM_MS)
        else:
            page.goto(self.tab.base + url, timeout=TIMEOUT_MS)
            wait_rendered(page)
        self.drawn = True


@dataclass
class Visit:
    """What one chapter in one language showed, measured once."""

    key: str
    lang: str
    h1: str
    exceptions: list[str]  # the text of every exception box
    charts: list[dict] = field(default_factory=list)  # MARGINS_JS, one row per chart
    axe: list[Finding] = field(default_factory=list)  # tests.support.axe.page_violations
    glyphs: dict | None = None  # GLYPHS_JS (Korean pages)
    leaving: list[str] = field(default_factory=list)  # requests to any host but ours during the visit
    page_errors: list[str] = field(default_factory=list)  # uncaught JavaScript errors during the visit
    shot: Path | None = None  # full-page screenshot (Korean pages)


class Visits:
    """Opens each (chapter, language) once, on demand, in one tab per language."""

    def __init__(self, browser: Browser, base: str, shots: Path) -> None:
        self.browser, self.base, self.shots = browser, base, shots
        self.contexts: dict[str, BrowserContext] = {}
        self.tabs: dict[str, Walker] = {}
        self.done: dict[tuple[str, str], Visit | str] = {}
        self.script = axe_script()

    def tab(self, lang: str) -> Tab:
        """The tab this language's visits are made in (a Korean browser for Korean)."""
        return self.walker(lang).tab

    def walker(self, lang: str) -> Walker:
        if lang not in self.tabs:
            context = self.browser.new_context(viewport=VIEWPORT, locale="ko-KR" if lang == "ko" else None)
            self.contexts[lang] = context
            self.tabs[lang] = Walker(new_tab(context, self.base))
        return self.tabs[lang]

    def __call__(self, key: str, lang: str) -> Visit:
        if (key, lang) not in self.done:
            try:
                self.done[key, lang] = self._visit(key, lang)
            except Exception as e:  # kept: the other tests of this page fail at once with it
                self.done[key, lang] = f"visiting {key} in {lang} failed: {type(e).__name__}: {e}"
        found = self.done[key, lang]
        if isinstance(found, str):
            pytest.fail(found, pytrace=False)
        return found

    def _visit(self, key: str, lang: str) -> Visit:
        from explain.i18n import t
        from ui.chapters import BY_KEY

        walker = self.walker(lang)
        tab, page = walker.tab, walker.tab.page
        requests_from, errors_from = len(tab.requests), len(tab.page_errors)
        title = t(f"chapters.{key}.title", lang)
        url = f"{path_of(BY_KEY[key])}?lang={lang}"
        loaded = not walker.drawn  # this visit opens the tab by a page load
        walker.go(url)
        h1 = page.locator("h1").first
        if loaded and title not in (h1.inner_text() if h1.count() else ""):
            # A tab's first page load can draw the default page (Start here) before Streamlit has
            # resolved the deep link (seen once in a full run, on the first English visit); the
            # page asked for then comes by the same rerun back and forward use. Asked once more.
            walker.go(url)
        page.wait_for_function(WAIT_CHARTS_JS, polling=100, timeout=TIMEOUT_MS)
        visit = Visit(
            key,
            lang,
            h1.inner_text() if h1.count() else "",
            page.locator('[data-testid="stException"]').all_inner_texts(),
        )
        if title not in visit.h1:  # not the page asked for: measure nothing
            raise AssertionError(f"{key} in {lang}: the page's title is {visit.h1!r}, not {title!r}")
        visit.charts = page.evaluate(MARGINS_JS)
        visit.axe = page_violations(page, self.script)
        if lang == "ko":
            visit.glyphs = page.evaluate(GLYPHS_JS)
            visit.shot = self.shots / f"ko-{key}.png"
            page.screenshot(path=str(visit.shot), full_page=True)
        visit.leaving = leaving(tab, tab.requests[requests_from:])
        visit.page_errors = tab.page_errors[errors_from:]
        return visit

    def close(self) -> None:
        for context in self.contexts.values():
            context.close()
