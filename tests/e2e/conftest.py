"""Real-browser test fixtures: one Streamlit server and one Debian Chromium for the whole session.

The server binds 127.0.0.1 on a free port, logs to a file (an unread pipe can block it), and is
stopped by its own PID. pytest-playwright is pointed at Debian's /usr/bin/chromium through its
`browser_type_launch_args` fixture; Playwright's own browser download is never needed (nor allowed).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]
# A cold first render imports torch and compiles every module of the page; on a busy 2-core CI
# machine that takes seconds, so waits are generous. A passing run never waits this long.
TIMEOUT_MS = 90_000


def pytest_collection_modifyitems(items):
    # Everything under tests/e2e/ drives a real browser: mark it so `-m "not e2e"` skips it.
    for item in items:
        if Path(item.path).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.e2e)
            # Under pytest-xdist (--dist loadgroup) every browser test runs in one worker: one server,
            # one Chromium, and the chapter walk of test_pages_browser.py stays in order. (xdist's own
            # grouping by this mark is broken under pytest 9: tests/conftest.py's scheduler does it.)
            item.add_marker(pytest.mark.xdist_group("e2e"))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"{CHROMIUM} not found. The browser tests use Debian's chromium "
            "(apt-get install chromium; never Playwright's own browser download). .ci/run installs it.",
            pytrace=False,
        )
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def server_log(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("streamlit") / "server.log"


@pytest.fixture(scope="session")
def app_url(server_log):
    """A Streamlit server for this test session; yields its base URL (no trailing slash).

    It sends figures unchecked (PE_ATLAS_CHECK_FIGURES=0; tests/conftest.py turns the check on where
    figures are what is tested): what is tested here is what the browser draws, and every figure those
    pages send is built by the builders the AppTest sweeps check, on every page and every control.
    The check cost the server ~50 ms of CPU per page run, ~350 runs, beside the other worker's tests."""
    with pytest.MonkeyPatch.context() as mp:  # only the server's environment: this worker runs AppTests too
        mp.setenv("PE_ATLAS_CHECK_FIGURES", "0")
        proc, url, _ = start_server(server_log)
    yield url
    stop_server(proc)


@pytest.fixture(scope="session")
def served(browser, app_url) -> str:
    """The server after one warm-up session on "/": the first render still compiles every module of
    the frame, and the tests below should measure pages, not that. (A first session opened at a page
    path used to get a spurious "Page not found" modal too; serve_app.navigation_app prevents it, and
    tests/test_serve_app.py pins that on a fresh server.)
    """
    context = browser.new_context()
    page = context.new_page()
    page.goto(app_url + "/", timeout=TIMEOUT_MS)
    page.wait_for_selector(
        '[data-testid="stApp"][data-test-script-state="notRunning"]', state="attached", timeout=TIMEOUT_MS
    )
    context.close()
    return app_url


@pytest.fixture(scope="session")
def visits(browser, served, tmp_path_factory):
    """Each chapter in each language opened once at 1400 px and measured for every test that only
    looks (tests/e2e/visits.py: margins, axe, glyphs). Korean screenshots go to $PE_ATLAS_SCREENSHOTS
    when set, else to the pytest temp directory."""
    from tests.e2e.visits import Visits

    where = os.environ.get("PE_ATLAS_SCREENSHOTS")
    shots = Path(where) if where else tmp_path_factory.mktemp("korean-screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    opened = Visits(browser, served, shots)
    yield opened
    opened.close()
