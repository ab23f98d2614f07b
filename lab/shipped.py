"""The toy-task lab's shipped runs: which tasks, encodings, seeds and learning rates, and where they live.

The one list both sides read: lab/regenerate.py (which trains and writes them) and lab/toy_more.py,
explain/chapters and the tests (which read or re-run them). It imports nothing that trains, so
reading the list never pulls in the regeneration command.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from lab.toy_data import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
TOY_DIR = ROOT / "assets" / "toy"

# What `python -m lab.regenerate` trains unless told otherwise (registry names, the page's order).
# Any registered encoding trains (`--encodings kerple fire`); what *was* shipped is ENCODINGS below.
DEFAULT_ENCODINGS = ("learned", "rope", "t5", "alibi", "none", "cope")


def shipped_encodings(directory: Path = TOY_DIR) -> tuple[str, ...]:
    """The encodings the lab ships, in the order the page lists them, as assets/toy/index.json
    records the runs that were trained; DEFAULT_ENCODINGS before anything has been shipped."""
    index_path = directory / "index.json"
    if index_path.exists():
        recorded = json.loads(index_path.read_text()).get("encodings")
        if recorded:
            return tuple(recorded)
    return DEFAULT_ENCODINGS


ENCODINGS = shipped_encodings()  # read once per process: the shipped files do not change under it

# One training setting per task; identical for every encoding but the learning rate, which each
# encoding gets from a small sweep (lab/regenerate.py). Chosen (before seeing any result table) to fit
# about a minute of one CPU core per run.
SHIPPED: dict[str, TrainConfig] = {
    "flipflop": TrainConfig("flipflop", "", steps=600, seed=0),
    "selective_copy": TrainConfig("selective_copy", "", steps=600, seed=0),
    "counting": TrainConfig("counting", "", steps=600, seed=0),
}

# The training seeds shipped per (task, encoding): every seed is a fresh model initialisation and a
# fresh stream of training strings; the test sets stay fixed (TrainConfig.test_seed).
SEEDS = (0, 1, 2)
# The learning-rate sweep: each encoding trains once at each rate on SWEEP_SEED, a seed that is
# never reported (a run that selected a setting is the luckiest of its cell, not a fair sample), and
# keeps the rate with the lowest error on an in-distribution *validation* set (never a test set);
# every seed of SEEDS then trains at that rate. The sweep's runs keep only their validation numbers
# (assets/toy/sweep/), so it costs len(LEARNING_RATES) runs per (task, encoding).
LEARNING_RATES = (1e-3, 3e-3, 1e-2)
SWEEP_SEED = 100
SWEEP_DIR = TOY_DIR / "sweep"


def run_stem(task: str, encoding: str, seed: int) -> str:
    """File stem of a shipped run: seed 0 keeps the name the page's Inspect panel loads."""
    return f"{task}-{encoding}" if seed == SEEDS[0] else f"{task}-{encoding}-seed{seed}"


def chosen_lr(task: str, encoding: str) -> float:
    """The learning rate the sweep chose for (task, encoding), read from the shipped index.json;
    the task's default when nothing has been shipped (a fresh checkout before regeneration)."""
    index_path = TOY_DIR / "index.json"
    if index_path.exists():
        run = json.loads(index_path.read_text()).get("runs", {}).get(f"{task}/{encoding}")
        if run and "lr" in run:
            return float(run["lr"])
    return SHIPPED[task].lr


def shipped_config(task: str, encoding: str, seed: int = SEEDS[0], lr: float | None = None) -> TrainConfig:
    """The settings of one shipped run: the task's SHIPPED setting at this encoding, seed and rate
    (the rate the sweep chose unless `lr` is given)."""
    base = SHIPPED[task]
    lr = chosen_lr(task, encoding) if lr is None else lr
    return TrainConfig(**{**asdict(base), "encoding": encoding, "seed": seed, "lr": lr})


# The closer-to-paper Flip-Flop run (lab/toy_more.py trains it): listed here with the other shipped
# runs, since its training stream is one every test string is kept apart from (lab/disjoint.py).
# 200 test strings per split, not the lab's 500: one CoPE forward pass over 500 strings of 512 tokens
# with 4 layers costs about 150 s of CPU here. 200 strings still hold ~2,500 reads at 256 tokens.
N_LARGE = 200
LARGE = TrainConfig(
    "flipflop", "", steps=1000, seed=0, batch_size=8, lr=3e-3, n_layers=4, length_scale=4, n_test=N_LARGE
)
