"""Chapter: RoPE — rotary position embedding (Su et al. 2021)."""

import numpy as np
import streamlit as st

from encoders import rope as enc
from explain import figures as F
from explain.chapters import common, rope as ch
from ui import classroom
from ui.classroom import URL, predict, secondary
from ui.common import header, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation

KEY = "rope"
header(KEY, enc.PAPER, sources=(enc.rope_frequencies, enc.apply_rotary, enc.RoPE.logit_terms))
prose(KEY, "intro")

circles = st.cache_data(ch.circles, max_entries=64)
relative_identity = st.cache_data(ch.relative_identity, max_entries=64)
decay_curves = st.cache_data(ch.decay_curves, max_entries=32)
layouts = st.cache_data(ch.layouts, max_entries=32)
run_tokens = st.cache_data(common.run_tokens, max_entries=32)

BASES = [10, 100, 1_000, 10_000, 100_000, 1_000_000]
MAX_POS = 200  # positions the sliders reach; the animation adds up to FRAMES − 1 more
FRAMES = 41

tokens = sentence_tokens()
toks = tokens.tokens
n_tok = len(toks)


def word_label(i: int) -> str:
    return f"{i} · {toks[i]}"


# -- 1. rotation circles -----------------------------------------------------------------------
st.subheader("Rotation circles")
prose(KEY, "circles")
w1, w2, w3, w4 = st.columns([3, 3, 2, 2])
qi = w1.selectbox("Query word", range(n_tok), index=min(1, n_tok - 1), format_func=word_label, key="rope_q_word", **URL,
                  help="Its query vector (one head of the toy layer) is drawn in blue.")
ki = w2.selectbox("Key word", range(n_tok), index=min(5, n_tok - 1), format_func=word_label, key="rope_k_word", **URL,
                  help="Its key vector is drawn in vermillion.")
d = w3.select_slider("Head size d", list(range(2, 33, 2)), value=16, key="rope_d", **URL,
                     help="Even, 2–32: one circle per pair, d/2 circles.")
base = w4.select_slider("Base", BASES, value=10_000, key="rope_base", **URL,
                        help="θ_f = base^(−2f/d). The paper uses 10,000; a larger base slows every pair.")
p1, p2, p3 = st.columns([2, 2, 3])
m = p1.slider("Query position m", 0, MAX_POS, 2, key="rope_m", **URL, help=f"0–{MAX_POS}; the word's position is yours to choose.")
n = p2.slider("Key position n", 0, MAX_POS, 6, key="rope_n", **URL, help=f"0–{MAX_POS}.")
with p3, secondary("Animation"):
    move = st.radio("▶ Play moves", ["both words (n − m stays)", "the query only"], horizontal=True,
                    key="rope_move", **URL,
                    help=f"The animation steps through {FRAMES} frames from the positions set here.")

c = circles(toks, seed(), d, float(base), qi, ki, m, n, FRAMES, "both" if move.startswith("both") else "query")
notes = np.array([[f"∠ {a:+.0f}°   adds {s:+.2f}".replace("-", "−") for a, s in zip(ang, con)]
                  for ang, con in zip(c.angle, c.contribution)])
panel_titles = [f"pair {f} · λ = {lam:,.1f}" if lam < 100 else f"pair {f} · λ = {lam:,.0f}"
                for f, lam in enumerate(c.wavelength)]
frame_titles = [f"·  m = {a}, n = {b}, n − m = {b - a}  ·  logit q′·k′/√d = {s:+.3f}".replace("-", "−")
                for a, b, s in zip(c.m, c.n, c.score)]
plot(F.rotation_circles(c.q_xy, c.k_xy, "Rotation circles: pair f of q turns by m·θ_f, of k by n·θ_f",
                        panel_titles=panel_titles, notes=notes, frame_titles=frame_titles,
                        frame_labels=[str(t) for t in range(FRAMES)], slider_prefix="steps played: ",
                        q_name=f"query “{toks[qi]}”", k_name=f"key “{toks[ki]}”", cols=4), "rope_circles")
st.caption("λ = 2π/θ_f: how many positions pair f needs for one full turn. Each circle is scaled so its "
           "longer arrow touches the rim; hover an arrow tip for the true numbers.")
