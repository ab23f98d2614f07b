"""Chapter: Stretching RoPE — Position Interpolation, NTK-aware scaling, YaRN, xPos."""

import numpy as np
import streamlit as st

from encoders import rope_scaling as enc
from explain import figures as F
from explain.chapters import rope_scaling as ch
from ui.classroom import URL, predict
from ui.common import header, plot, prose, seed, sentence_tokens

KEY = "rope-scaling"
header(KEY, sources=(enc.pi_frequencies, enc.ntk_base, enc.dynamic_ntk_scale, enc.yarn_ramp,
                     enc.yarn_frequencies, enc.yarn_attention_factor, enc.xpos_scales))
with st.expander("📄 The five sources (two papers on PI and YaRN, two forum posts on NTK, the xPos paper)"):
    for paper in enc.PAPERS.values():
        st.markdown(f"- {paper.authors} ({paper.year}). [{paper.title}]({paper.url})")
prose(KEY, "intro")

frequencies = st.cache_data(ch.frequencies, max_entries=64)
logit_vs_distance = st.cache_data(ch.logit_vs_distance, max_entries=64)
sentence_attention = st.cache_data(ch.sentence_attention, max_entries=32)

c1, c2, c3, c4 = st.columns(4)
d = c1.select_slider("Head size d", [8, 16, 32, 64, 128, 256], value=128, key="rs_d", **URL,
                     help="8–256 (Llama 2: 128). d/2 frequency pairs.")
base = c2.select_slider("Base", [1_000, 10_000, 100_000, 500_000], value=10_000, key="rs_base", **URL,
                        help="θ_f = base^(−2f/d); 10,000 in RoFormer and Llama 2.")
L = c3.select_slider("Trained length L", [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192], value=4096,
                     key="rs_L", **URL, help="16–8,192 positions (Llama 2: 4,096).")
s = c4.select_slider("Stretch s", [1.0, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0], value=4.0, key="rs_s", **URL,
                     help="1–32: the new length is s·L.")
with st.expander("YaRN and xPos settings"):
    e1, e2, e3 = st.columns(3)
    beta_fast = e1.select_slider("YaRN β_fast", [4.0, 8.0, 16.0, 32.0, 64.0, 128.0], value=32.0, key="rs_beta_fast", **URL,
                                 help="4–128 turns (paper: 32). Pairs turning more often in L are kept.")
    beta_slow = e2.select_slider("YaRN β_slow", [0.25, 0.5, 1.0, 2.0], value=1.0, key="rs_beta_slow", **URL,
                                 help="0.25–2 turns (paper: 1). Pairs turning less often are divided by s.")
    gamma = e3.select_slider("xPos γ (scale_base)", [16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0],
                             value=512.0, key="rs_gamma", **URL, help="16–2,048 (torchscale: 512). Smaller γ, faster decay.")
new_len = int(round(s * L))
st.markdown(f"Trained on **{L:,}** positions, used on **{new_len:,}** (s = {s:g}).")

names = {k: ch.label(k) for k in ch.ALL_SCHEMES}
fr = frequencies(d, float(base), float(s), L, float(beta_fast), float(beta_slow))

# -- 1. frequencies ---------------------------------------------------------------------------------
st.subheader("What each scheme does to each pair")
prose(KEY, "frequencies")
# The answer is read off the frequency ratios the plots below draw: which scheme moves pair 0?
_moved = [k for k in ch.FREQUENCY_SCHEMES if abs(float(fr.ratio[k][0]) - 1.0) > 1e-9]
_options = [k for k in ch.FREQUENCY_SCHEMES if k != "rope"] + ["none"]
if len(_moved) <= 1:
    predict(
        "rs_q", f"Stretch s = {s:g}. Which scheme changes the frequency of even the **fastest** pair, pair 0 "
        "(the one that turns many times within the trained length)?", _options, _moved[0] if _moved else "none",
        (f"**{names[_moved[0]]}**: θ′₀/θ₀ = {float(fr.ratio[_moved[0]][0]):.4g}. " if _moved else
         "None of them: with s = 1 nothing is stretched. ")
        + "NTK changes the base, and base^(−2f/d) is 1 at f = 0 whatever the base; YaRN keeps every pair "
        "that turns often enough in training. Only Position Interpolation divides every frequency by s — and "
        "so blurs the fast pairs that tell neighbours apart.",
        format_func=lambda k: "none of them" if k == "none" else names[k],
    )
f1, f2 = st.columns(2)
with f1:
    ratios = {names[k]: fr.ratio[k] for k in ch.FREQUENCY_SCHEMES}
    ratios["YaRN ramp (0 keep … 1 divide by s)"] = fr.ramp
    plot(F.lines(fr.pairs, ratios, "Frequency change θ′_f / θ_f per pair", x_title="pair f (fast → slow)",
                 y_title="θ′_f / θ_f  and  YaRN ramp", dashed=("YaRN ramp (0 keep … 1 divide by s)",),
                 height=400), "rs_ratio")
with f2:
    fig = F.lines(fr.pairs, {names[k]: fr.wavelength[k] for k in ch.FREQUENCY_SCHEMES},
                  "Wavelength 2π/θ′_f per pair (log scale)", x_title="pair f (fast → slow)",
                  y_title="positions per full turn", log_y=True, height=400)
    plot(F.mark_lines(fig, y={f"trained length L = {L:,}": L, f"new length s·L = {new_len:,}": new_len}),
         "rs_wavelength")
