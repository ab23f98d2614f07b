"""What the DeBERTa chapter shows, computed from encoders/deberta.py.

Functions take primitives and return numpy arrays / dataclasses of them (or words in the learner's
language), so pages can cache them and tests can check them without Streamlit.

Axis legend: i query, j key, r = i − j (query − key), k att_span (the table has 2k rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import deberta as enc
from encoders.deberta import DeBERTa, DebertaConfig, log_bucket_position
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

from .common import TOY_HEADS, run_layer

METHOD = "deberta"
TERMS = DeBERTa.term_names  # ("c2c", "c2p", "p2c"); their titles: deberta.term.* in the catalogue
N_HEADS = TOY_HEADS  # the toy layer every chapter draws: 4 heads of 16 dimensions (d_model 64)
NEAR = (2, 3)  # the question's near pair of neighbouring distances i − j
PROBES = (60, 61)  # and its far pair


def config(log_buckets: bool, bucket_size: int, max_position: int) -> DebertaConfig:
    """The page's settings as the encoder's config (hashable: pages cache on it).

    Without log buckets the table's 2·max_position rows cover the plain distances −max_position …
    max_position − 1 (DeBERTa v1): the lookup clamps r + k to [0, 2k − 1], so it is not symmetric."""
    return DebertaConfig(position_buckets=bucket_size if log_buckets else -1, max_relative_positions=max_position)


@dataclass
class SentenceBuckets:
    bucket: np.ndarray  # (i, j) bucket(i − j), or i − j itself without buckets
    table_row: np.ndarray  # (i, j) the relative-embedding row each pair reads, clamp(bucket + k, 0, 2k − 1)
    att_span: int  # k

    @property
    def clamped_bucket(self) -> np.ndarray:
        """(i, j) float: the bucket as the lookup sees it, table row − k, in [−k, k − 1]."""
        return (self.table_row - self.att_span).astype(float)


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

    @property
    def stacked(self) -> np.ndarray:
        """(3, i, j): c2c, c2p, p2c, for one small-multiples grid."""
        return np.stack([self.terms[name] for name in TERMS])


# Cache bounds (pages/relative/deberta.py): One term_maps entry holds five (n, n) maps of a ≤ 256-token
# sentence (~1.3 MB), hence 32; the rest are small.
@bounded(32)
def term_maps(
    sentence: str,
    seed: int,
    head: int,
    log_buckets: bool,
    bucket_size: int,
    max_position: int,
    switches: tuple[bool, ...] = (True, True, True),
    d_model: int = 64,
    n_heads: int = 4,
    positions_offset: int = 0,
) -> TermMaps:
    """The three terms of one head on the sentence (bidirectional, as DeBERTa is an encoder), and
    the attention recomputed with the terms that are switched on. Switching a term off here keeps
    the 1/√(3d) scale: it shows the term's share of *this* model's logits."""
    cfg = config(log_buckets, bucket_size, max_position)
    scales = tuple((name, 1.0 if on else 0.0) for name, on in zip(TERMS, switches, strict=False))
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
        {name: view.terms[name][head].astype(float) for name in TERMS},
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


def smallest_valid_max_position(bucket_size: int) -> int:
    """The log part divides by ln((M − 1)/(B/2)): the smallest M the page falls back to is B/2 + 2."""
    return bucket_size // 2 + 2


# ------------------------------------------------------------------------------ the question


def rows_question(bucket_size: int, max_position: int, lang: str) -> Question:
    """Where does DeBERTa stop telling distances apart? Two pairs of neighbouring distances i − j:
    NEAR (2 and 3, near the query) and PROBES (60 and 61, far from it). Which pair reads one row of
    the position table? The concept (a bucket per distance up to B/2, log buckets past it, the clamp
    past M − 1), asked at the learner's B and M: the rows are read off the encoder's own buckets and
    the lookup's clamp, and the explanation names the reason the numbers show for the far pair
    (exact buckets, a shared log bucket, the clamp past M − 1, or log buckets still one distance wide)."""
    enc = DeBERTa(1, 1, config(True, bucket_size, max_position), torch.Generator().manual_seed(0))
    r = torch.tensor([*NEAR, *PROBES])  # (4,) i − j, against a key at position 0
    key = torch.zeros(1, dtype=torch.long)
    b2, b3, b60, b61 = (int(v) for v in enc.relative_positions(r, key)[:, 0])
    row2, row3, row60, row61 = (int(v) for v in enc.table_index(r, key)[:, 0])
    half = bucket_size // 2
    if row60 == row61:
        reason = "same_bucket" if b60 == b61 else "same_clamp"
    else:
        reason = "different_exact" if PROBES[1] <= half else "different_log"
    answer = {(False, True): "far", (True, False): "near", (True, True): "both", (False, False): "neither"}[
        (row2 == row3, row60 == row61)
    ]
    facts: dict[str, object] = {
        "b": bucket_size,
        "m": max_position,
        "half": half,
        "last": max_position - 1,
        "b2": b2,
        "b3": b3,
        "row2": row2,
        "row3": row3,
        "b60": b60,
        "b61": b61,
        "row60": row60,
        "row61": row61,
        "top": bucket_size - 1,
        "reason": reason,
        "answer": answer,
    }
    near = t("deberta.predict.near_same" if row2 == row3 else "deberta.predict.near_apart", lang, **facts)
    options = ("near", "far", "both", "neither")  # stable ids; the words are deberta.predict.option_<id>
    return Question(
        key="deb_q",
        prompt=t("deberta.predict.question", lang, b=bucket_size, m=max_position),
        options=options,
        labels=tuple(t(f"deberta.predict.option_{o}", lang) for o in options),
        answer=answer,
        explanation=near + " " + t(f"deberta.predict.explanation_{reason}", lang, **facts),
        facts=facts,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="deberta",
    part="Relative",
    page="pages/relative/deberta.py",
    icon=":material/call_split:",
    order=70,
    papers=(enc.PAPER,),
    sources=(
        "encoders.deberta:log_bucket_position",
        "encoders.deberta:DeBERTa.relative_positions",
        "encoders.deberta:DeBERTa.table_index",
        "encoders.deberta:DeBERTa.logit_terms",
    ),
    derivations=("deberta-three-terms",),
    encodings=("deberta",),  # the trained panel shows none: no model of it was trained
    link={"deb_bucket_size": "32", "deb_max_position": "256", "deb_head": "1", "deb_on_c2p": "false"},
    link_shows={"deb_bucket_size": 32, "deb_max_position": 256, "deb_head": 1, "deb_on_c2p": False},
)