gap = float(np.abs((c.angle - c.predicted_angle + 180) % 360 - 180).max())
st.markdown(
    f"Measured angle between the arrows vs. (angle at $m = n = 0$) $+ (n - m)\\,\\theta_f$, over all "
    f"{d // 2} pairs and {FRAMES} frames: largest gap **{gap:.1e}°**. The angle depends on $n - m$ only."
)

# -- 2. the relative identity, in numbers -------------------------------------------------------
st.subheader("Only the distance counts: the logit map is constant along diagonals")
prose(KEY, "identity")
with st.expander("Proof in 2-D: (R(mθ)q)ᵀ(R(nθ)k) = qᵀR((n−m)θ)k (checked by sympy)"):
    show_derivation("rope-matrix-2d", key_prefix="rope_proof2d", compact=True)
with st.expander("Proof in d dimensions, block by block (checked by sympy)"):
    show_derivation("rope-relative-block", key_prefix="rope_proofd", compact=True)
with st.expander("The same in complex form, via Euler's formula (checked by sympy)"):
    show_derivation("rope-complex-2d", key_prefix="rope_proofc", compact=True)
r1, r2 = st.columns(2)
size = r1.slider("Positions N", 4, 64, 24, key="rope_size", **URL, help="The map is N × N (4–64).")
# Integer number inputs are mirrored by hand: Streamlit's own binding crashes on ?rope_shift=inf.
classroom.url_default("rope_shift", "rope_shift", 1000, classroom.int_in(-1_000_000, 1_000_000))
shift = r2.number_input("Move every position by c", -1_000_000, 1_000_000, 1000, step=100, key="rope_shift",
                        help="Any integer from −1,000,000 to 1,000,000: RoPE takes any position.")
classroom.url_mirror("rope_shift", shift, 1000)
ri = relative_identity(toks, seed(), d, float(base), qi, ki, size, int(shift))
_options = ("no, not at all", "yes, a little", "yes, a lot")
predict(
    "rope_q", f"Rotate q and k by the **same extra angle**: move the query and the key both by c = {int(shift):,} "
    "positions. Does their score q′·k′ change?", _options,
    _options[0] if ri.max_change < 1e-6 else _options[1] if ri.max_change < 0.1 else _options[2],
    f"Measured on the map below: the largest change is **{ri.max_change:.1e}**, rounding only. Each pair "
    "of q turns by (m + c)θ_f and of k by (n + c)θ_f; the score sees only the angle between them, "
    "(n − m)θ_f, and the extra c·θ_f cancels.",
)
h1, h2 = st.columns(2)
with h1:
    plot(F.matrix_heatmap(ri.logits, f"Logit of “{toks[qi]}” at m and “{toks[ki]}” at n",
                          x_title="key position n", y_title="query position m", value_label="q′·k′/√d",
                          height=440), "rope_identity")
with h2:
    rows = {f"row m = {r}": v for r, v in ri.by_offset.items()}
    middle = [name for name in rows][1:-1]  # dashed, so the rows it overlaps show through
    plot(F.lines(ri.offsets, rows, "Three rows of the map, against n − m", x_title="n − m (key − query)",
                 y_title="logit q′·k′/√d", markers=True, dashed=middle, height=400), "rope_identity_rows")
st.markdown(
    f"Largest spread along any diagonal: **{ri.diagonal_spread:.1e}**. "
    f"Largest change after moving every position by c = {int(shift):,}: **{ri.max_change:.1e}** "
    "(float64 rounding: the angles c·θ_f are large numbers)."
)

# -- 3. long-term decay ---------------------------------------------------------------------------
st.subheader("Long-term decay")
prose(KEY, "decay")
e1, e2 = st.columns(2)
d_decay = e1.select_slider("Head size d (decay)", [16, 32, 64, 128, 256], value=128, key="rope_decay_d", **URL,
                           help="16–256. The bound's average over d/2 pairs.")
max_dist = e2.slider("Largest distance", 16, 4096, 512, key="rope_decay_dist", **URL, help="16–4,096 positions.")
dec = decay_curves(d_decay, (1_000.0, 10_000.0, 500_000.0), max_dist)
plot(F.lines(dec.distances, {f"base {b:,.0f}": v for b, v in dec.curves.items()},
             f"Average bound (1/(d/2)) Σ_u |S_u| against distance, d = {d_decay}",
             x_title="distance |n − m| (the bound is symmetric)", y_title="relative upper bound",
             height=400), "rope_decay")

