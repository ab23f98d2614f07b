"""What the DeBERTa chapter shows, computed from encoders/deberta.py (numbers only).

Functions take primitives and return numpy arrays / dataclasses of them, so pages can cache them
and tests can check them without Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders.deberta import DeBERTa, DebertaConfig, log_bucket_position

from .common import run_layer

METHOD = "deberta"
TERMS = DeBERTa.term_names  # ("c2c", "c2p", "p2c"); their titles: deberta.term.* in the catalogue


def config(log_buckets: bool, bucket_size: int, max_position: int) -> DebertaConfig:
    """The page's settings as the encoder's config (hashable: pages cache on it).

    Without log buckets the table covers ±max_position plain distances (DeBERTa v1)."""
    return DebertaConfig(position_buckets=bucket_size if log_buckets else -1, max_relative_positions=max_position)


@dataclass
class SentenceBuckets:
    bucket: np.ndarray  # (i, j) bucket(i − j), or i − j itself without buckets
    table_row: np.ndarray  # (i, j) the relative-embedding row each pair reads, clamp(bucket + k, 0, 2k − 1)
    att_span: int  # k


def sentence_buckets(
    n: int, log_buckets: bool, bucket_size: int, max_position: int, positions_offset: int = 0
) -> SentenceBuckets:
    """Bucket and table row of every (query, key) pair of an n-token sentence."""
    # A tiny encoder with the same config: only its bucketing is used, none of its parameters.
    enc = DeBERTa(1, 1, config(log_buckets, bucket_size, max_position), torch.Generator().manual_seed(0))
    pos = torch.arange(n) + positions_offset
    return SentenceBuckets(enc.relative_positions(pos, pos).numpy(), enc.table_index(pos, pos).numpy(), enc.att_span)


@dataclass
class TermMaps:
    tokens: tuple[str, ...]
    terms: dict[str, np.ndarray]  # name → (i, j) for the chosen head, already /√(3d)
    total: np.ndarray  # (i, j) sum of the switched-on terms (the logits)
    weights: np.ndarray  # (i, j) softmax over j


def term_maps(
    sentence: str,
    seed: int,
    head: int,
    log_buckets: bool,
    bucket_size: int,
    max_position: int,
    switches: tuple[bool, bool, bool] = (True, True, True),
    d_model: int = 64,
    n_heads: int = 4,
    positions_offset: int = 0,
) -> TermMaps:
    """The three terms of one head on the sentence (bidirectional, as DeBERTa is an encoder), and
    the attention recomputed with the terms that are switched on. Switching a term off here keeps
    the 1/√(3d) scale: it shows the term's share of *this* model's logits."""
    cfg = config(log_buckets, bucket_size, max_position)
    scales = tuple((t, 1.0 if on else 0.0) for t, on in zip(TERMS, switches, strict=False))
    view = run_layer(
        sentence,
        seed,
        METHOD,
        d_model,
        n_heads,
        causal=False,
        positions_offset=positions_offset,
        config=cfg,
        term_scales=scales,
    )
    return TermMaps(
        view.tokens,
        {t: view.terms[t][head].astype(float) for t in TERMS},
        view.logits[head].astype(float),
        view.weights[head].astype(float),
    )


@dataclass
class BucketMap:
    distances: np.ndarray  # (r,) r = i − j (query − key)
    bucket: np.ndarray  # (r,) log bucket of r
    table_row: np.ndarray  # (r,) clamp(bucket + k, 0, 2k − 1), k = bucket_size
    region: np.ndarray  # (r,) 0 exact, 1 log, 2 past max_position (the lookup clamps)
    exact_until: int  # |r| ≤ exact_until keeps its own bucket (= bucket_size // 2)
    n_within: int  # distances with |r| ≤ max_position − 1
    rows_within: int  # distinct table rows they read


def bucket_map(bucket_size: int, max_position: int, span: int | None = None) -> BucketMap:
    """Distance → bucket → table row for r = −span … span (default 1.25 · max_position)."""
    span = int(span if span is not None else round(1.25 * max_position))
    r = torch.arange(-span, span + 1)  # (r,)
    b = log_bucket_position(r, bucket_size, max_position)  # (r,)
    rows = torch.clamp(b + bucket_size, 0, 2 * bucket_size - 1)
    mid = bucket_size // 2
    a = r.abs()
    region = torch.where(a <= mid, 0, torch.where(a <= max_position - 1, 1, 2))
    within = a <= max_position - 1
    return BucketMap(
        r.numpy(),
        b.numpy(),
        rows.numpy(),
        region.numpy(),
        mid,
        int(within.sum()),
        int(torch.unique(rows[within]).numel()),
    )
