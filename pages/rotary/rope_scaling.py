"""Chapter: Stretching RoPE — Position Interpolation, NTK-aware scaling, YaRN, xPos."""

import numpy as np
import streamlit as st

from encoders import rope_scaling as enc
from explain import figures as F
from explain.chapters import rope_scaling as ch
from ui.common import header, plot, prose, seed, sentence_tokens
from ui.i18n import t
from ui.question import predict
from ui.url_state import URL

KEY = "rope-scaling"
header(
    KEY,
    sources=(
        enc.pi_frequencies,
        enc.ntk_base,
        enc.dynamic_ntk_scale,
        enc.yarn_ramp,
        enc.yarn_frequencies,
        enc.yarn_attention_factor,
        enc.xpos_scales,
    ),
)
with st.expander(t("rope_scaling.sources")):
    for paper in enc.PAPERS.values():
        st.markdown(f"- {paper.authors} ({paper.year}). [{paper.title}]({paper.url})")
prose(KEY, "intro")

frequencies = st.cache_data(ch.frequencies, max_entries=64)
logit_vs_distance = st.cache_data(ch.logit_vs_distance, max_entries=64)
sentence_attention = st.cache_data(ch.sentence_attention, max_entries=32)

c1, c2, c3, c4 = st.columns(4)
d = c1.select_slider(
    t("rope_scaling.settings.head_size"),
    [8, 16, 32, 64, 128, 256],
    value=128,
    key="rs_d",
    **URL,
    help=t("rope_scaling.settings.head_size_help"),
)
base = c2.select_slider(
    t("rope_scaling.settings.base"),
    [1_000, 10_000, 100_000, 500_000],
    value=10_000,
    key="rs_base",
    **URL,
    help=t("rope_scaling.settings.base_help"),
)
L = c3.select_slider(
    t("rope_scaling.settings.length"),
    [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192],
    value=4096,
    key="rs_L",
    **URL,
    help=t("rope_scaling.settings.length_help"),
)
s = c4.select_slider(
    t("rope_scaling.settings.stretch"),
    [1.0, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0],
    value=4.0,
    key="rs_s",
    **URL,
    help=t("rope_scaling.settings.stretch_help"),
)
with st.expander(t("rope_scaling.settings.more")):
    e1, e2, e3 = st.columns(3)
    beta_fast = e1.select_slider(
        t("rope_scaling.settings.beta_fast"),
        [4.0, 8.0, 16.0, 32.0, 64.0, 128.0],
        value=32.0,
        key="rs_beta_fast",
        **URL,
        help=t("rope_scaling.settings.beta_fast_help"),
    )
    beta_slow = e2.select_slider(
        t("rope_scaling.settings.beta_slow"),
        [0.25, 0.5, 1.0, 2.0],
        value=1.0,
        key="rs_beta_slow",
        **URL,
        help=t("rope_scaling.settings.beta_slow_help"),
    )
    gamma = e3.select_slider(
        t("rope_scaling.settings.gamma"),
        [16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0],
        value=512.0,
        key="rs_gamma",
        **URL,
        help=t("rope_scaling.settings.gamma_help"),
    )
new_len = round(s * L)
st.markdown(t("rope_scaling.settings.summary", L=L, new_len=new_len, s=s))

names = {k: ch.label(k) for k in ch.ALL_SCHEMES}
fr = frequencies(d, float(base), float(s), L, float(beta_fast), float(beta_slow))

# -- 1. frequencies ---------------------------------------------------------------------------------
st.subheader(t("rope_scaling.frequencies.subheader"))
prose(KEY, "frequencies")
# The answer is read off the frequency ratios the plots below draw: which scheme moves pair 0?
_moved = [k for k in ch.FREQUENCY_SCHEMES if abs(float(fr.ratio[k][0]) - 1.0) > 1e-9]
# The "none of them" option: not a scheme id, nor a registry name ("none" is NoPE's).
_nobody = "-"
_options = [*ch.STRETCHES, _nobody]
if len(_moved) <= 1:
    predict(
        "rs_q",
        t("rope_scaling.frequencies.question", s=s),
        _options,
        _moved[0] if _moved else _nobody,
        (
            t("rope_scaling.frequencies.answer_moved", name=names[_moved[0]], ratio=float(fr.ratio[_moved[0]][0]))
            if _moved
            else t("rope_scaling.frequencies.answer_none")
        )
        + t("rope_scaling.frequencies.explanation"),
        format_func={**names, _nobody: t("rope_scaling.frequencies.none")}.get,
    )
f1, f2 = st.columns(2)
with f1:
    ratios = {names[k]: fr.ratio[k] for k in ch.FREQUENCY_SCHEMES}
    ramp = t("rope_scaling.frequencies.ramp")
    ratios[ramp] = fr.ramp
    plot(
        F.lines(
            fr.pairs,
            ratios,
            t("rope_scaling.frequencies.ratio_title"),
            x_title=t("rope_scaling.frequencies.pair_axis"),
            y_title=t("rope_scaling.frequencies.ratio_axis"),
            dashed=(ramp,),
            height=400,
        ),
        "rs_ratio",
    )
with f2:
    fig = F.lines(
        fr.pairs,
        {names[k]: fr.wavelength[k] for k in ch.FREQUENCY_SCHEMES},
        t("rope_scaling.frequencies.wavelength_title"),
        x_title=t("rope_scaling.frequencies.pair_axis"),
        y_title=t("rope_scaling.frequencies.wavelength_axis"),
        log_y=True,
        height=400,
    )
    plot(
        F.mark_lines(
            fig,
            y={
                t("rope_scaling.frequencies.trained_length", L=L): L,
                t("rope_scaling.frequencies.new_length", new_len=new_len): new_len,
            },
        ),
        "rs_wavelength",
    )
