"""CoPE chapter: what counts, the gates it sets, the positions they add up to, and what attention does
with them — on the learner's text. Primitives in, numpy out (pages cache on the arguments).

Two sources of gates appear in the chapter:
- hand-set gates (count_view): the learner picks what counts and the gate logits are set from the
  token types, ±s; these stand in for a head that has learned "count sentence ends";
- the toy model's own gates (model_view): σ(q·k/√d) of an untrained CoPE layer, exactly what
  encoders/cope.py computes.
Both go through the same encoders.cope.contextual_positions.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from typing import cast

import numpy as np
import regex
import torch

from encoders import build
from encoders.attention import AttentionResult, toy_layer
from encoders.cope import (
    CoPE,
    CoPEConfig,
    Variant,
    contextual_positions,
    gate_logits_from_counted,
    interpolate_position_logits,
)
from encoders.text import MAX_CHARS, MAX_TOKENS, token_embeddings, token_key, tokenize

# What a learner can count. These are stable ids, not display text: they are widget values kept in
# page addresses (?cope_unit=sentence+ends) and in lesson presets (ui/classroom.py), so they never
# change with the language; the page shows each one as t("cope.unit.<id>").
UNIT_TOKEN, UNIT_WORD, UNIT_SENTENCE, UNIT_PARAGRAPH, UNIT_PICKED = UNITS = (
    "every token",
    "word starts",
    "sentence ends",
    "paragraph ends",
    "a word you pick",
)
SENTENCE_ENDS = frozenset({".", "!", "?", "。", "！", "？", "…", "؟", "।"})
MAX_SHARPNESS = 10.0  # σ(10) = 0.99995: practically a hard gate
MAX_NPOS = 64  # the paper's P for a context of 1024
MAX_TARGET = 8  # the attention demo can prefer a count of 0 … MAX_TARGET
MAX_PREFERENCE = 10.0
D_MODEL, N_HEADS = 64, 4

_WORD = regex.compile(r"[\p{L}\p{N}]")


def is_word(token: str) -> bool:
    """A token that is (part of) a word: it contains a letter or a digit, in any script."""
    return bool(_WORD.search(token))


def word_choices(text: str, max_tokens: int = MAX_TOKENS) -> tuple[str, ...]:
    """The distinct words of the text (case-folded), in order of first appearance."""
    seen: dict[str, None] = {}
    for t in tokenize(text, max_tokens).tokens:
        if is_word(t):
            seen.setdefault(token_key(t), None)
    return tuple(seen)


def paragraph_ends(text: str, tokens: tuple[str, ...]) -> np.ndarray:
    """Bool (n,): the last token before a blank line, and the last token of the text.

    The tokenizer drops whitespace, so the blank lines are found in the text between tokens.
    """
    clean = unicodedata.normalize("NFC", (text or "")[:MAX_CHARS])
    ends = np.zeros(len(tokens), dtype=bool)
    cursor, spans = 0, []
    for t in tokens:
        at = clean.find(t, cursor)
        if at < 0:  # cannot happen for tokens of this text; stay safe rather than mis-mark
            at = cursor
        spans.append((at, at + len(t)))
        cursor = at + len(t)
    for k in range(len(tokens) - 1):
        gap = clean[spans[k][1] : spans[k + 1][0]]
        if regex.search(r"\n[^\S\n]*\n", gap.replace("\r\n", "\n")):
            ends[k] = True
    if len(tokens):
        ends[-1] = True
    return ends


def counted_mask(text: str, unit: str, word: str = "", max_tokens: int = MAX_TOKENS) -> np.ndarray:
    """Which tokens count (bool (n,)) under the chosen unit."""
    tokens = tokenize(text, max_tokens).tokens
    if unit == UNIT_TOKEN:
        return np.ones(len(tokens), dtype=bool)
    if unit == UNIT_WORD:
        # The tokenizer keeps a word whole, so every word token is the start of a word; with a
        # sub-word tokenizer only the first piece of each word would count.
        return np.array([is_word(t) for t in tokens], dtype=bool)
    if unit == UNIT_SENTENCE:
        return np.array([t in SENTENCE_ENDS for t in tokens], dtype=bool)
    if unit == UNIT_PARAGRAPH:
        return paragraph_ends(text, tokens)
    if unit == UNIT_PICKED:
        key = token_key(word)
        return np.array([token_key(t) == key for t in tokens], dtype=bool)
    raise ValueError(f"unknown unit {unit!r}; choose one of {UNITS}")


@dataclass
class CountView:
    tokens: tuple[str, ...]
    counted: np.ndarray  # (n,) bool
    gates: np.ndarray  # (i, j), NaN above the diagonal (the future: gate exactly 0, not drawn)
    positions: np.ndarray  # (i, j) clamped at npos_max − 1, NaN above the diagonal
    unclamped_max: float  # the largest count before the clamp
    n_clamped: int  # how many (i, j) cells the clamp changed


def count_view(
    text: str,
    unit: str,
    word: str,
    sharpness: float,
    all_open: bool,
    npos_max: int,
    max_tokens: int = MAX_TOKENS,
) -> CountView:
    """Hand-set gates (±sharpness on counted / other tokens, or every gate exactly 1) → positions."""
    tokens = tokenize(text, max_tokens).tokens
    counted = np.ones(len(tokens), dtype=bool) if all_open else counted_mask(text, unit, word, max_tokens)
    s = math.inf if all_open else float(sharpness)
    logits = gate_logits_from_counted(torch.from_numpy(counted), s)  # (i, j), −inf in the future
    p = contextual_positions(logits)  # (i, j)
    clamped = p.clamp(max=npos_max - 1)  # (i, j)
    future = np.triu(np.ones((len(tokens), len(tokens)), dtype=bool), 1)
    gates = torch.sigmoid(logits).numpy().copy()
    gates[future] = np.nan
    pos = clamped.numpy().copy()
    pos[future] = np.nan
    return CountView(
        tokens,
        counted,
        gates,
        pos,
        float(p.max()) if len(tokens) else 0.0,
        int((p > npos_max - 1).sum()),
    )


@dataclass
class InterpolationView:
    n: np.ndarray  # (P,) integer positions 0 … P − 1
    z: np.ndarray  # (P,) q_i·e[n] for the picked query and head (the toy model's table)
    p: float  # the fractional position of the picked key
    lo: int
    hi: int
    w: float  # p − ⌊p⌋
    value: float  # w·z[hi] + (1 − w)·z[lo], from encoders.cope.interpolate_position_logits


def _toy(tokens: tuple[str, ...], seed: int, npos_max: int, variant: str = "paper") -> tuple[CoPE, AttentionResult]:
    """One untrained CoPE layer on the tokens (seeded), run causally; returns the torch result."""
    keys = tuple(token_key(t) for t in tokens)
    x = token_embeddings(keys, D_MODEL, seed)[None].double()  # (1, n, D)
    # The page's radio holds one of CoPE's variants; CoPE itself refuses any other string.
    enc = build("cope", D_MODEL, N_HEADS, seed, CoPEConfig(npos_max=npos_max, variant=cast(Variant, variant)))
    assert isinstance(enc, CoPE)
    layer = toy_layer(enc, seed).double()
    with torch.inference_mode():
        r = layer(x, causal=True)
    return enc, r


def interpolation_view(
    text: str,
    unit: str,
    word: str,
    sharpness: float,
    all_open: bool,
    npos_max: int,
    query: int,
    key: int,
    seed: int,
    head: int = 0,
    max_tokens: int = MAX_TOKENS,
) -> InterpolationView:
    """How q_i·e[p] is read off for a fractional p: the toy model's q and table, the hand-set p."""
    cv = count_view(text, unit, word, sharpness, all_open, npos_max, max_tokens)
    enc, r = _toy(cv.tokens, seed, npos_max)
    with torch.inference_mode():
        z = (r.q[0, head, query] @ enc.table[head].double()).numpy()  # (P,)
        p = float(cv.positions[query, key])
        value = interpolate_position_logits(
            torch.from_numpy(z)[None, None, None], torch.tensor([[[[p]]]], dtype=torch.float64)
        ).item()
    lo, hi = math.floor(p), math.ceil(p)
    return InterpolationView(np.arange(npos_max), z, p, lo, hi, p - lo, value)


