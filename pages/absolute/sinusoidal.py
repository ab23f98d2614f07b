"""Chapter: Sinusoidal APE (Vaswani et al. 2017)."""

import numpy as np
import streamlit as st

from encoders import sinusoidal as enc
from explain import figures as F
from explain.chapters import common, sinusoidal as ch
from ui import classroom
from ui.classroom import URL, predict, secondary
from ui.common import header, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation

KEY = "sinusoidal"
header(KEY, enc.PAPER, sources=(enc.sinusoidal_frequencies, enc.sinusoidal_rows, enc.shift_matrix))
prose(KEY, "intro")

pe_matrix = st.cache_data(ch.pe_matrix)
dot_products = st.cache_data(ch.dot_products)
layouts = st.cache_data(ch.layouts)
run_layer = st.cache_data(common.run_layer)

# "d" cannot be bound to the address under its own name (the Derivations page sets ?d= by hand), so
# it is mirrored by hand as ?sin_d=.
classroom.url_default("d", "sin_d", 64, classroom.int_in(2, 512, step=2))
c1, c2, c3 = st.columns(3)
n = c1.slider("Positions n", 2, 512, 64, key="n", help="Rows of the PE matrix (2–512).", **URL)
d = c2.slider("Dimension d", 2, 512, 64, step=2, key="d", help="Channels, even so every sin has its cos (2–512).")
classroom.url_mirror("sin_d", d, 64)
base = c3.select_slider(
    "Base", [10, 100, 1_000, 10_000, 100_000], value=10_000, key="base", **URL,
    help="The paper uses 10,000. A larger base stretches the slowest wavelengths.",
)

st.subheader("The PE matrix")
prose(KEY, "matrix")
P = pe_matrix(n, d, float(base))
plot(
    F.matrix_heatmap(P, f"PE matrix ({n}×{d}), interleaved layout", x_title="channel (2f = sin, 2f+1 = cos)",
                     y_title="position p", value_label="PE", height=460),
    "pe_matrix",
)

left, right = st.columns(2)
with left:
    st.subheader("Channels as waves")
    prose(KEY, "waves")
    default = [c for c in (0, 1, 6, 14) if c < d]
    with secondary("Channels to draw"):
        chans = st.multiselect("Channels", list(range(d)), default=default, key="chans", max_selections=6,
                               help="Up to 6 channels of the matrix above.")
    kind = lambda c: "sin" if c % 2 == 0 else "cos"  # noqa: E731
    plot(
        F.lines(np.arange(n), {f"ch {c} ({kind(c)}, pair {c // 2})": P[:, c] for c in chans},
                "Chosen channels over position", x_title="position p", y_title="PE(p, channel)"),
        "waves",
    )
