"""The attention lab's shift test, measured and read: the question it answers, why each encoding moved or not,
and what a length-dependent RoPE (dynamic NTK) does to a KV cache (numbers and words, no Streamlit).

Axis legend: h heads, n words of the sentence, k prefix tokens, ℓ text length, f frequency pair,
d head dimension, p position.

    shift_test      prepend a phrase; how much the attention among the original words changed
                    (shift_deltas, every head; shift_test_from, one head or their mean)
    shift_section   the shift test for the chosen encodings, its question (which one changed most?)
                    answered by the measurement, and each encoding's reason, computed from its class
                    facts and, for a RoPE whose frequencies follow the text's length, from θ(ℓ) itself
    kv_cache        dynamic NTK's θ changes with the text's length, so a key cached at one length is
                    compared with a query rotated at another: one pair's logit with and without a cache
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from encoders import REGISTRY, build
from encoders.attention import SelfAttention, split_heads, toy_layer
from encoders.base import content_logits
from encoders.rope import RoPE
from encoders.text import token_embeddings, token_key, tokenize
from explain.bounds import bounded
from explain.i18n import t
from explain.question import Question

from .attention_lab import (
    CHANGED,
    D_MODEL,
    LAB_POSITIONS,
    MAX_PREFIX_CHARS,
    MAX_PREFIX_TOKENS,
    MAX_TOKENS,
    lab_config,
    pick_head,
    short,
)
from .common import sign_text

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
    n_heads: int = 4

    def subset(self, methods: tuple[str, ...]) -> ShiftTest:
        """The same test for some of its encodings (in the given order): each encoding's numbers do
        not depend on which others are compared with it."""
        k = [self.methods.index(m) for m in methods]
        return replace(
            self,
            methods=tuple(methods),
            labels=tuple(self.labels[i] for i in k),
            max_change=self.max_change[k],
            mean_change=self.mean_change[k],
            largest=tuple(self.largest[i] for i in k),
            changed=self.changed[k],
            delta=self.delta[k],
        )


def _softmax_rows(logits: np.ndarray) -> np.ndarray:
    z = np.where(np.isnan(logits), -np.inf, logits)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    weights: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return weights


def _logits(layer: SelfAttention, words: tuple[str, ...], seed: int, causal: bool) -> np.ndarray:
    """(h, i, j) float64 logits of `words` at positions 0 … n−1 through `layer` (as run_tokens
    computes them), NaN where the mask hides a key."""
    x = token_embeddings(tuple(token_key(w) for w in words), D_MODEL, seed)[None].double()  # (1, n, D)
    with torch.inference_mode():
        r = layer(x, positions=torch.arange(len(words)), causal=causal)
    logits: np.ndarray = r.logits[0].numpy().copy()
    logits[~np.isfinite(logits)] = np.nan
    return logits


def shift_deltas(
    text: str,
    seed: int,
    methods: tuple[str, ...],
    prefix: str,
    n_heads: int = 4,
    causal: bool = False,
    max_tokens: int = MAX_TOKENS,
) -> np.ndarray:
    """(methods, h, i, j) Δ weight among the original words when `prefix` is put in front, every head.

    After the prefix, each original query's weights are renormalised over the original keys (softmax
    of the same logits restricted to those keys), so a change can only come from the logits between
    the original words, not from the mass the prefix takes."""
    tokens = tokenize(text, max_tokens=max_tokens).tokens
    pre = prefix_tokens(prefix)
    k = len(pre)
    out = []
    for m in methods:
        # One layer for both runs (what run_tokens builds, float64), the sentence without and with
        # the prefix in front.
        layer = toy_layer(build(m, D_MODEL, n_heads, seed, lab_config(m)), seed).double()
        w0 = _softmax_rows(_logits(layer, tokens, seed, causal))  # (h, i, j)
        w1 = _softmax_rows(_logits(layer, pre + tokens, seed, causal)[:, k:, k:])  # (h, i, j) the original words only
        out.append(w1 - w0)
    return np.stack(out) if out else np.zeros((0, n_heads, len(tokens), len(tokens)))


def shift_test(
    text: str,
    seed: int,
    methods: tuple[str, ...],
    prefix: str,
    n_heads: int = 4,
    causal: bool = False,
    head: int | None = None,
    max_tokens: int = MAX_TOKENS,
) -> ShiftTest:
    """Run the sentence with and without a prefix and compare the attention among the original
    words (shift_deltas), for one head or the head mean.

    An encoding whose logits depend on the positions only through their differences gives zero (up
    to float64 rounding); absolute ones do not, and neither does one whose frequencies follow the
    length of the whole text (dynamic NTK), once the prefix makes the text long enough."""
    return shift_test_from(
        shift_deltas(text, seed, methods, prefix, n_heads, causal, max_tokens),
        tokenize(text, max_tokens=max_tokens).tokens,
        prefix_tokens(prefix),
        methods,
        n_heads,
        head,
    )


def shift_test_from(
    deltas: np.ndarray,
    tokens: tuple[str, ...],
    prefix: tuple[str, ...],
    methods: tuple[str, ...],
    n_heads: int,
    head: int | None,
) -> ShiftTest:
    """ShiftTest from shift_deltas' (methods, h, i, j) for one head (0-based) or the head mean."""
    maxes: list[float] = []
    means: list[float] = []
    where: list[tuple[int, int]] = []
    picked: list[np.ndarray] = []
    for d in deltas:
        dh = pick_head(d, head)  # (i, j)
        a = np.abs(dh)
        maxes.append(float(a.max()) if a.size else 0.0)
        means.append(float(a.mean()) if a.size else 0.0)
        row, col = np.unravel_index(int(a.argmax()), a.shape) if a.size else (0, 0)
        where.append((int(row), int(col)))
        picked.append(dh)
    mx = np.asarray(maxes)
    n = len(tokens)
    return ShiftTest(
        tuple(methods),
        tuple(REGISTRY[m].label for m in methods),
        tokens,
        prefix,
        mx,
        np.asarray(means),
        tuple(where),
        mx > CHANGED,
        np.stack(picked) if picked else np.zeros((0, n, n)),
        n_heads,
    )


