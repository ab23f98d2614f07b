"""Chapter: Transformer-XL — four terms, u and v, and the rel-shift trick."""

import numpy as np
import streamlit as st

from encoders import transformer_xl as enc
from explain import figures as F
from explain.chapters import transformer_xl as ch
from ui.classroom import URL, predict
from ui.common import header, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation

KEY = "transformer-xl"
SIGN = "i − j (query − key)"
N_HEADS = 4
header(KEY, enc.PAPER, sources=(enc.TransformerXL.logit_terms, enc.TransformerXL.position_keys, enc.rel_shift_steps,
                                 enc.rel_shift, enc.relative_distances, enc.relative_encoding))
prose(KEY, "intro")
prose(KEY, "equation")
with st.expander("Derivation: from absolute positions to the four terms (checked by sympy)"):
    show_derivation("absolute-pe-attention", key_prefix="xl_proof", compact=True)

term_maps = st.cache_data(ch.term_maps)
global_position_bias = st.cache_data(ch.global_position_bias)
rel_shift_demo = st.cache_data(ch.rel_shift_demo)
layout_check = st.cache_data(ch.layout_check)


def token_map(z, toks, title, kind, value_label, key):
    plot(F.token_map(z, toks, title, kind=kind, value_label=value_label), key)


st.subheader("The four terms on your sentence")
prose(KEY, "terms")
tokens = sentence_tokens()
toks = list(tokens.tokens)
n = len(toks)
c1, c2 = st.columns([1, 2])
head = c1.selectbox("Head", list(range(N_HEADS)), key="xl_head", **URL, format_func=lambda h: f"head {h + 1}",
                    help=f"One of the layer's {N_HEADS} heads; each has its own u, v and slice of W_kR.")
causal = c2.toggle("Causal (a language model, as in the paper)", value=True, key="xl_causal", **URL,
                   help="On: each query sees only itself and earlier keys. Off: every key, with negative "
                        "distances for keys after the query.")
prose(KEY, "switches")
sw = st.columns(4)
switches = tuple(
    sw[k].toggle(f"({t})", value=True, key=f"xl_on_{t}", help=ch.TERM_TITLES[t], **URL) for k, t in enumerate(ch.TERMS)
)
m = term_maps(st.session_state.sentence, seed(), head, causal, switches, n_heads=N_HEADS)

# Which term ignores the words? Measured: the same layer on two six-word texts with no word in common.
_one = term_maps("a b c d e f", seed(), head, causal, n_heads=N_HEADS)
_two = term_maps("u v w x y z", seed(), head, causal, n_heads=N_HEADS)
_same = [t for t in ch.TERMS if np.allclose(_one.terms[t], _two.terms[t], equal_nan=True, atol=1e-6)]
if len(_same) == 1:
    predict(
        "xl_q", "Two sentences of the same length with no word in common. Which of the four terms is "
        "**the same** for both?", list(ch.TERMS), _same[0],
        f"Term ({_same[0]}), {ch.TERM_TITLES[_same[0]]}: measured on “a b c d e f” and “u v w x y z”, its map is "
        "identical, every other term differs. It has no q_i and no k_j in it — only v and the distance — "
        "so it is a bias on distance, the same for every word.",
        format_func=lambda t: f"({t})",
    )

panel_titles = [ch.TERM_TITLES[t] + ("" if on else "  — switched off") for t, on in zip(ch.TERMS, switches)]
plot(F.token_heatmap_grid(np.stack([m.terms[t] for t in ch.TERMS]), toks,
                          f"Head {head + 1}: the four terms (÷√d), one shared colour scale",
                          panel_titles=panel_titles, value_label="term ÷ √d", cols=2,
                          panel_height=300 if n <= 40 else 420), "xl_terms")
if not any(switches):
    st.info("Every term is off: all logits are 0, so each query spreads its attention evenly.")
s1, s2 = st.columns(2)
with s1:
    on = [f"({t})" for t, o in zip(ch.TERMS, switches) if o]
    token_map(m.total, toks, "Logits: " + (" + ".join(on) if on else "nothing") + " (÷√d)", "signed",
              "logit", "xl_sum")
with s2:
    token_map(m.weights, toks, "Attention weights (softmax over keys j)", "weights", "weight", "xl_weights")

