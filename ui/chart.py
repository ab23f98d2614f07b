"""The atlas's chart element: a plotly figure drawn by plotly.js's cartesian build, through a
Streamlit v2 component, in place of st.plotly_chart.

Why not st.plotly_chart: Streamlit's chart element ships the full plotly.js (a 4.7 MB chunk with
every trace type) and hands plotly every chart it mounts twice (its re-theming effect). The atlas
draws only scatter, heatmap and bar traces (tests/test_chart.py checks every page), all in the
cartesian build: 1.5 MB, MIT, the same plotly.js 4.1.1 that plotly.py 7.1 writes its figures for.
Measured in Chromium on this project's 2-core machine: evaluating the cartesian build takes 464 ms
against 1,059 ms for the full one, and the first page's first render fell from 2.12 to 1.73 s
(warm medians of 6 fresh-profile loads, tools/bench_browser.py, same run).

What is sent is what st.plotly_chart sends (plotly.io.to_json of the figure, unvalidated), with the
chart's config beside it, as bytes: a JSON string as the component's JSON data would be escaped a
second time. The browser fetches the build once per tab from the app's static folder
(server.enableStaticServing) and draws each figure once: Streamlit calls the element's function
only when its data changed, and a chart whose figure is the one already drawn is skipped anyway.
"""

from __future__ import annotations

import json

import plotly.io as pio
import streamlit as st

from ui.i18n import current, t

NAME = "pe_chart"
PLOTLY_BUILD = "plotly-cartesian-4.1.1.min.js"  # in static/, served at app/static/
TRACE_TYPES = frozenset({"scatter", "heatmap", "bar"})  # what the atlas draws; all in the cartesian build

# The element's DOM: a box (the style sheet's content-visibility rule skips laying it out while it is
# off screen) around the div plotly draws into. Tests and the frame's scripts find charts by these.
_HTML = '<div class="pe-chart-box"><div class="pe-chart"></div></div>'

# A full-screen button in plotly's mode bar: Streamlit's own chart had one in its toolbar, and a
# teacher projecting a heatmap wants it. The chart then fills the screen, and gets its height back on
# the way out.
_JS = """
const SRC = 'app/static/__BUILD__';
// plotly.js once per tab: fetched and evaluated as a classic script (it sets window.Plotly). The
// app's static files are served as text/plain with nosniff, which a <script> tag refuses.
const plotly = () => window.__pePlotly || (window.__pePlotly = window.Plotly ? Promise.resolve(window.Plotly)
  : fetch(new URL(SRC, document.baseURI)).then(r => {
      if (!r.ok) throw new Error('plotly.js: HTTP ' + r.status);
      return r.text();
    }).then(code => { (0, eval)(code); return window.Plotly; })
      // A failed load is not kept: the next chart to mount tries again.
      .catch(e => { window.__pePlotly = null; throw e; }));

const FULL = {width: 24, height: 24,
              path: 'M3 3h7v2H5v5H3V3zm11 0h7v7h-2V5h-5V3zM3 14h2v5h5v2H3v-7zm16 0h2v7h-7v-2h5v-5z'};
const fullScreen = (gd, title) => ({name: 'fullscreen', title, icon: FULL,
  click: () => document.fullscreenElement ? document.exitFullscreen() : gd.requestFullscreen()});

export default function ({ parentElement, data }) {
  const gd = parentElement.querySelector('.pe-chart');
  const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
  if (gd.__peSpec === text) return gd.__peCleanup;
  gd.__peSpec = text;
  const {figure, config, words} = JSON.parse(text);
  plotly().then(P => {
    // A newer figure came while plotly.js loaded: that one draws.
    if (gd.__peSpec !== text) return;
    gd.__peHeight = (figure.layout || {}).height;
    // plotly's own words (its mode bar's titles) in the page's language: a locale of the atlas's
    // translations, registered once per language and tab.
    const locales = P.__peLocales || (P.__peLocales = {});
    if (!locales[words.locale]) {
      P.register({moduleType: 'locale', name: words.locale, dictionary: words.plotly});
      locales[words.locale] = true;
    }
    config.locale = words.locale;
    config.modeBarButtonsToAdd = [fullScreen(gd, words.fullscreen)];
    // A chart not drawn yet may hold the message of a failed load: plotly draws beside text.
    const drawn = !!gd._fullLayout;
    if (!drawn) gd.textContent = '';
    // Counted for tests/e2e/test_chart_browser.py.
    gd.__peDraws = (gd.__peDraws || 0) + 1;
    return P.react(gd, {...figure, config}).then(() => {
      // Plotly.react installs a figure's frames only on a plot it draws for the first time: on a plot
      // already drawn it keeps none, and Play animated nothing after any rerun (a moved control, a new
      // sentence, a lesson's step). The new figure's frames replace whatever the plot held; frames
      // change no drawing, so the chart is still drawn once.
      if (drawn && gd.__peSpec === text) {
        const held = (gd._transitionData && gd._transitionData._frames) || [];
        const frames = figure.frames || [];
        return (held.length ? P.deleteFrames(gd) : Promise.resolve())
          .then(() => frames.length ? P.addFrames(gd, frames) : undefined);
      }
    }).then(() => { if (gd.__peSpec === text) gd.__peShown = text; });
  }, e => {
    // plotly.js did not load: the chart's place says so in the page's language, unless a newer
    // figure came meanwhile (it reports its own load); that figure, or this one sent again, retries.
    if (gd.__peSpec !== text) return;
    gd.__peSpec = null;
    gd.textContent = words.unavailable.replace('{error}', e.message || String(e));
  })
    // A figure plotly could not draw (tests/test_chart.py keeps every trace type drawable).
    .catch(e => { gd.textContent = String(e); });
  if (!gd.__peCleanup) {
    // Plotly fills its div's width when it first draws it; a box whose width changes later (the
    // window, the sidebar, a tab opened) gets its chart drawn again at the new width, given
    // explicitly: while the box is off screen its content is not laid out (content-visibility), so
    // plotly's own measure of the plot's div would still read the old width. Full screen: the
    // screen's size, then the box's width and the figure's height again.
    const box = gd.parentElement;
    let width = 0;
    const observer = new ResizeObserver(([entry]) => {
      const w = entry.contentRect.width;
      // A closed box (a fold that waits for Reveal, a closed expander) measures 0 and reports nothing
      // until it opens: then its width is compared with the width the chart was drawn at, so that a
      // fold opened after the window changed draws its chart at the new width.
      if (!w) return;
      const drawnAt = width || (gd._fullLayout ? gd._fullLayout.width : 0);
      // Before the first resize the drawn width is plotly's own, which it rounds: 1.5 px of slack.
      const moved = Math.abs(w - drawnAt) > (width ? 0.5 : 1.5);
      if (drawnAt && moved && gd._fullLayout && document.fullscreenElement !== gd) {
        window.Plotly.relayout(gd, {width: w});
      }
      width = w;
    });
    observer.observe(box);
    const onFull = () => {
      if (!gd._fullLayout) return;
      const full = document.fullscreenElement === gd;
      gd.style.background = full ? 'white' : '';
      window.Plotly.relayout(gd, full ? {width: window.screen.width, height: window.screen.height}
                                      : {width: box.getBoundingClientRect().width, height: gd.__peHeight});
    };
    gd.addEventListener('fullscreenchange', onFull);
    gd.__peCleanup = () => {
      observer.disconnect();
      gd.removeEventListener('fullscreenchange', onFull);
      if (window.Plotly) window.Plotly.purge(gd);
    };
  }
  return gd.__peCleanup;
}
""".replace("__BUILD__", PLOTLY_BUILD)
# Every chart's element carries the component's JS: sent without its comments and indentation.
_JS_SENT = "\n".join(line.strip() for line in _JS.splitlines() if line.strip() and not line.strip().startswith("//"))

