"""Evaluation-only probes of the shipped checkpoints (issue 19): one factor at a time, and length.

Nothing here trains. Every shipped seed of every (task, encoding) is evaluated on fixed test sets
that change one thing at a time against the training distribution, and on test strings that grow
from the training length to 4×; the result is assets/toy/probes.json, which the page reads.

    Flip-Flop (trained on FFL(0.8), 32 instructions):
      sparser   FFL(0.98), 32 instructions   sparser, same length
      longer    FFL(0.8),  64 instructions   same sparsity, longer
      both      FFL(0.98), 64 instructions   both (the "OOD" split of the results table)
      …_hard    the reads of a split that have two or more earlier writes (one or more
                *distractors*: writes other than the one to recall)
    Counting (trained on 3–48 statements; answers are whatever the programs count to):
      longer    49–96 statements, answers ≤ K    longer programs, answers as in training
      larger    3–48 statements,  answers > K    larger answers, training lengths
      both      49–96 statements, answers > K
    where K is the 95th percentile of the answers of in-distribution programs (probes.json "K").

Distance is the task's own (Batch.distance); distractors are, per answer, the earlier writes other
than the latest (Flip-Flop) or the other variables of the program (Counting).
"""

from __future__ import annotations

import functools
import itertools
import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from encoders.base import PositionOutOfRange, derived_seed
from lab import parallel
from lab import tasks as T
from lab.train import DISTANCE_EDGES, load, predict

N_PROBE = 500  # strings per probe (a test split's size)
PROBE_SEED = 4048  # the probes' own fixed strings (none a training or validation string: lab/disjoint.py)
LENGTH_FACTORS = (1.0, 1.5, 2.0, 3.0, 4.0)  # test length ÷ training length
DISTRACTOR_BINS = (0, 1, 2, 3)  # 3 stands for "3 or more"
ANSWER_QUANTILE = 95  # Counting's K: this percentile of the in-distribution answers


@dataclass(frozen=True)
class Probe:
    name: str
    config: Any  # the task's sampler config
    answers: str = "all"  # "all", "small" (≤ K), "large" (> K), "hard" (≥ 1 distractor)


def distractors(task: str, batch: T.Batch) -> np.ndarray:
    """(b, n) per answer position: Flip-Flop, earlier writes other than the latest; Counting, the
    program's other variables; Selective Copy, 0. −1 elsewhere."""
    out = np.full(batch.tokens.shape, -1, dtype=np.int64)
    if task == "flipflop":
        ops = batch.tokens[:, 0::2]  # (b, m) instruction ids: 0 w, 1 r, 2 i
        writes_before = np.cumsum(ops == 0, axis=1)  # (b, m) writes up to and including m
        out[:, 1::2] = np.where(ops == 1, writes_before - 1, -1)  # the read's bit sits at 2m + 1
    elif task == "counting":
        out = np.where(batch.answer, (batch.group - 1)[:, None], -1)
    else:
        out = np.where(batch.answer, 0, -1)
    return out


def answer_values(batch: T.Batch) -> np.ndarray:
    """Counting: the value printed at each answer position (vocabulary "0"…"10"), −1 elsewhere."""
    vocab = ("<pad>", *T.counting_vocab())
    value = np.full(len(vocab), -1, dtype=np.int64)
    for i, tok in enumerate(vocab):
        if tok.isdigit():
            value[i] = int(tok)
    return np.where(batch.answer, value[batch.tokens], -1)


def counting_k(seed: int = PROBE_SEED) -> int:
    """K: the ANSWER_QUANTILE-th percentile of the answers of in-distribution Counting programs."""
    task = T.get("counting")
    b = task.sample("id", np.random.default_rng(derived_seed(seed, "counting/K")), 4000)
    vals = answer_values(b)[b.answer]
    return int(np.percentile(vals, ANSWER_QUANTILE))


def probes(task: str, k: int, scale: int = 1) -> tuple[Probe, ...]:
    """The one-factor probes of `task`; `scale` stretches Flip-Flop's (lab.tasks.scaled), the
    closer-to-paper configuration's: × 4 is 256 tokens, "longer" 512."""
    if task == "flipflop":

        def ff(m: int, p: float) -> Any:
            return T.stretch(task, T.FlipFlopConfig(m, p), scale)

        base = (Probe("sparser", ff(32, 0.98)), Probe("longer", ff(64, 0.8)), Probe("both", ff(64, 0.98)))
        hard = tuple(Probe(f"{p.name}_hard", p.config, "hard") for p in (Probe("id", ff(32, 0.8)), *base))
        return base + hard
    if scale != 1:
        raise ValueError(f"probes at scale {scale} exist for Flip-Flop only, not {task!r}")
    if task == "counting":
        cc = T.CountingConfig
        return (
            Probe("longer", cc(min_steps=49, max_steps=96), "small"),
            Probe("larger", cc(), "large"),
            Probe("both", cc(min_steps=49, max_steps=96), "large"),
        )
    return ()


