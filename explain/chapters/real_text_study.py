"""The numbers of the "Trained on real text" lab, read from the study's files (assets/lm/study/,
written by `python -m lab.regenerate lm_study`, lab/lm_study.py): every encoding trained with several
seeds, each run evaluated per 128-byte block of the same held-out bytes. Numbers only, no words.

How a number on the page is made (every one from these files, nothing typed in):
- **per run** a single value: the mean over the predicted bytes (the blocks are equal in size, so the
  mean of the block means), or a paired difference over the same bytes (two readings of the same
  blocks, or a model against an n-gram on the same blocks);
- **over seeds**: the mean of the per-seed values and a 95% Student-t interval over them
  (mean ± t₀.₉₇₅,ₙ₋₁ · s/√n). The intervals measure how much the result depends on the seed (initial
  weights and the order of the training windows), which is what a second training run would change;
  the evaluation's own sampling noise over blocks is much smaller and is not added.
- a **difference between two encodings** is paired by seed (seed k of each read the same training
  windows in the same order), then taken over seeds.
- a **verdict** (better, worse, uses, hurts) only where the interval excludes 0 — with 3 seeds the
  t factor is 4.30, so only a difference large against its seed-to-seed spread gets one.

Run kinds: the registry's encodings (lab.lm_study.ENCODINGS), RoPE's stretches applied at inference
to each RoPE seed (the eval's "stretches"), and the fine-tunes (lab.lm_study.FINETUNES: a run whose
metadata names its base run). A kind's label comes from its catalogue entry (explain/methods.py for a
registry name, real_text.run.<kind> for a fine-tune).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from encoders import REGISTRY
from explain import methods
from explain.bounds import bounded
from explain.i18n import t
from lab.corpus import LM_DIR

STUDY = str(LM_DIR / "study")
BLOCK = 128  # bytes per evaluation block (lab.lm_study.BLOCK): every per-byte number is kept per block

# Student's t, two-sided 95% (the 0.975 quantile), by degrees of freedom; tests/test_real_text.py checks
# it against scipy.stats.t.ppf. More seeds than the table covers use the last (conservative) value.
T975 = (
    12.706204736,
    4.30265273,
    3.182446305,
    2.776445105,
    2.570581836,
    2.446911851,
    2.364624252,
    2.306004135,
    2.262157163,
)


@dataclass(frozen=True)
class Estimate:
    """A mean over n values (one per seed) and its 95% interval (NaN with fewer than two)."""

    mean: float
    lo: float
    hi: float
    n: int
    below: int = 0  # how many of the n values are below 0
    above: int = 0  # … and above 0

    @property
    def sign(self) -> int:
        """+1 when the interval lies above 0, −1 below, 0 when it contains 0 (not distinguishable)."""
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            return 0
        return 1 if self.lo > 0 else -1 if self.hi < 0 else 0

    def text(self, digits: int = 3) -> str:
        """“2.345 [2.301, 2.389]”."""
        if not math.isfinite(self.lo):
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} [{self.lo:.{digits}f}, {self.hi:.{digits}f}]"

    def signed_text(self, digits: int = 3) -> str:
        """“+0.120 [+0.080, +0.160]”: a change, with its sign."""
        if not math.isfinite(self.lo):
            return signed(self.mean, digits)
        return f"{signed(self.mean, digits)} [{signed(self.lo, digits)}, {signed(self.hi, digits)}]"


def signed(x: float, digits: int = 3) -> str:
    """x with its sign, "+0.012"; one that rounds to zero at `digits` is "0.000" (not "-0.000", which
    reads as a result of its own)."""
    text = f"{x:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def over_seeds(values: list[float]) -> Estimate:
    """Mean ± t·s/√n over the per-seed values (s with ddof = 1)."""
    v = np.asarray(values, dtype=float)
    n = int(v.size)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    mean = float(v.mean())
    below, above = int((v < 0).sum()), int((v > 0).sum())
    if n < 2:
        return Estimate(mean, math.nan, math.nan, n, below, above)
    half = T975[min(n - 1, len(T975)) - 1] * float(v.std(ddof=1)) / math.sqrt(n)
    return Estimate(mean, mean - half, mean + half, n, below, above)


# --- the files ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One finished, evaluated run: its metadata (<run>.json) and evaluation (<run>.eval.json)."""

    meta: dict[str, Any]
    ev: dict[str, Any]

    def long(self, length: int) -> np.ndarray | None:
        """Per block: bits per byte inside non-overlapping windows of `length` (None: no value)."""
        v = self.ev["long"].get(str(length))
        return None if v is None else np.asarray(v, dtype=float)

    def capped(self) -> np.ndarray:
        """Per block: bits per byte with the context capped at the training length (sliding window)."""
        return np.asarray(self.ev["capped"], dtype=float)


