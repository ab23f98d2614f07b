"""Screenshot chapter pages in headless Chromium, to look at what a learner sees.

    python tools/screenshot.py why-order sinusoidal --out /tmp/shots [--height 3000] [--sentence "…"]

Starts its own Streamlit server on 127.0.0.1 (a free port), waits for it, takes one PNG per page
(key = the chapter's URL path, see ui/chapters.py), and stops the server by its PID.
Streamlit scrolls an inner container, so full_page screenshots capture only the viewport: a tall
viewport is used instead.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def start_server(log_path: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port),
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    log = open(log_path, "wb")  # a file, not a pipe: an unread pipe can block the server
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("streamlit never became healthy:\n" + log_path.read_text())
        time.sleep(0.2)


SETTLED_JS = """() => {
  const running = document.querySelector('[data-testid="stStatusWidget"]');
  const stale = document.querySelector('[data-stale="true"]');
  const skeleton = document.querySelector('[data-testid="stSkeleton"]');
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  const drawn = charts.filter(c => c.querySelector('.main-svg')).length;
  return JSON.stringify({busy: !!(running || stale || skeleton), charts: charts.length, drawn});
}"""


def wait_until_settled(page, timeout: float = 180.0) -> None:
    """Until Streamlit is idle, nothing is stale, and every chart has drawn — twice in a row, 1 s
    apart (the script may not have started when the page first looks idle)."""
    import json

    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        state = json.loads(page.evaluate(SETTLED_JS))
        done = not state["busy"] and state["charts"] == state["drawn"]
        if done and state == last:
            return
        last = state if done else None
        time.sleep(1.0)
    raise TimeoutError(f"page never settled: {last}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pages", nargs="+", help="chapter keys (URL paths), e.g. sinusoidal")
    ap.add_argument("--out", default="/tmp/shots")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=2400)
    ap.add_argument("--sentence", default=None)
    ap.add_argument("--wait", type=float, default=2.0, help="extra seconds after the page settles")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    proc, url = start_server(out / "server.log")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": args.width, "height": args.height})
            from ui.chapters import CHAPTERS

            default_key = CHAPTERS[0].key  # the default page is served at "/", not at its url_path
            # Streamlit learns the page list from app.py's first run; a deep link as the very first
            # request of a fresh server shows a "Page not found" dialog (then renders the right
            # page). Warm the server with the main page first.
            page.goto(url)
            page.wait_for_selector("h1", timeout=60_000)
            for key in args.pages:
                route = "" if key == default_key else key
                query = "?" + urllib.parse.urlencode({"s": args.sentence}) if args.sentence else ""
                page.goto(f"{url}/{route}{query}")
                page.wait_for_selector("h1", timeout=60_000)
                wait_until_settled(page)
                time.sleep(args.wait)
                path = out / f"{key}.png"
                page.screenshot(path=str(path))
                print(path)
            browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    main()
