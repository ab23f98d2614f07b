"""Chapter: DeBERTa — disentangled attention (c2c, c2p, p2c) and log buckets."""

import numpy as np
import streamlit as st

from encoders import deberta as enc
from explain import figures as F
from explain.chapters import deberta as ch
from ui.classroom import URL, predict
from ui.common import header, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation

KEY = "deberta"
SIGN = "i − j (query − key)"
N_HEADS = 4
header(KEY, enc.PAPER, sources=(enc.log_bucket_position, enc.DeBERTa.relative_positions, enc.DeBERTa.table_index,
                                 enc.DeBERTa.logit_terms))
prose(KEY, "intro")
prose(KEY, "equation")
with st.expander("Derivation: the three terms from the same expansion (checked by sympy)"):
    show_derivation("deberta-three-terms", key_prefix="deberta_proof", compact=True)

term_maps = st.cache_data(ch.term_maps)
bucket_map = st.cache_data(ch.bucket_map)
sentence_buckets = st.cache_data(ch.sentence_buckets)


def token_map(z, toks, title, kind, value_label, key):
    plot(F.token_map(z, toks, title, kind=kind, value_label=value_label), key)


st.subheader("Log buckets: distance → bucket")
prose(KEY, "buckets")
b1, b2, b3 = st.columns([1, 2, 2])
log_buckets = b1.toggle("Log buckets", value=True, key="deb_log", **URL,
                        help="On: DeBERTa-v2/v3 buckets. Off: plain distances, clamped at ±max_position (v1).")
bucket_size = b2.slider("Bucket size B", 4, 256, 16, step=4, key="deb_bucket_size", **URL, disabled=not log_buckets,
                        help="position_buckets (4–256, a multiple of 4; v3 uses 256). The table has 2B rows.")
max_position = b3.slider("Max position M", 8, 1024, 128, step=8, key="deb_max_position", **URL,
                         help="max_relative_positions (8–1024; v3 uses 512). With buckets, distance M − 1 "
                              "reaches bucket ±(B − 1); without, distances clamp at ±M.")
if log_buckets and max_position - 1 <= bucket_size // 2:
    fixed = bucket_size // 2 + 2
    st.warning(f"With B = {bucket_size} the log part needs M > B/2 + 1 = {bucket_size // 2 + 1} (it divides by "
               f"ln((M − 1)/(B/2))). Using M = {fixed}.")
    max_position = fixed

if log_buckets:
    # The answer is read from the encoder's own log buckets and the table lookup's clamp.
    pr = bucket_map(bucket_size, max_position, span=61)
    rows = {int(r): int(row) for r, row in zip(pr.distances, pr.table_row)}
    same = rows[60] == rows[61]
    options = ("the same row", "two different rows")
    predict(
        "deb_q", f"With bucket size B = {bucket_size} and max position M = {max_position}: do the distances "
        "i − j = 60 and i − j = 61 read the same row of the position table?", options, options[0 if same else 1],
        f"Distance 60 reads row {rows[60]}, distance 61 row {rows[61]}. Up to |i − j| = B/2 = {bucket_size // 2} "
        "every distance has its own bucket; beyond, buckets widen logarithmically, so far-apart neighbours "
        "share one" + (" — and 60 and 61 are far enough." if same else ", but not yet at 60."),
    )
    bm = bucket_map(bucket_size, max_position)
    fig = F.staircase(bm.distances, bm.bucket, bm.region, "Bucket of each distance",
                      regions=[f"exact: |r| ≤ B/2 = {bm.exact_until}", "log-spaced, shared buckets",
                               f"past M − 1 = {max_position - 1}: clamped by the lookup"],
                      x_title=f"r = {SIGN}", y_title="bucket")
    fig.update_yaxes(rangemode="normal")
    fig = F.mark_lines(fig, y={f"bucket {bucket_size - 1}: M − 1 and beyond share the last row": bucket_size - 1})
    plot(fig, "deb_bucket_map")
    st.markdown(
        f"The {bm.n_within} distances −{max_position - 1} … {max_position - 1} share **{bm.rows_within}** "
        f"table rows; the table has {2 * bucket_size}."
    )
    if max_position < bucket_size:
        st.caption(f"With M < B the log part *stretches* instead of compressing: distance {max_position - 1} "
                   f"lands in bucket {bucket_size - 1}, and some buckets are never used.")
    with st.expander("Past M − 1: the two sides are clamped differently"):
        prose(KEY, "clamp")
else:
    st.info(f"Without buckets, each distance from −{max_position} to {max_position - 1} has its own row "
            f"({2 * max_position} rows); farther distances share the edge rows.")

st.subheader("Your sentence in buckets")
prose(KEY, "sentence")
tokens = sentence_tokens()  # stops here, with a note, when there is no text: the map above needs none
toks = list(tokens.tokens)
n = len(toks)
sb = sentence_buckets(n, log_buckets, bucket_size, max_position)
token_map((sb.table_row - sb.att_span).astype(float), toks,
          ("Bucket of i − j (query − key), as the table lookup clamps it" if log_buckets else
           "i − j (query − key), no buckets, as the table lookup clamps it"), "signed", "bucket", "deb_buckets")

st.subheader("The three terms")
prose(KEY, "terms")
c1, c2, c3, c4 = st.columns(4)
head = c1.selectbox("Head", list(range(N_HEADS)), key="deb_head", **URL, format_func=lambda h: f"head {h + 1}",
                    help=f"One of the layer's {N_HEADS} heads.")
switches = tuple(
    c.toggle(t, value=True, key=f"deb_on_{t}", help=ch.TERM_TITLES[t], **URL) for c, t in zip((c2, c3, c4), ch.TERMS)
)
m = term_maps(st.session_state.sentence, seed(), head, log_buckets, bucket_size, max_position, switches,
              n_heads=N_HEADS)
panel_titles = [ch.TERM_TITLES[t] + ("" if on else "  — switched off") for t, on in zip(ch.TERMS, switches)]
plot(F.token_heatmap_grid(np.stack([m.terms[t] for t in ch.TERMS]), toks,
                          f"Head {head + 1}: c2c, c2p, p2c (÷√(3d)), one shared colour scale",
                          panel_titles=panel_titles, value_label="term ÷ √(3d)", cols=3,
                          panel_height=320 if n <= 40 else 420), "deb_terms")
if not any(switches):
    st.info("Every term is off: all logits are 0, so each query spreads its attention evenly.")
s1, s2 = st.columns(2)
with s1:
    on = [t for t, o in zip(ch.TERMS, switches) if o]
    token_map(m.total, toks, "Logits: " + (" + ".join(on) if on else "nothing") + " (÷√(3d))", "signed", "logit",
              "deb_sum")
with s2:
    token_map(m.weights, toks, "Attention weights (softmax over keys j)", "weights", "weight", "deb_weights")

prose(KEY, "p2c")
prose(KEY, "projections")
