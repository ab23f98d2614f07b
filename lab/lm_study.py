"""The real-text lab's study of language models (issue 39): trained enough, more than once, fairly.

    python -m lab.regenerate lm_study --jobs 2      # every run missing under assets/lm/study/ (resumable)
    python -m lab.lm_study --runs rope:0 learned:0  # some runs only
    python -m lab.lm_study --summary                # what the finished runs say so far

What changes against the first shipped set (lab/lm.py, one seed, 1,500 steps):
- **Every model gets the same beginning-of-text byte** (BOS = 0x02, a byte the corpus never has)
  before each window, in training and evaluation: a causal model without positions (NoPE) then has a
  first token to count from, as in the NoPE papers' setting. A window of L tokens is the byte and
  L − 1 bytes of text and predicts L bytes, so held-out bytes are cut into windows of L bytes, each
  predicted once (lm.bos_windows).
- **Trained longer**: STEPS steps (the first set's curves were still falling at 1,500), matrix
  products in bfloat16 (torch.autocast; weights, optimizer and every evaluation in float32). A pilot
  at 4,000 steps (seed 0 of five encodings, kept in pilot-4000-steps/) left ALiBi at 2.2400 bits per
  byte at 1×, only 0.002 below the order-5 n-gram (2.2421) on the same bytes: too thin a margin to
  hold over seeds, so the set trains 6,000 (one run ≈ 400 s of one core; the set ≈ 2 h on 2 cores).
- **SEEDS seeds per encoding**: the seed sets the initial weights and the order of the training
  windows; every encoding of a seed reads the same windows.
- **RoPE as Position Interpolation's paper uses it**: the trained RoPE model of each seed is
  fine-tuned FT_STEPS steps at FT_LENGTH bytes with PI (s = FT_LENGTH / 128), and — the paper's own
  control (Chen et al. 2023, §3.2 compares PI with direct fine-tuning) — the same steps on the same
  windows without PI. Each is labelled; zero-shot PI, NTK-aware and YaRN are evaluated too.

Each run writes <run>.json (settings, curve, times) and weights/<run>.safetensors, then
<run>.eval.json; anchors.json holds the byte n-grams and compressors on the same held-out bytes. A
rerun skips every file that exists, so the command can stop and go on later. What is evaluated, per
model (every number per 128-byte block of the first EVAL_BYTES held-out bytes, so any window length
and any paired difference is a mean over blocks):
- capped: each byte with at most CAP − 1 bytes before it (a window of CAP tokens ending every
  STRIDE bytes scores its last STRIDE, so each byte past the first window has CAP − STRIDE … CAP − 1
  bytes of context — the training window's);
- long[L′]: each byte inside its non-overlapping window of L′ bytes (context: the bytes before it in
  that window); long − capped on the blocks past the first of a window is the same-bytes test of
  "uses context past its training length".
The "Trained on real text" chapter reads these files (explain/chapters/real_text_study.py): every
number on it is a mean over seeds with an interval over seeds. Weights are kept under weights/
(git-ignored, 0.9 MB a run: this command reproduces them); the models a learner's own text runs
through are the first shipped set in assets/lm/ (lab/lm.py).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from encoders.base import PositionOutOfRange
from lab import corpus as C
from lab import lm, ngram, parallel
from lab.model import TinyTransformer

STUDY_DIR = C.LM_DIR / "study"
ENCODINGS = (*lm.DEFAULT_ENCODINGS, "kerple", "fire")
SEEDS = (0, 1, 2)
BOS = 0x02  # STX, "start of text"; not a byte of the corpus (checked when a run starts)
STEPS = 6000
CAP = lm.TRAIN_LEN
STRIDE = 8
BLOCK = lm.TRAIN_LEN  # evaluation numbers are kept per block of this many bytes
EVAL_BYTES = 65_536  # the first 64 KiB of the held-out split: 64 windows of 1,024 bytes
FT_LENGTH = 1024
FT_STEPS = 1000  # Chen et al. 2023 fine-tune 1,000 steps (§3.1); the same count here, on 2,048 tokens a step
# The fine-tunes: name → the RoPE stretch applied before fine-tuning (None: plain RoPE, direct fine-tune).
FINETUNES = {"rope+pi-ft": "rope-pi", "rope+ft": None}
ORDERS = (1, 2, 3, 4, 5, 6)


def base_config(encoding: str, seed: int) -> lm.LMConfig:
    return lm.LMConfig(encoding, steps=STEPS, seed=seed, warmup=200, curve_every=100, bos=BOS, autocast=True)


def ft_config(seed: int) -> lm.LMConfig:
    # Batch 2 × 1,024 = the base runs' 2,048 tokens a step; a tenth of the base learning rate, short warm-up.
    return lm.LMConfig(
        "rope",
        steps=FT_STEPS,
        seed=seed,
        batch_size=2,
        length=FT_LENGTH,
        lr=3e-4,
        warmup=20,
        curve_every=100,
        val_windows=8,
        bos=BOS,
        autocast=True,
    )


def run_name(encoding: str, seed: int) -> str:
    return f"{encoding}-s{seed}"


def base_runs() -> list[tuple[str, int]]:
    """Seed-major: every encoding's first seed comes before any second seed (a stopped command has
    a whole comparison sooner)."""
    return [(e, s) for s in SEEDS for e in ENCODINGS]


def ft_runs() -> list[tuple[str, int]]:
    return [(f, s) for s in SEEDS for f in FINETUNES]


# --- evaluation ------------------------------------------------------------------------------------


@torch.no_grad()
def long_bits(model: torch.nn.Module, data: bytes, length: int, chunk_tokens: int = 8192) -> np.ndarray:
    """−log2 p of every byte of data[: w · length] inside its non-overlapping window of `length` bytes."""
    w = torch.from_numpy(lm.bos_windows(data, length, BOS))
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
    model: torch.nn.Module, data: bytes, cap: int = CAP, stride: int = STRIDE, batch: int = 64
) -> np.ndarray:
    """−log2 p of every byte of data, each given at most cap − 1 bytes before it (and the BOS byte)
    → (len(data),). The first window predicts bytes 0 … cap − 1; then a window [BOS, bytes e − cap + 1
    … e − 1] ends every `stride` bytes and its last `stride` predictions (bytes e − stride + 1 … e) are
    kept. Indices past the end are clamped: causal attention keeps them out of every kept prediction."""
    ids = torch.from_numpy(lm.as_ids(data))
    n = len(ids)
    out = [long_bits(model, data[:cap], cap)]  # bytes 0 … cap − 1
    ends = np.arange(cap - 1 + stride, n - 1 + stride, stride)
    bos = torch.full((1, 1), BOS, dtype=ids.dtype)
    for s in range(0, len(ends), batch):
        e = torch.from_numpy(ends[s : s + batch])
        text = ids[(e[:, None] - cap + 1 + torch.arange(cap - 1)[None, :]).clamp(max=n - 1)]  # (c, cap − 1)
        x = torch.cat([bos.expand(len(e), 1), text], dim=1)  # (c, cap)
        y = ids[(e[:, None] - stride + 1 + torch.arange(stride)[None, :]).clamp(max=n - 1)]  # (c, stride)
        logits = model(x)[:, -stride:]  # (c, stride, V)
        out.append((F.cross_entropy(logits.transpose(1, 2), y, reduction="none") / lm.LN2).reshape(-1).numpy())
    return np.concatenate(out)[:n]


def blocks(bits: np.ndarray) -> list[float]:
    """Mean bits per byte of each BLOCK-byte block."""
    k = len(bits) // BLOCK
    return [round(float(v), 5) for v in bits[: k * BLOCK].reshape(k, BLOCK).mean(axis=1)]


def length_blocks(model: torch.nn.Module, data: bytes) -> dict[str, list[float] | None]:
    out: dict[str, list[float] | None] = {}
    for n in lm.EVAL_LENGTHS:
        try:
            out[str(n)] = blocks(long_bits(model, data, n))
        except PositionOutOfRange:  # a learned table has no row past its training length
            out[str(n)] = None
    return out


@torch.no_grad()
def far_share(model: TinyTransformer, data: bytes, far: int, length: int, last: int, windows: int = 16) -> list:
    """Per layer and head: the mean attention on keys at distance ≥ `far`, over queries at window
    positions ≥ length − last, in the first `windows` windows of `length` tokens."""
    w = torch.from_numpy(lm.bos_windows(data, length, BOS, windows))[:, :-1]
    _, results = model(w, return_attention=True)
    i = torch.arange(length)
    mask = (i[:, None] - i[None, :]) >= far  # (i, j)
    return [
        [round(float(v), 4) for v in (r.weights * mask).sum(-1)[:, :, length - last :].mean(dim=(0, 2))]
        for r in results
    ]


def far_bucket(model: TinyTransformer, data: bytes) -> dict | None:
    """T5's shared far bucket (every distance from `far` on shares one learned bias per head): where it
    starts, its biases, and the attention on it at the end of 128- and 1,024-byte windows."""
    from encoders.t5 import T5Bias, relative_position_bucket

    enc = model.blocks[0].attn.encoder  # type: ignore[union-attr]
    if not isinstance(enc, T5Bias):
        return None
    nb, md = enc.config.num_buckets, enc.config.max_distance
    b = relative_position_bucket(-torch.arange(0, 4096), bidirectional=False, num_buckets=nb, max_distance=md)
    far = int(torch.nonzero(b == b.max())[0])
    return {
        "far_from": far,
        "far_bias": [round(float(v), 4) for v in enc.table.detach()[-1]],
        "share": {str(CAP): far_share(model, data, far, CAP, 16), "1024": far_share(model, data, far, 1024, 128)},
    }


def evaluate(model: TinyTransformer, data: bytes, stretches: tuple[str, ...] = ()) -> dict:
    t0 = time.thread_time()
    out: dict = {"capped": blocks(capped_bits(model, data)), "long": length_blocks(model, data)}
    if stretches:  # RoPE stretched at inference to each length (s = L′ / 128), no retraining
        out["stretches"] = {
            s: {str(n): blocks(long_bits(lm.stretched(model, s, n), data, n)) for n in lm.EVAL_LENGTHS}
            for s in stretches
        }
    fb = far_bucket(model, data)
    if fb is not None:
        out["t5_far_bucket"] = fb
    out["cpu_seconds"] = round(time.thread_time() - t0, 1)
    return out


# --- runs ------------------------------------------------------------------------------------------


def _paths(name: str, directory: Path) -> tuple[Path, Path, Path]:
    return directory / f"{name}.json", directory / "weights" / f"{name}.safetensors", directory / f"{name}.eval.json"


def _save(model: TinyTransformer, name: str, meta: dict, directory: Path) -> None:
    from safetensors.torch import save_file

    meta_path, wpath, _ = _paths(name, directory)
    wpath.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().half().contiguous() for k, v in model.state_dict().items()}, str(wpath))
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")


def load(name: str, directory: Path = STUDY_DIR) -> TinyTransformer:
    """A finished run's model (float32, eval mode), its stretch applied if it was fine-tuned with one."""
    from safetensors.torch import load_file

    meta_path, wpath, _ = _paths(name, directory)
    meta = json.loads(meta_path.read_text())
    settings = meta["settings"]
    base = lm.LMConfig(**{**settings, "length": lm.TRAIN_LEN}) if meta.get("base") else lm.LMConfig(**settings)
    model = TinyTransformer(lm.model_config(base), seed=base.seed)
    if meta.get("stretch"):
        model = lm.stretched(model, meta["stretch"], FT_LENGTH)
    model.load_state_dict({k: v.float() for k, v in load_file(str(wpath)).items()})
    return model.eval()


