"""A sentence map's one-line takeaway, computed from the weights the map draws (issue 43, item 6:
the sentence-driven maps carry a computed sentence, not only a picture of random weights).

What it says: where the last word's strongest weight goes (the key, and how far back or ahead), and
how far a token's attention reaches on average, Σ_j w_ij·|i − j| averaged over the queries (and over
the heads of a stack of maps); with the same map drawn without positions beside it, the same for that
map, so the two read against each other. And which sentence lengths read well on the chapter's maps
(READS_WELL): under the lower bound there is little to compare; over the upper bound a map's rows and
labels get too small to read on a laptop's screen. The Kerple and FIRE chapter's own reach sentence
was the first of these; every chapter's words are in the catalogue (common.takeaway).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explain.i18n import t

READS_WELL = (8, 24)  # tokens: the lengths the chapters' sentence maps read well at (see the docstring)


@dataclass(frozen=True)
class MapTakeaway:
    query: int  # the last word: it can look at every word before it, under a causal mask too
    key: int  # its strongest key (on a tie, the nearest)
    weight: float  # that weight (averaged over heads for a stack of maps)
    reach: float  # mean over queries of Σ_j w_ij·|i − j|: how far a token's attention reaches
    heads: int  # how many maps were averaged (1 for a single map)


def last_word(tokens: Sequence[str]) -> int:
    """The last token with a letter or a digit (a sentence's final "." says little), else the last."""
    return next((k for k in range(len(tokens) - 1, -1, -1) if any(c.isalnum() for c in tokens[k])), len(tokens) - 1)


def map_takeaway(weights: np.ndarray, query: int | None = None) -> MapTakeaway:
    """The takeaway of an attention map (i, j), or of a stack of them (h, i, j), averaged over h,
    for the query `query` (default: the last). Masked cells (NaN) count as weight 0."""
    w = np.nan_to_num(np.asarray(weights, dtype=np.float64), nan=0.0)
    heads = 1 if w.ndim == 2 else w.shape[0]
    if w.ndim == 3:
        w = w.mean(axis=0)  # (i, j)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 1:
        raise ValueError(f"an attention map is square: got {w.shape}")
    n = w.shape[0]
    i = n - 1 if query is None else query
    row = w[i]
    top = row.max()
    ties = np.flatnonzero(row >= top - 1e-12)
    key = int(ties[np.argmin(np.abs(i - ties))])
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])  # |i − j|
    reach = float((w * distance).sum(axis=1).mean())
    return MapTakeaway(i, key, float(top), reach, heads)


def where(tk: MapTakeaway, lang: str | None = None) -> str:
    """Where the strongest key sits from the last token: d tokens back or ahead, or its own place."""
    d = tk.query - tk.key
    if d == 0:
        return t("common.takeaway.itself", lang)
    side = "back" if d > 0 else "ahead"
    return t(f"common.takeaway.{side}_one" if abs(d) == 1 else f"common.takeaway.{side}", lang, d=abs(d))


def takeaway_sentence(
    weights: np.ndarray,
    tokens: Sequence[str],
    lang: str | None = None,
    without: np.ndarray | None = None,
    reads_well: tuple[int, int] = READS_WELL,
) -> str:
    """The map's one-line takeaway in `lang` (with the map without positions, if given), then the
    lengths that read well. Empty for fewer than two tokens."""
    n = len(tokens)
    if n < 2:
        return ""
    tk = map_takeaway(weights, last_word(tokens))
    key = "common.takeaway.strongest_heads" if tk.heads > 1 else "common.takeaway.strongest"
    text = t(key, lang, query=tokens[tk.query], key=tokens[tk.key], where=where(tk, lang), reach=tk.reach)
    if without is not None:
        off = map_takeaway(without, tk.query)
        text += t("common.takeaway.without", lang, key=tokens[off.key], where=where(off, lang), reach=off.reach)
    lo, hi = reads_well
    return text + " " + t("common.takeaway.lengths", lang, lo=lo, hi=hi, n=n)
