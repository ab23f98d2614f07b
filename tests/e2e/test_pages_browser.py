"""Every chapter in a real browser (Playwright driving Debian's Chromium).

For each chapter in ui.chapters.CHAPTERS (CHAPTERS[0] is served at "/", the others at "/<key>"):
  * the page renders: its title, at least one plotly chart, no exception box, no error alert, no
    KaTeX error, no uncaught JavaScript error, no browser dialog;
  * a script payload typed as the sentence is shown as text: no dialog, no injected <img>, and no
    request leaves the page (none to another host, no fetch of the payload's image);
  * typing a new sentence in the sidebar redraws the page's token heatmap (its tick labels and its
    data) and updates the URL (?s=…);
  * sentence and seed survive a click on the next chapter in the navigation (the top bar), and stay
    mirrored in the URL.
And a link with ?s=hello%20world&seed=7 restores both, on "/" and on a chapter's own path.

Fast on purpose: one browser and one tab walk through the chapters as a learner would, each
chapter reached by clicking its link in the navigation (the navigation test of the chapter before),
so no chapter pays for a second full page load. Every test first makes sure the tab is where it
needs to be (it opens the chapter's URL if an earlier test failed or was deselected), so any test
also runs alone with -k.
"""

from __future__ import annotations

import contextlib
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.support.browser import RENDERED_JS, TRACK_RUNS_JS, nav_link
from ui.chapters import CHAPTERS, part_title
from ui.sidebar import DEFAULT_SENTENCE

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 90_000  # generous for a busy 2-core CI machine; a passing run never waits this long
START = ("hello world", 7)  # what the test URLs ask the sidebar to restore
PAYLOAD = "<script>alert(1)</script><img src=x onerror=alert(2)>"
NEW = "Seven quick zebras jump over lazy dogs"
FIRST_LABEL = {START[0]: "hello", PAYLOAD: "&lt;", NEW: "Seven"}  # tick label of position 0
SEED = 42
EXCEPTION = '[data-testid="stException"]'


