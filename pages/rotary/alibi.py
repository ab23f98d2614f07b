"""Chapter: ALiBi and NoPE — a linear distance penalty per head; no encoding at all under a causal mask."""

import numpy as np
import streamlit as st

from encoders import alibi as enc
from encoders import nope
from explain import figures as F
from explain.chapters import alibi as ch
from ui.classroom import URL, predict, secondary
from ui.common import header, inline_tokens, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation

KEY = "alibi"
header(
    KEY,
    enc.PAPER,
    sources=(enc.alibi_slopes, enc.alibi_bias, enc.alibi_bias_symmetric, enc.alibi_bias_code,
             enc.Alibi.logit_terms, nope.equal_logit_weights),
)
prose(KEY, "intro")

# Bounded caches: one entry of heads_view holds up to 16 × 256 × 256 × 3 float32 (~13 MB), and the
# cache is shared by every session of the server.
slopes_view = st.cache_data(ch.slopes_view)
heads_view = st.cache_data(max_entries=16)(ch.heads_view)
code_form_view = st.cache_data(max_entries=16)(ch.code_form_view)
extrapolation = st.cache_data(max_entries=16)(ch.extrapolation)
nope_symmetry = st.cache_data(max_entries=16)(ch.nope_symmetry)
counting = st.cache_data(max_entries=16)(ch.counting)

GRID = 64  # the every-head small multiples draw at most this many tokens
tokens = sentence_tokens()
text = st.session_state.sentence
n = len(tokens)

c1, c2 = st.columns([2, 1])
H = c1.slider("Heads H", 1, ch.MAX_HEADS, 8, key="alibi_heads", **URL,
              help=f"Number of attention heads, 1–{ch.MAX_HEADS}. Each head gets its own slope; "
                   "try a non-power of two such as 6 or 12.")
causal = c2.toggle("Causal mask", value=True, key="alibi_causal", **URL,
                   help="On: each token sees itself and the tokens before it (the paper's setting). "
                        "Off: every token sees every token, with the symmetric bias −m·|i − j|.")
sv = slopes_view(H)
head_names = [f"head {h + 1} · m = {sv.labels[h]}" for h in range(H)]
colors = F.head_colors(sv.slopes)
sign = enc.Alibi.relative_sign

