"""The attention lab's length test: the sentence repeated past a "training length", each encoding
configured for that length (PositionalEncoding.config_for_lengths); what each does out there.

Axis legend: h heads, n tokens of the repeated text, i query, j key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from encoders import REGISTRY
from encoders.base import PositionOutOfRange
from encoders.text import tokenize
from explain.bounds import bounded

from .attention_lab import D_MODEL, pick_head
from .common import run_tokens

MAX_LENGTH = 512  # the length test repeats the sentence up to this many tokens


def repeated_tokens(tokens: tuple[str, ...], length: int) -> tuple[str, ...]:
    """The sentence repeated (cut at the end) to exactly `length` tokens."""
    if not tokens:
        return ()
    reps = -(-length // len(tokens))
    return (tokens * reps)[:length]


def length_config(method: str, train_len: int, length: int) -> object:
    """The encoder's config for a model "trained" on `train_len` tokens and run on `length`: a learned
    table gets exactly train_len rows; the RoPE scalings stretch train_len to the run's length."""
    return REGISTRY[method].config_for_lengths(train_len, length)


@dataclass
class LengthRun:
    method: str
    label: str
    error: str  # non-empty when the encoder has no representation for some positions
    first_missing: int  # the first position without one (−1 when none is missing)
    entropy: np.ndarray  # (n,) attention entropy per query (nats, mean over heads); NaN if error
    distance: np.ndarray  # (n,) Σ_j w_ij |i − j| per query (mean over heads)
    weights: np.ndarray  # (i, j) chosen head or head mean; empty if error


@dataclass
class LengthTest:
    tokens: tuple[str, ...]
    train_len: int
    runs: tuple[LengthRun, ...]
    uniform_entropy: np.ndarray  # (n,) the same two numbers for attention spread evenly over the
    uniform_distance: np.ndarray  # (n,) keys a query may see: the "no preference" reference

    @property
    def ok(self) -> tuple[LengthRun, ...]:
        """The runs that could run at all (a learned table may have too few rows)."""
        return tuple(r for r in self.runs if not r.error)

    @property
    def failed(self) -> tuple[LengthRun, ...]:
        return tuple(r for r in self.runs if r.error)

    @property
    def queries(self) -> np.ndarray:
        """(n,) the query positions 0 … n−1, the curves' x."""
        return np.arange(len(self.tokens))

    def big_map(self, method: str) -> tuple[LengthRun, float]:
        """The run of `method` (or the first that ran) and the top of its colour range: the 99.5th
        percentile of its weights, in [0.01, 1] — at hundreds of tokens most weights are ≈ 1/n."""
        ok = self.ok
        if not ok:
            raise ValueError("no encoding ran at this length")
        run = next((r for r in ok if r.method == method), ok[0])
        return run, min(1.0, max(0.01, float(np.quantile(run.weights, 0.995))))


# Cache bounds (pages/labs/attention_lab.py): A panels result holds up to 4 maps of 256 × 256 float64 (~2 MB),
# a shift result 4 such maps, a length result up to 4 maps of 512 × 512 (~8 MB): hence the small bounds.
@bounded(8)
def length_test(
    text: str,
    seed: int,
    methods: tuple[str, ...],
    train_len: int,
    length: int,
    n_heads: int = 4,
    causal: bool = False,
    head: int | None = None,
) -> LengthTest:
    """The sentence repeated to `length` tokens, each encoding "trained" on `train_len` of them."""
    if not 1 <= train_len <= MAX_LENGTH or not 1 <= length <= MAX_LENGTH:
        raise ValueError(f"lengths must be 1…{MAX_LENGTH}")
    tokens = repeated_tokens(tokenize(text).tokens, length)
    n = len(tokens)
    runs = []
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    for m in methods:
        name = REGISTRY[m].label
        try:
            view = run_tokens(tokens, seed, m, D_MODEL, n_heads, causal, 0, length_config(m, train_len, n))
        except PositionOutOfRange as e:
            nan = np.full(n, np.nan)
            runs.append(LengthRun(m, name, str(e), e.position, nan, nan, np.zeros((0, 0))))
            continue
        w = view.weights  # (h, i, j)
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -np.where(w > 0, w * np.log(w), 0.0).sum(-1).mean(0)  # (i,)
        dist = (w * np.abs(i - j)).sum(-1).mean(0)  # (i,)
        runs.append(LengthRun(m, name, "", -1, ent, dist, pick_head(w, head)))
    seen = (j <= i) if causal else np.ones((n, n), dtype=bool)  # (i, j) keys each query may see
    count = seen.sum(-1)  # (i,)
    uniform_distance = (seen * np.abs(i - j)).sum(-1) / count
    return LengthTest(tokens, train_len, tuple(runs), np.log(count.astype(np.float64)), uniform_distance)
