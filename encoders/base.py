"""The interface every positional encoding in PE Atlas implements.

Axis legend, used by the shape comments in every file of encoders/:
    b  batch            h  heads             n  sequence length
    i  query position   j  key position      d  head dimension      D  model dimension (h·d)

Positions are 0-based; i is the query, j the key. Each method keeps its paper's relative sign and
says which one in `relative_sign`, in symbols only (explain/ puts it into the learner's words on every
axis title of its chapter).

Positions enter a Transformer in one of four places (DESIGN.md, "One interface for every encoding"):
    input       a vector added to the token embedding                (sinusoidal, learned)
    rotary      q and k are transformed before the dot product       (RoPE and its scalings)
    bias        a term added to the attention logits                 (Shaw, T5, ALiBi, DeBERTa, XL)
    contextual  the positions themselves depend on q and k           (CoPE)
    none        no positional signal at all                          (NoPE)

Every encoder returns its pre-softmax logits as *named additive terms*, so a page can switch a term
off, the attention lab can put two encodings side by side, and the toy trainer can train any of them
through the same attention code (encoders/attention.py).

Every fact about a method that code elsewhere needs (which terms hold no position, how it is configured
for a trained and a run length, whether its logits depend on relative position only) is a class
attribute or classmethod here, overridden where a method differs: nothing outside encoders/ branches
on a method's registry name (tests/test_architecture.py).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal, TypeAlias

import torch
from torch import Tensor, nn

Kind = Literal["none", "input", "rotary", "bias", "contextual"]
Role = Literal["query", "key"]
# The house's position letters (DESIGN.md, Conventions): i is the query, j the key.
LETTER: dict[Role, str] = {"query": "i", "key": "j"}


@dataclass(frozen=True)
class Difference:
    """A signed offset between the two positions: `first` − `second`, e.g. j − i (key − query)."""

    first: Role
    second: Role

    def __post_init__(self) -> None:
        if self.first == self.second:
            raise ValueError("a relative offset subtracts one role from the other")

    @property
    def math(self) -> str:
        return f"{LETTER[self.first]} − {LETTER[self.second]}"


@dataclass(frozen=True)
class CountBack:
    """A count rather than an offset (CoPE): `math` is the paper's sum, taken back from `start`."""

    math: str
    start: Role


# The relative quantity a method's logits depend on, without words: explain.chapters.common.sign_text
# renders it in the learner's language ("j − i (key − query)", "j − i (키 − 쿼리)").
RelativeSign: TypeAlias = Difference | CountBack


@dataclass(frozen=True)
class Paper:
    """Where a method comes from; the chapter header links to it."""

    authors: str
    year: int
    title: str
    url: str


class PositionOutOfRange(ValueError):
    """A position the encoder has no representation for (a learned table with too few rows).

    `position` is the first position without a row (max_len for a sentence that is too long), and
    `last` the furthest one asked for. Pages catch this and explain it; it is an expected outcome,
    not a crash.
    """

    def __init__(self, position: int, max_len: int, method: str, last: int | None = None):
        self.position, self.max_len, self.method = position, max_len, method
        self.last = position if last is None else last
        missing = (
            f"position {position} has no row"
            if self.last == position
            else f"positions {position}…{self.last} have no rows"
        )
        super().__init__(f"{method} has rows for positions 0…{max_len - 1} only; {missing}.")


@dataclass
class AttentionTerms:
    """Pre-softmax logits as named additive terms.

    terms:  name → (b, h, i, j); their sum is the logit before masking and softmax.
    extras: whatever else a page wants to show (CoPE gates and counted positions, bucket ids, …).
    """

    terms: dict[str, Tensor]
    extras: dict[str, Tensor] = field(default_factory=dict)

    def total(self, scales: Mapping[str, float] | None = None) -> Tensor:
        """Sum of the terms, each multiplied by its scale (default 1; 0 switches a term off)."""
        scales = scales or {}
        unknown = set(scales) - set(self.terms)
        if unknown:
            raise KeyError(f"unknown term(s) {sorted(unknown)}; this encoder has {list(self.terms)}")
        out = None
        for name, term in self.terms.items():
            s = float(scales.get(name, 1.0))
            part = term * s if s != 1.0 else term
            out = part if out is None else out + part
        assert out is not None, "an encoder must return at least one term"
        return out


def content_logits(q: Tensor, k: Tensor) -> Tensor:
    """Scaled dot-product logits q·k/√d (Vaswani et al. 2017, Eq. 1).

    q: (b, h, i, d), k: (b, h, j, d) → (b, h, i, j)
    """
    return q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # (b, h, i, j)


