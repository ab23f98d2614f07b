"""One attention layer on the learner's sentence, as numbers: shared by every chapter.

Arguments are primitives (the page caches on them); the result holds numpy arrays only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import REGISTRY, build
from encoders.attention import AttentionResult, toy_layer
from encoders.base import LETTER, Difference
from encoders.text import token_embeddings, token_key, tokenize
from explain.i18n import t


def sign_text(method: str, lang: str | None = None) -> str:
    """The relative quantity `method`'s logits depend on, in the learner's words (default: the current
    run's language), from the symbols its encoder class holds (relative_sign):
    "j − i (key − query)" / "j − i (키 − 쿼리)", or CoPE's count "p_ij = … (count back from query i)".
    Raises ValueError for a method without one (an absolute encoding, NoPE)."""
    sign = REGISTRY[method].relative_sign
    if sign is None:
        raise ValueError(f"{method} has no relative quantity to show")
    if isinstance(sign, Difference):
        first, second = t(f"figures.role.{sign.first}", lang), t(f"figures.role.{sign.second}", lang)
        return t("figures.sign.difference", lang, math=sign.math, first=first, second=second)
    role = t(f"figures.role.{sign.start}", lang)
    return t("figures.sign.count_back", lang, math=sign.math, role=role, index=LETTER[sign.start])


# The toy layer every chapter draws: 64 dimensions, 4 heads of 16 (a chapter that needs another size
# says so beside its own constant).
TOY_D_MODEL = 64
TOY_HEADS = 4
SHIFT = 1000  # the shifted-copy probe: the same sentence again, its positions starting at 1000


@dataclass(frozen=True)
class ShiftProbe:
    """The same layer on the same words, once at positions 0 … n−1 and once at SHIFT … SHIFT+n−1."""

    shift: int
    position_change: float  # max |position term (shifted) − position term|
    output_change: float  # max |layer output (shifted) − layer output|


def shift_probe(layer: torch.nn.Module, x: torch.Tensor, base: AttentionResult, causal: bool = False) -> ShiftProbe:
    """Run `layer` on `x` again with every position moved by SHIFT and compare with `base` (the run at
    positions 0 … n−1). A relative encoding gives 0 for both, up to rounding."""
    n = x.shape[1]
    if n == 0:
        return ShiftProbe(SHIFT, 0.0, 0.0)
    with torch.inference_mode():
        shifted = layer(x, positions=torch.arange(n) + SHIFT, causal=causal)
    return ShiftProbe(
        SHIFT,
        float((shifted.terms["position"] - base.terms["position"]).abs().max()),
        float((shifted.output - base.output).abs().max()),
    )


@dataclass
class LayerView:
    tokens: tuple[str, ...]
    inputs: np.ndarray  # (n, D) token embedding (+ input PE where the method has one)
    terms: dict[str, np.ndarray]  # name → (h, i, j)
    logits: np.ndarray  # (h, i, j), NaN where masked (so heatmaps leave those cells blank)
    weights: np.ndarray  # (h, i, j)
    output: np.ndarray  # (n, D)


def run_layer(
    sentence: str,
    seed: int,
    method: str,
    d_model: int = 64,
    n_heads: int = 4,
    causal: bool = False,
    max_tokens: int = 256,
    positions_offset: int = 0,
    config: object = None,
    term_scales: tuple[tuple[str, float], ...] = (),
) -> LayerView:
    """The sentence through one self-attention layer with positional encoding `method`.

    `positions_offset` starts the positions somewhere other than 0 (the shift experiments).
    `term_scales` ((name, scale), …) multiplies named logit terms; scale 0 switches a term off.
    `config` is the encoder's frozen config dataclass (hashable, so pages can cache on it).
    Raises encoders.base.PositionOutOfRange when a learned table has too few rows.
    """
    tokens = tokenize(sentence, max_tokens=max_tokens).tokens
    return run_tokens(tokens, seed, method, d_model, n_heads, causal, positions_offset, config, term_scales)


def run_tokens(
    tokens: tuple[str, ...],
    seed: int,
    method: str,
    d_model: int = 64,
    n_heads: int = 4,
    causal: bool = False,
    positions_offset: int = 0,
    config: object = None,
    term_scales: tuple[tuple[str, float], ...] = (),
    float64: bool = False,
) -> LayerView:
    """run_layer on an explicit token sequence (e.g. a shuffled one). float64 makes rounding
    differences ~1e-16 instead of ~1e-7, for checks that should print as zero."""
    keys = tuple(token_key(t) for t in tokens)
    x = token_embeddings(keys, d_model, seed)[None]  # (1, n, D)
    layer = toy_layer(build(method, d_model, n_heads, seed, config), seed)
    positions = torch.arange(len(tokens)) + positions_offset  # (n,)
    if float64:
        layer, x = layer.double(), x.double()
    with torch.inference_mode():
        r = layer(x, positions=positions, causal=causal, term_scales=dict(term_scales))
    logits = r.logits[0].numpy().copy()
    logits[~np.isfinite(logits)] = np.nan
    return LayerView(
        tuple(tokens),
        r.inputs[0].numpy(),
        {k: v[0].numpy() for k, v in r.terms.items()},
        logits,
        r.weights[0].numpy(),
        r.output[0].numpy(),
    )
