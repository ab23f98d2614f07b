"""Train a TinyTransformer on a toy task: AdamW, linear warm-up then cosine decay, seeded, CPU.

    python -m lab.train --task flipflop --encoding cope --steps 600 --seed 0 [--out DIR]

Deterministic: the model is drawn from `seed`, every training batch from a numpy Generator seeded
from `seed`, the test sets from a fixed `test_seed`; torch runs on one thread. The same settings
give the same numbers in every run on the same machine and torch version.

Loss and error count only the answer positions (Batch.answer): the rest of each string is random
or fixed by the sampler and says nothing about whether the task is solved.

A training reports progress through a callback; returning True from it stops the run (the lab's
"Stop" button). Checkpoints are float16 safetensors; the metrics written next to them are measured
on the float16 weights, so loading a shipped checkpoint reproduces its recorded error.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from lab import tasks as T
from lab.model import ModelConfig, TinyTransformer
from lab.toy_data import N_VALIDATION as N_VALIDATION
from lab.toy_data import TrainConfig as TrainConfig
from lab.toy_data import fixed_test_set as fixed_test_set
from lab.toy_data import task_of as task_of
from lab.toy_data import training_batches as training_batches
from lab.toy_data import validation_sets as validation_sets

# Bins [lo, hi) of the error-vs-distance plot; the last reaches the closer-to-paper Flip-Flop's
# 512-token probes (lab/toy_more.py), so every answer falls in a bin.
DISTANCE_EDGES = (0, 2, 4, 8, 16, 32, 64, 128, 256, 512)


@dataclass(frozen=True)
class Progress:
    step: int  # steps done
    steps: int
    loss: float  # mean training loss over the last curve interval (answer positions only)
    elapsed: float  # seconds
    curve: tuple  # ((step, loss, val_error %), …) so far


@dataclass
class TrainResult:
    config: TrainConfig
    model: TinyTransformer
    metrics: dict = field(default_factory=dict)


def model_config(cfg: TrainConfig) -> ModelConfig:
    task = task_of(cfg)
    return ModelConfig(
        cfg.encoding,
        len(task.vocab),
        task.max_length(),
        cfg.d_model,
        cfg.n_heads,
        cfg.n_layers,
        encoder_options=cfg.encoder_options,
    )


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up to lr, then cosine decay to lr/10 at the last step."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    t = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def answer_loss(model: TinyTransformer, batch: T.Batch) -> torch.Tensor:
    """Cross-entropy at the answer positions: logits at t − 1 predict the token at t."""
    ids = torch.from_numpy(batch.tokens)
    mask = torch.from_numpy(batch.answer[:, 1:])  # (b, n − 1)
    logits = model(ids[:, :-1])  # (b, n − 1, V)
    return F.cross_entropy(logits[mask], ids[:, 1:][mask])


def test_sets(cfg: TrainConfig) -> dict[str, T.Batch]:
    """The fixed test set of every split of a run's task: n_test strings drawn from `test_seed`,
    none of them a training string of any shipped run of the task or of this run, nor a
    validation string (lab/disjoint.py). The same strings for every encoding and shipped seed."""
    from lab import disjoint

    return {s.name: disjoint.test_set(cfg, s.name) for s in task_of(cfg).splits}


# Sequences per forward pass in `predict`: as many as keep one (b, n, n) attention tensor per head
# within 2^17 scores (0.5 MB of float32). A pass over 100 sequences of 256 tokens moved 100 MB per
# tensor through memory several times per layer (CoPE: gates, counts, interpolation); in chunks of 2,
# the same 200 test strings of toy_large took 3.8 s instead of 15.6 (CoPE) and 2.1 s instead of 5.2
# (RoPE), one thread, with the same predictions. Logits can differ in their last bit with the chunk
# (a matrix product's rounding depends on its shape); tests/test_toy_more.py and test_lab_train.py
# reproduce the shipped errors, recorded with chunks of 100, from these chunks.
SCORES_PER_CHUNK = 1 << 17


@torch.no_grad()
def predict(model: TinyTransformer, batch: T.Batch, chunk: int | None = None) -> np.ndarray:
    """Greedy prediction (b, n) of every token from the ones before it (column 0 is −1)."""
    model.eval()
    n = batch.tokens.shape[1]
    chunk = chunk or max(1, SCORES_PER_CHUNK // max(1, n * n))
    out = np.full(batch.tokens.shape, -1, dtype=np.int64)
    for s in range(0, len(batch), chunk):
        ids = torch.from_numpy(batch.tokens[s : s + chunk])
        out[s : s + chunk, 1:] = model(ids[:, :-1]).argmax(-1).numpy()  # (c, n − 1)
    return out


def evaluate(model: TinyTransformer, batch: T.Batch) -> dict:
    """Error % on the answer positions, per sequence, per distance bin and per group."""
    pred = predict(model, batch)
    wrong = (pred != batch.tokens) & batch.answer  # (b, n)
    n_ans = int(batch.answer.sum())
    dist = batch.distance[batch.answer]
    bad = wrong[batch.answer]
    bins = []
    for lo, hi in itertools.pairwise(DISTANCE_EDGES):
        sel = (dist >= lo) & (dist < hi)
        if sel.any():
            bins.append({"lo": lo, "hi": hi, "n": int(sel.sum()), "errors": int(bad[sel].sum())})
    groups = {}
    for g in np.unique(batch.group):
        rows = batch.group == g
        na = int(batch.answer[rows].sum())
        groups[str(int(g))] = {"n": na, "errors": int(wrong[rows].sum())}
    has = batch.answer.any(1)
    return {
        "error": 100.0 * int(wrong.sum()) / max(1, n_ans),
        "errors": int(wrong.sum()),
        "answers": n_ans,
        "strings": int(has.sum()),  # strings with an answer (what bounds an error of 0)
        "sequence_error": 100.0 * float((wrong.any(1) & has).sum()) / max(1, int(has.sum())),
        "by_distance": bins,
        "by_group": groups,
    }


def train(
    cfg: TrainConfig, callback: Callable[[Progress], bool | None] | None = None, test: bool = True
) -> TrainResult:
    """Train and evaluate; `callback(progress)` after every step, True stops the run early. With
    test=False the test splits are not evaluated (metrics' results stay empty): for a caller that
    evaluates its own probes on the same strings, which would only repeat the work."""
    task = task_of(cfg)
    model = TinyTransformer(model_config(cfg), seed=cfg.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), weight_decay=cfg.weight_decay)
    batches = training_batches(cfg)
    val = validation_sets(cfg)[0]
    curve: list[tuple[int, float, float]] = []
    window: list[float] = []
    t0 = time.perf_counter()
    c0 = time.thread_time()  # CPU time of this thread: what the run costs on an idle core
    stopped = False
    step = 0
    for step in range(cfg.steps):
        model.train()
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        loss = answer_loss(model, next(batches))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        window.append(loss.item())
        done = step + 1
        if done % cfg.curve_every == 0 or done == cfg.steps:
            curve.append((done, float(np.mean(window)), evaluate(model, val)["error"]))
            window = []
        if callback is not None:
            last = curve[-1][1] if curve else float(np.mean(window))
            if callback(Progress(done, cfg.steps, last, time.perf_counter() - t0, tuple(curve))):
                stopped = True
                break
    train_seconds = time.perf_counter() - t0
    train_cpu_seconds = time.thread_time() - c0
    # Round to the shipped precision first, so the recorded errors are those of the checkpoint.
    model.load_state_dict({k: v.half().float() for k, v in model.state_dict().items()})
    model.eval()
    results = {name: evaluate(model, batch) for name, batch in test_sets(cfg).items()} if test else {}
    metrics = {
        "settings": asdict(cfg),
        "model": asdict(model_config(cfg)),
        "parameters": model.n_parameters(),
        "steps_done": step + 1 if cfg.steps else 0,
        "stopped": stopped,
        "train_seconds": round(train_seconds, 2),  # wall clock, inflated when the machine is busy
        "train_cpu_seconds": round(train_cpu_seconds, 2),  # CPU time of the training thread
        "eval_seconds": round(time.perf_counter() - t0 - train_seconds, 2),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "machine": platform.machine(),
        "curve": [{"step": s, "loss": round(lo, 5), "val_error": round(e, 3)} for s, lo, e in curve],
        "splits": {s.name: s.label for s in task.splits},
        "results": results,
    }
    return TrainResult(cfg, model, metrics)


# --- checkpoints ------------------------------------------------------------------------------


def save(result: TrainResult, directory: Path, stem: str | None = None) -> tuple[Path, Path]:
    """<stem>.safetensors (float16 weights) and <stem>.json (metrics, settings, seeds)."""
    from safetensors.torch import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stem = stem or f"{result.config.task}-{result.config.encoding}"
    weights = {k: v.detach().half().contiguous() for k, v in result.model.state_dict().items()}
    wpath, mpath = directory / f"{stem}.safetensors", directory / f"{stem}.json"
    save_file(weights, str(wpath), metadata={"settings": json.dumps(asdict(result.config))})
    wpath.chmod(0o644)  # safetensors writes 0600; shipped assets are readable by every user
    mpath.write_text(json.dumps(result.metrics, indent=1) + "\n")
    return wpath, mpath


def load(wpath: Path) -> tuple[TinyTransformer, TrainConfig]:
    """A shipped checkpoint → (model in eval mode, float32 weights, its TrainConfig)."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(str(wpath), framework="pt") as f:
        cfg = TrainConfig(**json.loads(f.metadata()["settings"]))
    model = TinyTransformer(model_config(cfg), seed=cfg.seed)
    model.load_state_dict({k: v.float() for k, v in load_file(str(wpath)).items()})
    return model.eval(), cfg


def main(argv: list[str] | None = None) -> None:
    import encoders

    ap = argparse.ArgumentParser(description="Train a tiny Transformer on a toy task (lab/).")
    ap.add_argument("--task", choices=sorted(T.TASKS), required=True)
    ap.add_argument("--encoding", choices=sorted(encoders.REGISTRY), required=True)
    ap.add_argument("--steps", type=int, default=TrainConfig.steps)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-size", type=int, default=TrainConfig.batch_size)
    ap.add_argument("--lr", type=float, default=TrainConfig.lr)
    ap.add_argument("--out", type=Path, default=None, help="directory for the checkpoint and metrics")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    cfg = TrainConfig(a.task, a.encoding, a.steps, a.seed, a.batch_size, a.lr)

    def report(p: Progress) -> None:
        if p.step % cfg.curve_every == 0 or p.step == p.steps:
            print(f"step {p.step:5d}/{p.steps}  loss {p.loss:.4f}  {p.elapsed:6.1f} s", flush=True)

    r = train(cfg, report)
    for name, res in r.metrics["results"].items():
        print(f"{name:12s} error {res['error']:6.2f} %  ({res['errors']}/{res['answers']} answers)")
    print(f"trained in {r.metrics['train_seconds']} s wall, {r.metrics['train_cpu_seconds']} s CPU")
    if a.out:
        for p in save(r, a.out):
            print("wrote", p)


if __name__ == "__main__":
    main()
