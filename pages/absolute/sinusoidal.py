"""Chapter: Sinusoidal APE (Vaswani et al. 2017).

A page only shows: widgets → one cached call into explain/chapters/sinusoidal.py per section →
figures → st.*. The numbers and the question are computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import sinusoidal as ch
from explain.takeaway import takeaway_sentence
from ui.cache import cached
from ui.common import plot, seed, sentence, sentence_tokens
from ui.derivation import proof
from ui.i18n import current, t
from ui.presenter import secondary
from ui.question import answer_shown, ask, folded
from ui.section import open_chapter
from ui.trained import trained_panel
from ui.url_state import URL, Param

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
pe_matrix = cached(ch.pe_matrix)
waves = cached(ch.waves)
wavelength_section = cached(ch.wavelength_section)
wavelength_question = cached(ch.wavelength_question)
binary_view = cached(ch.binary_view)
dot_view = cached(ch.dot_view)
shift_check = cached(ch.shift_check)
layouts_view = cached(ch.layouts_view)
t2t_comparison = cached(ch.t2t_comparison)
sentence_view = cached(ch.sentence_view)
lang = current()


@page.section(heading="sinusoidal.heading.matrix", prose="matrix", owns=("pe_matrix",))
def matrix_section(n: int, d: int, base_f: float) -> None:
    """The PE matrix's Numbers panel: opening it reruns this section only."""
    plot(
        F.matrix_heatmap(
            pe_matrix(n, d, base_f),
            t("sinusoidal.matrix.title", n=n, d=d),
            x_title=t("sinusoidal.axis.channel_sin_cos"),
            y_title=t("sinusoidal.axis.position"),
            value_label=t("sinusoidal.axis.pe"),
            height=460,
        ),
        "pe_matrix",
    )


@page.section(heading="sinusoidal.heading.waves", prose="waves", owns=("waves", "chans"))
def waves_section(n: int, d: int, base_f: float) -> None:
    """Owns the channel picker (nothing else reads it) and the waves chart's Numbers panel."""
    with secondary(t("sinusoidal.control.channels_box")):
        chans = st.multiselect(
            t("sinusoidal.control.channels"),
            list(range(d)),
            default=ch.default_channels(d),
            key="chans",
            max_selections=6,
            help=t("sinusoidal.control.channels_help"),
        )
    wv = waves(n, d, base_f, tuple(chans))
    sin, cos = t("sinusoidal.waves.sin"), t("sinusoidal.waves.cos")
    plot(
        F.lines(
            wv.positions,
            {
                t("sinusoidal.waves.trace", c=c, kind=sin if wv.is_sin(c) else cos, pair=wv.pair(c)): column
                for c, column in wv.columns.items()
            },
            t("sinusoidal.waves.title"),
            x_title=t("sinusoidal.axis.position"),
            y_title=t("sinusoidal.waves.y"),
        ),
        "waves",
    )


@page.section(heading="sinusoidal.heading.wavelengths", owns=("wavelengths",))
def wavelengths_section(n: int, d: int, base_f: float) -> None:
    """Owns the question's radio and Reveal and the wavelengths chart's Numbers panel. The prose and
    the chart answer the question: they wait for Reveal (folded, for the chart)."""
    q = wavelength_question(d, base_f, lang)
    if q is not None:
        ask(q)
    if answer_shown(q, "rule"):  # 'the wavelengths grow geometrically' answers it
        page.prose("wavelengths")
    wl = wavelength_section(n, d, base_f)
    length = t("sinusoidal.wavelengths.length")
    with folded(q, "wavelengths"):  # the curve climbs from pair to pair: the answer itself
        plot(
            F.lines(
                wl.pairs,
                {t("sinusoidal.wavelengths.curve"): wl.wavelengths, length: wl.length_line},
                t("sinusoidal.wavelengths.title"),
                x_title=t("sinusoidal.wavelengths.x"),
                y_title=t("sinusoidal.wavelengths.y"),
                log_y=True,
                dashed=(length,),
            ),
            "wavelengths",
        )


@page.section(heading="sinusoidal.heading.binary", prose="binary", owns=("binary", "binary_pe"))
def binary_section(n: int, base_f: float) -> None:
    """The binary and PE maps' Numbers panels: opening one reruns this section only."""
    bv = binary_view(n, base_f)
    b1, b2 = st.columns(2)
    with b1:
        plot(
            F.matrix_heatmap(
                bv.digits,
                t("sinusoidal.binary.title", last=bv.last),
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
                bv.pe,
                t("sinusoidal.binary.pe_title", last=bv.last),
                x_title=t("sinusoidal.axis.channel_sin_cos"),
                y_title=t("sinusoidal.axis.position"),
                value_label=t("sinusoidal.axis.pe"),
                height=420,
            ),
            "binary_pe",
        )


@page.section(heading="sinusoidal.heading.dot", prose="dot", owns=("similarity", "dot_vs_distance", "sin-dot"))
def dot_section(n: int, d: int, base_f: float) -> None:
    """The dot-product charts' Numbers panels and the proof's panel: each reruns this section only."""
    dp = dot_view(n, d, base_f)
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
        closed = t("sinusoidal.dot.closed_form")
        curves = {t("sinusoidal.dot.measured", p=p): c for p, c in dp.from_rows.items()}
        plot(
            F.lines(
                dp.offsets,
                {**curves, closed: dp.closed_form},
                t("sinusoidal.dot.title"),
                x_title=t("sinusoidal.dot.offset"),
                y_title=t("sinusoidal.dot.curve_y"),
                dashed=(closed,),
                height=440,
            ),
            "dot_vs_distance",
        )
    st.markdown(t("sinusoidal.dot.gap", gap=dp.gap))
    proof(t("sinusoidal.dot.proof"), "sinusoidal-dot-product", "sin-dot")