# -- 4. the rotation matrix, and its two layouts ---------------------------------------------------
st.subheader("R_m: one rotation block per pair")
prose(KEY, "matrix")
x1, x2 = st.columns(2)
d_small = x1.select_slider("Head size d (matrix)", list(range(2, 17, 2)), value=8, key="rope_matrix_d", **URL,
                           help="Even, 2–16, so every block stays visible.")
m_mat = x2.slider("Position m (matrix)", 0, MAX_POS, 3, key="rope_matrix_m", **URL, help=f"0–{MAX_POS}.")
lay = layouts(toks, seed(), d_small, float(base), qi, ki, 16, m_mat)
y1, y2 = st.columns(2)
with y1:
    plot(F.matrix_heatmap(lay.R_interleaved, f"R_m, m = {m_mat}: interleaved, pairs (2f, 2f+1)",
                          x_title="input channel", y_title="output channel", value_label="R", zmax=1.0,
                          height=420), "rope_R_interleaved")
with y2:
    plot(F.matrix_heatmap(lay.R_half, f"R_m, m = {m_mat}: half-split, pairs (f, f + d/2)",
                          x_title="input channel", y_title="output channel", value_label="R", zmax=1.0,
                          height=420), "rope_R_half")

st.subheader("Interleaved or half-split: the same rotation, channels reordered")
prose(KEY, "layouts")
perm = ", ".join(str(int(v)) for v in lay.permutation)
st.markdown(
    f"Half-split channel *c* holds interleaved channel **perm[c]**, perm = [{perm}]. "
    f"Rotating $Pq$ the half-split way equals permuting the interleaved result: largest gap "
    f"**{lay.layout_gap:.1e}**. Logits for positions 0–15 from both layouts on permuted inputs: largest gap "
    f"**{lay.logit_gap:.1e}**. Same unpermuted q and k in the other layout: largest gap "
    f"**{lay.same_weights_gap:.2f}** — different scores, and no error message."
)

# -- 6. on your sentence ---------------------------------------------------------------------------
st.subheader("On your sentence")
prose(KEY, "sentence")
s1, s2 = st.columns(2)
causal = s1.toggle("Causal mask (decoder)", value=False, key="rope_causal", **URL,
                   help="On: each word attends only to itself and the words before it.")
classroom.url_default("rope_offset", "rope_offset", 0, classroom.int_in(0, 100_000))
offset = s2.number_input("Start the sentence at position", 0, 100_000, 0, step=10, key="rope_offset",
                         help="0–100,000. RoPE only sees differences, so the map must not change.")
classroom.url_mirror("rope_offset", offset, 0)
plain = run_tokens(toks, seed(), "none", 64, 1, causal)
rope = run_tokens(toks, seed(), "rope", 64, 1, causal)
moved = run_tokens(toks, seed(), "rope", 64, 1, causal, int(offset)) if offset else rope
panels = np.stack([plain.weights[0], moved.weights[0]])
plot(F.token_heatmap_grid(panels, toks, "Attention weights on your sentence (one head, d = 64)",
                          panel_titles=["without positions (NoPE)", f"with RoPE, positions from {int(offset)}"],
                          kind="weights", value_label="weight", cols=2, panel_height=460), "rope_attention")
if offset:
    change = float(np.nanmax(np.abs(moved.weights - rope.weights)))
    st.markdown(f"Largest change in the RoPE weights when the sentence starts at {int(offset):,} instead of 0: "
                f"**{change:.1e}** (float32 rounding).")
else:
    st.caption("Start the sentence at another position above: the page then prints how much the map changed.")

prose(KEY, "terms")
if st.toggle("Show RoPE's two logit terms", value=True, key="rope_terms", **URL):
    veil = np.where(np.isnan(rope.logits[0]), np.nan, 1.0)  # blank the masked cells in every panel
    terms = np.stack([rope.terms["content"][0] * veil, rope.terms["position"][0] * veil, rope.logits[0]])
    plot(F.token_heatmap_grid(terms, toks, "RoPE's logit as two terms",
                              panel_titles=["content q·k/√d", "position: the rotation's change", "sum = RoPE logit"],
                              kind="signed", value_label="logit", cols=3, panel_height=380), "rope_terms_grid")