NOBODY = "-"  # the question's "none of them" option: not a registry name ("none" is NoPE's)
DYNAMIC = "rope-dynamic"  # the encoding the KV-cache numbers are about (run by name, as a chapter does)
PLAIN = "rope"  # its reference: RoPE with frequencies that never change
LONGEST = LAB_POSITIONS  # the longest text any lab run puts a RoPE through (θ is scanned up to it)


# -- a RoPE whose frequencies follow the text's length ---------------------------------------------


def _rotary(method: str, n_heads: int) -> RoPE | None:
    """`method` as the lab configures it, when it rotates q and k (None otherwise)."""
    if not issubclass(REGISTRY[method], RoPE):
        return None
    enc = build(method, D_MODEL, n_heads, 0, lab_config(method))  # a rotation has no parameters to seed
    assert isinstance(enc, RoPE)
    return enc


def frequencies_at(method: str, n_heads: int, length: int) -> np.ndarray | None:
    """θ_f (d/2,) that `method`, as the lab configures it, rotates with in a text of `length` tokens;
    None for an encoding that does not rotate."""
    enc = _rotary(method, n_heads)
    return None if enc is None else enc.frequencies(length).numpy()


# A fact about the encoder class and the head size (no words): scanned once per process. Methods ×
# the lab's head counts stay under 128.
@lru_cache(maxsize=128)
def same_frequencies_up_to(method: str, n_heads: int) -> int | None:
    """The longest text (≤ LONGEST tokens) whose θ equals a one-token text's: the length the
    frequencies stay put for. LONGEST when they never move (plain RoPE, PI, NTK, YaRN, xPos);
    None for an encoding that does not rotate."""
    enc = _rotary(method, n_heads)
    if enc is None:
        return None
    first = enc.frequencies(1)
    for length in range(2, LONGEST + 1):
        if not torch.equal(enc.frequencies(length), first):
            return length - 1
    return LONGEST


