"""Chapter: RoPE — rotary position embedding (Su et al. 2021).

A page only shows: widgets → one cached call into explain/chapters/rope.py per section → figures →
st.*. The numbers, the question and every sentence that states a fact about them are computed there.

Longer than 500 lines: the chapter's core and its Going-deeper part (RoPE in practice: partial
rotary, angles in bfloat16, the Meta → Hugging Face permutation, Llama 3.1's scaling) are one page,
and each section is declared where it is drawn, so the file reads top to bottom as the learner sees it.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import rope as ch
from explain.chapters import rope_figures
from explain.chapters import rope_generator as gen
from explain.chapters import rope_practice as practice
from ui.cache import cached
from ui.common import plot, seed, sentence_tokens
from ui.derivation import proof, show_derivation
from ui.i18n import current, option_names, t
from ui.presenter import secondary
from ui.question import answer_shown, ask
from ui.section import open_chapter
from ui.trained import trained_panel
from ui.url_state import URL, Param

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
circles_section = cached(ch.circles_section)
identity_section = cached(ch.identity_section)
decay_curves = cached(ch.decay_curves)
layouts = cached(ch.layouts)
sentence_view = cached(ch.sentence_view)
skew_view = cached(gen.skew_view)
partial_section = cached(practice.partial_section)
precision_section = cached(practice.precision_section)
permute_section = cached(practice.permute_section)
llama3_section = cached(practice.llama3_section)

tokens = sentence_tokens()
toks = tokens.tokens
n_tok = len(toks)
lang = current()

# -- 0. where the rotation comes from ------------------------------------------------------------
st.header(t("rope.goal.subheader"))
page.prose("goal")
proof(t("rope.goal.proof"), "rope-from-the-goal", "rope_goal")
page.prose("complex")

# -- 1. rotation circles -----------------------------------------------------------------------
st.header(t("rope.circles.subheader"))
page.prose("circles")


@page.section(owns=("rope_circles", "rope_frame", "rope_m", "rope_move", "rope_n"))
def circles_part(qi: int, ki: int, d: int, base: int) -> None:
    """Owns the positions, what moves and the frame (the words, head size and base are shared)."""
    p1, p2, p3 = st.columns([2, 2, 3])
    m = p1.slider(
        t("rope.circles.query_pos"),
        0,
        ch.MAX_POS,
        2,
        key="rope_m",
        **URL,
        help=t("rope.circles.query_pos_help", max_pos=ch.MAX_POS),
    )
    n = p2.slider(
        t("rope.circles.key_pos"),
        0,
        ch.MAX_POS,
        6,
        key="rope_n",
        **URL,
        help=t("rope.circles.key_pos_help", max_pos=ch.MAX_POS),
    )
    MOVE = Param.choice("rope_move", ("both", "query"), default="both")
    # What moves stays in view in presenter mode: the prose asks the class to switch it.
    move = MOVE.widget(
        p3.radio,
        t("rope.circles.move"),
        MOVE.options,
        horizontal=True,
        format_func=option_names(MOVE.options, lambda v: t(f"rope.circles.move_{v}")),
        help=t("rope.circles.move_help", frames=ch.FRAMES),
    )
    with p3, secondary(t("rope.circles.animation")):
        # The keyboard's way through the animation: plotly's Play button and frame slider are SVG that
        # Tab never reaches; a slider's thumb takes the arrow keys. Shown paused on that frame.
        frame = st.slider(
            t("rope.circles.step_control"),
            0,
            ch.FRAMES - 1,
            0,
            key="rope_frame",
            help=t("rope.circles.step_control_help", frames=ch.FRAMES),
        )

    cs = circles_section(toks, seed(), d, float(base), qi, ki, m, n, move, lang)
    plot(
        rope_figures.rotation_circles(
            cs.circles.q_xy,
            cs.circles.k_xy,
            t("rope.circles.title"),
            panel_titles=cs.panel_titles,
            notes=cs.notes,
            frame_titles=cs.frame_titles,
            frame_labels=cs.frame_labels,
            slider_prefix=t("rope.circles.steps_played"),
            q_name=t("rope.circles.query_name", word=toks[qi]),
            k_name=t("rope.circles.key_name", word=toks[ki]),
            cols=4,
            start=frame,
        ),
        "rope_circles",
    )
    st.caption(t("rope.circles.caption"))
    st.markdown(t("rope.circles.gap", pairs=d // 2, frames=ch.FRAMES, gap=cs.gap))


@page.section(owns=("rope_identity", "rope_identity_rows", "rope_shift", "rope_size"))
def identity_part(qi: int, ki: int, d: int, base: int) -> None:
    """Owns the size, the shift and the question: they change only this map and its rows."""
    r1, r2 = st.columns(2)
    size = r1.slider(t("rope.identity.size"), 4, 64, 24, key="rope_size", **URL, help=t("rope.identity.size_help"))
    # Integer number inputs are linked by hand: Streamlit's own binding crashes on ?rope_shift=inf.
    shift = Param.integer("rope_shift", -ch.MAX_SHIFT, ch.MAX_SHIFT, default=1000).widget(
        r2.number_input,
        t("rope.identity.shift"),
        -ch.MAX_SHIFT,
        ch.MAX_SHIFT,
        1000,
        step=100,
        help=t("rope.identity.shift_help"),
    )
    ids = identity_section(toks, seed(), d, float(base), qi, ki, size, int(shift), lang)
    ask(ids.question)
    h1, h2 = st.columns(2)
    with h1:
        plot(
            F.matrix_heatmap(
                ids.view.logits,
                t("rope.identity.map_title", query=toks[qi], key=toks[ki]),
                x_title=t("rope.identity.key_position"),
                y_title=t("rope.identity.query_position"),
                value_label="q′·k′/√d",
                height=440,
            ),
            "rope_identity",
        )
    with h2:
        plot(
            F.lines(
                ids.view.offsets,
                ids.rows,
                t("rope.identity.rows_title"),
                x_title=t("rope.identity.offset_axis"),
                y_title=t("rope.identity.logit_axis"),
                markers=True,
                dashed=ids.dashed,
                height=400,
            ),
            "rope_identity_rows",
        )
    if answer_shown(ids.question, "summary"):  # it states the change after the shift: the answer
        st.markdown(
            t("rope.identity.summary", spread=ids.view.diagonal_spread, shift=int(shift), change=ids.view.max_change)
        )


# -- 3. long-term decay ---------------------------------------------------------------------------
@page.section(heading="rope.decay.subheader", prose="decay", owns=("rope_decay", "rope_decay_d", "rope_decay_dist"))
def decay_section() -> None:
    """Owns the decay head size and distance: they change only this chart."""
    e1, e2 = st.columns(2)
    d_decay = e1.select_slider(
        t("rope.decay.head_size"),
        [16, 32, 64, 128, 256],
        value=128,
        key="rope_decay_d",
        **URL,
        help=t("rope.decay.head_size_help"),
    )
    max_dist = e2.slider(
        t("rope.decay.distance"), 16, 4096, 512, key="rope_decay_dist", **URL, help=t("rope.decay.distance_help")
    )
    dec = decay_curves(d_decay, ch.DECAY_BASES, max_dist)
    plot(
        F.lines(
            dec.distances,
            {t("rope.decay.base_name", base=b): v for b, v in dec.curves.items()},
            t("rope.decay.title", d=d_decay),
            x_title=t("rope.decay.x_axis"),
            y_title=t("rope.decay.y_axis"),
            height=400,
        ),
        "rope_decay",
    )


# -- 4. the rotation matrix, and its two layouts ---------------------------------------------------
@page.section(
    heading="rope.matrix.subheader",
    prose="matrix",
    owns=(
        "rope_R_half",
        "rope_R_interleaved",
        "rope_matrix_d",
        "rope_matrix_m",
        "rope_skew_blocks",
        "rope_skew_generator",
        "rope_why_block",
        "rope_why1",
        "rope_why2",
        "rope_why3",
        "rope_why4",
    ),
)
def matrix_section(qi: int, ki: int, base: int) -> None:
    """Owns the matrix head size and position and the why-block panel (the layouts summary reads them)."""
    x1, x2 = st.columns(2)
    d_small = x1.select_slider(
        t("rope.matrix.head_size"),
        list(range(2, 17, 2)),
        value=8,
        key="rope_matrix_d",
        **URL,
        help=t("rope.matrix.head_size_help"),
    )
    m_mat = x2.slider(
        t("rope.matrix.position"),
        0,
        ch.MAX_POS,
        3,
        key="rope_matrix_m",
        **URL,
        help=t("rope.matrix.position_help", max_pos=ch.MAX_POS),
    )
    lay = layouts(toks, seed(), d_small, float(base), qi, ki, 16, m_mat)
    y1, y2 = st.columns(2)
    with y1:
        plot(
            F.matrix_heatmap(
                lay.R_interleaved,
                t("rope.matrix.title_interleaved", m=m_mat),
                x_title=t("rope.matrix.input_channel"),
                y_title=t("rope.matrix.output_channel"),
                value_label="R",
                zmax=1.0,
                height=420,
            ),
            "rope_R_interleaved",
        )
    with y2:
        plot(
            F.matrix_heatmap(
                lay.R_half,
                t("rope.matrix.title_half", m=m_mat),
                x_title=t("rope.matrix.input_channel"),
                y_title=t("rope.matrix.output_channel"),
                value_label="R",
                zmax=1.0,
                height=420,
            ),
            "rope_R_half",
        )

    # Why block-diagonal? Lazy: the 4×4 exponential takes sympy ~2 s the first time a server proves it,
    # so the panel is drawn only while it is open.
    why = st.expander(t("rope.block.expander"), key="rope_why_block", on_change="rerun", icon=":material/help:")
    if why.open:
        with why:
            page.prose("why-block")
            show_derivation("rope-skew-generator", key_prefix="rope_why1", compact=True)
            page.prose("why-block-2d")
            show_derivation("rope-skew-exponential-2d", key_prefix="rope_why2", compact=True)
            page.prose("why-block-theorem")
            sk = skew_view(seed())
            b1, b2 = st.columns(2)
            with b1:
                plot(
                    F.matrix_heatmap(
                        sk.generator,
                        t("rope.block.generator_title", d=gen.SKEW_D),
                        x_title=t("rope.matrix.input_channel"),
                        y_title=t("rope.matrix.output_channel"),
                        value_label="A",
                        height=360,
                    ),
                    "rope_skew_generator",
                )
            with b2:
                plot(
                    F.matrix_heatmap(
                        sk.blocks,
                        t("rope.block.blocks_title"),
                        x_title=t("rope.block.basis_axis"),
                        y_title=t("rope.block.basis_axis"),
                        value_label="QᵀAQ",
                        height=360,
                    ),
                    "rope_skew_blocks",
                )
            st.markdown(
                t(
                    "rope.block.numbers",
                    thetas=sk.frequencies_text,
                    off_block=sk.off_block,
                    orthogonality=sk.orthogonality_gap,
                    m=sk.m,
                    exponential=sk.exponential_gap,
                    relative=sk.relative_gap,
                )
            )
            show_derivation("rope-block-exponential", key_prefix="rope_why3", compact=True)
            page.prose("why-block-absorb")
            show_derivation("rope-absorb-basis", key_prefix="rope_why4", compact=True)
            page.prose("why-block-end")

    st.header(t("rope.layouts.subheader"))
    page.prose("layouts")
    st.markdown(
        t(
            "rope.layouts.summary",
            perm=lay.permutation_text,
            layout_gap=lay.layout_gap,
            logit_gap=lay.logit_gap,
            same_weights_gap=lay.same_weights_gap,
        )
    )


@page.section(owns=("rope_base", "rope_d", "rope_k_word", "rope_proof2d", "rope_proofc", "rope_proofd", "rope_q_word"))
def rotation_part() -> None:
    """Owns the two words, the head size and the base, which sections 1, 2 and 4 read (and nothing
    else does): moving one reruns these sections only, not the page's top nor its sentence section.
    Each section inside is a fragment of its own for its own controls."""
    w1, w2, w3, w4 = st.columns([3, 3, 2, 2])
    # The word pickers hold token indices (language-neutral); a shorter sentence clamps them.
    word = option_names(range(n_tok), lambda i: f"{i} · {toks[i]}")
    Q_WORD = Param.integer("rope_q_word", 0, ch.MAX_WORDS - 1, default=min(1, n_tok - 1))
    K_WORD = Param.integer("rope_k_word", 0, ch.MAX_WORDS - 1, default=min(5, n_tok - 1))
    for picker in (Q_WORD, K_WORD):
        picker.settle(range(n_tok))  # a shorter sentence clamps the word; the widget then needs no index=
    qi = Q_WORD.widget(
        w1.selectbox,
        t("rope.circles.query_word"),
        list(range(n_tok)),
        format_func=word,
        help=t("rope.circles.query_word_help"),
    )
    ki = K_WORD.widget(
        w2.selectbox,
        t("rope.circles.key_word"),
        list(range(n_tok)),
        format_func=word,
        help=t("rope.circles.key_word_help"),
    )
    d = w3.select_slider(
        t("rope.circles.head_size"),
        list(range(2, 33, 2)),
        value=16,
        key="rope_d",
        **URL,
        help=t("rope.circles.head_size_help"),
    )
    base = w4.select_slider(
        t("rope.circles.base"), list(ch.BASES), value=10_000, key="rope_base", **URL, help=t("rope.circles.base_help")
    )
    circles_part(qi, ki, d, base)

    # -- 2. the relative identity, in numbers -------------------------------------------------------
    st.header(t("rope.identity.subheader"))
    page.prose("identity")
    proof(t("rope.identity.proof_2d"), "rope-matrix-2d", "rope_proof2d")
    proof(t("rope.identity.proof_d"), "rope-relative-block", "rope_proofd")
    proof(t("rope.identity.proof_complex"), "rope-complex-2d", "rope_proofc")
    identity_part(qi, ki, d, base)
    decay_section()
    matrix_section(qi, ki, base)


rotation_part()


# -- 5. on your sentence ---------------------------------------------------------------------------
@page.section(
    heading="rope.sentence.subheader",
    prose="sentence",
    owns=("rope_attention", "rope_causal", "rope_offset", "rope_terms", "rope_terms_grid"),
)
def sentence_section() -> None:
    """Owns the causal toggle, the offset and the terms toggle: they change only this section."""
    s1, s2 = st.columns(2)
    causal = s1.toggle(
        t("rope.sentence.causal"), value=False, key="rope_causal", **URL, help=t("rope.sentence.causal_help")
    )
    offset = Param.integer("rope_offset", 0, ch.MAX_OFFSET, default=0).widget(
        s2.number_input, t("rope.sentence.offset"), 0, ch.MAX_OFFSET, 0, step=10, help=t("rope.sentence.offset_help")
    )
    sv = sentence_view(toks, seed(), causal, int(offset))
    plot(
        F.token_heatmap_grid(
            sv.panels,
            toks,
            t("rope.sentence.title"),
            panel_titles=[t("rope.sentence.without"), t("rope.sentence.with_rope", offset=sv.offset)],
            kind="weights",
            value_label=t("rope.sentence.weight"),
            cols=2,
            panel_height=460,
        ),
        "rope_attention",
    )
    if sv.offset:
        st.markdown(t("rope.sentence.change", offset=sv.offset, change=sv.change))
    else:
        st.caption(t("rope.sentence.hint"))

    page.prose("terms")
    if st.toggle(t("rope.sentence.terms_toggle"), value=True, key="rope_terms", **URL):
        plot(
            F.token_heatmap_grid(
                sv.terms,
                toks,
                t("rope.sentence.terms_title"),
                panel_titles=[t("rope.sentence.content"), t("rope.sentence.position"), t("rope.sentence.sum")],
                kind="signed",
                value_label=t("rope.sentence.logit"),
                cols=3,
                panel_height=380,
            ),
            "rope_terms_grid",
        )


sentence_section()


# -- 6. going deeper: RoPE in practice, what real checkpoints add (explain/chapters/rope_practice.py) ----
@page.section(heading="rope.practice.subheader", prose="practice", deeper=True)
def practice_intro() -> None:
    """The part's heading and its opening prose, first in the chapter's Going-deeper fold."""


practice_intro()


@page.section(
    heading="rope.practice.partial.subheader",
    level=3,
    deeper=True,
    prose="practice-partial",
    owns=("rope_partial", "rope_partial_r"),
)
def partial_part() -> None:
    """Owns the rotated size r: it changes only this chart and its sentence. The words are the
    word pickers' defaults (the first two of the sentence's words they start on)."""
    r = st.select_slider(
        t("rope.practice.partial.r"),
        list(practice.ROTARY_DIMS),
        value=16,
        key="rope_partial_r",
        **URL,
        help=t("rope.practice.partial.r_help"),
    )
    qi, ki = min(1, n_tok - 1), min(5, n_tok - 1)
    ps = partial_section(toks, seed(), int(r), qi, ki, lang)
    plot(
        F.lines(
            ps.offsets,
            ps.curves,
            t("rope.practice.partial.title", query=toks[qi], key=toks[ki], r=ps.r, d=ps.d),
            x_title=t("rope.practice.partial.x_axis"),
            y_title=t("rope.practice.partial.y_axis"),
            height=400,
        ),
        "rope_partial",
    )
    st.markdown(ps.sentence)


partial_part()


@page.section(
    heading="rope.practice.precision.subheader",
    level=3,
    deeper=True,
    prose="practice-precision",
    owns=("rope_precision", "rope_precision_base", "rope_precision_length"),
)
def precision_part() -> None:
    """Owns the base and the largest position: they change only this chart and its sentences."""
    c1, c2 = st.columns(2)
    base = c1.select_slider(
        t("rope.practice.precision.base"),
        list(practice.PRECISION_BASES),
        value=500_000,
        key="rope_precision_base",
        format_func="{:,}".format,
        **URL,
        help=t("rope.practice.precision.base_help"),
    )
    length = c2.select_slider(
        t("rope.practice.precision.length"),
        list(practice.PRECISION_LENGTHS),
        value=131_072,
        key="rope_precision_length",
        format_func="{:,}".format,
        **URL,
        help=t("rope.practice.precision.length_help"),
    )
    pr = precision_section(int(base), int(length), lang)
    plot(
        F.lines(
            pr.positions,
            pr.curves,
            t("rope.practice.precision.title", base=int(base)),
            x_title=t("rope.practice.precision.x_axis"),
            y_title=t("rope.practice.precision.y_axis"),
            log_x=True,
            log_y=True,
            height=420,
        ),
        "rope_precision",
    )
    for sentence in pr.sentences:
        st.markdown(sentence)


precision_part()


@page.section(
    heading="rope.practice.permute.subheader",
    level=3,
    deeper=True,
    prose="practice-permute",
    owns=("rope_permute", "rope_permute_d", "rope_permute_heads"),
)
def permute_part() -> None:
    """Owns the head size and the number of heads: they change only this map and its sentence."""
    c1, c2 = st.columns(2)
    d = c1.select_slider(
        t("rope.practice.permute.d"),
        list(practice.PERMUTE_HEAD_SIZES),
        value=8,
        key="rope_permute_d",
        **URL,
        help=t("rope.practice.permute.d_help"),
    )
    heads = c2.select_slider(
        t("rope.practice.permute.heads"),
        list(practice.PERMUTE_HEADS),
        value=2,
        key="rope_permute_heads",
        **URL,
        help=t("rope.practice.permute.heads_help"),
    )
    pm = permute_section(toks, seed(), int(d), int(heads), lang)
    plot(
        F.matrix_heatmap(
            pm.matrix,
            t("rope.practice.permute.title", heads=int(heads), d=int(d)),
            x_title=t("rope.practice.permute.x_axis"),
            y_title=t("rope.practice.permute.y_axis"),
            value_label=t("rope.practice.permute.value"),
            kind="weights",
            height=420,
        ),
        "rope_permute",
    )
    st.markdown(pm.sentence)


permute_part()


@page.section(
    heading="rope.practice.llama3.subheader",
    level=3,
    deeper=True,
    prose="practice-llama3",
    owns=("rope_llama3", "rope_llama3_factor"),
)
def llama3_part() -> None:
    """Owns the factor: it changes only this chart and its sentence."""
    factor = st.select_slider(
        t("rope.practice.llama3.factor"),
        list(practice.LLAMA3_FACTORS),
        value=8,
        key="rope_llama3_factor",
        **URL,
        help=t("rope.practice.llama3.factor_help"),
    )
    ls = llama3_section(int(factor), lang)
    fig = F.lines(
        ls.wavelengths,
        ls.slowdown,
        t("rope.practice.llama3.title", factor=int(factor)),
        x_title=t("rope.practice.llama3.x_axis"),
        y_title=t("rope.practice.llama3.y_axis"),
        log_x=True,
        height=420,
    )
    plot(F.mark_lines(fig, x=ls.marks), "rope_llama3")
    st.markdown(ls.sentence)
    st.page_link("pages/rotary/rope_scaling.py", label=t("rope.practice.llama3.link"), icon=":material/open_in_full:")


llama3_part()

trained_panel(page.chapter)
