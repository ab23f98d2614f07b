"""Real-browser test fixtures: one Streamlit server and one Debian Chromium for the whole session.

The server binds 127.0.0.1 on a free port, logs to a file (an unread pipe can block it), and is
stopped by its own PID. pytest-playwright is pointed at Debian's /usr/bin/chromium through its
`browser_type_launch_args` fixture; `playwright install` is never needed (nor allowed).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("PE_ATLAS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# A cold first render imports torch and compiles every module of the page; on a busy 2-core CI
# machine that takes seconds, so waits are generous. A passing run never waits this long.
TIMEOUT_MS = 90_000


def pytest_collection_modifyitems(items):
    # Everything under tests/e2e/ drives a real browser: mark it so `-m "not e2e"` skips it.
    for item in items:
        if Path(item.path).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"{CHROMIUM} not found. The browser tests use Debian's chromium "
            "(apt-get install chromium; never `playwright install`). .ci/run installs it.",
            pytrace=False,
        )
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def server_log(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("streamlit") / "server.log"


@pytest.fixture(scope="session")
def app_url(server_log):
    """A Streamlit server for this test session; yields its base URL (no trailing slash)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port),
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    with open(server_log, "wb") as fh:  # a file, not PIPE: an unread pipe can block the server
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
    while True:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait(timeout=15)
            raise RuntimeError("streamlit never became healthy:\n" + server_log.read_text())
        time.sleep(0.2)
    yield url
    proc.terminate()  # our own child only, by PID
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


@pytest.fixture(scope="session")
def served(browser, app_url) -> str:
    """The server after one warm-up session on "/".

    Two reasons. The first session of a fresh Streamlit 1.67 server that is opened at a page path
    ("/sinusoidal") gets a spurious "Page not found" modal (the page registry is empty until the
    frame's first st.navigation call) which makes the sidebar inert for the test. And the first
    render pays for importing torch; the tests below should measure pages, not imports.
    """
    context = browser.new_context()
    page = context.new_page()
    page.goto(app_url + "/", timeout=TIMEOUT_MS)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           state="attached", timeout=TIMEOUT_MS)
    context.close()
    return app_url
