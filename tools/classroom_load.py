"""A classroom at once: N learners on PE Atlas, each typing and clicking as a browser would.

    python tools/classroom_load.py --sessions 30 100 --think 5 --workers 2      # a class, realistically
    python tools/classroom_load.py --sessions 30 --think 0                       # everyone at once

Starts its own server on 127.0.0.1 — or, with --workers N, N workers behind HAProxy (tools/serve.py),
as `./run-app --workers N` serves a class — stopped by their PIDs at the end, then drives N concurrent
sessions straight through Streamlit's websocket protocol — the same BackMsg/ForwardMsg protobufs the
browser sends and receives — so 30 learners cost the client almost nothing and the figures measure
the server, not 30 Chromiums fighting for 2 cores. (Longer than 500 lines: the protocol client, the
learners' behaviour, the worker kill and its report are one measurement.) Each session:

  1. opens the app (the default chapter; with --chapter KEY, then that chapter, where it stays) and
     types its own sentence, which carries a marker only it knows ("zqv017x" for session 17);
  2. then, `--actions` times, after a think time drawn from a log-normal distribution with median
     --think seconds (0: no pause, everyone at once — the closed-loop worst case): moves one of the
     page's sliders (half of the time; sometimes to its minimum or maximum), types a new sentence (a
     quarter; one in five of them hostile: markup, 3,000 characters, emoji and right-to-left text),
     or switches to another chapter (a quarter). A slider inside an st.fragment reruns only that
     fragment, as in a browser. At its second input, on a page that asks a question, it answers the
     first one instead (Skip the prediction: what Reveal runs), and that answer stays revealed, so
     what measures it reruns with the learner's later inputs.

Measured: for every action, the time from sending the input to the server's "script finished"
(the page is updated: every delta of the run has arrived); p50 and p95 per N. Errors: exception
elements, st.error alerts, runs that never finish (timeout), connection failures — must be 0.
Isolation: every byte any session receives is searched for other sessions' markers — must never
match. Server memory: peak RSS of each server process (VmHWM). A progress line while it runs.
Everything is bounded: sessions ≤ 150, actions ≤ 50, each wait ≤ --timeout seconds.

Optionally (--train N) N sessions at once press "Train" in the toy-task lab: one must run, the
others must be told they are queued, and nothing may crash.

A worker's death (--kill-worker-at S, with --workers N): S seconds into the first round, the worker
serving the most learners is killed (SIGKILL, by its PID), as in issue 42. Its learners do what a
browser with the atlas's frame script does: the input whose run was cut off fails; they reconnect
through the balancer with their cookie, retrying as Streamlit's frontend does (0.25 s, doubling, at
most 4 s apart), HAProxy sends them to a live worker, and a full rerun with every control's value
redraws their page there; then they carry on. Reported: the inputs that failed, how long each of
those learners was without a page (from the failure to the redrawn page), and how long after the kill
the class was back to N workers (restarted, healthy, and in HAProxy's rotation).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import re
import signal
import statistics
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402  (a dependency of streamlit itself)
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidHandshake  # noqa: E402
from websockets.typing import Subprotocol  # noqa: E402

from tools.browser import start_server, stop_server  # noqa: E402
from tools.serve import Class, free_port  # noqa: E402

# A session's marker as a word: not inside a run of base64 characters, where a typed array's bytes
# (plotly sends arrays as base64) match "zqv…x" by chance about once per few hundred MB received
# (a 100-learner run once "found" session 788 of 100 inside an array). "+" may border it: a sentence
# in a URL's query string has "+" for its spaces.
MARKER = re.compile(rb"(?<![A-Za-z0-9/])zqv(\d{3})x(?![A-Za-z0-9/=])")
SENTENCES = (
    "The cat sat on the mat with {m} today.",
    "{m} reads every word in order, then backwards.",
    "고양이가 {m} 위에 앉았다. 강아지가 통나무 위에 앉았다.",
    "a a a {m} b a a a b b",
    "Attention compares {m} with every other word at once; positions put the order back.",
)
# The input at which a learner answers the page's first question (Skip the prediction, which runs what
# Reveal runs): from then on that question's answer, and whatever measures it, is on the learner's page.
REVEAL_AT = 1
HOSTILE = (  # what a class types too: markup, a wall of text, emoji and right-to-left script
    "<script>alert(1)</script> <b>{m}</b> $$\\frac{{ ** [x](javascript:alert(1))",
    "{m} " + "lorem ipsum dolor " * 170,
    "😀 👩‍💻 🇰🇷 {m} مرحبا بالعالم cafe\u0301",
)


@dataclass
class Session:
    n: int
    url: str
    timeout: float
    times: list[float] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)  # what each of `times` was: slider, sentence, …
    kind: str = "sentence"  # what the input being run is
    errors: list[str] = field(default_factory=list)
    leaks: set[int] = field(default_factory=set)
    seen_own: bool = False  # did our own marker ever come back? If not, the leak check is blind
    pages: dict[str, str] = field(default_factory=dict)  # url path → page_script_hash
    page_hash: str = ""
    widgets: dict[str, WidgetState] = field(default_factory=dict)  # id → state we send back
    elements: dict[str, tuple[str, Any]] = field(default_factory=dict)  # widget id → (kind, proto), this run
    texts: list[str] = field(default_factory=list)  # info/warning texts of the last run
    fragment_of: dict[str, str] = field(default_factory=dict)  # widget id → its fragment (if any)
    cookie: str = ""  # the balancer's PEATLAS cookie: pins this learner to one worker
    ws: Any = None  # this learner's websocket (a new one after its worker died)
    failed: list[float] = field(default_factory=list)  # when an input's run was cut off (perf_counter)
    outages: list[tuple[float, float]] = field(default_factory=list)  # (connection lost, page redrawn)
    lost_at: float | None = None  # when the connection was found lost, until the page is redrawn
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one user of the websocket at a time
    finished: bool = False

    @property
    def marker(self) -> str:
        return f"zqv{self.n:03d}x"

    async def run_script(self, ws, page_hash: str | None = None, fragment: str = "") -> float:
        """Send one rerun (as the browser does after any input; only `fragment` when the input sits
        in one) and wait for its end."""
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = ""
        cs.page_script_hash = page_hash if page_hash is not None else self.page_hash
        cs.widget_states.widgets.extend(self.widgets.values())
        if fragment:
            cs.fragment_id = fragment
        else:  # a full run lists the page's elements afresh
            self.elements = {}
        self.texts = []
        t0 = time.perf_counter()
        await ws.send(msg.SerializeToString())
        while True:
            raw = await asyncio.wait_for(ws.recv(), timeout=self.timeout)
            for m in MARKER.findall(raw):
                if int(m) != self.n:
                    self.leaks.add(int(m))
                else:
                    self.seen_own = True
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = fm.WhichOneof("type")
            if kind == "navigation":
                self.pages = {p.url_pathname: p.page_script_hash for p in fm.navigation.app_pages}
                self.page_hash = fm.navigation.page_script_hash
            elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                self._see(fm.delta.new_element, fm.delta.fragment_id)
            elif kind == "delta" and fm.delta.WhichOneof("type") == "add_block":
                self._see_block(fm.delta.add_block, fm.delta.fragment_id)
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(fm.script_finished)
                if status == "FINISHED_EARLY_FOR_RERUN":
                    continue
                if status not in ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"):
                    self.errors.append(f"run ended {status}")
                return time.perf_counter() - t0
            elif kind == "page_not_found":
                self.errors.append("page not found")

    def _see(self, el, fragment: str = "") -> None:
        kind = el.WhichOneof("type")
        if kind == "exception":
            self.errors.append(f"exception: {el.exception.type}: {el.exception.message[:200]}")
        elif kind == "alert":
            fmt = el.alert.format  # 1 error, 2 warning, 3 info, 4 success
            if fmt == 1:
                self.errors.append(f"st.error: {el.alert.body[:200]}")
            else:
                self.texts.append(el.alert.body)
        elif kind == "progress":
            self.texts.append(el.progress.text)
        elif kind in ("slider", "text_area", "button", "selectbox", "number_input", "toggle", "checkbox"):
            self.elements[getattr(el, kind).id] = (kind, getattr(el, kind))
            if fragment:
                self.fragment_of[getattr(el, kind).id] = fragment

    def _see_block(self, block, fragment: str = "") -> None:
        """A layout block (a learner here opens no expander; tools/bench_controls.py does)."""

    def widget(self, kind: str, suffix: str):
        for wid, (k, proto) in self.elements.items():
            if k == kind and wid.endswith(suffix):
                return wid, proto
        return None, None

    def type_sentence(self, k: int, hostile: bool = False) -> None:
        wid, _ = self.widget("text_area", "sentence")
        if wid is None:
            self.errors.append("no sentence box on the page")
            return
        pool = HOSTILE if hostile else SENTENCES
        text = pool[(self.n + k) % len(pool)].format(m=self.marker)
        self.widgets[wid] = WidgetState(id=wid, string_value=text)

    def move_a_slider(self, k: int, extreme: bool = False) -> str | None:
        """Set one of the page's sliders (its minimum or maximum when `extreme`); returns the
        fragment to rerun ("" for the whole page), or None when the page has no slider."""
        sliders = [
            (wid, p)
            for wid, (kind, p) in self.elements.items()
            if kind == "slider" and p.type == p.SLIDER and len(p.default) == 1
        ]
        if not sliders:
            return None
        wid, p = sliders[(self.n + k) % len(sliders)]
        v = p.min + (p.max - p.min) * (((self.n * 7 + k * 3) % 11) / 10)
        if extreme:
            v = p.max if (self.n + k) % 2 else p.min
        if p.step:  # a browser's slider only lands on its steps (e.g. even d on Sinusoidal)
            v = min(p.max, p.min + round((v - p.min) / p.step) * p.step)
        if p.data_type == p.INT:
            v = round(v)
        state = WidgetState(id=wid)
        state.double_array_value.data.append(v)
        self.widgets[wid] = state
        return self.fragment_of.get(wid, "")

    def skip_button(self) -> tuple[str, str] | None:
        """The first question's "Skip the prediction" button on the page (the same callback as Reveal)
        and its fragment, or None when the page asks nothing."""
        for wid, (kind, _) in self.elements.items():
            if kind == "button" and wid.endswith("__skip"):
                return wid, self.fragment_of.get(wid, "")
        return None

    def record(self, t: float | None) -> None:
        if t is not None:  # an input cut off by its worker's death has no time: it is counted in `failed`
            self.times.append(t)
            self.kinds.append(self.kind)

    async def act(self, run) -> float | None:
        """One input: its run's time, or None when its worker died under it (then, as a browser with the
        frame script does, reconnect through the balancer and redraw the page with a full rerun)."""
        async with self.lock:
            if self.lost_at is not None:  # lost while the learner paused: back first, as the browser is
                await self.recover()
            try:
                return await run(self.ws)
            except TimeoutError:  # a worker too slow to answer is an error of the run, not a death
                raise
            except (ConnectionClosed, OSError):
                self.failed.append(time.perf_counter())
                self.lost_at = self.lost_at or self.failed[-1]
                await self.recover()
                return None

    async def watch(self) -> None:
        """A browser notices a lost connection at once, not at the learner's next input."""
        while not self.finished:
            ws = self.ws
            await ws.wait_closed()
            if self.finished:
                return
            self.lost_at = self.lost_at or time.perf_counter()
            async with self.lock:
                if ws is self.ws and not self.finished:
                    await self.recover()

    async def recover(self) -> None:
        await self.come_back()
        assert self.lost_at is not None
        self.outages.append((self.lost_at, time.perf_counter()))
        self.lost_at = None

    async def come_back(self) -> None:
        with contextlib.suppress(Exception):  # the old connection is already gone
            await self.ws.close()
        delay, deadline = 0.25, time.perf_counter() + self.timeout
        while True:
            await asyncio.sleep(delay)
            try:
                self.ws = await connect(self)
                break
            except (OSError, InvalidHandshake, TimeoutError):
                if time.perf_counter() > deadline:
                    raise
                delay = min(4.0, 2 * delay)
        # HAProxy sent us to another worker and pinned us there with a new cookie, as a browser keeps it.
        jar = self.ws.response.headers.get_all("Set-Cookie")
        new = "; ".join(c.split(";", 1)[0] for c in jar if c.startswith("PEATLAS="))
        self.cookie = new or self.cookie
        await self.run_script(self.ws)  # the frame script's rerun: every control's value, this page


