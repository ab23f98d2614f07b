"""Tiny byte-level language models on real text, one per positional encoding, identical otherwise.

    python -m lab.regenerate lm                     # every model, then the length curves (index.json)
    python -m lab.lm --encodings rope cope          # some models only (e.g. in two processes), then
    python -m lab.lm --index-only                   # … re-evaluate what is shipped and write index.json

Tokens are the UTF-8 bytes of the text (vocabulary 256), so any text a learner types — Korean,
emoji, control characters — runs through every model; bytes the corpus never had are simply
unlikely. The model is lab/model.py's TinyTransformer (the attention every chapter draws); only
`encoding` differs between models: same width, depth, steps, learning rate, seed, and the same
training windows in the same order.

Evaluation (Press et al. 2022, §3 and Fig. 1 evaluate the same way): the held-out text is cut into
non-overlapping windows of the evaluation length L′, each window is read from its first byte, and the
mean loss over every predicted byte is reported as bits per byte (cross-entropy / ln 2). A longer L′
gives later bytes more context, so a model that extrapolates gets *lower* bits per byte; one that
does not gets higher. RoPE is also evaluated with each context-extension scheme of the registry that
stretches its frequencies (PI, NTK-aware, YaRN) applied at inference to the same weights — stretched
by s = L′ / L, no retraining.

Longer than 500 lines: it holds the first shipped set (the models a learner's text runs through, and
their index.json) beside the training and windows that lab/lm_study.py's study reuses; the chapter's
numbers now come from the study, so the first set's length evaluation (length_curves, write_index) is
the part to drop when the study's seed-0 models replace the first set on the page.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

import encoders
from encoders.attention import TransformerBlock
from encoders.base import PositionOutOfRange, derived_seed
from lab import corpus as C
from lab.lm_readme import write_readme
from lab.model import ModelConfig, TinyTransformer

LM_DIR = C.LM_DIR
VOCAB = 256  # bytes
TRAIN_LEN = 128
# What `python -m lab.lm` trains unless told otherwise (registry names, the page's order). Any
# registered encoding trains (`--encodings kerple fire`); what *was* trained is ENCODINGS below.
DEFAULT_ENCODINGS = ("none", "sinusoidal", "learned", "t5", "alibi", "rope", "cope")


def trained_encodings(directory: Path = LM_DIR) -> tuple[str, ...]:
    """The encodings with a shipped model, in the order the page lists them: index.json's models
    where it exists, else every registered encoding with a checkpoint in `directory` (registry order)."""
    index_path = directory / "index.json"
    if index_path.exists():
        models = json.loads(index_path.read_text()).get("models")
        if models:
            return tuple(models)
    return tuple(n for n in encoders.REGISTRY if (directory / f"{n}.safetensors").exists())


ENCODINGS = trained_encodings()  # read once per process: the shipped files do not change under it
# Context-extension schemes applied to the RoPE model at inference (registry names).
STRETCHES = ("rope-pi", "rope-ntk", "rope-yarn")
STRETCHED = "rope"  # the trained model they are applied to
EVAL_LENGTHS = (128, 256, 512, 1024)  # 1× … 8× the training length
# The length curves read the first EVAL_BYTES of the held-out split (64 windows at 1024, 512 at
# 128): every length sees the same bytes, and 8 models × 4 lengths take minutes, not a quarter hour.
EVAL_BYTES = 65_536 + 1
MAX_TEXT_BYTES = 1024  # a learner's text is cut to this many bytes (8× the training length)
LN2 = math.log(2.0)


@dataclass(frozen=True)
class LMConfig:
    encoding: str
    steps: int = 1500
    seed: int = 0
    batch_size: int = 16
    length: int = TRAIN_LEN
    lr: float = 3e-3
    warmup: int = 100  # linear warm-up, then cosine decay to lr/10
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 2
    curve_every: int = 50  # one learning-curve point every this many steps
    val_windows: int = 64  # held-out windows (of `length`) behind each curve point
    # A beginning-of-text byte before every window (lab/lm_study.py: 0x02, a byte the corpus never has),
    # so every model, NoPE included, has a first position to count from; None = the first shipped set.
    bos: int | None = None
    # Matrix products in bfloat16 while training (torch.autocast; the weights and the optimizer stay
    # float32, evaluation is float32): 1.5× faster per step on this machine's AVX-512 BF16 cores.
    autocast: bool = False


def model_config(cfg: LMConfig) -> ModelConfig:
    # max_len = the training length: a learned table has rows for trained positions only.
    return ModelConfig(cfg.encoding, VOCAB, cfg.length, cfg.d_model, cfg.n_heads, cfg.n_layers)


def lr_at(step: int, cfg: LMConfig) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    t = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def as_ids(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8).astype(np.int64)


def windows(data: bytes, length: int, limit: int | None = None) -> np.ndarray:
    """Non-overlapping windows (w, length + 1) of the text: each predicts its last `length` bytes
    from the ones before; consecutive windows share one boundary byte (the first one's target)."""
    ids = as_ids(data)
    w = max(0, (len(ids) - 1) // length)
    if limit is not None:
        w = min(w, limit)
    starts = np.arange(w) * length
    return np.stack([ids[s : s + length + 1] for s in starts]) if w else np.zeros((0, length + 1), np.int64)


def bos_windows(data: bytes, length: int, bos: int, limit: int | None = None) -> np.ndarray:
    """Non-overlapping windows of `length` bytes, each after a beginning-of-text byte → (w, length + 1):
    a row's model input is its first `length` entries (the byte, then length − 1 bytes) and it predicts
    its `length` bytes, so every byte of data[: w · length] is predicted once, byte p of a window from
    its p bytes before it in the window (and the beginning-of-text byte)."""
    ids = as_ids(data)
    w = len(ids) // length
    if limit is not None:
        w = min(w, limit)
    rows = ids[: w * length].reshape(w, length)
    return np.concatenate([np.full((w, 1), bos, np.int64), rows], axis=1)


def loss_bits(model: TinyTransformer, batch: torch.Tensor) -> torch.Tensor:
    """Mean next-byte cross-entropy in bits over every position of a (b, n + 1) batch."""
    logits = model(batch[:, :-1])  # (b, n, V)
    return F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1)) / LN2