@dataclass(frozen=True)
class Study:
    runs: dict[str, dict[int, Run]]  # kind → seed → run (base encodings and fine-tunes)
    anchors: dict[str, Any]  # anchors.json ({} before it is computed)
    corpus: dict[str, Any]  # assets/lm/corpus.json: the corpus's recipe and checksums
    encodings: tuple[str, ...]  # trained registry encodings, in lab.lm_study.ENCODINGS' order
    finetunes: tuple[str, ...]  # fine-tune kinds (their metadata names a base run)
    stretches: tuple[str, ...]  # schemes applied at inference to the stretched encoding's runs
    stretched: str | None  # the encoding the stretches and fine-tunes start from
    lengths: tuple[int, ...]  # evaluation lengths, shortest (the training length) first

    @property
    def train_len(self) -> int:
        return self.lengths[0]

    @property
    def top(self) -> int:
        return self.lengths[-1]

    def seeds(self, kind: str) -> tuple[int, ...]:
        """The seeds a kind has (a stretch: those of the encoding it stretches)."""
        source = self.stretched if (kind in self.stretches and self.stretched) else kind
        return tuple(sorted(self.runs.get(source, {})))

    def all_seeds(self) -> tuple[int, ...]:
        return tuple(sorted({s for r in self.runs.values() for s in r}))

    def settings(self, kind: str | None = None) -> dict[str, Any]:
        """A run's settings (the first encoding's first seed unless a kind is named)."""
        kind = kind or self.encodings[0]
        return dict(next(iter(self.runs[kind].values())).meta["settings"])


def _order(kinds: set[str]) -> list[str]:
    """Registry order: the atlas lists methods the same way everywhere."""
    return [k for k in REGISTRY if k in kinds]


@bounded(2)
def load(directory: str = STUDY) -> Study | None:
    """Every run with both its files, or None when no run is finished."""
    d = Path(directory)
    runs: dict[str, dict[int, Run]] = {}
    for ev_path in sorted(d.glob("*.eval.json")):
        name = ev_path.name.removesuffix(".eval.json")
        meta_path = d / f"{name}.json"
        if not meta_path.exists():
            continue
        kind, seed = name.rsplit("-s", 1)
        runs.setdefault(kind, {})[int(seed)] = Run(json.loads(meta_path.read_text()), json.loads(ev_path.read_text()))
    if not runs:
        return None
    finetunes = tuple(sorted(k for k, r in runs.items() if any(x.meta.get("base") for x in r.values())))
    encodings = tuple(_order(set(runs) - set(finetunes)))
    if not encodings:
        return None
    stretched = next((k for k in encodings if any("stretches" in r.ev for r in runs[k].values())), None)
    stretches: tuple[str, ...] = ()
    if stretched is not None:
        first = next(r for r in runs[stretched].values() if "stretches" in r.ev)
        stretches = tuple(first.ev["stretches"])
    anchors_path = d / "anchors.json"
    anchors = json.loads(anchors_path.read_text()) if anchors_path.exists() else {}
    corpus_path = d.parent / "corpus.json"
    corpus = json.loads(corpus_path.read_text()) if corpus_path.exists() else {}
    first_run = next(iter(runs[encodings[0]].values()))
    lengths = tuple(sorted(int(n) for n in first_run.ev["long"]))
    return Study(runs, anchors, corpus, encodings, finetunes, stretches, stretched, lengths)


def label(kind: str, lang: str | None = None) -> str:
    """A run kind's short name: a registry method's (methods.short) or a fine-tune's."""
    return methods.short(kind, lang) if kind in REGISTRY else t(f"real_text.run.{kind}", lang)


# --- per-run values -------------------------------------------------------------------------------


