"""What the Transformer-XL chapter shows, computed from encoders/transformer_xl.py.

Functions take primitives and return numpy arrays / dataclasses of them (or words in the learner's
language), so pages can cache them and tests can check them without Streamlit.

Axis legend: h heads, i query, j key, r distance, δ = i − j (query − key).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders import transformer_xl as enc
from encoders.sinusoidal import concatenated_permutation
from encoders.transformer_xl import TransformerXL, TransformerXLConfig, rel_shift_steps, rel_shift_valid
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

from .common import TOY_HEADS, run_layer

METHOD = "transformer-xl"
TERMS = TransformerXL.term_names  # ("a", "b", "c", "d"); their titles: transformer_xl.term.* in the catalogue
# Two texts of the same length with no word in common: the term whose map they share ignores the words.
PROBE_TEXTS = ("a b c d e f", "u v w x y z")
NO_CELL = "—"  # label of a gather cell with no raw score (a negative distance: a future key)
N_HEADS = TOY_HEADS  # the toy layer every chapter draws: 4 heads of 16 dimensions (d_model 64)
SAME = 1e-6  # two maps this close (float32 rounding) count as the same map
STEPS = ("raw", "padded", "reshaped", "sliced", "result")  # the rel-shift stages, in order


@dataclass
class TermMaps:
    tokens: tuple[str, ...]
    terms: dict[str, np.ndarray]  # name → (i, j) for the chosen head, /√d; NaN where causally masked
    total: np.ndarray  # (i, j) sum of the switched-on terms (the logits), NaN where masked
    weights: np.ndarray  # (i, j) softmax of `total` over j, NaN where causally masked

    @property
    def stacked(self) -> np.ndarray:
        """(4, i, j): the four terms in the order (a), (b), (c), (d), for one small-multiples grid."""
        return np.stack([self.terms[name] for name in TERMS])


# Cache bounds (pages/relative/transformer_xl.py): One term_maps entry holds six (n, n) maps of a ≤ 256-token
# sentence (~1.5 MB), hence 32; the rest are small.
@bounded(32)
def term_maps(
    sentence: str,
    seed: int,
    head: int,
    causal: bool,
    switches: tuple[bool, ...] = (True, True, True, True),
    d_model: int = 64,
    n_heads: int = 4,
    positions_offset: int = 0,
) -> TermMaps:
    """The four terms of one head on the sentence, and the attention recomputed with the terms
    that are switched on (a switched-off term is multiplied by 0 before the softmax)."""
    scales = tuple((name, 1.0 if on else 0.0) for name, on in zip(TERMS, switches, strict=False))
    view = run_layer(
        sentence, seed, METHOD, d_model, n_heads, causal, positions_offset=positions_offset, term_scales=scales
    )
    n = len(view.tokens)
    masked = np.triu(np.ones((n, n), dtype=bool), 1) if causal else np.zeros((n, n), dtype=bool)
    terms = {}
    for name in TERMS:
        z = view.terms[name][head].astype(float)
        z[masked] = np.nan
        terms[name] = z
    weights = view.weights[head].astype(float)
    weights[masked] = np.nan  # blank, like the logits: a future key is not "weight 0", it is not there
    return TermMaps(view.tokens, terms, view.logits[head].astype(float), weights)


@dataclass
class DistanceCurves:
    distances: np.ndarray  # (r,) δ = i − j (query − key)
    d_term: np.ndarray  # (h, r) term (d) = v·W_kR R_δ / √d: a function of δ alone


def encoder(
    seed: int, d_model: int = 64, n_heads: int = N_HEADS, config: TransformerXLConfig | None = None
) -> TransformerXL:
    """The chapter's Transformer-XL encoder (its u, v and W_kR, drawn from the seed)."""
    enc = build(METHOD, d_model, n_heads, seed, config)
    assert isinstance(enc, TransformerXL)
    return enc


def global_position_bias(seed: int, max_distance: int, d_model: int = 64, n_heads: int = 4) -> DistanceCurves:
    """Term (d) for every distance −max_distance … max_distance, per head: like a learned relative
    bias table, but made of sinusoids seen through W_kR and v."""
    enc = encoder(seed, d_model, n_heads)
    distances = torch.arange(-max_distance, max_distance + 1)  # (r,)
    with torch.inference_mode():
        rk = enc.position_keys(distances)  # (h, r, d)
        d_term = (rk @ enc.v[:, :, None])[..., 0] / enc.d_head**0.5  # (h, r)
    return DistanceCurves(distances.numpy(), d_term.numpy())


