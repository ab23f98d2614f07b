"""Two more toy-lab experiments (issue 19), each changing one thing against the shipped lab.

    python -m lab.regenerate toy_large     # assets/toy_large/: Flip-Flop at a closer-to-paper scale
    python -m lab.regenerate cope_table    # assets/toy_cope_table/: CoPE with one shared table

**Closer to the paper (toy_large).** The lab trains 2 layers on 64-token Flip-Flop for 600 steps;
the CoPE paper's Flip-Flop model has 4 layers, hidden 256, ~10k steps, and the FFLM paper's strings
have 512 tokens. Here Flip-Flop is 4× as long (256 training tokens; "longer" probes 512), the model has
4 layers, and it trains 1000 steps of 8 strings (2.0 M tokens against the lab's 1.2 M). The width stays
d = 64 and 4 heads: a wider model costs more CPU than this budget has. The encodings are the three rows
of the paper's Table 2 (absolute = the learned table, RoPE, CoPE), one seed each at lr 3e-3, a rate at
which all three reached 0.0 % validation error in the lab's own sweep. Each checkpoint is evaluated on
the lab's one-factor probes stretched by the same 4 (lab.probe.probes(scale=4)).

**CoPE's table shared by every head (cope_table).** The lab's CoPE has one position table per head;
the paper's listing and facebookresearch/RAM share one table across heads. This trains CoPE with the
shared table on every task and shipped seed, with everything else (settings, seeds, test sets and the
learning rate the lab's sweep chose for CoPE) as shipped, so the table is the one changed factor. Only
the metrics are shipped (per seed, per split), not the weights.
"""

from __future__ import annotations

import json
import platform
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from lab import parallel
from lab import probe as P
from lab import tasks as T
from lab.shipped import LARGE as LARGE
from lab.shipped import N_LARGE as N_LARGE
from lab.shipped import SEEDS, SHIPPED, shipped_config
from lab.train import TrainConfig, TrainResult, load, predict, save, train

ROOT = Path(__file__).resolve().parents[1]
LARGE_DIR = ROOT / "assets" / "toy_large"
COPE_TABLE_DIR = ROOT / "assets" / "toy_cope_table"

LARGE_ENCODINGS = ("learned", "rope", "cope")  # the CoPE paper's Table 2 rows (absolute, RoPE, CoPE)
SHARED = (("shared_table", True),)


def large_config(encoding: str) -> TrainConfig:
    return replace(LARGE, encoding=encoding)


def large_stem(encoding: str) -> str:
    return f"large-{LARGE.task}-{encoding}"


def evaluate_large(model: Any, scale: int) -> dict[str, dict]:
    """A large checkpoint on the lab's Flip-Flop probes stretched `scale` times: each probe's
    errors, answers and its errors by distance and by number of distractors (lab.probe.score)."""
    strings: dict[str, T.Batch] = {}
    out: dict[str, dict] = {}
    id_config = T.scaled(T.get("flipflop"), scale).split("id").config
    for p in (P.Probe("id", id_config), *P.probes("flipflop", 0, scale)):
        base = p.name.removesuffix("_hard")
        if base not in strings:
            strings[base] = P.sample("flipflop", p.config, "all", 0, f"x{scale}/{base}", N_LARGE)
    preds = {base: predict(model, b) for base, b in strings.items()}
    for p in (P.Probe("id", id_config), *P.probes("flipflop", 0, scale)):
        base = p.name.removesuffix("_hard")
        b = P.hard("flipflop", strings[base]) if p.name.endswith("_hard") else strings[base]
        out[p.name] = P.score("flipflop", (preds[base] != b.tokens) & b.answer, b)
    return out


def _environment(workers: parallel.Workers) -> dict[str, Any]:
    # One torch thread per run, in each of lab.parallel's worker processes.
    return {"torch": torch.__version__, "machine": platform.machine(), "threads": 1, "jobs": workers.jobs}