# ------------------------------------------------------------------------------------- slopes
st.subheader("One slope per head")
steepest = int(np.argmax(sv.slopes)) + 1  # heads are numbered from 1 on this page
choices = list(range(1, H + 1)) if H <= 8 else sorted({1, 2, H // 2, H - 1, H})
predict(
    "alibi_q", f"ALiBi with H = {H} heads. Which head penalises distance **most** (the steepest slope m)?",
    choices, steepest,
    f"Head {steepest}, m = {sv.labels[steepest - 1]}: the slopes form the geometric sequence 2^(−8k/H) for "
    f"k = 1, 2, …, which falls with k: the first head is the steepest"
    + (f" (for H = {H}, not a power of two, the extra heads interleave between the others)." if H & (H - 1)
       else ", every later head gentler than the one before."),
    format_func=lambda h: f"head {h}",
)
prose(KEY, "slopes")
with secondary("Slope axis"):
    log_slopes = st.checkbox("Log scale", value=True, key="alibi_log_slopes", **URL,
                             help="On a log scale a geometric sequence is a straight staircase.")
plot(F.head_bars(sv.slopes, f"Slopes m for H = {H} heads, in head order", y_title="slope m",
                 colors=colors, text=list(sv.labels), log_y=log_slopes,
                 hover=[f"−log2 m = {e:.4g} · 1/m = {w:.4g}" for e, w in zip(sv.exponents, sv.windows)]),
     "slopes")
if H & (H - 1):
    c = 1 << (H.bit_length() - 1)
    st.info(
        f"H = {H} is not a power of two. The first {c} heads get the {c}-head slopes; the other "
        f"{H - c} take every other slope of the {2 * c}-head rule ({', '.join(sv.labels[c:])}). "
        "The list is not sorted, on purpose: a trained model's head k always uses the k-th slope."
    )

# --------------------------------------------------------------------------------------- bias
hv = heads_view(text, seed(), H, causal)
shown = min(n, GRID)
cut = f" — first {GRID} of {n} tokens" if n > GRID else ""
st.subheader("The bias: a penalty that grows with distance")
prose(KEY, "bias")
with st.expander("Proof: the bias depends only on i − j (checked by sympy)"):
    show_derivation("alibi-shift-invariance", key_prefix="alibi_proof", compact=True)
bias_form = "−m·(i − j), causal" if causal else "−m·|i − j|, no mask"
plot(F.token_heatmap_grid(hv.bias[:, :shown, :shown], hv.tokens[:shown],
                          f"ALiBi bias per head ({bias_form}; i − j = query − key){cut}",
                          panel_titles=head_names, value_label="bias", cols=4),
     "bias_grid")

# --------------------------------------------------------------------------------- attention
st.subheader("Attention on your sentence")
prose(KEY, "attention")
if st.session_state.get("alibi_head", 1) > H:
    st.session_state.alibi_head = H  # the head count shrank under the chosen head
head = st.selectbox("Head", list(range(1, H + 1)), key="alibi_head", **URL,
                    format_func=lambda h: head_names[h - 1],
                    help=f"Which of the {H} heads to draw large (1–{H}).")
plot(F.token_heatmap_grid(np.stack([hv.weights[head - 1], hv.weights_content_only[head - 1]]), hv.tokens,
                          f"Head {head}: the same layer with and without the bias", kind="weights",
                          panel_titles=[f"with ALiBi (m = {sv.labels[head - 1]})", "without the bias (content only)"],
                          value_label="weight", cols=2, panel_height=480),
     "att_pair")
plot(F.token_heatmap_grid(hv.weights[:, :shown, :shown], hv.tokens[:shown],
                          f"Attention weights, every head{cut}", panel_titles=head_names, kind="weights",
                          value_label="weight", cols=4),
     "att_grid")

# ---------------------------------------------------------------------------- +m·j in the code
st.subheader("The reference code adds +m·j instead")
prose(KEY, "code")
cf = code_form_view(text, seed(), H, head - 1)
plot(F.token_heatmap_grid(np.stack([cf.bias_paper, cf.bias_code]), cf.tokens,
                          f"Two biases for head {head} (m = {sv.labels[head - 1]})", value_label="bias",
                          panel_titles=["paper: −m·(i − j), causal mask", "code: +m·j, the same row for every query"],
                          cols=2, panel_height=480),
     "code_bias")
m1, m2 = st.columns(2)
m1.metric("Causal: largest weight difference, paper vs code", f"{cf.diff_causal:.1e}")
m2.metric("No mask: largest weight difference, −m·|i − j| vs +m·j", f"{cf.diff_bidirectional:.3f}")
prose(KEY, "code-unmasked")
plot(F.token_heatmap_grid(np.stack([cf.weights_symmetric_bidirectional, cf.weights_code_bidirectional]),
                          cf.tokens, f"No mask: attention of head {head} under the two biases", kind="weights",
                          panel_titles=["symmetric −m·|i − j|", "code form +m·j"], value_label="weight",
                          cols=2, panel_height=480),
     "code_weights")
st.markdown(
    f"Without the mask, head {head} puts on average **{cf.last_key_mass_code:.1%}** of each query's "
    f"attention on the *last* token with +m·j, against **{cf.last_key_mass_symmetric:.1%}** with "
    "−m·|i − j|."
)

# ------------------------------------------------------------------------ past the training length
st.subheader("Past the training length")
prose(KEY, "extrapolation")
e1, e2 = st.columns(2)
train_len = e1.slider("Training length", 4, 512, 32, key="alibi_train_len", **URL,
                      help="The longest text a model would have been trained on, 4–512 tokens. "
                           "It only marks which distances such a model has met: 0 … length − 1.")
test_len = e2.slider("Test length (your sentence repeated)", 8, ch.MAX_TEST_LEN, 512, step=8,
                     key="alibi_test_len", **URL,
                     help=f"Your sentence repeated to this many tokens, 8–{ch.MAX_TEST_LEN}; never "
                          "shorter than the training length.")
with secondary("Distance axis"):
    o1, o2 = st.columns(2)
log_x = o1.checkbox("Log distance axis", value=True, key="alibi_log_x", **URL,
                    help="Spreads out the short distances where the steep heads do all their work.")
scaled = o2.checkbox("Measure distance in units of 1/m", value=False, key="alibi_scaled", **URL,
                     help="Plots m·distance: with the bias alone every head then follows one curve.")
ex = extrapolation(text, seed(), H, train_len, test_len)
L = ex.distances.size
if L > test_len:
    st.caption(f"The test text is never shorter than the training length: using {L} tokens.")
st.markdown("**The text:** " + inline_tokens(ex.tokens[:24]) + (" …" if L > 24 else ""))
d_lin = ch.sample_distances(L, log=False)  # a few hundred points are enough to draw a curve
plot(F.head_lines(d_lin, ex.penalty[:, d_lin], f"Penalty against distance, out to {L - 1}", names=head_names,
                  colors=colors, x_title=f"distance {sign}", y_title="bias −m·(i − j)",
                  marks={"training length": train_len}),
     "penalty")
d = ch.sample_distances(L, log=log_x)
if scaled:
    xs = ex.slopes[:, None] * d[None, :]  # (h, points): each head in units of its own 1/m
    x_title, marks = "m · w (distance in units of 1/m)", {}
else:
    xs, x_title, marks = d, f"distance w = {sign}", {"training length": train_len}
plot(F.head_lines(xs, ex.within[:, d], f"Attention of the last token within distance w (text of {L} tokens)",
                  names=head_names, colors=colors, dashed_ys=ex.within_bias_only[:, d],
                  dashed_suffix=" · bias alone", marks=marks, x_title=x_title,
                  y_title="attention on keys with i − j ≤ w", log_x=log_x),
     "within")
st.dataframe(
    {
        "head": list(range(1, H + 1)),
        "slope m": list(sv.labels),
        "1/m": [round(float(w), 2) for w in sv.windows],
        "half of the attention within distance (this head)": [int(v) for v in ex.half_distance],
        "… (bias alone)": [int(v) for v in ex.half_distance_bias_only],
        f"attention beyond distance {train_len - 1} (never seen in training)": [
            f"{v:.1%}" for v in ex.beyond_train
        ],
    },
    hide_index=True,
    key="alibi_windows",
)
prose(KEY, "extrapolation-read")

# -------------------------------------------------------------------------------------- NoPE
st.header("NoPE: no positional encoding at all")
prose(KEY, "nope")
st.subheader("Without a mask, a bag of words; with it, not")
st.session_state.setdefault("nope_shuffles", 1)
b1, b2 = st.columns([1, 3])
if b1.button("🔀 Another shuffle", key="nope_shuffle", disabled=n < 2):
    st.session_state.nope_shuffles += 1
ns = nope_symmetry(text, seed(), st.session_state.nope_shuffles)
b2.markdown("**Shuffled:** " + inline_tokens(ns.tokens[k] for k in ns.order[:40]) + (" …" if n > 40 else ""))
n1, n2 = st.columns(2)
n1.metric("No mask: largest change after un-shuffling", f"{ns.diff_bidirectional:.1e}")
n2.metric("Causal mask: largest change after un-shuffling", f"{ns.diff_causal:.3f}")
plot(F.token_bars(ns.tokens, {"no mask": ns.per_token_bidirectional, "causal mask": ns.per_token_causal},
                  "How much each token's output changed when the sentence was shuffled (NoPE)",
                  x_title="token (original position)", y_title="max |Δ output|"),
     "nope_shuffle_bars")
prose(KEY, "nope-shuffle")

st.subheader("A causal mask can count")
prose(KEY, "counting")
count_n = st.slider("Length of “a a a …”", 2, ch.MAX_COUNT_LEN, 32, key="nope_count_n", **URL,
                    help=f"How many tokens the counting texts have, 2–{ch.MAX_COUNT_LEN}.")
cv = counting(count_n, seed())
g1, g2 = st.columns(2)
with g1:
    plot(F.lines(cv.positions, {"causal: “a a a …”, this NoPE layer": cv.same_word_causal,
                                "no mask: “a a a …”, this NoPE layer": cv.same_word_bidirectional,
                                "1/(i + 1)": cv.formula},
                 "Attention weight on the first token", x_title="query position i",
                 y_title="weight on key 0", dashed=("1/(i + 1)",)),
         "count_weights")
with g2:
    plot(F.lines(cv.positions, {"causal, all logits equal": cv.share_uniform_causal,
                                "causal, this head (content logits on)": cv.share_head_causal,
                                "no mask, all logits equal": cv.share_uniform_bidirectional,
                                "1/(i + 1)": cv.formula},
                 f"Share of {ch.BOS} in the output of “{ch.BOS} a a …”", x_title="query position i",
                 y_title=f"coefficient c_i of v({ch.BOS})", dashed=("1/(i + 1)",)),
         "count_share")
st.markdown(
    f"Reading the position back from the causal outputs as $1/c_i - 1$ gives every $i$ from 0 to "
    f"{count_n - 1} with a largest error of **{cv.max_recovery_error:.1e}**; without the mask every "
    f"token reads $c_i = 1/{count_n}$ and nothing can be recovered."
)
prose(KEY, "finding")
