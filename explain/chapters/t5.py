"""What the T5 chapter shows, computed from encoders/t5.py.

Every function takes primitives and returns numpy arrays (or dataclasses of them, or words in the
learner's language), so pages can cache them and tests can check them without Streamlit.

Axis legend: h heads, i query, j key, r = j − i (key − query), N num_buckets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders import t5 as enc
from encoders.attention import toy_layer
from encoders.t5 import T5Bias, T5Config, bucket_layout, check_bucket_config, relative_position_bucket
from encoders.text import token_embeddings, token_key
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.chapters.common import TOY_D_MODEL, TOY_HEADS, ShiftProbe, shift_probe
from explain.i18n import t
from explain.question import Question

D_MODEL, N_HEADS = TOY_D_MODEL, TOY_HEADS  # the toy layer every chapter draws
PROBE = 40  # the question's key: 40 tokens after the query (bidirectional) or before it (causal)
SHOWN_IDS = 40  # the never-used list names at most this many ids per reason

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

    def close_up(self) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """(close, distances, buckets, region) of the staircase's close-up: |r| ≤ close, a few steps
        past the exact region (at least 12, at most what the full staircase shows)."""
        close = int(min(self.distances.max(), max(2 * self.exact + 4, 12)))
        near = np.abs(self.distances) <= close
        return close, self.distances[near], self.buckets[near], self.region[near]

    def unused_by_reason(self) -> dict[str, tuple[int, ...]]:
        """The never-used ids grouped by why (RIGHT_OFFSET / LOG_SKIP), in id order."""
        out: dict[str, list[int]] = {}
        for u in self.unused:
            out.setdefault(self.unused_reasons[u], []).append(u)
        return {reason: tuple(ids) for reason, ids in out.items()}

    def range_rows(self, beyond: str) -> tuple[list[int], list[str], list[int]]:
        """The "which distances share each bucket" table: bucket ids, their distance ranges as text
        ("−3 … −1", "5"; `beyond` appended where the range reaches max_distance) and counts."""
        texts = []
        for _, lo, hi, _ in self.ranges:
            text = f"{lo} … {hi}" if lo != hi else f"{lo}"
            texts.append(text + (beyond if abs(lo) >= self.max_distance or abs(hi) >= self.max_distance else ""))
        return [b for b, *_ in self.ranges], texts, [c for *_, c in self.ranges]


def bucket_map(num_buckets: int, max_distance: int, causal: bool, span: int | None = None) -> BucketMap:
    """The distance → bucket staircase and the set of never-used bucket ids.

    `span`: the staircase shows r in [−span, span] (default: a quarter past max_distance, so the
    flat tail is visible, and at least past the question's ±PROBE). The unused set is computed
    from the function itself over |r| ≤ 2·max_distance + 2 — far enough, since every
    |r| ≥ max_distance lands in the last bucket.
    """
    bidirectional = not causal
    check_bucket_config(bidirectional, num_buckets, max_distance)
    per_side, exact = bucket_layout(bidirectional, num_buckets)
    # At least PROBE + 4, so that the question's distance is always on the staircase.
    span = int(span if span is not None else max(max_distance + max(4, max_distance // 4), PROBE + 4))
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
    num_buckets: int
    max_distance: int
    buckets: np.ndarray  # (i, j) bucket(j − i)
    table: np.ndarray  # (N, h) one learned scalar per bucket per head
    position: np.ndarray  # (h, i, j) β_h[bucket(j − i)]
    content: np.ndarray  # (h, i, j) q_i · k_j, unscaled
    logits: np.ndarray  # (h, i, j) content + position, NaN where masked
    weights: np.ndarray  # (h, i, j)
    weights_content_only: np.ndarray  # (h, i, j) position term switched off
    used_in_sentence: tuple[int, ...]  # bucket ids this sentence's pairs use (unmasked pairs only)
    shift: ShiftProbe  # the same sentence at positions SHIFT … : how much moved

    def terms_pair(self, head: int) -> np.ndarray:
        """(2, i, j): one head's content term and bias, on one colour scale."""
        return np.stack([self.content[head], self.position[head]])

    def attention_pair(self, head: int) -> np.ndarray:
        """(2, i, j): one head's attention with the bias switched off, then on."""
        return np.stack([self.weights_content_only[head], self.weights[head]])

    def attention_top(self, head: int) -> float:
        """The largest weight of either map (NaN-safe): the top of their shared colour scale."""
        return float(np.nanmax(self.attention_pair(head)))

    @property
    def bias_scale(self) -> float:
        """The largest |β| of the table (1 if the table is all zeros): the bias maps' colour scale."""
        return float(np.abs(self.table).max()) or 1.0

    def bias_by_distance(self, span: int) -> tuple[np.ndarray, np.ndarray]:
        """β_h[bucket(r)] for r in [−span, span]: (m,) distances and (h, m) biases — one staircase
        per head, flat wherever several distances share a bucket."""
        r = torch.arange(-span, span + 1)  # (m,)
        b = relative_position_bucket(r, not self.causal, self.num_buckets, self.max_distance).numpy()  # (m,)
        return r.numpy(), self.table[b].T  # (m,), (h, m)


# Cache bounds (pages/bias/t5.py): A t5_view holds ~seven (4, n, n) maps of a ≤ 256-token sentence (~2 MB at
# most), hence 16 entries; bucket maps and questions are small.
@bounded(16)
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
    assert isinstance(encoder, T5Bias)
    layer = toy_layer(encoder, seed)
    x = token_embeddings(tuple(token_key(t) for t in tokens), d_model, seed)[None]  # (1, n, D)
    positions = torch.arange(n)  # (n,)
    with torch.inference_mode():
        r = layer(x, positions=positions, causal=causal)
        off = layer(x, positions=positions, causal=causal, term_scales={"position": 0.0})
    buckets = r.extras["buckets"].numpy()  # (i, j)
    logits = r.logits[0].numpy().copy()
    logits[~np.isfinite(logits)] = np.nan
    visible = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    return T5View(
        tokens=tuple(tokens),
        causal=bool(causal),
        num_buckets=int(num_buckets),
        max_distance=int(max_distance),
        buckets=buckets,
        table=encoder.table.detach().numpy().copy(),
        position=r.terms["position"][0].numpy().copy(),
        content=r.terms["content"][0].numpy(),
        logits=logits,
        weights=r.weights[0].numpy(),
        weights_content_only=off.weights[0].numpy(),
        used_in_sentence=tuple(int(v) for v in np.unique(buckets[visible])),
        shift=shift_probe(layer, x, r, causal),
    )


def table_span(bm: BucketMap, n: int) -> int:
    """How far the per-head bias lines reach: past the sentence and the exact region, never past
    the full staircase."""
    return int(min(bm.distances.max(), max(n + 8, 2 * bm.exact + 8)))


# ------------------------------------------------------------------------------ the question


def _bucket_of(r: int, causal: bool, num_buckets: int, max_distance: int) -> int:
    return int(relative_position_bucket(torch.tensor([r]), not causal, num_buckets, max_distance)[0])


NEAR = 1  # the question's near pair of keys: 1 and 2 tokens from the query


def bucket_question(num_buckets: int, max_distance: int, causal: bool, lang: str) -> Question:
    """Where does T5 lump distances together? Two pairs of keys, each one token apart: 1 and 2 tokens
    from the query, and PROBE and PROBE + 1 (after it, bidirectional; before it, causal). Which pair
    shares one bucket, so one learned number? The concept (exact buckets up close, ever wider ones far
    away), asked at the learner's N and D: the answer and every bucket the explanation names come
    from the encoder's bucket function."""
    per_side, exact = bucket_layout(not causal, num_buckets)
    sign = -1 if causal else 1
    near, far = (NEAR, NEAR + 1), (PROBE, PROBE + 1)
    near_b = tuple(_bucket_of(sign * a, causal, num_buckets, max_distance) for a in near)
    far_b = tuple(_bucket_of(sign * a, causal, num_buckets, max_distance) for a in far)
    near_same, far_same = near_b[0] == near_b[1], far_b[0] == far_b[1]
    answer = {(False, True): "far", (True, False): "near", (True, True): "both", (False, False): "neither"}[
        (near_same, far_same)
    ]
    # "beyond": both far keys at or past max_distance (at D = PROBE + 1 the nearer one is still inside).
    region = "exact" if exact > far[1] else ("log" if max_distance > far[0] else "beyond")
    facts: dict[str, object] = {
        "n": num_buckets,
        "d": max_distance,
        "exact": exact,
        "per_side": per_side,
        "near": near[0],
        "near2": near[1],
        "far": far[0],
        "far2": far[1],
        "b_near": near_b[0],
        "b_near2": near_b[1],
        "b_far": far_b[0],
        "b_far2": far_b[1],
        "region": region,
        "answer": answer,
    }

    def pair(x: int, y: int, b: int, c: int) -> str:
        if b == c:
            return t("t5.predict.pair_same", lang, x=sign * x, y=sign * y, b=b)
        return t("t5.predict.pair_apart", lang, x=sign * x, y=sign * y, b=b, c=c)

    pairs = pair(*near, *near_b) + " " + pair(*far, *far_b)
    # In the log region, log buckets are still narrower than one token at PROBE when N is large
    # and D small: then the far pair is told apart too, and the rule says so.
    rule = region if region != "log" else ("log" if far_same else "log_apart")
    mode = "causal" if causal else "bidirectional"
    options = ("near", "far", "both", "neither")
    return Question(
        key="t5_q",
        prompt=t(f"t5.predict.question_{mode}", lang, **facts),
        options=options,
        labels=tuple(t(f"t5.predict.option_{o}", lang, **facts) for o in options),
        answer=answer,
        explanation=t(
            "t5.predict.explanation", lang, pairs=pairs, rule=t(f"t5.predict.rule_{rule}", lang, **facts), **facts
        ),
        facts=facts,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="t5",
    part="Bias",
    page="pages/bias/t5.py",
    icon=":material/stairs:",
    order=60,
    papers=(enc.PAPER,),
    sources=(
        "encoders.t5:relative_position_bucket",
        "encoders.t5:bucket_layout",
        "encoders.t5:T5Bias.buckets",
        "encoders.t5:T5Bias.bias",
        "encoders.t5:T5Bias.logit_terms",
    ),
    encodings=("t5",),
    derivations=("t5-shift-invariance",),
    link={"t5_buckets": "64", "t5_max_distance": "300", "t5_causal": "true", "t5_head": "3"},
    link_shows={"t5_buckets": 64, "t5_max_distance": 300, "t5_causal": True, "t5_head": 3},
)
