"""Anchors for the real-text lab's scale: byte n-grams and compressors on the same held-out bytes.

Byte n-gram: interpolated modified Kneser-Ney (Chen & Goodman 1998, "An empirical study of
smoothing techniques for language modeling", §3.3 and eq. 17–19), over bytes, orders 1–5 (up to 8), trained on
the train split. For a context h (the n − 1 bytes before w) at the highest order used,

    p(w | h) = max(c(hw) − D(c(hw)), 0) / c(h•)  +  γ(h) · p_lower(w | h′)      (h′: h without its first byte)
    γ(h)     = (D1 · N1(h•) + D2 · N2(h•) + D3+ · N3+(h•)) / c(h•)

with raw counts c at the top order and *continuation* counts c′(hw) = N1+(•hw) (how many distinct
bytes precede hw in the train text) at every lower order; the order-1 level interpolates with the
uniform 1/256, so every byte keeps some mass. A context never seen (c(h•) = 0) backs off entirely.
Discounts per order and count kind from the count-of-counts n1…n4: Y = n1/(n1 + 2 n2),
D1 = 1 − 2Y n2/n1, D2 = 2 − 3Y n3/n2, D3+ = 3 − 4Y n4/n3. The distribution over the 256 bytes sums to
1 for every context (tests/test_ngram.py checks it, and a hand-computed case).

A byte with fewer than n − 1 bytes of context (a window's first bytes: the models' windows cut the
text at every `window` bytes, and so can this) uses the order its context allows, with raw counts at
its top.

Compressor: the bits a compressor needs for the held-out bytes *given* the train text,
8 · (len(C(train + held)) − len(C(train))), per held-out byte. zlib's window is 32 KiB, so it sees
little of the train text; lzma (xz, preset 9e) and bz2 are the anchors worth reading.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from dataclasses import dataclass

import numpy as np

VOCAB = 256
D_FLOOR = 0.01  # the smallest discount (see discounts)
MAX_ORDER = 8  # 8 bytes pack into the 64 bits of a uint64 key


def _keys(ids: np.ndarray, k: int) -> np.ndarray:
    """The packed k-grams of a uint8 stream, first byte most significant → (len − k + 1,) uint64."""
    n = len(ids) - k + 1
    if n <= 0:
        return np.zeros(0, np.uint64)
    out = np.zeros(n, np.uint64)
    for j in range(k):
        out = (out << np.uint64(8)) | ids[j : j + n].astype(np.uint64)
    return out


def discounts(counts: np.ndarray) -> tuple[float, float, float]:
    """(D1, D2, D3+) from the count-of-counts of `counts` (Chen & Goodman eq. 26), each kept in
    [D_FLOOR, its count]: no probability goes negative, and none reaches 0 (a discount of 0 would
    leave nothing for the lower order), with a tiny or odd corpus."""
    n = [int(np.sum(counts == r)) for r in (1, 2, 3, 4)]
    if n[0] == 0 or n[1] == 0 or n[2] == 0:
        return 0.5, 1.0, 1.5  # too few counts to estimate: conservative fixed discounts
    y = n[0] / (n[0] + 2 * n[1])
    d = (1 - 2 * y * n[1] / n[0], 2 - 3 * y * n[2] / n[1], 3 - 4 * y * n[3] / n[2])
    return tuple(min(max(v, D_FLOOR), float(c)) for v, c in zip(d, (1, 2, 3), strict=True))  # type: ignore[return-value]


@dataclass(frozen=True)
class Level:
    """One order's counts of one kind (raw or continuation), ready to look up."""

    keys: np.ndarray  # sorted packed k-grams (uint64)
    counts: np.ndarray  # their counts (float64)
    hist: np.ndarray  # sorted packed histories (k − 1 bytes) that have any k-gram
    total: np.ndarray  # Σ_w count(hw) per history
    n1: np.ndarray  # how many w have count 1, 2, ≥ 3 per history
    n2: np.ndarray
    n3: np.ndarray
    d: tuple[float, float, float]

    @classmethod
    def of(cls, keys: np.ndarray, counts: np.ndarray) -> Level:
        counts = counts.astype(np.float64)
        h = keys >> np.uint64(8)
        hist, start = np.unique(h, return_index=True)
        total = np.add.reduceat(counts, start) if len(counts) else np.zeros(0)
        n1 = np.add.reduceat((counts == 1).astype(np.float64), start) if len(counts) else np.zeros(0)
        n2 = np.add.reduceat((counts == 2).astype(np.float64), start) if len(counts) else np.zeros(0)
        n3 = np.add.reduceat((counts >= 3).astype(np.float64), start) if len(counts) else np.zeros(0)
        return cls(keys, counts, hist, total, n1, n2, n3, discounts(counts))

    def lookup(self, keys: np.ndarray, table: np.ndarray, values: np.ndarray) -> np.ndarray:
        if len(table) == 0:
            return np.zeros(len(keys))
        i = np.clip(np.searchsorted(table, keys), 0, len(table) - 1)
        return np.where(table[i] == keys, values[i], 0.0)


