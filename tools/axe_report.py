"""axe-core over every chapter in both languages, in Debian's Chromium: violations by rule and impact.

    .venv/bin/python tools/axe_report.py [--lang en ko] [--pages why-order rope] [--present]

Starts its own Streamlit server (tools/browser.py), opens every chapter (ui.chapters.CHAPTERS) at
?lang=<lang>, runs axe-core (the copy bundled by axe-playwright-python, offline) and prints, per page
and language, the violations of the app's own markup and, apart, those of Streamlit's own.

Whose markup is it? Streamlit draws a frame around every app (STREAMLIT_FRAME: the sidebar
navigation, the header and its toolbar) whatever the app writes; PE Atlas draws everything else (titles,
prose, captions, charts, tables, the widgets it places) and its theme colours all of it. A violation in
the frame is Streamlit's; its rule must be one of STREAMLIT_ONLY, listed once with the reason (each seen
in a bare Streamlit app with the same navigation and widgets: `--bare`). Everything else is the app's.

tests/e2e/test_axe.py runs the same checks (page_violations) and fails on any critical or serious
violation of the app's own markup.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.browser import CHROMIUM, CHROMIUM_ARGS, RENDERED_JS, TRACK_RUNS_JS, start_server, stop_server  # noqa: E402

# Streamlit's frame: markup Streamlit draws around every app, whatever the app writes.
STREAMLIT_FRAME = (
    '[data-testid="stSidebarNav"]',
    '[data-testid="stSidebarHeader"]',
    '[data-testid="stHeader"]',
    '[data-testid="stToolbar"]',
)

# Rules that only Streamlit's own components break, with the reason (seen in the bare app too).
STREAMLIT_ONLY: dict[str, str] = {
    "list": "Streamlit 1.67's sidebar navigation (st.navigation with sections) puts a wrapper <div> "
    "between its <ul> and the <li> items: a <ul> may only hold <li>, <script> or <template>",
    "listitem": "the same navigation markup: its <li> items sit in that <div>, not directly in the <ul>",
}

SEVERE = ("critical", "serious")

# After axe has run: for every node of every violation, whether it lies inside Streamlit's frame and
# the data-testid of its nearest marked ancestor (to say where it is).
LOCATE_JS = """([results, frame]) => results.violations.map(v => ({
  id: v.id, impact: v.impact, help: v.help,
  nodes: v.nodes.map(n => {
    const sel = n.target[n.target.length - 1];
    let el = null;
    try { el = document.querySelector(Array.isArray(sel) ? sel[0] : sel); } catch (e) {}
    const inFrame = !!el && frame.some(f => el.closest(f));
    const marked = el && el.closest('[data-testid]');
    return {target: JSON.stringify(n.target), where: marked ? marked.getAttribute('data-testid') : null,
            frame: inFrame, summary: (n.failureSummary || '').slice(0, 300), html: (n.html || '').slice(0, 200)};
  }),
}))"""


# axe-core does not check text inside SVG, which is where plotly draws a chart's words: its title,
# tick labels, axis and colour-bar titles, legend. Each is read here with its computed fill and
# opacity (text on coloured heatmap cells is chosen per cell and is not collected).
CHART_TEXT_JS = """() => {
  const sel = ['.xtick text', '.ytick text', 'text.gtitle', '.g-xtitle text', '.g-ytitle text',
    'text[class*="title"]', 'text.legendtext', '.cbaxis text', '.colorbar text'].map(s => '.js-plotly-plot svg ' + s);
  const seen = new Set(), out = [];
  for (const t of document.querySelectorAll(sel.join(','))) {
    if (seen.has(t) || !t.textContent.trim()) continue;
    seen.add(t);
    const s = getComputedStyle(t);
    const alpha = parseFloat(s.opacity || '1') * parseFloat(s.fillOpacity || '1');
    const chart = t.closest('[class*="st-key-"]');
    const key = chart ? [...chart.classList].find(c => c.startsWith('st-key-')) : null;
    out.push({fill: s.fill, alpha: alpha, text: t.textContent.slice(0, 60),
              cls: t.getAttribute('class') || '', key: key});
  }
  return out;
}"""
CHART_BACKGROUND = (255, 255, 255)  # the atlas's template: white paper and plot area


def contrast_ratio(fg: tuple[float, float, float], bg: tuple[float, float, float]) -> float:
    """WCAG 2.x contrast (L1 + 0.05) / (L2 + 0.05) of two sRGB colours given as 0…255 triples."""

    def lum(c: tuple[float, float, float]) -> float:
        lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in (x / 255 for x in c)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(fg), lum(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def chart_text_findings(page, minimum: float = 4.5) -> list[Finding]:
    """Chart words below `minimum`:1 on the chart's white (WCAG 1.4.3), as findings of the app's own."""
    out = []
    for t in page.evaluate(CHART_TEXT_JS):
        parts = [float(v) for v in t["fill"][t["fill"].index("(") + 1 : -1].split(",")]
        alpha = t["alpha"] * (parts[3] if len(parts) > 3 else 1.0)
        seen = tuple(a * alpha + b * (1 - alpha) for a, b in zip(parts[:3], CHART_BACKGROUND, strict=True))
        ratio = contrast_ratio((seen[0], seen[1], seen[2]), CHART_BACKGROUND)
        if ratio < minimum:
            summary = f"chart text {t['fill']} (opacity {alpha:.2f}) is {ratio:.2f}:1 on white"
            out.append(Finding("chart-text-contrast", "serious", "app", t["key"], t["cls"], summary, t["text"]))
    return out


@dataclass(frozen=True)
class Finding:
    rule: str
    impact: str
    owner: str  # "app" or "streamlit"
    where: str | None  # nearest data-testid
    target: str
    summary: str
    html: str


def axe_script() -> str:
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text()


def page_violations(page, script: str | None = None) -> list[Finding]:
    """Run axe-core on the page as it is now; every node of every violation, with its owner; and
    every chart word below AA contrast (chart_text_findings: axe does not look inside SVG)."""
    page.evaluate(script or axe_script())
    results = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    located = page.evaluate(LOCATE_JS, [results, list(STREAMLIT_FRAME)])
    out = []
    for v in located:
        for n in v["nodes"]:
            owner = "streamlit" if n["frame"] else "app"
            out.append(Finding(v["id"], v["impact"] or "", owner, n["where"], n["target"], n["summary"], n["html"]))
    return out + chart_text_findings(page)


def chapter_url(base: str, key: str, lang: str, extra: dict | None = None) -> str:
    from ui.chapters import CHAPTERS

    route = "" if key == CHAPTERS[0].key else key
    q = {"lang": lang} if lang != "en" else {}
    q.update(extra or {})
    return f"{base}/{route}" + ("?" + urllib.parse.urlencode(q) if q else "")


def open_rendered(page, url: str, timeout_ms: int = 180_000) -> None:
    page.goto(url)
    page.wait_for_selector("h1", timeout=timeout_ms)
    page.wait_for_function(RENDERED_JS, arg=1, polling=100, timeout=timeout_ms)


BARE_APP = '''"""A bare Streamlit app: the navigation and one of each widget PE Atlas uses, nothing styled."""
import streamlit as st

def page():
    st.segmented_control("Language", ["English", "Korean"], default="English", label_visibility="collapsed")
    st.text_area("Sentence", "the cat sat on the mat")
    st.number_input("Seed", value=0)
    st.slider("Slider", 0, 10, 3)
    st.select_slider("Select slider", options=[1, 2, 4, 8], value=2)
    st.selectbox("Select", ["a", "b"])
    st.radio("Radio", ["a", "b"], horizontal=True)
    st.toggle("Toggle")
    st.checkbox("Checkbox")
    st.multiselect("Multi", ["a", "b"], default=["a"])
    st.button("Button")
    with st.expander("Numbers", icon=":material/table:"):
        st.write("x")
    st.tabs(["One", "Two"])

pages = [st.Page(page, title=f"Page {k}", url_path=f"p{k}", default=(k == 0)) for k in range(6)]
with st.sidebar:
    st.text_area("Sidebar sentence", "hello")
st.navigation({"Part": pages}, expanded=True).run()
'''


def bare_report(browser) -> list[Finding]:
    """axe-core on the bare app (served from a temporary folder with the app's own theme)."""
    import shutil
    import socket
    import subprocess
    import time
    import urllib.request

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "app.py").write_text(BARE_APP)
        shutil.copytree(ROOT / ".streamlit", d / ".streamlit")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with open(d / "server.log", "wb") as fh:
            port_proc = subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)],
                cwd=d,
                stdout=fh,
                stderr=subprocess.STDOUT,
            )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(600):
                try:
                    if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.1)
            page = browser.new_page()
            page.goto(url)
            page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000)
            page.wait_for_timeout(1500)
            return page_violations(page)
        finally:
            stop_server(port_proc)


