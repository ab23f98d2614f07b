"""SmolLM2-135M past its trained context (8,192 tokens): loss by position with plain RoPE and with the
registry's stretches (PI, NTK-aware, YaRN), on a long text shipped with the atlas.

    python -m lab.regenerate smollm2_long          # the loss curves (assets/smollm2/long_context.json)
    python -m lab.smollm2_long text                # rebuild the shipped text from python3.11-doc
    python -m lab.smollm2_long probe 16384         # one forward's time and memory at a window length

Axis legend: n tokens of a window, t the position a prediction is made at (0 … n−2; the loss at t is
−ln p(token t+1 | tokens 0 … t)), B position bins of BIN tokens, W windows, P rotary pairs (32), V
vocabulary.

**The text.** The Python Tutorial (Python 3.11, reStructuredText sources as Debian's `python3.11-doc`
ships them in html/_sources/tutorial/, its files in the toctree's order), PSF License Agreement (its
code examples also Zero-Clause BSD): TEXT_FILE, xz-compressed, with its recipe, size and checksum in
TEXT_RECIPE. Nothing the atlas trains reads it (the byte language models learn from the standard
library's *docstrings*, lab/corpus.py; the tutorial is other prose). SmolLM2's own training data
(public web and code) may well contain it: the curves show what the stretches do to the model's loss
past its context, not how well it predicts unseen text.

**The schemes.** Each is a registry class (encoders/rope.py, encoders/rope_scaling.py) configured by its
own `config_for_lengths(trained=8192, run=n)` — the configuration the Stretching RoPE chapter draws —
with the model's base (100,000) in place of the config's default: for a window of n = 12,288 tokens
s = 1.5. Its `frequencies(n)` become the model's rotary inverse frequencies and its `attention_factor(n)`
the rotary module's `attention_scaling` (transformers multiplies cos and sin by it: q and k each, the
logits by its square, as YaRN asks). Plain RoPE's frequencies equal the model's own to float32
rounding (tested). Dynamic NTK is left out: in one forward pass transformers applies the frequencies
of the whole window to every position, which is not the scheme run token by token.

**The run.** The model is loaded once more, apart from the chapter's shared copy, with PyTorch's
scaled-dot-product attention (`sdpa`: no L × L weights kept), float32, one torch thread. Per window and
scheme one forward gives the last layer's states; the output layer runs over them in chunks of
HEAD_CHUNK positions (the whole 12,288 × 49,152 logits would be 2.4 GB). Windows are consecutive,
disjoint stretches of WINDOW tokens from the text's start. Each finished (window, scheme) is written at
once (the run resumes from them when the settings are the same); the chapter reads only windows that
every scheme has finished.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import platform
import re
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from encoders import REGISTRY
from encoders.rope import RoPE, RopeConfig
from models import smollm2 as smol

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "assets" / "smollm2"
TEXT_FILE = OUT_DIR / "python-tutorial-3.11.rst.xz"
TEXT_RECIPE = OUT_DIR / "python-tutorial-3.11.json"
TEXT_LICENCE = OUT_DIR / "python-tutorial-3.11.LICENSE.txt"  # the PSF agreement it asks to be kept
RESULT_FILE = OUT_DIR / "long_context.json"

# Where Debian's python3.11-doc (`apt-get install python3-doc`) puts the documentation's sources.
DOC_SOURCES = Path("/usr/share/doc/python3.11/html/_sources")
DOC_PACKAGE = "python3.11-doc"
DOCUMENT = "tutorial"

TRAINED = 8192  # SmolLM2's trained context (max_position_embeddings)
# Tokens per window: 1.5 times the trained context, so s = 1.5 for every stretch. One forward at this
# length took 123 s of CPU (estimated from 182 s measured at 16,384 and 20 s at 4,096, sdpa, one thread):
# 5 windows × 4 schemes fit the 45 minutes of one core the regeneration may take; 16,384 would have
# left 3 windows (an interval over 3 windows is twice as wide as over 5).
WINDOW = 12_288
WINDOWS = 5  # consecutive, disjoint windows from the text's start (the tutorial holds 68,552 tokens)
BIN = 512  # positions per bin of the loss curve
# Registry names, in the order the chapter draws them: plain RoPE as trained, then the stretches.
SCHEMES = ("rope", "rope-pi", "rope-ntk", "rope-yarn")
HEAD_CHUNK = 1024  # positions per call of the output layer
THREADS = 1  # torch threads: the regeneration runs on one core, beside other work


# ------------------------------------------------------------------------------------------------
# The text
# ------------------------------------------------------------------------------------------------


def tutorial_files(sources: Path = DOC_SOURCES) -> list[Path]:
    """The tutorial's source files in reading order: index, then its toctree's entries."""
    folder = sources / DOCUMENT
    index = (folder / "index.rst.txt").read_text(encoding="utf-8")
    names = re.findall(r"^\s+(\S+)\.rst$", index, flags=re.M)
    return [folder / "index.rst.txt", *(folder / f"{n}.rst.txt" for n in names)]


def build_text(sources: Path = DOC_SOURCES) -> None:
    """Write TEXT_FILE and TEXT_RECIPE from the installed documentation sources."""
    files = tutorial_files(sources)
    text = "\n\n".join(f.read_text(encoding="utf-8") for f in files).encode("utf-8")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    packed = lzma.compress(text, preset=9)
    TEXT_FILE.write_bytes(packed)
    recipe = {
        "title": "The Python Tutorial (Python 3.11), reStructuredText sources",
        "source": f"Debian package {DOC_PACKAGE} {_package_version()}, {sources / DOCUMENT}",
        "files": [f.name for f in files],
        "joined_by": "a blank line (two newlines) between files",
        "licence": "PSF License Agreement for Python 3.11 (the documentation); code examples in it are also "
        "under the Zero-Clause BSD licence (license.rst of the same documentation)",
        "bytes": len(text),
        "sha256": hashlib.sha256(text).hexdigest(),
        "xz_bytes": len(packed),
        "xz_sha256": hashlib.sha256(packed).hexdigest(),
        "may_be_in_smollm2_training_data": True,
    }
    TEXT_RECIPE.write_text(json.dumps(recipe, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    TEXT_LICENCE.write_text(licence_text(sources), encoding="utf-8")


def licence_text(sources: Path = DOC_SOURCES) -> str:
    """The PSF License Agreement as the same documentation states it (license.rst), with the summary of
    changes its clause 3 asks for."""
    rst = (sources / "license.rst.txt").read_text(encoding="utf-8")
    start = rst.index("PSF LICENSE AGREEMENT FOR PYTHON |release|")
    end = rst.index("BEOPEN.COM LICENSE AGREEMENT", start)
    agreement = rst[start:end].replace("|release|", "3.11").replace(".. parsed-literal::\n", "").rstrip()
    return (
        "python-tutorial-3.11.rst.xz holds the reStructuredText sources of The Python Tutorial (Python 3.11),\n"
        f"from Debian's {DOC_PACKAGE} package: the files listed in python-tutorial-3.11.json, joined by a blank\n"
        "line and xz-compressed. Nothing in them was changed.\n\n"
        "Python software and documentation are licensed under the PSF License Agreement; examples, recipes\n"
        "and other code in the documentation are dual licensed under the PSF License Agreement and the\n"
        "Zero-Clause BSD license (license.rst of the same documentation).\n\n"
        "Copyright © 2001-2023 Python Software Foundation; All Rights Reserved\n\n" + agreement + "\n"
    )


def _package_version() -> str:
    import subprocess

    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", DOC_PACKAGE], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "(version unknown)"
    return out.stdout.strip()


def recipe() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(TEXT_RECIPE.read_text(encoding="utf-8"))
    return loaded


def text() -> str:
    """The shipped text, checked against its recorded checksum."""
    raw = lzma.decompress(TEXT_FILE.read_bytes())
    want = recipe()["sha256"]
    if hashlib.sha256(raw).hexdigest() != want:
        raise ValueError(f"{TEXT_FILE.name} does not match its recorded checksum {want}")
    return raw.decode("utf-8")


def token_ids(tokenizer: Any) -> list[int]:
    ids: list[int] = tokenizer(text(), add_special_tokens=False)["input_ids"]
    return ids


def windows(n_tokens: int, window: int = WINDOW, count: int = WINDOWS) -> list[tuple[int, int]]:
    """[start, end) token ranges of the windows: consecutive and disjoint from the text's start."""
    if count * window > n_tokens:
        raise ValueError(f"{count} windows of {window} tokens need {count * window} tokens; the text has {n_tokens}")
    return [(k * window, (k + 1) * window) for k in range(count)]