@dataclass
class AttentionView:
    tokens: tuple[str, ...]
    position_logits: np.ndarray  # (i, j) the hand-set q_i·e[p_ij], interpolated; NaN in the future
    weights: np.ndarray  # (i, j) softmax over j; NaN in the future


def preferred_count_attention(
    text: str,
    unit: str,
    word: str,
    sharpness: float,
    all_open: bool,
    npos_max: int,
    target: int,
    strength: float,
    content_scale: float,
    seed: int,
    max_tokens: int = MAX_TOKENS,
) -> AttentionView:
    """Attention when a head's position logits say "prefer count = target":
    q_i·e[n] = strength if n == target else 0, interpolated at p_ij, plus content_scale × the toy
    model's content logits (head 0). With sentence-end gates and target 1: "the last sentence"."""
    cv = count_view(text, unit, word, sharpness, all_open, npos_max, max_tokens)
    n = len(cv.tokens)
    z = np.zeros(npos_max)
    z[min(target, npos_max - 1)] = strength
    p = torch.from_numpy(np.nan_to_num(cv.positions, nan=0.0))  # (i, j)
    zt = torch.from_numpy(z)[None, None, None].expand(1, 1, n, npos_max)  # (1, 1, i, P)
    pos = interpolate_position_logits(zt, p[None, None])[0, 0].numpy()  # (i, j)
    content = np.zeros((n, n))
    if content_scale:
        _, r = _toy(cv.tokens, seed, npos_max)
        content = r.terms["content"][0, 0].numpy() * content_scale  # (i, j)
    logits = pos + content
    future = np.triu(np.ones((n, n), dtype=bool), 1)
    logits[future] = -np.inf
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    pos = pos.copy()
    pos[future] = np.nan
    w[future] = np.nan
    return AttentionView(cv.tokens, pos, w)