@dataclass
class ShiftStage:
    name: str
    ids: np.ndarray  # (rows, cols) int: which raw cell sits here (0 = the zero pad)
    distance: np.ndarray  # (rows, cols) float: the distance that cell was computed for, NaN for pad
    labels: np.ndarray  # (rows, cols) str: "q2·R3" = query 2's score against distance 3; "0" = pad


@dataclass
class RelShiftDemo:
    qlen: int
    klen: int
    mlen: int
    labels: dict[int, str]  # cell id → "q2·R3" (query row i, distance δ); 0 → "0" (the pad)
    stages: list[ShiftStage]  # raw, padded, reshaped, sliced, result
    gathered: np.ndarray  # (qlen, klen) ids from the direct gather raw[i, klen−1−((mlen+i)−j)], −1 if none
    gathered_labels: np.ndarray  # (qlen, klen) str, NO_CELL where the distance is negative (future key)
    valid: np.ndarray  # (qlen, klen) bool: j ≤ i + mlen
    wanted: np.ndarray  # (qlen, klen) the distance each cell should hold: (mlen + i) − j
    matches_gather: bool  # result == gather on every valid cell
    garbage_differs: bool  # every invalid cell holds something else than its wanted distance

    def stage(self, name: str) -> ShiftStage:
        """The stage called `name` (one of STEPS)."""
        return self.stages[STEPS.index(name)]

    @property
    def invalid(self) -> np.ndarray:
        """(qlen, klen) bool: the cells right of j = i + m_len, which hold garbage."""
        return ~self.valid

    @property
    def gathered_distance(self) -> np.ndarray:
        """(qlen, klen): the distance of every valid cell of the direct gather, NaN elsewhere."""
        return np.where(self.valid, self.wanted, np.nan)

    @property
    def n_valid(self) -> int:
        return int(self.valid.sum())

    @property
    def n_invalid(self) -> int:
        return int(self.invalid.sum())

    @property
    def distance_range(self) -> tuple[float, float]:
        """(smallest, largest) distance of the raw scores: one colour scale for every stage."""
        raw = self.stages[0].distance
        return float(np.nanmin(raw)), float(np.nanmax(raw))


def rel_shift_demo(qlen: int, mlen: int) -> RelShiftDemo:
    """The rel-shift trick on a small matrix whose cells are labelled, not numbers: cell (i, r) of
    the raw matrix is query i's score against distance klen−1−r. Runs the encoder's own
    rel_shift_steps on the cell ids, so what is drawn is what the encoder does."""
    if qlen < 1 or mlen < 0:
        raise ValueError("qlen must be ≥ 1 and mlen ≥ 0")
    klen = qlen + mlen
    # ids 1 … qlen·klen, row-major; 0 is kept for the pad, which rel_shift fills with zeros.
    raw = torch.arange(1, qlen * klen + 1, dtype=torch.float64).view(qlen, klen)  # (i, r)
    labels = {0: "0"}
    dist_of = {0: np.nan}
    for i in range(qlen):
        for r in range(klen):
            cid = i * klen + r + 1
            labels[cid] = f"q{i}·R{klen - 1 - r}"
            dist_of[cid] = float(klen - 1 - r)
    steps = rel_shift_steps(raw)
    named = [
        ("raw", raw),
        ("padded", steps.padded),
        ("reshaped", steps.reshaped),
        ("sliced", steps.sliced),
        ("result", steps.result),
    ]
    label_of = np.vectorize(lambda cid: labels.get(int(cid), NO_CELL), otypes=[str])
    stages = []
    for name, cells in named:
        ids = cells.round().long().numpy()
        stages.append(ShiftStage(name, ids, np.vectorize(dist_of.get, otypes=[float])(ids), label_of(ids)))

    valid = rel_shift_valid(qlen, klen).numpy()
    qi = np.arange(qlen)[:, None]  # (i, 1)
    kj = np.arange(klen)[None, :]  # (1, j)
    wanted = (mlen + qi - kj).astype(float)  # (i, j)
    # Direct gather, independent of the trick: the raw column of distance δ is klen − 1 − δ.
    col = klen - 1 - (mlen + qi - kj)  # (i, j)
    inside = (col >= 0) & (col < klen)
    gathered = np.where(inside, raw.long().numpy()[qi, np.clip(col, 0, klen - 1)], -1)
    result = stages[-1].ids
    result_dist = stages[-1].distance
    garbage = ~valid
    return RelShiftDemo(
        qlen,
        klen,
        mlen,
        labels,
        stages,
        gathered,
        label_of(gathered),
        valid,
        wanted,
        bool((result[valid] == gathered[valid]).all()),
        bool(not np.any(result_dist[garbage] == wanted[garbage])),
    )


