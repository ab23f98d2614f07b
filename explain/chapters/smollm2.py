"""What "A real RoPE model: SmolLM2" shows: SmolLM2-135M-Instruct (models/smollm2.py) on the learner's
sentence — every head of a layer grouped by the key/value head it shares, the next-token readout, the
relative property under a shift of every position id (against MiniLM's learned absolute positions),
the size of the trained queries and keys on each rotary pair, and the attention sinks.

Axis legend: L layers (30), H query heads (9), G key/value heads (3), n tokens, i query, j key,
P rotary pairs (32).

Every function takes primitives and returns numpy arrays or dataclasses of them (pages cache them,
bounded where they are defined); the model is loaded once per process by models.smollm2.load. The
page calls nothing here before `warm_status().ready`.

The long-context part (loss by position past the 8192-token context, with PI, NTK-aware and YaRN from
the registry's `config_for_lengths`) reads a shipped result file: explain/chapters/smollm2_long.py.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import torch

from encoders.base import Paper
from explain.bounds import SizeBounded, bounded
from explain.chapter import Chapter
from explain.chapters import minilm as minilm_ch
from explain.i18n import t
from explain.question import Prompt, Question
from models import smollm2 as smol
from models.smollm2 import QUANTISATION as QUANTISATION  # the page's note
from models.smollm2 import start_warming as start_warming  # the page starts the load if nobody did
from models.smollm2 import warm_status as warm_status  # the page's "warming up" note

MAX_TOKENS = 256  # tokens the page runs; longer text is cut here, with a note
TOP_K = 5  # next-token candidates shown
MAX_SHIFT = 250  # the shift slider's end: MiniLM (512 rows) can follow a 256-piece text this far
DEFAULT_SHIFT = 10
# The shift test runs SmolLM2 a second time (the ids shifted) and MiniLM twice. On a 256-token text that
# was 1.09 s of the page's 1.98 s of server time (tools/bench_smollm2.py, one thread), and with a class
# of 30 the long texts set the tail of every new sentence (p95 2.7–3.8 s). The property holds at every
# length, so a longer text is tested on its first SHIFT_TOKENS tokens, and the page says so.
SHIFT_TOKENS = 64
# The shift test's verdict: "unchanged up to float error" when the largest change of any attention
# weight is below this (weights are 0…1; float32 rounding of the rotation angles gives ~1e-5 at a
# shift of 250; MiniLM's learned table moves weights by tenths).
UNCHANGED_BELOW = 1e-3
# The per-layer chart draws a change below this at this value (its axis title says so): changes of a few
# 1e-6 are float32 rounding, which differs from one CPU to the next; drawn as measured, the chart would
# differ between machines while saying the same thing.
DRAWN_FROM = 1e-5
# The text the frequency usage is also measured on, shipped with the app (MiniLM's reference paragraph),
# so that the picture does not depend only on what the learner typed.
REFERENCE = minilm_ch.REFERENCE
# The frequency section's paper (its abstract's finding is what the prose reports; no figure is quoted).
BARBERO = Paper(
    "Barbero et al.",
    2024,
    "Round and Round We Go! What makes Rotary Positional Encodings useful?",
    "https://arxiv.org/abs/2410.06205",
)


# Set for the test suite (tests/conftest.py): the page waits for the load (AppTest runs a page to its end)
# instead of polling with its "warming up" note.
WAIT_ENV = "PE_ATLAS_SMOLLM2_WAIT"


def waits_for_load() -> bool:
    return os.environ.get(WAIT_ENV) == "1"


def wait_for_load() -> None:
    """Block until the model is loaded (the load itself runs once per process)."""
    smol.load()


@dataclass(frozen=True)
class Pieces:
    ids: tuple[int, ...]  # token ids, the first MAX_TOKENS
    tokens: tuple[str, ...]  # each token as a learner reads it (models.smollm2.piece_text)
    n_found: int  # tokens in the whole text
    partial: int  # tokens that hold only part of a character (their bytes alone are not UTF-8 text)

    @property
    def kept(self) -> int:
        return len(self.ids)

    @property
    def truncated(self) -> bool:
        return self.kept < self.n_found


@bounded(32)  # one entry: ≤ 256 ids and their strings
def pieces(text: str, max_tokens: int = MAX_TOKENS) -> Pieces:
    """The text through the model's own byte-level BPE tokenizer (no special tokens added)."""
    if not 1 <= max_tokens <= MAX_TOKENS:
        raise ValueError(f"max_tokens must be 1…{MAX_TOKENS}")
    ids, found = smol.encode(text, max_tokens)
    raw = smol.load().tokenizer.convert_ids_to_tokens(ids)
    partial = sum(not _is_text(smol.piece_bytes(r)) for r in raw)
    return Pieces(tuple(ids), tuple(smol.piece_texts(raw)), found, partial)


