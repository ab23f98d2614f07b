"""assets/lm/README.md, written from index.json by lab.lm.write_index: how the files were made and
what they cost. A file of its own so that lab/lm.py stays the models and their evaluation."""

from __future__ import annotations

from pathlib import Path


def write_readme(ix: dict, directory: Path) -> None:
    """assets/lm/README.md: how the files were made and what they cost, from index.json."""
    s, c = ix["settings"], ix["corpus"]
    lengths = ix["eval_lengths"]

    def cell(entry: dict | None) -> str:
        return "no row" if entry is None else f"{entry['bpb']:.3f}"

    rows = [
        f"| {enc} | {m['parameters']:,} | {m['train_cpu_seconds']:.0f} | {m['curve'][-1]['heldout_bpb']:.3f} | "
        + " | ".join(cell(m["bpb"][str(n)]) for n in lengths)
        + " |"
        for enc, m in ix["models"].items()
    ]
    rows += [
        f"| {name} (at inference) | – | – | – | " + " | ".join(cell(v["bpb"][str(n)]) for n in lengths) + " |"
        for name, v in ix["stretches"].items()
        if name != "of"
    ]
    cpu = sum(m["train_cpu_seconds"] for m in ix["models"].values())
    text = (
        f"""# assets/lm — tiny byte-level language models, one per positional encoding

Made by one command (from the repository root):

    python -m lab.regenerate lm        # or: python -m lab.lm (same thing; --help for parts)

Corpus (lab/corpus.py): {c["source"]}, Python {c["python"]}; train {c["train"]["files"]} files,
{c["train"]["bytes"]:,} bytes (sha256 {c["train"]["sha256"][:16]}…); held-out {c["heldout"]["files"]} files,
{c["heldout"]["bytes"]:,} bytes (sha256 {c["heldout"]["sha256"][:16]}…). Shipped xz-compressed with corpus.json.

Every model (lab/lm.py, LMConfig): {s["n_layers"]} layers, d = {s["d_model"]}, {s["n_heads"]} heads,
{s["steps"]} steps of {s["batch_size"]} × {s["length"]} bytes, AdamW lr {s["lr"]} (warm-up {s["warmup"]},
cosine to lr/10), seed {s["seed"]}, the same training windows in the same order; only the positional
encoding differs. One torch thread; CPU time is the training thread's own
({cpu / 60:.1f} min for all {len(ix["models"])} models); the length curves took
{ix["eval_seconds"]:.0f} s of wall time. Weights are float16 safetensors; `<encoding>.json` holds each
model's settings and training curve; `index.json` the length curves (bits per byte over the first
{ix["eval_bytes"]:,} held-out bytes, non-overlapping windows, every window's value).

| model | parameters | CPU s | held-out bits/byte at the end of training | """
        + " | ".join(f"bits/byte at {n}" for n in lengths)
        + " |\n|"
        + "---|" * (4 + len(lengths))
        + "\n"
        + "\n".join(rows)
        + "\n"
    )
    text += evidence_section(directory, lengths)
    (directory / "README.md").write_text(text)


def evidence_section(directory: Path, lengths: list[int]) -> str:
    """The same-bytes differences and the anchors of evidence.json (lab/lm_eval.py), if it exists."""
    import json

    import numpy as np

    path = directory / "evidence.json"
    if not path.exists():
        return ""
    ev = json.loads(path.read_text())
    long = [n for n in lengths if n > ev["train_length"]]
    rows = []
    for name, m in ev.get("models", {}).items():
        cells = []
        for n in long:
            e = m["lengths"].get(str(n))
            cells.append(f"{np.mean(e['past']):+.4f}" if e and e["past"] else "–")
        rows.append(f"| {name} | {m['capped_bpb']:.3f} | " + " | ".join(cells) + f" | {m['seconds']['total']:.0f} |")
    a = ev.get("anchors", {})
    ngram = ", ".join(f"order {k}: {v['bpb']:.3f}" for k, v in a.get("ngram", {}).items())
    comp = ", ".join(f"{k} {v:.3f}" for k, v in a.get("compressors", {}).items())
    return (
        f"""
## evidence.json — `python -m lab.regenerate lm_eval` (lab/lm_eval.py, lab/ngram.py)

The bytes predicted from the first {ev["eval_bytes"]:,} held-out bytes. Sliding: every byte with at most
{ev["train_length"]} bytes of context (a window of {ev["train_length"]} ending every {ev.get("capped_stride", 1)}
bytes).
Same bytes: long window minus sliding, over the bytes at window positions ≥ {ev["train_length"]}, mean of the
per-window means (negative: context past {ev["train_length"]} bytes helps). Seconds: wall time of each
model's evaluation on a shared machine.

| model | sliding bits/byte | """
        + " | ".join(f"same bytes {n} − {ev['train_length']}" for n in long)
        + " | s |\n|"
        + "---|" * (3 + len(long))
        + "\n"
        + "\n".join(rows)
        + f"""

Anchors on the same bytes: byte n-grams (interpolated modified Kneser-Ney, train split, context cut at
{ev["train_length"]}-byte window starts) {ngram}; compressors given the train text: {comp}
({a.get("seconds", 0):.0f} s).
"""
    )