def _large_run(item: tuple[str, bool, dict]) -> dict[str, Any]:
    """Train (unless probe-only) and probe one encoding of the large configuration (a worker's job):
    its index entry. The in-training test splits are skipped: the probes evaluate the same strings'
    distribution ("id", and "both" is the OOD split) on the shipped float16 weights."""
    enc, probe_only, old = item
    cfg = large_config(enc)
    if probe_only:
        entry = dict(old)
    else:
        print(f"[toy_large] {enc}: {cfg.steps} steps, {cfg.n_layers} layers, × {cfg.length_scale} length …", flush=True)
        r = train(cfg, test=False)
        save(r, LARGE_DIR, large_stem(enc))
        entry = {
            "file": large_stem(enc),
            "parameters": r.metrics["parameters"],
            "train_cpu_seconds": r.metrics["train_cpu_seconds"],
            "final_loss": r.metrics["curve"][-1]["loss"] if r.metrics["curve"] else None,
        }
    model, _ = load(LARGE_DIR / f"{large_stem(enc)}.safetensors")  # the shipped float16 weights
    e0 = time.thread_time()
    entry["probes"] = evaluate_large(model, cfg.length_scale)
    entry["eval_cpu_seconds"] = round(time.thread_time() - e0, 1)
    print(f"    {enc}:", {k: f"{v['errors']}/{v['answers']}" for k, v in entry["probes"].items()}, flush=True)
    return entry