st.caption(
    t(
        "rope_scaling.frequencies.caption",
        new_len=new_len,
        alpha=fr.dynamic_alpha,
        s=s,
        factor=fr.attention_factor["yarn"],
        factor_sq=fr.attention_factor["yarn"] ** 2,
    )
)
prose(KEY, "wavelengths")

# -- 2. angles --------------------------------------------------------------------------------------
st.subheader(t("rope_scaling.angles.subheader"))
prose(KEY, "angles")
# Schemes first, in the order of every other plot, so each keeps its colour; the reference last.
curves = {t("rope_scaling.angles.scheme_curve", name=names[k]): fr.max_angle_new[k] for k in ch.FREQUENCY_SCHEMES}
trained = t("rope_scaling.angles.trained_curve")
curves[trained] = fr.max_angle_trained
fig = F.lines(
    fr.pairs,
    curves,
    t("rope_scaling.angles.title"),
    x_title=t("rope_scaling.frequencies.pair_axis"),
    y_title=t("rope_scaling.angles.y_axis"),
    log_y=True,
    dashed=(trained,),
    height=420,
)
plot(F.mark_lines(fig, y={t("rope_scaling.angles.full_turn"): 2 * np.pi}), "rs_angles")
rows = []
for k in ch.FREQUENCY_SCHEMES:
    bad = np.flatnonzero(fr.out_of_distribution[k])
    worst = float((fr.max_angle_new[k] / fr.max_angle_trained)[bad].max()) if bad.size else float("nan")
    rows.append(
        {
            t("rope_scaling.angles.col_scheme"): names[k],
            t("rope_scaling.angles.col_count"): t("rope_scaling.angles.count", bad=bad.size, pairs=d // 2),
            t("rope_scaling.angles.col_which"): (
                (f"{bad[0]}–{bad[-1]}" if bad.size > 1 else str(bad[0]))
                if bad.size
                else t("rope_scaling.angles.which_none")
            ),
            t("rope_scaling.angles.col_overshoot"): t("rope_scaling.angles.overshoot", worst=worst)
            if bad.size
            else "—",
        }
    )
st.table(rows)

# -- 3. logit against distance -------------------------------------------------------------------------
st.subheader(t("rope_scaling.distance.subheader"))
prose(KEY, "distance")
lv = logit_vs_distance(d, float(base), float(s), L, float(gamma), float(beta_fast), float(beta_slow))
fig = F.lines(
    lv.distances,
    {names[k]: v for k, v in lv.curves.items()},
    t("rope_scaling.distance.title", d=d),
    x_title=t("rope_scaling.distance.x_axis"),
    y_title=t("rope_scaling.distance.y_axis"),
    log_x=True,
    height=420,
)
plot(F.mark_lines(fig, x={f"L = {L:,}": L}), "rs_distance")
st.caption(t("rope_scaling.distance.caption", last=new_len - 1, windows=lv.distances.size))

# -- 4. on your sentence --------------------------------------------------------------------------------
st.subheader(t("rope_scaling.sentence.subheader"))
prose(KEY, "sentence")
tokens = sentence_tokens()
toks = tokens.tokens
n = len(toks)
g1, g2 = st.columns(2)
L_sent = g1.slider(
    t("rope_scaling.sentence.length"),
    2,
    128,
    min(8, max(2, n // 2)),
    key="rs_L_sentence",
    **URL,
    help=t("rope_scaling.sentence.length_help"),
)
causal = g2.toggle(
    t("rope_scaling.sentence.causal"), value=True, key="rs_causal", **URL, help=t("rope_scaling.sentence.causal_help")
)
run = sentence_attention(toks, seed(), L_sent, causal, float(base), float(gamma))
if n <= L_sent:
    st.info(t("rope_scaling.sentence.no_stretch", n=n, L=L_sent))
st.markdown(t("rope_scaling.sentence.summary", n=n, L=L_sent, s=run.scale))
plot(
    F.token_heatmap_grid(
        run.weights,
        toks,
        t("rope_scaling.sentence.grid_title"),
        panel_titles=[names[k] for k in run.schemes],
        kind="weights",
        value_label=t("rope_scaling.sentence.weight"),
        cols=3,
        panel_height=360,
    ),
    "rs_attention",
)
h1, h2 = st.columns([3, 2])
with h1:
    x_title = t("rope_scaling.sentence.back_axis" if causal else "rope_scaling.sentence.offset_axis")
    fig = F.lines(
        run.offsets,
        {names[k]: v for k, v in run.by_distance.items()},
        t("rope_scaling.sentence.by_distance_title"),
        x_title=x_title,
        y_title=t("rope_scaling.sentence.by_distance_axis"),
        height=380,
    )
    marks = {f"L − 1 = {L_sent - 1}": L_sent - 1} if L_sent - 1 <= run.offsets.max() else {}
    plot(F.mark_lines(fig, x=marks), "rs_by_distance")
with h2:
    st.table(
        [
            {
                t("rope_scaling.sentence.col_scheme"): names[k],
                t("rope_scaling.sentence.col_mean"): f"{run.mean_distance[k]:.2f}",
                t("rope_scaling.sentence.col_beyond", L=L_sent): f"{run.beyond[k]:.3f}",
            }
            for k in run.schemes
        ]
    )
with st.expander(t("rope_scaling.sentence.xpos_note")):
    prose(KEY, "xpos-note")