def _report(name: str, total: int):
    def report(step: int, bits: float) -> None:
        if step % 500 == 0 or step == total:
            print(f"{name:14s} step {step:5d}/{total}  train {bits:.3f} bits/byte", flush=True)

    return report


def do_run(item: tuple[str, int], directory: Path = STUDY_DIR) -> str:
    """Train (unless its files exist) and evaluate (unless its eval exists) one run → its name."""
    torch.set_num_threads(1)
    kind, seed = item
    name = run_name(kind, seed)
    meta_path, wpath, eval_path = _paths(name, directory)
    corpus = C.load()
    if BOS in set(corpus.train) or BOS in set(corpus.heldout):
        raise ValueError(f"the corpus holds byte {BOS:#04x}: choose another beginning-of-text byte")
    if meta_path.exists() and wpath.exists():
        # A run trained with other settings (an older STEPS, say) is never mixed into this set.
        want = ft_config(seed) if kind in FINETUNES else base_config(kind, seed)
        have = json.loads(meta_path.read_text())["settings"]
        if have != asdict(want):
            raise ValueError(f"{meta_path} was trained with other settings: move it away to retrain ({have} ≠ {want})")
    else:
        if kind in FINETUNES:
            base = load(run_name("rope", seed), directory)  # the base run must be finished (phase 1)
            stretch = FINETUNES[kind]
            model = lm.stretched(base, stretch, FT_LENGTH) if stretch else base
            cfg = ft_config(seed)
            model, metrics = lm.train_lm(cfg, corpus, _report(name, cfg.steps), model=model)
            metrics.update(base=run_name("rope", seed), stretch=stretch)
        else:
            cfg = base_config(kind, seed)
            model, metrics = lm.train_lm(cfg, corpus, _report(name, cfg.steps))
        _save(model, name, metrics, directory)
    if not eval_path.exists():
        model = load(name, directory)
        stretches = lm.STRETCHES if kind == lm.STRETCHED else ()
        ev = evaluate(model, corpus.heldout[:EVAL_BYTES], stretches)
        eval_path.write_text(json.dumps(ev, separators=(",", ":")) + "\n")
        print(
            f"{name}: evaluated in {ev['cpu_seconds']} s CPU; 1× {np.mean(ev['long']['128']):.4f} bits/byte", flush=True
        )
    return name