@dataclass
class ModelView:
    tokens: tuple[str, ...]
    gates: np.ndarray  # (h, i, j) σ(q·k/√d), NaN in the future
    positions: np.ndarray  # (h, i, j), NaN in the future
    weights: np.ndarray  # (h, i, j)


def model_view(text: str, seed: int, npos_max: int, variant: str, max_tokens: int = MAX_TOKENS) -> ModelView:
    """The untrained toy CoPE layer's own gates, positions and attention (encoders/cope.py as is)."""
    tokens = tokenize(text, max_tokens).tokens
    _, r = _toy(tokens, seed, npos_max, variant)
    n = len(tokens)
    future = np.triu(np.ones((n, n), dtype=bool), 1)
    gates = r.extras["gates"][0].numpy().copy()
    pos = r.extras["positions"][0].numpy().copy()
    weights = r.weights[0].numpy().copy()
    for a in (gates, pos, weights):
        a[:, future] = np.nan
    return ModelView(tokens, gates, pos, weights)


def last_sentence_count(cv: CountView, word: str) -> tuple[int, np.ndarray]:
    """With sentence-end gates: how often `word` appears in the last sentence, read off the counts.

    The last sentence is every key whose count from the last query equals the last token's own
    count (0, or 1 when the text ends on "." — that "." is counted on the diagonal). Hard gates
    assumed; returns (count, bool (n,) marking the keys in the last sentence).
    """
    row = cv.positions[-1]
    own = row[-1]
    in_last = np.abs(row - own) < 0.5
    key = token_key(word)
    hits = in_last & np.array([token_key(t) == key for t in cv.tokens])
    return int(hits.sum()), in_last


SEED_EXAMPLES = {
    # id (a widget value, named t("cope.seeds.example.<id>") on the page):
    # (the token the query looks for, the filler token)
    "yyyyxyyy": ("x", "y"),
    "aaaabaaabb": ("b", "a"),
}
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


def seed_example(example: str, gap: int, delta: float, slope: float) -> SeedExampleView:
    """The last query's attention when content says "look for the sought token" (+delta on it)
    and position says "prefer near" (−slope per step), measured three ways:
    no position; relative, −slope·(i − j) (i − j = query − key, in tokens);
    CoPE, −slope·p_ij with gates open on the sought token only (p in occurrences of it)."""
    sought, _ = SEED_EXAMPLES[example]
    tokens = seed_example_tokens(example, gap)
    n = len(tokens)
    i = n - 1
    content = np.array([delta if t == sought else 0.0 for t in tokens])  # (j,)
    distance = (i - np.arange(n)).astype(float)  # (j,) i − j, query − key
    counted = torch.tensor([t == sought for t in tokens])
    p = contextual_positions(gate_logits_from_counted(counted, math.inf))[i].numpy()  # (j,)

    def softmax(x: np.ndarray) -> np.ndarray:
        e = np.exp(x - x.max())
        weights: np.ndarray = e / e.sum()
        return weights

    rulers = (
        softmax(content),  # no position term
        softmax(content - slope * distance),  # relative: −slope·(i − j)
        softmax(content - slope * p),  # CoPE: −slope·p_ij
    )
    return SeedExampleView(tokens, dict(zip(RULERS, rulers, strict=True)), p)