class PositionalEncoding(nn.Module):
    """Base class. Subclasses set the class attributes and override the hooks they use.

    Construction is uniform so the registry can build any method:
        Encoder(d_model, n_heads, config=None, generator=None)
    Parameters (learned tables) are drawn from `generator` so the sidebar seed fixes every picture.
    Tables are built in __init__; forward-time hooks are pure (no caches, no prints).
    """

    name: ClassVar[str]  # registry key, e.g. "sinusoidal"
    label: ClassVar[str]  # what a learner reads, e.g. "Sinusoidal (Vaswani et al. 2017)"
    kind: ClassVar[Kind]
    paper: ClassVar[Paper | None] = None
    # e.g. Difference("key", "query") for j − i; None for methods without a relative quantity.
    relative_sign: ClassVar[RelativeSign | None] = None
    term_names: ClassVar[tuple[str, ...]] = ("content",)
    # The terms that hold no position at all (what the attention lab's content dial scales); every
    # other term is a position term. For an input encoding "content" already has positions mixed in.
    content_terms: ClassVar[tuple[str, ...]] = ("content",)
    # True when the logits depend on the positions only through their differences (or counts), so
    # adding the same offset to every position changes nothing (tests/test_properties.py checks it).
    shift_invariant: ClassVar[bool] = False
    # Parameters (attribute names) that a stack of layers builds once and shares: the first layer
    # owns them, every later layer reuses the same tensors (T5 computes its bias table in layer 0
    # only). A single layer, as every chapter draws, is unaffected.
    shared_across_layers: ClassVar[tuple[str, ...]] = ()

    config: object  # each subclass narrows this to its frozen config dataclass

    def __init__(
        self, d_model: int, n_heads: int, config: object = None, generator: torch.Generator | None = None
    ) -> None:
        super().__init__()
        if d_model < 1 or n_heads < 1 or d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be a positive multiple of n_heads={n_heads}")
        self.d_model, self.n_heads = d_model, n_heads
        self.d_head = d_model // n_heads
        self.config = config

    # -- facts about the method, for code outside encoders/ ------------------------------------
    @classmethod
    def position_terms(cls) -> tuple[str, ...]:
        """The named terms that carry position: term_names minus content_terms, in term order."""
        return tuple(t for t in cls.term_names if t not in cls.content_terms)

    def relative_up_to(self) -> float:
        """The last position up to which this encoder, as configured, sees positions only through
        their differences: moving every position by one offset changes nothing while all stay at or
        below it. inf for a shift_invariant method, −inf for one that sees absolute positions at
        once; FIRE overrides it (its bias is relative for every query up to its threshold L)."""
        return math.inf if self.shift_invariant else -math.inf

    @classmethod
    def config_covering(cls, n: int) -> object:
        """A config under which positions 0 … n−1 all have a representation; None when the
        registry default already covers every length (only a table with rows needs more)."""
        return None

    @classmethod
    def config_for_lengths(cls, trained: int, run: int) -> object:
        """The config of a model "trained" on `trained` tokens and run on `run` (the attention lab's
        length test); None = the registry default, for methods with no notion of a trained length."""
        return None

    @classmethod
    def training_config(cls, max_len: int) -> object:
        """The config the toy-task lab trains with, for strings up to `max_len` tokens (lab/model.py);
        None = the registry default. Changing one changes what the shipped checkpoints reproduce."""
        return None

    # -- hook 1: the input ---------------------------------------------------------------------
    def encode_input(self, x: Tensor, positions: Tensor) -> Tensor:
        """Token embeddings (b, n, D) at `positions` (n,) → the first layer's input (b, n, D)."""
        return x

    # -- hook 2: the logits --------------------------------------------------------------------
    def logit_terms(
        self, q: Tensor, k: Tensor, q_positions: Tensor, k_positions: Tensor, causal: bool
    ) -> AttentionTerms:
        """q: (b, h, i, d), k: (b, h, j, d), positions (i,) and (j,) → named logit terms (b, h, i, j).

        `causal` is passed because some methods depend on it (CoPE's gates, ALiBi's symmetric form);
        the mask itself is applied by encoders/attention.py.
        """
        return AttentionTerms({"content": content_logits(q, k)})

    # -- hook 3: the values --------------------------------------------------------------------
    def value_terms(self, weights: Tensor, q_positions: Tensor, k_positions: Tensor) -> Tensor | None:
        """Extra per-head output added to weights @ v (Shaw's aⱽ); (b, h, i, d) or None."""
        return None

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, config={self.config}"


def normal_(shape: tuple[int, ...], std: float, generator: torch.Generator | None) -> Tensor:
    """A seeded N(0, std²) tensor (float32); the one initialiser every learned table uses."""
    return torch.randn(shape, generator=generator) * std


def derived_seed(seed: int, purpose: str) -> int:
    """A stable seed for one purpose (an encoder's table, the projections, …) from the sidebar seed.

    Separate streams keep a learned table from sharing its first draws with W_q under the same seed;
    SHA-256, not hash(), so the numbers are the same in every process.
    """
    digest = hashlib.sha256(f"{int(seed)}|{purpose}".encode()).digest()
    return int.from_bytes(digest[:7], "little")
