"""Server time of the SmolLM2 chapter per new sentence, after warm-up (issue 40: ≤ 1 s for every head of
a layer and the readout at up to 256 tokens). A benchmark, not a test: it prints, it asserts nothing.

    .venv/bin/python tools/bench_smollm2.py [--repeats 3] [--tokens 16 64 256] [--threads 1]

Loads the model once (and says how long that took), then for each length runs, on sentences it has not
seen, what the page computes for a new sentence, in the page's order, with nothing cached:
    heads+readout  pieces → overview (the forward pass, the readout, the sinks) → layer_heads (one layer)
    shift          shift_test at the page's default shift (a second forward pass over the first
                   SHIFT_TOKENS tokens, and MiniLM twice): run on Reveal, or with a new sentence once
                   the learner has revealed the shift question
    frequencies    pair_usage (the per-pair sizes, from the kept forward pass)
"new sentence" is what every new sentence costs (heads+readout and frequencies), "revealed" adds the
shift. Median over --repeats sentences per length; the load average is printed beside (the machine
is shared).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from explain.chapters import smollm2 as ch
from models import smollm2 as smol

WORDS = [
    "the",
    "model",
    "reads",
    "every",
    "token",
    "of",
    "this",
    "sentence",
    "and",
    "attends",
    "to",
    "some",
    "of",
    "them",
    "more",
    "than",
    "others",
]


def sentence(n_tokens: int, seed: int) -> str:
    """An English text of about n_tokens tokens, different for every seed (so nothing is cached)."""
    out = []
    k = seed
    while True:
        out.append(WORDS[k % len(WORDS)])
        k = (k * 7 + 3) % 1009
        text = f"{seed}: " + " ".join(out)
        if len(smol.encode(text, 10_000)[0]) >= n_tokens:
            return text


def clear() -> None:
    for fn in (ch.pieces, ch.overview, ch.layer_heads, ch.shift_test, ch.pair_usage):
        getattr(fn, "cache_clear", lambda: None)()
    ch.clear_forwards()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tokens", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's own choice)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch threads: {torch.get_num_threads()}")
    t0 = time.perf_counter()
    smol.load()
    print(f"load: {time.perf_counter() - t0:.1f} s (load average {os.getloadavg()[0]:.1f})")
    ch.facts()
    ch.frequencies()
    ch.pair_usage(ch.REFERENCE)  # the shipped paragraph: once per process, as on a server
    ch.shift_test("warm-up", 1)  # MiniLM loaded, torch's kernels warmed
    for n in args.tokens:
        parts: dict[str, list[float]] = {"heads+readout": [], "shift": [], "frequencies": []}
        for r in range(args.repeats):
            text = sentence(n, 1000 * n + r)
            clear()
            t = time.perf_counter()
            ch.pieces(text)
            ch.overview(text)
            ch.layer_heads(text, 1)
            parts["heads+readout"].append(time.perf_counter() - t)
            t = time.perf_counter()
            ch.shift_test(text, ch.DEFAULT_SHIFT)
            parts["shift"].append(time.perf_counter() - t)
            t = time.perf_counter()
            ch.pair_usage(text)
            parts["frequencies"].append(time.perf_counter() - t)
        med = {k: statistics.median(v) for k, v in parts.items()}
        line = ", ".join(f"{k} {v:.2f} s" for k, v in med.items())
        new_sentence = med["heads+readout"] + med["frequencies"]
        print(
            f"{n} tokens: {line}; new sentence {new_sentence:.2f} s, revealed {new_sentence + med['shift']:.2f} s "
            f"(load average {os.getloadavg()[0]:.1f})"
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process (model, MiniLM, torch): {rss:.0f} MB")


if __name__ == "__main__":
    main()
