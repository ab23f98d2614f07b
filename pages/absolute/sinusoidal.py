"""Chapter: Sinusoidal APE (Vaswani et al. 2017)."""

import numpy as np
import streamlit as st

from encoders import sinusoidal as enc
from explain import figures as F
from explain.chapters import common
from explain.chapters import sinusoidal as ch
from ui.common import header, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation
from ui.i18n import t
from ui.presenter import secondary
from ui.question import predict
from ui.url_state import URL, Param

KEY = "sinusoidal"
header(KEY, enc.PAPER, sources=(enc.sinusoidal_frequencies, enc.sinusoidal_rows, enc.shift_matrix))
prose(KEY, "intro")

pe_matrix = st.cache_data(ch.pe_matrix)
dot_products = st.cache_data(ch.dot_products)
layouts = st.cache_data(ch.layouts)
run_layer = st.cache_data(common.run_layer)

c1, c2, c3 = st.columns(3)
n = c1.slider(t("sinusoidal.control.n"), 2, 512, 64, key="n", help=t("sinusoidal.control.n_help"), **URL)
# "d" cannot be bound to the address under its own name (the Derivations page sets ?d= by hand), so
# it is linked by hand as ?sin_d=.
d = Param.integer("d", 2, 512, default=64, step=2, param="sin_d").widget(
    c2.slider, t("sinusoidal.control.d"), 2, 512, 64, step=2, help=t("sinusoidal.control.d_help")
)
base = c3.select_slider(
    t("sinusoidal.control.base"),
    [10, 100, 1_000, 10_000, 100_000],
    value=10_000,
    key="base",
    **URL,
    help=t("sinusoidal.control.base_help"),
)

st.subheader(t("sinusoidal.heading.matrix"))
prose(KEY, "matrix")
P = pe_matrix(n, d, float(base))
plot(
    F.matrix_heatmap(
        P,
        t("sinusoidal.matrix.title", n=n, d=d),
        x_title=t("sinusoidal.axis.channel_sin_cos"),
        y_title=t("sinusoidal.axis.position"),
        value_label=t("sinusoidal.axis.pe"),
        height=460,
    ),
    "pe_matrix",
)