def _is_text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# The plain forward passes, kept by size rather than by count. One pass at 256 tokens is ~90 MB
# (attention 30 × 9 × 256² float32 = 71 MB, hidden states 31 × 256 × 576 = 18 MB, the next token's
# logits 49,152); at 20 tokens it is ~2 MB. A class's learners each have their own sentence, and
# with room for only the last two texts, every learner's slider move after another learner's input
# ran the model twice (the evicted plain pass, then the shifted one). The bound keeps a process's
# memory bounded either way: four passes at 256 tokens, or a class's worth of short sentences.
FORWARD_CACHE_BYTES = 360 * 2**20


def forward_bytes(fw: smol.Forward) -> int:
    """What one kept pass holds, in bytes."""
    return sum(x.numel() * x.element_size() for x in (fw.logits, *fw.attentions, *fw.hidden))


FORWARDS: SizeBounded[tuple[int, ...], smol.Forward] = SizeBounded(FORWARD_CACHE_BYTES, forward_bytes)


def _forward(ids: tuple[int, ...]) -> smol.Forward:
    """The plain forward pass (positions 0 … n−1) of a text, kept while FORWARDS has room: the
    readout, the layer picker, the shift test and the frequency usage reuse it instead of running the
    model again. Read-only."""
    return FORWARDS.get(ids, lambda: smol.forward(list(ids)))


def clear_forwards() -> None:
    """Forget every kept pass (a benchmark measures a sentence as new)."""
    FORWARDS.clear()


@dataclass(frozen=True)
class Facts:
    """The model's shape, read from its config (what the page's sentences about it state)."""

    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    width: int
    context: int
    base: float
    vocab: int
    parameters: int

    @property
    def group(self) -> int:
        """Query heads per key/value head."""
        return self.heads // self.kv_heads


@bounded(1)
def facts() -> Facts:
    m = smol.load().model
    c = m.config
    return Facts(
        layers=int(c.num_hidden_layers),
        heads=int(c.num_attention_heads),
        kv_heads=int(c.num_key_value_heads),
        head_dim=int(c.head_dim),
        width=int(c.hidden_size),
        context=int(c.max_position_embeddings),
        base=float(c.rope_parameters["rope_theta"]),
        vocab=int(c.vocab_size),
        parameters=int(sum(p.numel() for p in m.parameters())),
    )


def kv_head(head: int, f: Facts) -> int:
    """The key/value head (1-based) a query head (1-based) reads, as transformers' repeat_kv lays
    them out: query heads 1…group share key/value head 1, and so on."""
    return (head - 1) // f.group + 1


@dataclass(frozen=True)
class Readout:
    tokens: tuple[str, ...]  # the TOP_K likeliest next tokens, as a learner reads them
    probs: np.ndarray  # (TOP_K,) their probabilities


