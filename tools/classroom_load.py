"""A classroom at once: N learners on one PE Atlas server, each typing and clicking as a browser would.

    python tools/classroom_load.py --sessions 10 30 --actions 12 --out bench_results/load.json

Starts its own server on 127.0.0.1 (stopped by its PID at the end), then drives N concurrent
sessions straight through Streamlit's websocket protocol — the same BackMsg/ForwardMsg protobufs the
browser sends and receives — so 30 learners cost the client almost nothing and the figures measure
the server, not 30 Chromiums fighting for 2 cores. Each session:

  1. opens the app (the default chapter) and types its own sentence, which carries a marker only it
     knows ("zqv017x" for session 17);
  2. then, `--actions` times: switches to a chapter (round robin, offset per session), moves one of
     that chapter's sliders, or types a new sentence (again with its marker).

Measured: for every action, the time from sending the input to the server's "script finished"
(the page is updated: every delta of the run has arrived); p50 and p95 per N. Errors: exception
elements, st.error alerts, runs that never finish (timeout), connection failures — must be 0.
Isolation: every byte any session receives is searched for other sessions' markers — must never
match. Server memory: peak RSS of the server process (VmHWM). Everything is bounded: sessions ≤ 60,
actions ≤ 50, each wait ≤ --timeout seconds.

Optionally (--train N) N sessions at once press "Train" in the toy-task lab: one must run, the
others must be told they are queued, and nothing may crash.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402  (a dependency of streamlit itself)
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402
from websockets.typing import Subprotocol  # noqa: E402

from tools.browser import start_server, stop_server  # noqa: E402

MARKER = re.compile(rb"zqv(\d{3})x")
SENTENCES = (
    "The cat sat on the mat with {m} today.",
    "{m} reads every word in order, then backwards.",
    "고양이가 {m} 위에 앉았다. 강아지가 통나무 위에 앉았다.",
    "a a a {m} b a a a b b",
    "Attention compares {m} with every other word at once; positions put the order back.",
)


@dataclass
class Session:
    n: int
    url: str
    timeout: float
    times: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    leaks: set[int] = field(default_factory=set)
    seen_own: bool = False  # did our own marker ever come back? If not, the leak check is blind
    pages: dict[str, str] = field(default_factory=dict)  # url path → page_script_hash
    page_hash: str = ""
    widgets: dict[str, WidgetState] = field(default_factory=dict)  # id → state we send back
    elements: dict[str, tuple[str, Any]] = field(default_factory=dict)  # widget id → (kind, proto), this run
    texts: list[str] = field(default_factory=list)  # info/warning texts of the last run

    @property
    def marker(self) -> str:
        return f"zqv{self.n:03d}x"

    async def run_script(self, ws, page_hash: str | None = None) -> float:
        """Send one rerun (as the browser does after any input) and wait for its end."""
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = ""
        cs.page_script_hash = page_hash if page_hash is not None else self.page_hash
        cs.widget_states.widgets.extend(self.widgets.values())
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
                self._see(fm.delta.new_element)
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(fm.script_finished)
                if status == "FINISHED_EARLY_FOR_RERUN":
                    continue
                if status != "FINISHED_SUCCESSFULLY":
                    self.errors.append(f"run ended {status}")
                return time.perf_counter() - t0
            elif kind == "page_not_found":
                self.errors.append("page not found")

    def _see(self, el) -> None:
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

    def widget(self, kind: str, suffix: str):
        for wid, (k, proto) in self.elements.items():
            if k == kind and wid.endswith(suffix):
                return wid, proto
        return None, None

    def type_sentence(self, k: int) -> None:
        wid, _ = self.widget("text_area", "sentence")
        if wid is None:
            self.errors.append("no sentence box on the page")
            return
        text = SENTENCES[(self.n + k) % len(SENTENCES)].format(m=self.marker)
        self.widgets[wid] = WidgetState(id=wid, string_value=text)

    def move_a_slider(self, k: int) -> bool:
        sliders = [
            (wid, p)
            for wid, (kind, p) in self.elements.items()
            if kind == "slider" and p.type == p.SLIDER and len(p.default) == 1
        ]
        if not sliders:
            return False
        wid, p = sliders[(self.n + k) % len(sliders)]
        v = p.min + (p.max - p.min) * (((self.n * 7 + k * 3) % 11) / 10)
        if p.step:  # a browser's slider only lands on its steps (e.g. even d on Sinusoidal)
            v = min(p.max, p.min + round((v - p.min) / p.step) * p.step)
        if p.data_type == p.INT:
            v = round(v)
        state = WidgetState(id=wid)
        state.double_array_value.data.append(v)
        self.widgets[wid] = state
        return True


async def one_learner(s: Session, actions: int, paths: list[str]) -> None:
    ws_url = s.url.replace("http://", "ws://") + "/_stcore/stream"
    try:
        async with websockets.connect(
            ws_url, subprotocols=[Subprotocol("streamlit")], max_size=2**28, open_timeout=s.timeout
        ) as ws:
            await s.run_script(ws, "")  # the first load, as a fresh tab does
            s.type_sentence(0)
            s.times.append(await s.run_script(ws))
            for k in range(actions):
                what = k % 3
                if what == 0:  # switch chapter
                    path = paths[(s.n + k) % len(paths)]
                    s.times.append(await s.run_script(ws, s.pages.get(path, "")))
                elif what == 1 and s.move_a_slider(k):
                    s.times.append(await s.run_script(ws))
                else:
                    s.type_sentence(k)
                    s.times.append(await s.run_script(ws))
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
    ws_url = s.url.replace("http://", "ws://") + "/_stcore/stream"
    try:
        async with websockets.connect(
            ws_url, subprotocols=[Subprotocol("streamlit")], max_size=2**28, open_timeout=s.timeout
        ) as ws:
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


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))] if xs else float("nan")


async def classroom(url: str, n: int, actions: int, timeout: float, paths: list[str]) -> dict:
    sessions = [Session(k, url, timeout) for k in range(n)]
    t0 = time.perf_counter()
    await asyncio.gather(*(one_learner(s, actions, paths) for s in sessions))
    times = [t for s in sessions for t in s.times]
    return {
        "sessions": n,
        "actions": len(times),
        "wall_s": round(time.perf_counter() - t0, 1),
        "p50_ms": round(1000 * statistics.median(times), 1) if times else None,
        "p95_ms": round(1000 * percentile(times, 0.95), 1) if times else None,
        "max_ms": round(1000 * max(times), 1) if times else None,
        "errors": [f"session {s.n}: {e}" for s in sessions for e in s.errors],
        "leaks": sorted({(s.n, other) for s in sessions for other in s.leaks}),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, nargs="+", default=[10, 30], help="N per round, each ≤ 60")
    ap.add_argument("--actions", type=int, default=12, help="inputs per session after the first (≤ 50)")
    ap.add_argument("--timeout", type=float, default=120.0, help="longest wait for one run, seconds")
    ap.add_argument("--train", type=int, default=0, help="then N sessions press Train in the toy lab at once (≤ 30)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench_results" / "load.json")
    args = ap.parse_args()
    if any(not 1 <= n <= 60 for n in args.sessions) or not 1 <= args.actions <= 50:
        ap.error("sessions must be 1–60 and actions 1–50")
    from ui.chapters import CHAPTERS

    paths = [c.key for c in CHAPTERS]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    proc, url, boot = start_server(args.out.with_suffix(".server.log"))
    results: dict[str, Any] = {"server_boot_s": round(boot, 2), "rounds": []}
    try:
        asyncio.run(classroom(url, 1, 2, args.timeout, paths))  # warm-up: imports, first caches
        for n in args.sessions:
            r = asyncio.run(classroom(url, n, args.actions, args.timeout, paths))
            r["server_peak_rss_mb"] = round(peak_rss_mb(proc.pid), 1)
            results["rounds"].append(r)
            print(
                f"N={n}: {r['actions']} inputs in {r['wall_s']} s; p50 {r['p50_ms']} ms, "
                f"p95 {r['p95_ms']} ms, max {r['max_ms']} ms; errors {len(r['errors'])}; "
                f"leaks {len(r['leaks'])}; server peak RSS {r['server_peak_rss_mb']} MB",
                flush=True,
            )
            for e in r["errors"][:10]:
                print("   ", e)
        if 0 < args.train <= 30:
            t = asyncio.run(training_rush(url, args.train, args.timeout))
            t["server_peak_rss_mb"] = round(peak_rss_mb(proc.pid), 1)
            results["training"] = t
            print(
                f"Train x{args.train}: {t['finished']} finished, {t['told_queued']} told they were queued, "
                f"{t['refused_queue_full']} refused (queue full), errors {len(t['errors'])}, {t['wall_s']} s",
                flush=True,
            )
            for e in t["errors"][:10]:
                print("   ", e)
    finally:
        stop_server(proc)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    bad = any(r["errors"] or r["leaks"] for r in results["rounds"]) or bool(results.get("training", {}).get("errors"))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
