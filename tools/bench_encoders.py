"""Our encoders against the reference libraries, side by side in one run, at L = 1024.

    .venv/bin/pip install -r requirements-bench.txt     # once: the reference libraries
    python tools/bench_encoders.py --repeats 30

Pairs (ours / theirs, median wall time of `--repeats` calls after 3 warm-up calls, the two sides
alternating call by call, one thread — the app runs torch with one thread per process):
  * RoPE on q and k (1, 8, L, 64) float32: encoders.rope.apply_rotary vs rotary-embedding-torch's
    RotaryEmbedding.rotate_queries_or_keys, and vs transformers' LlamaRotaryEmbedding +
    apply_rotary_pos_emb (both half-split layout there; ours in both layouts);
  * T5 bucket ids for an L×L grid: encoders.t5.relative_position_bucket vs
    transformers' T5Attention._relative_position_bucket; and the whole (1, h, L, L) bias,
    encoders.t5.T5Bias.buckets + bias vs T5Attention.compute_bias with the same table;
  * ALiBi (h, L, L) causal bias: encoders.alibi.Alibi.bias vs x-transformers' AlibiPositionalBias,
    first call (it builds the bias) and steady state (it caches the bias in a buffer and returns a
    slice: a cache hit, not a computation).
Each pair is also checked for agreement, so a fast wrong answer cannot pass as a win.
Writes bench_results/encoders.json (git-ignored) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from encoders.alibi import Alibi  # noqa: E402
from encoders.rope import apply_rotary  # noqa: E402
from encoders.t5 import T5Bias, T5Config, relative_position_bucket  # noqa: E402

L, H, D = 1024, 8, 64


def rope_pairs(repeats: int) -> list[dict]:
    from rotary_embedding_torch import RotaryEmbedding
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, H, L, D, generator=g), torch.randn(1, H, L, D, generator=g)
    pos = torch.arange(L)
    ours_inter = lambda: (apply_rotary(q, pos), apply_rotary(k, pos))  # noqa: E731
    ours_half = lambda: (apply_rotary(q, pos, layout="half"), apply_rotary(k, pos, layout="half"))  # noqa: E731

    rot = RotaryEmbedding(dim=D)  # interleaved pairs, like the paper and our reference layout
    theirs_rot = lambda: (rot.rotate_queries_or_keys(q), rot.rotate_queries_or_keys(k))  # noqa: E731
    llama = LlamaRotaryEmbedding(
        LlamaConfig(
            hidden_size=H * D,
            num_attention_heads=H,
            max_position_embeddings=4096,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        )
    )
    pid = pos[None]

    def theirs_llama():
        cos, sin = llama(q, pid)
        return apply_rotary_pos_emb(q, k, cos, sin)

    agree_rot = max(float((a - b).abs().max()) for a, b in zip(ours_inter(), theirs_rot(), strict=False))
    agree_llama = max(float((a - b).abs().max()) for a, b in zip(ours_half(), theirs_llama(), strict=False))
    return [
        pair("RoPE q,k (interleaved)", "rotary-embedding-torch", ours_inter, theirs_rot, repeats, agree_rot),
        pair("RoPE q,k (half-split)", "transformers Llama rotary", ours_half, theirs_llama, repeats, agree_llama),
    ]


def t5_pairs(repeats: int) -> list[dict]:
    from transformers import T5Config as HFT5Config
    from transformers.models.t5.modeling_t5 import T5Attention

    rel = torch.arange(L)[None, :] - torch.arange(L)[:, None]  # (i, j)  key − query
    ours_b = lambda: relative_position_bucket(rel, bidirectional=True)  # noqa: E731
    theirs_b = lambda: T5Attention._relative_position_bucket(rel, bidirectional=True)  # noqa: E731
    agree_b = float((ours_b() - theirs_b()).abs().max())

    ours = T5Bias(H * D, H, T5Config(), torch.Generator().manual_seed(0))
    hf = T5Attention(
        HFT5Config(
            d_model=H * D,
            d_kv=D,
            num_heads=H,
            relative_attention_num_buckets=32,
            relative_attention_max_distance=128,
            is_decoder=False,
        ),
        has_relative_attention_bias=True,
    )
    with torch.no_grad():
        hf.relative_attention_bias.weight.copy_(ours.table)  # (N, h): the same numbers in both
    pos = torch.arange(L)

    def ours_bias():
        with torch.no_grad():
            return ours.bias(ours.buckets(pos, pos, causal=False))

    def theirs_bias():
        with torch.no_grad():
            return hf.compute_bias(L, L)

    agree_bias = float((ours_bias() - theirs_bias()).abs().max())
    return [
        pair("T5 bucket ids L×L", "transformers T5", ours_b, theirs_b, repeats, agree_b),
        pair("T5 bias (1,h,L,L)", "transformers T5", ours_bias, theirs_bias, repeats, agree_bias),
    ]


def alibi_pairs(repeats: int) -> list[dict]:
    from x_transformers.x_transformers import AlibiPositionalBias

    ours = Alibi(H * D, H)
    pos = torch.arange(L)
    ours_fn = lambda: ours.bias(pos, pos, causal=True)  # noqa: E731

    def theirs_cold():
        return AlibiPositionalBias(heads=H)(L, L)  # a fresh module: the bias is really computed

    warm = AlibiPositionalBias(heads=H)
    theirs_warm = lambda: warm(L, L)  # noqa: E731
    # x-transformers' bias is −m|i − j| everywhere; ours is −m(i − j): equal where the causal mask
    # lets a query see the key (j ≤ i), which is all that reaches the softmax.
    seen = torch.tril(torch.ones(L, L, dtype=torch.bool))
    agree = float((ours_fn()[:, seen].float() - theirs_cold()[:, seen]).abs().max())
    return [
        pair("ALiBi causal bias (h,L,L), first call", "x-transformers", ours_fn, theirs_cold, repeats, agree),
        pair("ALiBi causal bias, steady state", "x-transformers (cached buffer)", ours_fn, theirs_warm, repeats, agree),
    ]


def pair(what: str, theirs_name: str, ours, theirs, repeats: int, agree: float) -> dict:
    # Alternate the two, call by call: on a shared or throttled machine the speed drifts over
    # seconds, and timing one side after the other would charge the drift to one of them.
    for _ in range(3):
        ours(), theirs()
    t_o: list[float] = []
    t_t: list[float] = []
    for _ in range(repeats):
        for fn, times in ((ours, t_o), (theirs, t_t)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    t_ours, t_theirs = statistics.median(t_o), statistics.median(t_t)
    return {
        "what": what,
        "reference": theirs_name,
        "ours_ms": round(1e3 * t_ours, 3),
        "theirs_ms": round(1e3 * t_theirs, 3),
        "ratio": round(t_ours / t_theirs, 2),
        "max_abs_diff": agree,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--out", type=Path, default=ROOT / "bench_results" / "encoders.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = rope_pairs(args.repeats) + t5_pairs(args.repeats) + alibi_pairs(args.repeats)
    print(f"L = {L}, h = {H}, d = {D}, one thread, median of {args.repeats}")
    print(f"{'what':42} {'reference':32} {'ours ms':>9} {'theirs ms':>10} {'ratio':>6} {'max |diff|':>11}")
    for r in rows:
        print(
            f"{r['what']:42} {r['reference']:32} {r['ours_ms']:9.3f} {r['theirs_ms']:10.3f} "
            f"{r['ratio']:6.2f} {r['max_abs_diff']:11.2e}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"L": L, "heads": H, "d_head": D, "torch": torch.__version__, "rows": rows}, indent=2)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
