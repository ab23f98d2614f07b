"""What the attention lab shows: one sentence through several registered encodings at once, with the
same toy token vectors, seed, projections, head count and causal switch (numbers only).

Axis legend: h heads, n tokens, i query, j key, k prefix length.

    panel        one encoding on the sentence: weights, the position part and the content part of its
                 logits, with named terms switched off and the content term scaled by a dial
    shift_test   prepend a phrase; how much the attention among the original words changed
    length_test  repeat the sentence past a "training length"; what each encoding does out there

Every function takes primitives and returns numpy arrays or dataclasses of them, so the page can
cache them with st.cache_data; all of them go through explain.chapters.common.run_tokens, the one
attention path (encoders/attention.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from encoders import REGISTRY
from encoders.base import PositionOutOfRange
from encoders.text import tokenize

from .common import run_tokens

D_MODEL = 64  # the toy layer's size on every page
HEAD_CHOICES = (1, 2, 4, 8)  # head counts the page offers (d = 64, 32, 16, 8 per head)
MAX_METHODS = 4
DEFAULT_METHODS = ("sinusoidal", "t5", "rope", "alibi")
MAX_PREFIX_CHARS = 60  # the prefix box takes this many characters …
MAX_PREFIX_TOKENS = 16  # … and at most this many of its tokens are used
MAX_LENGTH = 512  # the length test repeats the sentence up to this many tokens
# In the lab every encoding can represent BERT's 512 positions (a learned table gets 512 rows), so
# that any sentence the page draws (≤ 256 tokens) fits; the length test instead configures each
# encoding for the chosen training length (PositionalEncoding.config_for_lengths).
LAB_POSITIONS = 512
CHANGED = 1e-6  # a |Δ weight| above this (float64 run) counts as "changed"


def content_terms(method: str) -> tuple[str, ...]:
    """The terms of `method`'s logits that hold no position (the ones the content dial scales):
    "content" for most methods (for an input encoding it already has the positions mixed in),
    Transformer-XL's a and c, DeBERTa's c2c — each encoder class says which (content_terms)."""
    return REGISTRY[method].content_terms


def position_terms(method: str) -> tuple[str, ...]:
    return REGISTRY[method].position_terms()


def mixed_in_input(method: str) -> bool:
    """True for input encodings (sinusoidal, learned): the position vector is added to the token
    vector before W_q and W_k, so every logit mixes content and position; no term is position-only."""
    return REGISTRY[method].kind == "input"


def lab_config(method: str) -> object:
    """The config under which `method` covers positions 0 … LAB_POSITIONS − 1 (None: its default)."""
    return REGISTRY[method].config_covering(LAB_POSITIONS)


def term_scales(method: str, content_scale: float, off: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    """(name, scale) for run_tokens: content terms × the dial, switched-off terms × 0."""
    scales = {t: float(content_scale) for t in content_terms(method)}
    for t in off:
        if t not in REGISTRY[method].term_names:
            raise KeyError(f"{method} has no term {t!r}; it has {REGISTRY[method].term_names}")
        scales[t] = 0.0
    return tuple(sorted(scales.items()))


def pick_head(a: np.ndarray, head: int | None) -> np.ndarray:
    """(h, i, j) → (i, j): one head (0-based) or, for None, the mean over heads."""
    one: np.ndarray = a.mean(axis=0) if head is None else a[head]
    return one


@dataclass
class Panel:
    method: str
    label: str
    kind: str
    tokens: tuple[str, ...]
    weights: np.ndarray  # (h, i, j)
    content: np.ndarray  # (h, i, j) the position-free part of the logits as it enters the softmax
    position: np.ndarray | None  # (h, i, j) the position part as it enters; None for NoPE
    logits: np.ndarray  # (h, i, j) their sum, NaN where masked
    terms: tuple[str, ...]  # the encoder's named terms
    off: tuple[str, ...]  # the ones switched off
    mixed: bool  # input encoding: "content" already holds positions; `position` is a difference


def panel(
    text: str,
    seed: int,
    method: str,
    n_heads: int = 4,
    causal: bool = False,
    content_scale: float = 1.0,
    off: tuple[str, ...] = (),
    max_tokens: int = 256,
) -> Panel:
    """One encoding on the learner's sentence, with the content dial and term switches applied.

    content / position are the logit parts *as they enter the softmax* (dial and switches applied),
    so content + position = logits (up to the mask). For an input encoding there is no separate
    position term; `content` is then the same layer without any positions (NoPE: same tokens, same
    projections) and `position` what adding the position vectors changed in the logits.
    """
    tokens = tokenize(text, max_tokens=max_tokens).tokens
    scales = term_scales(method, content_scale, off)
    view = run_tokens(tokens, seed, method, D_MODEL, n_heads, causal, 0, lab_config(method), scales)
    mask = np.isnan(view.logits)  # (h, i, j)
    s = dict(scales)
    if mixed_in_input(method):
        # The dial and switch act on the one term there is ("content" = q·k with the positions inside).
        f = s.get("content", 1.0)
        bare = run_tokens(tokens, seed, "none", D_MODEL, n_heads, causal).terms["content"]  # (h, i, j)
        content = f * bare
        position: np.ndarray | None = f * view.terms["content"] - content
    else:
        content = _scaled_sum(view.terms, content_terms(method), s)
        pos = position_terms(method)
        position = _scaled_sum(view.terms, pos, s) if pos else None
    content = np.where(mask, np.nan, content)
    if position is not None:
        position = np.where(mask, np.nan, position)
    cls = REGISTRY[method]
    return Panel(
        method,
        cls.label,
        cls.kind,
        tokens,
        view.weights,
        content,
        position,
        view.logits,
        cls.term_names,
        tuple(off),
        mixed_in_input(method),
    )


def _scaled_sum(terms: dict[str, np.ndarray], names: tuple[str, ...], scales: dict[str, float]) -> np.ndarray:
    """Σ scale·term over `names` (h, i, j), starting from zeros as Python's sum starts from 0."""
    total = np.zeros_like(terms[names[0]]) if names else np.zeros(())
    for t in names:
        total = total + scales.get(t, 1.0) * terms[t]
    return total


