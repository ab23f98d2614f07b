"""The real-text lab's evidence beyond the length curves (issue 39): the same-bytes comparison,
the scale anchors and T5's far bucket, written to assets/lm/evidence.json.

    python -m lab.regenerate lm_eval                        # everything missing from evidence.json
    python -m lab.lm_eval --encodings alibi cope            # some models only (resumable)

1. Same bytes (DESIGN.md, "Evidence (labs)"). The length curves read non-overlapping windows: a
   longer window has fewer window starts, so fewer bytes are predicted with almost no context —
   a curve can fall without any byte using context past the training length. Here every predicted
   byte g of the first EVAL_BYTES held-out bytes is scored twice by the same model:
   - *capped*: with at most its last 128 bytes of context (a sliding window of the training
     length, as in the ALiBi paper's Appendix B: a window of 128 bytes ends every STRIDE = 8 bytes
     and scores its last 8, so each byte past the first 128 has 121–128 bytes of context);
   - *long*: inside the non-overlapping window of length L′ that holds it (lab.lm.window_bits).
   For the bytes at in-window position ≥ 128 (context longer than the training length) the two
   differ only by the context past 128 bytes: long − capped, averaged per long window, is the
   paired difference; its interval is a bootstrap over the long windows (real_text_stats). Per
   window we also keep the mean over *all* its bytes (what the curve's change mixes in: window
   starts) and the capped score alone (bits per byte with a full 128-byte context everywhere).
   RoPE stretched at inference (PI, NTK, YaRN at s = L′/128) is compared with RoPE capped at 128.
2. Anchors (lab/ngram.py): byte n-grams of orders 1–6 (interpolated modified Kneser-Ney on the
   train split) scored on the same predicted bytes, context cut at the same 128-byte window starts
   as the models' 1× windows and uncut; xz, bz2 and zlib given the train text.
3. T5's far bucket: with 32 causal buckets and max_distance 128, every distance ≥ 113 shares the
   last bucket (one learned bias per head). Per layer and head, the attention mass queries put on
   keys in that bucket, for queries at in-window positions ≥ 896 of 1024-byte windows against the
   last 16 positions of 128-byte windows.

Each model's entry is written as soon as it is done; a rerun skips what evidence.json holds.
torch.set_num_threads(1): the budget is stated per core.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from encoders.attention import TransformerBlock
from encoders.t5 import T5Bias, relative_position_bucket
from lab import corpus as C
from lab import lm, ngram
from lab.model import TinyTransformer

EVIDENCE = "evidence.json"
ORDERS = (1, 2, 3, 4, 5, 6)
# The capped scores advance a 128-byte window by STRIDE bytes (each byte: 121–128 bytes of context);
# stride 1 (exactly 128) costs 8× more: ~10 CPU minutes per model on this machine, CoPE ~20. Checked
# on the first 8,192 held-out bytes (8 windows of 1024): the past-128 difference is 0.0097 at stride 1
# and 0.0103 at stride 8 for ALiBi, 0.0329 and 0.0335 for CoPE — stride 8 errs by ~0.0006 bits per
# byte, against the paired interval's half-width of ~0.002–0.005 over the 64 windows of 65,536 bytes.
STRIDE = 8


@torch.no_grad()
def long_bits(model: torch.nn.Module, data: bytes, length: int, chunk_tokens: int = 8192) -> np.ndarray:
    """−log2 p of every predicted byte in non-overlapping windows of `length` → (w · length,):
    byte index g = w·length + p + 1 at entry w·length + p (context p + 1 bytes)."""
    w = torch.from_numpy(lm.windows(data, length))
    per = max(1, chunk_tokens // length)
    out = []
    for s in range(0, len(w), per):
        batch = w[s : s + per]
        logits = model(batch[:, :-1])  # (c, length, V)
        nll = F.cross_entropy(logits.transpose(1, 2), batch[:, 1:], reduction="none")  # (c, length)
        out.append((nll / lm.LN2).reshape(-1).numpy())
    return np.concatenate(out)


@torch.no_grad()
def capped_bits(
    model: torch.nn.Module, data: bytes, cap: int = lm.TRAIN_LEN, stride: int = 1, batch: int = 64
) -> np.ndarray:
    """−log2 p of every byte of data[1:], each given at most its last `cap` bytes → (len(data) − 1,).
    The first `cap` predictions are one window's (context g bytes); after them a window of `cap`
    bytes ends every `stride` bytes and its last `stride` positions are scored, so each later byte
    has cap − stride + 1 … cap bytes of context (stride 1: exactly cap, one forward per byte)."""
    ids = torch.from_numpy(lm.as_ids(data))
    n = len(ids) - 1
    out = [long_bits(model, data[: cap + 1], cap)]  # bytes 1 … cap
    ends = np.arange(cap + stride, n + stride, stride)  # each window predicts bytes end − stride + 1 … end
    for s in range(0, len(ends), batch):
        e = torch.from_numpy(ends[s : s + batch])
        x = ids[(e[:, None] - cap + torch.arange(cap)[None, :]).clamp(max=n)]  # (c, cap): bytes e − cap … e − 1
        y = ids[
            (e[:, None] - stride + 1 + torch.arange(stride)[None, :]).clamp(max=n)
        ]  # (c, stride): e − stride + 1 … e
        logits = model(x)[:, -stride:]  # (c, stride, V)
        nll = F.cross_entropy(logits.transpose(1, 2), y, reduction="none") / lm.LN2  # (c, stride)
        out.append(nll.reshape(-1).numpy())
    return np.concatenate(out)[:n]


def same_bytes(long: np.ndarray, capped: np.ndarray, length: int, cap: int = lm.TRAIN_LEN) -> dict:
    """Per long window: mean(long − capped) over in-window positions ≥ cap ("past") and over all
    positions ("all"); a window's long and capped means are in index.json and capped_blocks."""
    w = len(long) // length
    lo = long[: w * length].reshape(w, length)
    ca = capped[: w * length].reshape(w, length)
    d = lo - ca
    r = lambda a: [round(float(v), 4) for v in a]  # noqa: E731
    return {
        "windows": w,
        "past": r(d[:, cap:].mean(axis=1)) if length > cap else [],
        "all": r(d.mean(axis=1)),
    }


