"""Presenter mode: for a projector, larger type and charts, secondary controls tucked away.

A sidebar toggle, kept in the address as ?present=1. Figures grow in ui.common.plot
(scale_figure); secondary controls go into a collapsed expander (secondary()). The one st.html call
sends fixed style sheets (the atlas's own, and the presenter's), never user text; frame_scripts()
sends a fixed script (plotly's animation buttons by keyboard).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from contextlib import contextmanager

import plotly.graph_objects as go
import streamlit as st

from explain.figures.spec import layout_get, relayout
from explain.i18n import t as t_in
from ui.i18n import t
from ui.url_state import Param

PRESENTER = Param.flag("presenter", param="present")  # session key "presenter", ?present=1
FIGURE_SCALE = 1.3  # figures are this much taller in presenter mode …
FONT_SCALE = 1.35  # … and their text this much larger …
# … but no taller than a 1280×720 projector's view can show with the controls above them: 720 px
# less Streamlit's header (60), two rows of controls at projector size (RoPE's positions, and what
# moves, whose options wrap) and the chart's Numbers line. The RoPE circles were 988 px, their Play
# button a screen below them.
PRESENTER_MAX_HEIGHT = 480

# A fixed style sheet (no user text): larger type for a projector, full-width content. Everything a
# class reads or a lecturer clicks grows, not only the prose: the options of a question the class
# votes on, buttons (Reveal, a lesson's), alerts (a lesson's banner, an answer), the sentence's token
# spans, what a control holds (a slider's value, a select's choice, a number), expanders' and tabs'
# titles, metrics. tests/e2e/test_presenter_browser.py measures them at 1280×720.
PRESENTER_CSS = """<style>
[data-testid="stMainBlockContainer"] { max-width: 100%; padding-left: 2.5rem; padding-right: 2.5rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li,
[data-testid="stMain"] [data-testid="stCaptionContainer"] { font-size: 1.35rem; line-height: 1.5; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] code { font-size: 0.95em; }
[data-testid="stMain"] h1 { font-size: 3.2rem; }
[data-testid="stMain"] h2 { font-size: 2.4rem; }
[data-testid="stMain"] h3 { font-size: 2rem; }
[data-testid="stMain"] .katex { font-size: 1.35em; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] p { font-size: 1.3rem; }
[data-testid="stMain"] button, [data-testid="stMain"] button p { font-size: 1.3rem; }
[data-testid="stMain"] [data-testid="stExpander"] summary,
[data-testid="stMain"] [data-testid="stExpander"] summary p { font-size: 1.3rem; }
[data-testid="stMain"] input, [data-testid="stMain"] textarea,
[data-testid="stMain"] [data-baseweb="select"] > div { font-size: 1.3rem; }
[data-testid="stMain"] [data-testid="stSliderThumbValue"], [data-testid="stMain"] [data-testid="stSliderTickBarMin"],
[data-testid="stMain"] [data-testid="stSliderTickBarMax"] { font-size: 1.2rem; }
[data-testid="stMain"] [data-testid="stAlertContainer"] p { font-size: 1.35rem; }
[data-testid="stMain"] [data-testid="stMetricLabel"] p { font-size: 1.2rem; }
[data-testid="stMain"] [data-testid="stMetricValue"] { font-size: 2.6rem; }
</style>"""


# Always on: contrast ≥ 4.5:1 (WCAG 2.2 AA) for the text Streamlit fades. A caption is drawn at 60 %
# opacity, which puts its text at 3.9:1 and a link in it at 3.0:1 on white; an opaque grey and a
# darker blue read at 6.3:1 and 6.4:1 on white and ≥ 5.5:1 on the sidebar's grey (tests/test_a11y.py
# checks the numbers). The selected language button's colour is the theme's primaryColor
# (.streamlit/config.toml).
#
# Also always on: a chart's box skips the browser's layout and paint while it is off screen
# (content-visibility: auto), and is laid out and painted when it comes near the viewport; until it
# has been, it holds a 450 px placeholder, then the height it last had. plotly still draws every
# chart (its SVG is built); what is saved is the page-wide layout and paint that each chart's drawing
# and Streamlit's resize observers force, on long pages whose charts are mostly below the fold.
# Measured in Chromium, 8 pages, 2 runs each way: opening a chapter 9.0–9.1 → 7.5–7.7 s summed, a
# new sentence 4.2–4.5 → 3.6–4.1 s summed (tests/e2e/test_chart_browser.py checks the skipping).
#
# And: a formula wider than its column (a derivation's line on a narrow window or a projector's
# 1024 px) scrolls sideways, as KaTeX's display does, but Streamlit's scrollbars are transparent until
# hovered, so the formula looked cut off at the edge. Its scrollbar is always shown (thin, grey), and
# only where there is something to scroll.
#
# And: a metric's label wraps instead of ending in "…". The label says what the number is
# ("No mask: largest weight difference, −m·|i − j| vs +m·j"); in two columns on a 900 px window
# Streamlit cut it to "No mask: largest weight differenc…" (tests/e2e/test_narrow_browser.py).
# A markdown table wider than the column (the Derivations catalogue on a phone) scrolls in its own
# box, as a formula does, instead of making the whole page scroll sideways.
# A chart that could not be drawn (plotly.js did not load: ui/chart.py) holds a sentence saying so,
# shown as a warning: not drawn by plotly (no js-plotly-plot class) and not empty (still loading).
CAPTION_COLOR = "#5e6069"
CAPTION_LINK_COLOR = "#1a5fb4"
ATLAS_CSS = f"""<style>
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] * {{ opacity: 1; }}
[data-testid="stCaptionContainer"] {{ color: {CAPTION_COLOR}; }}
[data-testid="stCaptionContainer"] a {{ color: {CAPTION_LINK_COLOR}; }}
.pe-chart-box {{ content-visibility: auto; contain-intrinsic-size: auto 450px; }}
.pe-chart:not(.js-plotly-plot):not(:empty) {{
  padding: 0.75rem 1rem; border-radius: 0.5rem; background: #fff8e1; color: #5c4300; }}
[data-testid="stMain"] .katex-display {{ scrollbar-width: thin; scrollbar-color: {CAPTION_COLOR} transparent; }}
[data-testid="stMain"] [data-testid="stMarkdownContainer"] table {{
  display: block; max-width: 100%; overflow-x: auto;
  scrollbar-width: thin; scrollbar-color: {CAPTION_COLOR} transparent; }}
[data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"], [data-testid="stMetricLabel"] p {{
  white-space: normal; overflow: visible; text-overflow: clip; }}
</style>"""


# Always on: plotly's animation buttons (Play / Pause) are SVG groups that take no focus and no key,
# so a learner without a mouse could not start or stop an animation. This fixed script (no user text)
# makes every such button a focusable button named by its own label, and turns Enter or Space on it
# into the click plotly listens for; a focus ring shows where the keyboard is. It runs once per
# browser tab and watches the page, since charts are redrawn on every rerun.
KEYBOARD_JS = """<script>
(() => {
  if (window.__peAnimationKeys) return;
  window.__peAnimationKeys = true;
  const mark = () => document.querySelectorAll('.js-plotly-plot .updatemenu-button').forEach(b => {
    if (b.getAttribute('tabindex') === '0') return;
    b.setAttribute('tabindex', '0');
    b.setAttribute('role', 'button');
    b.setAttribute('aria-label', (b.textContent || '').trim());
    b.addEventListener('keydown', e => {
      if (e.key !== 'Enter' && e.key !== ' ') return;
      e.preventDefault();
      b.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    });
  });
  new MutationObserver(mark).observe(document.body, {subtree: true, childList: true});
  mark();
})();
</script>
<style>
.js-plotly-plot .updatemenu-button:focus { outline: none; }
.js-plotly-plot .updatemenu-button:focus-visible rect { stroke: #1a5fb4 !important; stroke-width: 3px !important; }
</style>"""


# Always on: a learner whose worker died (`./run-app --workers N`, tools/serve.py) comes back by
# itself. Streamlit's frontend reconnects through the balancer, which sends it to a live worker
# (HAProxy's option redispatch), but it then asks for no rerun: it takes the new worker's empty
# session for its old one resumed, and the page stays as it was, stale and silent, until the learner
# touches a control. This fixed script (no user text) watches the app's connection state: while it is
# lost, a short notice says so; once connected again, it asks for a rerun the way Streamlit's own "r"
# key does (the rerun carries the address and every widget's value, so the new worker draws the same
# page), or reloads the page if no run starts (the address holds sentence, seed, chapter and
# controls). On a worker that merely lost its connection the rerun is harmless: the session resumed.
_RECONNECT_WORDS = {
    lang: [t_in(f"classroom.{k}", lang) for k in ("reconnecting", "reconnected")] for lang in ("en", "ko")
}
RECONNECT_JS = (
    """<script>
(() => {
  if (window.__peReconnect) return;
  window.__peReconnect = true;
  const WORDS = """
    + json.dumps(_RECONNECT_WORDS, ensure_ascii=True)
    + """;
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return;
  const lang = () => ((new URLSearchParams(location.search).get('lang') || navigator.language || 'en')
    .toLowerCase().startsWith('ko') ? 'ko' : 'en');
  let note = null, hideTimer = 0, lost = false, asked = 0;
  const say = (k, ms) => {
    if (!note) {
      note = document.createElement('div');
      note.id = 'pe-reconnect';
      note.setAttribute('role', 'status');
      note.style.cssText = 'position:fixed;left:50%;bottom:1.5rem;transform:translateX(-50%);z-index:1000001;'
        + 'padding:.6rem 1.1rem;border-radius:.5rem;background:#262730;color:#fff;font:500 1rem sans-serif;';
      document.body.appendChild(note);
    }
    note.textContent = WORDS[lang()][k];
    note.dataset.state = k ? 'back' : 'lost';
    note.hidden = false;
    clearTimeout(hideTimer);
    if (ms) hideTimer = setTimeout(() => { note.hidden = true; }, ms);
  };
  const rerun = () => {
    // A run already on its way (Streamlit asks for one itself when one was running at the drop): the
    // page is being drawn, nothing to ask and no reload to fall back on.
    if (app.getAttribute('data-test-script-state') !== 'notRunning') return;
    asked = Date.now();
    for (const type of ['keydown', 'keyup'])
      document.dispatchEvent(new KeyboardEvent(type, {key: 'r', code: 'KeyR', keyCode: 82, which: 82, bubbles: true}));
    setTimeout(() => {
      if (asked && app.getAttribute('data-test-connection-state') === 'CONNECTED') location.reload();
    }, 4000);
  };
  new MutationObserver(records => {
    if (asked && records.some(r => r.attributeName === 'data-test-script-state')) asked = 0;  // a run began
    const connection = app.getAttribute('data-test-connection-state');
    if (connection !== 'CONNECTED') {
      if (!lost) { lost = true; asked = 0; say(0); }
    } else if (lost) {
      lost = false;
      say(1, 5000);
      rerun();
    }
  }).observe(app, {attributes: true, attributeFilter: ['data-test-connection-state', 'data-test-script-state']});
})();
</script>"""
)

# The frame's fixed scripts. (Each chart is drawn once by the atlas's own chart element, ui/chart.py.)
FRAME_JS = KEYBOARD_JS + RECONNECT_JS


def presenter() -> bool:
    """Is presenter mode on (for this learner's session)?"""
    return bool(st.session_state.get(PRESENTER.key, False))


def restore_presenter() -> None:
    """First run of a session: presenter mode from ?present=1 (anything else: off)."""
    PRESENTER.restore()


# In presenter mode, under the switch: the address to give the class, which is this page's own
# without ?present=1 (a link copied from the projector put every student into presenter mode). Built
# in the browser from the address as it is now, since each page's controls write their parameters
# later in the run; a fixed script and the catalogue's words (escaped), never user text: the address
# is set as the box's value, not as HTML.
STUDENTS_LINK_HTML = """<div class="pe-students-link">
<label for="pe-students-link">__LABEL__</label>
<div><input id="pe-students-link" type="text" readonly>
<button type="button" title="__COPY__" aria-label="__COPY__">⧉</button></div>
<p>__HELP__</p></div>
<style>
.pe-students-link label { font-size: 0.875rem; }
.pe-students-link div { display: flex; gap: 0.25rem; }
.pe-students-link input { flex: 1; min-width: 0; font: 0.8rem monospace; padding: 0.3rem;
  border: 1px solid #bbb; border-radius: 0.3rem; }
.pe-students-link button { border: 1px solid #bbb; border-radius: 0.3rem; background: white; cursor: pointer; }
.pe-students-link p { font-size: 0.8rem; color: #5e6069; margin: 0.25rem 0 0; }
</style>
<script>
(() => {
  const box = document.getElementById('pe-students-link');
  if (!box || box.dataset.peLive) return;
  box.dataset.peLive = '1';
  const link = () => {
    const url = new URL(location.href);
    url.searchParams.delete('present');
    return url.toString();
  };
  const timer = setInterval(() => {
    if (!document.contains(box)) { clearInterval(timer); return; }
    const now = link();
    if (box.value !== now) box.value = now;
  }, 400);
  box.value = link();
  box.nextElementSibling.addEventListener('click', () => {
    box.value = link();
    box.select();
    (navigator.clipboard && window.isSecureContext ? navigator.clipboard.writeText(box.value)
      : Promise.reject()).catch(() => document.execCommand('copy'));
  });
})();
</script>"""


def presenter_toggle() -> None:
    st.toggle(t("classroom.presenter"), key=PRESENTER.key, help=t("classroom.presenter_help"))
    if presenter():
        words = {k: html.escape(t(f"classroom.{k}")) for k in ("students_link", "students_link_help", "copy")}
        st.html(
            STUDENTS_LINK_HTML.replace("__LABEL__", words["students_link"])
            .replace("__HELP__", words["students_link_help"])
            .replace("__COPY__", words["copy"]),
            unsafe_allow_javascript=True,
        )


def mirror_presenter() -> None:
    PRESENTER.mirror(presenter())


def presenter_style() -> None:
    """The atlas's style sheet, and the presenter's when presenter mode is on (fixed strings, never
    user text)."""
    st.html(ATLAS_CSS + (PRESENTER_CSS if presenter() else ""))


def frame_scripts() -> None:
    """The frame's fixed script (KEYBOARD_JS), in the sidebar's foot, where its empty element takes
    no room from a chapter."""
    st.sidebar.html(FRAME_JS, unsafe_allow_javascript=True)


def scale_figure(fig: go.Figure) -> None:
    """Presenter mode: a taller figure with larger text (in place; pages build figures per run)."""
    if not presenter():
        return
    height = layout_get(fig, "height") or 450
    size = (layout_get(fig, "font.size") or 13) * FONT_SCALE
    title_size = (layout_get(fig, "title.font.size") or 15) * FONT_SCALE
    height = min(round(height * FIGURE_SCALE), PRESENTER_MAX_HEIGHT)
    relayout(fig, height=height, font=dict(size=size), title=dict(font=dict(size=title_size)))


@contextmanager
def secondary(label: str | None = None) -> Iterator[None]:
    """Secondary controls (fine settings, display options): shown in place normally, tucked into a
    collapsed expander in presenter mode so the projector shows only what the lesson is about.
    The widgets always exist, so their values (and the page) stay the same either way."""
    if presenter():
        with st.expander(label or t("classroom.more_settings"), expanded=False, icon=":material/tune:"):
            yield
    else:
        with st.container():
            yield
