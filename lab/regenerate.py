"""Regenerate every shipped result in assets/ from scratch.

    python -m lab.regenerate                       # everything (each entry of REGENERATORS)
    python -m lab.regenerate toy                   # only the toy-task lab (assets/toy/)
    python -m lab.regenerate spline                # only the Spline chapter (assets/spline/)
    python -m lab.regenerate lm                    # only the language models on real text (assets/lm/)
    python -m lab.regenerate lm_study --jobs 2     # the study the page reads: 3 seeds, BOS, PI fine-tune,
                                                   # n-gram anchors, same-bytes evaluation (resumable)
    python -m lab.regenerate toy_large cope_table  # the toy lab's closer-to-paper Flip-Flop and CoPE's
                                                   # shared table (lab/toy_more.py)
    python -m lab.regenerate smollm2_long          # SmolLM2-135M past its 8,192-token context, plain RoPE
                                                   # and PI / NTK / YaRN (lab/smollm2_long.py, ~45 min, 1 core)
    python -m lab.regenerate toy --tasks flipflop --encodings cope rope
    python -m lab.regenerate toy toy_large cope_table --jobs 2  # worker processes (default: one per core)

Each entry of REGENERATORS is (name, function(args) → None) and owns one folder of assets/;
another shipped result is added by appending its function. The toy-task lab, per (task, encoding):
a learning-rate sweep on SWEEP_SEED, a seed that is never reported (LEARNING_RATES; the rate with the
lowest in-distribution *validation* error wins), then every seed of SEEDS at that rate. Resumable:
a sweep run's numbers are kept in assets/toy/sweep/, and a checkpoint already trained with the same
settings is not trained again, only re-evaluated on the test sets (lab/disjoint.py: no test string
is a training string of any shipped run or a validation string). Per shipped seed it writes
<task>-<encoding>[-seed<k>].safetensors (float16 weights) and .json (settings, seeds, torch version,
wall time, learning curve, error per split, error against distance); index.json (the summary the
page reads, the sweep included); and, after training, probes.json: every shipped checkpoint
evaluated on one-factor test sets and a length ladder (lab/probe.py), and bucket_probe.json
(lab/bucket_probe.py: why a bucketed bias fails Flip-Flop). Apart from the learning rate every
encoding of a task gets the same settings and seeds.

    python -m lab.regenerate toy --probe-only [--tasks …]   # re-evaluate the shipped checkpoints only
    python -m lab.regenerate toy --retest-only   # train nothing: the finished sweep runs, every
                                                 # checkpoint re-evaluated on the test sets
"""

from __future__ import annotations

import argparse
import json
import platform
import threading
import time
from dataclasses import asdict
from typing import Any

import torch

import encoders
from lab import parallel
from lab import tasks as T
from lab.shipped import (
    DEFAULT_ENCODINGS,
    LEARNING_RATES,
    SEEDS,
    SHIPPED,
    SWEEP_DIR,
    SWEEP_SEED,
    TOY_DIR,
    run_stem,
    shipped_config,
)
from lab.shipped import ENCODINGS as ENCODINGS  # re-exported: pages/labs/toy_tasks.py reads it here
from lab.train import TrainResult, answer_loss, evaluate, save, train, validation_sets

# The list of shipped runs (tasks, encodings, seeds, learning rates) lives in lab/shipped.py, which
# everything that reads the runs imports; this module trains and writes them.


@torch.no_grad()
def validation(result: TrainResult) -> dict:
    """In-distribution validation error % and loss of a trained model (the sweep's criterion)."""
    batch = validation_sets(result.config)[1]
    res = evaluate(result.model, batch)
    loss = float(answer_loss(result.model.eval(), batch))
    return {"error": round(res["error"], 3), "loss": round(loss, 5)}


def _summary(r: TrainResult) -> dict:
    res = r.metrics["results"]
    return {
        "seed": r.config.seed,
        "file": run_stem(r.config.task, r.config.encoding, r.config.seed),
        "train_seconds": r.metrics["train_seconds"],
        "train_cpu_seconds": r.metrics["train_cpu_seconds"],
        "errors": {split: round(v["error"], 3) for split, v in res.items()},
        "answers": {split: v["answers"] for split, v in res.items()},
        "strings": {split: v["strings"] for split, v in res.items()},
    }


def _log(r: TrainResult, extra: str = "") -> None:
    res = r.metrics["results"]
    print(
        f"    lr {r.config.lr:g} seed {r.config.seed}:",
        {k: round(v["error"], 2) for k, v in res.items()},
        extra,
        f"{r.metrics['train_seconds']} s wall, {r.metrics['train_cpu_seconds']} s CPU",
        flush=True,
    )


