"""axe-core over every chapter in both languages, in Debian's Chromium: violations by rule and impact.

    .venv/bin/python tools/axe_report.py [--lang en ko] [--pages why-order rope] [--present]

Starts its own Streamlit server (tests/support/browser.py), opens every chapter (ui.chapters.CHAPTERS)
at ?lang=<lang>, runs axe-core (the copy bundled by axe-playwright-python, offline) and prints, per
page and language, the violations of the app's own markup and, apart, those of Streamlit's own
(`--bare`: also a bare Streamlit app with the same navigation and widgets, to see Streamlit's own).

The checks and whose markup is whose live in tests/support/axe.py; tests/e2e/test_axe.py runs the
same checks and fails on any critical or serious violation of the app's own markup.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.axe import SEVERE, Finding, axe_script, chapter_url, page_violations  # noqa: E402
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, RENDERED_JS, TRACK_RUNS_JS, start_server, stop_server  # noqa: E402


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