def cookie_for(url: str) -> str:
    """The balancer's cookie for a new learner (empty behind a single server): the first page load."""
    with urllib.request.urlopen(url + "/", timeout=30) as r:
        jar = r.headers.get_all("Set-Cookie") or []
    return "; ".join(c.split(";", 1)[0] for c in jar if c.startswith("PEATLAS="))


def connect(s: Session) -> Any:
    ws_url = s.url.replace("http://", "ws://") + "/_stcore/stream"
    headers = {"Cookie": s.cookie} if s.cookie else None
    return websockets.connect(
        ws_url,
        subprotocols=[Subprotocol("streamlit")],
        max_size=2**28,
        open_timeout=s.timeout,
        additional_headers=headers,
    )


def think_times(n: int, count: int, median: float) -> list[float]:
    """Pauses between one learner's actions: log-normal (σ = 0.8) around `median` seconds, capped at
    five times it; seeded per learner, so two runs pause alike. 0 gives no pauses at all."""
    if median <= 0:
        return [0.0] * count
    rng = random.Random(1000 + n)
    return [min(5 * median, rng.lognormvariate(math.log(median), 0.8)) for _ in range(count)]


async def one_learner(s: Session, actions: int, paths: list[str], think: float = 0.0, home: str | None = None) -> None:
    pauses = think_times(s.n, actions + 1, think)
    try:
        s.cookie = await asyncio.to_thread(cookie_for, s.url)
        await asyncio.sleep(pauses[0] * random.Random(s.n).random())  # learners arrive over a while
        s.ws = await connect(s)
        watcher = asyncio.create_task(s.watch())
        try:
            await s.act(lambda ws: s.run_script(ws, ""))  # the first load, as a fresh tab does
            if home is not None:  # --chapter: the learner's link opens that chapter
                await s.act(lambda ws: s.run_script(ws, s.pages.get(home, "")))

            async def first(ws) -> float:
                s.type_sentence(0)
                return await s.run_script(ws)

            s.record(await s.act(first))
            for k in range(actions):
                await asyncio.sleep(pauses[k + 1])

                async def step(ws, k: int = k) -> float:
                    # Chosen inside act, from the page as drawn now (never a page being redrawn).
                    skip = s.skip_button() if k == REVEAL_AT else None
                    if skip is not None:  # a question's answer, once: it stays revealed for this learner
                        s.kind = "reveal"
                        s.widgets[skip[0]] = WidgetState(id=skip[0], trigger_value=True)
                        try:
                            return await s.run_script(ws, fragment=skip[1])
                        finally:
                            del s.widgets[skip[0]]  # a trigger is sent with one run only, as a browser does
                    what = (s.n * 3 + k) % 4  # half sliders, a quarter sentences, a quarter chapters
                    fragment = s.move_a_slider(k, extreme=k % 5 == 4) if what in (0, 1) else None
                    if fragment is not None:
                        s.kind = "slider"
                        return await s.run_script(ws, fragment=fragment)
                    if what == 3:  # switch chapter
                        s.kind = "chapter"
                        return await s.run_script(ws, s.pages.get(paths[(s.n + k) % len(paths)], ""))
                    s.kind = "hostile sentence" if k % 5 == 2 else "sentence"
                    s.type_sentence(k, hostile=k % 5 == 2)
                    return await s.run_script(ws)

                s.record(await s.act(step))
        finally:
            s.finished = True
            watcher.cancel()
            await s.ws.close()
        if not s.seen_own:
            s.errors.append("its own sentence never came back: the isolation check would be blind")
    except TimeoutError:
        s.errors.append(f"no answer within {s.timeout:.0f} s")
    except Exception as e:  # a dropped connection is an error of the run, not of this script
        s.errors.append(f"{type(e).__name__}: {e}")