def _sweep_done(item: tuple[str, str, float]) -> dict | None:
    """A sweep run's numbers if it has been run with the current settings, else None."""
    task, enc, lr = item
    path = SWEEP_DIR / f"{task}-{enc}-lr{lr:g}.json"
    if not path.exists():
        return None
    done = json.loads(path.read_text())
    cfg = shipped_config(task, enc, SWEEP_SEED, lr)
    return done["entry"] if done.get("settings") == json.loads(json.dumps(asdict(cfg))) else None


def _sweep_run(item: tuple[str, str, float]) -> dict:
    """One run of the sweep (SWEEP_SEED, never a reported seed, at one rate) and its validation error
    (a worker's job). Resumable: its numbers go to assets/toy/sweep/<task>-<encoding>-lr<rate>.json,
    and a run whose file holds the same settings is read back instead of trained again."""
    task, enc, lr = item
    done = _sweep_done(item)
    if done is not None:
        return done
    cfg = shipped_config(task, enc, SWEEP_SEED, lr)
    path = SWEEP_DIR / f"{task}-{enc}-lr{lr:g}.json"
    r = train(cfg, test=False)  # the sweep's runs are never tested: only validation chooses
    val = validation(r)
    _log(r, f"{task} × {enc} validation {val}")
    entry = {
        "lr": lr,
        "seed": SWEEP_SEED,
        "val_error": val["error"],
        "val_loss": val["loss"],
        "train_seconds": r.metrics["train_seconds"],
        "train_cpu_seconds": r.metrics["train_cpu_seconds"],
    }
    SWEEP_DIR.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"settings": asdict(cfg), "entry": entry}, indent=1) + "\n")
    return entry


def _matches(stem: str, cfg) -> bool:
    """Whether the shipped checkpoint `stem` was trained with exactly these settings."""
    mpath = TOY_DIR / f"{stem}.json"
    if not (mpath.exists() and (TOY_DIR / f"{stem}.safetensors").exists()):
        return False
    return json.loads(mpath.read_text()).get("settings") == json.loads(json.dumps(asdict(cfg)))


def _seed_run(item: tuple[str, str, int, float]) -> dict:
    """One reported seed at the chosen rate, saved where the page reads it (a worker's job).
    Resumable: a checkpoint already trained with these settings is not trained again, only
    re-evaluated on the test sets (which may have changed) and its metrics rewritten."""
    task, enc, seed, lr = item
    cfg = shipped_config(task, enc, seed, lr)
    stem = run_stem(task, enc, seed)
    if _matches(stem, cfg):
        return _retest(stem)
    r = train(cfg)
    _log(r, f"{task} × {enc}")
    save(r, TOY_DIR, stem)
    return _summary(r)


def _retest(stem: str) -> dict:
    """Evaluate a shipped checkpoint on its (current) test sets; rewrite the results in its metrics."""
    from lab.train import load, test_sets

    model, cfg = load(TOY_DIR / f"{stem}.safetensors")
    mpath = TOY_DIR / f"{stem}.json"
    metrics = json.loads(mpath.read_text())
    metrics["results"] = {name: evaluate(model, batch) for name, batch in test_sets(cfg).items()}
    mpath.write_text(json.dumps(metrics, indent=1) + "\n")
    return _summary(TrainResult(cfg, model, metrics))


def train_cells(cells: list[tuple[str, str]], workers: parallel.Workers) -> dict[str, dict]:
    """The sweep and the seeds of each (task, encoding): every run of the sweep at once (on
    SWEEP_SEED), then every reported seed at its cell's chosen rate (`workers` spreads them over the
    cores). Writes the checkpoints and returns each cell's index entry, keyed "task/encoding"."""
    swept = workers.run_all(_sweep_run, [(t, e, lr) for t, e in cells for lr in LEARNING_RATES])
    chosen: dict[tuple[str, str], tuple[float, list[dict]]] = {}
    for (task, enc), i in zip(cells, range(0, len(swept), len(LEARNING_RATES)), strict=True):
        sweep = swept[i : i + len(LEARNING_RATES)]
        chosen[task, enc] = (_best(sweep), sweep)
    runs = workers.run_all(_seed_run, [(t, e, s, chosen[t, e][0]) for t, e in cells for s in SEEDS])
    out = {}
    for (task, enc), i in zip(cells, range(0, len(runs), len(SEEDS)), strict=True):
        lr, sweep = chosen[task, enc]
        seeds = runs[i : i + len(SEEDS)]
        cpu = sum(s["train_cpu_seconds"] for s in sweep) + sum(x["train_cpu_seconds"] for x in seeds)
        out[f"{task}/{enc}"] = {
            "task": task,
            "encoding": enc,
            "lr": lr,
            "sweep_seed": SWEEP_SEED,
            "sweep": sweep,
            "seeds": seeds,
            "cpu_seconds": round(cpu, 1),
        }
    return out