@dataclass(frozen=True)
class Overview:
    tokens: tuple[str, ...]
    readout: Readout
    sinks: np.ndarray  # (L, H): mean share of attention on the first token, queries 1 … n−1
    sink_layers: np.ndarray  # (L,): the same, averaged over heads
    uniform: float  # what a head spreading its attention evenly over the keys it sees would give

    @property
    def sink_panels(self) -> np.ndarray:
        """(1, L, H): the shares as the one panel of a layers × heads figure."""
        out: np.ndarray = self.sinks[None]
        return out

    @property
    def strongest(self) -> tuple[int, float]:
        """(layer, share) of the layer with the largest mean share on the first token, 1-based."""
        k = int(np.argmax(self.sink_layers))
        return k + 1, float(self.sink_layers[k])

    @property
    def weakest(self) -> tuple[int, float]:
        k = int(np.argmin(self.sink_layers))
        return k + 1, float(self.sink_layers[k])

    def above(self, share: float) -> int:
        """How many layers put at least `share` of their attention on the first token."""
        return int((self.sink_layers >= share).sum())


def sink_shares(attentions: tuple[torch.Tensor, ...]) -> np.ndarray:
    """(L, H): each head's attention on the first token, averaged over queries 1 … n−1 (query 0 can
    only see itself, so it says nothing). NaN for a one-token text."""
    n = attentions[0].shape[-1]
    if n < 2:
        return np.full((len(attentions), attentions[0].shape[0]), np.nan)
    return np.stack([a[:, 1:, 0].mean(-1).numpy() for a in attentions]).astype(np.float64)


def uniform_share(n: int) -> float:
    """The first token's share if every query i spread its attention evenly over its i + 1 keys,
    averaged over queries 1 … n−1: the baseline a sink's share is read against."""
    return float(np.mean([1.0 / (i + 1) for i in range(1, n)])) if n >= 2 else math.nan


@bounded(16)  # one entry: 30 × 9 shares and five tokens
def overview(text: str) -> Overview:
    p = pieces(text)
    if not p.ids:
        raise ValueError("no tokens")
    fw = _forward(p.ids)
    probs = torch.softmax(fw.logits[-1].double(), -1)
    top = torch.topk(probs, TOP_K)
    tok = smol.load().tokenizer
    names = tuple(smol.piece_text(s) for s in tok.convert_ids_to_tokens(top.indices.tolist()))
    sinks = sink_shares(fw.attentions)
    return Overview(p.tokens, Readout(names, top.values.numpy()), sinks, sinks.mean(-1), uniform_share(len(p.ids)))


@dataclass(frozen=True)
class LayerHeads:
    tokens: tuple[str, ...]
    weights: np.ndarray  # (H, i, j) float32, causal, rows sum to 1
    kv: tuple[int, ...]  # (H,) the key/value head (1-based) each query head reads


@bounded(16)  # one entry: 9 × 256 × 256 float32 (~2.4 MB)
def layer_heads(text: str, layer: int) -> LayerHeads:
    """Every query head of one layer (1-based) on the text."""
    f = facts()
    if not 1 <= layer <= f.layers:
        raise ValueError(f"layer must be 1…{f.layers}")
    p = pieces(text)
    w = _forward(p.ids).attentions[layer - 1].numpy().astype(np.float32)
    return LayerHeads(p.tokens, w, tuple(kv_head(h, f) for h in range(1, f.heads + 1)))


