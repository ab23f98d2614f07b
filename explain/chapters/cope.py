"""CoPE chapter: what counts, the gates it sets, the positions they add up to, and what attention does
with them — on the learner's text. Primitives in, numpy out (pages cache on the arguments).

Two sources of gates appear in the chapter:
- hand-set gates (count_view): the learner picks what counts and the gate logits are set from the
  token types, ±s; these stand in for a head that has learned "count sentence ends";
- the toy model's own gates (model_view): σ(q·k/√d) of an untrained CoPE layer, exactly what
  encoders/cope.py computes (the 1/√d is the paper's appendix listing; its equations leave it out).
Both go through the same encoders.cope.contextual_positions.

The paper's own numbers (language modelling, length generalisation) live in cope_results.py, the
seed review's two small puzzles in cope_seeds.py.

Axis legend: i query position, j key position, n tokens, P position embeddings (p_max), h heads.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

import numpy as np
import regex
import torch

from encoders import build
from encoders import cope as enc
from encoders.attention import AttentionResult, toy_layer
from encoders.cope import (
    CoPE,
    CoPEConfig,
    contextual_positions,
    gate_logits_from_counted,
    interpolate_position_logits,
)
from encoders.text import MAX_CHARS, MAX_TOKENS, token_embeddings, token_key, tokenize
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.chapters.common import TOY_D_MODEL, TOY_HEADS
from explain.i18n import t
from explain.question import Question

# What a learner can count. These are stable ids, not display text: they are widget values kept in
# page addresses (?cope_unit=sentence+ends) and in lesson presets (explain/lessons.py), so they never
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
D_MODEL, N_HEADS = TOY_D_MODEL, TOY_HEADS  # the toy layer every chapter draws
VARIANTS = ("paper", "official")  # encoders/cope.py CoPEConfig.variant, the model section's radio
WINDOW = 6  # the interpolation plot shows counts ⌊p⌋ − WINDOW … ⌈p⌉ + WINDOW: 64 values would hide the two

_WORD = regex.compile(r"[\p{L}\p{N}]")


def is_word(token: str) -> bool:
    """A token that is (part of) a word: it contains a letter or a digit, in any script."""
    return bool(_WORD.search(token))


# Cache bounds (pages/contextual/cope.py): An entry holds a few n × n float64 arrays (n ≤ 256, about 0.5 MB
# each); model_view holds 3 × 4 heads of them (~6 MB), hence its smaller bound.
@bounded(32)
def word_choices(text: str, max_tokens: int = MAX_TOKENS) -> tuple[str, ...]:
    """The distinct words of the text (case-folded), in order of first appearance."""
    seen: dict[str, None] = {}
    for tok in tokenize(text, max_tokens).tokens:
        if is_word(tok):
            seen.setdefault(token_key(tok), None)
    return tuple(seen)


def default_word(words: tuple[str, ...]) -> int:
    """Index of the word a picker starts on: "alice" (the paper's example) if the text has it."""
    return words.index("alice") if "alice" in words else 0


def paragraph_ends(text: str, tokens: tuple[str, ...]) -> np.ndarray:
    """Bool (n,): the last token before a blank line, and the last token of the text.

    The tokenizer drops whitespace, so the blank lines are found in the text between tokens.
    """
    clean = unicodedata.normalize("NFC", (text or "")[:MAX_CHARS])
    ends = np.zeros(len(tokens), dtype=bool)
    cursor, spans = 0, []
    for tok in tokens:
        at = clean.find(tok, cursor)
        if at < 0:  # cannot happen for tokens of this text; stay safe rather than mis-mark
            at = cursor
        spans.append((at, at + len(tok)))
        cursor = at + len(tok)
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
        return np.array([is_word(tok) for tok in tokens], dtype=bool)
    if unit == UNIT_SENTENCE:
        return np.array([tok in SENTENCE_ENDS for tok in tokens], dtype=bool)
    if unit == UNIT_PARAGRAPH:
        return paragraph_ends(text, tokens)
    if unit == UNIT_PICKED:
        key = token_key(word)
        return np.array([token_key(tok) == key for tok in tokens], dtype=bool)
    raise ValueError(f"unknown unit {unit!r}; choose one of {UNITS}")


def _future(n: int) -> np.ndarray:
    """Bool (i, j): the keys after each query (the causal mask hides them; maps leave them blank)."""
    return np.triu(np.ones((n, n), dtype=bool), 1)


# ------------------------------------------------------------------------------ hand-set gates


@dataclass
class QueryRow:
    """One query's row of counts, as the bar chart draws it."""

    tokens: tuple[str, ...]  # keys 0 … i
    counts: np.ndarray  # (j,) p_ij for j = 0 … i
    highlight: tuple[int, ...]  # keys that count (none when every gate is open: all would be)
    first: float  # p_i0, the first token's count
    own: float  # p_ii, the query's own gate


@dataclass
class CountView:
    tokens: tuple[str, ...]
    counted: np.ndarray  # (n,) bool
    gates: np.ndarray  # (i, j), NaN above the diagonal (the future: gate exactly 0, not drawn)
    positions: np.ndarray  # (i, j) clamped at npos_max − 1, NaN above the diagonal
    unclamped_max: float  # the largest count before the clamp
    n_clamped: int  # how many (i, j) cells the clamp changed
    npos: int  # P
    all_open: bool

    @property
    def n_counted(self) -> int:
        return int(self.counted.sum())

    @property
    def relative_gap(self) -> float:
        """max |p_ij − min(i − j + 1, P − 1)| on and below the diagonal: 0 when every gate is open."""
        i, j = np.tril_indices(len(self.tokens))
        relative = np.minimum(i - j + 1.0, self.npos - 1)
        return float(np.abs(self.positions[i, j] - relative).max(initial=0.0))

    def row(self, query: int) -> QueryRow:
        counts = self.positions[query, : query + 1]  # (j,) keys 0 … query
        marked = () if self.all_open else tuple(int(j) for j in np.flatnonzero(self.counted[: query + 1]))
        return QueryRow(self.tokens[: query + 1], counts, marked, float(counts[0]), float(counts[-1]))


@bounded(32)
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
    future = _future(len(tokens))
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
        npos_max,
        all_open,
    )


