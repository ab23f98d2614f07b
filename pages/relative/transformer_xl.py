"""Chapter: Transformer-XL — four terms, u and v, and the rel-shift trick."""

import numpy as np
import streamlit as st

from encoders import transformer_xl as enc
from explain import figures as F
from explain.chapters import transformer_xl as ch
from explain.chapters import transformer_xl_figures
from explain.chapters.common import sign_text
from ui.common import header, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation
from ui.i18n import t
from ui.question import predict
from ui.url_state import URL

KEY = "transformer-xl"
N_HEADS = 4
SIGN = sign_text(enc.TransformerXL.name)
header(
    KEY,
    enc.PAPER,
    sources=(
        enc.TransformerXL.logit_terms,
        enc.TransformerXL.position_keys,
        enc.rel_shift_steps,
        enc.rel_shift,
        enc.relative_distances,
        enc.relative_encoding,
    ),
)
prose(KEY, "intro")
prose(KEY, "equation")
with st.expander(t("transformer_xl.derivation")):
    show_derivation("absolute-pe-attention", key_prefix="xl_proof", compact=True)

term_maps = st.cache_data(ch.term_maps)
global_position_bias = st.cache_data(ch.global_position_bias)
rel_shift_demo = st.cache_data(ch.rel_shift_demo)
layout_check = st.cache_data(ch.layout_check)


def token_map(z, toks, title, kind, value_label, key):
    plot(F.token_map(z, toks, title, kind=kind, value_label=value_label), key)


def term_title(term: str) -> str:
    return t(f"transformer_xl.term.{term}")


st.subheader(t("transformer_xl.terms.subheader"))
prose(KEY, "terms")
tokens = sentence_tokens()
toks = list(tokens.tokens)
n = len(toks)
c1, c2 = st.columns([1, 2])
head = c1.selectbox(
    t("transformer_xl.terms.head"),
    list(range(N_HEADS)),
    key="xl_head",
    **URL,
    format_func={h: t("transformer_xl.terms.head_option", h=h + 1) for h in range(N_HEADS)}.get,
    help=t("transformer_xl.terms.head_help", n=N_HEADS),
)
causal = c2.toggle(
    t("transformer_xl.terms.causal"), value=True, key="xl_causal", **URL, help=t("transformer_xl.terms.causal_help")
)
prose(KEY, "switches")
sw = st.columns(4)
switches = tuple(
    sw[k].toggle(f"({term})", value=True, key=f"xl_on_{term}", help=term_title(term), **URL)
    for k, term in enumerate(ch.TERMS)
)
m = term_maps(st.session_state.sentence, seed(), head, causal, switches, n_heads=N_HEADS)

# Which term ignores the words? Measured: the same layer on two six-word texts with no word in common.
_one = term_maps(ch.PROBE_TEXTS[0], seed(), head, causal, n_heads=N_HEADS)
_two = term_maps(ch.PROBE_TEXTS[1], seed(), head, causal, n_heads=N_HEADS)
_same = [term for term in ch.TERMS if np.allclose(_one.terms[term], _two.terms[term], equal_nan=True, atol=1e-6)]
if len(_same) == 1:
    predict(
        "xl_q",
        t("transformer_xl.predict.question"),
        list(ch.TERMS),
        _same[0],
        t("transformer_xl.predict.explanation", term=_same[0], title=term_title(_same[0])),
        format_func=lambda term: f"({term})",
    )

panel_titles = [
    term_title(term) + ("" if on else t("transformer_xl.terms.switched_off"))
    for term, on in zip(ch.TERMS, switches, strict=False)
]
plot(
    F.token_heatmap_grid(
        np.stack([m.terms[term] for term in ch.TERMS]),
        toks,
        t("transformer_xl.terms.grid_title", h=head + 1),
        panel_titles=panel_titles,
        value_label=t("transformer_xl.terms.grid_value"),
        cols=2,
        panel_height=300 if n <= 40 else 420,
    ),
    "xl_terms",
)
if not any(switches):
    st.info(t("transformer_xl.terms.all_off"))
s1, s2 = st.columns(2)
with s1:
    on = [f"({term})" for term, o in zip(ch.TERMS, switches, strict=False) if o]
    token_map(
        m.total,
        toks,
        t("transformer_xl.terms.logits_title", terms=" + ".join(on) if on else t("transformer_xl.terms.nothing")),
        "signed",
        t("transformer_xl.terms.logit"),
        "xl_sum",
    )
with s2:
    token_map(
        m.weights,
        toks,
        t("transformer_xl.terms.weights_title"),
        "weights",
        t("transformer_xl.terms.weight"),
        "xl_weights",
    )