# Every plotly chart on the page: its widget key (ui.common.plot keys every chart; Streamlit puts it
# in the container's class), how many heatmap traces, the tick labels of every axis, and a
# fingerprint of the heatmap data.
PLOTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => {
  const fl = el._fullLayout || {};
  const box = el.closest('[data-testid="stElementContainer"]');
  const key = ((box && box.className.match(/st-key-(\\S+)/)) || [null, null])[1];
  const heat = (el.data || []).filter(t => t.type === 'heatmap');
  const ticks = Object.keys(fl).filter(a => /^[xy]axis\\d*$/.test(a))
    .map(a => Array.from(fl[a].ticktext || [], String));
  const z = heat.map(t => {
    const v = t.z;
    if (v && typeof v === 'object' && !Array.isArray(v) && v.bdata !== undefined) return v;
    return Array.from(v || [], r => (r && typeof r === 'object') ? Array.from(r) : r);
  });
  return {key: key, heat: heat.length, ticks: ticks, z: JSON.stringify(z)};
})"""


CHART_SHOWS_JS = """([key, label]) => {
  const el = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
  const fl = el && el._fullLayout;
  if (!fl) return false;
  return Object.keys(fl).filter(a => /^[xy]axis\\d*$/.test(a))
    .some(a => Array.from(fl[a].ticktext || [], String).some(t => t.includes(label)));
}"""


def path_of(chapter) -> str:
    return "/" if chapter.key == CHAPTERS[0].key else f"/{chapter.key}"


def start_url(base: str, chapter) -> str:
    q = urllib.parse.urlencode({"s": START[0], "seed": START[1]}, quote_via=urllib.parse.quote)
    return f"{base}{path_of(chapter)}?{q}"


def wait_rendered(page: Page, done: int = 1, calm_ms: int = 300) -> None:
    """Wait until at least `done` script runs have finished (since the document loaded) and the
    page is drawn, unchanged for `calm_ms` (tests/support/browser.RENDERED_JS says when less will do)."""
    page.wait_for_function(RENDERED_JS, arg=[done, calm_ms], polling=50, timeout=TIMEOUT_MS)


def rerun(page: Page, action) -> None:
    """Do something that makes Streamlit rerun, then wait for that rerun to be drawn."""
    done = page.evaluate("() => window.__peDone")
    action()
    wait_rendered(page, done + 1)


def sidebar(page: Page):
    return page.locator('[data-testid="stSidebar"]')


def sentence_box(page: Page):
    return sidebar(page).get_by_role("textbox", name="Sentence")


def seed_box(page: Page):
    return sidebar(page).get_by_role("spinbutton", name="Seed")


def type_sentence(page: Page, text: str) -> None:
    """Type into the sidebar text area and commit. A Streamlit text area does not commit on Enter
    (that is a newline); it commits on Ctrl+Enter or on blur."""
    box = sentence_box(page)
    if box.input_value() == text:
        return
    box.fill(text)
    rerun(page, lambda: box.press("Control+Enter"))


def type_seed(page: Page, value: int) -> None:
    box = seed_box(page)
    if box.input_value() == str(value):
        return
    box.fill(str(value))
    rerun(page, lambda: box.press("Enter"))


def query(page: Page) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(page.url).query))


def plots(page: Page) -> list[dict]:
    return page.evaluate(PLOTS_JS)


def token_heatmap(charts: list[dict], label: str) -> int | None:
    """Index of the first heatmap with an axis tick labelled `label`, or None."""
    for k, c in enumerate(charts):
        if c["heat"] and any(label in t for t in c["ticks"]):
            return k
    return None


def reads_sentence(chapter) -> bool:
    """Does the page use the shared sentence at all? (A page of pure mathematics may not.)"""
    src = (Path(__file__).resolve().parents[2] / chapter.path).read_text(encoding="utf-8")
    return re.search(r"sentence_tokens\(|session_state(\.sentence|\[.sentence.\])", src) is not None


def no_exception(page: Page) -> None:
    exceptions = page.locator(EXCEPTION)
    assert exceptions.count() == 0, exceptions.all_inner_texts()


@dataclass
class Tab:
    """The one tab the chapters share, with everything the browser reported since it opened."""

    page: Page
    base: str
    dialogs: list[str]
    page_errors: list[str]
    requests: list[str]  # every URL the tab asked for (documents, scripts, images, XHR, websockets)

    def open(self, url: str) -> None:
        self.page.goto(url)
        wait_rendered(self.page)
        if sentence_box(self.page).count() == 0:  # the frame itself failed: say why, not "timeout"
            shown = self.page.locator(EXCEPTION).all_inner_texts()
            pytest.fail(f"{url}: the frame did not draw its sidebar. Exceptions: {shown}", pytrace=False)


def new_tab(context, base: str) -> Tab:
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(TRACK_RUNS_JS)
    tab = Tab(page, base, [], [], [])

    def on_dialog(d):
        tab.dialogs.append(f"{d.type}: {d.message}")
        d.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda e: tab.page_errors.append(str(e)))
    page.on("request", lambda r: tab.requests.append(r.url))
    page.on("websocket", lambda ws: tab.requests.append(ws.url))
    return tab


@contextlib.contextmanager
def fresh_tab(browser, served: str, width: int = 1280, height: int = 1000):
    """A tab in a context of its own (nothing shared with other tests), closed afterwards."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        yield new_tab(context, served)
    finally:
        context.close()


def leaving(tab: Tab, urls: list[str]) -> list[str]:
    """The URLs that go anywhere but our own server (an offline app must never ask the internet)."""
    own = urllib.parse.urlsplit(tab.base).netloc
    return [
        u
        for u in urls
        if urllib.parse.urlsplit(u).scheme in ("http", "https", "ws", "wss") and urllib.parse.urlsplit(u).netloc != own
    ]


