"""axe-core's checks of one page, as tests/e2e/test_axe.py and tools/axe_report.py run them: every
violation of a page with its owner (the app's own markup, or Streamlit's frame), and every chart word
below AA contrast (axe-core does not look inside SVG).

Whose markup is it? Streamlit draws a frame around every app (STREAMLIT_FRAME: the sidebar
navigation, the header and its toolbar) whatever the app writes; PE Atlas draws everything else (titles,
prose, captions, charts, tables, the widgets it places) and its theme colours all of it. A violation in
the frame is Streamlit's; its rule must be one of STREAMLIT_ONLY, listed once with the reason (each seen
in a bare Streamlit app with the same navigation and widgets: `tools/axe_report.py --bare`).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from pathlib import Path

# Streamlit's frame: markup Streamlit draws around every app, whatever the app writes.
STREAMLIT_FRAME = (
    '[data-testid="stSidebarNav"]',
    '[data-testid="stTopNav"]',
    '[data-testid="stTopNavPopover"]',
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
    # Once per document: the visits walk from page to page by reruns in one document (tests/e2e/
    # visits.py), where axe-core (~0.5 MB of script) is already loaded after the first.
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
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