def regenerate_large(args: Any = None) -> None:
    """Train and probe every encoding of LARGE_ENCODINGS on lab.parallel's workers; with
    args.probe_only, only re-probe the shipped checkpoints (their training record is kept)."""
    torch.set_num_threads(1)
    LARGE_DIR.mkdir(parents=True, exist_ok=True)
    probe_only = bool(getattr(args, "probe_only", False))
    old = json.loads((LARGE_DIR / "index.json").read_text())["runs"] if probe_only else {}
    workers = parallel.of(args)
    done = workers.run_all(_large_run, [(enc, probe_only, old.get(enc, {})) for enc in LARGE_ENCODINGS])
    runs = dict(zip(LARGE_ENCODINGS, done, strict=True))
    cpu = sum(r["train_cpu_seconds"] + r["eval_cpu_seconds"] for r in runs.values())
    index = {
        "settings": {k: v for k, v in asdict(LARGE).items() if k not in ("encoding",)},
        "encodings": list(LARGE_ENCODINGS),
        "probes": ["id", *(p.name for p in P.probes("flipflop", 0, LARGE.length_scale))],
        "n": N_LARGE,
        "runs": runs,
        "cpu_seconds": round(cpu, 1),
        **_environment(workers),
    }
    (LARGE_DIR / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    write_large_readme()
    print(f"[toy_large] done: {index['cpu_seconds']} s CPU", flush=True)


def _shared_summary(r: TrainResult) -> dict[str, Any]:
    res = r.metrics["results"]
    return {
        "seed": r.config.seed,
        "train_cpu_seconds": r.metrics["train_cpu_seconds"],
        "errors": {split: round(v["error"], 3) for split, v in res.items()},
        "wrong": {split: v["errors"] for split, v in res.items()},
        "answers": {split: v["answers"] for split, v in res.items()},
        "curve": r.metrics["curve"],
    }


def _shared_run(item: tuple[str, int]) -> dict[str, Any]:
    """CoPE with the shared table on one task and seed, as shipped otherwise (a worker's job)."""
    task, seed = item
    c0 = time.thread_time()
    r = train(replace(shipped_config(task, "cope", seed), encoder_options=SHARED))
    out = {**_shared_summary(r), "lr": r.config.lr, "cpu": time.thread_time() - c0}  # training and its tests
    print(f"[cope_table] {task} seed {seed}: {out['errors']} ({out['train_cpu_seconds']} s CPU)", flush=True)
    return out


def regenerate_cope_table(args: Any = None) -> None:
    """Every task × shipped seed of CoPE with one shared table, on lab.parallel's workers. Reads the
    learning rate the toy lab's sweep chose (assets/toy/index.json): run it after `toy`."""
    torch.set_num_threads(1)
    COPE_TABLE_DIR.mkdir(parents=True, exist_ok=True)
    workers = parallel.of(args)
    done = workers.run_all(_shared_run, [(task, seed) for task in SHIPPED for seed in SEEDS])
    cells: dict[str, Any] = {}
    for i, task in enumerate(SHIPPED):
        seeds = done[i * len(SEEDS) : (i + 1) * len(SEEDS)]
        lrs = {s.pop("lr") for s in seeds}
        assert len(lrs) == 1, lrs  # every seed at the rate the sweep chose
        cells[task] = {"lr": lrs.pop(), "seeds": seeds}
    cpu = sum(s.pop("cpu") for c in cells.values() for s in c["seeds"])
    index = {
        "encoding": "cope",
        "encoder_options": [list(o) for o in SHARED],
        "runs": cells,
        "cpu_seconds": round(cpu, 1),
        **_environment(workers),
    }
    (COPE_TABLE_DIR / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    write_cope_table_readme()
    print(f"[cope_table] done: {index['cpu_seconds']} s CPU", flush=True)


def _size_mb(directory: Path) -> float:
    return round(sum(p.stat().st_size for p in directory.iterdir() if p.is_file() and p.name != "README.md") / 1e6, 2)


def write_large_readme() -> None:
    """assets/toy_large/README.md from its index.json: the command, the settings, costs and errors."""
    index = json.loads((LARGE_DIR / "index.json").read_text())
    s = index["settings"]
    lines = [
        "# assets/toy_large — Flip-Flop at a closer-to-paper scale",
        "",
        "Made by one command (from the repository root): `python -m lab.regenerate toy_large` (lab/toy_more.py).",
        "",
        f"Settings (every encoding): {s['n_layers']} layers, d = {s['d_model']}, {s['n_heads']} heads, "
        f"{s['steps']} steps × {s['batch_size']} strings, Flip-Flop × {s['length_scale']} in length, lr {s['lr']:g}, "
        f"seed {s['seed']}; {index['n']} test strings per probe. Measured on {index['machine']}, torch "
        f"{index['torch']}, {index['threads']} torch thread; CPU time is the training thread's own.",
        "",
        "| encoding | parameters | train CPU s | probe CPU s | " + " | ".join(index["probes"]) + " |",
        "|---|---|---|---|" + "---|" * len(index["probes"]),
    ]
    for enc, r in index["runs"].items():
        cells = [f"{100 * r['probes'][p]['errors'] / r['probes'][p]['answers']:.1f}" for p in index["probes"]]
        lines.append(
            f"| {enc} | {r['parameters']:,} | {r['train_cpu_seconds']:.0f} | {r['eval_cpu_seconds']:.0f} | "
            + " | ".join(cells)
            + " |"
        )
    lines += [
        "",
        f"Error % per probe. Total CPU time: {index['cpu_seconds'] / 60:.1f} min. "
        f"Size of this folder (without this file): {_size_mb(LARGE_DIR)} MB.",
    ]
    (LARGE_DIR / "README.md").write_text("\n".join(lines) + "\n")


def write_cope_table_readme() -> None:
    """assets/toy_cope_table/README.md from its index.json."""
    index = json.loads((COPE_TABLE_DIR / "index.json").read_text())
    lines = [
        "# assets/toy_cope_table — CoPE with one position table shared by its heads",
        "",
        "Made by one command (from the repository root): `python -m lab.regenerate cope_table` (lab/toy_more.py).",
        "",
        f"Encoder options: {index['encoder_options']}; everything else as the shipped toy lab (assets/toy/): the",
        "same settings, seeds and test sets, and the learning rate the lab's sweep chose for CoPE on each task.",
        "Only the metrics are shipped, not the weights.",
        "",
        "| task | lr | seed | CPU s | error % per split |",
        "|---|---|---|---|---|",
    ]
    for task, cell in index["runs"].items():
        for s in cell["seeds"]:
            errs = "; ".join(f"{k} {v:.1f}" for k, v in s["errors"].items())
            lines.append(f"| {task} | {cell['lr']:g} | {s['seed']} | {s['train_cpu_seconds']:.0f} | {errs} |")
    lines += [
        "",
        f"Total CPU time: {index['cpu_seconds'] / 60:.1f} min. Measured on {index['machine']}, torch {index['torch']}.",
    ]
    (COPE_TABLE_DIR / "README.md").write_text("\n".join(lines) + "\n")
