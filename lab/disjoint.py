"""Test strings that no model was trained or validated on (issue 39).

A test split's strings are drawn from its fixed seed (TrainConfig.test_seed), as they always were,
and every string that is also a training string of a shipped run, or a validation string, is
rejected and replaced by the next draw of the same generator (generate and reject): the test set is
then a sample of the split's distribution *restricted to unseen strings*. Where nothing collides
(Flip-Flop, Selective Copy: their spaces are astronomically large) the strings are exactly those
drawn before; Counting's programs are mostly `pass`, so short ones recur, and about a third of its
in-distribution probability mass is covered by one training stream (`coverage`).

"Shipped runs" of a task at a length scale are every reported seed and the sweep's seed
(lab/shipped.py) at the shipped steps and batch size, the closer-to-paper runs (lab/toy_more.py) at
their scale, and the run being tested itself; the validation strings are the learning curve's and
the sweep's (lab.train.validation_sets). Strings are compared token for token (padding dropped).
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from encoders.base import derived_seed
from lab import tasks as T
from lab.toy_data import TrainConfig, task_of, training_batches, validation_sets

MAX_DRAWS = 50  # draws of n strings before giving up on filling a test set (never reached here)


def keys(task: T.Task, batch: T.Batch) -> list[bytes]:
    """One hashable key per string: its tokens, trailing padding dropped where the task pads."""
    out = []
    for row in batch.tokens:
        if task.vocab[0] == T.PAD:
            row = row[: int(np.flatnonzero(row).max()) + 1] if row.any() else row[:0]
        out.append(row.astype(np.int64).tobytes())
    return out


def shipped_runs(cfg: TrainConfig) -> tuple[TrainConfig, ...]:
    """The shipped training runs of cfg's task at cfg's length scale (encoding and rate do not
    change the stream: it depends on the task, the seed, the steps and the batch size), and cfg."""
    from lab.shipped import SEEDS, SHIPPED, SWEEP_SEED

    runs = [cfg]
    if cfg.length_scale == 1 and cfg.task in SHIPPED:
        runs += [replace(SHIPPED[cfg.task], seed=s) for s in (*SEEDS, SWEEP_SEED)]
    from lab.shipped import LARGE

    if (cfg.task, cfg.length_scale) == (LARGE.task, LARGE.length_scale):
        runs.append(LARGE)
    return tuple(dict.fromkeys(_stream_key(r) for r in runs))


def _stream_key(cfg: TrainConfig) -> TrainConfig:
    """Only what decides the training strings (so equal streams are counted once)."""
    return TrainConfig(
        cfg.task,
        "",
        steps=cfg.steps,
        seed=cfg.seed,
        batch_size=cfg.batch_size,
        length_scale=cfg.length_scale,
        n_val=cfg.n_val,
        test_seed=cfg.test_seed,
    )


# Bounded: the shipped streams (3 tasks × seeds 0–2 and the sweep seed, the larger Flip-Flop run)
# are 13; the rest room is for live trainings of the lab page. One Counting stream is ~13,000 keys.
@functools.lru_cache(maxsize=32)
def stream_keys(cfg: TrainConfig) -> frozenset[bytes]:
    """Every training string of one run (cfg as _stream_key makes it)."""
    task = task_of(cfg)
    return frozenset(k for b in training_batches(cfg) for k in keys(task, b))


@functools.lru_cache(maxsize=32)  # one per stream above
def validation_keys(cfg: TrainConfig) -> frozenset[bytes]:
    task = task_of(cfg)
    return frozenset(k for b in validation_sets(cfg) for k in keys(task, b))


def seen(cfg: TrainConfig) -> frozenset[bytes]:
    """The strings a test set of cfg must avoid: every shipped run's training stream and the
    validation strings."""
    out: set[bytes] = set(validation_keys(_stream_key(cfg)))
    for run in shipped_runs(cfg):
        out |= stream_keys(_stream_key(run))
    return frozenset(out)


def seen_any(task: str) -> frozenset[bytes]:
    """Every string a probe of `task` must avoid, at every length scale the lab ships (the probes'
    strings are compared with all of them: a string of another length never matches)."""
    from lab.shipped import LARGE, SHIPPED

    out = set(seen(SHIPPED[task]))
    if task == LARGE.task:
        out |= seen(LARGE)
    return frozenset(out)


def test_set(cfg: TrainConfig, split: str) -> T.Batch:
    """cfg.n_test strings of `split`, none of them seen (generate and reject from the split's seed)."""
    task = task_of(cfg)
    rng = np.random.default_rng(derived_seed(cfg.test_seed, f"{task.name}/{split}"))
    avoid = seen(cfg)
    kept: list[T.Batch] = []
    have = 0
    for _ in range(MAX_DRAWS):
        b = task.sample(split, rng, cfg.n_test)
        ok = np.array([k not in avoid for k in keys(task, b)])
        kept.append(_rows(b, np.flatnonzero(ok)))
        have += int(ok.sum())
        if have >= cfg.n_test:
            return _take(_concat(kept), cfg.n_test)
    raise RuntimeError(f"{task.name}/{split}: fewer than {cfg.n_test} unseen strings in {MAX_DRAWS} draws")


def coverage(cfg: TrainConfig, split: str = "id", n: int = 4000) -> dict:
    """How much of a split's distribution the training strings cover: of n fresh draws (their own
    seed), the share that is a training string of one run (cfg's seed) and of every shipped run,
    and the distinct strings of cfg's stream."""
    task = task_of(cfg)
    b = task.sample(split, np.random.default_rng(derived_seed(cfg.test_seed, f"{task.name}/{split}/coverage")), n)
    ks = keys(task, b)
    one = stream_keys(_stream_key(cfg))
    every = seen(cfg)
    return {
        "draws": n,
        "in_one_stream": sum(k in one for k in ks) / n,
        "in_any_seen": sum(k in every for k in ks) / n,
        "stream_strings": cfg.steps * cfg.batch_size,
        "stream_distinct": len(one),
    }


def _rows(b: T.Batch, idx: np.ndarray) -> T.Batch:
    return T.Batch(b.tokens[idx], b.answer[idx], b.distance[idx], b.group[idx])


def _take(b: T.Batch, n: int) -> T.Batch:
    return _rows(b, np.arange(n))


def _concat(parts: list[T.Batch]) -> T.Batch:
    """Rows of several batches in one (shorter rows padded at the end, as tasks._pack does)."""
    n = max(p.tokens.shape[1] for p in parts)

    def pad(a: np.ndarray, fill: int) -> np.ndarray:
        return np.pad(a, ((0, 0), (0, n - a.shape[1])), constant_values=fill)

    return T.Batch(
        np.concatenate([pad(p.tokens, 0) for p in parts]),
        np.concatenate([pad(p.answer, False) for p in parts]),
        np.concatenate([pad(p.distance, -1) for p in parts]),
        np.concatenate([p.group for p in parts]),
    )