async def one_trainer(s: Session, patience: float) -> dict:
    """Open the toy-task lab, ask for a 20-step training with a seed of its own (so the cache cannot
    answer), then reload the page once a second, as the page's own poll would, until it is done."""
    out = {"queued": False, "refused": False, "finished": False, "polls": 0}
    try:
        s.cookie = await asyncio.to_thread(cookie_for, s.url)
        async with connect(s) as ws:
            await s.run_script(ws, "")
            await s.run_script(ws, s.pages.get("toy-lab", ""))
            steps, _ = s.widget("slider", "toy_train_steps")
            seed, _ = s.widget("number_input", "toy_train_seed")
            go, _ = s.widget("button", "toy_train_go")
            if not (steps and seed and go):
                s.errors.append("the toy-task lab has no training form")
                return out
            st_steps = WidgetState(id=steps)
            st_steps.double_array_value.data.append(20)
            s.widgets.update({steps: st_steps, seed: WidgetState(id=seed, int_value=500 + s.n)})
            s.widgets[go] = WidgetState(id=go, trigger_value=True)
            s.times.append(await s.run_script(ws))
            del s.widgets[go]  # a trigger fires once; later reruns must not press it again
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < patience:
                said = " ".join(s.texts)
                out["queued"] |= "queued behind" in said
                if "queue is full" in said.lower() or "try again" in said.lower():
                    out["refused"] = True
                    break
                if "Finished" in said or "Stopped" in said:
                    out["finished"] = "Finished" in said
                    break
                await asyncio.sleep(1.0)
                out["polls"] += 1
                s.times.append(await s.run_script(ws))
            else:
                s.errors.append(f"training not finished after {patience:.0f} s")
    except TimeoutError:
        s.errors.append(f"no answer within {s.timeout:.0f} s")
    except Exception as e:
        s.errors.append(f"{type(e).__name__}: {e}")
    return out


