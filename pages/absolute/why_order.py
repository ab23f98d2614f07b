"""Chapter: Why order matters — attention without positions is permutation-equivariant."""

import numpy as np
import streamlit as st

from encoders import attention
from explain import figures as F
from explain.chapters import why_order as ch
from ui.classroom import URL, predict
from ui.common import header, inline_tokens, plot, prose, seed, sentence_tokens

KEY = "why-order"
header(KEY, sources=(attention.attend, attention.SelfAttention.forward))
prose(KEY, "intro")

experiment = st.cache_data(ch.permutation_experiment)
tokens = sentence_tokens()
toks = tokens.tokens
n = len(toks)

st.subheader("Shuffle the words")
st.session_state.setdefault("shuffles", 1)  # open on a shuffled copy: the point is visible at once
if n >= 2:
    # The answer is measured: the same experiment as below, without positions, on a shuffled copy.
    probe = experiment(toks, seed(), "none", ch.shuffle_order(n, seed(), max(1, st.session_state.shuffles)))
    options = ("exactly the same vectors, only in another order", "slightly different vectors",
               "completely different vectors")
    answer = options[0] if probe.max_abs_diff < 1e-9 else options[1] if probe.max_abs_diff < 0.1 else options[2]
    predict(
        "why_order_q", "Shuffle your sentence and run one attention layer **without** positional encoding. "
        "Put the outputs back in the original order. Compared with the unshuffled run, they are…",
        options, answer,
        f"Measured on your sentence: the largest difference is **{probe.max_abs_diff:.1e}**. Attention "
        "scores every pair of words by content alone and sums over all of them, so a permutation of the "
        "input permutes the output and changes nothing else.",
    )
prose(KEY, "shuffle")
b1, b2, b3 = st.columns([1, 1, 2])
if b1.button("Shuffle again", key="shuffle", icon=":material/shuffle:", disabled=n < 2):
    st.session_state.shuffles += 1
if b2.button("Original order", key="unshuffle", icon=":material/undo:"):
    st.session_state.shuffles = 0
with_pe = b3.toggle("Add sinusoidal positional encoding", key="with_pe", **URL,
                    help="Off: no positional encoding (NoPE). On: the paper's sinusoidal vectors are added.")
if n < 2:
    st.info("A single token has nothing to be reordered with: type at least two tokens to shuffle.")

order = ch.shuffle_order(n, seed(), st.session_state.shuffles)
method = "sinusoidal" if with_pe else "none"
r = experiment(toks, seed(), method, order)

st.markdown("**Original:** " + inline_tokens(toks))
st.markdown("**Shuffled:** " + inline_tokens(toks[k] for k in order))

m1, m2 = st.columns(2)
m1.metric("Largest difference after un-shuffling", f"{r.max_abs_diff:.6f}")
m2.metric("Positional encoding", "sinusoidal" if with_pe else "none")
if not with_pe:
    exact = "exactly 0" if r.max_abs_diff == 0 else f"{r.max_abs_diff:.1e}, floating-point rounding in float64"
    if r.max_abs_diff < 1e-9:
        st.success(f"Without positions the outputs are the same vectors, merely reordered ({exact}).")
    else:  # cannot happen unless the attention path is broken; say so rather than hide it
        st.error(f"The outputs differ by {r.max_abs_diff:.3g}: attention without positions should not.")
else:
    st.warning("With positions, the same word in a new place computes something else: order now matters.")

show = min(64, r.original.output.shape[1])
o1, o2, o3 = st.columns(3)
with o1:
    plot(F.token_heatmap(r.original.output[:, :show], toks, None,
                         "Outputs, original order", row_title="token", col_title="output channel",
                         value_label="output", show_values=False), "out_original")
with o2:
    plot(F.token_heatmap(r.unshuffled_output[:, :show], toks, None,
                         "Outputs of the shuffled run, put back", row_title="token", col_title="output channel",
                         value_label="output", show_values=False), "out_back")
with o3:
    plot(F.token_heatmap(r.original.output[:, :show] - r.unshuffled_output[:, :show], toks,
                         None, "Difference", row_title="token",
                         col_title="output channel", value_label="difference", zmax=1.0, show_values=False),
         "out_diff")

shuffled_toks = [toks[k] for k in order]
w1, w2 = st.columns(2)
with w1:
    plot(F.token_heatmap(r.original.weights[0], toks, toks, "Attention weights, original order",
                         kind="weights", value_label="weight"), "att_original")
with w2:
    plot(F.token_heatmap(r.shuffled.weights[0], shuffled_toks, shuffled_toks, "Attention weights, shuffled",
                         kind="weights", value_label="weight"), "att_shuffled")

st.subheader("Repeated words")
prose(KEY, "repeats")
if r.repeats:
    st.table(
        {
            "word": [rep.word for rep in r.repeats],
            "positions": [", ".join(map(str, rep.positions)) for rep in r.repeats],
            "largest difference between their outputs": [f"{rep.max_abs_diff:.6f}" for rep in r.repeats],
        }
    )
else:
    st.info('Your sentence repeats no word. Try the default sentence: "the" and "sat" appear twice.')

prose(KEY, "with-pe")
with st.expander("Why not a causal mask here?"):
    prose(KEY, "causal")
