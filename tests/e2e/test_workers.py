"""A class on several workers (tools/serve.py, `./run-app --workers N`): two Streamlit processes
behind HAProxy, driven by two real browsers (separate cookie jars, as two laptops are).

Each browser is pinned to one worker by the balancer's cookie, keeps its own sentence through
reruns, and never sees the other's; the balancer spreads them over both workers; Streamlit's XSRF
protection stays on; and nothing but the balancer listens beyond the workers' loopback ports.
"""

from __future__ import annotations

import shutil

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import TIMEOUT_MS
from tools.serve import Class, free_port

SENTENCES = ("zqv first learner sentence", "zqv second learner sentence")


@pytest.fixture(scope="module")
def served_class():
    if shutil.which("haproxy") is None:
        pytest.fail("HAProxy is not installed (apt-get install haproxy; .ci/run installs it)", pytrace=False)
    with Class(workers=2, port=free_port()) as c:
        yield c


def _rendered(page: Page) -> None:
    page.wait_for_selector(
        '[data-testid="stApp"][data-test-script-state="notRunning"]', state="attached", timeout=TIMEOUT_MS
    )


def _type(page: Page, text: str) -> None:
    box = page.locator('[data-testid="stSidebar"]').get_by_role("textbox", name="Sentence")
    box.fill(text)
    box.press("Control+Enter")  # a text area commits on Ctrl+Enter (or blur)
    expect(page.get_by_text(text.split()[-1], exact=False).first).to_be_visible(timeout=TIMEOUT_MS)


def test_two_learners_on_two_workers_keep_their_own_sentences(browser: Browser, served_class: Class):
    learners = []
    for text in SENTENCES:
        context = browser.new_context()
        page = context.new_page()
        page.goto(served_class.url + "/", timeout=TIMEOUT_MS)
        _rendered(page)
        _type(page, text)
        learners.append((context, page, text))
    workers = [next(c["value"] for c in ctx.cookies() if c["name"] == "PEATLAS") for ctx, _, _ in learners]
    assert sorted(workers) == ["w1", "w2"], workers  # least-busy balancing put them on different workers
    for ctx, page, text in learners:
        # XSRF protection is on: Streamlit set its token cookie through the balancer.
        assert any(c["name"] == "_streamlit_xsrf" for c in ctx.cookies())
        page.reload()  # a rerun from scratch, through the balancer again: still the same worker
        _rendered(page)
        assert next(c["value"] for c in ctx.cookies() if c["name"] == "PEATLAS") in workers
        box = page.locator('[data-testid="stSidebar"]').get_by_role("textbox", name="Sentence")
        expect(box).to_have_value(text, timeout=TIMEOUT_MS)
        other = next(t for t in SENTENCES if t != text)
        assert other not in page.content()  # never the other learner's words
    for ctx, _, _ in learners:
        ctx.close()


def test_workers_listen_on_loopback_only(served_class: Class):
    import subprocess

    out = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True, check=False).stdout
    for port in served_class.worker_ports:
        lines = [line for line in out.splitlines() if f":{port} " in line]
        assert lines and all("127.0.0.1:" in line for line in lines), lines