def follows_length(method: str, n_heads: int) -> bool:
    """Do `method`'s frequencies change with the length of the text (within the lab's lengths)?"""
    up_to = same_frequencies_up_to(method, n_heads)
    return up_to is not None and up_to < LONGEST


def wavelength(theta: np.ndarray) -> float:
    """2π/θ of the slowest pair: how many positions it takes to turn once."""
    return float(2 * math.pi / theta[-1])


# -- why each encoding moved, or did not --------------------------------------------------------------

# Each reason's catalogue sentence is attention_lab.why.<reason>; `expect` says whether that reason
# means the weights change. A measurement that disagrees with its reason gets "unexpected" (the
# tests sweep the page's controls and check it never happens).
EXPECT = {
    "one_word": False,
    "no_position": False,
    "relative": False,
    "length_same": False,
    "absolute": True,
    "length": True,
}


def shift_reason(sh: ShiftTest, method: str) -> tuple[str, dict[str, Any]]:
    """(reason id, the facts its sentence states) for one encoding of a shift test."""
    cls = REGISTRY[method]
    n, k = len(sh.tokens), len(sh.prefix)
    facts: dict[str, Any] = {}
    if n <= 1:
        reason = "one_word"
    elif cls.kind == "input":
        reason = "absolute"
        facts = {"first": k, "last": k + n - 1, "last0": n - 1}
    elif follows_length(method, sh.n_heads):
        before, after = frequencies_at(method, sh.n_heads, n), frequencies_at(method, sh.n_heads, n + k)
        assert before is not None and after is not None
        up_to = same_frequencies_up_to(method, sh.n_heads)
        facts = {
            "L": up_to,
            "n": n,
            "n_after": n + k,
            "before": wavelength(before),
            "after": wavelength(after),
            "pairs": int(before.size),
            "pairs_changed": int((before != after).sum()),
        }
        reason = "length_same" if np.array_equal(before, after) else "length"
    elif cls.shift_invariant or n + k - 1 <= build(method, D_MODEL, sh.n_heads, 0, lab_config(method)).relative_up_to():
        # (FIRE is relative up to its threshold L, past every position the lab runs.)
        reason = "no_position" if cls.relative_sign is None else "relative"
    else:
        reason = "unexpected"
    changed = bool(sh.changed[sh.methods.index(method)])
    if reason in EXPECT and EXPECT[reason] != changed:
        reason = "unexpected"
    return reason, facts


@dataclass(frozen=True)
class ShiftSection:
    test: ShiftTest
    question: Question


def shift_question(sh: ShiftTest, lang: str) -> Question:
    """Whose attention among the original words changes most when the prefix is put in front? The
    answer is the measured largest change (NOBODY when no encoding changed by more than CHANGED);
    the explanation states each encoding's measured change and the reason for it."""
    changes = {m: float(c) for m, c in zip(sh.methods, sh.max_change, strict=True)}
    changed = {m: bool(c) for m, c in zip(sh.methods, sh.changed, strict=True)}
    answer = sh.methods[int(np.argmax(sh.max_change))] if sh.changed.any() else NOBODY
    reasons, details = {}, {}
    for m in sh.methods:
        reasons[m], details[m] = shift_reason(sh, m)
    n, k = len(sh.tokens), len(sh.prefix)
    facts: dict[str, Any] = {
        "answer": answer,
        "k": k,
        "n": n,
        "threshold": CHANGED,
        "changes": changes,
        "changed": changed,
        "reasons": reasons,
        "details": details,
    }
    if answer == NOBODY:
        head = t("attention_lab.q_shift_answer_none", lang, k=k, threshold=f"{CHANGED:g}")
    else:
        head = t("attention_lab.q_shift_answer", lang, answer=short(answer, lang), k=k)
    lines = []
    for m in sh.methods:
        extra = {"sign": sign_text(m, lang)} if reasons[m] == "relative" else {}
        lines.append(
            t(f"attention_lab.why.{reasons[m]}", lang, name=short(m, lang), change=changes[m], **details[m], **extra)
        )
    options = (*sh.methods, NOBODY)
    return Question(
        key="lab_shift_q",
        prompt=t("attention_lab.q_shift", lang),
        options=options,
        labels=tuple(t("attention_lab.none_of_them", lang) if o == NOBODY else short(o, lang) for o in options),
        answer=answer,
        explanation=head + "\n\n" + "\n".join(lines),
        facts=facts,
    )