# ------------------------------------------------------------------------------------------------
# The schemes, from the registry
# ------------------------------------------------------------------------------------------------


def rotary_class(name: str) -> type[RoPE]:
    cls = REGISTRY[name]
    if not issubclass(cls, RoPE):
        raise ValueError(f"{name} is not a rotary encoding: it has no frequencies to give the model")
    return cls


def scheme_config(name: str, base: float, trained: int = TRAINED, run: int = WINDOW) -> RopeConfig:
    """The registry class's own config for a model trained on `trained` tokens run on `run`, with the
    model's base (config_for_lengths starts from the encoders' default base)."""
    return replace(rotary_class(name).config_for_lengths(trained, run), base=base)


def scheme_rotary(
    name: str, base: float, head_dim: int, trained: int = TRAINED, run: int = WINDOW
) -> tuple[Tensor, float]:
    """(θ'_f (P,) float64, attention factor on q and k) of scheme `name` at a window of `run` tokens:
    what the registered encoder itself computes (its frequencies and attention_factor)."""
    enc = rotary_class(name)(head_dim, 1, scheme_config(name, base, trained, run))
    return enc.frequencies(run), float(enc.attention_factor(run))


@contextmanager
def rotary(model: Any, inv_freq: Tensor, factor: float) -> Iterator[None]:
    """Run `model` with these rotary inverse frequencies and attention scaling; restored afterwards.

    transformers 5.24's LlamaRotaryEmbedding computes cos/sin from its `inv_freq` buffer at every call
    and multiplies both by `attention_scaling` (float32 angles: position_ids · inv_freq)."""
    emb = model.model.rotary_emb
    old_freq, old_factor = emb.inv_freq.detach().clone(), emb.attention_scaling
    with torch.no_grad():
        emb.inv_freq.copy_(inv_freq.to(emb.inv_freq.dtype))
    emb.attention_scaling = factor
    try:
        yield
    finally:
        with torch.no_grad():
            emb.inv_freq.copy_(old_freq)
        emb.attention_scaling = old_factor