async def training_rush(url: str, n: int, timeout: float) -> dict:
    sessions = [Session(k, url, timeout) for k in range(n)]
    t0 = time.perf_counter()
    outs = await asyncio.gather(*(one_trainer(s, patience=600.0) for s in sessions))
    return {
        "trainers": n,
        "wall_s": round(time.perf_counter() - t0, 1),
        "finished": sum(o["finished"] for o in outs),
        "told_queued": sum(o["queued"] for o in outs),
        "refused_queue_full": sum(o["refused"] for o in outs),
        "errors": [f"session {s.n}: {e}" for s in sessions for e in s.errors],
    }


async def chapter_ready(url: str, chapter: str, learners: int, timeout: float) -> float:
    """Seconds until `learners` fresh sessions at once (the balancer spreads them over the workers)
    each see the chapter drawn with a slider. A chapter that loads a model in the background draws
    only a note until it is there (the sidebar has no slider), and inputs measured before that would
    time the note, not the chapter."""
    t0 = time.perf_counter()

    async def drawn(s: Session) -> bool:
        s.cookie = await asyncio.to_thread(cookie_for, s.url)
        async with connect(s) as ws:
            await s.run_script(ws, "")
            await s.run_script(ws, s.pages.get(chapter, ""))
        return any(kind == "slider" for kind, _ in s.elements.values())

    while time.perf_counter() - t0 < timeout:
        seen = await asyncio.gather(*(drawn(Session(900 + k, url, timeout)) for k in range(learners)))
        if all(seen):
            return time.perf_counter() - t0
        await asyncio.sleep(2.0)
    raise TimeoutError(f"{chapter} was not drawn with its controls within {timeout:.0f} s")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))] if xs else float("nan")