class KneserNey:
    """Interpolated modified Kneser-Ney over bytes, orders 1 … `order` (≤ 8), from `train`."""

    def __init__(self, train: bytes, order: int = 5):
        if not 1 <= order <= MAX_ORDER:
            raise ValueError(f"order must be 1…{MAX_ORDER}")
        self.order = order
        ids = np.frombuffer(train, dtype=np.uint8)
        self.raw: dict[int, Level] = {}
        self.cont: dict[int, Level] = {}
        for k in range(1, order + 1):
            keys, counts = np.unique(_keys(ids, k), return_counts=True)
            self.raw[k] = Level.of(keys, counts)
        for k in range(1, order):
            # c′(hw) = distinct bytes before hw = distinct (k+1)-grams whose last k bytes are hw
            longer = self.raw[k + 1].keys & np.uint64((1 << (8 * k)) - 1)
            keys, counts = np.unique(longer, return_counts=True)
            self.cont[k] = Level.of(keys, counts)

    def _prob(self, k: int, raw: bool, ctx: np.ndarray, w: np.ndarray) -> np.ndarray:
        """p(w | the last k − 1 bytes of ctx) at order k; ctx (n, ≥ k − 1) uint8, w (n,)."""
        if k == 0:
            return np.full(len(w), 1.0 / VOCAB)
        lower = self._prob(k - 1, False, ctx, w)
        lv = self.raw[k] if raw or k == self.order else self.cont[k]
        h = np.zeros(len(w), np.uint64)
        for j in range(k - 1):  # the last k − 1 bytes of the context, oldest first
            h = (h << np.uint64(8)) | ctx[:, ctx.shape[1] - (k - 1) + j].astype(np.uint64)
        key = (h << np.uint64(8)) | w.astype(np.uint64)
        c = lv.lookup(key, lv.keys, lv.counts)
        total = lv.lookup(h, lv.hist, lv.total)
        d1, d2, d3 = lv.d
        dc = np.where(c >= 3, d3, np.where(c == 2, d2, np.where(c == 1, d1, 0.0)))
        gamma_num = (
            d1 * lv.lookup(h, lv.hist, lv.n1) + d2 * lv.lookup(h, lv.hist, lv.n2) + d3 * lv.lookup(h, lv.hist, lv.n3)
        )
        seen = total > 0
        safe = np.where(seen, total, 1.0)
        p = np.maximum(c - dc, 0.0) / safe + gamma_num / safe * lower
        return np.where(seen, p, lower)

    def prob(self, ctx: np.ndarray, w: np.ndarray, top: int | None = None) -> np.ndarray:
        """p(w | ctx) with raw counts at order `top` (default: the model's order; ctx must hold at
        least top − 1 bytes per row, only the last top − 1 are read)."""
        top = self.order if top is None else top
        ctx = np.asarray(ctx, dtype=np.uint8).reshape(len(w), -1)
        return self._prob(top, True, ctx, np.asarray(w, dtype=np.uint8))

    def distribution(self, context: bytes) -> np.ndarray:
        """p(· | context) over the 256 bytes (the context's last order − 1 bytes, fewer if it is short)."""
        top = min(self.order, len(context) + 1)
        ctx = np.frombuffer(context[len(context) - (top - 1) :] if top > 1 else b"", np.uint8)
        ctx = np.tile(ctx, (VOCAB, 1)).reshape(VOCAB, top - 1)
        return self.prob(ctx, np.arange(VOCAB, dtype=np.uint8), top)

    def bits(self, text: bytes, window: int | None = None, from_start: bool = False) -> np.ndarray:
        """−log2 p of each byte of text[1:], each given the bytes before it — only those since the
        last multiple of `window` (the models' non-overlapping windows: window w predicts text[w·L + 1 …
        w·L + L] from text[w·L …]), or every earlier byte when window is None → (len(text) − 1,).
        from_start: every byte of text is predicted, byte g from text[g − g mod window … g − 1] (the
        models with a beginning-of-text byte: window w predicts text[w·L … w·L + L − 1]) → (len(text),)."""
        ids = np.frombuffer(text, dtype=np.uint8)
        g = np.arange(0 if from_start else 1, len(ids))  # index of each predicted byte
        n = len(g)
        # bytes of context each may see
        avail = g if window is None else g % window if from_start else g - ((g - 1) // window) * window
        top = np.minimum(avail + 1, self.order)
        out = np.zeros(n)
        pad = np.concatenate([np.zeros(self.order, np.uint8), ids])
        for k in range(1, self.order + 1):
            sel = np.nonzero(top == k)[0]
            if not len(sel):
                continue
            gi = g[sel] + self.order  # index in pad
            ctx = (
                np.stack([pad[gi - (k - 1) + j] for j in range(k - 1)], axis=1)
                if k > 1
                else np.zeros((len(sel), 0), np.uint8)
            )
            out[sel] = -np.log2(self.prob(ctx, ids[g[sel]], k))
        return out


# --- compressors --------------------------------------------------------------------------------

COMPRESSORS = {
    "xz": lambda b: lzma.compress(b, preset=9 | lzma.PRESET_EXTREME),
    "bz2": lambda b: bz2.compress(b, 9),
    "zlib": lambda b: zlib.compress(b, 9),
}


def conditional_bits(compress, given: bytes, text: bytes) -> int:
    """Bits a compressor spends on `text` after `given`: 8 · (|C(given + text)| − |C(given)|)."""
    return 8 * (len(compress(given + text)) - len(compress(given)))


def compressor_bpb(train: bytes, heldout: bytes, from_start: bool = False) -> dict[str, float]:
    """Bits per held-out byte for each compressor, given the train text; the held-out bytes
    predicted are heldout[1:] (the models' targets), so heldout[0] goes with the given text —
    or all of them (from_start: the models with a beginning-of-text byte predict every byte)."""
    given, text = (train, heldout) if from_start else (train + heldout[:1], heldout[1:])
    return {name: conditional_bits(c, given, text) / len(text) for name, c in COMPRESSORS.items()}