def top_key(weights: np.ndarray, query: int) -> tuple[int, float]:
    """(j, weight) of the key the query attends to most, for an (i, j) map."""
    row = weights[query]
    j = int(np.nanargmax(row))
    return j, float(row[j])


def position_share(p: Panel, head: int | None) -> float:
    """mean |position part| / (mean |content part| + mean |position part|) over visible cells."""
    if p.position is None:
        return 0.0
    c = np.nanmean(np.abs(pick_head(p.content, head)))
    q = np.nanmean(np.abs(pick_head(p.position, head)))
    return float(q / (c + q)) if c + q > 0 else 0.0


# -- shift test --------------------------------------------------------------------------------


def prefix_tokens(prefix: str) -> tuple[str, ...]:
    return tokenize(prefix[:MAX_PREFIX_CHARS], max_tokens=MAX_PREFIX_TOKENS).tokens


@dataclass
class ShiftTest:
    methods: tuple[str, ...]
    labels: tuple[str, ...]
    tokens: tuple[str, ...]  # the original words (n,)
    prefix: tuple[str, ...]  # (k,)
    max_change: np.ndarray  # (methods,) max |Δ weight| among the original words
    mean_change: np.ndarray  # (methods,)
    largest: tuple[tuple[int, int], ...]  # (i, j) of the largest change per method, in original positions
    changed: np.ndarray  # (methods,) bool: max_change > CHANGED
    delta: np.ndarray  # (methods, i, j) Δ weight with the chosen head / head mean


def _softmax_rows(logits: np.ndarray) -> np.ndarray:
    z = np.where(np.isnan(logits), -np.inf, logits)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    weights: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return weights


