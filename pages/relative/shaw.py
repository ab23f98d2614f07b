"""Chapter: Shaw et al. 2018 — relative position representations (clipped distances, aᴷ and aⱽ)."""

import numpy as np
import streamlit as st

from encoders import shaw as enc
from explain import figures as F
from explain.chapters import shaw as ch
from ui.classroom import URL, predict
from ui.common import header, plot, prose, seed, sentence_tokens

KEY = "shaw"
K_MAX = 64
SIGN = "j − i (key − query)"

header(KEY, enc.PAPER, sources=(enc.clipped_relative_index, enc.relative_position_index, enc.position_logits,
                                enc.value_position_term, enc.ShawRelative.logit_terms))
prose(KEY, "intro")

shaw_view = st.cache_data(ch.shaw_view)
tokens = sentence_tokens()
toks = list(tokens.tokens)
n = len(toks)

c1, c2 = st.columns([2, 1])
k = c1.slider("Clipping distance k", 1, K_MAX, 4, key="shaw_k", **URL,
              help=f"Pairs farther apart than k share the vector of ±k (1–{K_MAX}). 2k+1 rows per table.")
head = c2.selectbox("Head", list(range(ch.N_HEADS)), key="shaw_head", **URL,
                    help=f"The layer has {ch.N_HEADS} heads of size {ch.D_MODEL // ch.N_HEADS}; "
                         "the aᴷ/aⱽ tables are shared by all of them.")
v = shaw_view(tuple(toks), seed(), k)
share = ch.clipped_share(n, k)

st.subheader("Which vector each pair reads")
prose(KEY, "index")
rows_used = int(np.unique(v.clipped).size)  # counted on the very map drawn below
if n > 1:
    predict(
        "shaw_q", f"Your sentence has {n} tokens and the clipping distance is k = {k}. How many different "
        "rows of the aᴷ table do all its pairs read together?",
        sorted({rows_used, n, 2 * k + 1, 2 * n - 1, n * n}), rows_used,
        f"**{rows_used}**: the distances j − i run from −{n - 1} to +{n - 1} ({2 * n - 1} values), and clipping "
        f"at ±{k} leaves {2 * k + 1} possible rows — whichever is fewer.", format_func=lambda r: f"{r:,}",
    )
plot(F.token_heatmap_marked(v.clipped, toks, toks,
                            f"clip(j − i, k) with k = {k} — grey: |j − i| > k, clipped",
                            mark=v.is_clipped, kind="signed", zmax=float(k), row_title="query i",
                            col_title="key j", value_label="clipped j − i"), "shaw_index")
st.markdown(
    f"{n} tokens → {n * n:,} pairs; **{share:.0%}** of them are clipped and share one of only two "
    f"vectors (±{k}). The other {n * n - int(v.is_clipped.sum()):,} pairs use the remaining {2 * k - 1} rows."
)

st.subheader("The tables aᴷ and aⱽ")
prose(KEY, "tables")
labels = ch.distance_labels(k)
t1, t2 = st.columns(2)
table_h = int(min(640, max(320, 120 + 18 * (2 * k + 1))))
with t1:
    plot(F.matrix_heatmap(v.a_k, f"wᴷ: {2 * k + 1} key vectors (d_z = {v.a_k.shape[1]})",
                          x_title="channel of the head", y_title=f"clipped {SIGN}", y=labels,
                          value_label="wᴷ", height=table_h), "shaw_ak")
with t2:
    plot(F.matrix_heatmap(v.a_v, f"wⱽ: {2 * k + 1} value vectors (d_z = {v.a_v.shape[1]})",
                          x_title="channel of the head", y_title=f"clipped {SIGN}", y=labels,
                          value_label="wⱽ", height=table_h), "shaw_av")

st.subheader("Two terms in every logit")
prose(KEY, "logits")
panel_h = 320 if n <= 24 else 430
plot(F.token_heatmap_grid(np.stack([v.content[head], v.position[head]]), toks,
                          f"The two terms of the logit, head {head} (one colour scale)",
                          panel_titles=["content  q·k/√d", "position  q·aᴷ/√d"], value_label="logit term",
                          cols=2, panel_height=panel_h), "shaw_terms")

st.subheader("Attention with and without the position term")
prose(KEY, "attention")
pair = np.stack([v.weights_content_only[head], v.weights[head]])
plot(F.token_heatmap_grid(pair, toks, f"Attention weights, head {head}", kind="weights",
                          zmax=float(pair.max()), panel_titles=["position term off", "content + position"],
                          value_label="weight", cols=2, panel_height=panel_h), "shaw_attention")
if n > 24:
    st.caption(f"The colour scale tops out at the largest weight, {pair.max():.3f}: with {n} keys, "
               "no weight comes near 1.")

st.subheader("The value side: aⱽ")
prose(KEY, "value")
b1, b2 = st.columns(2)
with b1:
    plot(F.token_heatmap(v.mass_per_distance[head], toks, labels,
                         f"Attention mass per clipped distance (head {head})", kind="weights",
                         row_title="query i", col_title=f"clipped {SIGN}", value_label="mass"), "shaw_mass")
with b2:
    sizes = {"‖Σⱼ αᵢⱼ vⱼ‖ (content)": np.linalg.norm(v.value_content[head], axis=-1),
             "‖Σⱼ αᵢⱼ aⱽᵢⱼ‖ (position)": np.linalg.norm(v.value_position[head], axis=-1)}
    size_title = f"Size of the two parts of each output (head {head})"
    if n <= 40:
        plot(F.token_bars(toks, sizes, size_title, x_title="query i", y_title="vector length"), "shaw_value_norms")
    else:  # hundreds of grouped bars are unreadable: one line per part over the query position
        plot(F.lines(np.arange(n), sizes, size_title, x_title="query position i", y_title="vector length"),
             "shaw_value_norms")
plot(F.token_heatmap(v.value_position[head], toks, None,
                     f"Σⱼ αᵢⱼ aⱽᵢⱼ: what the value-side vectors add to each output (head {head})",
                     row_title="query i", col_title="channel of the head", value_label="aⱽ part",
                     show_values=False, height=int(min(720, max(340, 110 + 18 * n)))), "shaw_value_term")

st.subheader("Shift the whole sentence")
prose(KEY, "shift")
m1, m2 = st.columns(2)
m1.metric(f"Largest change of the position term, positions +{ch.SHIFT}", f"{v.shift_position_change:.1e}")
m2.metric(f"Largest change of the layer's output, positions +{ch.SHIFT}", f"{v.shift_output_change:.1e}")

st.subheader("What it costs")
prose(KEY, "cost")