def _long(st: Study, kind: str, seed: int, length: int) -> np.ndarray | None:
    """Per block at `length`: a run's own reading, or (a stretch) the stretched encoding's run of
    this seed read with the scheme applied at inference."""
    if kind in st.stretches:
        assert st.stretched is not None
        run = st.runs[st.stretched].get(seed)
        v = None if run is None else run.ev.get("stretches", {}).get(kind, {}).get(str(length))
        return None if v is None else np.asarray(v, dtype=float)
    run = st.runs.get(kind, {}).get(seed)
    return None if run is None else run.long(length)


def _capped(st: Study, kind: str, seed: int) -> np.ndarray | None:
    """The reference every same-bytes difference of `kind` subtracts: the kind's own capped reading;
    for a stretch or a fine-tune, the capped reading of the base run it came from (the trained model
    the scheme is applied to: what it scores at its own training length)."""
    base = st.stretched if (kind in st.stretches or kind in st.finetunes) else kind
    run = st.runs.get(base or kind, {}).get(seed)
    return None if run is None else run.capped()


def bpb(st: Study, kind: str, seed: int, length: int) -> float | None:
    """Bits per byte in non-overlapping windows of `length` (the mean over every predicted byte)."""
    v = _long(st, kind, seed, length)
    return None if v is None else float(v.mean())


def capped_bpb(st: Study, kind: str, seed: int) -> float | None:
    v = _capped(st, kind, seed)
    return None if v is None else float(v.mean())