def length_config(task: str, factor: float, scale: int = 1) -> Any:
    """The training distribution (of the task × `scale`) stretched `factor` times in length, nothing
    else changed (lab.tasks.stretch; Counting's answers are kept ≤ K by the caller)."""
    return T.stretch(task, T.scaled(T.get(task), scale).split("id").config, factor)


def sample(task: str, config: Any, answers: str, k: int, purpose: str, n: int = N_PROBE) -> T.Batch:
    """n strings of `config` whose scored answers are those `answers` keeps, none of them a training
    or validation string of a shipped run (lab/disjoint.py: drawn until n are kept). For
    "small"/"large" only strings whose answer is kept count (each Counting string has one answer)."""
    from lab import disjoint

    t = T.get(task)
    avoid = disjoint.seen_any(task)
    rng = np.random.default_rng(derived_seed(PROBE_SEED, f"{task}/{purpose}"))
    rows: list[T.Batch] = []
    have = 0
    for _ in range(200):
        b = t.sample_fn(config, rng, n)
        keep = np.array([key not in avoid for key in disjoint.keys(t, b)])
        if answers in ("small", "large"):
            v = answer_values(b).max(axis=1)  # (b,) the one answer per program
            keep &= (v <= k) if answers == "small" else (v > k)
        if keep.any():
            rows.append(_rows(b, np.flatnonzero(keep)))
            have += int(keep.sum())
        if have >= n:
            break
    b = _take(_concat(rows), n)
    if answers == "hard":
        b = hard(task, b)
    return b


def hard(task: str, b: T.Batch) -> T.Batch:
    """Only the answers with one or more distractors stay scored (the same strings)."""
    return replace(b, answer=b.answer & (distractors(task, b) >= 1))


def _rows(b: T.Batch, idx: np.ndarray) -> T.Batch:
    return T.Batch(b.tokens[idx], b.answer[idx], b.distance[idx], b.group[idx])


def _take(b: T.Batch, n: int) -> T.Batch:
    return _rows(b, np.arange(min(n, len(b))))


def _concat(parts: list[T.Batch]) -> T.Batch:
    """Stack batches of different widths (padding 0 at the end, as the samplers pad)."""
    width = max(p.tokens.shape[1] for p in parts)

    def pad(a: np.ndarray, fill: Any) -> np.ndarray:
        return np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=fill)

    return T.Batch(
        np.concatenate([pad(p.tokens, 0) for p in parts]),
        np.concatenate([pad(p.answer, False) for p in parts]),
        np.concatenate([pad(p.distance, -1) for p in parts]),
        np.concatenate([p.group for p in parts]),
    )


def score(task: str, wrong: np.ndarray, batch: T.Batch) -> dict:
    """Errors and answers in all, per distance bin and per number of distractors."""
    ans = batch.answer
    dist, dis, bad = batch.distance[ans], np.minimum(distractors(task, batch)[ans], DISTRACTOR_BINS[-1]), wrong[ans]
    by_distance = []
    for lo, hi in itertools.pairwise(DISTANCE_EDGES):
        sel = (dist >= lo) & (dist < hi)
        if sel.any():
            by_distance.append({"lo": lo, "hi": hi, "n": int(sel.sum()), "errors": int(bad[sel].sum())})
    by_distractors = [
        {"k": k, "n": int((dis == k).sum()), "errors": int(bad[dis == k].sum())}
        for k in DISTRACTOR_BINS
        if (dis == k).any()
    ]
    return {
        "errors": int(bad.sum()),
        "answers": int(ans.sum()),
        "strings": int(ans.any(1).sum()),  # strings with an answer (a zero error's bound counts them)
        "by_distance": by_distance,
        "by_distractors": by_distractors,
    }


@functools.lru_cache(maxsize=8)  # (task, k): 3 tasks × the lab's scales 1 and 4, in one regeneration
def _task_strings(task: str, k: int) -> tuple[dict[str, T.Batch], dict[str, tuple[str, T.Batch]], list]:
    """A task's probe strings (per base probe), its probes as (base, batch) and its length ladder
    [(factor, tokens, batch)]: drawn from fixed seeds, so every worker process draws the same."""
    # A hard probe scores a subset of its base probe's strings: one forward pass serves both.
    strings: dict[str, T.Batch] = {}
    batches: dict[str, tuple[str, T.Batch]] = {}
    for p in probes(task, k):
        base = p.name.removesuffix("_hard")
        if base not in strings:
            strings[base] = sample(task, p.config, "all" if p.answers == "hard" else p.answers, k, base)
        batches[p.name] = (base, hard(task, strings[base]) if p.answers == "hard" else strings[base])
    ladder = []
    for f in LENGTH_FACTORS:
        cfg = length_config(task, f)
        b = sample(task, cfg, "small" if task == "counting" else "all", k, f"length{f}")
        ladder.append((f, T._max_len(task, cfg), b))
    return strings, batches, ladder