def _best(sweep: list[dict]) -> float:
    """The sweep's rate: lowest validation error, ties to the lower validation loss."""
    return float(min(sweep, key=lambda x: (x["val_error"], x["val_loss"]))["lr"])


def retest_cells(cells: list[tuple[str, str]], old: dict[str, dict], workers: parallel.Workers) -> dict[str, dict]:
    """Train nothing: every shipped checkpoint re-evaluated on the test sets, beside the sweep on
    SWEEP_SEED where all its runs are done (else the cell's recorded sweep, with its seed). A cell
    whose finished sweep picks another rate than its checkpoints were trained at records that rate as
    "lr_pending": `python -m lab.regenerate toy` retrains exactly those cells."""
    runs = workers.run_all(_retest, [run_stem(t, e, s) for t, e in cells for s in SEEDS])
    out = {}
    for (task, enc), i in zip(cells, range(0, len(runs), len(SEEDS)), strict=True):
        prev = old.get(f"{task}/{enc}", {})
        sweep = [_sweep_done((task, enc, lr)) for lr in LEARNING_RATES]
        entry: dict[str, Any] = {"task": task, "encoding": enc, "lr": float(prev["lr"])}
        if all(x is not None for x in sweep):
            done = [x for x in sweep if x is not None]
            entry.update(sweep_seed=SWEEP_SEED, sweep=done)
            if _best(done) != entry["lr"]:
                entry["lr_pending"] = _best(done)
        else:
            entry.update(sweep_seed=prev.get("sweep_seed", SEEDS[0]), sweep=prev.get("sweep", []))
        entry["seeds"] = runs[i : i + len(SEEDS)]
        cpu = sum(x["train_cpu_seconds"] for x in entry["sweep"]) + sum(x["train_cpu_seconds"] for x in entry["seeds"])
        entry["cpu_seconds"] = round(cpu, 1)
        out[f"{task}/{enc}"] = entry
    return out


def regenerate_toy(args) -> None:
    torch.set_num_threads(1)
    workers = parallel.of(args)
    TOY_DIR.mkdir(parents=True, exist_ok=True)
    index_path = TOY_DIR / "index.json"
    fresh: dict[str, Any] = {"runs": {}}
    index = json.loads(index_path.read_text()) if index_path.exists() else fresh
    if "seeds" not in index or args.fresh:
        index = fresh  # an index from before the seeds and the sweep: start over
    t_all = time.perf_counter()
    if not args.probe_only:
        cells = [(task, enc) for task in args.tasks for enc in args.encodings]
        if getattr(args, "retest_only", False):
            print(f"[toy] {len(cells)} cells: re-evaluating the shipped checkpoints …", flush=True)
            index["runs"].update(retest_cells(cells, index["runs"], workers))
        else:
            print(f"[toy] {len(cells)} cells: sweep {LEARNING_RATES} (seed {SWEEP_SEED}), seeds {SEEDS} …", flush=True)
            index["runs"].update(train_cells(cells, workers))
        index.update(
            torch=torch.__version__,
            machine=platform.machine(),
            threads=1,  # per run: every worker process runs one torch thread
            # what was trained, in the order first trained: the list the page reads (lab.shipped)
            encodings=list(dict.fromkeys(run["encoding"] for run in index["runs"].values())),
            tasks=list(SHIPPED),
            seeds=list(SEEDS),
            learning_rates=list(LEARNING_RATES),
            settings={
                t: {k: v for k, v in asdict(c).items() if k not in ("encoding", "seed", "lr")}
                for t, c in SHIPPED.items()
            },
        )
        if (
            set(args.tasks) == set(SHIPPED)
            and set(args.encodings) == set(DEFAULT_ENCODINGS)
            and not getattr(args, "retest_only", False)
            and args.fresh
        ):
            index["train_wall_seconds"] = round(time.perf_counter() - t_all, 1)  # only a full regeneration
            index["jobs"] = workers.jobs
        elif not getattr(args, "retest_only", False):
            # A resumed run trains only what is missing: its wall time is not the set's, and the last
            # full run's no longer describes checkpoints that were retrained since. Only CPU times,
            # recorded per run, add up.
            index.pop("train_wall_seconds", None)
            index.pop("jobs", None)
        index_path.write_text(json.dumps(index, indent=1) + "\n")
    index["test_sets"] = test_set_record()
    if not args.no_probe:
        from lab import bucket_probe, probe  # evaluation only: the shipped checkpoints, nothing trained

        done = probe.write_probes(TOY_DIR, index, tuple(args.tasks) if args.probe_only else None, workers)
        index["probe_cpu_seconds"] = round(sum(done["cpu_seconds"].values()), 1)
        if bucket_probe.TASK in args.tasks:
            index["bucket_probe_cpu_seconds"] = bucket_probe.run(TOY_DIR)["cpu_seconds"]
    index_path.write_text(json.dumps(index, indent=1) + "\n")
    write_toy_readme()
    print(f"[toy] done in {time.perf_counter() - t_all:.0f} s", flush=True)


