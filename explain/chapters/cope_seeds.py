"""The CoPE chapter's two small puzzles from the seed review (seed 001): "y y y y x y y y" (find the
x) and "a a a a b a a a b b" (attend to the nearer b). The last token's attention when content says
"look for the sought token" and position says "prefer near", measured with no position, with
relative positions and with CoPE counting only the sought token. Hand-set numbers, not a trained
model: they show what each ruler can express.

Axis legend: j key position (the query is the last token).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from encoders.cope import contextual_positions, gate_logits_from_counted
from explain.bounds import bounded

SEED_EXAMPLES = {
    # id (a widget value, named t("cope.seeds.example_name.<id>") on the page):
    # (the token the query looks for, the filler token)
    "yyyyxyyy": ("x", "y"),
    "aaaabaaabb": ("b", "a"),
}
SEED_DEFAULT_GAP = {"yyyyxyyy": 3, "aaaabaaabb": 1}  # the review's own sequences
# The three rulers of seed_example, as keys of SeedExampleView.weights (named on the page).
RULERS = ("none", "relative", "cope")
MAX_GAP = 20


def seed_example_tokens(example: str, gap: int) -> tuple[str, ...]:
    """The seed review's sequences, with the query `gap` ≥ 1 tokens after the last sought token:
    "yyyyxyyy" is gap 3 (y y y y x, then three y's, the last one the query); "aaaabaaab b" is gap 1.
    """
    if gap < 1:
        raise ValueError("gap must be at least 1: the query comes after the sought token")
    if example.startswith("yyyy"):
        return ("y",) * 4 + ("x",) + ("y",) * gap
    return ("a",) * 4 + ("b",) + ("a",) * 3 + ("b",) + ("a",) * (gap - 1) + ("b",)


@dataclass
class SeedExampleView:
    tokens: tuple[str, ...]
    weights: dict[str, np.ndarray]  # ruler (RULERS) → (j,) the last query's attention
    cope_positions: np.ndarray  # (j,) p for the last query, gates on the sought token
    sought: str  # the token the query looks for
    last: int  # position of the last sought token before the query
    back: int  # how many tokens back it lies from the query

    @property
    def counted_back(self) -> float:
        """Its CoPE position: how many sought tokens lie from it up to the query."""
        return float(self.cope_positions[self.last])

    def weight(self, ruler: str) -> float:
        """The weight that ruler puts on the last sought token."""
        return float(self.weights[ruler][self.last])


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return np.asarray(e / e.sum())


# Cache bounds (pages/contextual/cope.py): An entry holds a few n × n float64 arrays (n ≤ 256, about 0.5 MB
# each); model_view holds 3 × 4 heads of them (~6 MB), hence its smaller bound.
@bounded(32)
def seed_example(example: str, gap: int, delta: float, slope: float) -> SeedExampleView:
    """The last query's attention when content says "look for the sought token" (+delta on it)
    and position says "prefer near" (−slope per step), measured three ways:
    no position; relative, −slope·(i − j) (i − j = query − key, in tokens);
    CoPE, −slope·p_ij with gates open on the sought token only (p in occurrences of it)."""
    sought, _ = SEED_EXAMPLES[example]
    tokens = seed_example_tokens(example, gap)
    n = len(tokens)
    i = n - 1
    content = np.array([delta if tok == sought else 0.0 for tok in tokens])  # (j,)
    distance = (i - np.arange(n)).astype(float)  # (j,) i − j, query − key
    counted = torch.tensor([tok == sought for tok in tokens])
    p = contextual_positions(gate_logits_from_counted(counted, math.inf))[i].numpy()  # (j,)
    last = max(j for j, tok in enumerate(tokens[:-1]) if tok == sought)
    rulers = (
        _softmax(content),  # no position term
        _softmax(content - slope * distance),  # relative: −slope·(i − j)
        _softmax(content - slope * p),  # CoPE: −slope·p_ij
    )
    return SeedExampleView(
        tokens,
        dict(zip(RULERS, rulers, strict=True)),
        p,
        sought,
        last,
        i - last,
    )
