"""The learner's sentence → tokens → deterministic toy embeddings.

PE Atlas has no trained vocabulary: each distinct word gets a fixed random vector, derived from the
word itself with a stable hash, so that the same word always gets the same vector (for a given seed
and size) in every process, on every machine. That is all attention needs to show what positions do:
two copies of "the" are identical to attention unless a positional encoding tells them apart.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass

import numpy as np
import regex
import torch

# The sidebar text box accepts this many characters; text arriving from elsewhere (a URL) is cut to
# the same bound before tokenising so that no input can make the tokenizer do unbounded work.
MAX_CHARS = 10_000
# The most tokens a page draws: a 256 × 256 heatmap is still legible with thinned labels, and one
# attention layer on it takes milliseconds.
MAX_TOKENS = 256

# A word: letters, digits and combining marks (Hangul, accents, Devanagari vowel signs, …), with
# inner apostrophes ("don't"). Anything else that is not space is one grapheme cluster (\X) per
# token, so an emoji ZWJ sequence such as 👩‍💻 or a flag 🇰🇷 stays one token and punctuation
# marks are tokens of their own.
_TOKEN = regex.compile(r"[\p{L}\p{N}\p{M}_]+(?:['’][\p{L}\p{N}\p{M}_]+)*|\X")
# Control characters (NUL, escape, …) carry no meaning for a learner; tabs and newlines are spaces.
_CONTROL = regex.compile(r"[\p{Cc}--[\t\n\r]]", flags=regex.V1)


@dataclass(frozen=True)
class Tokens:
    """A tokenised sentence.

    tokens:   the tokens as typed (NFC-normalised), at most `max_tokens` of them
    keys:     the embedding identity of each token: case-folded, so "The" and "the" are one word
    n_found:  how many tokens the whole text had before cutting
    chars_cut: True when the text was longer than MAX_CHARS and its tail was dropped first
    """

    tokens: tuple[str, ...]
    keys: tuple[str, ...]
    n_found: int
    max_tokens: int
    chars_cut: bool = False

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def truncated(self) -> bool:
        return self.chars_cut or self.n_found > len(self.tokens)

    @property
    def empty(self) -> bool:
        return not self.tokens


def tokenize(text: str, max_tokens: int = MAX_TOKENS) -> Tokens:
    """Split text into words and punctuation; works for any script, emoji included.

    >>> tokenize("The cat sat.").tokens
    ('The', 'cat', 'sat', '.')
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    text = text or ""
    chars_cut = len(text) > MAX_CHARS
    text = unicodedata.normalize("NFC", _CONTROL.sub(" ", text[:MAX_CHARS]))
    found = [t for t in _TOKEN.findall(text) if not _is_blank(t)]
    kept = tuple(found[:max_tokens])
    return Tokens(kept, tuple(token_key(t) for t in kept), len(found), max_tokens, chars_cut)


def token_key(token: str) -> str:
    """A token's embedding identity: case-folded, so "The" and "the" are one word to the model."""
    return token.casefold()


def _is_blank(token: str) -> bool:
    """Whitespace, or only invisible format characters (a stray zero-width joiner, a bidi mark)."""
    return all(ch.isspace() or unicodedata.category(ch) in ("Cf", "Zs", "Zl", "Zp") for ch in token)


def display_label(token: str, max_chars: int = 14) -> str:
    """A token shortened for an axis tick; the hover text always shows it whole."""
    return token if len(token) <= max_chars else token[: max_chars - 1] + "…"


def token_vector(key: str, d: int, seed: int) -> np.ndarray:
    """The toy embedding of one token string: unit-variance Gaussian entries, float64 (d,).

    Derived from SHA-256 of (seed, d, key), never Python's hash(), which changes between processes.
    """
    digest = hashlib.sha256(f"pe-atlas|{seed}|{d}|{key}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    return rng.standard_normal(d)


def token_embeddings(keys: tuple[str, ...] | list[str], d: int, seed: int) -> torch.Tensor:
    """(n, d) float32: one row per token; equal keys give equal rows."""
    if d < 1:
        raise ValueError("embedding size must be at least 1")
    vectors: dict[str, np.ndarray] = {}  # each distinct word hashed once
    for k in keys:
        if k not in vectors:
            vectors[k] = token_vector(k, d, seed)
    rows = [vectors[k] for k in keys]
    if not rows:
        return torch.zeros(0, d)
    return torch.from_numpy(np.stack(rows)).float()  # (n, d)