async def progress(sessions: list[Session], expected: int, t0: float, done: asyncio.Event) -> None:
    """A line on stderr every two seconds: how far, how fast, any errors."""
    while not done.is_set():
        await asyncio.sleep(2.0)
        times = [t for s in sessions for t in s.times]
        p95 = f"{1000 * percentile(times, 0.95):.0f} ms" if times else "—"
        errors = sum(len(s.errors) for s in sessions)
        print(
            f"\r  {time.perf_counter() - t0:5.0f} s · {len(times)}/{expected} inputs · p95 so far {p95} · "
            f"errors {errors}   ",
            end="",
            file=sys.stderr,
            flush=True,
        )
    print(file=sys.stderr)


async def kill_a_worker(served: Class, sessions: list[Session], at: float) -> dict:
    """`at` seconds from now, SIGKILL the worker serving the most learners (by its PID); then wait
    until the class is back to full strength: that worker restarted (tools/serve.py's supervisor),
    healthy, and in HAProxy's rotation (Class.full_strength)."""
    await asyncio.sleep(at)
    counts = {k: sum(s.cookie == f"PEATLAS=w{k}" for s in sessions) for k in range(1, served.n + 1)}
    k = max(counts, key=lambda w: counts[w])
    pid = served.worker_pids()[k - 1]
    os.kill(pid, signal.SIGKILL)
    killed = time.perf_counter()
    print(f"\n  killed worker w{k} (pid {pid}), serving {counts[k]} of {len(sessions)} learners", file=sys.stderr)
    out: dict[str, Any] = {"worker": f"w{k}", "pid": pid, "learners_on_it": counts[k], "killed": killed}
    whole_since = None  # whole for longer than HAProxy takes to mark a worker down: its view has settled
    while time.perf_counter() - killed < 300:
        await asyncio.sleep(0.25)
        if served.worker_pids()[k - 1] != pid and await asyncio.to_thread(served.full_strength):
            whole_since = whole_since or time.perf_counter()
            if time.perf_counter() - whole_since >= 2.5:
                out["back_to_full_strength_s"] = round(whole_since - killed, 1)
                break
        else:
            whole_since = None
    return out