def past_blocks(length: int, train: int, n_blocks: int) -> np.ndarray:
    """Indices of the blocks whose every byte sits at a window position ≥ `train` in windows of
    `length` bytes: the only bytes whose context differs from the capped reading."""
    per = length // BLOCK
    b = np.arange(n_blocks)
    return b[(b % per) >= (train // BLOCK)]


def past(st: Study, kind: str, seed: int, length: int) -> float | None:
    """The same-bytes test: the bytes past the first `train` of each `length` window, read inside
    the long window minus read with context capped at `train` — what the context past the training
    length buys (negative: it helps)."""
    long, capped = _long(st, kind, seed, length), _capped(st, kind, seed)
    if long is None or capped is None or length <= st.train_len:
        return None
    idx = past_blocks(length, st.train_len, min(len(long), len(capped)))
    return float((long[idx] - capped[idx]).mean())


def change(st: Study, kind: str, seed: int, length: int) -> float | None:
    """Bits per byte at `length` minus at the training length, non-overlapping windows (the same bytes
    are predicted at both lengths: every length reads the same held-out bytes)."""
    a, b = bpb(st, kind, seed, length), bpb(st, kind, seed, st.train_len)
    return None if a is None or b is None else a - b


def vs_anchor(st: Study, kind: str, seed: int, order: int) -> float | None:
    """Bits per byte at the training length minus the byte n-gram of `order` on the same bytes, its
    context cut at the same window starts."""
    a = st.anchors.get("ngram", {}).get(str(order))
    v = _long(st, kind, seed, st.train_len)
    if a is None or v is None:
        return None
    return float((v - np.asarray(a, dtype=float)).mean())


def anchor_bpb(st: Study, order: int, cut: bool = True) -> float | None:
    a = st.anchors.get("ngram" if cut else "ngram_uncut", {}).get(str(order))
    return None if a is None else float(np.mean(a))


# --- over seeds -----------------------------------------------------------------------------------


def seed_values(st: Study, kind: str, f: Callable[[Study, str, int], float | None]) -> list[float]:
    return [v for s in st.seeds(kind) if (v := f(st, kind, s)) is not None]


def over(st: Study, kind: str, f: Callable[[Study, str, int], float | None]) -> Estimate | None:
    """f over the kind's seeds (None when no seed has a value)."""
    v = seed_values(st, kind, f)
    return over_seeds(v) if v else None


def paired(st: Study, a: str, b: str, f: Callable[[Study, str, int], float | None]) -> Estimate | None:
    """f(a) − f(b), seed by seed over the seeds both have."""
    d = [
        fa - fb
        for s in sorted(set(st.seeds(a)) & set(st.seeds(b)))
        if (fa := f(st, a, s)) is not None and (fb := f(st, b, s)) is not None
    ]
    return over_seeds(d) if d else None


def at(length: int) -> Callable[[Study, str, int], float | None]:
    return lambda st, k, s: bpb(st, k, s, length)


def past_at(length: int) -> Callable[[Study, str, int], float | None]:
    return lambda st, k, s: past(st, k, s, length)


def change_at(length: int) -> Callable[[Study, str, int], float | None]:
    return lambda st, k, s: change(st, k, s, length)


def vs_order(order: int) -> Callable[[Study, str, int], float | None]:
    return lambda st, k, s: vs_anchor(st, k, s, order)


def lowest(st: Study, kinds: list[str], f: Callable[[Study, str, int], float | None]) -> tuple[str, list[str]] | None:
    """The kind with the lowest mean of f, and those a seed-paired interval cannot tell from it."""
    have = [(e.mean, k) for k in kinds if (e := over(st, k, f)) is not None]
    if not have:
        return None
    best = min(have)[1]
    ties = [k for _, k in sorted(have) if k != best and ((d := paired(st, k, best, f)) is None or d.sign <= 0)]
    return best, ties


# --- training curves ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Curve:
    steps: list[int]
    heldout: list[float]  # mean over seeds at each step
    train: list[float]
    tail_change: Estimate | None  # held-out change over the last `tail` steps, over seeds


def curve(st: Study, kind: str, tail: int = 1000) -> Curve | None:
    runs = [st.runs[kind][s] for s in st.seeds(kind)]
    if not runs:
        return None
    steps = [int(p["step"]) for p in runs[0].meta["curve"]]
    held = np.array(
        [[float(p["heldout_bpb"]) for p in r.meta["curve"]] for r in runs if len(r.meta["curve"]) == len(steps)]
    )
    tr = np.array(
        [[float(p["train_bpb"]) for p in r.meta["curve"]] for r in runs if len(r.meta["curve"]) == len(steps)]
    )
    tail_change = None
    if steps and steps[-1] - tail in steps:
        k = steps.index(steps[-1] - tail)
        tail_change = over_seeds(list(held[:, -1] - held[:, k]))
    return Curve(steps, list(held.mean(axis=0)), list(tr.mean(axis=0)), tail_change)


@dataclass(frozen=True)
class FarBucket:
    """T5's shared far bucket, over the T5 seeds: where it starts, and per layer the attention mass
    on it near the end of windows at each length (mean over heads, then over seeds)."""

    far_from: int
    share: dict[int, list[Estimate]]  # length → per layer
    grows: int  # seeds in which every layer's share is larger at the top length
    seeds: int
    bias: Estimate  # the far bucket's learned bias, mean over heads, over seeds


def far_bucket(st: Study, kind: str) -> FarBucket | None:
    fbs = [r.ev["t5_far_bucket"] for r in st.runs.get(kind, {}).values() if "t5_far_bucket" in r.ev]
    if not fbs:
        return None
    lengths = sorted(int(n) for n in fbs[0]["share"])
    share: dict[int, list[Estimate]] = {}
    for n in lengths:
        per_seed = np.array([[float(np.mean(h)) for h in fb["share"][str(n)]] for fb in fbs])  # (seed, layer)
        share[n] = [over_seeds(list(per_seed[:, layer])) for layer in range(per_seed.shape[1])]
    lo, hi = str(lengths[0]), str(lengths[-1])
    grows = sum(
        all(float(np.mean(b)) > float(np.mean(a)) for a, b in zip(fb["share"][lo], fb["share"][hi], strict=True))
        for fb in fbs
    )
    bias = over_seeds([float(np.mean(fb["far_bias"])) for fb in fbs])
    return FarBucket(int(fbs[0]["far_from"]), share, int(grows), len(fbs), bias)


@dataclass(frozen=True)
class Totals:
    cpu_hours: float  # training + evaluation, every finished run
    runs: int
    missing: list[tuple[str, int]] = field(default_factory=list)  # (kind, seed) of the planned set not finished


def totals(st: Study) -> Totals:
    cpu = sum(
        float(r.meta.get("train_cpu_seconds", 0)) + float(r.ev.get("cpu_seconds", 0))
        for runs in st.runs.values()
        for r in runs.values()
    )
    from lab import lm_study  # the planned set: what the regeneration command trains

    kinds = (*lm_study.ENCODINGS, *lm_study.FINETUNES)
    missing = [(k, s) for s in lm_study.SEEDS for k in kinds if s not in st.runs.get(k, {})]
    return Totals(cpu / 3600.0, sum(len(r) for r in st.runs.values()), missing)