# Registered once, when the first page imports this module: Streamlit keeps the definition (its
# HTML and JS) by name, and every chart mounts it.
_COMPONENT = st.components.v2.component(NAME, html=_HTML, js=_JS_SENT, isolate_styles=False)


def payload(fig, config: dict, words: dict) -> bytes:
    """What the browser receives for a chart: the figure as st.plotly_chart would send it, plotly's
    config, and the chart's words (chart_words)."""
    rest = json.dumps({"config": config, "words": words})
    return b'{"figure":' + pio.to_json(fig, validate=False).encode() + b"," + rest[1:].encode()


# plotly.js's words that the atlas's charts show (the mode bar's titles, the zoom hint) → the key of
# the atlas's translation (explain/text/*/strings/common.toml [chart]).
PLOTLY_WORDS = {
    "Download plot as a PNG": "download_png",
    "Zoom": "zoom",
    "Pan": "pan",
    "Zoom in": "zoom_in",
    "Zoom out": "zoom_out",
    "Autoscale": "autoscale",
    "Reset axes": "reset_axes",
    "Double-click to zoom back out": "zoom_back",
}


def chart_words() -> dict:
    """The words a chart shows besides its figure's, in this run's language: the full-screen
    button's title, and plotly's own words as a plotly locale (its name, its dictionary)."""
    return {
        "fullscreen": t("common.chart.fullscreen"),
        # {error} is left for the browser to fill with what failed
        "unavailable": t("common.chart.unavailable", error="{error}"),
        "locale": current(),
        "plotly": {word: t(f"common.chart.{key}") for word, key in PLOTLY_WORDS.items()},
    }


def sent(data: bytes) -> tuple[dict, dict]:
    """(figure, config) from a chart's payload: what tests read back."""
    out = json.loads(data)
    return out["figure"], out["config"]


# Mode-bar buttons plotly.js 4 shows that Streamlit's element removed, and so does this one: "Share
# chart..." would upload the figure to Plotly Cloud (an offline classroom tool sends nothing away),
# and box and lasso selection do nothing here.
REMOVED_BUTTONS = ["sendChartToCloud", "select2d", "lasso2d"]


def chart(fig, key: str, config: dict) -> None:
    """Draw `fig` (a plotly figure of TRACE_TYPES) under `key`, with plotly's `config`."""
    config = {**config, "modeBarButtonsToRemove": REMOVED_BUTTONS}
    _COMPONENT(key=key, data=payload(fig, config, chart_words()), width="stretch", height="content")