st.subheader(t("transformer_xl.distance.subheader"))
prose(KEY, "distance")
reach = max(n - 1, 8)
g = global_position_bias(seed(), reach, n_heads=N_HEADS)
curves = {t("transformer_xl.distance.head", h=h + 1): g.d_term[h] for h in range(N_HEADS)}
fig = F.lines(
    g.distances,
    curves,
    t("transformer_xl.distance.title"),
    x_title=f"δ = {SIGN}",
    y_title=t("transformer_xl.distance.y_title"),
    markers=reach <= 40,
)
if causal:
    fig = F.mark_lines(fig, x={t("transformer_xl.distance.causal_mark"): 0})
plot(fig, "xl_d_curve")

st.subheader(t("transformer_xl.shift.subheader"))
prose(KEY, "relshift")
r1, r2, r3 = st.columns([1, 1, 2])
qlen = r1.slider(
    t("transformer_xl.shift.qlen"), 2, 6, 4, key="xl_qlen", **URL, help=t("transformer_xl.shift.qlen_help")
)
mlen = r2.slider(
    t("transformer_xl.shift.mlen"), 0, 3, 0, key="xl_mlen", **URL, help=t("transformer_xl.shift.mlen_help")
)
STEPS = ["raw", "padded", "reshaped", "sliced", "result"]
step_names = {s: t(f"transformer_xl.shift.name.{s}") for s in STEPS}
stage_name = r3.select_slider(
    t("transformer_xl.shift.step"),
    STEPS,
    value="raw",
    key="xl_step",
    **URL,
    format_func=step_names.get,
    help=t("transformer_xl.shift.step_help"),
)
demo = rel_shift_demo(qlen, mlen)
stage = demo.stages[STEPS.index(stage_name)]
prose(KEY, f"step-{stage_name}")
klen = demo.klen
rows, cols = stage.ids.shape
ticks = {
    "raw": ([f"δ={klen - 1 - r}" for r in range(cols)], [f"i={i}" for i in range(rows)]),
    "padded": (
        [t("transformer_xl.shift.pad")] + [f"δ={klen - 1 - r}" for r in range(cols - 1)],
        [f"i={i}" for i in range(rows)],
    ),
    "reshaped": (None, None),
    "sliced": (None, [str(r + 1) for r in range(rows)]),
    "result": ([f"j={j}" for j in range(cols)], [f"i={i}" for i in range(rows)]),
}[stage_name]
axis = (
    t(f"transformer_xl.shift.x.{stage_name}", klen=klen, qlen=qlen),
    t(f"transformer_xl.shift.y.{stage_name}"),
    *ticks,
)
veil = ~demo.valid if stage_name == "result" else None
lim = dict(zmin=float(np.nanmin(demo.stages[0].distance)), zmax=float(np.nanmax(demo.stages[0].distance)))
g1, g2 = st.columns(2)
with g1:
    plot(
        transformer_xl_figures.labelled_grid(
            stage.distance,
            stage.labels,
            t("transformer_xl.shift.step_title", name=step_names[stage_name], rows=rows, cols=cols),
            x_title=axis[0],
            y_title=axis[1],
            x_ticks=axis[2],
            y_ticks=axis[3],
            veil=veil,
            value_label=f"δ = {SIGN}",
            **lim,
        ),
        "xl_step_grid",
    )
with g2:
    g_dist = np.where(demo.valid, demo.wanted, np.nan)
    plot(
        transformer_xl_figures.labelled_grid(
            g_dist,
            demo.gathered_labels,
            t("transformer_xl.shift.gather_title"),
            x_title=t("transformer_xl.shift.key"),
            y_title=t("transformer_xl.shift.query"),
            x_ticks=[f"j={j}" for j in range(klen)],
            y_ticks=[f"i={i}" for i in range(qlen)],
            veil=~demo.valid,
            value_label=f"δ = {SIGN}",
            **lim,
        ),
        "xl_gather",
    )
n_valid, n_bad = int(demo.valid.sum()), int((~demo.valid).sum())
if demo.matches_gather:
    st.success(t("transformer_xl.shift.matches", n_valid=n_valid, n_bad=n_bad))
else:
    st.error(t("transformer_xl.shift.differs"))
prose(KEY, "bidirectional")

st.subheader(t("transformer_xl.layout.subheader"))
prose(KEY, "layout")
lc = layout_check(seed())
l1, l2 = st.columns(2)
l1.metric(t("transformer_xl.layout.same"), f"{lc.same_weights:.3g}")
l2.metric(t("transformer_xl.layout.permuted"), f"{lc.permuted_weights:.1e}")
