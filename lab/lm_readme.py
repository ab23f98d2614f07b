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
    text += (
        "\nThe chapter's evidence (several seeds, a beginning-of-text byte, the same-bytes test, n-gram"
        " and compressor anchors, RoPE's fine-tunes) comes from the study in `study/`"
        " (`python -m lab.regenerate lm_study`, lab/lm_study.py); these models are the ones a learner's"
        " text runs through.\n"
    )
    (directory / "README.md").write_text(text)
