"""What the T5 chapter shows, computed from encoders/t5.py (numbers only).

Every function takes primitives and returns numpy arrays, so pages can cache them with
st.cache_data and tests can check them without Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders.attention import toy_layer
from encoders.t5 import T5Config, bucket_layout, check_bucket_config, relative_position_bucket
from encoders.text import token_embeddings, token_key

D_MODEL = 64
N_HEADS = 4
SHIFT = 1000  # the shift experiment: the same sentence starting at position 1000 instead of 0

# Regions of the bucket map, in the order the staircase colours them (named in the catalogue:
# t5.region.exact, .log, .beyond, .future).
EXACT, LOG, BEYOND, FUTURE = 0, 1, 2, 3
# Why a bucket id is never used (stable ids; the page words them: t5.unused.<reason>).
RIGHT_OFFSET = "right_offset"  # bidirectional: "key to the right, distance 0" cannot occur
LOG_SKIP = "log_skip"  # the truncated log jumps over it between two neighbouring distances


def smallest_valid_max_distance(num_buckets: int, causal: bool) -> int:
    """T5's log region needs max_distance > E, the number of exact buckets (E = N/4 or N/2)."""
    return bucket_layout(not causal, num_buckets)[1] + 1


@dataclass
class BucketMap:
    num_buckets: int
    max_distance: int
    causal: bool
    per_side: int  # N' buckets per side (N/2 bidirectional, N causal)
    exact: int  # E = N'/2: distances 0 … E−1 get one bucket each
    distances: np.ndarray  # (m,) r = j − i (key − query) drawn on the staircase
    buckets: np.ndarray  # (m,)
    region: np.ndarray  # (m,) EXACT / LOG / BEYOND / FUTURE
    scan_limit: int  # |r| ≤ scan_limit was scanned for `unused`
    unused: tuple[int, ...]  # bucket ids no integer distance reaches
    unused_reasons: dict[int, str]  # id → why: RIGHT_OFFSET or LOG_SKIP
    ranges: list[tuple[int, int, int, int]]  # (bucket, smallest r, largest r, count) over the scan


def bucket_map(num_buckets: int, max_distance: int, causal: bool, span: int | None = None) -> BucketMap:
    """The distance → bucket staircase and the set of never-used bucket ids.

    `span`: the staircase shows r in [−span, span] (default: a quarter past max_distance, so the
    flat tail is visible). The unused set is computed from the function itself over
    |r| ≤ 2·max_distance + 2 — far enough, since every |r| ≥ max_distance lands in the last bucket.
    """
    bidirectional = not causal
    check_bucket_config(bidirectional, num_buckets, max_distance)
    per_side, exact = bucket_layout(bidirectional, num_buckets)
    span = int(span if span is not None else max_distance + max(4, max_distance // 4))
    r = torch.arange(-span, span + 1)  # (m,)
    b = relative_position_bucket(r, bidirectional, num_buckets, max_distance)  # (m,)
    a = r.abs() if bidirectional else (-r).clamp(min=0)
    region = torch.where(a < exact, EXACT, torch.where(a < max_distance, LOG, BEYOND))
    if causal:
        region = torch.where(r > 0, FUTURE, region)

    limit = 2 * max_distance + 2
    scan = torch.arange(-limit, limit + 1)
    scanned = relative_position_bucket(scan, bidirectional, num_buckets, max_distance).numpy()
    used = set(np.unique(scanned).tolist())
    unused = tuple(sorted(set(range(num_buckets)) - used))
    reasons = {}
    for u in unused:
        # The right-side offset per_side is added only for r > 0, where the distance is at least 1;
        # elsewhere the log region has more buckets than distances to fill them.
        reasons[u] = RIGHT_OFFSET if bidirectional and u == per_side else LOG_SKIP
    ranges = []
    for bucket in sorted(used):
        rs = scan.numpy()[scanned == bucket]
        ranges.append((int(bucket), int(rs.min()), int(rs.max()), int(rs.size)))
    return BucketMap(
        num_buckets,
        max_distance,
        causal,
        per_side,
        exact,
        r.numpy(),
        b.numpy(),
        region.numpy(),
        limit,
        unused,
        reasons,
        ranges,
    )


@dataclass
class T5View:
    tokens: tuple[str, ...]
    causal: bool
    buckets: np.ndarray  # (i, j) bucket(j − i)
    table: np.ndarray  # (N, h) one learned scalar per bucket per head
    position: np.ndarray  # (h, i, j) β_h[bucket(j − i)]
    content: np.ndarray  # (h, i, j) q_i · k_j, unscaled
    logits: np.ndarray  # (h, i, j) content + position, NaN where masked
    weights: np.ndarray  # (h, i, j)
    weights_content_only: np.ndarray  # (h, i, j) position term switched off
    used_in_sentence: tuple[int, ...]  # bucket ids this sentence's pairs use (unmasked pairs only)
    shift_position_change: float  # max |position term at offset SHIFT − at offset 0|
    shift_output_change: float  # max |layer output at offset SHIFT − at offset 0|


def t5_view(
    tokens: tuple[str, ...],
    seed: int,
    num_buckets: int,
    max_distance: int,
    causal: bool,
    d_model: int = D_MODEL,
    n_heads: int = N_HEADS,
) -> T5View:
    """One T5-bias layer on the tokens, with everything the chapter draws."""
    n = len(tokens)
    config = T5Config(num_buckets=int(num_buckets), max_distance=int(max_distance))
    encoder = build("t5", d_model, n_heads, seed, config)
    layer = toy_layer(encoder, seed)
    x = token_embeddings(tuple(token_key(t) for t in tokens), d_model, seed)[None]  # (1, n, D)
    positions = torch.arange(n)  # (n,)
    with torch.inference_mode():
        r = layer(x, positions=positions, causal=causal)
        off = layer(x, positions=positions, causal=causal, term_scales={"position": 0.0})
        shifted = layer(x, positions=positions + SHIFT, causal=causal)
    buckets = r.extras["buckets"].numpy()  # (i, j)
    logits = r.logits[0].numpy().copy()
    logits[~np.isfinite(logits)] = np.nan
    visible = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    return T5View(
        tokens=tuple(tokens),
        causal=bool(causal),
        buckets=buckets,
        table=encoder.table.detach().numpy().copy(),
        position=r.terms["position"][0].numpy().copy(),
        content=r.terms["content"][0].numpy(),
        logits=logits,
        weights=r.weights[0].numpy(),
        weights_content_only=off.weights[0].numpy(),
        used_in_sentence=tuple(int(v) for v in np.unique(buckets[visible])),
        shift_position_change=float((shifted.terms["position"] - r.terms["position"]).abs().max()) if n else 0.0,
        shift_output_change=float((shifted.output - r.output).abs().max()) if n else 0.0,
    )


def bias_by_distance(
    table: np.ndarray, num_buckets: int, max_distance: int, causal: bool, span: int
) -> tuple[np.ndarray, np.ndarray]:
    """β_h[bucket(r)] for r in [−span, span]: (m,) distances and (h, m) biases — one staircase per
    head, flat wherever several distances share a bucket."""
    r = torch.arange(-span, span + 1)
    b = relative_position_bucket(r, not causal, num_buckets, max_distance).numpy()
    return r.numpy(), table[b].T  # (m,), (h, m)
