"""Chapter: T5 relative position bias — buckets of distances, one learned scalar per bucket per head."""

import numpy as np
import streamlit as st

from encoders import t5 as enc
from explain import figures as F
from explain.chapters import t5 as ch
from ui.classroom import URL, predict
from ui.common import header, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation

KEY = "t5"
SIGN = "j − i (key − query)"
BUCKETS_MIN, BUCKETS_MAX = 4, 128
DIST_MIN, DIST_MAX = 2, 1024

header(KEY, enc.PAPER, sources=(enc.relative_position_bucket, enc.bucket_layout, enc.T5Bias.buckets,
                                enc.T5Bias.bias, enc.T5Bias.logit_terms))
prose(KEY, "intro")

bucket_map = st.cache_data(ch.bucket_map)
t5_view = st.cache_data(ch.t5_view)
bias_by_distance = st.cache_data(ch.bias_by_distance)
tokens = sentence_tokens()
toks = list(tokens.tokens)
n = len(toks)

st.subheader("Buckets of distances")
prose(KEY, "buckets")
c1, c2, c3 = st.columns([2, 2, 1])
num_buckets = c1.slider("num_buckets N", BUCKETS_MIN, BUCKETS_MAX, 32, step=2, key="t5_buckets", **URL,
                        help=f"Size of the bias table per head; T5 uses 32 ({BUCKETS_MIN}–{BUCKETS_MAX}, even).")
max_distance = c2.slider("max_distance D", DIST_MIN, DIST_MAX, 128, key="t5_max_distance", **URL,
                         help=f"Distances from D on share the last bucket; T5 uses 128 ({DIST_MIN}–{DIST_MAX}). "
                              "It must exceed the number of exact buckets E.")
causal = c3.toggle("Causal (decoder)", key="t5_causal", **URL,
                   help="Off: the bidirectional encoder rule. On: the decoder rule, where future keys fall "
                        "into bucket 0 (and are masked).")
lowest = ch.smallest_valid_max_distance(num_buckets, causal)
if max_distance < lowest:
    st.warning(
        f"max_distance = {max_distance} is not larger than the exact region (E = {lowest - 1} for "
        f"N = {num_buckets}, {'causal' if causal else 'bidirectional'}): T5's log formula divides by "
        f"ln(D/E) ≤ 0 there and is undefined. This page uses max_distance = {lowest}, the smallest valid value."
    )
    max_distance = lowest

bm = bucket_map(num_buckets, max_distance, causal)

