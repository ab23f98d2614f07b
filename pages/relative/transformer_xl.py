"""Chapter: Transformer-XL — four terms, u and v, and the rel-shift trick.

A page only shows: widgets → one cached call into explain/chapters/transformer_xl.py per section →
figures → st.*. The numbers and the question are computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import transformer_xl as ch
from explain.chapters import transformer_xl_figures
from explain.chapters.common import sign_text
from ui import panels
from ui.cache import cached
from ui.common import control_row, plot, seed, sentence, sentence_tokens
from ui.derivation import proof
from ui.i18n import current, option_names, t
from ui.question import answer_shown, ask, revealed
from ui.section import open_chapter
from ui.url_state import URL, Param

N_HEADS = ch.N_HEADS
SIGN = sign_text(ch.CHAPTER.encodings[0])
page = open_chapter(ch.CHAPTER)
page.prose("intro")
page.prose("equation")
page.prose("shared")
proof(t("transformer_xl.derivation"), "absolute-pe-attention", "xl_proof")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
term_maps = cached(ch.term_maps)
terms_question = cached(ch.terms_question)
global_position_bias = cached(ch.global_position_bias)
rel_shift_demo = cached(ch.rel_shift_demo)
layout_check = cached(ch.layout_check)


def term_title(term: str) -> str:
    return t(f"transformer_xl.term.{term}")


st.header(t("transformer_xl.terms.subheader"))
page.prose("terms")
tokens = sentence_tokens()
toks = list(tokens.tokens)
lang = current()


@page.section(owns=("xl_terms", "xl_sum", "xl_weights", "xl_d_curve", "xl_head", "xl_causal", "xl_on_*"))
def terms_section(toks: list[str]) -> None:
    """Owns the head, causal and four term switches, the question and the Numbers panels; it holds the
    distance section too, whose curve marks the causal side (the only other reader of a switch)."""
    n = len(toks)
    row = control_row()
    HEAD = Param.integer("xl_head", 0, N_HEADS - 1, default=0)
    with row:
        head = HEAD.widget(
            st.selectbox,
            t("transformer_xl.terms.head"),
            list(range(N_HEADS)),
            format_func=option_names(range(N_HEADS), lambda h: t("transformer_xl.terms.head_option", h=h + 1)),
            help=t("transformer_xl.terms.head_help", n=N_HEADS),
        )
    causal = row.toggle(
        t("transformer_xl.terms.causal"), value=True, key="xl_causal", **URL, help=t("transformer_xl.terms.causal_help")
    )
    page.prose("switches")
    sw = st.columns(4)
    switches = tuple(
        sw[k].toggle(f"({term})", value=True, key=f"xl_on_{term}", help=term_title(term), **URL)
        for k, term in enumerate(ch.TERMS)
    )
    m = term_maps(sentence(), seed(), head, causal, switches, n_heads=N_HEADS)

    # Which term ignores the words? Measured in explain/: the same layer on two texts with no word in common.
    question = terms_question(seed(), head, causal, lang)
    if question is not None:
        ask(question)

    panel_titles = [
        term_title(term) + ("" if on else t("transformer_xl.terms.switched_off"))
        for term, on in zip(ch.TERMS, switches, strict=False)
    ]
    plot(
        F.token_heatmap_grid(
            m.stacked,
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
        panels.token_map(
            m.total,
            toks,
            t("transformer_xl.terms.logits_title", terms=" + ".join(on) if on else t("transformer_xl.terms.nothing")),
            "signed",
            t("transformer_xl.terms.logit"),
            "xl_sum",
        )
    with s2:
        panels.token_map(
            m.weights,
            toks,
            t("transformer_xl.terms.weights_title"),
            "weights",
            t("transformer_xl.terms.weight"),
            "xl_weights",
        )

    # The heading and the prose name term (d) as the one without words, the question's answer: before
    # Reveal the heading is neutral and the prose waits.
    shown = revealed(question)
    st.header(t("transformer_xl.distance.subheader" if shown else "transformer_xl.distance.subheader_waiting"))
    if answer_shown(question, "distance"):
        page.prose("distance")
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


terms_section(toks)


@page.section(
    heading="transformer_xl.shift.subheader",
    prose="relshift",
    owns=("xl_step_grid", "xl_gather", "xl_qlen", "xl_mlen", "xl_step"),
    deeper=True,  # the relative-shift trick: how the layer computes term (b) fast, not what it means
)
def relshift_section() -> None:
    """Owns q_len, m_len and the step slider (nothing else reads them) and the grids' Numbers panels."""
    r1, r2, r3 = st.columns([1, 1, 2])
    qlen = r1.slider(
        t("transformer_xl.shift.qlen"), 2, 6, 4, key="xl_qlen", **URL, help=t("transformer_xl.shift.qlen_help")
    )
    mlen = r2.slider(
        t("transformer_xl.shift.mlen"), 0, 3, 0, key="xl_mlen", **URL, help=t("transformer_xl.shift.mlen_help")
    )
    step_names = {s: t(f"transformer_xl.shift.name.{s}") for s in ch.STEPS}
    STEP = Param.choice("xl_step", ch.STEPS, default="raw")
    with r3:
        stage_name = STEP.widget(
            st.select_slider,
            t("transformer_xl.shift.step"),
            ch.STEPS,
            format_func=option_names(ch.STEPS, step_names.__getitem__),
            help=t("transformer_xl.shift.step_help"),
        )
    demo = rel_shift_demo(qlen, mlen)
    stage = demo.stage(stage_name)
    page.prose(f"step-{stage_name}")
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
    zmin, zmax = demo.distance_range
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
                veil=demo.invalid if stage_name == "result" else None,
                value_label=f"δ = {SIGN}",
                zmin=zmin,
                zmax=zmax,
            ),
            "xl_step_grid",
        )
    with g2:
        plot(
            transformer_xl_figures.labelled_grid(
                demo.gathered_distance,
                demo.gathered_labels,
                t("transformer_xl.shift.gather_title"),
                x_title=t("transformer_xl.shift.key"),
                y_title=t("transformer_xl.shift.query"),
                x_ticks=[f"j={j}" for j in range(klen)],
                y_ticks=[f"i={i}" for i in range(qlen)],
                veil=demo.invalid,
                value_label=f"δ = {SIGN}",
                zmin=zmin,
                zmax=zmax,
            ),
            "xl_gather",
        )
    if demo.matches_gather:
        st.success(t("transformer_xl.shift.matches", n_valid=demo.n_valid, n_bad=demo.n_invalid))
    else:
        st.error(t("transformer_xl.shift.differs"))
    page.prose("bidirectional")


relshift_section()


# Going deeper: which memory layout the relative vectors need, an implementation's concern.
@page.section(heading="transformer_xl.layout.subheader", prose="layout", deeper=True)
def layout_section() -> None:
    """Owns no widget or chart: the layout check's two metrics, in the fold."""
    lc = layout_check(seed())
    l1, l2 = st.columns(2)
    l1.metric(t("transformer_xl.layout.same"), f"{lc.same_weights:.3g}")
    l2.metric(t("transformer_xl.layout.permuted"), f"{lc.permuted_weights:.1e}")


layout_section()