with right:
    st.subheader("Wavelength per pair")
    lam = ch.wavelengths(d, float(base))
    pairs = sorted({0, lam.size // 2, lam.size - 1})
    longest = int(np.argmax(lam))  # the answer comes from the same wavelengths the plot draws
    predict("sin_q", f"With d = {d} and base {base:,}, which pair f has the **longest** wavelength?", pairs,
            longest,
            f"Pair {longest}: λ = 2π·{base:,}^(2f/d) grows with f, from {lam[0]:.2f} positions for pair 0 to "
            f"{lam[-1]:,.0f} for pair {lam.size - 1}. The last pairs turn slowest — the high bits of the binary "
            "counter below.", format_func=lambda f: f"pair {f}")
    prose(KEY, "wavelengths")
    fig = F.lines(np.arange(lam.size), {"wavelength λ_f = 2π/ω_f": lam, "sequence length n": np.full(lam.size, n)},
                  "Wavelength of each pair (log scale)", x_title="pair f", y_title="positions per full turn",
                  log_y=True, dashed=("sequence length n",))
    plot(fig, "wavelengths")

st.subheader("Like counting in binary")
prose(KEY, "binary")
nb = min(n, 32)
b1, b2 = st.columns(2)
with b1:
    plot(F.matrix_heatmap(ch.binary_digits(nb, 6), f"Binary digits of positions 0–{nb - 1}",
                          x_title="bit b (flips every 2^b positions)", y_title="position p", value_label="bit",
                          kind="index", height=420), "binary")
with b2:
    plot(F.matrix_heatmap(pe_matrix(nb, 12, float(base)), f"First 12 channels for positions 0–{nb - 1}",
                          x_title="channel (2f = sin, 2f+1 = cos)", y_title="position p", value_label="PE",
                          height=420), "binary_pe")

st.subheader("PE · PE depends only on the distance")
prose(KEY, "dot")
refs = tuple(sorted({0, n // 2, n - 1}))
dp = dot_products(n, d, float(base), refs)
s1, s2 = st.columns(2)
with s1:
    plot(F.matrix_heatmap(dp.similarity, "PE(m)·PE(n) for all pairs", x_title="position n", y_title="position m",
                          value_label="PE(m)·PE(n)", height=440), "similarity")
with s2:
    curves = {f"measured from p = {p}": c for p, c in dp.from_rows.items()}
    curves["closed form Σ_f cos(ω_f Δ)"] = dp.closed_form
    plot(F.lines(dp.offsets, curves, "Dot product against distance", x_title="Δ = n − m (key − query)",
                 y_title="PE(m)·PE(m+Δ)", dashed=("closed form Σ_f cos(ω_f Δ)",), height=440), "dot_vs_distance")
gap = max(float(np.nanmax(np.abs(c - dp.closed_form))) for c in dp.from_rows.values())
st.markdown(f"Largest gap between the measured curves and the closed form: **{gap:.1e}** (rounding).")
with st.expander("Proof: PE(m)·PE(n) depends only on m − n"):
    show_derivation("sinusoidal-dot-product", key_prefix="sin-dot", compact=True)

st.subheader("A shift is a rotation: PE(p+Δ) = T(Δ)·PE(p)")
prose(KEY, "shift")
k1, k2 = st.columns(2)
# Integer number inputs are mirrored by hand: Streamlit's own binding crashes on ?p=inf.
classroom.url_default("p", "p", 5, classroom.int_in(0, 100_000))
classroom.url_default("delta", "delta", 3, classroom.int_in(-100_000, 100_000))
p = k1.number_input("Position p", 0, 100_000, 5, key="p", help="0–100,000")
delta = k2.number_input("Shift Δ", -100_000, 100_000, 3, key="delta", help="−100,000 to 100,000")
classroom.url_mirror("p", p, 5)
classroom.url_mirror("delta", delta, 3)
chk = ch.shift_check(int(p), int(delta), d, float(base))
show = min(d, 32)
t1, t2 = st.columns(2)
with t1:
    plot(F.lines(np.arange(show), {"PE(p+Δ) from the formula": chk.pe_shifted[:show],
                                   "T(Δ)·PE(p), rotating each pair": chk.rotated[:show]},
                 f"Both vectors (first {show} channels)", x_title="channel", y_title="value", markers=True,
                 dashed=("T(Δ)·PE(p), rotating each pair",)), "shift_vectors")
with t2:
    ts = min(d, 16)
    plot(F.matrix_heatmap(chk.T[:ts, :ts], f"T(Δ), first {ts}×{ts} block (2×2 rotations on the diagonal)",
                          x_title="input channel", y_title="output channel", value_label="T", height=380), "T")
st.markdown(f"Largest difference over all {d} channels: **{chk.max_abs_diff:.1e}** — equal up to float64 rounding.")
with st.expander("Proof: PE(p+Δ) = T(Δ)·PE(p), a fixed linear map"):
    show_derivation("sinusoidal-shift", key_prefix="sin-shift", compact=True)

st.subheader("Interleaved vs concatenated layouts")
prose(KEY, "layouts")
lay = layouts(min(n, 64), min(d, 64), float(base))
l1, l2 = st.columns(2)
with l1:
    plot(F.matrix_heatmap(lay.interleaved, "Interleaved (paper): sin, cos, sin, cos, …", x_title="channel",
                          y_title="position p", value_label="PE", height=380), "interleaved")
with l2:
    plot(F.matrix_heatmap(lay.concatenated, "Concatenated (tensor2tensor, GPT-J): sins | cosines",
                          x_title="channel", y_title="position p", value_label="PE", height=380), "concatenated")
perm_text = ", ".join(str(int(v)) for v in lay.permutation[:16]) + (" …" if lay.permutation.size > 16 else "")
st.markdown(
    f"Concatenated channel *c* is interleaved channel **perm[c]**, perm = [{perm_text}]. "
    f"After permuting, the largest difference is **{lay.max_abs_diff:.1e}**; without it, "
    f"**{lay.max_abs_diff_unpermuted:.2f}** — same numbers, different order."
)

st.subheader("On your sentence")
prose(KEY, "sentence")
tokens = sentence_tokens()
text = st.session_state.sentence
pos = run_layer(text, seed(), "sinusoidal", d_model=64, n_heads=1)
nope = run_layer(text, seed(), "none", d_model=64, n_heads=1)
toks = list(tokens.tokens)
plot(F.token_heatmap(pos.inputs - nope.inputs, toks, None,
                     "The vector added under each token (d = 64)", row_title="token (position)",
                     col_title="channel", value_label="PE", show_values=False), "sentence_pe")
a1, a2 = st.columns(2)
with a1:
    plot(F.token_heatmap(nope.weights[0], toks, toks, "Attention without positions", kind="weights",
                         value_label="weight"), "att_nope")
with a2:
    plot(F.token_heatmap(pos.weights[0], toks, toks, "Attention with sinusoidal PE", kind="weights",
                         value_label="weight"), "att_sin")
