"""Chapter: ALiBi and NoPE — a linear distance penalty per head; no encoding at all under a causal mask.

A page only shows: widgets → one call into explain/chapters/alibi.py per section (cached, bounded)
→ figures → st.*. The numbers, the question and every sentence that states a fact about them are
computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import alibi as ch
from explain.chapters import alibi_figures
from explain.chapters.common import sign_text
from explain.takeaway import takeaway_sentence
from ui import panels
from ui.cache import cached
from ui.common import control_row, inline_tokens, plot, seed, sentence, sentence_tokens
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
slopes_section = cached(ch.slopes_section)
heads_view = cached(ch.heads_view)
code_form_view = cached(ch.code_form_view)
extrapolation = cached(ch.extrapolation)
nope_symmetry = cached(ch.nope_symmetry)
counting = cached(ch.counting)

tokens = sentence_tokens()
text = sentence()

sign = sign_text(ch.CHAPTER.encodings[0])  # "i − j (query − key)" in the learner's language
query_i, key_j = t("figures.query_i"), t("figures.key_j")  # the grids' axis titles


# ------------------------------------------------------------------------------------- slopes
@page.section(owns=("alibi_log_slopes", "slopes"))
def slopes_part(H: int, sec: ch.SlopesSection, colors: list[str]) -> None:
    """Owns the question and the log-axis checkbox: they change only the slopes chart. The slope rule,
    its note and the chart answer the question: they wait for Reveal (folded, for the chart)."""
    sv = sec.view
    st.header(t("alibi.slopes.subheader"))
    if sec.question is not None:
        ask(sec.question, whole_page=True)  # the bias grid below, another section, waits too
    shown = answer_shown(sec.question, "rule")  # the rule m_h = 2^(−8h/H) answers it
    if shown:
        page.prose("slopes")
    with secondary(t("alibi.slopes.axis")):
        log_slopes = st.checkbox(
            t("alibi.slopes.log"), value=True, key="alibi_log_slopes", **URL, help=t("alibi.slopes.log_help")
        )
    with folded(sec.question, "slopes"):  # the bars fall from head to head: the answer itself
        plot(
            alibi_figures.head_bars(
                sv.slopes,
                t("alibi.slopes.title", H=H),
                y_title=t("alibi.slopes.y_title"),
                colors=colors,
                text=list(sv.labels),
                log_y=log_slopes,
                hover=list(sec.hover),
            ),
            "slopes",
        )
    if sec.note and shown:
        st.info(sec.note)


# --------------------------------------------------------------------------------------- bias
@page.section(owns=("bias_grid",))
def bias_part(causal: bool, sec: ch.SlopesSection, hv: ch.HeadsView, cut: str) -> None:
    """Owns only its chart's Numbers panel: reads the heads and the mask above. Its panels, darkest
    for head 1, answer the slopes question: folded until Reveal (which reruns the whole page)."""
    bias_form = t("alibi.bias.form_causal" if causal else "alibi.bias.form_bidirectional")
    with folded(sec.question, "bias"):
        plot(
            F.token_heatmap_grid(
                hv.grid(hv.bias),
                hv.tokens[: ch.GRID],
                t("alibi.bias.title", form=bias_form, cut=cut),
                panel_titles=list(sec.head_names),
                value_label=t("alibi.bias_value"),
                cols=4,
                row_title=query_i,
                col_title=key_j,
            ),
            "bias_grid",
        )


# --------------------------------------------------------------------------------- attention
@page.section(owns=("alibi_head", "att_grid", "att_pair", "code_bias", "code_weights"))
def attention_section(H: int, sec: ch.SlopesSection, hv: ch.HeadsView, cut: str) -> None:
    """Owns the head picker, which the code section below also reads, so both are in here."""
    sv = sec.view
    st.header(t("alibi.attention.subheader"))
    page.prose("attention")
    HEAD = Param.integer("alibi_head", 1, ch.MAX_HEADS, default=1)
    HEAD.settle(range(1, H + 1))  # fewer heads clamp the chosen one
    head = HEAD.widget(
        st.selectbox,
        t("alibi.attention.head"),
        list(range(1, H + 1)),
        format_func=lambda h: sec.head_names[h - 1],
        help=t("alibi.attention.head_help", H=H),
    )
    weight = t("alibi.weight_value")
    panels.pair(
        hv.pair(head),
        hv.tokens,
        t("alibi.attention.pair_title", head=head),
        [t("alibi.attention.with_alibi", m=sv.labels[head - 1]), t("alibi.attention.without")],
        weight,
        "att_pair",
        weights=True,
    )
    pair = hv.pair(head)  # (with ALiBi, without)
    st.markdown(takeaway_sentence(pair[0], hv.tokens, without=pair[1]))
    plot(
        F.token_heatmap_grid(
            hv.grid(hv.weights),
            hv.tokens[: ch.GRID],
            t("alibi.attention.grid_title", cut=cut),
            panel_titles=list(sec.head_names),
            kind="weights",
            value_label=weight,
            cols=4,
            row_title=query_i,
            col_title=key_j,
        ),
        "att_grid",
    )

    # ---------------------------------------------------------------------------- +m·j in the code
    st.header(t("alibi.code.subheader"))
    page.prose("code")
    cf = code_form_view(text, seed(), H, head - 1)
    panels.pair(
        cf.bias_pair,
        cf.tokens,
        t("alibi.code.title", head=head, m=sv.labels[head - 1]),
        [t("alibi.code.paper"), t("alibi.code.code")],
        t("alibi.bias_value"),
        "code_bias",
    )
    m1, m2 = st.columns(2)
    m1.metric(t("alibi.code.metric_causal"), f"{cf.diff_causal:.1e}")
    m2.metric(t("alibi.code.metric_bidirectional"), f"{cf.diff_bidirectional:.3f}")
    page.prose("code-unmasked")
    panels.pair(
        cf.weights_pair_bidirectional,
        cf.tokens,
        t("alibi.code.weights_title", head=head),
        [t("alibi.code.symmetric"), t("alibi.code.code_form")],
        weight,
        "code_weights",
        weights=True,
    )
    st.markdown(t("alibi.code.last_key", head=head, code=cf.last_key_mass_code, symmetric=cf.last_key_mass_symmetric))


# ------------------------------------------------------------------------ past the training length
@page.section(
    owns=("alibi_log_x", "alibi_scaled", "alibi_test_len", "alibi_train_len", "alibi_windows", "penalty", "within")
)
def extrapolation_section(H: int, sec: ch.SlopesSection, colors: list[str]) -> None:
    """Owns the two lengths and the axis checkboxes: they change only this section."""
    sv = sec.view
    st.header(t("alibi.extrapolation.subheader"))
    page.prose("extrapolation")
    e1, e2 = st.columns(2)
    train_len = e1.slider(
        t("alibi.extrapolation.train_len"),
        4,
        512,
        32,
        key="alibi_train_len",
        **URL,
        help=t("alibi.extrapolation.train_len_help"),
    )
    test_len = e2.slider(
        t("alibi.extrapolation.test_len"),
        8,
        ch.MAX_TEST_LEN,
        512,
        step=8,
        key="alibi_test_len",
        **URL,
        help=t("alibi.extrapolation.test_len_help", max=ch.MAX_TEST_LEN),
    )
    with secondary(t("alibi.extrapolation.axis")):
        row = control_row()
    log_x = row.checkbox(
        t("alibi.extrapolation.log_x"), value=True, key="alibi_log_x", **URL, help=t("alibi.extrapolation.log_x_help")
    )
    # Not with the axis's settings: the prose asks the class to tick it (shown in presenter mode too).
    scaled = st.checkbox(
        t("alibi.extrapolation.scaled"),
        value=False,
        key="alibi_scaled",
        **URL,
        help=t("alibi.extrapolation.scaled_help"),
    )
    ex = extrapolation(text, seed(), H, train_len, test_len)
    curves = ex.curves(log_x, scaled)
    L = ex.distances.size
    if test_len < L:
        st.caption(t("alibi.extrapolation.longer", L=L))
    st.markdown(t("alibi.extrapolation.text", tokens=inline_tokens(ex.tokens[:24]) + (" …" if L > 24 else "")))
    train_mark = {t("alibi.extrapolation.train_mark"): train_len}
    plot(
        alibi_figures.head_lines(
            curves.penalty_x,
            curves.penalty,
            t("alibi.extrapolation.penalty_title", last=L - 1),
            names=list(sec.head_names),
            colors=colors,
            x_title=t("alibi.extrapolation.distance", sign=sign),
            y_title=t("alibi.extrapolation.penalty_y"),
            marks=train_mark,
        ),
        "penalty",
    )
    plot(
        alibi_figures.head_lines(
            curves.x,
            curves.within,
            t("alibi.extrapolation.within_title", L=L),
            names=list(sec.head_names),
            colors=colors,
            dashed_ys=curves.within_bias_only,
            dashed_suffix=t("alibi.extrapolation.bias_alone"),
            marks={} if scaled else train_mark,
            x_title=t("alibi.extrapolation.scaled_x") if scaled else t("alibi.extrapolation.distance_w", sign=sign),
            y_title=t("alibi.extrapolation.within_y"),
            log_x=log_x,
        ),
        "within",
    )
    st.dataframe(
        {
            t("alibi.extrapolation.col_head"): list(range(1, H + 1)),
            t("alibi.extrapolation.col_slope"): list(sv.labels),
            t("alibi.extrapolation.col_window"): [round(float(w), 2) for w in sv.windows],
            t("alibi.extrapolation.col_half"): [int(v) for v in ex.half_distance],
            t("alibi.extrapolation.col_half_bias"): [int(v) for v in ex.half_distance_bias_only],
            t("alibi.extrapolation.col_beyond", last=train_len - 1): [f"{v:.1%}" for v in ex.beyond_train],
        },
        hide_index=True,
        key="alibi_windows",
    )
    page.prose("extrapolation-read")


@page.section(owns=("alibi_causal", "alibi_heads", "alibi_proof"))
def heads_part() -> None:
    """Owns the number of heads and the causal toggle, which every section from the slopes to the
    extrapolation reads (and the NoPE sections below do not): moving one reruns these sections only,
    not the page's top, nor the NoPE sections and the app's frame. Each section inside is a fragment
    of its own for its own controls; the trained panel sits among them, in its place on the page."""
    row = control_row()
    H = row.slider(
        t("alibi.heads"), 1, ch.MAX_HEADS, 8, key="alibi_heads", **URL, help=t("alibi.heads_help", max=ch.MAX_HEADS)
    )
    causal = row.toggle(t("alibi.causal"), value=True, key="alibi_causal", **URL, help=t("alibi.causal_help"))
    sec = slopes_section(H, current())
    colors = alibi_figures.head_colors(sec.view.slopes)
    slopes_part(H, sec, colors)
    hv = heads_view(text, seed(), H, causal)
    cut = t("alibi.cut", shown=ch.GRID, n=len(tokens)) if hv.cut else ""
    st.header(t("alibi.bias.subheader"))
    page.prose("bias")
    proof(t("alibi.bias.proof"), "alibi-shift-invariance", "alibi_proof")
    bias_part(causal, sec, hv, cut)
    attention_section(H, sec, hv, cut)
    trained_panel(page.chapter)
    extrapolation_section(H, sec, colors)


heads_part()

# -------------------------------------------------------------------------------------- NoPE
st.header(t("alibi.nope.header"))
page.prose("nope")


@page.section(heading="alibi.nope.subheader", level=3, owns=("nope_shuffle", "nope_shuffle_bars", "nope_shuffles"))
def shuffle_section() -> None:
    """Owns the Shuffle button: it changes only the shuffled sentence and its bars."""
    st.session_state.setdefault("nope_shuffles", 1)
    b1, b2 = st.columns([1, 3])
    if b1.button(t("alibi.nope.shuffle"), key="nope_shuffle", icon=":material/shuffle:", disabled=len(tokens) < 2):
        st.session_state.nope_shuffles += 1
    ns = nope_symmetry(text, seed(), st.session_state.nope_shuffles)
    shuffled, more = ns.shuffled(40)
    b2.markdown(t("alibi.nope.shuffled", tokens=inline_tokens(shuffled) + (" …" if more else "")))
    n1, n2 = st.columns(2)
    n1.metric(t("alibi.nope.metric_bidirectional"), f"{ns.diff_bidirectional:.1e}")
    n2.metric(t("alibi.nope.metric_causal"), f"{ns.diff_causal:.3f}")
    plot(
        F.token_bars(
            ns.tokens,
            {t("alibi.nope.no_mask"): ns.per_token_bidirectional, t("alibi.nope.causal_mask"): ns.per_token_causal},
            t("alibi.nope.bars_title"),
            x_title=t("alibi.nope.bars_x"),
            y_title=t("alibi.nope.bars_y"),
        ),
        "nope_shuffle_bars",
    )
    page.prose("nope-shuffle")


shuffle_section()


@page.section(
    heading="alibi.counting.subheader", level=3, prose="counting", owns=("count_share", "count_weights", "nope_count_n")
)
def counting_section() -> None:
    """Owns the counting length: it changes only the counting charts."""
    count_n = st.slider(
        t("alibi.counting.length"),
        2,
        ch.MAX_COUNT_LEN,
        32,
        key="nope_count_n",
        **URL,
        help=t("alibi.counting.length_help", max=ch.MAX_COUNT_LEN),
    )
    cv = counting(count_n, seed())
    FORMULA = "1/(i + 1)"  # a formula: the same in every language
    query_position = t("alibi.counting.query_position")
    g1, g2 = st.columns(2)
    with g1:
        plot(
            F.lines(
                cv.positions,
                {
                    t("alibi.counting.same_causal"): cv.same_word_causal,
                    t("alibi.counting.same_bidirectional"): cv.same_word_bidirectional,
                    FORMULA: cv.formula,
                },
                t("alibi.counting.weights_title"),
                x_title=query_position,
                y_title=t("alibi.counting.weight_y"),
                dashed=(FORMULA,),
            ),
            "count_weights",
        )
    with g2:
        plot(
            F.lines(
                cv.positions,
                {
                    t("alibi.counting.uniform_causal"): cv.share_uniform_causal,
                    t("alibi.counting.head_causal"): cv.share_head_causal,
                    t("alibi.counting.uniform_bidirectional"): cv.share_uniform_bidirectional,
                    FORMULA: cv.formula,
                },
                t("alibi.counting.share_title", bos=ch.BOS),
                x_title=query_position,
                y_title=t("alibi.counting.share_y", bos=ch.BOS),
                dashed=(FORMULA,),
            ),
            "count_share",
        )
    st.markdown(t("alibi.counting.recovery", last=count_n - 1, error=cv.max_recovery_error, n=count_n))
    page.prose("finding")


counting_section()