# -- the relative property ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ShiftTest:
    shift: int
    n: int  # SmolLM2 tokens tested: the text's first SHIFT_TOKENS at most
    of: int  # SmolLM2 tokens on the page (≥ n)
    attention: np.ndarray  # (L,) largest |Δ weight| of each layer (all heads, queries, keys)
    logits: float  # largest |Δ logit| of the next token, over the whole vocabulary
    logit_scale: float  # largest |logit| of the plain run, for scale
    minilm_shift: int  # the shift MiniLM got (≤ shift: its table has 512 rows)
    minilm_n: int  # MiniLM word pieces incl. [CLS] and [SEP]
    minilm_attention: np.ndarray  # (6,) largest |Δ weight| of each MiniLM layer
    minilm_moved: float  # mean over MiniLM's heads of how much attention moved (½ Σ|Δ|, 0 … 1)
    minilm_hidden: float  # relative change of MiniLM's last-layer output

    @property
    def largest(self) -> float:
        return float(self.attention.max())

    @property
    def drawn(self) -> np.ndarray:
        """(L,) the per-layer changes as the chart draws them: at least DRAWN_FROM."""
        out: np.ndarray = np.maximum(self.attention, DRAWN_FROM)
        return out

    @property
    def minilm_largest(self) -> float:
        return float(self.minilm_attention.max())

    @property
    def unchanged(self) -> bool:
        return self.largest < UNCHANGED_BELOW

    @property
    def ratio(self) -> float:
        """How many times larger MiniLM's largest change is than SmolLM2's."""
        return self.minilm_largest / max(self.largest, 1e-30)


@bounded(32)  # one entry: a few dozen numbers
def shift_test(text: str, shift: int) -> ShiftTest:
    """Every position id moved by `shift` (0 … n−1 → shift … shift+n−1), the tokens where they are:
    how much SmolLM2's attention and logits change, and MiniLM's attention and output, on the text's
    first SHIFT_TOKENS tokens (MiniLM on the text they spell)."""
    if not 0 <= shift <= MAX_SHIFT:
        raise ValueError(f"shift must be 0…{MAX_SHIFT}")
    p = pieces(text)
    if not p.ids:
        raise ValueError("no tokens")
    ids = p.ids[: shift_length(p)]
    # MiniLM reads the same text: the whole of it, or what the tested tokens spell.
    tested = text if len(ids) == len(p.ids) else smol.decode(ids)
    base = _forward(ids)  # the page's own pass when nothing was cut (kept in FORWARDS either way)
    moved = smol.forward(list(ids), torch.arange(len(ids)) + shift)
    att = np.array([float((a - b).abs().max()) for a, b in zip(base.attentions, moved.attentions, strict=True)])
    dlog = float((base.logits - moved.logits).abs().max())
    scale = float(base.logits.abs().max())
    mp = minilm_ch.wordpieces(tested)
    k = min(shift, minilm_ch.max_shift(len(mp.tokens)))
    before, after = minilm_ch.run(tested), minilm_ch.run(tested, "shift", k)
    change = minilm_ch.compare(before, after)
    m_att = np.abs(after.weights.astype(np.float64) - before.weights).reshape(before.weights.shape[0], -1).max(-1)
    return ShiftTest(
        shift,
        len(ids),
        len(p.ids),
        att,
        dlog,
        scale,
        k,
        len(mp.tokens),
        m_att,
        float(change.change.mean()),
        change.hidden_change,
    )


def shift_prompt(shift: int, lang: str) -> Prompt:
    """Predict, then reveal: after a shift of every position id, how much do SmolLM2's attention
    weights change? The prompt alone: the test that answers it runs on Reveal (shift_question)."""
    options = ("same", "small", "large")
    return Prompt(
        key="smollm2_q",
        prompt=t("smollm2.predict_q", lang, shift=shift),
        options=options,
        labels=tuple(t(f"smollm2.predict_opt.{o}", lang) for o in options),
    )


def shift_question(test: ShiftTest, lang: str) -> Question:
    """shift_prompt's question, answered by the test."""
    answer = "same" if test.unchanged else ("small" if test.largest < 0.05 else "large")
    facts: dict[str, object] = {
        "shift": test.shift,
        "layers": test.attention.size,
        "largest": test.largest,
        "logits": test.logits,
        "minilm": test.minilm_largest,
    }
    return shift_prompt(test.shift, lang).answered(answer, t(f"smollm2.predict_a.{answer}", lang, **facts), facts)


def shift_length(p: Pieces) -> int:
    """How many of the page's tokens the shift test shifts: the first SHIFT_TOKENS at most."""
    return min(p.kept, SHIFT_TOKENS)