@torch.no_grad()
def window_bits(model: TinyTransformer, data: bytes, length: int, chunk_tokens: int = 8192) -> np.ndarray:
    """Mean bits per byte of each non-overlapping window of `length` (w,): the windows at length
    k·L predict exactly the bytes of k consecutive windows at L, so lengths can be compared paired."""
    model.eval()
    w = torch.from_numpy(windows(data, length))
    if not len(w):
        raise ValueError(f"the text is shorter than one window of {length} bytes")
    per = max(1, chunk_tokens // length)
    out = []
    for s in range(0, len(w), per):
        batch = w[s : s + per]  # (c, length + 1)
        logits = model(batch[:, :-1])  # (c, length, V)
        nll = F.cross_entropy(logits.transpose(1, 2), batch[:, 1:], reduction="none")  # (c, length)
        out.append((nll.mean(dim=1) / LN2).numpy())
    return np.concatenate(out)


def bits_per_byte(model: TinyTransformer, data: bytes, length: int) -> float:
    """Held-out bits per byte at evaluation length `length` (non-overlapping windows, all positions)."""
    return float(window_bits(model, data, length).mean())


def train_lm(
    cfg: LMConfig,
    corpus: C.Corpus,
    callback: Callable[[int, float], bool | None] | None = None,
    model: TinyTransformer | None = None,
) -> tuple[TinyTransformer, dict]:
    """Train one model; callback(step, train_bits) after every step, True stops early. `model`:
    go on training this one (a fine-tune, e.g. at a longer `cfg.length`) instead of a new one."""
    if model is None:
        model = TinyTransformer(model_config(cfg), seed=cfg.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), weight_decay=cfg.weight_decay)
    # The data order depends on the seed only, not the encoding: every model reads the same windows.
    rng = np.random.default_rng(derived_seed(cfg.seed, "lm/train"))
    train_ids = torch.from_numpy(as_ids(corpus.train))
    val = corpus.heldout
    if cfg.bos is None:
        val_w = torch.from_numpy(windows(val, cfg.length, cfg.val_windows))
    else:
        val_w = torch.from_numpy(bos_windows(val, cfg.length, cfg.bos, cfg.val_windows))
    curve: list[dict] = []
    window: list[float] = []
    t0, c0 = time.perf_counter(), time.thread_time()
    offsets = torch.arange(cfg.length + 1)
    for step in range(cfg.steps):
        model.train()
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        starts = torch.from_numpy(rng.integers(0, len(train_ids) - cfg.length - 1, cfg.batch_size))
        if cfg.bos is None:
            batch = train_ids[starts[:, None] + offsets[None, :]]  # (b, length + 1)
        else:  # the byte, then `length` bytes of text: the model reads length tokens, predicts length bytes
            text = train_ids[starts[:, None] + offsets[None, : cfg.length]]  # (b, length)
            batch = torch.cat([torch.full((cfg.batch_size, 1), cfg.bos, dtype=text.dtype), text], dim=1)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.autocast):
            loss = loss_bits(model, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        window.append(loss.item())
        done = step + 1
        if done % cfg.curve_every == 0 or done == cfg.steps:
            model.eval()
            with torch.no_grad():
                held = float(loss_bits(model, val_w))
            curve.append({"step": done, "train_bpb": round(float(np.mean(window)), 4), "heldout_bpb": round(held, 4)})
            window = []
        if callback is not None and callback(done, loss.item()):
            break
    metrics = {
        "settings": asdict(cfg),
        "model": asdict(model.cfg),
        "parameters": model.n_parameters(),
        "train_seconds": round(time.perf_counter() - t0, 1),  # wall clock, inflated on a busy machine
        "train_cpu_seconds": round(time.thread_time() - c0, 1),  # what one idle core needs
        "tokens_seen": cfg.steps * cfg.batch_size * cfg.length,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "machine": platform.machine(),
        "curve": curve,
    }
    # Round to the shipped precision, so what is evaluated afterwards is the checkpoint itself.
    model.load_state_dict({k: v.half().float() for k, v in model.state_dict().items()})
    return model.eval(), metrics


# --- the learner's text -----------------------------------------------------------------------


@dataclass(frozen=True)
class Readout:
    """One model read over a learner's text (n bytes after cutting).

    labels:     (n,) what each byte shows as: the character a byte starts ("␣" space, "↵" newline,
                "^X"/"\\xNN" otherwise invisible), "·" for a continuation byte of a multi-byte character
    attention:  (L, H, n, n) float32 weights of every head of every layer, causal, rows sum to 1
    extras:     per-layer encoder extras, e.g. CoPE's "gates" (L, H, n, n) — names from the encoder
    top_bytes:  (n, k) the k most likely next bytes after each position, most likely first
    top_probs:  (n, k) their probabilities
    surprise:   (n − 1,) bits the model paid for each actual next byte (−log2 p)
    n_bytes:    bytes in the text before cutting; cut_at: where it was cut (None = not cut)
    table_end:  the first position the encoding has no representation for (None = none); the
                text is cut there too (a learned table of TRAIN_LEN rows)
    """

    data: bytes
    labels: tuple[str, ...]
    attention: np.ndarray
    extras: dict[str, np.ndarray]
    top_bytes: np.ndarray
    top_probs: np.ndarray
    surprise: np.ndarray
    n_bytes: int
    cut_at: int | None
    table_end: int | None

    @property
    def bits_per_byte(self) -> float:
        return float(self.surprise.mean()) if len(self.surprise) else float("nan")


@lru_cache(maxsize=1)
def training_bytes() -> frozenset[int]:
    """Every byte value that occurs in the training text: a byte outside it (each byte of a Korean
    syllable, of most emoji) was never a target in training, so every model gives it little mass."""
    return frozenset(np.unique(np.frombuffer(C.load().train, dtype=np.uint8)).tolist())


def byte_labels(data: bytes) -> tuple[str, ...]:
    """A label per byte: the character each UTF-8 sequence starts, "·" on its continuation bytes."""
    out: list[str] = []
    i = 0
    while i < len(data):
        b = data[i]
        size = 1 if b < 0x80 else 2 if 0xC2 <= b < 0xE0 else 3 if 0xE0 <= b < 0xF0 else 4 if 0xF0 <= b < 0xF5 else 0
        chunk = data[i : i + size] if size else b""
        try:
            ch = chunk.decode("utf-8") if size else None
        except UnicodeDecodeError:
            ch = None
        if ch is None:
            out.append(f"\\x{b:02x}")  # a byte that starts no valid character
            i += 1
            continue
        out.append(visible(ch))
        out.extend("·" for _ in range(size - 1))
        i += size
    return tuple(out)


def visible(ch: str) -> str:
    if ch == " ":
        return "␣"
    if ch == "\n":
        return "↵"
    if ch == "\t":
        return "⇥"
    if ord(ch) < 0x20 or ord(ch) == 0x7F:
        return "^" + chr(ord(ch) ^ 0x40)  # ^A … ^_, ^? for DEL
    return ch


def cut_text(text: str, limit: int = MAX_TEXT_BYTES) -> tuple[bytes, int, int | None]:
    """The text's UTF-8 bytes cut to `limit`, never inside a character → (bytes, bytes before, cut at)."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return data, len(data), None
    end = limit
    while end > 0 and (data[end] & 0xC0) == 0x80:  # data[end] continues a character: step back
        end -= 1
    return data[:end], len(data), end


@torch.no_grad()
def read_text(model: TinyTransformer, text: str, k: int = 5, limit: int = MAX_TEXT_BYTES) -> Readout:
    """Run one model over the learner's text: every head's attention, the next-byte readout."""
    data, n_bytes, cut_at = cut_text(text, limit)
    table_end = None
    if not data:
        empty = np.zeros((model.cfg.n_layers, model.cfg.n_heads, 0, 0), np.float32)
        z = np.zeros((0, k))
        return Readout(data, (), empty, {}, z.astype(np.int64), z, np.zeros(0), n_bytes, cut_at, table_end)
    try:
        logits, results = model(torch.from_numpy(as_ids(data))[None, :], return_attention=True)
    except PositionOutOfRange as e:
        # A table with rows for the trained positions only (learned): read as far as it reaches.
        table_end = e.max_len
        data, _, cut_at = cut_text(data.decode("utf-8", errors="replace"), table_end)
        logits, results = model(torch.from_numpy(as_ids(data))[None, :], return_attention=True)
    ids = torch.from_numpy(as_ids(data))[None, :]  # (1, n)
    n = ids.shape[1]
    probs = torch.softmax(logits[0].double(), dim=-1)  # (n, V)
    top_p, top_b = probs.topk(k, dim=-1)  # (n, k)
    surprise = -torch.log2(probs[torch.arange(n - 1), ids[0, 1:]])  # (n − 1,)
    attention = np.stack([r.weights[0].float().numpy() for r in results])  # (L, H, n, n)
    extras: dict[str, np.ndarray] = {}
    for name in results[0].extras:
        extras[name] = np.stack([r.extras[name][0].float().numpy() for r in results])  # (L, H, n, n)
    return Readout(
        data,
        byte_labels(data),
        attention,
        extras,
        top_b.numpy(),
        top_p.numpy(),
        surprise.numpy(),
        n_bytes,
        cut_at,
        table_end,
    )


# --- stretching RoPE at inference --------------------------------------------------------------


def stretched(model: TinyTransformer, scheme: str, run_len: int) -> TinyTransformer:
    """The same weights with every block's RoPE replaced by `scheme` stretched from the training
    length to `run_len` (the registry's config_for_lengths: s = max(1, run_len / L)). A rotary
    encoder has no parameters, so nothing is retrained."""
    import copy

    cls = encoders.REGISTRY[scheme]
    out = copy.deepcopy(model)
    conf = cls.config_for_lengths(model.cfg.max_len, run_len)
    for block in out.blocks:
        assert isinstance(block, TransformerBlock)
        old = block.attn.encoder
        if any(True for _ in old.parameters()):
            raise ValueError(f"{scheme} can only replace a parameter-free rotary encoder")
        block.attn.encoder = encoders.build(scheme, old.d_model, old.n_heads, 0, conf)
    return out.eval()


# --- shipped checkpoints --------------------------------------------------------------------------


def save(model: TinyTransformer, cfg: LMConfig, metrics: dict, directory: Path = LM_DIR) -> None:
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    weights = {k: v.detach().half().contiguous() for k, v in model.state_dict().items()}
    wpath = directory / f"{cfg.encoding}.safetensors"
    save_file(weights, str(wpath), metadata={"settings": json.dumps(asdict(cfg))})
    wpath.chmod(0o644)
    (directory / f"{cfg.encoding}.json").write_text(json.dumps(metrics, indent=1) + "\n")


def load(encoding: str, directory: Path = LM_DIR) -> TinyTransformer:
    """A shipped model (eval mode, float32 weights)."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    wpath = directory / f"{encoding}.safetensors"
    with safe_open(str(wpath), framework="pt") as f:
        cfg = LMConfig(**json.loads(f.metadata()["settings"]))
    model = TinyTransformer(model_config(cfg), seed=cfg.seed)
    model.load_state_dict({k: v.float() for k, v in load_file(str(wpath)).items()})
    return model.eval()


@lru_cache(maxsize=len(ENCODINGS))
def shipped(encoding: str) -> TinyTransformer:
    """One shared model per encoding per process (the page reads them, never trains them)."""
    return load(encoding)


def index(directory: Path = LM_DIR) -> dict:
    return json.loads((directory / "index.json").read_text())


def length_curves(model: TinyTransformer, heldout: bytes, lengths: tuple[int, ...] = EVAL_LENGTHS) -> dict:
    """Per evaluation length: bits per byte over the first EVAL_BYTES held-out bytes, and every
    window's own value (what an interval or a paired comparison needs); None where the encoding has
    no representation for the positions (a learned table past its rows)."""
    heldout = heldout[:EVAL_BYTES]
    out: dict[str, dict | None] = {}
    for n in lengths:
        try:
            per = window_bits(model, heldout, n)
        except PositionOutOfRange:
            out[str(n)] = None
            continue
        out[str(n)] = {"bpb": round(float(per.mean()), 4), "windows": [round(float(v), 4) for v in per]}
    return out


def write_index(directory: Path = LM_DIR) -> dict:
    """Evaluate every shipped model (and RoPE's stretches) at every length → index.json."""
    corpus = C.load(directory)
    t0 = time.perf_counter()
    models: dict[str, dict] = {}
    # every model trained into `directory`: its checkpoints are the list, not a copy of it
    trained = [n for n in DEFAULT_ENCODINGS if (directory / f"{n}.safetensors").exists()]
    trained += [n for n in encoders.REGISTRY if n not in trained and (directory / f"{n}.safetensors").exists()]
    for enc in trained:
        meta = json.loads((directory / f"{enc}.json").read_text())
        model = load(enc, directory)
        models[enc] = {
            "label": encoders.REGISTRY[enc].label,
            "parameters": meta["parameters"],
            "train_cpu_seconds": meta["train_cpu_seconds"],
            "train_seconds": meta["train_seconds"],
            "curve": meta["curve"],
            "bpb": length_curves(model, corpus.heldout),
        }
    base = load(STRETCHED, directory)
    stretches = {
        s: {
            "label": encoders.REGISTRY[s].label,
            "bpb": {str(n): length_curves(stretched(base, s, n), corpus.heldout, (n,))[str(n)] for n in EVAL_LENGTHS},
        }
        for s in STRETCHES
    }
    settings = json.loads((directory / f"{trained[0]}.json").read_text())["settings"]
    settings.pop("encoding")
    out = {
        "train_length": TRAIN_LEN,
        "eval_lengths": list(EVAL_LENGTHS),
        "settings": settings,
        "corpus": corpus.recipe,
        "models": models,
        "stretches": {"of": STRETCHED, **stretches},
        "eval_bytes": min(EVAL_BYTES, len(corpus.heldout)),
        "eval_seconds": round(time.perf_counter() - t0, 1),
        "torch": torch.__version__,
    }
    (directory / "index.json").write_text(json.dumps(out, indent=1) + "\n")
    write_readme(out, directory)  # lab/lm_readme.py
    return out


def regenerate(
    encodings: tuple[str, ...] = DEFAULT_ENCODINGS,
    steps: int | None = None,
    rebuild_corpus: bool = False,
    directory: Path = LM_DIR,
) -> None:
    torch.set_num_threads(1)  # deterministic, and what the budget is stated in
    if rebuild_corpus or not (directory / "corpus.json").exists():
        C.save(C.build(), directory)
    corpus = C.load(directory)
    for enc in encodings:
        cfg = LMConfig(enc) if steps is None else LMConfig(enc, steps=steps)

        def report(step: int, bits: float, enc: str = enc, total: int = cfg.steps) -> None:
            if step % 100 == 0 or step == total:
                print(f"{enc:10s} step {step:5d}/{total}  train {bits:.3f} bits/byte", flush=True)

        model, metrics = train_lm(cfg, corpus, report)
        save(model, cfg, metrics, directory)
        print(f"{enc}: {metrics['train_cpu_seconds']} s CPU, held-out {metrics['curve'][-1]['heldout_bpb']} bits/byte")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Train the byte-level language models (assets/lm/).")
    ap.add_argument("--encodings", nargs="+", choices=sorted(encoders.REGISTRY), default=list(DEFAULT_ENCODINGS))
    ap.add_argument("--steps", type=int, default=None, help="fewer steps for a quick try (default LMConfig)")
    ap.add_argument("--rebuild-corpus", action="store_true", help="rebuild assets/lm/corpus-* from this stdlib")
    ap.add_argument("--index-only", action="store_true", help="only evaluate what is shipped → index.json")
    ap.add_argument("--no-index", action="store_true", help="train only; write index.json later")
    ap.add_argument("--out", type=Path, default=LM_DIR, help="directory of the models (default assets/lm)")
    a = ap.parse_args(argv)
    if not a.index_only:
        regenerate(tuple(a.encodings), a.steps, a.rebuild_corpus, a.out)
    if not a.no_index:
        torch.set_num_threads(1)
        for enc, m in write_index(a.out)["models"].items():
            print(enc, {n: v and v["bpb"] for n, v in m["bpb"].items()})


if __name__ == "__main__":
    main()
