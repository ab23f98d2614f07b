"""Screenshot chapter pages in headless Chromium, to look at what a learner sees.

    python tools/screenshot.py why-order sinusoidal --out /tmp/shots [--height 3000] [--sentence "…"]
        [--query "present=1&t5_buckets=64" --suffix -present] [--click "Trained on real text:"]

Starts its own Streamlit server on 127.0.0.1 (a free port), waits for it, takes one PNG per page
(key = the chapter's URL path, see ui/chapters.py), and stops the server by its PID.
Streamlit scrolls an inner container, so full_page screenshots capture only the viewport: a tall
viewport is used instead.
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, RENDERED_JS, TRACK_RUNS_JS, start_server, stop_server  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pages", nargs="+", help="chapter keys (URL paths), e.g. sinusoidal")
    ap.add_argument("--out", default="/tmp/shots")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=2400)
    ap.add_argument("--sentence", default=None)
    ap.add_argument("--query", default="", help='extra query string, e.g. "present=1&t5_buckets=64"')
    ap.add_argument("--suffix", default="", help="added to each PNG's name, e.g. -present")
    ap.add_argument("--wait", type=float, default=2.0, help="extra seconds after the page settles")
    ap.add_argument(
        "--click",
        default="",
        help="text of an element to click first (e.g. an expander's label); the shot starts there",
    )
    ap.add_argument(
        "--server-timeout", type=float, default=60.0, help="seconds to wait for the server (a busy machine)"
    )
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    proc, url, _ = start_server(out / "server.log", timeout=args.server_timeout)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": args.width, "height": args.height})
            page.add_init_script(TRACK_RUNS_JS)
            from ui.chapters import CHAPTERS

            default_key = CHAPTERS[0].key  # the default page is served at "/", not at its url_path
            # Streamlit learns the page list from app.py's first run; a deep link as the very first
            # request of a fresh server shows a "Page not found" dialog (then renders the right
            # page). Warm the server with the main page first.
            page.goto(url)
            page.wait_for_function(RENDERED_JS, arg=1, polling=100, timeout=180_000)
            for key in args.pages:
                route = "" if key == default_key else key
                parts = [urllib.parse.urlencode({"s": args.sentence})] if args.sentence else []
                parts += [args.query.lstrip("?")] if args.query else []
                query = "?" + "&".join(parts) if parts else ""
                page.goto(f"{url}/{route}{query}")
                page.wait_for_selector("h1", timeout=60_000)
                page.wait_for_function(RENDERED_JS, arg=1, polling=100, timeout=180_000)
                if args.click:
                    target = page.get_by_text(args.click).first
                    target.scroll_into_view_if_needed()
                    done = page.evaluate("() => window.__peDone")
                    target.click()
                    page.wait_for_function(RENDERED_JS, arg=done + 1, polling=100, timeout=180_000)
                    # Bring the clicked element to the top of Streamlit's scrolled container.
                    target.evaluate("e => e.scrollIntoView({block: 'start'})")
                time.sleep(args.wait)
                path = out / f"{key}{args.suffix}.png"
                page.screenshot(path=str(path))
                print(path)
            browser.close()
    finally:
        stop_server(proc)


if __name__ == "__main__":
    main()