# -- what the trained model puts on each frequency ----------------------------------------------------


@dataclass(frozen=True)
class Frequencies:
    base: float  # rope_theta
    head_dim: int
    context: int  # the trained context (max_position_embeddings)
    inv_freq: np.ndarray  # (P,) radians per position of pair p: base^(−2p/d)
    wavelength: np.ndarray  # (P,) positions per full turn: 2π / inv_freq
    turns: np.ndarray  # (P,) full turns inside the trained context: context / wavelength

    @property
    def never_turn(self) -> int:
        """Pairs that do not complete one turn inside the trained context."""
        return int((self.wavelength > self.context).sum())

    @property
    def first_slow(self) -> int:
        """The first pair (0-based) whose wavelength exceeds the context (P if none)."""
        slow = np.nonzero(self.wavelength > self.context)[0]
        return int(slow[0]) if slow.size else int(self.wavelength.size)


def frequency_table(base: float, head_dim: int, context: int) -> Frequencies:
    """RoPE's frequencies from the config: pair p turns by base^(−2p/d) radians per position."""
    p = np.arange(head_dim // 2, dtype=np.float64)
    inv = base ** (-2.0 * p / head_dim)
    wl = 2 * np.pi / inv
    return Frequencies(base, head_dim, context, inv, wl, context / wl)


@bounded(1)
def frequencies() -> Frequencies:
    f = facts()
    return frequency_table(f.base, f.head_dim, f.context)


@dataclass(frozen=True)
class PairUsage:
    q: np.ndarray  # (L, P) mean size of the queries' components on each pair, per layer
    k: np.ndarray  # (L, P) the same for the keys

    @property
    def q_mean(self) -> np.ndarray:
        out: np.ndarray = self.q.mean(0)
        return out

    @property
    def k_mean(self) -> np.ndarray:
        out: np.ndarray = self.k.mean(0)
        return out


@bounded(16)  # one entry: 2 × 30 × 32 floats
def pair_usage(text: str) -> PairUsage:
    """Per layer and rotary pair, the mean size of the queries' and keys' components (over heads and
    tokens) on the text; REFERENCE for the shipped text."""
    p = pieces(text)
    if not p.ids:
        raise ValueError("no tokens")
    q, k = smol.pair_sizes(_forward(p.ids).hidden)
    return PairUsage(q.numpy().astype(np.float64), k.numpy().astype(np.float64))


@dataclass(frozen=True)
class UsageFacts:
    """What the usage sentence states, computed from the curve: where the sizes are largest, and the
    slow pairs' mean against the fast pairs'."""

    q_top: int  # pair with the largest mean query size
    k_top: int
    slow_q: float  # mean query size over the pairs that never turn inside the context
    fast_q: float  # … over the others
    slow_k: float
    fast_k: float


def usage_facts(usage: PairUsage, freq: Frequencies) -> UsageFacts:
    slow = freq.wavelength > freq.context
    q, k = usage.q_mean, usage.k_mean
    return UsageFacts(
        int(np.argmax(q)),
        int(np.argmax(k)),
        float(q[slow].mean()) if slow.any() else math.nan,
        float(q[~slow].mean()) if (~slow).any() else math.nan,
        float(k[slow].mean()) if slow.any() else math.nan,
        float(k[~slow].mean()) if (~slow).any() else math.nan,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="smollm2",
    part="Labs",
    page="pages/labs/smollm2.py",
    icon=":material/memory:",
    order=155,
    papers=(smol.PAPER, BARBERO),
    sources=(
        "models.smollm2:forward",
        "models.smollm2:pair_sizes",
        "explain.chapters.smollm2:shift_test",
        "explain.chapters.smollm2:sink_shares",
        "lab.smollm2_long:scheme_rotary",
        "lab.smollm2_long:rotary",
    ),
    link={"smollm2_layer": "1", "smollm2_shift": "100"},
    link_shows={"smollm2_layer": 1, "smollm2_shift": 100},
)