left, right = st.columns(2)
with left:
    st.subheader(t("sinusoidal.heading.waves"))
    prose(KEY, "waves")
    default = [c for c in (0, 1, 6, 14) if c < d]
    with secondary(t("sinusoidal.control.channels_box")):
        chans = st.multiselect(
            t("sinusoidal.control.channels"),
            list(range(d)),
            default=default,
            key="chans",
            max_selections=6,
            help=t("sinusoidal.control.channels_help"),
        )
    kind = lambda c: t("sinusoidal.waves.sin") if c % 2 == 0 else t("sinusoidal.waves.cos")  # noqa: E731
    plot(
        F.lines(
            np.arange(n),
            {t("sinusoidal.waves.trace", c=c, kind=kind(c), pair=c // 2): P[:, c] for c in chans},
            t("sinusoidal.waves.title"),
            x_title=t("sinusoidal.axis.position"),
            y_title=t("sinusoidal.waves.y"),
        ),
        "waves",
    )
with right:
    st.subheader(t("sinusoidal.heading.wavelengths"))
    lam = ch.wavelengths(d, float(base))
    pairs = sorted({0, lam.size // 2, lam.size - 1})
    longest = int(np.argmax(lam))  # the answer comes from the same wavelengths the plot draws
    predict(
        "sin_q",
        t("sinusoidal.wavelengths.question", d=d, base=base),
        pairs,
        longest,
        t(
            "sinusoidal.wavelengths.explanation",
            longest=longest,
            base=base,
            first=lam[0],
            last=lam[-1],
            last_pair=lam.size - 1,
        ),
        format_func=lambda f: t("sinusoidal.wavelengths.option", f=f),
    )
    prose(KEY, "wavelengths")
    length = t("sinusoidal.wavelengths.length")
    fig = F.lines(
        np.arange(lam.size),
        {t("sinusoidal.wavelengths.curve"): lam, length: np.full(lam.size, n)},
        t("sinusoidal.wavelengths.title"),
        x_title=t("sinusoidal.wavelengths.x"),
        y_title=t("sinusoidal.wavelengths.y"),
        log_y=True,
        dashed=(length,),
    )
    plot(fig, "wavelengths")

st.subheader(t("sinusoidal.heading.binary"))
prose(KEY, "binary")
nb = min(n, 32)
b1, b2 = st.columns(2)
with b1:
    plot(
        F.matrix_heatmap(
            ch.binary_digits(nb, 6),
            t("sinusoidal.binary.title", last=nb - 1),
            x_title=t("sinusoidal.binary.x"),
            y_title=t("sinusoidal.axis.position"),
            value_label=t("sinusoidal.binary.value"),
            kind="index",
            height=420,
        ),
        "binary",
    )
with b2:
    plot(
        F.matrix_heatmap(
            pe_matrix(nb, 12, float(base)),
            t("sinusoidal.binary.pe_title", last=nb - 1),
            x_title=t("sinusoidal.axis.channel_sin_cos"),
            y_title=t("sinusoidal.axis.position"),
            value_label=t("sinusoidal.axis.pe"),
            height=420,
        ),
        "binary_pe",
    )

st.subheader(t("sinusoidal.heading.dot"))
prose(KEY, "dot")
refs = tuple(sorted({0, n // 2, n - 1}))
dp = dot_products(n, d, float(base), refs)
s1, s2 = st.columns(2)
with s1:
    plot(
        F.matrix_heatmap(
            dp.similarity,
            t("sinusoidal.dot.similarity_title"),
            x_title=t("sinusoidal.dot.x"),
            y_title=t("sinusoidal.dot.y"),
            value_label="PE(m)·PE(n)",
            height=440,
        ),
        "similarity",
    )
with s2:
    curves = {t("sinusoidal.dot.measured", p=p): c for p, c in dp.from_rows.items()}
    closed = t("sinusoidal.dot.closed_form")
    curves[closed] = dp.closed_form
    plot(
        F.lines(
            dp.offsets,
            curves,
            t("sinusoidal.dot.title"),
            x_title=t("sinusoidal.dot.offset"),
            y_title=t("sinusoidal.dot.curve_y"),
            dashed=(closed,),
            height=440,
        ),
        "dot_vs_distance",
    )
gap = max(float(np.nanmax(np.abs(c - dp.closed_form))) for c in dp.from_rows.values())
st.markdown(t("sinusoidal.dot.gap", gap=gap))
with st.expander(t("sinusoidal.dot.proof")):
    show_derivation("sinusoidal-dot-product", key_prefix="sin-dot", compact=True)

st.subheader(t("sinusoidal.heading.shift"))
prose(KEY, "shift")
k1, k2 = st.columns(2)
# Integer number inputs are linked by hand: Streamlit's own binding crashes on ?p=inf.
p = Param.integer("p", 0, 100_000, default=5).widget(
    k1.number_input, t("sinusoidal.control.p"), 0, 100_000, 5, help=t("sinusoidal.control.p_help")
)
delta = Param.integer("delta", -100_000, 100_000, default=3).widget(
    k2.number_input, t("sinusoidal.control.delta"), -100_000, 100_000, 3, help=t("sinusoidal.control.delta_help")
)
chk = ch.shift_check(int(p), int(delta), d, float(base))
show = min(d, 32)
t1, t2 = st.columns(2)
with t1:
    rotated = t("sinusoidal.shift.rotated")
    plot(
        F.lines(
            np.arange(show),
            {t("sinusoidal.shift.formula"): chk.pe_shifted[:show], rotated: chk.rotated[:show]},
            t("sinusoidal.shift.title", show=show),
            x_title=t("sinusoidal.axis.channel"),
            y_title=t("sinusoidal.shift.value"),
            markers=True,
            dashed=(rotated,),
        ),
        "shift_vectors",
    )
with t2:
    ts = min(d, 16)
    plot(
        F.matrix_heatmap(
            chk.T[:ts, :ts],
            t("sinusoidal.shift.t_title", ts=ts),
            x_title=t("sinusoidal.shift.input_channel"),
            y_title=t("sinusoidal.shift.output_channel"),
            value_label="T",
            height=380,
        ),
        "T",
    )
st.markdown(t("sinusoidal.shift.difference", d=d, diff=chk.max_abs_diff))
with st.expander(t("sinusoidal.shift.proof")):
    show_derivation("sinusoidal-shift", key_prefix="sin-shift", compact=True)

st.subheader(t("sinusoidal.heading.layouts"))
prose(KEY, "layouts")
lay = layouts(min(n, 64), min(d, 64), float(base))
l1, l2 = st.columns(2)
with l1:
    plot(
        F.matrix_heatmap(
            lay.interleaved,
            t("sinusoidal.layouts.interleaved"),
            x_title=t("sinusoidal.axis.channel"),
            y_title=t("sinusoidal.axis.position"),
            value_label=t("sinusoidal.axis.pe"),
            height=380,
        ),
        "interleaved",
    )
with l2:
    plot(
        F.matrix_heatmap(
            lay.concatenated,
            t("sinusoidal.layouts.concatenated"),
            x_title=t("sinusoidal.axis.channel"),
            y_title=t("sinusoidal.axis.position"),
            value_label=t("sinusoidal.axis.pe"),
            height=380,
        ),
        "concatenated",
    )
perm_text = ", ".join(str(int(v)) for v in lay.permutation[:16]) + (" …" if lay.permutation.size > 16 else "")
st.markdown(
    t(
        "sinusoidal.layouts.permutation",
        perm=perm_text,
        permuted=lay.max_abs_diff,
        unpermuted=lay.max_abs_diff_unpermuted,
    )
)

st.subheader(t("sinusoidal.heading.sentence"))
prose(KEY, "sentence")
tokens = sentence_tokens()
text = st.session_state.sentence
pos = run_layer(text, seed(), "sinusoidal", d_model=64, n_heads=1)
nope = run_layer(text, seed(), "none", d_model=64, n_heads=1)
toks = list(tokens.tokens)
plot(
    F.token_heatmap(
        pos.inputs - nope.inputs,
        toks,
        None,
        t("sinusoidal.sentence.added"),
        row_title=t("sinusoidal.sentence.token"),
        col_title=t("sinusoidal.axis.channel"),
        value_label=t("sinusoidal.axis.pe"),
        show_values=False,
    ),
    "sentence_pe",
)
a1, a2 = st.columns(2)
with a1:
    plot(
        F.token_heatmap(
            nope.weights[0],
            toks,
            toks,
            t("sinusoidal.sentence.nope"),
            kind="weights",
            value_label=t("sinusoidal.axis.weight"),
        ),
        "att_nope",
    )
with a2:
    plot(
        F.token_heatmap(
            pos.weights[0],
            toks,
            toks,
            t("sinusoidal.sentence.sinusoidal"),
            kind="weights",
            value_label=t("sinusoidal.axis.weight"),
        ),
        "att_sin",
    )
