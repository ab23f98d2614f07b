"""What the "Why order matters" chapter shows: attention without positions is permutation-equivariant.

Shuffle the tokens, run the same layer, put the outputs back in the original order: without a
positional encoding they are the very same vectors. With one, they are not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from encoders.text import token_key

from .common import LayerView, run_tokens


def shuffle_order(n: int, seed: int, shuffle_count: int) -> tuple[int, ...]:
    """The k-th shuffle of n tokens for this seed (k = 0: the original order).

    A shuffle that happens to leave every token in place is skipped, so a press of the button
    always moves something when n ≥ 2.
    """
    if shuffle_count == 0 or n < 2:
        return tuple(range(n))
    rng = np.random.default_rng([seed, shuffle_count, n])
    while True:
        perm = rng.permutation(n)
        if (perm != np.arange(n)).any():
            return tuple(int(p) for p in perm)


@dataclass
class Repeats:
    word: str
    positions: tuple[int, ...]
    max_abs_diff: float  # largest difference between the outputs at those positions


@dataclass
class PermutationResult:
    original: LayerView
    shuffled: LayerView
    order: tuple[int, ...]  # shuffled[k] = original[order[k]]
    unshuffled_output: np.ndarray  # shuffled outputs put back in the original order (n, D)
    max_abs_diff: float  # |original output − unshuffled output|, max over everything
    repeats: list[Repeats]


def permutation_experiment(
    tokens: tuple[str, ...], seed: int, method: str, order: tuple[int, ...], d_model: int = 64
) -> PermutationResult:
    """One head, bidirectional (a causal mask alone already breaks the symmetry), float64."""
    shuffled_tokens = tuple(tokens[k] for k in order)
    a = run_tokens(tokens, seed, method, d_model=d_model, n_heads=1, float64=True)
    b = run_tokens(shuffled_tokens, seed, method, d_model=d_model, n_heads=1, float64=True)
    inverse = np.argsort(np.asarray(order))
    back = b.output[inverse]  # (n, D): row i is the output of original token i
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(tokens):
        groups.setdefault(token_key(t), []).append(i)
    repeats = [
        Repeats(tokens[ps[0]], tuple(ps), float(np.abs(a.output[ps] - a.output[ps[0]]).max()))
        for ps in groups.values()
        if len(ps) > 1
    ]
    return PermutationResult(a, b, tuple(order), back, float(np.abs(a.output - back).max()), repeats)
