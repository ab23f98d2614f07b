"""Why a bucketed relative bias fails Flip-Flop (issue 39): do its buckets merge the last two writes?

A read must return the bit of the *latest* write. A model whose only positional signal is a bias per
distance *bucket* (T5's: one bucket per distance up to E, then logarithmic buckets shared by ever
wider ranges of distances) cannot tell two writes apart by position when both fall in one bucket;
its bias then pulls equally towards the latest write and the one before it. Measured on the shipped
Flip-Flop checkpoints on the in-distribution test strings (lab/disjoint.py), per read with at least
two earlier writes; the bucket cells only for encodings whose attention layers bucket distances (an
encoder with a `buckets` method, e.g. encoders/t5.py), the rest for every encoding as a reference:

    merged      bucket(distance to the latest write's bit) == bucket(distance to the previous one's),
                distances from the query (the `r` token, whose output predicts the read bit)
    conflict    the two writes wrote different bits (only then can confusing them cost an answer)
    error %     of reads, per (merged, conflict) cell and per seed
    attention   the mean attention weight the query puts on the latest write's bit and on the
                previous write's bit, per layer (heads averaged and the largest head)

Nothing here trains; assets/toy/bucket_probe.json is what the page reads.

    python -m lab.bucket_probe          # (also run by `python -m lab.regenerate toy`)
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from lab.shipped import SEEDS, TOY_DIR, run_stem
from lab.train import load, predict, test_sets

TASK = "flipflop"
OUT = "bucket_probe.json"


def bucketed(encoding: str, directory: Path = TOY_DIR) -> bool:
    """Whether a shipped checkpoint's attention layers bucket distances."""
    path = directory / f"{run_stem(TASK, encoding, SEEDS[0])}.safetensors"
    if not path.exists():
        return False
    model, _ = load(path)
    blocks: Any = model.blocks
    return callable(getattr(blocks[0].attn.encoder, "buckets", None))


def reads(tokens: np.ndarray, answer: np.ndarray) -> list[tuple[int, int, int, int, bool]]:
    """(row, query position, latest write's bit position, previous write's bit position, bits differ)
    for every read with at least two earlier writes. The read's bit sits at 2m + 1, predicted from the
    `r` token at 2m; a write's bit at 2w + 1."""
    out = []
    for b in range(tokens.shape[0]):
        writes: list[int] = []
        for m in range(tokens.shape[1] // 2):
            op = int(tokens[b, 2 * m])
            if op == 0:
                writes.append(2 * m + 1)
            elif op == 1 and answer[b, 2 * m + 1] and len(writes) >= 2:
                last, prev = writes[-1], writes[-2]
                out.append((b, 2 * m, last, prev, bool(tokens[b, last] != tokens[b, prev])))
    return out


@torch.no_grad()
def measure(model: Any, batch: Any) -> dict[str, Any]:
    """One checkpoint on the test strings: reads and errors with one earlier write and with two or
    more; per layer and head, the mean attention weight a read's query puts on the latest write's bit
    and on the previous write's; for a bucketing encoder, the (merged, conflict) cells."""
    enc = model.blocks[0].attn.encoder
    n = batch.tokens.shape[1]
    pos = torch.arange(n)
    bucket = enc.buckets(pos, pos, True).numpy() if callable(getattr(enc, "buckets", None)) else None  # (i, j)
    wrong = (predict(model, batch) != batch.tokens) & batch.answer
    _, results = model(torch.from_numpy(batch.tokens), return_attention=True)
    weights = np.stack([r.weights.numpy() for r in results], axis=1)  # (b, L, h, i, j)
    rd = reads(batch.tokens, batch.answer)
    rows = np.array([x[0] for x in rd])
    q = np.array([x[1] for x in rd])
    last = np.array([x[2] for x in rd])
    prev = np.array([x[3] for x in rd])
    differ = np.array([x[4] for x in rd])
    bad = wrong[rows, q + 1]
    on_last = weights[rows, :, :, q, last]  # (reads, L, h)
    on_prev = weights[rows, :, :, q, prev]
    out: dict[str, Any] = {
        "reads_two_writes": len(rd),
        "errors_two_writes": int(bad.sum()),
        "attention_latest": np.round(on_last.mean(0), 4).tolist(),  # (L, h)
        "attention_previous": np.round(on_prev.mean(0), 4).tolist(),
    }
    one = [
        (b, 2 * m)
        for b in range(len(batch))
        for m in range(n // 2)
        if batch.answer[b, 2 * m + 1] and (batch.tokens[b, : 2 * m : 2] == 0).sum() == 1
    ]
    out["reads_one_write"] = len(one)
    out["errors_one_write"] = int(sum(wrong[b, i + 1] for b, i in one))
    out["distance_latest_median"] = float(np.median(q - last))
    if bucket is not None:
        # The learned bias over every distance in the strings (query at the last position), per head.
        bias = enc.bias(torch.from_numpy(bucket[n - 1 :, :]))[0, :, 0, :].numpy()  # (h, j)
        out["bias_range"] = np.round(bias.max(1) - bias.min(1), 4).tolist()  # (h,) logits
        merged = bucket[q, last] == bucket[q, prev]
        out["cells"] = {
            f"{'merged' if m else 'separate'}/{'conflict' if c else 'agree'}": {
                "reads": int((sel := (merged == m) & (differ == c)).sum()),
                "errors": int(bad[sel].sum()),
            }
            for m in (True, False)
            for c in (True, False)
        }
    return out


def bucket_table(model: Any, n: int) -> list[dict[str, int]]:
    """The bucket of every causal distance 0 … n − 1: [{bucket, lo, hi}] (distances lo … hi)."""
    enc = model.blocks[0].attn.encoder
    b = enc.buckets(torch.tensor([n - 1]), torch.arange(n), True)[0].numpy()[::-1]  # distance d → bucket
    out: list[dict[str, int]] = []
    for d, k in enumerate(b.tolist()):
        if out and out[-1]["bucket"] == k:
            out[-1]["hi"] = d
        else:
            out.append({"bucket": int(k), "lo": d, "hi": d})
    return out


def run(directory: Path = TOY_DIR, encodings: tuple[str, ...] | None = None) -> dict[str, Any]:
    from lab.shipped import shipped_encodings

    t0 = time.thread_time()
    out: dict[str, Any] = {"task": TASK, "split": "id", "encodings": {}}
    for enc in encodings or shipped_encodings(directory):
        if not (directory / f"{run_stem(TASK, enc, SEEDS[0])}.safetensors").exists():
            continue
        seeds = []
        for seed in SEEDS:
            model, cfg = load(directory / f"{run_stem(TASK, enc, seed)}.safetensors")
            batch = test_sets(cfg)["id"]
            seeds.append({"seed": seed, **measure(model, batch)})
        entry: dict[str, Any] = {"seeds": seeds}
        if bucketed(enc, directory):
            model, _ = load(directory / f"{run_stem(TASK, enc, SEEDS[0])}.safetensors")
            entry["buckets"] = bucket_table(model, batch.tokens.shape[1])
        out["encodings"][enc] = entry
    out["cpu_seconds"] = round(time.thread_time() - t0, 1)
    (directory / OUT).write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    torch.set_num_threads(1)
    r = run()
    for enc, v in r["encodings"].items():
        for s in v["seeds"]:
            print(
                enc,
                s["seed"],
                s.get("cells"),
                s["errors_one_write"],
                s["reads_one_write"],
                s["errors_two_writes"],
                s["reads_two_writes"],
                np.max(s["attention_latest"]),
                np.max(s["attention_previous"]),
            )
    print("CPU s", r["cpu_seconds"])