async def classroom(
    url: str,
    n: int,
    actions: int,
    timeout: float,
    paths: list[str],
    think: float = 0.0,
    kill: tuple[Class, float] | None = None,
    home: str | None = None,
) -> dict:
    sessions = [Session(k, url, timeout) for k in range(n)]
    t0 = time.perf_counter()
    done = asyncio.Event()
    ticker = asyncio.create_task(progress(sessions, n * (actions + 1), t0, done))
    killer = asyncio.create_task(kill_a_worker(kill[0], sessions, kill[1])) if kill else None
    await asyncio.gather(*(one_learner(s, actions, paths, think, home) for s in sessions))
    done.set()
    await ticker
    times = [t for s in sessions for t in s.times]
    death = None
    if killer is not None:
        death = await killer
        killed = death.pop("killed")
        outages = [o for s in sessions for o in s.outages]
        death.update(
            {
                "failed_inputs": sum(len(s.failed) for s in sessions),  # runs cut off by the kill
                "learners_cut_off": sum(bool(s.outages) for s in sessions),
                # each cut-off learner: from the kill to their page redrawn on a live worker
                "page_back_after_kill_s": sorted(round(back - killed, 2) for _, back in outages),
                "outage_s": sorted(round(back - lost, 2) for lost, back in outages),  # from when it noticed
            }
        )
    return {
        "sessions": n,
        "think_median_s": think,
        "actions": len(times),
        "wall_s": round(time.perf_counter() - t0, 1),
        "p50_ms": round(1000 * statistics.median(times), 1) if times else None,
        "p95_ms": round(1000 * percentile(times, 0.95), 1) if times else None,
        "max_ms": round(1000 * max(times), 1) if times else None,
        # per kind of input: how many, p50 and p95 (ms); a tail's cause is usually one kind
        "by_kind": {
            kind: {
                "n": len(ts),
                "p50_ms": round(1000 * statistics.median(ts), 1),
                "p95_ms": round(1000 * percentile(ts, 0.95), 1),
            }
            for kind in sorted({k for s in sessions for k in s.kinds})
            for ts in [[t for s in sessions for t, k in zip(s.times, s.kinds, strict=True) if k == kind]]
        },
        "errors": [f"session {s.n}: {e}" for s in sessions for e in s.errors],
        "leaks": sorted({(s.n, other) for s in sessions for other in s.leaks}),
        **({"worker_death": death} if death else {}),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, nargs="+", default=[10, 30], help="N per round, each ≤ 150")
    ap.add_argument("--actions", type=int, default=12, help="inputs per session after the first (≤ 50)")
    ap.add_argument("--think", type=float, default=5.0, help="median pause between a learner's inputs, s (0: none)")
    ap.add_argument("--workers", type=int, default=1, help="serve through HAProxy with this many workers")
    ap.add_argument("--timeout", type=float, default=120.0, help="longest wait for one run, seconds")
    ap.add_argument("--train", type=int, default=0, help="then N sessions press Train in the toy lab at once (≤ 30)")
    ap.add_argument(
        "--kill-worker-at",
        type=float,
        metavar="S",
        help="S seconds into the first round, SIGKILL the worker serving the most learners (needs --workers)",
    )
    ap.add_argument(
        "--chapter",
        help="every learner opens this chapter (its key) and stays there: a chapter switch reruns it",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench_results" / "load.json")
    args = ap.parse_args()
    if any(not 1 <= n <= 150 for n in args.sessions) or not 1 <= args.actions <= 50 or args.think < 0:
        ap.error("sessions must be 1–150, actions 1–50 and think ≥ 0")
    if args.kill_worker_at is not None and (args.workers < 2 or args.kill_worker_at < 0):
        ap.error("--kill-worker-at needs --workers 2 or more and S ≥ 0")
    from ui.chapters import CHAPTERS

    paths = [c.key for c in CHAPTERS]
    if args.chapter is not None:
        if args.chapter not in paths:
            ap.error(f"--chapter must be one of {', '.join(paths)}")
        paths = [args.chapter]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    served = None
    if args.workers > 1:
        served = Class(args.workers, free_port(), log_dir=args.out.parent)
        served.start()
        url, pids, stop = served.url, served.worker_pids(), served.stop
        boot = float("nan")
    else:
        proc, url, boot = start_server(args.out.with_suffix(".server.log"))
        pids, stop = [proc.pid], lambda: stop_server(proc)
    results: dict[str, Any] = {"server_boot_s": round(boot, 2), "workers": args.workers, "rounds": []}
    try:
        # Warm-up: imports and first caches, on every worker (new learners go to the least busy one).
        asyncio.run(classroom(url, 2 * args.workers, 2, args.timeout, paths, home=args.chapter))
        if args.chapter is not None:
            ready = asyncio.run(chapter_ready(url, args.chapter, 2 * args.workers, 600.0))
            results["chapter"], results["chapter_ready_after_warmup_s"] = args.chapter, round(ready, 1)
        for i, n in enumerate(args.sessions):
            kill = (served, args.kill_worker_at) if served and args.kill_worker_at is not None and i == 0 else None
            r = asyncio.run(classroom(url, n, args.actions, args.timeout, paths, args.think, kill, args.chapter))
            if served is not None:
                pids = served.worker_pids()  # a restarted worker has a new one
            rss = [round(peak_rss_mb(pid), 1) for pid in pids]
            r["server_peak_rss_mb"], r["server_peak_rss_total_mb"] = rss, round(sum(rss), 1)
            results["rounds"].append(r)
            print(
                f"N={n}, think {args.think} s, {args.workers} worker(s): {r['actions']} inputs in {r['wall_s']} s; "
                f"p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms, max {r['max_ms']} ms; errors {len(r['errors'])}; "
                f"leaks {len(r['leaks'])}; peak RSS {rss} MB",
                flush=True,
            )
            for kind, v in r["by_kind"].items():
                print(f"    {kind}: {v['n']} inputs, p50 {v['p50_ms']} ms, p95 {v['p95_ms']} ms", flush=True)
            for e in r["errors"][:10]:
                print("   ", e)
            if "worker_death" in r:
                d = r["worker_death"]
                print(
                    f"Worker {d['worker']} killed (SIGKILL) serving {d['learners_on_it']} learners: "
                    f"{d['failed_inputs']} input(s) failed, of {d['learners_cut_off']} learner(s); their pages were "
                    f"back {d['page_back_after_kill_s']} s after the kill (outages {d['outage_s']} s); "
                    f"class back to {args.workers} workers after {d.get('back_to_full_strength_s', 'more than 300')} s",
                    flush=True,
                )
        if 0 < args.train <= 30:
            t = asyncio.run(training_rush(url, args.train, args.timeout))
            t["server_peak_rss_mb"] = [round(peak_rss_mb(pid), 1) for pid in pids]
            results["training"] = t
            print(
                f"Train x{args.train}: {t['finished']} finished, {t['told_queued']} told they were queued, "
                f"{t['refused_queue_full']} refused (queue full), errors {len(t['errors'])}, {t['wall_s']} s",
                flush=True,
            )
            for e in t["errors"][:10]:
                print("   ", e)
    finally:
        stop()
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    bad = any(r["errors"] or r["leaks"] for r in results["rounds"]) or bool(results.get("training", {}).get("errors"))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
