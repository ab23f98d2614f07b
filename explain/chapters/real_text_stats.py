"""The statistics of the "Trained on real text" lab, over assets/lm/index.json's per-window values.

- A point: the mean bits per byte over the held-out windows at one evaluation length L′, with a 95%
  interval mean ± z·s/√n over its n per-window values (n ≥ 64 windows, where Student's t differs
  from z = 1.96 by under 2%).
- A change from 128 to k·128 is *paired*: the window j at length k·128 predicts exactly the bytes of
  the k windows j·k … j·k + k − 1 at 128 (lab/lm.py, window_bits), so d_j = w_j(k·128) − the mean of
  those k windows, and the interval is taken over the d_j. Two models at one length pair window by
  window the same way.
- A sign (+1 above 0, −1 below, 0 not distinguishable) only where the interval excludes 0.
These intervals measure the evaluation's sampling noise over held-out windows, not seed-to-seed
variation: there is one trained model (one seed) per encoding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from lab.lm import TRAIN_LEN

Z975 = 1.959964  # the two-sided 95% quantile of the standard normal


@dataclass(frozen=True)
class Estimate:
    """A mean over n values and its 95% interval (NaN with fewer than two values)."""

    mean: float
    lo: float
    hi: float
    n: int

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
            return f"{self.mean:+.{digits}f}"
        return f"{self.mean:+.{digits}f} [{self.lo:+.{digits}f}, {self.hi:+.{digits}f}]"


def estimate(values: np.ndarray | list[float]) -> Estimate:
    """Mean ± z·s/√n (s the sample standard deviation, ddof = 1)."""
    v = np.asarray(values, dtype=float)
    n = int(v.size)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    mean = float(v.mean())
    if n < 2:
        return Estimate(mean, math.nan, math.nan, n)
    half = Z975 * float(v.std(ddof=1)) / math.sqrt(n)
    return Estimate(mean, mean - half, mean + half, n)


def _bpb(index: dict[str, Any], name: str) -> dict[str, Any]:
    """The bpb entry ({"128": {"bpb", "windows"} | None, …}) of a trained model or a RoPE stretch."""
    if name in index.get("models", {}):
        return dict(index["models"][name]["bpb"])
    return dict(index.get("stretches", {}).get(name, {}).get("bpb", {}))


def windows(index: dict[str, Any], name: str, length: int) -> np.ndarray | None:
    """The per-window bits per byte of `name` at `length` (None: no value — e.g. a learned table
    has no rows past its training length)."""
    entry = _bpb(index, name).get(str(length))
    return None if entry is None else np.asarray(entry["windows"], dtype=float)


def point(index: dict[str, Any], name: str, length: int) -> Estimate | None:
    w = windows(index, name, length)
    return None if w is None else estimate(w)


def paired_change(index: dict[str, Any], name: str, length: int, base: int = TRAIN_LEN) -> Estimate | None:
    """Bits per byte at `length` minus at `base`, paired over the same predicted bytes: window j at
    `length` against the mean of the k = length / base windows it covers at `base`."""
    long, short = windows(index, name, length), windows(index, name, base)
    if long is None or short is None:
        return None
    k = length // base
    covered = short[: len(long) * k].reshape(len(long), k).mean(axis=1)  # (windows at length,)
    return estimate(long - covered)


def paired_difference(index: dict[str, Any], a: str, b: str, length: int) -> Estimate | None:
    """a − b at one length, window by window (both read the same held-out windows)."""
    wa, wb = windows(index, a, length), windows(index, b, length)
    if wa is None or wb is None or len(wa) != len(wb):
        return None
    return estimate(wa - wb)


def lowest_at(idx: dict[str, Any], length: int, names: tuple[str, ...]) -> tuple[str, list[str]] | None:
    """The line with the lowest mean at `length`, and the others a paired interval cannot tell from
    it (their difference's interval contains 0)."""
    have = [(p.mean, n) for n in names if (p := point(idx, n, length)) is not None]
    if not have:
        return None
    best = min(have)[1]
    ties = []
    for _, n in sorted(have):
        if n == best:
            continue
        d = paired_difference(idx, n, best, length)
        if d is None or d.sign <= 0:
            ties.append(n)
    return best, ties


def paired_change_gap(idx: dict[str, Any], a: str, b: str, top: int, base: int) -> Estimate | None:
    """(a's change from base to top) − (b's), paired window by window at `top`."""
    wa, wb = windows(idx, a, top), windows(idx, b, top)
    sa, sb = windows(idx, a, base), windows(idx, b, base)
    if wa is None or wb is None or sa is None or sb is None or len(wa) != len(wb):
        return None
    k = top // base
    da = wa - sa[: len(wa) * k].reshape(len(wa), k).mean(axis=1)  # (windows at top,)
    db = wb - sb[: len(wb) * k].reshape(len(wb), k).mean(axis=1)
    return estimate(da - db)


BOOTSTRAP = 4000  # resamples behind a bootstrap interval
BOOTSTRAP_SEED = 0  # fixed: the page's intervals are the same on every run


def bootstrap(values: np.ndarray | list[float], resamples: int = BOOTSTRAP, seed: int = BOOTSTRAP_SEED) -> Estimate:
    """The mean of n values and its 95% percentile-bootstrap interval: the n values (one per long
    window, or per block of bytes) resampled with replacement `resamples` times, a fixed seed."""
    v = np.asarray(values, dtype=float)
    n = int(v.size)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    if n < 2:
        return Estimate(float(v.mean()), math.nan, math.nan, n)
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return Estimate(float(v.mean()), float(lo), float(hi), n)
