"""What a toy-lab run is and which strings it reads: its configuration, its task, its stream of
training strings and its validation sets.

Split from lab/train.py so the shipped list (lab/shipped.py) and the filter that keeps test strings
apart from every training and validation string (lab/disjoint.py) can read them without importing
the trainer, which itself asks lab/disjoint.py for its test sets.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from encoders.base import derived_seed
from lab import tasks as T

N_VALIDATION = 500  # strings of the learning-rate sweep's validation set (a test split's size)


@dataclass(frozen=True)
class TrainConfig:
    task: str
    encoding: str
    steps: int = 600
    seed: int = 0
    batch_size: int = 32
    lr: float = 3e-3
    warmup: int = 50  # steps of linear warm-up from 0 to lr; then cosine decay to lr/10
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    curve_every: int = 25  # one learning-curve point (mean train loss, val error) every this many steps
    n_val: int = 64  # sequences in the in-distribution validation batch of the learning curve
    n_test: int = 500  # sequences per test split
    test_seed: int = 2024  # the fixed test sets; independent of the training seed
    # Every split of the task this many times as long (lab.tasks.scaled): 1 is the lab's size, 4
    # the closer-to-paper Flip-Flop (256 training tokens).
    length_scale: int = 1
    # Fields of the encoder's training config to change, as (field, value) pairs, e.g.
    # (("shared_table", True),) for CoPE's one table shared by every head. () = the encoder's own.
    encoder_options: tuple[tuple[str, object], ...] = ()

    def __post_init__(self) -> None:
        # A config read back from JSON has lists where pairs were tuples: frozen and hashable again.
        object.__setattr__(self, "encoder_options", tuple((str(k), v) for k, v in self.encoder_options))


def task_of(cfg: TrainConfig) -> T.Task:
    """The task a run trains and is tested on: the registry's, at the run's length scale."""
    return T.scaled(T.get(cfg.task), cfg.length_scale)


def fixed_test_set(task: T.Task, split: str, n: int, test_seed: int) -> T.Batch:
    """A fixed set of strings of a split, drawn from `test_seed` (the validation sets). Test sets
    are test_sets(cfg): these strings with every training and validation string taken out."""
    return task.sample(split, np.random.default_rng(derived_seed(test_seed, f"{task.name}/{split}")), n)


def training_batches(cfg: TrainConfig) -> Iterator[T.Batch]:
    """The stream of training strings of a run, batch by batch: what train() sees, and what every
    test set is kept apart from (lab/disjoint.py)."""
    task = task_of(cfg)
    rng = np.random.default_rng(derived_seed(cfg.seed, f"train/{cfg.task}"))
    for _ in range(cfg.steps):
        yield task.sample("id", rng, cfg.batch_size)


def validation_sets(cfg: TrainConfig) -> tuple[T.Batch, ...]:
    """The in-distribution validation strings of a run: the learning curve's (n_val) and the
    learning-rate sweep's (lab/regenerate.py). Never a test string."""
    task = task_of(cfg)
    return (
        fixed_test_set(task, "id", cfg.n_val, derived_seed(cfg.test_seed, "val")),
        fixed_test_set(task, "id", N_VALIDATION, derived_seed(cfg.test_seed, "validation")),
    )