# The answer is the encoder's own bucket function (through the chapter's staircase), at r = ±40.
PROBE = 40
probe_r = -PROBE if causal else PROBE  # causal: the key 40 tokens *before* the query
probe = bucket_map(num_buckets, max_distance, causal, span=PROBE)
probe_bucket = int(probe.buckets[probe.distances == probe_r][0])
near_bucket = int(probe.buckets[probe.distances == probe_r // 2][0])
distractors = {probe_bucket, near_bucket, int(probe.buckets.max()), min(PROBE, num_buckets - 1)}
predict(
    "t5_q", f"With N = {num_buckets} buckets and max_distance D = {max_distance} "
    f"({'causal' if causal else 'bidirectional'}), which bucket does the key **{PROBE} tokens "
    f"{'before' if causal else 'after'}** the query fall in (r = j − i = {probe_r:+d})?",
    sorted(distractors), probe_bucket,
    f"Bucket **{probe_bucket}**, computed by T5's bucket function. The first {bm.exact} distances get a bucket "
    f"each; from there on buckets grow logarithmically until D = {max_distance}, and everything farther "
    f"shares the last one. Distance {abs(probe_r // 2)} lands in bucket {near_bucket}. Find r = {probe_r:+d} "
    "on the staircase below.",
    format_func=lambda b: f"bucket {b}",
)
prose(KEY, "staircase")
mode = "causal" if causal else "bidirectional"
reach = n - 1
band = (-reach - 0.5, 0.5 if causal else reach + 0.5)
close = int(min(bm.distances.max(), max(2 * bm.exact + 4, 12)))
near = np.abs(bm.distances) <= close
s1, s2 = st.columns(2)
with s1:
    plot(F.staircase(bm.distances[near], bm.buckets[near], bm.region[near],
                     f"Close up: |r| ≤ {close} (E = {bm.exact} exact buckets{'' if causal else ' per side'})",
                     regions=ch.REGIONS, x_title=f"relative distance r = {SIGN}", y_title="bucket id",
                     band=band if reach <= close else None, band_label="your sentence"), "t5_staircase_near")
with s2:
    plot(F.staircase(bm.distances, bm.buckets, bm.region,
                     f"Full range: N = {num_buckets}, D = {max_distance}, {mode}",
                     regions=ch.REGIONS, x_title=f"relative distance r = {SIGN}", y_title="bucket id",
                     band=band, band_label="your sentence"), "t5_staircase")

st.subheader("Bucket ids that are never used")
prose(KEY, "unused")
if bm.unused:
    by_reason: dict[str, list[int]] = {}
    for u in bm.unused:
        by_reason.setdefault(bm.unused_reasons[u], []).append(u)
    st.markdown(
        f"Scanning every distance with |r| ≤ {bm.scan_limit:,}: **{len(bm.unused)} of {num_buckets}** "
        f"bucket ids never occur."
    )
    for reason, ids in by_reason.items():
        shown = ", ".join(str(u) for u in ids[:40]) + (" …" if len(ids) > 40 else "")
        st.markdown(f"- **{shown}** — {reason}.")
else:
    st.markdown(f"Scanning every distance with |r| ≤ {bm.scan_limit:,}: every one of the {num_buckets} "
                "bucket ids occurs.")
with st.expander("Which distances share each bucket"):
    st.dataframe(
        {
            "bucket": [b for b, *_ in bm.ranges],
            f"distances r = {SIGN}": [
                (f"{lo} … {hi}" if lo != hi else f"{lo}") + (" (and beyond)" if abs(lo) >= max_distance or abs(hi) >= max_distance else "")
                for _, lo, hi, _ in bm.ranges
            ],
            "how many (in the scan)": [c for *_, c in bm.ranges],
        },
        hide_index=True,
    )

v = t5_view(tuple(toks), seed(), num_buckets, max_distance, causal)

st.subheader("The bucket matrix on your sentence")
prose(KEY, "matrix")
plot(F.token_heatmap(v.buckets, toks, toks, f"bucket({SIGN}) for every pair", kind="index",
                     zmin=0, zmax=num_buckets - 1, value_label="bucket"), "t5_bucket_matrix")
used = v.used_in_sentence
st.markdown(
    f"Your {n} tokens reach distances up to {max(n - 1, 0)} and use **{len(used)} of {num_buckets}** buckets"
    + (" (masked future pairs not counted)" if causal else "") + "."
)

st.subheader("One learned scalar per bucket per head")
prose(KEY, "table")
H = v.table.shape[1]
span = int(min(bm.distances.max(), max(n + 8, 2 * bm.exact + 8)))
r, by_r = bias_by_distance(v.table, num_buckets, max_distance, causal, span)
labels = [f"{b} (never used)" if b in bm.unused else str(b) for b in range(num_buckets)]
t1, t2 = st.columns([1, 2])
with t1:
    plot(F.matrix_heatmap(v.table, f"β: {num_buckets} buckets × {H} heads", x_title="head", y_title="bucket id",
                          y=labels, value_label="β", height=int(min(720, max(380, 120 + 12 * num_buckets)))),
         "t5_table")
with t2:
    plot(F.step_lines(r, {f"head {h}": by_r[h] for h in range(H)}, "Each head's bias against distance",
                      x_title=f"relative distance r = {SIGN}", y_title="β_h[bucket(r)]", height=400), "t5_bias_lines")

st.subheader("Per-head bias maps")
prose(KEY, "heads")
panel_h = 320 if n <= 24 else 430
plot(F.token_heatmap_grid(v.position, toks, "β_h[bucket(j − i)] for every head (one colour scale)",
                          panel_titles=[f"head {h}" for h in range(H)], value_label="bias", cols=2,
                          zmax=float(np.abs(v.table).max()) or 1.0, panel_height=panel_h), "t5_bias_heads")

st.subheader("Content and position in the logits")
prose(KEY, "logits")
head = st.columns([1, 3])[0].selectbox("Head", list(range(H)), key="t5_head", **URL,
                                      help=f"One of the {H} heads (0–{H - 1}).")
plot(F.token_heatmap_grid(np.stack([v.content[head], v.position[head]]), toks,
                          f"The two terms of the logit, head {head} (one colour scale)",
                          panel_titles=["content  q·k (unscaled)", "position  β[bucket(j − i)]"],
                          value_label="logit term", cols=2, panel_height=panel_h), "t5_terms")
pair = np.stack([v.weights_content_only[head], v.weights[head]])
plot(F.token_heatmap_grid(pair, toks, f"Attention weights, head {head}", kind="weights", zmax=float(np.nanmax(pair)),
                          panel_titles=["bias off", "content + bias"], value_label="weight", cols=2,
                          panel_height=panel_h), "t5_attention")
if causal:
    st.caption("Causal mode: future keys get weight 0 from the mask. Their bias (the position panel above) is "
               "bucket 0's number, the same as the query's own r = 0 — harmless, because the mask removes them.")

st.subheader("Shift the whole sentence")
prose(KEY, "shift")
m1, m2 = st.columns(2)
m1.metric(f"Largest change of the bias term, positions +{ch.SHIFT}", f"{v.shift_position_change:.1e}")
m2.metric(f"Largest change of the layer's output, positions +{ch.SHIFT}", f"{v.shift_output_change:.1e}")
prose(KEY, "derivation")
with st.expander("Proof: the bias depends only on j − i (checked by sympy)"):
    show_derivation("t5-shift-invariance", key_prefix="t5_proof", compact=True)