@pytest.fixture(scope="session")
def shared_context(browser, served):
    """One browser context for the file: the tabs share its HTTP cache, so plotly's and KaTeX's
    code is fetched and compiled once, not once per chapter."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def tab(shared_context, served) -> Tab:
    return new_tab(shared_context, served)


@dataclass
class Here:
    chapter: object
    tab: Tab
    errors_from: int  # the tab's page errors before this chapter was opened
    dialogs_from: int

    @property
    def page(self) -> Page:
        return self.tab.page

    def ensure(self) -> Page:
        """On this chapter: if an earlier test failed or was deselected, open its URL."""
        if urllib.parse.urlsplit(self.page.url).path != path_of(self.chapter) or self.page.url == "about:blank":
            self.tab.open(start_url(self.tab.base, self.chapter))
        return self.page


@pytest.fixture(scope="module", params=CHAPTERS, ids=[c.key for c in CHAPTERS])
def here(request, tab: Tab) -> Here:
    """The shared tab, on this chapter. Normally the previous chapter's navigation test has just
    clicked its way here; the first chapter (or any chapter after a failure) opens its URL."""
    h = Here(request.param, tab, len(tab.page_errors), len(tab.dialogs))
    h.ensure()
    return h


def test_page_renders(here: Here):
    page, chapter = here.ensure(), here.chapter
    expect(page.locator("h1").first).to_contain_text(chapter.title)
    no_exception(page)
    errors = page.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 0, errors.all_inner_texts()
    not_found = page.locator('[role="dialog"]', has_text="Page not found")
    assert not_found.count() == 0, f"{path_of(chapter)} is not a page"
    bad_tex = page.locator(".katex-error")
    assert bad_tex.count() == 0, [bad_tex.nth(k).get_attribute("title") for k in range(bad_tex.count())]
    assert "#cc0000" not in page.content(), "KaTeX drew an undefined macro (red) on this page"
    if reads_sentence(chapter):
        assert page.locator(".js-plotly-plot").count() >= 1, "no plotly chart was drawn"
    else:  # a page of pure mathematics (Derivations) shows formulas instead
        assert page.locator(".js-plotly-plot").count() + page.locator(".katex").count() >= 1
    assert here.tab.page_errors[here.errors_from :] == [], "uncaught JavaScript errors"
    assert here.tab.dialogs[here.dialogs_from :] == []
    assert leaving(here.tab, here.tab.requests) == [], "the page asked another host for something"


def test_script_payload_is_shown_as_text(here: Here):
    page, chapter = here.ensure(), here.chapter
    dialogs_before, requests_before = len(here.tab.dialogs), len(here.tab.requests)
    # type_sentence waits until the page is drawn and then unchanged for 300 ms (RENDERED_JS): time
    # for an injected onerror to have fired, and for the image request it needs to have been made.
    type_sentence(page, PAYLOAD)
    assert here.tab.dialogs[dialogs_before:] == []
    # No request leaves the page: nothing to another host, and no fetch of the payload's <img src=x>.
    sent = here.tab.requests[requests_before:]
    assert leaving(here.tab, sent) == [], f"requests left the page: {leaving(here.tab, sent)}"
    assert not [u for u in sent if urllib.parse.urlsplit(u).path.rstrip("/").endswith("/x")], sent
    assert sentence_box(page).input_value() == PAYLOAD
    assert page.locator('img[src="x"]').count() == 0
    assert page.evaluate("() => document.querySelectorAll('[onerror]').length") == 0
    assert not page.evaluate("() => Array.from(document.scripts).some(s => s.text.includes('alert('))")
    no_exception(page)
    assert query(page).get("s") == PAYLOAD
    if reads_sentence(chapter):
        # The payload's tokens are drawn, and "<" shows as a literal character in the tick labels.
        k = token_heatmap(plots(page), FIRST_LABEL[PAYLOAD])
        assert k is not None, "the page did not draw the payload's tokens"
        tick_text = page.evaluate(
            "k => Array.from(document.querySelectorAll('.js-plotly-plot')[k]"
            ".querySelectorAll('.xtick text, .ytick text'), t => t.textContent)",
            k,
        )
        assert "<" in tick_text and "&lt;" not in tick_text, tick_text


def test_typing_a_sentence_redraws_the_token_heatmap(here: Here):
    page, chapter = here.ensure(), here.chapter
    if not reads_sentence(chapter):
        pytest.skip(f"{chapter.path} does not use the shared sentence")
    # Before: whatever the learner had (normally the payload of the test above). Long or repeated
    # texts get thinned tick labels, but position 0 always keeps its label.
    if sentence_box(page).input_value() not in (START[0], PAYLOAD):
        type_sentence(page, START[0])
    old = sentence_box(page).input_value()
    before = plots(page)
    k = token_heatmap(before, FIRST_LABEL[old])
    assert k is not None, (
        f"no heatmap is labelled with the sentence's tokens; tick labels: {[c['ticks'] for c in before if c['heat']]}"
    )
    key = before[k]["key"]
    type_sentence(page, NEW)
    if key:
        # The run is over, but plotly may still be mounting the redrawn chart on a busy machine:
        # wait (bounded) until the chart with this key shows the new sentence's first token.
        with contextlib.suppress(PlaywrightTimeout):  # the assertions below say what is wrong
            page.wait_for_function(CHART_SHOWS_JS, arg=[key, FIRST_LABEL[NEW]], polling=100, timeout=30_000)
    after = {c["key"]: c for c in plots(page)} if key else dict(enumerate(plots(page)))
    heat = after.get(key if key else k)
    assert heat is not None, f"the heatmap {key or k} is gone after typing; charts now: {list(after)}"
    labels = [set(t) for t in heat["ticks"]]
    assert any(FIRST_LABEL[NEW] in t for t in labels), heat["ticks"]
    assert not any(FIRST_LABEL[old] in t for t in labels), heat["ticks"]
    assert heat["z"] != before[k]["z"], "the heatmap's data did not change with the sentence"
    assert query(page).get("s") == NEW
    no_exception(page)


def _nav_link(page: Page, chapter):
    first = chapter.key == CHAPTERS[0].key  # its href is the bare base URL
    return nav_link(page, part_title(chapter.part, "en"), chapter.key, chapter.title if first else None)


def test_sentence_and_seed_survive_navigation(here: Here):
    """Type the seed, click the next chapter in the navigation: both values and the URL follow.
    This is also how the next chapter's tests reach their page."""
    page, chapter = here.ensure(), here.chapter
    type_seed(page, SEED)
    sentence = sentence_box(page).input_value()  # normally the sentence typed by the test above
    assert sentence and sentence != DEFAULT_SENTENCE
    target = CHAPTERS[(CHAPTERS.index(chapter) + 1) % len(CHAPTERS)]
    if target.key == chapter.key:
        pytest.skip("only one chapter")
    link = _nav_link(page, target)
    rerun(page, link.click)
    assert urllib.parse.urlsplit(page.url).path == path_of(target)
    expect(page.locator("h1").first).to_contain_text(target.title)
    assert sentence_box(page).input_value() == sentence
    expect(seed_box(page)).to_have_value(str(SEED))
    assert query(page).get("s") == sentence and query(page).get("seed") == str(SEED), page.url
    no_exception(page)


@pytest.mark.parametrize("where", sorted({0, len(CHAPTERS) - 1}), ids=lambda k: CHAPTERS[k].key)
def test_url_restores_sentence_and_seed(shared_context, served, where):
    """A shared link restores the sentence and the seed: on "/" and on a chapter's own path."""
    chapter = CHAPTERS[where]
    tab = new_tab(shared_context, served)
    try:
        tab.open(start_url(served, chapter))
        expect(tab.page.locator("h1").first).to_contain_text(chapter.title)
        expect(sentence_box(tab.page)).to_have_value(START[0])
        # The number input can show its minimum for a moment before the restored value.
        expect(seed_box(tab.page)).to_have_value(str(START[1]), timeout=15_000)
        assert (query(tab.page).get("s"), query(tab.page).get("seed")) == (START[0], str(START[1]))
        no_exception(tab.page)
    finally:
        tab.page.close()