# Cache bounds (pages/labs/attention_lab.py): A panels result holds up to 4 maps of 256 × 256 float64 (~2 MB),
# a shift result 4 such maps, a length result up to 4 maps of 512 × 512 (~8 MB): hence the small bounds.
@bounded(16)
def shift_section(
    text: str,
    seed: int,
    methods: tuple[str, ...],
    prefix: str,
    n_heads: int,
    causal: bool,
    head: int | None,
    lang: str,
) -> ShiftSection | None:
    """The shift test and its question; None when the prefix has no token to put in front."""
    if not prefix_tokens(prefix):
        return None
    sh = shift_test(text, seed, methods, prefix, n_heads, causal, head)
    return ShiftSection(sh, shift_question(sh, lang))


# -- dynamic NTK and a KV cache ---------------------------------------------------------------------


@dataclass
class KVCache:
    """One pair of words in a text that grows past the sentence, under dynamic NTK.

    The sentence (n words) is read at once, and every key is rotated with θ(n) and cached. Then the
    text grows: a new token at position ℓ − 1 (ℓ = n + 1 … last) that reads like the sentence's last
    word asks that word's cached key at position n − 1 (the same word again: a copy)."""

    tokens: tuple[str, ...]
    n: int  # words in the sentence (the key sits at n − 1)
    same_up_to: int  # dynamic NTK's θ is RoPE's own in any text of at most this many tokens
    lengths: np.ndarray  # (ℓ,) the text's length when the new token asks, n + 1 … last
    plain: np.ndarray  # (ℓ,) plain RoPE's logit (cache or not: its θ never changes)
    recomputed: np.ndarray  # (ℓ,) dynamic NTK without a cache: query and key both rotated with θ(ℓ)
    cached: np.ndarray  # (ℓ,) with a cache: the key rotated with θ(n), the query with θ(ℓ)

    @property
    def gap(self) -> np.ndarray:
        """(ℓ,) |cached − recomputed|: what the cache gets wrong."""
        return np.asarray(np.abs(self.cached - self.recomputed))

    @property
    def first_apart(self) -> int | None:
        """The first length at which the cached logit differs from the recomputed one (None: never)."""
        apart = np.flatnonzero(self.gap > CHANGED)
        return int(self.lengths[apart[0]]) if apart.size else None

    @property
    def situation(self) -> str:
        """Which caption the numbers call for (attention_lab.kv.caption_<situation>): "one" — a
        one-word sentence, whose cached key sits at position 0, where no θ turns anything; "within" —
        the sentence is no longer than the length θ stays put for; "past" — it is longer already."""
        if self.n == 1:
            return "one"
        return "within" if self.n <= self.same_up_to else "past"

    @property
    def facts(self) -> dict[str, Any]:
        """The numbers the caption states."""
        first = self.first_apart
        return {
            "n": self.n,
            "L": self.same_up_to,
            "first": first if first is not None else 0,
            "last": int(self.lengths[-1]),
            "recomputed": float(self.recomputed[-1]),
            "cached": float(self.cached[-1]),
            "plain": float(self.plain[-1]),
            "gap": float(self.gap.max()),
        }


def kv_lengths(n: int, same_up_to: int) -> np.ndarray:
    """ℓ = n + 1 … the last length drawn: four times the length θ stays put for, or twice the
    sentence if that is longer, never past LONGEST (the lab's longest run)."""
    last = min(LONGEST, max(4 * same_up_to, 2 * n, n + 1))
    return np.arange(n + 1, last + 1)