def shift_test(
    text: str,
    seed: int,
    methods: tuple[str, ...],
    prefix: str,
    n_heads: int = 4,
    causal: bool = False,
    head: int | None = None,
    max_tokens: int = 256,
) -> ShiftTest:
    """Run the sentence with and without a prefix. Among the original words only (queries and keys),
    compare the attention weights: after the prefix, each original query's weights are renormalised
    over the original keys (softmax of the same logits restricted to those keys), so a change can
    only come from the logits between the original words, not from the mass the prefix takes.

    Relative encodings give zero (up to float64 rounding); absolute ones do not."""
    tokens = tokenize(text, max_tokens=max_tokens).tokens
    pre = prefix_tokens(prefix)
    k = len(pre)
    maxes: list[float] = []
    means: list[float] = []
    where: list[tuple[int, int]] = []
    deltas: list[np.ndarray] = []
    for m in methods:
        cfg = lab_config(m)
        before = run_tokens(tokens, seed, m, D_MODEL, n_heads, causal, 0, cfg, float64=True)
        after = run_tokens(pre + tokens, seed, m, D_MODEL, n_heads, causal, 0, cfg, float64=True)
        w0 = _softmax_rows(before.logits)  # (h, i, j)
        w1 = _softmax_rows(after.logits[:, k:, k:])  # (h, i, j) the original words only
        d = w1 - w0  # (h, i, j)
        dh = pick_head(d, head)  # (i, j)
        a = np.abs(dh)
        maxes.append(float(a.max()) if a.size else 0.0)
        means.append(float(a.mean()) if a.size else 0.0)
        row, col = np.unravel_index(int(a.argmax()), a.shape) if a.size else (0, 0)
        where.append((int(row), int(col)))
        deltas.append(dh)
    mx = np.asarray(maxes)
    return ShiftTest(
        tuple(methods),
        tuple(REGISTRY[m].label for m in methods),
        tokens,
        pre,
        mx,
        np.asarray(means),
        tuple(where),
        mx > CHANGED,
        np.stack(deltas),
    )


# -- length test -------------------------------------------------------------------------------


def repeated_tokens(tokens: tuple[str, ...], length: int) -> tuple[str, ...]:
    """The sentence repeated (cut at the end) to exactly `length` tokens."""
    if not tokens:
        return ()
    reps = -(-length // len(tokens))
    return (tokens * reps)[:length]


def length_config(method: str, train_len: int, length: int) -> object:
    """The encoder's config for a model "trained" on `train_len` tokens and run on `length`: a learned
    table gets exactly train_len rows; the RoPE scalings stretch train_len to the run's length."""
    return REGISTRY[method].config_for_lengths(train_len, length)


@dataclass
class LengthRun:
    method: str
    label: str
    error: str  # non-empty when the encoder has no representation for some positions
    first_missing: int  # the first position without one (−1 when none is missing)
    entropy: np.ndarray  # (n,) attention entropy per query (nats, mean over heads); NaN if error
    distance: np.ndarray  # (n,) Σ_j w_ij |i − j| per query (mean over heads)
    weights: np.ndarray  # (i, j) chosen head or head mean; empty if error


@dataclass
class LengthTest:
    tokens: tuple[str, ...]
    train_len: int
    runs: tuple[LengthRun, ...]
    uniform_entropy: np.ndarray  # (n,) the same two numbers for attention spread evenly over the
    uniform_distance: np.ndarray  # (n,) keys a query may see: the "no preference" reference


def length_test(
    text: str,
    seed: int,
    methods: tuple[str, ...],
    train_len: int,
    length: int,
    n_heads: int = 4,
    causal: bool = False,
    head: int | None = None,
) -> LengthTest:
    """The sentence repeated to `length` tokens, each encoding "trained" on `train_len` of them."""
    if not 1 <= train_len <= MAX_LENGTH or not 1 <= length <= MAX_LENGTH:
        raise ValueError(f"lengths must be 1…{MAX_LENGTH}")
    tokens = repeated_tokens(tokenize(text).tokens, length)
    n = len(tokens)
    runs = []
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    for m in methods:
        label = REGISTRY[m].label
        try:
            view = run_tokens(tokens, seed, m, D_MODEL, n_heads, causal, 0, length_config(m, train_len, n))
        except PositionOutOfRange as e:
            nan = np.full(n, np.nan)
            runs.append(LengthRun(m, label, str(e), e.position, nan, nan, np.zeros((0, 0))))
            continue
        w = view.weights  # (h, i, j)
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -np.where(w > 0, w * np.log(w), 0.0).sum(-1).mean(0)  # (i,)
        dist = (w * np.abs(i - j)).sum(-1).mean(0)  # (i,)
        runs.append(LengthRun(m, label, "", -1, ent, dist, pick_head(w, head)))
    seen = (j <= i) if causal else np.ones((n, n), dtype=bool)  # (i, j) keys each query may see
    count = seen.sum(-1)  # (i,)
    uniform_distance = (seen * np.abs(i - j)).sum(-1) / count
    return LengthTest(tokens, train_len, tuple(runs), np.log(count.astype(np.float64)), uniform_distance)