# ------------------------------------------------------------------------- the question


# The question's options (language-neutral ids, named t("cope.positions.option.<id>")).
POSITION_OPTIONS = ("relative", "offset", "one", "query")


def candidate_positions(n: int, cap: int) -> dict[str, np.ndarray]:
    """Each option's formula on every pair j ≤ i (np.tril_indices order), clamped at cap like CoPE."""
    i, j = np.tril_indices(n)
    formulas = {"relative": i - j + 1.0, "offset": j - i + 0.0, "one": np.ones(i.size), "query": i + 1.0}
    return {k: np.minimum(formulas[k], cap) for k in POSITION_OPTIONS}


@bounded(32)
def positions_question(n_tokens: int, lang: str) -> Question | None:
    """Open every gate: which formula gives p_ij? The answer is the one candidate that matches what
    CoPE's own code computes on a text of n_tokens tokens (clamped at P − 1 like the page's map).
    None for a one-token text: one pair (0, 0) cannot tell the formulas apart."""
    if n_tokens < 2:
        return None
    cap = MAX_NPOS - 1
    p = contextual_positions(gate_logits_from_counted(torch.ones(n_tokens, dtype=torch.bool), math.inf))
    i, j = np.tril_indices(n_tokens)
    observed = p.clamp(max=cap).numpy()[i, j]  # (pairs,)
    candidates = candidate_positions(n_tokens, cap)
    matches = [k for k in POSITION_OPTIONS if np.array_equal(candidates[k], observed)]
    if len(matches) != 1:  # cannot happen for n ≥ 2 (a test sweeps every n); never ask a question without one answer
        return None
    clamped = int((i - j + 1 > cap).sum())
    facts: dict[str, object] = {
        "n": n_tokens,
        "pairs": int(i.size),
        "cap": cap,
        "clamped": clamped,
        "diff": float(np.abs(observed - candidates["relative"]).max()),
    }
    key = "cope.positions.answer_clamped" if clamped else "cope.positions.answer"
    return Question(
        key="cope_q",
        prompt=t("cope.positions.question", lang),
        options=POSITION_OPTIONS,
        labels=tuple(t(f"cope.positions.option.{k}", lang) for k in POSITION_OPTIONS),
        answer=matches[0],
        explanation=t(key, lang, **facts),
        facts=facts,
    )


# ------------------------------------------------------------------------- interpolation


@dataclass
class InterpolationView:
    n: np.ndarray  # (P,) integer positions 0 … P − 1
    z: np.ndarray  # (P,) q_i·e[n] for the picked query and head (the toy model's table)
    p: float  # the fractional position of the picked key
    lo: int
    hi: int
    w: float  # p − ⌊p⌋
    value: float  # w·z[hi] + (1 − w)·z[lo], from encoders.cope.interpolate_position_logits

    @property
    def first(self) -> int:
        """The first count the plot shows."""
        return max(0, self.lo - WINDOW)

    @property
    def last(self) -> int:
        """The last count the plot shows."""
        return min(self.n.size - 1, self.hi + WINDOW)

    @property
    def n_window(self) -> np.ndarray:
        return self.n[self.first : self.last + 1]

    @property
    def z_window(self) -> np.ndarray:
        return self.z[self.first : self.last + 1]

    @property
    def z_lo(self) -> float:
        return float(self.z[self.lo])

    @property
    def z_hi(self) -> float:
        return float(self.z[self.hi])


def _config(npos_max: int, variant: str) -> CoPEConfig:
    """The encoder's config for a variant id of the page (VARIANTS)."""
    if variant == "paper":
        return CoPEConfig(npos_max=npos_max, variant="paper")
    if variant == "official":
        return CoPEConfig(npos_max=npos_max, variant="official")
    raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")