@torch.no_grad()
def far_bucket_share(
    model: torch.nn.Module, data: bytes, far: int, length: int, last: int, max_windows: int = 16
) -> list[list[float]]:
    """Per layer, per head: the mean attention mass on keys at distance ≥ `far` over queries at
    in-window positions ≥ length − last, in the first max_windows windows of `length`."""
    w = torch.from_numpy(lm.windows(data, length, max_windows))[:, :-1]
    _, results = model(w, return_attention=True)
    i = torch.arange(length)
    far_mask = (i[:, None] - i[None, :]) >= far  # (i, j)
    out = []
    for r in results:
        mass = (r.weights * far_mask).sum(-1)  # (b, h, i)
        out.append([round(float(v), 4) for v in mass[:, :, length - last :].mean(dim=(0, 2))])
    return out


def t5_far_bucket(model: TinyTransformer, data: bytes) -> dict:
    block = model.blocks[0]
    assert isinstance(block, TransformerBlock)
    enc = block.attn.encoder
    assert isinstance(enc, T5Bias)
    nb, md = enc.config.num_buckets, enc.config.max_distance
    b = relative_position_bucket(-torch.arange(0, 4096), bidirectional=False, num_buckets=nb, max_distance=md)
    far = int(torch.nonzero(b == b.max())[0])
    table = enc.table.detach()  # (N, h)
    return {
        "num_buckets": nb,
        "max_distance": md,
        "far_from": far,
        "far_bias": [round(float(v), 4) for v in table[-1]],
        "near_bias_max": [round(float(v), 4) for v in table.max(dim=0).values],
        "share": {
            str(lm.TRAIN_LEN): far_bucket_share(model, data, far, lm.TRAIN_LEN, 16),
            "1024": far_bucket_share(model, data, far, 1024, 128),
        },
    }