def test_set_record() -> dict[str, dict]:
    """Per task: how the test sets were kept apart from training (lab/disjoint.py): the share of
    fresh in-distribution draws that one training stream (seed SEEDS[0]) and every shipped stream
    hold, the distinct strings of one stream, and the draws a test split needed."""
    from lab import disjoint

    out = {}
    for task, base in SHIPPED.items():
        cfg = shipped_config(task, "none", SEEDS[0], base.lr)
        cov = disjoint.coverage(cfg)
        out[task] = {
            **{k: round(v, 5) if isinstance(v, float) else v for k, v in cov.items()},
            "streams": len(disjoint.shipped_runs(cfg)),
            "validation_strings": sum(len(b) for b in validation_sets(cfg)),
            "n_test": cfg.n_test,
        }
    return out


def write_toy_readme() -> None:
    """assets/toy/README.md: the command, the sweep, the measured times and errors, from index.json."""
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
        f"Per (task, encoding): a learning-rate sweep over {tuple(index.get('learning_rates', ()))} on seed"
        f" {SWEEP_SEED}, which is never reported (its numbers: `sweep/`), choosing the rate with the lowest",
        "in-distribution *validation* error (ties: lower validation loss), then seeds "
        f"{tuple(index.get('seeds', ()))} at that rate.",
        "Test strings are none of the training strings of any of these runs nor validation strings:",
        "each split's strings are drawn from its fixed seed and a seen one is replaced by the next draw",
        "(lab/disjoint.py; tests/test_toy_disjoint.py checks every task and seed). Share of fresh",
        "in-distribution draws that are training strings: "
        + "; ".join(
            f"{t} {100 * v['in_one_stream']:.1f}% (one seed's stream), "
            f"{100 * v['in_any_seen']:.1f}% (all {v['streams']})"
            for t, v in index.get("test_sets", {}).items()
        )
        + ".",
        "Per seed: `<task>-<encoding>[-seed<k>].safetensors` (float16 weights; settings in its metadata)",
        "and `.json` (settings, seeds, torch version, wall and CPU time, learning curve, error per test",
        "split, error against distance). `index.json` summarises them (the sweep included);",
        "`probes.json` holds the evaluation-only splits (one factor at a time) and the length curves",
        "of every shipped checkpoint (lab/probe.py). Everything else is the same for every encoding of",
        "a task (lab/shipped.py, SHIPPED).",
        "",
        f"Measured on {index.get('machine', '?')}, torch {index.get('torch', '?')}, one torch thread per run, on a",
        "2-core machine: CPU time is the training thread's own time (what one idle core needs). The runs",
        f"are independent and spread over {index.get('jobs', 1)} worker process(es) (lab/parallel.py, `--jobs`); which",
        "process trains a run does not change a weight (tests/test_regenerate_parallel.py).",
        "",
        f"| task | encoding | lr sweep (seed {SWEEP_SEED}): validation error % | chosen lr"
        " | test error % per split, seeds "
        + ", ".join(str(s) for s in index.get("seeds", ()))
        + " | CPU s (all its runs) |",
        "|---|---|---|---|---|---|",
    ]
    for r in runs.values():
        sweep = ", ".join(f"{x['lr']:g}: {x['val_error']:.1f}" for x in r["sweep"])
        splits = r["seeds"][0]["errors"]
        errs = "; ".join(f"{k} " + "/".join(f"{x['errors'][k]:.1f}" for x in r["seeds"]) for k in splits)
        lines.append(f"| {r['task']} | {r['encoding']} | {sweep} | {r['lr']:g} | {errs} | {r['cpu_seconds']:.0f} |")
    cpu = sum(r["cpu_seconds"] for r in runs.values())
    probe = index.get("probe_cpu_seconds", 0.0)
    wall = index.get("train_wall_seconds")
    lines += [
        "",
        f"Total CPU time: training {cpu / 60:.1f} min (every run of the sweep and the seeds), evaluation-only"
        f" probes {probe / 60:.1f} min; together {(cpu + probe) / 60:.1f} min."
        + (
            f" The training took {wall / 60:.1f} min of wall time on {index.get('jobs', 1)} worker process(es),"
            " shared with `toy_large` when both are regenerated together."
            if wall
            else ""
        ),
        f"Size of assets/toy/ (without this file): {size / 1e6:.2f} MB.",
        "",
    ]
    (TOY_DIR / "README.md").write_text("\n".join(lines))