@page.section(heading="sinusoidal.heading.shift", prose="shift", owns=("shift_vectors", "T", "p", "delta", "sin-shift"))
def shift_section(d: int, base_f: float) -> None:
    """Owns p and Δ (nothing else reads them), the shift charts' Numbers panels and the proof's panel."""
    k1, k2 = st.columns(2)
    # Integer number inputs are linked by hand: Streamlit's own binding crashes on ?p=inf.
    p = Param.integer("p", 0, 100_000, default=5).widget(
        k1.number_input, t("sinusoidal.control.p"), 0, 100_000, 5, help=t("sinusoidal.control.p_help")
    )
    delta = Param.integer("delta", -100_000, 100_000, default=3).widget(
        k2.number_input, t("sinusoidal.control.delta"), -100_000, 100_000, 3, help=t("sinusoidal.control.delta_help")
    )
    chk = shift_check(int(p), int(delta), d, base_f)
    t1, t2 = st.columns(2)
    with t1:
        rotated = t("sinusoidal.shift.rotated")
        plot(
            F.lines(
                chk.channels,
                {t("sinusoidal.shift.formula"): chk.pe_shifted_shown, rotated: chk.rotated_shown},
                t("sinusoidal.shift.title", show=chk.channels.size),
                x_title=t("sinusoidal.axis.channel"),
                y_title=t("sinusoidal.shift.value"),
                markers=True,
                dashed=(rotated,),
            ),
            "shift_vectors",
        )
    with t2:
        plot(
            F.matrix_heatmap(
                chk.T_shown,
                t("sinusoidal.shift.t_title", ts=chk.block),
                x_title=t("sinusoidal.shift.input_channel"),
                y_title=t("sinusoidal.shift.output_channel"),
                value_label="T",
                height=380,
            ),
            "T",
        )
    st.markdown(t("sinusoidal.shift.difference", d=d, diff=chk.max_abs_diff))
    proof(t("sinusoidal.shift.proof"), "sinusoidal-shift", "sin-shift")


@page.section(
    heading="sinusoidal.heading.layouts", prose="layouts", owns=("interleaved", "concatenated", "t2t_frequencies")
)
def layouts_section(n: int, d: int, base: int, base_f: float) -> None:
    """The layout and frequency charts' Numbers panels: opening one reruns this section only."""
    lay = layouts_view(n, d, base_f)
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
    st.markdown(
        t(
            "sinusoidal.layouts.permutation",
            perm=lay.permutation_text(),
            permuted=lay.max_abs_diff,
            unpermuted=lay.max_abs_diff_unpermuted,
        )
    )
    page.prose("t2t")
    tc = t2t_comparison(n, d, base_f)
    paper, t2t = t("sinusoidal.t2t.paper"), t("sinusoidal.t2t.t2t")
    plot(
        F.lines(
            tc.pairs,
            {paper: tc.omega_paper, t2t: tc.omega_t2t},
            t("sinusoidal.t2t.title", d=d, base=int(base)),
            x_title=t("sinusoidal.wavelengths.x"),
            y_title=t("sinusoidal.t2t.y"),
            log_y=True,
            markers=d <= 64,
            dashed=(t2t,),
        ),
        "t2t_frequencies",
    )
    if tc.same:
        st.markdown(t("sinusoidal.t2t.same", d=d))
    else:
        st.markdown(
            t(
                "sinusoidal.t2t.differ",
                d=d,
                base=int(base),
                pair=tc.slowest_pair,
                ratio=tc.max_ratio,
                paper=float(tc.omega_paper[tc.slowest_pair]),
                t2t=float(tc.omega_t2t[tc.slowest_pair]),
                rows=tc.positions,
                last=tc.positions - 1,
                diff=tc.table_diff,
            )
        )


@page.section(owns=("n", "base", "d"))
def settings_part() -> None:
    """Owns n, d and the base, which every section from the PE matrix to the layouts reads (and
    nothing after them does): moving one reruns those sections only, not the frame, the page's
    top, nor the sentence's three charts below. Each section inside is a fragment of its own for its
    own controls and Numbers panels."""
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
    d, base_f = int(d), float(base)
    matrix_section(n, d, base_f)
    left, right = st.columns(2)
    with left:
        waves_section(n, d, base_f)
    with right:
        wavelengths_section(n, d, base_f)
    binary_section(n, base_f)
    dot_section(n, d, base_f)
    shift_section(d, base_f)
    layouts_section(n, d, base, base_f)


settings_part()

st.header(t("sinusoidal.heading.sentence"))
page.prose("sentence")
sentence_tokens()  # stops the page with a note when there is no text


@page.section(owns=("sentence_pe", "att_nope", "att_sin"))
def sentence_section() -> None:
    """The sentence charts' Numbers panels: opening one reruns these three charts only."""
    sv = sentence_view(sentence(), seed())
    plot(
        F.token_heatmap(
            sv.added,
            sv.tokens,
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
                sv.weights_nope,
                sv.tokens,
                sv.tokens,
                t("sinusoidal.sentence.nope"),
                kind="weights",
                value_label=t("sinusoidal.axis.weight"),
            ),
            "att_nope",
        )
    with a2:
        plot(
            F.token_heatmap(
                sv.weights_sinusoidal,
                sv.tokens,
                sv.tokens,
                t("sinusoidal.sentence.sinusoidal"),
                kind="weights",
                value_label=t("sinusoidal.axis.weight"),
            ),
            "att_sin",
        )
    st.markdown(takeaway_sentence(sv.weights_sinusoidal, sv.tokens, without=sv.weights_nope))


sentence_section()

trained_panel(page.chapter)
