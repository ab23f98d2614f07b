"""Does the server's memory stay bounded? A script, not a test.

    python tools/memory_probe.py [--sentences 500] [--out bench_results/memory.json]

Starts its own server on 127.0.0.1, then one learner (Streamlit's websocket protocol, as
tools/classroom_load.py speaks it) types `--sentences` distinct sentences, one per chapter in turn
through all the chapters, every tenth of them 256 tokens long — so every page's sentence-keyed
caches fill with entries nobody will ask for again. The server's resident memory (VmRSS) is read
after every 25 sentences. The caches are bounded (ui/cache.py: every cache has max_entries), so
the curve must flatten: the script prints the curve and the growth over its last half.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402

from tests.support.browser import start_server, stop_server  # noqa: E402
from tools.classroom_load import Session, connect  # noqa: E402
from ui.chapters import CHAPTERS  # noqa: E402


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def sentence(k: int) -> str:
    if k % 10 == 9:
        return " ".join(f"w{k}x{j}" for j in range(256))
    return f"Sentence number {k} puts word {k % 7} before word {k % 11}, then {k * 3} after it."


async def probe(url: str, pid: int, n: int) -> list[tuple[int, float]]:
    s = Session(n=0, url=url, timeout=300.0)
    curve = [(0, rss_mb(pid))]
    async with connect(s) as ws:
        await s.run_script(ws, "")
        curve = [(0, rss_mb(pid))]
        for k in range(n):
            path = CHAPTERS[k % len(CHAPTERS)].key
            await s.run_script(ws, s.pages.get(path, ""))
            wid, _ = s.widget("text_area", "sentence")
            if wid is None:
                s.errors.append(f"{path}: no sentence box")
                continue
            s.widgets[wid] = WidgetState(id=wid, string_value=sentence(k))
            await s.run_script(ws)
            if (k + 1) % 25 == 0:
                curve.append((k + 1, rss_mb(pid)))
                print(f"{k + 1:4d} sentences: {curve[-1][1]:7.0f} MB", flush=True)
    if s.errors:
        print("errors:", s.errors[:10])
    return curve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=500)
    ap.add_argument("--out", type=Path, default=ROOT / "bench_results" / "memory.json")
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    proc, url, _ = start_server(args.out.parent / "memory-server.log")
    t0 = time.perf_counter()
    try:
        curve = asyncio.run(probe(url, proc.pid, args.sentences))
    finally:
        stop_server(proc)
    half = [mb for k, mb in curve if k >= args.sentences // 2]
    growth = half[-1] - half[0] if len(half) > 1 else float("nan")
    peak = max(mb for _, mb in curve)
    print(
        f"\nRSS after {curve[-1][0]} sentences: {curve[-1][1]:.0f} MB (peak {peak:.0f} MB; growth over the last half "
        f"{growth:+.0f} MB); {time.perf_counter() - t0:.0f} s"
    )
    args.out.write_text(json.dumps({"curve_mb": curve, "peak_mb": peak, "growth_last_half_mb": growth}, indent=1))


if __name__ == "__main__":
    main()
