"""What every real-browser tool of PE Atlas shares: Debian's Chromium, a Streamlit server of our
own on 127.0.0.1, and how to tell that a page has finished drawing.

Used by tests/e2e (the browser tests) and the tools (screenshots, benchmarks, the axe report, the
classroom load driver).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("PE_ATLAS_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium tries to reach Google's hosts, which this
# offline machine refuses; --no-sandbox because the tests run as root.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def start_server(log: Path, timeout: float = 60.0, script: str = "app.py") -> tuple[subprocess.Popen, str, float]:
    """Start `streamlit run app.py` on a free 127.0.0.1 port, as ./run-app does (serve_app.py: the heavy
    imports done before the server is healthy); wait for /_stcore/health. `script` (a path from the
    project's root) runs another script the same way: tools/bench_browser.py's reference app.

    Returns (process, base URL without trailing slash, seconds until healthy). The log goes to a
    file: an unread pipe can block the server.
    """
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [
        sys.executable,
        "-m",
        "serve_app",
        "run",
        script,
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    t0 = time.perf_counter()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return proc, url, time.perf_counter() - t0
        except OSError:
            pass
        if proc.poll() is not None or time.perf_counter() - t0 > timeout:
            stop_server(proc)
            raise RuntimeError("streamlit never became healthy:\n" + Path(log).read_text())
        time.sleep(0.05)


def stop_server(proc: subprocess.Popen) -> None:
    """Stop our own child, by its PID."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


# Streamlit marks the app root with the script's run state: "initial", "running", "rerunRequested",
# "notRunning", … An init script (installed before the page's own scripts) counts the runs that have
# started and finished, so a wait never mistakes the idle state *before* a run (or before the first
# run) for its end. Two watchers feed one state machine: a MutationObserver sees every change of the
# attribute, including a run shorter than a timer tick (each record's oldValue is the state before
# it), and a 10 ms poller catches the changes the observer cannot see, when React replaces the node;
# a message on the app's websocket also marks a run (one too short to show in the DOM at all).
TRACK_RUNS_JS = """(() => {
  window.__peDone = 0;
  let busy = false;
  let lastMessage = -1e9;
  const see = s => {
    if (s === 'running' || s === 'rerunRequested') busy = true;
    else if (s === 'notRunning' && busy && performance.now() - lastMessage > 100) {
      busy = false; window.__peDone += 1;
    }
  };
  const now = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app && app.getAttribute('data-test-script-state');
  };
  setInterval(() => see(now()), 10);
  // A run can now be shorter than a React render (a fragment rerun in ~20 ms): the app root may go
  // straight from notRunning to notRunning with no "running" in the DOM. Every run sends messages, so
  // a message from the server also marks a run in progress; it has ended when the app says
  // notRunning and no message has come for 100 ms (the last message of a run is its "finished").
  const NativeWebSocket = window.WebSocket;
  if (NativeWebSocket && !NativeWebSocket.__peWrapped) {
    const Wrapped = function (...args) {
      const ws = new NativeWebSocket(...args);
      ws.addEventListener('message', () => { busy = true; lastMessage = performance.now(); });
      return ws;
    };
    Wrapped.prototype = NativeWebSocket.prototype;
    for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Wrapped[k] = NativeWebSocket[k];
    Wrapped.__peWrapped = true;
    window.WebSocket = Wrapped;
  }
  const observe = () => new MutationObserver(records => {
    for (const r of records) {
      if (r.type === 'attributes' && r.attributeName === 'data-test-script-state') see(r.oldValue);
    }
    see(now());
  }).observe(document.documentElement, {subtree: true, childList: true, attributes: true,
                                         attributeOldValue: true, attributeFilter: ['data-test-script-state']});
  // An init script can run before the document has its root element.
  if (document.documentElement) observe(); else document.addEventListener('readystatechange', observe, {once: true});
})();"""


# Drawn = at least `done` runs finished, the script is not running, no element is stale (left over
# from the previous run) or a skeleton (an element whose code is still loading: a fresh tab loads
# plotly only when the first chart arrives), the sidebar's seed box exists (it can appear seconds
# after the run ended) unless an exception is shown, every plotly container holds a drawn plot,
# and nothing has changed for 300 ms (plotly and KaTeX draw after the run ends). The argument is
# `done`, or [done, calm ms]. The calm also gives an input's run time to start (the page looks drawn
# until it does): at 150 ms for every wait, two of four full suites failed on an input whose run
# came late (a keyboard walk, a click in the navigation), so inputs keep 300 ms. Walking from page to
# page by the browser's history (tests/e2e/visits.Walker: nothing typed, each page then checked by its
# title) waits 150 ms: ~110 such waits per suite.
CALM_MS = 300  # the default calm (tools/bench_browser.py subtracts it from a page load's time)
RENDERED_JS = """arg => {
  const [done, calm] = Array.isArray(arg) ? arg : [arg, __CALM__];
  const app = document.querySelector('[data-testid="stApp"]');
  const idle = window.__peDone >= done && app
    && app.getAttribute('data-test-script-state') === 'notRunning'
    && !document.querySelector('[data-stale="true"], [data-testid="stSkeleton"]')
    && !!document.querySelector('[data-testid="stSidebar"] input[type="number"], [data-testid="stException"]');
  // The atlas's charts (ui/chart.py) mark the figure they have drawn; st.plotly_chart's (the
  // reference app's) are drawn once their plot div holds a layout.
  const lite = Array.from(document.querySelectorAll('.pe-chart'));
  const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]');
  const native = Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot'));
  const plots = lite.concat(native);
  const drawn = native.length === charts.length && native.every(p => p._fullLayout && p.data)
    && lite.every(p => p._fullLayout && p.__peShown === p.__peSpec);
  if (!(idle && drawn)) { window.__peStable = null; return false; }
  const sig = plots.length + ':' + document.querySelectorAll('[data-testid="stElementContainer"]').length
    + ':' + document.querySelectorAll('.katex').length;
  const now = performance.now();
  if (!window.__peStable || window.__peStable.sig !== sig) { window.__peStable = {sig, t: now}; return false; }
  return now - window.__peStable.t > calm;
}""".replace("__CALM__", str(CALM_MS))


# The navigation sits in the top bar (app.py: st.navigation(position="top")): one menu per part of
# the atlas, each opening onto its chapters' links. A window too narrow for the bar (a phone) gets
# Streamlit's sidebar navigation instead; a part that does not fit the bar goes under "N more".
NAV_LINK = ('[data-testid="stTopNavDropdownLink"]', '[data-testid="stTopNavLink"]', '[data-testid="stSidebarNavLink"]')


def nav_link(page, part_title: str, key: str, title: str | None = None):
    """The navigation's link to the chapter `key`, its part's menu opened (`part_title`, in the page's
    language) when the bar has one. The first chapter's link is the bare base URL: give its `title`."""
    if title is not None:
        link = page.locator(", ".join(NAV_LINK)).filter(has_text=title)
    else:
        link = page.locator(", ".join(f'{s}[href$="/{key}"]' for s in NAV_LINK))
    if link.count() and link.first.is_visible():
        return link.first
    menus = page.locator('[data-testid="stTopNavSection"]')
    menu = menus.filter(has_text=part_title)
    if menu.count() == 0:  # the part did not fit the bar: it is under "N more"
        menus.last.click()
        menu = page.locator('[data-testid="stTopNavPopover"]').get_by_text(part_title, exact=True)
    menu.first.click()
    link.first.wait_for(state="visible")
    return link.first