def regenerate_spline(args) -> None:
    """assets/spline/: the Spline-based Transformer autoencoder, its PE baselines, the lr sweep."""
    from lab import spline_train  # imported here: `regenerate toy` should not pay for it

    spline_train.regenerate()


def regenerate_lm(args: argparse.Namespace) -> None:
    """The byte-level language models of the real-text chapter (assets/lm/, lab/lm.py)."""
    from lab import lm

    lm.regenerate()
    lm.write_index()


def regenerate_lm_study(args: argparse.Namespace) -> None:
    """The real-text chapter's study (lab/lm_study.py, assets/lm/study/): every encoding × 3 seeds
    with a beginning-of-text byte, RoPE fine-tuned with and without PI. Resumable, on the workers."""
    from lab import lm_study

    lm_study.regenerate(parallel.of(args))


def regenerate_smollm2_long(args: argparse.Namespace) -> None:
    """assets/smollm2/long_context.json: SmolLM2-135M's loss by position past its trained context with
    plain RoPE and the registry's stretches (lab/smollm2_long.py; resumable, one torch thread)."""
    from lab import smollm2_long

    smollm2_long.regenerate()


def regenerate_toy_large(args) -> None:
    from lab.toy_more import regenerate_large

    regenerate_large(args)


def regenerate_cope_table(args) -> None:
    from lab.toy_more import regenerate_cope_table as run

    run(args)


REGENERATORS = [
    ("toy", regenerate_toy),
    ("toy_large", regenerate_toy_large),
    ("cope_table", regenerate_cope_table),
    ("spline", regenerate_spline),
    ("lm", regenerate_lm),
    ("lm_study", regenerate_lm_study),
    ("smollm2_long", regenerate_smollm2_long),
]


# Regenerators that share lab.parallel's workers and may run beside the others (they read nothing
# another one writes); the rest run one after another in REGENERATORS' order (cope_table reads the
# learning rate `toy` chose).
CONCURRENT = ("toy_large",)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("only", nargs="*", help=f"regenerate only these ({', '.join(n for n, _ in REGENERATORS)})")
    ap.add_argument("--tasks", nargs="+", default=list(SHIPPED), choices=sorted(T.TASKS))
    ap.add_argument("--encodings", nargs="+", default=list(DEFAULT_ENCODINGS), choices=sorted(encoders.REGISTRY))
    ap.add_argument("--fresh", action="store_true", help="toy: start a new index.json")
    ap.add_argument(
        "--probe-only", action="store_true", help="toy, toy_large: only re-evaluate the shipped checkpoints"
    )
    ap.add_argument("--no-probe", action="store_true", help="toy: train only, skip the evaluation-only probes")
    ap.add_argument(
        "--retest-only",
        action="store_true",
        help="toy: train nothing; re-evaluate the shipped checkpoints and record the finished sweep runs",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=parallel.default_jobs(),
        help="toy, toy_large, cope_table: worker processes, one torch thread each (default: one per core); "
        "the results do not depend on it",
    )
    args = ap.parse_args(argv)
    chosen = [(name, fn) for name, fn in REGENERATORS if not args.only or name in args.only]
    t0 = time.perf_counter()
    failed: list[BaseException] = []

    def beside_run(fn: Any) -> None:
        try:
            fn(args)
        except BaseException as e:  # re-raised below: a failed regenerator fails the command
            failed.append(e)

    with parallel.Workers(args.jobs) as workers:  # stops the worker processes however this ends
        args.workers = workers
        beside = [threading.Thread(target=beside_run, args=(fn,), name=n) for n, fn in chosen if n in CONCURRENT]
        for t in beside:
            t.start()  # its jobs join the same queue as the others', in the order they are submitted
        for name, fn in chosen:
            if name not in CONCURRENT:
                fn(args)
        for t in beside:
            t.join()
    if failed:
        raise failed[0]
    print(f"regenerated in {time.perf_counter() - t0:.0f} s with {args.jobs} jobs")


if __name__ == "__main__":
    main()