def token_losses(model: Any, ids: Tensor) -> Tensor:
    """−ln p(token t+1 | tokens 0 … t) for t = 0 … n−2, (n−1,) float32, positions 0 … n−1."""
    n = ids.numel()
    with torch.inference_mode():
        h = model.model(
            input_ids=ids.reshape(1, n), position_ids=torch.arange(n).reshape(1, n), use_cache=False
        ).last_hidden_state[0]  # (n, D), after the final norm
        out = torch.empty(n - 1)
        for s in range(0, n - 1, HEAD_CHUNK):
            e = min(s + HEAD_CHUNK, n - 1)
            logits = model.lm_head(h[s:e])  # (c, V)
            out[s:e] = F.cross_entropy(logits.float(), ids[s + 1 : e + 1], reduction="none")
    return out


def bin_means(losses: Tensor, bin_size: int = BIN) -> list[float]:
    """Mean loss per bin of prediction positions t: [0, bin), [bin, 2·bin), … (the last may be short)."""
    return [float(losses[s : s + bin_size].mean()) for s in range(0, losses.numel(), bin_size)]


# ------------------------------------------------------------------------------------------------
# The regeneration
# ------------------------------------------------------------------------------------------------


def load_sdpa() -> Any:
    """A separate copy of the model with scaled-dot-product attention (not the chapter's shared one:
    its rotary buffers are rewritten here)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = str(smol.model_dir())
    with smol.one_gguf_parse():
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=smol.GGUF_FILE)
        model = AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=smol.GGUF_FILE, dtype=torch.float32, attn_implementation="sdpa"
        )
    model.eval().requires_grad_(False)
    return smol.Loaded(model, tokenizer)


def model_base(config: Any) -> float:
    return float(config.rope_parameters["rope_theta"])


def settings(config: Any) -> dict[str, Any]:
    """What a result was computed with; a stored run with other settings is not reused."""
    base, head_dim = model_base(config), int(config.head_dim)
    schemes = {}
    for name in SCHEMES:
        freq, factor = scheme_rotary(name, base, head_dim)
        schemes[name] = {
            "config": asdict(scheme_config(name, base)),
            "inv_freq": [float(x) for x in freq],
            "attention_factor": factor,
        }
    return {
        "model": smol.GGUF_FILE,
        "quantisation": smol.QUANTISATION,
        "dtype": "float32",
        "attention": "sdpa",
        "threads": THREADS,
        "trained": TRAINED,
        "context_in_config": int(config.max_position_embeddings),
        "base": base,
        "head_dim": head_dim,
        "window": WINDOW,
        "windows": WINDOWS,
        "bin": BIN,
        "loss": "natural log, per token, -ln p(token t+1 | tokens 0..t), binned by t",
        "schemes": schemes,
        "text": {"file": TEXT_FILE.name, "sha256": recipe()["sha256"]},
    }


def _write(doc: dict[str, Any]) -> None:
    tmp = RESULT_FILE.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    tmp.replace(RESULT_FILE)


def regenerate(max_windows: int = WINDOWS) -> None:
    torch.set_num_threads(THREADS)
    t0 = time.perf_counter()
    loaded = load_sdpa()
    model, tok = loaded.model, loaded.tokenizer
    load_seconds = time.perf_counter() - t0
    conf = settings(model.config)
    ids = token_ids(tok)
    spans = windows(len(ids))[:max_windows]
    doc: dict[str, Any] = {}
    if RESULT_FILE.exists():
        old = json.loads(RESULT_FILE.read_text(encoding="utf-8"))
        if old.get("settings") == json.loads(json.dumps(conf)):
            doc = old
    if not doc:
        doc = {"settings": conf, "runs": {}}
    doc.update(
        text_tokens=len(ids),
        window_spans=[list(s) for s in windows(len(ids))],
        machine=platform.machine(),
        python=platform.python_version(),
        torch=torch.__version__,
        transformers=_transformers_version(),
        load_seconds=round(load_seconds, 1),
    )
    runs: dict[str, Any] = doc["runs"]
    for w, (start, end) in enumerate(spans):
        window_ids = torch.tensor(ids[start:end], dtype=torch.long)
        for name in SCHEMES:
            key = f"{w}/{name}"
            if key in runs:
                continue
            s = conf["schemes"][name]
            freq = torch.tensor(s["inv_freq"], dtype=torch.float64)
            wall, cpu = time.perf_counter(), time.thread_time()
            with rotary(model, freq, s["attention_factor"]):
                losses = token_losses(model, window_ids)
            runs[key] = {
                "window": w,
                "scheme": name,
                "bins": [round(x, 5) for x in bin_means(losses)],
                "mean": round(float(losses.mean()), 5),
                "wall_seconds": round(time.perf_counter() - wall, 1),
                "cpu_seconds": round(time.thread_time() - cpu, 1),
                "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            }
            doc["complete_windows"] = sum(all(f"{k}/{n}" in runs for n in SCHEMES) for k in range(WINDOWS))
            doc["wall_seconds"] = round(sum(r["wall_seconds"] for r in runs.values()), 1)
            doc["cpu_seconds"] = round(sum(r["cpu_seconds"] for r in runs.values()), 1)
            _write(doc)
            print(
                f"window {w} {name}: mean loss {runs[key]['mean']:.3f}, {runs[key]['wall_seconds']} s wall, "
                f"{runs[key]['cpu_seconds']} s CPU, RSS {runs[key]['max_rss_mb']} MB",
                flush=True,
            )
    print(f"done in {time.perf_counter() - t0:.0f} s", flush=True)


def _transformers_version() -> str:
    import transformers

    return str(transformers.__version__)


def probe(lengths: list[int]) -> None:
    """One forward's time and the process's peak memory at each length (plain RoPE)."""
    torch.set_num_threads(THREADS)
    loaded = load_sdpa()
    ids = token_ids(loaded.tokenizer)
    for n in lengths:
        wall, cpu = time.perf_counter(), time.thread_time()
        losses = token_losses(loaded.model, torch.tensor(ids[:n]))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{n} tokens: {time.perf_counter() - wall:.1f} s wall, {time.thread_time() - cpu:.1f} s CPU, "
            f"peak RSS {rss:.0f} MB, mean loss {float(losses.mean()):.3f}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("text", help="rebuild the shipped text from python3.11-doc")
    t.add_argument("--sources", type=Path, default=DOC_SOURCES)
    p = sub.add_parser("probe", help="one forward's time and memory")
    p.add_argument("lengths", nargs="+", type=int)
    r = sub.add_parser("run", help="the loss curves (as `python -m lab.regenerate smollm2_long`)")
    r.add_argument("--windows", type=int, default=WINDOWS, help="stop after this many windows")
    args = ap.parse_args(argv)
    if args.command == "text":
        build_text(args.sources)
    elif args.command == "probe":
        probe(args.lengths)
    else:
        regenerate(args.windows)


if __name__ == "__main__":
    main()