def anchors(directory: Path = STUDY_DIR) -> dict:
    """Byte n-grams (interpolated Kneser-Ney on the train split) on the same predicted bytes as the
    models — cut at the same 128-byte window starts, and uncut — and compressors given the train text."""
    path = directory / "anchors.json"
    if path.exists():
        return json.loads(path.read_text())
    t0 = time.thread_time()
    corpus = C.load()
    data = corpus.heldout[:EVAL_BYTES]
    out: dict = {"ngram": {}, "ngram_uncut": {}}
    for k in ORDERS:
        m = ngram.KneserNey(corpus.train, k)
        out["ngram"][str(k)] = blocks(m.bits(data, CAP, from_start=True))
        out["ngram_uncut"][str(k)] = blocks(m.bits(data, None, from_start=True))
    out["compressors"] = {k: round(v, 5) for k, v in ngram.compressor_bpb(corpus.train, data, from_start=True).items()}
    out["cpu_seconds"] = round(time.thread_time() - t0, 1)
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    return out


def _anchors_job(_: int) -> str:
    anchors()
    return "anchors"


def regenerate(workers: parallel.Workers, runs: list[tuple[str, int]] | None = None) -> None:
    STUDY_DIR.mkdir(parents=True, exist_ok=True)
    if runs is None:
        workers.run_all(_anchors_job, [0])
        workers.run_all(do_run, base_runs())
        workers.run_all(do_run, ft_runs())  # they start from the finished RoPE runs
    else:
        workers.run_all(do_run, runs)
    write_readme()