def main() -> None:
    from ui.chapters import CHAPTERS

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lang", nargs="+", default=["en", "ko"])
    ap.add_argument("--pages", nargs="+", default=[c.key for c in CHAPTERS])
    ap.add_argument("--present", action="store_true", help="presenter mode (?present=1)")
    ap.add_argument("--bare", action="store_true", help="also run the bare Streamlit app")
    ap.add_argument("--detail", action="store_true", help="print every node")
    ap.add_argument("--json", default=None, help="write every finding here")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    script = axe_script()
    log = Path(tempfile.mkdtemp()) / "server.log"
    proc, url, _ = start_server(log)
    rows: dict[tuple[str, str], list[Finding]] = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            if args.bare:
                bare = bare_report(browser)
                print("bare Streamlit app:")
                for (rule, impact, where), n in sorted(
                    collections.Counter((f.rule, f.impact, f.where) for f in bare).items()
                ):
                    print(f"  {impact:9} {rule:28} {where}  ×{n}")
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.add_init_script(TRACK_RUNS_JS)
            open_rendered(page, url)  # warm the server (see tests/e2e/conftest.py: served)
            extra = {"present": "1"} if args.present else {}
            for lang in args.lang:
                for key in args.pages:
                    open_rendered(page, chapter_url(url, key, lang, extra))
                    found = page_violations(page, script)
                    rows[(key, lang)] = found
                    app = [f for f in found if f.owner == "app"]
                    counts = collections.Counter((f.impact, f.rule) for f in app)
                    own = collections.Counter(f.rule for f in found if f.owner == "streamlit")
                    line = ", ".join(f"{imp} {rule} ×{n}" for (imp, rule), n in sorted(counts.items())) or "clean"
                    print(f"{lang} {key:15} app: {line}   | streamlit's: {dict(own) or '-'}", flush=True)
                    if args.detail:
                        for f in app:
                            print(f"      {f.rule} [{f.where}] {f.target} :: {f.summary[:160]!r} :: {f.html[:120]!r}")
            browser.close()
    finally:
        stop_server(proc)
    total = collections.Counter((f.impact, f.rule) for fs in rows.values() for f in fs if f.owner == "app")
    print("\napp's own markup, all pages:")
    for (imp, rule), n in sorted(total.items()):
        print(f"  {imp:9} {rule:28} ×{n}")
    severe = sum(n for (imp, _), n in total.items() if imp in SEVERE)
    print(f"critical+serious: {severe} over {len(rows)} page views")
    if args.json:
        Path(args.json).write_text(
            json.dumps({f"{k}|{lang}": [f.__dict__ for f in fs] for (k, lang), fs in rows.items()}, indent=1)
        )


if __name__ == "__main__":
    main()