def _toy(tokens: tuple[str, ...], seed: int, npos_max: int, variant: str = "paper") -> tuple[CoPE, AttentionResult]:
    """One untrained CoPE layer on the tokens (seeded), run causally; returns the encoder and result."""
    keys = tuple(token_key(tok) for tok in tokens)
    x = token_embeddings(keys, D_MODEL, seed)[None].double()  # (1, n, D)
    enc = build("cope", D_MODEL, N_HEADS, seed, _config(npos_max, variant))
    layer = toy_layer(enc, seed).double()
    with torch.inference_mode():
        r = layer(x, causal=True)
    assert isinstance(enc, CoPE)
    return enc, r


@bounded(32)
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
        z = (r.q[0, head, query] @ enc.head_tables[head].double()).numpy()  # (P,)
        p = float(cv.positions[query, key])
        value = interpolate_position_logits(
            torch.from_numpy(z)[None, None, None], torch.tensor([[[[p]]]], dtype=torch.float64)
        ).item()
    lo, hi = math.floor(p), math.ceil(p)
    return InterpolationView(np.arange(npos_max), z, p, lo, hi, p - lo, value)


# ----------------------------------------------------------------------------- attention


@dataclass
class AttentionView:
    tokens: tuple[str, ...]
    position_logits: np.ndarray  # (i, j) the hand-set q_i·e[p_ij], interpolated; NaN in the future
    weights: np.ndarray  # (i, j) softmax over j; NaN in the future


@bounded(16)
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
    future = _future(n)
    logits[future] = -np.inf
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    pos = pos.copy()
    pos[future] = np.nan
    w[future] = np.nan
    return AttentionView(cv.tokens, pos, w)


# ---------------------------------------------------------------------------- the toy model


@dataclass
class ModelView:
    tokens: tuple[str, ...]
    gates: np.ndarray  # (h, i, j) σ(q·k/√d), NaN in the future
    positions: np.ndarray  # (h, i, j), NaN in the future
    weights: np.ndarray  # (h, i, j)

    def head(self, h: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Head h (numbered from 1, as on the page): its gates, positions and weights, each (i, j)."""
        return self.gates[h - 1], self.positions[h - 1], self.weights[h - 1]


@bounded(8)
def model_view(text: str, seed: int, npos_max: int, variant: str, max_tokens: int = MAX_TOKENS) -> ModelView:
    """The untrained toy CoPE layer's own gates, positions and attention (encoders/cope.py as is)."""
    tokens = tokenize(text, max_tokens).tokens
    _, r = _toy(tokens, seed, npos_max, variant)
    future = _future(len(tokens))
    gates = r.extras["gates"][0].numpy().copy()
    pos = r.extras["positions"][0].numpy().copy()
    weights = r.weights[0].numpy().copy()
    for a in (gates, pos, weights):
        a[:, future] = np.nan
    return ModelView(tokens, gates, pos, weights)


# -------------------------------------------------------------------- the paper's Alice question


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
    hits = in_last & np.array([token_key(tok) == key for tok in cv.tokens])
    return int(hits.sum()), in_last


@dataclass
class AliceView:
    tokens: tuple[str, ...]
    in_last: np.ndarray  # (n,) 1.0 for a key in the last sentence, else 0.0 (the bars)
    hits: tuple[int, ...]  # keys in the last sentence that are the word
    count: int  # len(hits)
    total: int  # occurrences of the word in the whole text


@bounded(32)
def alice_view(text: str, word: str, max_tokens: int = MAX_TOKENS) -> AliceView:
    """How many times `word` appears in the last sentence, counted with hard sentence-end gates
    (whatever the sharpness the page's other sections use)."""
    hard = count_view(text, UNIT_SENTENCE, "", math.inf, False, MAX_NPOS, max_tokens)
    count, in_last = last_sentence_count(hard, word)
    same = np.array([token_key(tok) == token_key(word) for tok in hard.tokens], dtype=bool)
    hits = tuple(int(j) for j in np.flatnonzero(in_last & same))
    return AliceView(hard.tokens, in_last.astype(float), hits, count, int(same.sum()))


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="cope",
    part="Contextual",
    page="pages/contextual/cope.py",
    icon=":material/format_list_numbered:",
    order=110,
    papers=(enc.PAPER,),
    sources=(
        "encoders.cope:contextual_positions",
        "encoders.cope:gate_logits_from_counted",
        "encoders.cope:integer_position_logits",
        "encoders.cope:interpolate_position_logits",
        "encoders.cope:CoPE.positions",
        "encoders.cope:CoPE.logit_terms",
    ),
    encodings=("cope",),
    derivations=("cope-all-gates-open",),
    link={
        "cope_unit": "every token",
        "cope_npos": "16",
        "cope_sharpness": "2.5",
        "cope_example": "aaaabaaabb",
        "cope_variant": "official",
    },
    link_shows={
        "cope_unit": "every token",
        "cope_npos": 16,
        "cope_sharpness": 2.5,
        "cope_example": "aaaabaaabb",
        "cope_variant": "official",
    },
)