def summary(directory: Path = STUDY_DIR) -> dict:
    """Per encoding: 1× bits per byte of every finished seed, beside the n-gram anchors."""
    out: dict = {}
    for path in sorted(directory.glob("*.eval.json")):
        name = path.name.removesuffix(".eval.json")
        kind, seed = name.rsplit("-s", 1)
        ev = json.loads(path.read_text())
        out.setdefault(kind, {})[int(seed)] = {
            n: (round(float(np.mean(v)), 4) if v else None) for n, v in ev["long"].items()
        } | {"capped": round(float(np.mean(ev["capped"])), 4)}
    a = directory / "anchors.json"
    if a.exists():
        an = json.loads(a.read_text())
        out["anchors"] = {k: round(float(np.mean(v)), 4) for k, v in an["ngram"].items()} | an["compressors"]
    return out


def write_readme(directory: Path = STUDY_DIR) -> None:
    """study/README.md: how the files were made and what the finished runs say (bits per byte at 1×,
    mean over seeds; the page states them with intervals)."""
    s = summary(directory)
    anchors_ = s.pop("anchors", {})
    metas = [json.loads(p.read_text()) for p in sorted(directory.glob("*.json")) if not p.name.endswith(".eval.json")]
    metas = [m for m in metas if "settings" in m]
    cpu = sum(float(m.get("train_cpu_seconds", 0)) for m in metas) / 3600
    evals = [json.loads(p.read_text()) for p in sorted(directory.glob("*.eval.json"))]
    eval_cpu = sum(float(e.get("cpu_seconds", 0)) for e in evals) / 3600
    rows = [
        f"| {kind} | {', '.join(str(x) for x in sorted(v))} | "
        + f"{np.mean([r['128'] for r in v.values()]):.4f} | {np.mean([r['capped'] for r in v.values()]):.4f} |"
        for kind, v in s.items()
    ]
    text = (
        f"""# assets/lm/study — the real-text chapter's language models, several seeds each

Made by one command (from the repository root), resumable:

    python -m lab.regenerate lm_study --jobs 2

lab/lm_study.py says what each run is: every encoding of ENCODINGS × SEEDS {SEEDS}, {STEPS} steps with the
beginning-of-text byte 0x{BOS:02X}, and RoPE's fine-tunes at {FT_LENGTH} bytes ({FT_STEPS} steps, with PI and
without). Per run: `<encoding>-s<seed>.json` (settings, parameters, training curve, CPU time) and
`.eval.json` (per 128-byte block of the first {EVAL_BYTES:,} held-out bytes: capped at {CAP} bytes, every
evaluation length, RoPE's zero-shot stretches, T5's far bucket); `anchors.json` (byte n-grams and
compressors on the same bytes). Weights (`weights/`, 0.9 MB a run) are not shipped: the command
reproduces them. Training: {cpu:.1f} CPU hours over {len(metas)} runs, evaluation {eval_cpu:.1f} more (one
thread each): the runs are independent, so with `--jobs 2` on a quiet 2-core machine the set takes about
{(cpu + eval_cpu) / 2:.1f} h of wall time. (This set was trained across several sessions on a shared
machine and resumed each time, so its own wall time was not measured in one piece.)

| run | seeds | bits/byte at 128 (mean over seeds) | capped at 128 |
|---|---|---|---|
"""
        + "\n".join(rows)
        + "\n\nAnchors on the same bytes (bits per byte): "
        + ", ".join(f"{'order ' + k if k.isdigit() else k}: {v}" for k, v in anchors_.items())
        + ".\n"
    )
    (directory / "README.md").write_text(text)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Retrain the real-text models: seeds, BOS, PI fine-tune (resumable)")
    ap.add_argument("--runs", nargs="+", default=None, help="kind:seed, e.g. rope:0 rope+pi-ft:0 (default: all)")
    ap.add_argument("--jobs", type=int, default=parallel.default_jobs())
    ap.add_argument("--summary", action="store_true", help="print what the finished runs say, train nothing")
    a = ap.parse_args(argv)
    if a.summary:
        print(json.dumps(summary(), indent=1))
        return
    runs = [(r.split(":")[0], int(r.split(":")[1])) for r in a.runs] if a.runs else None
    with parallel.Workers(a.jobs) as workers:
        regenerate(workers, runs)
    print(json.dumps(summary(), indent=1))


if __name__ == "__main__":
    main()