def _same_theta_runs(enc: RoPE, lengths: np.ndarray) -> list[list[int]]:
    """`lengths` cut into runs of consecutive lengths with the same θ(ℓ) and attention factor.

    A pure rotation (no xPos scaling, so no centre) reads a text's length only through those two,
    so one call for a whole run, its largest length as the text's, gives each length's logit as its
    own call would (up to the last bits of a batched matrix product). Any other encoding gets a run
    per length."""
    runs: list[list[int]] = []
    last: tuple[bytes, float] | None = None
    for length in (int(v) for v in lengths):
        same = (enc.frequencies(length).numpy().tobytes(), enc.attention_factor(length))
        if runs and same == last and enc.pair_decay() is None:
            runs[-1].append(length)
        else:
            runs.append([length])
        last = same
    return runs


def _at_lengths(q: torch.Tensor, run: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """The new token's query (1, h, 1, d) repeated for each length of `run`, at position ℓ − 1."""
    return torch.tensor(run) - 1, q.expand(-1, -1, len(run), -1)


@bounded(32)
def kv_cache(text: str, seed: int, n_heads: int, head: int | None) -> KVCache:
    """The pair's logit (head `head`, or the head mean) as the text grows, in float64, through the
    lab's own toy layer (W_q, W_k from the seed) and the encoders' own rotation."""
    tokens = tokenize(text, max_tokens=MAX_TOKENS).tokens
    n = len(tokens)
    if n == 0:
        raise ValueError("kv_cache needs at least one word")
    dynamic, plain = (build(m, D_MODEL, n_heads, seed, lab_config(m)) for m in (DYNAMIC, PLAIN))
    assert isinstance(dynamic, RoPE) and isinstance(plain, RoPE)
    layer = toy_layer(dynamic, seed).double()
    last_word = token_embeddings((token_key(tokens[-1]),), D_MODEL, seed)[None].double()  # (1, 1, D)
    with torch.inference_mode():
        q = split_heads(last_word @ layer.w_q, n_heads)  # (1, h, 1, d) the new token's query
        k = split_heads(last_word @ layer.w_k, n_heads)  # (1, h, 1, d) the cached word's key
        key_at = torch.tensor([n - 1])
        cached_key = dynamic.rotate(k, key_at, "key", n, 0.0)  # (1, h, 1, d) rotated with θ(n), then kept
        up_to = same_frequencies_up_to(DYNAMIC, n_heads)
        assert up_to is not None
        lengths = kv_lengths(n, up_to)
        rows: dict[str, list[np.ndarray]] = {"plain": [], "recomputed": [], "cached": []}
        # One call per run of lengths that share θ(ℓ): the query repeated at positions ℓ − 1 (see
        # _same_theta_runs). Plain RoPE is one run; dynamic NTK one up to L, then a run per length.
        for run in _same_theta_runs(plain, lengths):
            at, q_run = _at_lengths(q, run)
            rows["plain"].append(plain.logit_terms(q_run, k, at, key_at, True).total()[0, :, :, 0].numpy())
        for run in _same_theta_runs(dynamic, lengths):
            at, q_run = _at_lengths(q, run)
            # Without a cache the whole text is run again: the one attention path, θ(ℓ) on both sides.
            rows["recomputed"].append(dynamic.logit_terms(q_run, k, at, key_at, True).total()[0, :, :, 0].numpy())
            fresh = dynamic.rotate(q_run, at, "query", run[-1], 0.0)  # (1, h, r, d) rotated with θ(ℓ)
            rows["cached"].append(content_logits(fresh, cached_key)[0, :, :, 0].numpy())
    per_head = {name: np.concatenate(v, axis=1) for name, v in rows.items()}  # (h, ℓ)
    return KVCache(
        tokens,
        n,
        up_to,
        lengths,
        pick_head(per_head["plain"], head),
        pick_head(per_head["recomputed"], head),
        pick_head(per_head["cached"], head),
    )
