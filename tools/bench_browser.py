"""What a learner waits for in a real browser, per chapter: a script, not a test.

    python tools/bench_browser.py [--repeats 3] [--only rope,alibi] [--out bench_results/browser.json]

Starts its own server on 127.0.0.1 and Debian's Chromium (headless, no GPU: a laptop without a
graphics driver is the slow case), and for every chapter of ui.chapters.CHAPTERS measures

  open        clicking the chapter's link in the sidebar → every chart of the page drawn
  new text    typing a new sentence and pressing Ctrl+Enter → every chart redrawn

"Drawn" is tests/support/browser.RENDERED_JS (the script finished, nothing stale or loading, every plotly
chart laid out, and the page unchanged for 300 ms); the time reported ends when the page reached its
final state, not 300 ms later. Medians over --repeats (each with a different sentence), then the
median over pages and the worst page.

Also the first page's first render in a fresh browser profile: the server's first visitor (its
imports and caches cold), then --first more visitors (a warm server, median reported). Beside it, the
same for tools/reference_app.py, a bare Streamlit app that draws the first page's six charts with
st.plotly_chart and nothing else, on a second server started the same way: its loads alternate with
the atlas's, so a machine that slows down mid-run slows both. The reference is what Streamlit's own
chart element costs on this machine; the atlas draws with its own (ui/chart.py), and the difference
is what its first page adds or saves (--no-reference skips it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.browser import (  # noqa: E402
    CALM_MS,
    CHROMIUM,
    CHROMIUM_ARGS,
    RENDERED_JS,
    TRACK_RUNS_JS,
    nav_link,
    start_server,
    stop_server,
)
from ui.chapters import CHAPTERS, part_title  # noqa: E402

TIMEOUT_MS = 180_000


def settled_after(page, t0: float, done: int) -> float:
    """Seconds from `t0` (the page's performance.now()) until the page reached the state that
    RENDERED_JS then saw unchanged for its calm (CALM_MS)."""
    page.wait_for_function(RENDERED_JS, arg=done, polling=20, timeout=TIMEOUT_MS)
    return (page.evaluate("() => window.__peStable.t") - t0) / 1000.0


def now(page) -> float:
    return float(page.evaluate("() => performance.now()"))


def bench(base: str, chapters: list, repeats: int, browser) -> dict:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(TRACK_RUNS_JS)
    page.goto(base + "/")
    page.wait_for_function(RENDERED_JS, arg=1, polling=20, timeout=TIMEOUT_MS)
    box = page.locator('[data-testid="stSidebar"]').get_by_role("textbox").first
    out: dict[str, dict] = {}
    for r in range(repeats):
        for c in chapters:
            # open: from whatever page is showing, by its link, as a learner does
            first = c.key == CHAPTERS[0].key  # its link is the bare base URL
            link = nav_link(page, part_title(c.part, "en"), c.key, c.title if first else None)
            done = page.evaluate("() => window.__peDone")
            t0 = now(page)
            link.click()
            opened = settled_after(page, t0, done + 1)
            box.fill(f"Learner {r} reads chapter {c.key} again, word by word, in order number {r}.")
            done = page.evaluate("() => window.__peDone")
            t0 = now(page)
            box.press("Control+Enter")
            typed = settled_after(page, t0, done + 1)
            charts = page.locator(".pe-chart").count()
            row = out.setdefault(c.key, {"open_s": [], "new_text_s": [], "charts": charts})
            row["open_s"].append(opened)
            row["new_text_s"].append(typed)
            print(f"{c.key:16s} open {opened:5.2f} s  new text {typed:5.2f} s  ({charts} charts)", flush=True)
    context.close()
    return out


# The first chapter with charts: the app opens on Start here (one diagram), and a learner's first
# page of charts is Why order matters, which tools/reference_app.py mirrors chart for chart.
FIRST_CHARTS = "/why-order"


def first_load(base: str, browser, path: str = FIRST_CHARTS) -> float:
    """Seconds from asking for the first chapter with charts in a fresh profile (nothing cached in
    the browser) to every chart drawn (the reference app: its only page, path "/")."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(TRACK_RUNS_JS)
    t = time.perf_counter()
    page.goto(base + path)
    page.wait_for_function(RENDERED_JS, arg=1, polling=20, timeout=TIMEOUT_MS)
    seconds = time.perf_counter() - t - CALM_MS / 1000  # RENDERED_JS waits CALM_MS of calm
    context.close()
    return seconds


def first_renders(bases: dict[str, str], browser, warm: int) -> dict[str, list[float]]:
    """Each server's first visitor (cold), then `warm` more visitors each; the servers take turns."""
    times: dict[str, list[float]] = {name: [] for name in bases}
    for _ in range(1 + warm):
        for name, base in bases.items():
            times[name].append(first_load(base, browser, "/" if name == "reference" else FIRST_CHARTS))
    return times


def first_render_summary(times: list[float]) -> dict:
    return {"cold": times[0], "warm_median": statistics.median(times[1:]), "warm": times[1:]}


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated chapter keys (default: all)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench_results" / "browser.json")
    ap.add_argument("--first", type=int, default=4, help="warm first renders after the cold one (default 4)")
    ap.add_argument("--no-reference", action="store_true", help="skip the bare reference app")
    args = ap.parse_args()
    chapters = [c for c in CHAPTERS if not args.only or c.key in args.only.split(",")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    servers = {"atlas": start_server(args.out.parent / "browser-server.log")}
    health: dict[str, float] = {"atlas": servers["atlas"][2]}
    try:
        if not args.no_reference:
            servers["reference"] = start_server(
                args.out.parent / "reference-server.log", script="tools/reference_app.py"
            )
            health["reference"] = servers["reference"][2]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            times = first_renders({name: base for name, (_, base, _) in servers.items()}, browser, args.first)
            first = {name: first_render_summary(v) for name, v in times.items()}
            for name, f in first.items():
                print(
                    f"first render after healthy, {name} ({health[name]:.1f} s to healthy): cold "
                    f"{f['cold']:.2f} s, warm median {f['warm_median']:.2f} s "
                    f"({', '.join(f'{x:.2f}' for x in f['warm'])})"
                )
            if "reference" in first:
                print(
                    "  the atlas's first page over the bare reference app, warm medians: "
                    f"{first['atlas']['warm_median'] - first['reference']['warm_median']:+.2f} s"
                )
            if "reference" in servers:  # idle from here on, but the chapters are the atlas's alone
                stop_server(servers.pop("reference")[0])
            pages = bench(servers["atlas"][1], chapters, args.repeats, browser)
            browser.close()
    finally:
        for proc, _, _ in servers.values():
            stop_server(proc)
    med = {k: {m: statistics.median(v[m]) for m in ("open_s", "new_text_s")} for k, v in pages.items()}
    summary = {}
    for m in ("open_s", "new_text_s"):
        vals = {k: v[m] for k, v in med.items()}
        worst = max(vals, key=lambda k: vals[k])
        summary[m] = {"median_over_pages": statistics.median(vals.values()), "worst": vals[worst], "worst_page": worst}
    print(
        f"\nopen a chapter: median {summary['open_s']['median_over_pages']:.2f} s, worst "
        f"{summary['open_s']['worst']:.2f} s ({summary['open_s']['worst_page']}); new sentence: median "
        f"{summary['new_text_s']['median_over_pages']:.2f} s, worst {summary['new_text_s']['worst']:.2f} s "
        f"({summary['new_text_s']['worst_page']}); load average {load_before[0]:.1f} → {os.getloadavg()[0]:.1f}"
    )
    args.out.write_text(
        json.dumps(
            {
                "summary": summary,
                "first_render_s": {name: {**f, "health_s": health[name]} for name, f in first.items()},
                "pages": pages,
                "medians": med,
                "machine": platform.machine(),
                "load_before": load_before,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