@dataclass
class LayoutCheck:
    same_weights: float  # max |logit difference|, concatenated vs interleaved R, one fixed W_kR
    permuted_weights: float  # the same, with W_kR's rows permuted along with R's channels


def layout_check(seed: int, n: int = 12, d_model: int = 64, n_heads: int = 4) -> LayoutCheck:
    """Does R's channel order matter? Position terms (b) + (d) in float64 on random q, k:
    for a fixed W_kR yes; once W_kR is permuted along, no (up to rounding)."""
    concat = encoder(seed, d_model, n_heads, TransformerXLConfig(r_layout="concatenated")).double()
    inter = encoder(seed, d_model, n_heads, TransformerXLConfig(r_layout="interleaved")).double()
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, n_heads, n, d_model // n_heads, generator=g, dtype=torch.float64)  # (b, h, i, d)
    k = torch.randn(1, n_heads, n, d_model // n_heads, generator=g, dtype=torch.float64)  # (b, h, j, d)
    pos = torch.arange(n)

    def position_part(enc: TransformerXL) -> torch.Tensor:
        terms = enc.logit_terms(q, k, pos, pos, causal=False).terms
        return terms["b"] + terms["d"]

    with torch.inference_mode():
        ref = position_part(concat)
        same = float((ref - position_part(inter)).abs().max())
        # concatenated R = interleaved R[:, perm], so R_c W = R_i W' with W'[perm] = W.
        perm = concatenated_permutation(d_model)
        w = torch.empty_like(concat.w_kr)
        w[perm] = concat.w_kr
        inter.w_kr.copy_(w)
        permuted = float((ref - position_part(inter)).abs().max())
    return LayoutCheck(same, permuted)


# ------------------------------------------------------------------ which term ignores the words


def probe_differences(seed: int, head: int, causal: bool) -> dict[str, float]:
    """Per term: the largest difference between its maps on the two PROBE_TEXTS (same length, no
    word in common). NaN cells (masked) are compared as equal."""
    one = term_maps(PROBE_TEXTS[0], seed, head, causal, n_heads=N_HEADS)
    two = term_maps(PROBE_TEXTS[1], seed, head, causal, n_heads=N_HEADS)
    out = {}
    for name in TERMS:
        diff = np.abs(one.terms[name] - two.terms[name])  # (i, j), NaN where masked in both
        out[name] = float(np.nanmax(diff)) if np.isfinite(diff).any() else 0.0
    return out


def terms_question(seed: int, head: int, causal: bool, lang: str) -> Question | None:
    """Which of the four terms is the same for two texts with no word in common? Measured, not
    stated: None if the measurement does not single out exactly one term. (It is always (d), the
    one term with neither q_i nor k_j in it, which the explanation says; the tests pin both.)"""
    diffs = probe_differences(seed, head, causal)
    same = [name for name in TERMS if diffs[name] <= SAME]
    if len(same) != 1:
        return None
    answer = same[0]
    facts: dict[str, object] = {
        "term": answer,
        "title": t(f"transformer_xl.term.{answer}", lang),
        "same": diffs[answer],
        "other": min(diffs[name] for name in TERMS if name != answer),
        "one": PROBE_TEXTS[0],
        "two": PROBE_TEXTS[1],
    }
    return Question(
        key="xl_q",
        prompt=t("transformer_xl.predict.question", lang),
        options=TERMS,
        labels=tuple(f"({name})" for name in TERMS),
        answer=answer,
        explanation=t("transformer_xl.predict.explanation", lang, **facts),
        facts=facts,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="transformer-xl",
    part="Relative",
    page="pages/relative/transformer_xl.py",
    icon=":material/memory:",
    order=50,
    papers=(enc.PAPER,),
    sources=(
        "encoders.transformer_xl:TransformerXL.logit_terms",
        "encoders.transformer_xl:TransformerXL.position_keys",
        "encoders.transformer_xl:rel_shift_steps",
        "encoders.transformer_xl:rel_shift",
        "encoders.transformer_xl:relative_distances",
        "encoders.transformer_xl:relative_encoding",
    ),
    derivations=("absolute-pe-attention",),
    encodings=("transformer-xl",),  # the trained panel shows none: no model of it was trained
    link={"xl_head": "2", "xl_causal": "false", "xl_on_b": "false", "xl_qlen": "5", "xl_step": "sliced"},
    link_shows={"xl_head": 2, "xl_causal": False, "xl_on_b": False, "xl_qlen": 5, "xl_step": "sliced"},
)