def model_entry(
    name: str, data: bytes, lengths: tuple[int, ...] = lm.EVAL_LENGTHS, capped: np.ndarray | None = None
) -> tuple[dict, np.ndarray]:
    """One trained model (or a RoPE stretch: its base model capped) → its same-bytes entry."""
    t0 = time.perf_counter()
    base = lm.load(lm.STRETCHED if name in lm.STRETCHES else name)
    if capped is None:
        capped = capped_bits(base, data, stride=STRIDE)
    t_capped = time.perf_counter() - t0
    entry: dict = {"capped_bpb": round(float(capped.mean()), 5), "capped_blocks": [], "lengths": {}}
    blocks = capped[: len(capped) // lm.TRAIN_LEN * lm.TRAIN_LEN].reshape(-1, lm.TRAIN_LEN).mean(axis=1)
    entry["capped_blocks"] = [round(float(v), 5) for v in blocks]
    for n in lengths:
        model = lm.stretched(base, name, n) if name in lm.STRETCHES else base
        try:
            long = long_bits(model, data, n)
        except lm.PositionOutOfRange:
            entry["lengths"][str(n)] = None
            continue
        entry["lengths"][str(n)] = same_bytes(long, capped, n)
    block = base.blocks[0]
    if isinstance(block, TransformerBlock) and isinstance(block.attn.encoder, T5Bias):  # its shared far bucket
        entry["t5_far_bucket"] = t5_far_bucket(base, data)
    entry["seconds"] = {"capped": round(t_capped, 1), "total": round(time.perf_counter() - t0, 1)}
    return entry, capped


def anchors(corpus: C.Corpus, data: bytes) -> dict:
    t0 = time.perf_counter()
    out: dict = {"ngram": {}, "ngram_uncut": {}}
    for k in ORDERS:
        m = ngram.KneserNey(corpus.train, k)
        cut = m.bits(data, lm.TRAIN_LEN)
        out["ngram"][str(k)] = {
            "bpb": round(float(cut.mean()), 5),
            "blocks": [
                round(float(v), 5)
                for v in cut[: len(cut) // lm.TRAIN_LEN * lm.TRAIN_LEN].reshape(-1, lm.TRAIN_LEN).mean(axis=1)
            ],
        }
        out["ngram_uncut"][str(k)] = round(float(m.bits(data, None).mean()), 5)
    out["compressors"] = {k: round(v, 5) for k, v in ngram.compressor_bpb(corpus.train, data).items()}
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def run(
    names: tuple[str, ...] | None = None, directory: Path = lm.LM_DIR, force: bool = False, path: Path | None = None
) -> dict:
    """Evaluate what `path` (default directory/evidence.json) does not hold yet, writing after each model."""
    torch.set_num_threads(1)
    path = directory / EVIDENCE if path is None else path
    ev = json.loads(path.read_text()) if path.exists() and not force else {}
    corpus = C.load(directory)
    data = corpus.heldout[: lm.EVAL_BYTES]
    ev.setdefault("train_length", lm.TRAIN_LEN)
    ev["eval_bytes"] = len(data)
    ev["eval_lengths"] = list(lm.EVAL_LENGTHS)
    ev.setdefault("models", {})
    ev["capped_stride"] = STRIDE

    def save() -> None:
        path.write_text(json.dumps(ev, indent=None, separators=(",", ":")) + "\n")

    if "anchors" not in ev:
        ev["anchors"] = anchors(corpus, data)
        save()
        print(
            "anchors",
            {k: v["bpb"] for k, v in ev["anchors"]["ngram"].items()},
            ev["anchors"]["compressors"],
            flush=True,
        )
    names = tuple(names) if names else (*lm.trained_encodings(directory), *lm.STRETCHES)
    rope_capped = None
    for name in names:
        if name in ev["models"]:
            continue
        reuse = rope_capped if name in lm.STRETCHES else None
        entry, capped = model_entry(name, data, capped=reuse)
        if name == lm.STRETCHED or name in lm.STRETCHES:
            rope_capped = capped
        ev["models"][name] = entry
        save()
        past = {
            n: (round(float(np.mean(v["past"])), 4) if v and v["past"] else None) for n, v in entry["lengths"].items()
        }
        print(name, "capped", entry["capped_bpb"], "past-128 differences", past, entry["seconds"], flush=True)
    if path == directory / EVIDENCE and (directory / "index.json").exists():
        from lab.lm_readme import write_readme

        write_readme(lm.index(directory), directory)  # README.md lists evidence.json's numbers too
    return ev


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Same-bytes evaluation and scale anchors → assets/lm/evidence.json")
    ap.add_argument("--encodings", nargs="+", default=None, help="trained encodings or RoPE stretches (default: all)")
    ap.add_argument("--force", action="store_true", help="recompute everything, not only what is missing")
    ap.add_argument("--evidence", type=Path, default=None, help="write here instead (e.g. a second process)")
    a = ap.parse_args(argv)
    run(tuple(a.encodings) if a.encodings else None, force=a.force, path=a.evidence)


if __name__ == "__main__":
    main()