st.caption(f"Dynamic NTK at length s·L = {new_len:,}: effective factor α = {fr.dynamic_alpha:.3g} "
           f"(static NTK uses α = s = {s:g}). YaRN's attention factor: {fr.attention_factor['yarn']:.4f} "
           f"on q and k, so ×{fr.attention_factor['yarn'] ** 2:.4f} on the logits.")
prose(KEY, "wavelengths")

# -- 2. angles --------------------------------------------------------------------------------------
st.subheader("Which pairs turn further than they ever did in training")
prose(KEY, "angles")
# Schemes first, in the order of every other plot, so each keeps its colour; the reference last.
curves = {f"{names[k]}: s·L·θ′_f": fr.max_angle_new[k] for k in ch.FREQUENCY_SCHEMES}
curves["trained: L·θ_f"] = fr.max_angle_trained
fig = F.lines(fr.pairs, curves, "Angle turned across the whole context, per pair (log scale)",
              x_title="pair f (fast → slow)", y_title="radians", log_y=True, dashed=("trained: L·θ_f",), height=420)
plot(F.mark_lines(fig, y={"one full turn, 2π": 2 * np.pi}), "rs_angles")
rows = []
for k in ch.FREQUENCY_SCHEMES:
    bad = np.flatnonzero(fr.out_of_distribution[k])
    worst = float((fr.max_angle_new[k] / fr.max_angle_trained)[bad].max()) if bad.size else float("nan")
    rows.append({
        "scheme": names[k],
        "pairs out of distribution": f"{bad.size} of {d // 2}",
        "which": (f"{bad[0]}–{bad[-1]}" if bad.size > 1 else str(bad[0])) if bad.size else "none",
        "furthest overshoot": f"×{worst:.3g} the trained angle" if bad.size else "—",
    })
st.table(rows)

# -- 3. logit against distance -------------------------------------------------------------------------
st.subheader("The score against distance")
prose(KEY, "distance")
lv = logit_vs_distance(d, float(base), float(s), L, float(gamma), float(beta_fast), float(beta_slow))
fig = F.lines(lv.distances, {names[k]: v for k, v in lv.curves.items()},
              f"Logit of q = k against distance, relative to plain RoPE at 0 (d = {d})",
              x_title="i − j (query − key): how far back the key is (log scale)",
              y_title="logit / plain RoPE's logit at 0", log_x=True, height=420)
plot(F.mark_lines(fig, x={f"L = {L:,}": L}), "rs_distance")
st.caption(f"Distances 1 to {new_len - 1:,} in {lv.distances.size} log-spaced windows: single distances up "
           "close, and far away the exact mean over each window, which smooths the fast pairs' ripples.")

# -- 4. on your sentence --------------------------------------------------------------------------------
st.subheader("Your sentence, longer than the trained length")
prose(KEY, "sentence")
tokens = sentence_tokens()
toks = tokens.tokens
n = len(toks)
g1, g2 = st.columns(2)
L_sent = g1.slider("Trained length for this experiment", 2, 128, min(8, max(2, n // 2)), key="rs_L_sentence", **URL,
                   help="2–128 positions. The stretch s = n / L makes the new length cover your sentence.")
causal = g2.toggle("Causal mask (decoder)", value=True, key="rs_causal", **URL,
                   help="On (default): xPos, like most long-context models, is a decoder method.")
run = sentence_attention(toks, seed(), L_sent, causal, float(base), float(gamma))
if n <= L_sent:
    st.info(f"Your sentence has {n} tokens, not more than L = {L_sent}, so s = 1: PI, NTK, dynamic NTK "
            "and YaRN all equal plain RoPE and only xPos differs. Lower L (or lengthen the sentence) to stretch.")
st.markdown(f"{n} tokens, trained length L = {L_sent}: stretch s = {run.scale:.3g}. "
            "Attention of one head, the same toy projections in every panel.")
plot(F.token_heatmap_grid(run.weights, toks, "Attention weights under each scheme",
                          panel_titles=[names[k] for k in run.schemes], kind="weights", value_label="weight",
                          cols=3, panel_height=360), "rs_attention")
h1, h2 = st.columns([3, 2])
with h1:
    x_title = "i − j (query − key): how far back the key is" if causal else "j − i (key − query)"
    fig = F.lines(run.offsets, {names[k]: v for k, v in run.by_distance.items()}, "Mean weight by distance",
                  x_title=x_title, y_title="mean attention weight", height=380)
    marks = {f"L − 1 = {L_sent - 1}": L_sent - 1} if L_sent - 1 <= run.offsets.max() else {}
    plot(F.mark_lines(fig, x=marks), "rs_by_distance")
with h2:
    st.table([{"scheme": names[k], "mean distance |i − j|": f"{run.mean_distance[k]:.2f}",
               f"weight on keys ≥ {L_sent} away": f"{run.beyond[k]:.3f}"} for k in run.schemes])
with st.expander("How xPos decays, and why it wants a causal mask"):
    prose(KEY, "xpos-note")