def _probe_checkpoint(item: tuple[str, int, Path, str]) -> tuple[dict[str, dict], list, list, float]:
    """One shipped checkpoint on its task's probes and length ladder (a worker's job): the score per
    probe, errors and answers per rung (None where a learned table has no row) and its CPU seconds."""
    task, k, directory, file = item
    c0 = time.thread_time()
    strings, batches, ladder = _task_strings(task, k)
    model, _cfg = load(directory / f"{file}.safetensors")
    preds = {base: predict(model, b) for base, b in strings.items()}
    scores = {name: score(task, (preds[base] != b.tokens) & b.answer, b) for name, (base, b) in batches.items()}
    row_e: list[int | None] = []
    row_a: list[int | None] = []
    for _f, _n, b in ladder:
        try:
            wrong = (predict(model, b) != b.tokens) & b.answer
        except PositionOutOfRange:  # a learned table has no row past its longest string
            row_e.append(None)
            row_a.append(None)
            continue
        row_e.append(int(wrong.sum()))
        row_a.append(int(b.answer.sum()))
    return scores, row_e, row_a, time.thread_time() - c0


def write_probes(
    directory: Path, index: dict, tasks: tuple[str, ...] | None = None, workers: parallel.Workers | None = None
) -> dict:
    """Evaluate every shipped seed of every (task, encoding) in `index` on the probes and the length
    ladder; write <directory>/probes.json and return it. With `tasks`, only those tasks are
    re-evaluated and the others kept from an existing probes.json (same probe settings). The
    checkpoints are evaluated on `workers` (lab.parallel; none: here, one after another)."""
    k = counting_k()
    out: dict[str, Any] = {
        "n": N_PROBE,
        "probe_seed": PROBE_SEED,
        "K": {"counting": k, "quantile": ANSWER_QUANTILE},
        "length_factors": list(LENGTH_FACTORS),
        "factors": {},
        "lengths": {},
        "cpu_seconds": {},
    }
    path = directory / "probes.json"
    runs = index.get("runs", {})
    todo = [t for t in tasks or tuple(T.TASKS) if any(r["task"] == t for r in runs.values())]
    jobs = [
        (task, r["encoding"], (task, k, directory, s["file"]))
        for task in todo
        for r in runs.values()
        if r["task"] == task
        for s in r["seeds"]
    ]
    t0 = time.perf_counter()
    results = (workers or parallel.Workers(1)).run_all(_probe_checkpoint, [item for _t, _e, item in jobs])
    for task in todo:
        fac: dict[str, dict[str, list]] = {p.name: {} for p in probes(task, k)}
        # The rungs' lengths from their settings: drawing the strings here would repeat the workers' work.
        tokens = [T._max_len(task, length_config(task, f)) for f in LENGTH_FACTORS]
        lengths: dict[str, Any] = {"tokens": tokens, "errors": {}, "answers": {}}
        cpu = 0.0
        for (t, enc, _item), (scores, row_e, row_a, c) in zip(jobs, results, strict=True):
            if t != task:
                continue
            for name, sc in scores.items():
                fac[name].setdefault(enc, []).append(sc)
            lengths["errors"].setdefault(enc, []).append(row_e)
            lengths["answers"].setdefault(enc, []).append(row_a)
            cpu += c
        out["factors"][task] = {"probes": [p.name for p in probes(task, k)], "results": fac}
        out["lengths"][task] = lengths
        out["cpu_seconds"][task] = round(cpu, 1)
        print(f"[probe] {task}: {out['cpu_seconds'][task]} s CPU", flush=True)
    print(f"[probe] {len(jobs)} checkpoints in {time.perf_counter() - t0:.0f} s wall", flush=True)
    if tasks is not None and path.exists():
        # Read only now, so that probes of other tasks written meanwhile are kept.
        old = json.loads(path.read_text())
        if all(old.get(key) == out[key] for key in ("n", "probe_seed", "K", "length_factors")):
            for key in ("factors", "lengths", "cpu_seconds"):
                out[key] = {**{t: v for t, v in old.get(key, {}).items() if t not in tasks}, **out[key]}
    path.write_text(json.dumps(out, indent=None, separators=(",", ":")) + "\n")
    return out
