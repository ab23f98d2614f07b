"""The atlas's chart element (ui/chart.py) in a real browser: each chart is drawn once, at its box's
size, with plotly.js's cartesian build from the app's static folder; a new figure draws again and a
rerun that sends the same figure does not; a narrower window resizes every chart; the full-screen
button fills the screen; and a chart off screen is not laid out until it is scrolled to
(ui.presenter.ATLAS_CSS).
"""

from __future__ import annotations

import pytest

from explain import i18n
from tests.e2e.test_pages_browser import TIMEOUT_MS, fresh_tab, no_exception, rerun, type_sentence, wait_rendered
from ui.chart import PLOTLY_BUILD, chart_words

pytestmark = pytest.mark.e2e

# Every chart: its key, how often it was drawn, the width plotly drew it at and its box's width, the
# height drawn and asked for, its x tick labels, and the figure it holds.
CHARTS_JS = """() => Array.from(document.querySelectorAll('.pe-chart'), gd => {
  const box = gd.closest('[data-testid="stElementContainer"]');
  const key = ((box && box.className.match(/st-key-(\\S+)/)) || [0, '?'])[1];
  const ticks = Array.from(gd.querySelectorAll('.xtick text'), t => t.textContent);
  return {key, draws: gd.__peDraws || 0, drawn: gd._fullLayout.width,
          room: Math.round(gd.parentElement.getBoundingClientRect().width), height: gd._fullLayout.height,
          asked: gd.layout.height, ticks, spec: gd.__peSpec, folded: !!gd.closest('details:not([open])')};
})"""


def _charts(page) -> dict[str, dict]:
    charts = page.evaluate(CHARTS_JS)
    assert len({c["key"] for c in charts}) == len(charts), [c["key"] for c in charts]
    return {c["key"]: c for c in charts}


def _open(page, url: str) -> None:
    page.goto(url, timeout=TIMEOUT_MS)
    wait_rendered(page)
    no_exception(page)


def _drawn_at_their_size(charts: dict[str, dict]) -> None:
    for c in charts.values():
        assert abs(c["drawn"] - c["room"]) <= 1 and c["height"] == c["asked"], c


# Shaw's charts span the page; Why order matters has three in columns, whose widths are fractional.
@pytest.mark.parametrize("path", ["shaw", "why-order"])
def test_every_chart_is_drawn_once_at_its_size(browser, served, path):
    with fresh_tab(browser, served) as tab:
        page = tab.page
        _open(page, f"{served}/{path}?s=the%20cat%20sat%20on%20the%20mat")
        charts = _charts(page)
        assert len(charts) >= 6
        assert {k: c["draws"] for k, c in charts.items()} == dict.fromkeys(charts, 1)
        _drawn_at_their_size(charts)
        # plotly.js is the cartesian build, from the app's static folder, and Streamlit's own chart
        # element (and its full plotly.js chunk) was never loaded.
        assert page.evaluate("() => window.Plotly.version") == PLOTLY_BUILD.split("-")[-1].removesuffix(".min.js")
        scripts = page.evaluate("() => performance.getEntriesByType('resource').map(r => r.name)")
        assert any(s.endswith(f"/app/static/{PLOTLY_BUILD}") for s in scripts), scripts
        assert not any("PlotlyChart" in s for s in scripts), [s for s in scripts if "Plotly" in s]

        # A new sentence: the charts whose figure changed are drawn once more, with the new words;
        # the others not at all.
        type_sentence(page, "a dog ran far away today")
        after = _charts(page)
        changed = {k for k, c in after.items() if c["spec"] != charts[k]["spec"]}
        worded = {k for k, c in after.items() if "dog" in " ".join(c["ticks"])}
        assert worded and worded <= changed, (worded, changed)
        assert {k: c["draws"] for k, c in after.items()} == {k: 1 + (k in changed) for k in after}
        _drawn_at_their_size(after)

        # A rerun that sends every figure unchanged (opening a chart's Numbers panel) draws nothing.
        rerun(page, lambda: page.get_by_text("Numbers", exact=True).first.click())
        assert {k: c["draws"] for k, c in _charts(page).items()} == {k: c["draws"] for k, c in after.items()}

        # A narrower window: every chart on show is resized to its new width (a chart folded until
        # the page's question is revealed, ui/question.folded, has no room while its box is closed).
        page.set_viewport_size({"width": 1000, "height": 1000})
        page.wait_for_function(
            """() => Array.from(document.querySelectorAll('.pe-chart')).every(gd => {
                 const room = Math.round(gd.parentElement.getBoundingClientRect().width);
                 return gd.closest('details:not([open])') || Math.abs(gd._fullLayout.width - room) <= 1; })""",
            timeout=TIMEOUT_MS,
        )
        narrow = {k: c for k, c in _charts(page).items() if not c["folded"]}
        assert narrow and all(narrow[k]["drawn"] < after[k]["drawn"] for k in narrow)
        _drawn_at_their_size(narrow)
        assert tab.page_errors == []


