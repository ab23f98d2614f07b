"""What the Shaw et al. chapter shows, computed from encoders/shaw.py (numbers only).

Every function takes primitives and returns numpy arrays, so pages can cache them with
st.cache_data and tests can check them without Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders.attention import toy_layer
from encoders.shaw import ShawConfig, clipped_relative_index
from encoders.text import token_embeddings, token_key

D_MODEL = 64
N_HEADS = 4
SHIFT = 1000  # the shift experiment: the same sentence starting at position 1000 instead of 0


@dataclass
class ShawView:
    tokens: tuple[str, ...]
    k: int
    distance: np.ndarray  # (i, j) j − i (key − query), unclipped
    clipped: np.ndarray  # (i, j) clip(j − i, −k, k)
    index: np.ndarray  # (i, j) clip(j − i, −k, k) + k: the table row each pair reads
    is_clipped: np.ndarray  # (i, j) bool: |j − i| > k, the pair shares the row of ±k
    a_k: np.ndarray  # (2k+1, d) rows for distances −k … k
    a_v: np.ndarray  # (2k+1, d)
    content: np.ndarray  # (h, i, j) x_i W^Q (x_j W^K)ᵀ / √d
    position: np.ndarray  # (h, i, j) x_i W^Q aᴷ_ijᵀ / √d
    weights: np.ndarray  # (h, i, j) softmax of content + position
    weights_content_only: np.ndarray  # (h, i, j) the same layer with the position term switched off
    mass_per_distance: np.ndarray  # (h, i, 2k+1) attention mass on each clipped distance
    value_content: np.ndarray  # (h, i, d) Σ_j α_ij v_j
    value_position: np.ndarray  # (h, i, d) Σ_j α_ij aⱽ_ij
    shift_position_change: float  # max |position term at offset SHIFT − at offset 0|
    shift_output_change: float  # max |layer output at offset SHIFT − at offset 0|


def shaw_view(tokens: tuple[str, ...], seed: int, k: int, d_model: int = D_MODEL, n_heads: int = N_HEADS) -> ShawView:
    """One Shaw layer on the tokens, with everything the chapter draws."""
    n = len(tokens)
    encoder = build("shaw", d_model, n_heads, seed, ShawConfig(max_relative_position=int(k)))
    layer = toy_layer(encoder, seed)
    x = token_embeddings(tuple(token_key(t) for t in tokens), d_model, seed)[None]  # (1, n, D)
    positions = torch.arange(n)  # (n,)
    with torch.inference_mode():
        r = layer(x, positions=positions)
        off = layer(x, positions=positions, term_scales={"position": 0.0})
        shifted = layer(x, positions=positions + SHIFT)
        value_position = encoder.value_terms(r.weights, positions, positions)[0]  # (h, i, d)
        value_content = (r.weights @ r.v)[0]  # (h, i, d)
        index = clipped_relative_index(positions, positions, k)  # (i, j)
        mass = torch.zeros(n_heads, n, 2 * k + 1)  # (h, i, 2k+1)
        mass.scatter_add_(-1, index.expand(n_heads, n, n), r.weights[0])
    distance = (positions[None, :] - positions[:, None]).numpy()  # (i, j) key − query
    return ShawView(
        tokens=tuple(tokens),
        k=int(k),
        distance=distance,
        clipped=np.clip(distance, -k, k),
        index=index.numpy(),
        is_clipped=np.abs(distance) > k,
        a_k=encoder.a_k.detach().numpy().copy(),
        a_v=encoder.a_v.detach().numpy().copy(),
        content=r.terms["content"][0].numpy(),
        position=r.terms["position"][0].numpy(),
        weights=r.weights[0].numpy(),
        weights_content_only=off.weights[0].numpy(),
        mass_per_distance=mass.numpy(),
        value_content=value_content.numpy(),
        value_position=value_position.numpy(),
        shift_position_change=float((shifted.terms["position"] - r.terms["position"]).abs().max()) if n else 0.0,
        shift_output_change=float((shifted.output - r.output).abs().max()) if n else 0.0,
    )


def distance_labels(k: int) -> list[str]:
    """Row labels of the aᴷ / aⱽ tables: "−k" … "+k", with "≤ −k" and "≥ +k" at the clipped ends."""
    labels = [f"{r:+d}" if r else "0" for r in range(-k, k + 1)]
    if k > 0:
        labels[0], labels[-1] = f"≤ −{k}", f"≥ +{k}"
    return [s.replace("-", "−") for s in labels]


def clipped_share(n: int, k: int) -> float:
    """Fraction of the n² (query, key) pairs of an n-token sentence that are clipped (|j − i| > k)."""
    if n == 0:
        return 0.0
    d = np.abs(np.arange(n)[None, :] - np.arange(n)[:, None])
    return float((d > k).mean())
