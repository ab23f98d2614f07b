"""Time every chapter: a script, not a test.

    python tools/bench.py [--repeats 3] [--only key1,key2] [--no-browser] [--out bench_results/bench.json]

Under AppTest (in process, through the app's frame, exactly as tests/helpers.open_page runs a page),
for every chapter in ui.chapters.CHAPTERS:

  first       the page's first run with empty st.cache_data / st.cache_resource (a fresh server's
              first visitor; module imports are already paid, they are per process)
  rerun       a rerun with nothing changed (every cached call hits)
  new text    a rerun after the learner types a new sentence (sentence-keyed calls miss)
  max first   the first run at maximum sizes: every slider (at.slider, at.select_slider) at its
              maximum and a 256-token sentence (the most any page draws)
  max rerun   a rerun at maximum sizes, nothing changed
  max text    a rerun at maximum sizes after typing another 256-token sentence

Medians over --repeats runs. Then, in a real browser (Debian chromium), the server's first full
render of the default page (cold server: imports included) and of a later session.
Writes bench_results/bench.json (git-ignored) with every sample and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)

import streamlit as st  # noqa: E402

from tests.helpers import chart_elements, errors, open_page  # noqa: E402
from tests.support.browser import CHROMIUM_ARGS, RENDERED_JS, TRACK_RUNS_JS, start_server, stop_server  # noqa: E402
from tests.support.sizes import figure_bytes, long_sentence, set_sliders_to_max  # noqa: E402
from ui import cache  # noqa: E402
from ui.chapters import CHAPTERS  # noqa: E402

COLUMNS = ["first", "rerun", "new text", "max first", "max rerun", "max text"]


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def clear_caches() -> None:
    cache.clear_all()


def bench_chapter(chapter, repeats: int) -> dict:
    samples: dict[str, list[float]] = {c: [] for c in COLUMNS}
    problems: list[str] = []
    info: dict = {}
    for r in range(repeats):
        at = open_page(None)  # the frame and the default page, untimed
        clear_caches()
        samples["first"].append(timed(lambda at=at: at.switch_page(chapter.path).run()))
        problems += [f"default: {e}" for e in errors(at)]
        samples["rerun"].append(timed(at.run))
        box = at.text_area(key="sentence")
        samples["new text"].append(
            timed(lambda box=box, r=r: box.input(f"A new sentence number {r} for the bench").run())
        )
        info["figures default"] = len(chart_elements(at))
        info["KB default"] = round(figure_bytes(at) / 1024)

        # Maximum sizes: sliders first (some appear only for some settings: two passes), then
        # the longest sentence any page draws.
        moved = set_sliders_to_max(at)
        at.text_area(key="sentence").input(long_sentence(f"m{r}x"))
        samples["max first"].append(timed(at.run))
        moved2 = set_sliders_to_max(at)
        if moved2 != moved:
            samples["max first"][-1] += timed(at.run)
        problems += [f"max ({', '.join(moved2)}): {e}" for e in errors(at)]
        samples["max rerun"].append(timed(at.run))
        box = at.text_area(key="sentence")
        samples["max text"].append(timed(lambda box=box, r=r: box.input(long_sentence(f"t{r}y")).run()))
        problems += [f"max, new text: {e}" for e in errors(at)]
        info["sliders at max"] = moved2
        info["figures max"] = len(chart_elements(at))
        info["KB max"] = round(figure_bytes(at) / 1024)
    medians = {c: statistics.median(v) for c, v in samples.items()}
    return {
        "key": chapter.key,
        "path": chapter.path,
        "median_s": medians,
        "samples_s": samples,
        **info,
        "problems": sorted(set(problems)),
    }


# --- the browser part -------------------------------------------------------------------------


def bench_browser(repeats: int, out_dir: Path) -> dict:
    from playwright.sync_api import sync_playwright

    samples: dict[str, list[float]] = {
        "health": [],
        "first render (cold server)": [],
        "later session, new browser profile": [],
        "later session, browser cache warm": [],
    }
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for _ in range(repeats):
            proc, url, health = start_server(out_dir / "bench-server.log")
            try:
                samples["health"].append(health)
                # A fresh context is a first-time visitor (plotly's and KaTeX's code not cached);
                # a second tab in the same context is a returning one.
                for names in (
                    ["first render (cold server)"],
                    ["later session, new browser profile", "later session, browser cache warm"],
                ):
                    context = browser.new_context(viewport={"width": 1280, "height": 1000})
                    for name in names:
                        page = context.new_page()
                        page.add_init_script(TRACK_RUNS_JS)
                        t = time.perf_counter()
                        page.goto(url + "/")
                        page.wait_for_function(RENDERED_JS, arg=1, polling=20, timeout=180_000)
                        samples[name].append(time.perf_counter() - t)
                        page.close()
                    context.close()
            finally:
                stop_server(proc)
        browser.close()
    return {
        "page": "/ (" + CHAPTERS[0].key + ")",
        "median_s": {k: statistics.median(v) for k, v in samples.items()},
        "samples_s": samples,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated chapter keys (default: all)")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "bench_results" / "bench.json"))
    args = ap.parse_args()

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    chapters = [c for c in CHAPTERS if not args.only or c.key in args.only.split(",")]
    load_before = os.getloadavg()
    t_all = time.perf_counter()
    open_page(None)  # imports (torch, …) are per process: pay them before timing anything
    rows = []
    print(f"{'chapter':<16}" + "".join(f"{c:>11}" for c in COLUMNS) + f"{'figs':>6}{'KB max':>8}  problems")
    for chapter in chapters:
        row = bench_chapter(chapter, args.repeats)
        rows.append(row)
        print(
            f"{chapter.key:<16}"
            + "".join(f"{row['median_s'][c]:>10.3f}s" for c in COLUMNS)
            + f"{row['figures default']:>6}{row['KB max']:>8}  "
            + ("; ".join(row["problems"]) or "-"),
            flush=True,
        )
    result = {
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_before": load_before,
            "load_avg_after_apptest": os.getloadavg(),
        },
        "versions": {"streamlit": st.__version__},
        "repeats": args.repeats,
        "apptest": rows,
        "apptest_wall_s": time.perf_counter() - t_all,
    }
    try:
        import torch

        result["versions"]["torch"] = torch.__version__
    except ImportError:
        pass
    if not args.no_browser:
        b = bench_browser(args.repeats, out.parent)
        result["browser"] = b
        print(
            "\nbrowser, default page " + b["page"] + ": " + ", ".join(f"{k} {v:.2f}s" for k, v in b["median_s"].items())
        )
    result["machine"]["load_avg_after"] = os.getloadavg()
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(
        f"\nmedians of {args.repeats}; load average {load_before[0]:.1f} → {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores; wrote {out}"
    )


if __name__ == "__main__":
    main()