st.subheader("Term (d) is a function of the distance alone")
prose(KEY, "distance")
reach = max(n - 1, 8)
g = global_position_bias(seed(), reach, n_heads=N_HEADS)
curves = {f"head {h + 1}": g.d_term[h] for h in range(N_HEADS)}
fig = F.lines(g.distances, curves, "Global position bias (d) = v·W_kR R_δ / √d, per head",
              x_title=f"δ = {SIGN}", y_title="term (d)", markers=reach <= 40)
if causal:
    fig = F.mark_lines(fig, x={"causal: only δ ≥ 0 is used": 0})
plot(fig, "xl_d_curve")

st.subheader("The rel-shift trick, step by step")
prose(KEY, "relshift")
r1, r2, r3 = st.columns([1, 1, 2])
qlen = r1.slider("Queries q_len", 2, 6, 4, key="xl_qlen", **URL, help="Rows of the small example (2–6).")
mlen = r2.slider("Memory m_len", 0, 3, 0, key="xl_mlen", **URL,
                 help="Keys from the previous segment in front of the queries (0–3).")
STEPS = ["raw", "padded", "reshaped", "sliced", "result"]
step_names = {"raw": "1 · raw", "padded": "2 · pad", "reshaped": "3 · reshape", "sliced": "4 · slice",
              "result": "5 · result"}
stage_name = r3.select_slider("Step", STEPS, value="raw", key="xl_step", **URL, format_func=step_names.get,
                              help="The five stages of the trick (the encoder's own rel_shift_steps).")
demo = rel_shift_demo(qlen, mlen)
stage = demo.stages[STEPS.index(stage_name)]
prose(KEY, f"step-{stage_name}")
klen = demo.klen
rows, cols = stage.ids.shape
axis = {
    "raw": ("column r (distance δ = k_len−1−r)", "query i",
            [f"δ={klen - 1 - r}" for r in range(cols)], [f"i={i}" for i in range(rows)]),
    "padded": ("column (0 is the zero pad)", "query i", ["pad"] + [f"δ={klen - 1 - r}" for r in range(cols - 1)],
               [f"i={i}" for i in range(rows)]),
    "reshaped": (f"column of the ({klen}+1)×{qlen} view", "row of the view", None, None),
    "sliced": (f"column of the {klen}×{qlen} view", "row of the view (row 0 dropped)", None,
               [str(r + 1) for r in range(rows)]),
    "result": ("key j", "query i", [f"j={j}" for j in range(cols)], [f"i={i}" for i in range(rows)]),
}[stage_name]
veil = ~demo.valid if stage_name == "result" else None
lim = dict(zmin=float(np.nanmin(demo.stages[0].distance)), zmax=float(np.nanmax(demo.stages[0].distance)))
g1, g2 = st.columns(2)
with g1:
    plot(F.labelled_grid(stage.distance, stage.labels, f"Step {step_names[stage_name]} ({rows}×{cols})",
                         x_title=axis[0], y_title=axis[1], x_ticks=axis[2], y_ticks=axis[3], veil=veil,
                         value_label=f"δ = {SIGN}", **lim), "xl_step_grid")
with g2:
    g_dist = np.where(demo.valid, demo.wanted, np.nan)
    plot(F.labelled_grid(g_dist, demo.gathered_labels, "Direct gather: raw[i, k_len−1−((m_len+i)−j)]",
                         x_title="key j", y_title="query i", x_ticks=[f"j={j}" for j in range(klen)],
                         y_ticks=[f"i={i}" for i in range(qlen)], veil=~demo.valid, value_label=f"δ = {SIGN}",
                         **lim), "xl_gather")
n_valid, n_bad = int(demo.valid.sum()), int((~demo.valid).sum())
if demo.matches_gather:
    st.success(f"The result equals the direct gather on all {n_valid} valid cells (j ≤ i + m_len). "
               f"The {n_bad} cells marked ✗ hold garbage: the zero pad or the next query's scores.")
else:
    st.error("The shifted matrix differs from the direct gather — this should never happen.")
prose(KEY, "bidirectional")

st.subheader("Which sinusoid layout for R?")
prose(KEY, "layout")
lc = layout_check(seed())
l1, l2 = st.columns(2)
l1.metric("Same W_kR, other layout: largest change in (b)+(d)", f"{lc.same_weights:.3g}")
l2.metric("W_kR permuted along with R: largest change", f"{lc.permuted_weights:.1e}")