def test_the_full_screen_button_fills_the_screen_and_gives_the_height_back(browser, served):
    with fresh_tab(browser, served) as tab:
        page = tab.page
        _open(page, f"{served}/shaw?s=the%20cat%20sat%20on%20the%20mat")
        chart = page.locator(".pe-chart").first
        before = chart.evaluate("gd => gd._fullLayout.height")
        chart.hover()
        chart.locator('.modebar-btn[data-title="Full screen"]').click()
        page.wait_for_function(
            "() => document.fullscreenElement && document.fullscreenElement._fullLayout.height === screen.height",
            timeout=TIMEOUT_MS,
        )
        assert chart.evaluate("gd => document.fullscreenElement === gd")
        page.evaluate("() => document.exitFullscreen()")
        page.wait_for_function(
            "h => !document.fullscreenElement && document.querySelector('.pe-chart')._fullLayout.height === h",
            arg=before,
            timeout=TIMEOUT_MS,
        )
        assert tab.page_errors == []


def test_the_mode_bar_speaks_the_pages_language(browser, served):
    """On a Korean page every title in a chart's mode bar is the atlas's Korean (plotly's own
    buttons through a plotly locale, and the full-screen button); none would send a figure off the
    machine or does nothing here (Share, Box and Lasso Select)."""
    token = i18n._current.set("ko")
    try:
        words = chart_words()
    finally:
        i18n._current.reset(token)
    with fresh_tab(browser, served) as tab:
        page = tab.page
        _open(page, f"{served}/shaw?lang=ko")
        chart = page.locator(".pe-chart").first
        chart.hover()
        titles = chart.evaluate("gd => Array.from(gd.querySelectorAll('.modebar-btn'), b => b.dataset.title)")
        shown = ["Download plot as a PNG", "Zoom", "Pan", "Zoom in", "Zoom out", "Autoscale", "Reset axes"]
        assert titles == [words["plotly"][w] for w in shown] + [words["fullscreen"]]
        assert tab.page_errors == []


def test_a_chart_whose_library_did_not_load_says_so_and_the_next_figure_loads_it_again(browser, served):
    """plotly.js refused (a server restarting, a dropped network): every chart on a Korean page says
    in Korean that it could not be drawn and why, and there is no traceback; once the build can be
    fetched again, the next figure the page sends loads it and is drawn (a failed load is not kept
    for the tab)."""
    token = i18n._current.set("ko")
    try:
        message = chart_words()["unavailable"].split("{error}")[0]
    finally:
        i18n._current.reset(token)
    with fresh_tab(browser, served) as tab:
        page = tab.page
        build = f"**/app/static/{PLOTLY_BUILD}"
        page.route(build, lambda route: route.fulfill(status=503, body="restarting"))
        page.goto(f"{served}/shaw?lang=ko&s=the%20cat%20sat", timeout=TIMEOUT_MS)
        page.wait_for_function(
            "m => { const c = document.querySelectorAll('.pe-chart');"
            " return c.length >= 6 && Array.from(c).every(g => g.textContent.startsWith(m)); }",
            arg=message,
            timeout=TIMEOUT_MS,
        )
        no_exception(page)
        assert "HTTP 503" in page.locator(".pe-chart").first.text_content()
        page.unroute(build)
        label = i18n.t("common.sidebar.sentence", "ko")
        box = page.locator('[data-testid="stSidebar"]').get_by_role("textbox", name=label)
        box.fill("the dog sat on the log")
        box.press("Control+Enter")
        # Every chart sent a new figure is drawn; one whose figure did not change keeps its message.
        page.wait_for_function(
            "() => { const c = Array.from(document.querySelectorAll('.pe-chart'));"
            " const sent = c.filter(g => g.__peSpec); return sent.length >= 6"
            " && sent.every(g => g._fullLayout && g.__peShown === g.__peSpec && !g.textContent.includes('HTTP')); }",
            timeout=TIMEOUT_MS,
        )
        no_exception(page)
        assert tab.page_errors == []


# The charts' boxes (ui.presenter.ATLAS_CSS, content-visibility: auto): is each one's content skipped
# by the browser's rendering right now, and its plot's size as drawn and as laid out on the page.
SKIPPED_CHARTS_JS = """() => Array.from(document.querySelectorAll('.pe-chart-box'), box => {
  const gd = box.querySelector('.pe-chart');
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
        _open(page, f"{served}/alibi?s=the%20cat%20sat%20on%20the%20mat")
        charts = page.evaluate(SKIPPED_CHARTS_JS)
        assert len(charts) >= 6
        height = page.viewport_size["height"]
        assert not any(c["skipped"] for c in charts if c["top"] < height), charts
        far = [k for k, c in enumerate(charts) if c["top"] > 3 * height]
        assert far and all(charts[k]["skipped"] for k in far), charts
        for k in far:
            page.locator(".pe-chart-box").nth(k).scroll_into_view_if_needed()
            page.wait_for_function(
                "k => document.querySelectorAll('.pe-chart-box .pe-chart')[k]"
                ".checkVisibility({contentVisibilityAuto: true})",
                arg=k,
                timeout=TIMEOUT_MS,
            )
            shown = page.evaluate(SKIPPED_CHARTS_JS)[k]
            assert not shown["skipped"] and abs(shown["laid"] - shown["drawn"]) <= 1, shown
        assert tab.page_errors == []
