"""A class on several workers (tools/serve.py, `./run-app --workers N`): two Streamlit processes
behind HAProxy, driven by two real browsers (separate cookie jars, as two laptops are).

Each browser is pinned to one worker by the balancer's cookie, keeps its own sentence through
reruns, and never sees the other's; the balancer spreads them over both workers; Streamlit's XSRF
protection stays on; and nothing but the balancer listens beyond the workers' loopback ports.

Last (it kills a worker of the class the others share, so it runs after them): a worker that dies
mid-lesson (issue 42). A learner in Chromium on the RoPE chapter, with their own sentence and seed in
the address, then the worker serving that learner killed with SIGKILL, by its PID. The learner's page
must come back by itself, on the other worker, with the same sentence, seed and chapter, within the
issue's 15 s and without a reload, and a notice must say the connection was lost; the supervisor must
start the dead worker again and HAProxy take it back (the next new learner is sent to it), within the
issue's 30 s of the kill.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from contextlib import ExitStack

import pytest
from playwright.sync_api import Browser, Page, expect

from models.smollm2 import WARM_AT_START_ENV
from tests.e2e.conftest import TIMEOUT_MS
from tools.serve import Class, free_port

SENTENCES = ("zqv first learner sentence", "zqv second learner sentence")
SENTENCE = "zqv my own words survive"
ADDRESS = "/rope?s=zqv+my+own+words+survive&seed=5"
PAGE_BACK_S = 15.0  # the bound: back on a healthy worker within 15 s
FULL_STRENGTH_S = 30.0  # the bound: the class back to N workers within 30 s


# Records, in the page, every change of Streamlit's connection and script state (the attributes the
# frame's reconnect script watches too) and the notice it shows; a reload would wipe it.
RECORDER = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  window.__peLog = [];
  new MutationObserver(() => {
    const note = document.getElementById('pe-reconnect');
    window.__peLog.push({
      connection: app.getAttribute('data-test-connection-state'),
      script: app.getAttribute('data-test-script-state'),
      note: note && !note.hidden ? note.textContent : '',
    });
  }).observe(app, {attributes: true, attributeFilter: ['data-test-connection-state', 'data-test-script-state']});
}"""
# Lost, then connected again, then a whole script run on the new connection.
CAME_BACK = """() => {
  const log = window.__peLog || [];
  const lost = log.findIndex(e => e.connection !== 'CONNECTED');
  if (lost < 0) return false;
  const back = log.findIndex((e, i) => i > lost && e.connection === 'CONNECTED');
  if (back < 0) return false;
  const ran = log.findIndex((e, i) => i >= back && e.script === 'running');
  return ran >= 0 && log.some((e, i) => i > ran && e.script === 'notRunning');
}"""


@pytest.fixture(scope="module")
def served_class():
    if shutil.which("haproxy") is None:
        pytest.fail("HAProxy is not installed (apt-get install haproxy; .ci/run installs it)", pytrace=False)
    with ExitStack() as stack:
        # These learners open RoPE only: the workers (and the one restarted after the kill, forked from
        # the same spawner) start without SmolLM2's warm-up, ~14 s of CPU each beside the suite.
        with pytest.MonkeyPatch.context() as env:
            env.setenv(WARM_AT_START_ENV, "0")
            # The class stops every worker, restarted ones too, by PID.
            c = stack.enter_context(Class(workers=2, port=free_port()))
        yield c


def _rendered(page: Page) -> None:
    page.wait_for_selector(
        '[data-testid="stApp"][data-test-script-state="notRunning"]', state="attached", timeout=TIMEOUT_MS
    )


def _worker(context) -> str:
    return next(c["value"] for c in context.cookies() if c["name"] == "PEATLAS")


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
    out = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True, check=False).stdout
    for port in served_class.worker_ports:
        lines = [line for line in out.splitlines() if f":{port} " in line]
        assert lines and all("127.0.0.1:" in line for line in lines), lines


def test_a_killed_worker_costs_its_learner_no_reload_and_the_class_is_whole_again(
    browser: Browser, served_class: Class
):
    c = served_class
    context = browser.new_context()
    page = context.new_page()
    loads: list[str] = []
    page.on("load", lambda p: loads.append(p.url))
    page.goto(c.url + ADDRESS, timeout=TIMEOUT_MS)
    _rendered(page)
    box = page.locator('[data-testid="stSidebar"]').get_by_role("textbox", name="Sentence")
    expect(box).to_have_value(SENTENCE, timeout=TIMEOUT_MS)
    errors = page.locator('[data-testid="stException"]')
    errors_before = errors.count()  # the chapter's own (this test is about the worker, not the chapter)
    dead = _worker(context)
    k = int(dead.removeprefix("w"))
    pid = c.worker_pids()[k - 1]
    page.evaluate(RECORDER)

    killed = time.monotonic()
    os.kill(pid, signal.SIGKILL)

    # The page comes back by itself: reconnected and redrawn by a script run on a live worker.
    page.wait_for_function(CAME_BACK, timeout=PAGE_BACK_S * 1000)
    back_s = time.monotonic() - killed
    log = page.evaluate("window.__peLog")
    # The learner was told: the "connection lost" notice while it was down, or, when the balancer's
    # redispatch brought the page back between two samples of the log, the "reconnected" notice.
    assert any(e["note"] for e in log), log
    assert len(loads) == 1, loads  # no reload: the frame script's rerun did it, not its fallback
    # Served by a live process: the balancer moved the learner to the other worker, or (a slow
    # reconnect on a busy machine, seen once in a full run: back after 16 s) to the killed worker
    # already restarted in a new process.
    assert _worker(context) != dead or c.worker_pids()[k - 1] != pid
    _rendered(page)
    expect(box).to_have_value(SENTENCE)
    assert page.url == c.url + ADDRESS  # chapter, sentence and seed still in the address
    expect(errors).to_have_count(errors_before)  # nothing new went wrong in the redrawn page
    expect(page.get_by_role("heading", level=1).first).to_be_visible()
    assert back_s <= PAGE_BACK_S, back_s

    # The class is back to two workers: the dead one started again on its port, healthy, and in HAProxy's
    # rotation for longer than HAProxy takes to mark a worker down (2 checks, 1 s apart), so the balancer's
    # view has settled; then HAProxy sends the next new learner to it (least busy: the first learner's
    # websocket is on the other one).
    deadline, whole_since = killed + FULL_STRENGTH_S, None
    while True:
        restarted = any(r[0] == k for r in c.restarts) and c.worker_pids()[k - 1] != pid
        if restarted and c.full_strength():
            whole_since = whole_since or time.monotonic()
            if time.monotonic() - whole_since >= 2.5:
                break
        else:
            whole_since = None
        assert time.monotonic() < deadline, f"not back to 2 workers {FULL_STRENGTH_S:.0f} s after the kill"
        time.sleep(0.25)
    full_s = whole_since - killed
    newcomer = browser.new_context()
    new_page = newcomer.new_page()
    new_page.goto(c.url + "/", timeout=TIMEOUT_MS)
    _rendered(new_page)
    # leastconn: the newcomer goes to the worker the learner is not on — the restarted one when the
    # learner moved away, the other when the learner came back to the restarted one — so both take work.
    assert _worker(newcomer) != _worker(context)
    print(f"page back {back_s:.1f} s after the kill; class back to 2 workers after {full_s:.1f} s")
    newcomer.close()
    context.close()
