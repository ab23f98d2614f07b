"""Regenerate every shipped result in assets/ from scratch.

    python -m lab.regenerate                       # everything (each entry of REGENERATORS)
    python -m lab.regenerate toy                   # only the toy-task lab (assets/toy/)
    python -m lab.regenerate spline                # only the Spline chapter (assets/spline/)
    python -m lab.regenerate toy --tasks flipflop --encodings cope rope

Each entry of REGENERATORS is (name, function(args) → None) and owns one folder of assets/;
another shipped result is added by appending its function. The toy-task lab trains one model per
(task, encoding) with the settings in SHIPPED and writes, per run, <task>-<encoding>.safetensors
(float16 weights) and <task>-<encoding>.json (settings, seeds, torch version, wall time, learning
curve, error per split, error against distance), and index.json (the summary the page reads).
Nothing is tuned per encoding: every encoding of a task gets exactly the same settings and seed.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import asdict
from pathlib import Path

import torch

from lab import tasks as T
from lab.train import TrainConfig, save, train

ROOT = Path(__file__).resolve().parents[1]
TOY_DIR = ROOT / "assets" / "toy"

# The encodings the lab ships, in the order the page lists them (registry names).
ENCODINGS = ("learned", "rope", "t5", "alibi", "none", "cope")

# One training setting per task; identical for every encoding. Chosen (before seeing any result
# table) to fit about a minute of one CPU core per run.
SHIPPED: dict[str, TrainConfig] = {
    "flipflop": TrainConfig("flipflop", "", steps=600, seed=0),
    "selective_copy": TrainConfig("selective_copy", "", steps=600, seed=0),
    "counting": TrainConfig("counting", "", steps=600, seed=0),
}


def shipped_config(task: str, encoding: str) -> TrainConfig:
    base = SHIPPED[task]
    return TrainConfig(**{**asdict(base), "encoding": encoding})


def regenerate_toy(args) -> None:
    torch.set_num_threads(1)
    TOY_DIR.mkdir(parents=True, exist_ok=True)
    index_path = TOY_DIR / "index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {"runs": {}}
    t_all = time.perf_counter()
    for task in args.tasks:
        for enc in args.encodings:
            cfg = shipped_config(task, enc)
            print(f"[toy] {task} × {enc}: {cfg.steps} steps, seed {cfg.seed} …", flush=True)
            r = train(cfg)
            save(r, TOY_DIR)
            res = r.metrics["results"]
            index["runs"][f"{task}/{enc}"] = {
                "task": task,
                "encoding": enc,
                "file": f"{task}-{enc}",
                "train_seconds": r.metrics["train_seconds"],
                "train_cpu_seconds": r.metrics["train_cpu_seconds"],
                "errors": {split: round(v["error"], 3) for split, v in res.items()},
            }
            print(
                "   ",
                {k: round(v["error"], 2) for k, v in res.items()},
                f"{r.metrics['train_seconds']} s wall, {r.metrics['train_cpu_seconds']} s CPU",
                flush=True,
            )
            # Written after every run, so an interrupted regeneration keeps what it finished.
            index.update(
                torch=torch.__version__,
                machine=platform.machine(),
                threads=torch.get_num_threads(),
                encodings=list(ENCODINGS),
                tasks=list(SHIPPED),
                settings={t: {k: v for k, v in asdict(c).items() if k != "encoding"} for t, c in SHIPPED.items()},
            )
            index_path.write_text(json.dumps(index, indent=1) + "\n")
    if set(args.tasks) == set(SHIPPED) and set(args.encodings) == set(ENCODINGS):
        index["total_wall_seconds"] = round(time.perf_counter() - t_all, 1)  # only a full regeneration
    index_path.write_text(json.dumps(index, indent=1) + "\n")
    write_toy_readme()
    print(f"[toy] done in {time.perf_counter() - t_all:.0f} s", flush=True)


def write_toy_readme() -> None:
    """assets/toy/README.md: the command and the measured times and errors, from index.json."""
    index = json.loads((TOY_DIR / "index.json").read_text())
    runs = index["runs"]
    size = sum(p.stat().st_size for p in TOY_DIR.iterdir() if p.is_file() and p.name != "README.md")
    lines = [
        "# assets/toy — the toy-task lab's shipped runs",
        "",
        "Made by one command (from the repository root):",
        "",
        "    python -m lab.regenerate toy        # or: python -m lab.regenerate (every shipped result)",
        "",
        "Per (task, encoding): `<task>-<encoding>.safetensors` (float16 weights; settings in its metadata)",
        "and `<task>-<encoding>.json` (settings, seeds, torch version, wall and CPU time, learning curve,",
        "error per test split, error against distance). `index.json` summarises them. Every encoding of a",
        "task is trained with the same settings and seed (lab/regenerate.py, SHIPPED); nothing is tuned.",
        "",
        f"Measured on {index.get('machine', '?')}, torch {index.get('torch', '?')}, one torch thread, on a shared",
        "2-core machine: CPU time is the training thread's own time (what one idle core needs); wall",
        "time includes waiting for the CPU while other work ran.",
        "",
        "| task | encoding | CPU s | wall s | " + " | ".join(["error % per split"]) + " |",
        "|---|---|---|---|---|",
    ]
    for r in runs.values():
        errs = ", ".join(f"{k} {v:.1f}" for k, v in r["errors"].items())
        lines.append(
            f"| {r['task']} | {r['encoding']} | {r.get('train_cpu_seconds', float('nan')):.1f} | "
            f"{r['train_seconds']:.1f} | {errs} |"
        )
    cpu = sum(r.get("train_cpu_seconds", 0.0) for r in runs.values())
    wall = index.get("total_wall_seconds")
    lines += [
        "",
        f"Total training CPU time {cpu / 60:.1f} min"
        + (f"; the whole regeneration took {wall / 60:.1f} min of wall time (evaluation included)." if wall else "."),
        f"Size of assets/toy/ (without this file): {size / 1e6:.2f} MB.",
        "",
    ]
    (TOY_DIR / "README.md").write_text("\n".join(lines))


def regenerate_spline(args) -> None:
    """assets/spline/: the Spline-based Transformer autoencoder, its PE baselines, the lr sweep."""
    from lab import spline_train  # imported here: `regenerate toy` should not pay for it

    spline_train.regenerate()


REGENERATORS = [("toy", regenerate_toy), ("spline", regenerate_spline)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("only", nargs="*", help=f"regenerate only these ({', '.join(n for n, _ in REGENERATORS)})")
    ap.add_argument("--tasks", nargs="+", default=list(SHIPPED), choices=sorted(T.TASKS))
    ap.add_argument("--encodings", nargs="+", default=list(ENCODINGS))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    for name, fn in REGENERATORS:
        if not args.only or name in args.only:
            fn(args)
    print(f"regenerated in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
