"""Chapter: Stretching RoPE — Position Interpolation, NTK-aware scaling, YaRN, xPos.

A page only shows: widgets → one cached call into explain/chapters/rope_scaling.py per section →
figures → st.*. The numbers, the question and every sentence that states a fact about them are
computed there.
"""

import math

import streamlit as st

from explain import figures as F
from explain.chapters import rope_scaling as ch
from explain.chapters.smollm2 import CHAPTER as SMOLLM2
from ui.cache import cached
from ui.common import plot, seed, sentence_tokens
from ui.i18n import current, t
from ui.question import answer_shown, ask, folded
from ui.section import open_chapter
from ui.trained import trained_panel
from ui.url_state import URL

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
frequency_section = cached(ch.frequency_section)
logit_vs_distance = cached(ch.logit_vs_distance)
sentence_attention = cached(ch.sentence_attention)
lang = current()

c1, c2, c3, c4 = st.columns(4)
d = c1.select_slider(
    t("rope_scaling.settings.head_size"),
    list(ch.HEAD_SIZES),
    value=128,
    key="rs_d",
    **URL,
    help=t("rope_scaling.settings.head_size_help"),
)
base = c2.select_slider(
    t("rope_scaling.settings.base"),
    list(ch.BASES),
    value=10_000,
    key="rs_base",
    **URL,
    help=t("rope_scaling.settings.base_help"),
)
L = c3.select_slider(
    t("rope_scaling.settings.length"),
    list(ch.LENGTHS),
    value=4096,
    key="rs_L",
    **URL,
    help=t("rope_scaling.settings.length_help"),
)
s = c4.select_slider(
    t("rope_scaling.settings.stretch"),
    list(ch.STRETCH_FACTORS),
    value=4.0,
    key="rs_s",
    **URL,
    help=t("rope_scaling.settings.stretch_help"),
)
with st.expander(t("rope_scaling.settings.more")):
    e1, e2, e3 = st.columns(3)
    beta_fast = e1.select_slider(
        t("rope_scaling.settings.beta_fast"),
        list(ch.BETA_FAST),
        value=32.0,
        key="rs_beta_fast",
        **URL,
        help=t("rope_scaling.settings.beta_fast_help"),
    )
    beta_slow = e2.select_slider(
        t("rope_scaling.settings.beta_slow"),
        list(ch.BETA_SLOW),
        value=1.0,
        key="rs_beta_slow",
        **URL,
        help=t("rope_scaling.settings.beta_slow_help"),
    )
    gamma = e3.select_slider(
        t("rope_scaling.settings.gamma"),
        list(ch.GAMMAS),
        value=512.0,
        key="rs_gamma",
        **URL,
        help=t("rope_scaling.settings.gamma_help"),
    )
new_len = round(s * L)
st.markdown(t("rope_scaling.settings.summary", L=L, new_len=new_len, s=s))

fs = frequency_section(d, float(base), float(s), L, float(beta_fast), float(beta_slow), lang)
names = {k: ch.label(k, lang) for k in ch.ALL_SCHEMES}


# -- 1. frequencies ---------------------------------------------------------------------------------
@page.section(heading="rope_scaling.frequencies.subheader", owns=("rs_ratio", "rs_wavelength"))
def frequencies_part() -> None:
    """Owns the question and its charts' Numbers panels: reads the shared settings above. The prose
    (which scheme slows which pairs) and the two charts answer the question: they wait for Reveal
    (the charts folded)."""
    ask(fs.question)
    if answer_shown(fs.question, "rule"):
        page.prose("frequencies")
    with folded(fs.question, "charts"):
        f1, f2 = st.columns(2)
        with f1:
            plot(
                F.lines(
                    fs.view.pairs,
                    fs.ratios,
                    t("rope_scaling.frequencies.ratio_title"),
                    x_title=t("rope_scaling.frequencies.pair_axis"),
                    y_title=t("rope_scaling.frequencies.ratio_axis"),
                    dashed=(fs.ramp_name,),
                    height=400,
                ),
                "rs_ratio",
            )
        with f2:
            fig = F.lines(
                fs.view.pairs,
                fs.wavelengths,
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
    st.caption(fs.caption)
    page.prose("wavelengths")
    # Llama 3.1's own rule, beside these three, lives in the RoPE chapter's "RoPE in practice".
    st.page_link("pages/rotary/rope.py", label=t("rope_scaling.frequencies.llama3_link"), icon=":material/tune:")


frequencies_part()


# -- 2. angles --------------------------------------------------------------------------------------
@page.section(heading="rope_scaling.angles.subheader", prose="angles", owns=("rs_angles",))
def angles_section() -> None:
    """Owns only its chart's Numbers panel: reads the shared settings above."""
    fig = F.lines(
        fs.view.pairs,
        fs.angles,
        t("rope_scaling.angles.title"),
        x_title=t("rope_scaling.frequencies.pair_axis"),
        y_title=t("rope_scaling.angles.y_axis"),
        log_y=True,
        dashed=(fs.trained_name,),
        height=420,
    )
    plot(F.mark_lines(fig, y={t("rope_scaling.angles.full_turn"): 2 * math.pi}), "rs_angles")
    st.table(list(fs.rows))


angles_section()


# -- 3. logit against distance -------------------------------------------------------------------------
@page.section(heading="rope_scaling.distance.subheader", prose="distance", owns=("rs_distance",))
def distance_section() -> None:
    """Owns only its chart's Numbers panel: reads the shared settings above."""
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


distance_section()

# -- 4. on your sentence --------------------------------------------------------------------------------
st.header(t("rope_scaling.sentence.subheader"))
page.prose("sentence")
tokens = sentence_tokens()
toks = tokens.tokens
n = len(toks)


@page.section(owns=("rs_L_sentence", "rs_attention", "rs_by_distance", "rs_causal"))
def sentence_part() -> None:
    """Owns the sentence's trained length and the causal toggle: they change only this section."""
    g1, g2 = st.columns(2)
    L_sent = g1.slider(
        t("rope_scaling.sentence.length"),
        2,
        ch.MAX_SENTENCE_LENGTH,
        min(8, max(2, n // 2)),
        key="rs_L_sentence",
        **URL,
        help=t("rope_scaling.sentence.length_help"),
    )
    causal = g2.toggle(
        t("rope_scaling.sentence.causal"),
        value=True,
        key="rs_causal",
        **URL,
        help=t("rope_scaling.sentence.causal_help"),
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
        mark = run.trained_mark
        plot(F.mark_lines(fig, x={f"L − 1 = {mark}": mark} if mark is not None else {}), "rs_by_distance")
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
        page.prose("xpos-note")


sentence_part()

# The same schemes, configured the same way, on a real 30-layer model past its 8,192-token context.
st.page_link(SMOLLM2.page, label=t("smollm2.long.link"), icon=SMOLLM2.icon)

# RoPE's model trained on real text, stretched by each scheme that has no parameters of its own.
trained_panel(page.chapter)
