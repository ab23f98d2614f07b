"""Server time per control, for every control of every chapter: a script, not a test.

    python tools/bench_controls.py [--repeats 3] [--only rope,alibi] [--proofs open|closed]
                                   [--out bench_results/controls.json]

Starts its own server on 127.0.0.1 (tests/support/browser.py) and talks to it as a browser does, through
Streamlit's websocket protocol (tools/classroom_load.Session): it opens each chapter, then moves
every control the page itself shows (the sidebar's are the frame's: see SKIP) — each slider and
select-slider to its maximum and back to its minimum, each checkbox and toggle both ways, each
selectbox and radio to another option, each number input one step, each multiselect to another
choice of as many options and back, each button once (except the toy lab's Train), each proof's
expander closed and opened again — and times the rerun that input causes, from sending it to the
server's "script finished". A chapter's proofs (ui.derivation.proof) run only while open, so the
page is first opened with every proof open, and every control is timed on that page: the inputs of
a proof's numbers panel are controls too.
That is the worst case; --proofs closed times the page as a learner first sees it (proofs closed,
each proof's expander timed opening).
A control inside an st.fragment reruns only its fragment, exactly as in a browser; every other
control reruns the page. A control inside an st.form is not
timed: a browser sends nothing when it moves (only the form's submit button reruns the page).

Reported per page: its controls, how many live in a fragment, a full rerun with nothing changed,
and the median and worst control; then the median over all controls of all pages and the worst.
What it measures is the server's side (script run + sending the deltas over loopback), not the
browser's drawing: tools/bench.py and the browser benchmark measure that.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402

from tests.support.browser import start_server, stop_server  # noqa: E402
from tools.classroom_load import Session, connect  # noqa: E402
from ui.chapters import CHAPTERS  # noqa: E402

# Not timed here: the toy lab's Train (minutes of training, not an interaction) and the sidebar's
# controls, which belong to the frame, rerun every page alike, and two of which leave the page (a
# lesson opens its own chapter, presenter mode relayouts everything); tools/bench.py times a new
# sentence ("new text") on every page.
SKIP = ("toy_train_go", "-sentence", "-seed", "-example", "-presenter", "-lesson")

KINDS = ("slider", "checkbox", "selectbox", "radio", "number_input", "multiselect", "button", "expander")
PROOF = "__proof"  # the key suffix of a chapter's proof expander (ui.derivation.proof)


def settings(kind: str, p: Any, proofs_open: bool = True, current: list[str] | None = None) -> list[WidgetState]:
    """The values one control is moved through (each a different value from the one before)."""
    wid = p.id
    out = []
    if kind == "slider" and p.type == p.SELECT_SLIDER:  # a select-slider sends its options' labels
        first, last = p.options[0], p.options[-1]
        for v in (last, first):
            s = WidgetState(id=wid)
            s.string_array_value.data.extend([first, v] if len(p.default) == 2 else [v])
            out.append(s)
    elif kind == "slider":
        lo, hi = p.min, p.max
        for v in (hi, lo):
            s = WidgetState(id=wid)
            s.double_array_value.data.extend([lo, v] if len(p.default) == 2 else [v])
            out.append(s)
    elif kind == "expander":  # away from the page's state and back: open proofs closed, closed opened
        out = [WidgetState(id=wid, bool_value=not proofs_open), WidgetState(id=wid, bool_value=proofs_open)]
    elif kind == "checkbox":
        out = [WidgetState(id=wid, bool_value=not p.default), WidgetState(id=wid, bool_value=bool(p.default))]
    elif kind in ("selectbox", "radio") and len(p.options) > 1:
        idx = int(p.default) if p.HasField("default") else 0
        other = p.options[(idx + 1) % len(p.options)]
        out = [WidgetState(id=wid, string_value=other), WidgetState(id=wid, string_value=p.options[idx])]
    elif kind == "number_input":
        step = p.step or 1
        v = p.default if p.HasField("default") else (p.min if p.has_min else 0)
        nxt = v + step if not p.has_max or v + step <= p.max else v - step
        out = [WidgetState(id=wid, double_value=nxt), WidgetState(id=wid, double_value=v)]
    elif kind == "multiselect" and len(p.options):
        # Another choice of as many options (the current last one swapped for one it lacks), then
        # the current choice again: a page that needs a minimum (the attention lab's two
        # encodings) keeps showing the controls timed after this one. A value set through session
        # state is sent (raw_values) only in the run that set it: bench_page keeps it from there.
        if current is None:
            current = list(p.raw_values) if p.set_value else [p.options[i] for i in p.default]
        others = [o for o in p.options if o not in current]
        chosen = current[:-1] + others[:1] if current and others else list(p.options[:1])
        for picked in (chosen, current):
            s = WidgetState(id=wid)
            s.string_array_value.data.extend(picked)
            out.append(s)
    elif kind == "button":
        out = [WidgetState(id=wid, trigger_value=True)]
    return out


def form_of(p: Any) -> str:
    """The form a control sits in ("" for none; an expander is never in one here)."""
    return str(p.form_id) if "form_id" in p.DESCRIPTOR.fields_by_name else ""


class Bench(Session):
    def _see_block(self, block, fragment: str = "") -> None:
        if block.WhichOneof("type") == "expandable" and block.expandable.id.endswith(PROOF):
            self.elements[block.expandable.id] = ("expander", block.expandable)
            if fragment:
                self.fragment_of[block.expandable.id] = fragment

    def _see(self, el, fragment: str = "") -> None:
        super()._see(el, fragment)
        kind = el.WhichOneof("type")
        if kind in ("radio", "multiselect"):
            self.elements[getattr(el, kind).id] = (kind, getattr(el, kind))
            if fragment:
                self.fragment_of[getattr(el, kind).id] = fragment


async def bench_page(s: Bench, ws, path: str, repeats: int, proofs_open: bool = True) -> dict:
    page_hash = s.pages.get(path, "")
    s.widgets = {}
    await s.run_script(ws, page_hash)
    chosen = {wid: list(p.raw_values) for wid, (kind, p) in s.elements.items() if kind == "multiselect" and p.set_value}
    # Every proof open, as the page's defaults here (see the docstring); or, with --proofs closed, the
    # page as a learner first sees it.
    opened = {
        wid: WidgetState(id=wid, bool_value=True)
        for wid, (kind, _) in s.elements.items()
        if kind == "expander" and proofs_open
    }
    if opened:
        s.widgets = dict(opened)
        await s.run_script(ws)
    full = [await s.run_script(ws) for _ in range(repeats)]
    # A control inside an st.form sends nothing when moved: a browser reruns the page only at the
    # form's submit button (SKIP: the toy lab's Train). Timing it alone would time a rerun no learner
    # causes, so it is counted apart.
    shown = [(wid, kind, p) for wid, (kind, p) in s.elements.items() if kind in KINDS]
    in_form = len([p for _, _, p in shown if form_of(p)])
    controls = [(wid, kind, p) for wid, kind, p in shown if not any(k in wid for k in SKIP) and not form_of(p)]
    times: dict[str, list[float]] = {}
    kept: dict[str, WidgetState] = {}
    in_fragment = 0
    for wid, kind, p in controls:
        if wid not in s.elements:  # gone after an earlier control changed the page
            continue
        fragment = s.fragment_of.get(wid, "")
        in_fragment += bool(fragment)
        # the user key is everything after the id's hash ("$$ID-<hash>-<key>"); it may hold dashes
        # itself (a proof's derivation ids do). A widget without a key is "<kind>:None", so a name
        # already taken gets a number: no control's times overwrite another's
        name = f"{kind}:{wid.split('-', 2)[-1]}"
        if name in times:
            name += f"#{len(times)}"
        samples = []
        seen_errors = len(s.errors)
        for _ in range(repeats):
            for state in settings(kind, p, proofs_open, chosen.get(wid)):
                s.widgets[wid] = state
                samples.append(await s.run_script(ws, fragment=fragment))
                if kind == "button":  # a trigger is sent once, then forgotten, as a browser does
                    s.widgets.pop(wid, None)
            if not samples:
                break
        s.errors[seen_errors:] = [f"{name}: {e}" for e in s.errors[seen_errors:]]  # say which control
        if samples:
            times[name] = samples
        # back to the page's defaults before the next control, so each is timed on the default page;
        # a multiselect's choice is sent again (its last setting is the page's own): without it,
        # the server took it as empty and the attention lab stopped at "pick two encodings"
        if kind == "multiselect" and samples:
            kept[wid] = settings(kind, p, proofs_open, chosen.get(wid))[-1]
        s.widgets = {**opened, **kept}
        await s.run_script(ws)
    medians = {k: statistics.median(v) for k, v in times.items()}
    worst = max(medians, key=lambda k: medians[k]) if medians else None
    return {
        "controls": len(medians),
        "in_fragment": in_fragment,
        "in_form": in_form,
        "full_rerun_s": statistics.median(full),
        "median_s": statistics.median(medians.values()) if medians else None,
        "worst": worst,
        "worst_s": medians[worst] if worst else None,
        "per_control_median_s": medians,
        "errors": list(s.errors),
    }


async def run(url: str, paths: list[str], repeats: int, proofs_open: bool = True) -> dict:
    s = Bench(n=0, url=url, timeout=120.0)
    out = {}
    async with connect(s) as ws:
        await s.run_script(ws, "")
        for path in paths:
            s.errors = []
            out[path] = await bench_page(s, ws, path, repeats, proofs_open)
            r = out[path]
            print(
                f"{path:16s} {r['controls']:3d} controls ({r['in_fragment']:2d} in fragments, {r['in_form']} in forms "
                "not timed)  full rerun "
                f"{r['full_rerun_s'] * 1e3:6.0f} ms  control median {(r['median_s'] or 0) * 1e3:6.0f} ms  "
                f"worst {(r['worst_s'] or 0) * 1e3:6.0f} ms ({r['worst']})"
                + (f"  ERRORS {r['errors']}" if r["errors"] else ""),
                flush=True,
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated chapter keys (default: all)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench_results" / "controls.json")
    ap.add_argument(
        "--proofs",
        choices=("open", "closed"),
        default="open",
        help="open (default): every proof open, the worst case; closed: the page as a learner first sees it",
    )
    args = ap.parse_args()
    paths = [c.key for c in CHAPTERS if not args.only or c.key in args.only.split(",")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    proc, url, _ = start_server(args.out.parent / "controls-server.log")
    try:
        t0 = time.perf_counter()
        pages = asyncio.run(run(url, paths, args.repeats, proofs_open=args.proofs == "open"))
    finally:
        stop_server(proc)
    every = [v for p in pages.values() for v in p["per_control_median_s"].values()]
    worst_page = max(pages, key=lambda k: pages[k]["worst_s"] or 0)
    summary = {
        "controls": len(every),
        "median_s": statistics.median(every) if every else None,
        "worst_s": pages[worst_page]["worst_s"],
        "worst": f"{worst_page} {pages[worst_page]['worst']}",
        "errors": sum(len(p["errors"]) for p in pages.values()),
        "proofs": args.proofs,
    }
    print(
        f"\nall pages, proofs {args.proofs}: {summary['controls']} controls, median "
        f"{summary['median_s'] * 1e3:.0f} ms, worst {summary['worst_s'] * 1e3:.0f} ms ({summary['worst']}), "
        f"errors {summary['errors']}; "
        f"load average {load_before[0]:.1f} → {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        f"{time.perf_counter() - t0:.0f} s"
    )
    args.out.write_text(
        json.dumps(
            {"summary": summary, "pages": pages, "machine": platform.machine(), "load_before": load_before}, indent=1
        )
    )


if __name__ == "__main__":
    main()
