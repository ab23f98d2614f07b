"""Chapter: The trouble with absolute positions — shift, length, and no direct distance.

A page only shows: widgets → one cached call into explain/chapters/trouble.py (sections 1–2) and
explain/chapters/trouble_terms.py (section 3) per section → figures → st.*. The numbers, the question
and the sentences that state them are computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import trouble as ch
from explain.chapters import trouble_terms as terms
from ui.cache import cached
from ui.common import inline_tokens, plot, seed, sentence, sentence_tokens
from ui.i18n import current, option_names, t
from ui.question import ask_alone
from ui.section import open_chapter
from ui.url_state import URL, Param

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
shift_question = cached(ch.shift_question)
shift_section = cached(ch.shift_section)
length_experiment = cached(ch.length_experiment)
four_terms = cached(terms.four_terms)
tupe_terms = cached(terms.tupe_terms)
lang = current()
EXAMPLE = ch.EXAMPLES[lang]  # "I like CV" / "Well,": each language has its own example sentence
CLASSIC, PREFIX = EXAMPLE.sentence, EXAMPLE.prefix
BASE = Param.choice("trouble_base", ("classic", "sidebar"), default="classic")


def span_of(n: int, start: int) -> str:
    """The positions n tokens occupy from `start` on: a range, or a single position for one token."""
    if n > 1:
        return t("trouble.positions", first=start, last=start + n - 1)
    return t("trouble.position", first=start)


# -- 1. shift ------------------------------------------------------------------------------------
st.header(t("trouble.shift.header"))
page.prose("shift")
ask_alone(shift_question(seed(), lang))
c1, c2 = st.columns([2, 3])
bases = {"classic": t("trouble.shift.base_classic", example=CLASSIC), "sidebar": t("trouble.shift.base_sidebar")}
choice = BASE.widget(
    c1.radio,
    t("trouble.shift.base_label"),
    BASE.options,
    format_func=option_names(BASE.options, bases.__getitem__),
    help=t("trouble.shift.base_help"),
)
prefix_text = c2.text_input(
    t("trouble.shift.prefix_label"),
    value=PREFIX,
    max_chars=ch.MAX_PREFIX_CHARS,
    key="trouble_prefix",
    **URL,
    help=t("trouble.shift.prefix_help", max_chars=ch.MAX_PREFIX_CHARS, max_tokens=ch.MAX_PREFIX_TOKENS),
)
sec = shift_section(sentence(), prefix_text, seed(), choice == "classic", lang)
k, r = sec.k, sec.result  # section 3 reads them too


@page.section(owns=("shift_pe", "shift_before", "shift_after", "shift_diff", "shift_before_after"))
def shift_views_section(sec: ch.ShiftSection) -> None:
    """The shift maps' Numbers panels (the base and prefix above stay page-level: section 3 reads k)."""
    base, prefix, k, r = sec.base, sec.prefix, sec.k, sec.result
    if r is None:
        st.info(t("trouble.shift.empty_sentence"))
    else:
        if base.truncated:
            st.caption(t("trouble.shift.sentence_cut", found=base.n_found, kept=len(base)))
        if prefix.truncated:
            st.caption(t("trouble.shift.prefix_cut", found=prefix.n_found, kept=ch.MAX_PREFIX_TOKENS))
        toks = r.tokens
        more = t("trouble.more", n=sec.more_tokens) if sec.more_tokens else ""
        line = t("trouble.token_line", tokens=inline_tokens(sec.shown_tokens), more=more, span=span_of(len(toks), 0))
        st.markdown(t("trouble.shift.without", line=line))
        if k:
            st.markdown(t("trouble.shift.with", prefix=inline_tokens(prefix.tokens), span=span_of(len(toks), k), k=k))
        else:
            st.info(t("trouble.shift.empty_prefix", prefix=PREFIX))

        st.subheader(t("trouble.shift.vectors_subheader"))
        page.prose("shift-vectors")
        m1, m2 = st.columns(2)
        m1.metric(t("trouble.shift.metric_k"), k)
        m2.metric(
            t("trouble.shift.metric_cos"),
            f"{r.mean_cosine:.4f}",
            help=t("trouble.shift.metric_cos_help", spread=r.cosine_spread),
        )
        plot(
            F.token_heatmap(
                r.pe_change,
                toks,
                None,
                t("trouble.shift.pe_title", k=k),
                row_title=t("trouble.shift.pe_rows"),
                col_title=t("trouble.shift.pe_cols"),
                value_label=t("trouble.shift.change"),
                zmax=2.0,
                show_values=False,
            ),
            "shift_pe",
        )

        st.subheader(t("trouble.shift.scores_subheader"))
        page.prose("shift-logits")
        if r.small:
            s1, s2, s3 = st.columns(3)
            with s1:
                plot(
                    F.token_heatmap(
                        r.logits_before,
                        toks,
                        toks,
                        t("trouble.shift.before_title"),
                        value_label=t("trouble.shift.score"),
                        zmax=r.score_limit,
                    ),
                    "shift_before",
                )
            with s2:
                plot(
                    F.token_heatmap(
                        r.logits_after,
                        toks,
                        toks,
                        t("trouble.shift.after_title", k=k),
                        value_label=t("trouble.shift.score"),
                        zmax=r.score_limit,
                    ),
                    "shift_after",
                )
            with s3:
                plot(
                    F.token_heatmap(
                        r.logits_diff, toks, toks, t("trouble.shift.diff_title"), value_label=t("trouble.shift.change")
                    ),
                    "shift_diff",
                )
            numbers = st.container()
        else:  # long sentences: small multiples name rows and columns once, not once per cell
            plot(
                F.token_heatmap_grid(
                    r.before_after,
                    toks,
                    t("trouble.shift.both_title", k=k),
                    value_label=t("trouble.shift.score"),
                    panel_titles=[t("trouble.shift.panel_before"), t("trouble.shift.panel_after")],
                    cols=2,
                    panel_height=520,
                ),
                "shift_before_after",
            )
            diff_col, numbers = st.columns(2)
            with diff_col:
                plot(
                    F.token_heatmap_grid(
                        r.diff_panel,
                        toks,
                        t("trouble.shift.diff_title"),
                        value_label=t("trouble.shift.change"),
                        panel_titles=[t("trouble.shift.panel_diff")],
                        cols=1,
                        panel_height=440,
                    ),
                    "shift_diff",
                )
        with numbers:
            d1, d2, d3 = st.columns(3)
            d1.metric(t("trouble.shift.metric_max"), f"{r.max_abs_change:.3f}")
            d2.metric(t("trouble.shift.metric_mean"), f"{r.mean_abs_change:.3f}")
            d3.metric(
                t("trouble.shift.metric_scale"), f"{r.mean_abs_logit:.3f}", help=t("trouble.shift.metric_scale_help")
            )
            if k and r.max_abs_change > 0:
                i, j = r.largest_pair
                st.markdown(
                    t(
                        "trouble.shift.largest",
                        query=inline_tokens([toks[i]]),
                        i=i,
                        i_after=i + k,
                        key=inline_tokens([toks[j]]),
                        j=j,
                        j_after=j + k,
                        before=float(r.logits_before[i, j]),
                        after=float(r.logits_after[i, j]),
                        distance=j - i,
                    )
                )
            st.caption(t("trouble.shift.check", diff=r.prefixed_run_max_diff))
        page.prose("shift-relative")
        st.markdown(t("trouble.shift.content_part", change=r.content_max_change))


shift_views_section(sec)


# -- 2. length -----------------------------------------------------------------------------------
@page.section(
    heading="trouble.length.header",
    prose="length",
    owns=(
        "length_sin",
        "length_learned",
        "length_angles",
        "length_gap",
        "length_nearest",
        "trouble_l_train",
        "trouble_l_test",
    ),
)
def length_section() -> None:
    """Owns L_train and L_test (nothing else reads them) and the length charts' Numbers panels."""
    l1, l2 = st.columns(2)
    l_train = l1.slider(
        t("trouble.length.train_label"),
        2,
        ch.MAX_TRAIN_LEN,
        32,
        key="trouble_l_train",
        **URL,
        help=t("trouble.length.train_help", max=ch.MAX_TRAIN_LEN),
    )
    l_test = l2.slider(
        t("trouble.length.test_label"),
        2,
        ch.MAX_TEST_LEN,
        128,
        key="trouble_l_test",
        **URL,
        help=t("trouble.length.test_help", max=ch.MAX_TEST_LEN),
    )
    L = length_experiment(l_train, l_test, seed())
    if not L.beyond:
        st.info(t("trouble.length.fits", test=l_test, train=l_train))
    page.prose("length-matrix")
    end = {t("trouble.length.end_mark", train=l_train): L.end_line} if L.beyond else {}
    g1, g2 = st.columns(2)
    with g1:
        fig = F.matrix_heatmap(
            L.pe,
            t("trouble.length.sin_title", n=l_test),
            x_title=t("trouble.length.channel"),
            y_title=t("trouble.length.position_axis"),
            value_label="PE",
            height=460,
        )
        plot(F.mark_lines(fig, y=end), "length_sin")
    with g2:
        fig = F.matrix_heatmap(
            L.learned_table,
            t("trouble.length.learned_title", n=l_train),
            x_title=t("trouble.length.channel"),
            y_title=t("trouble.length.position_axis"),
            value_label=t("trouble.length.value"),
            height=460,
        )
        plot(F.mark_lines(fig, y=end), "length_learned")
    if L.learned_error:
        st.warning(t("trouble.length.refused", error=L.learned_error, first=l_train, last=l_test - 1))
    else:
        st.success(t("trouble.length.all_rows", n=l_test))
    page.prose("length-learned")

    st.subheader(t("trouble.length.angles_subheader"))
    page.prose("length-angles")
    a1, a2 = st.columns(2)
    with a1:
        full_turn = t("trouble.length.full_turn")
        plot(
            F.lines(
                L.pairs,
                {
                    t("trouble.length.train_angle"): L.train_max_angle,
                    t("trouble.length.test_angle"): L.test_max_angle,
                    full_turn: L.full_turn,
                },
                t("trouble.length.angles_title"),
                x_title=t("trouble.length.pair_axis"),
                y_title=t("trouble.length.angle_axis"),
                log_y=True,
                dashed=(full_turn,),
                markers=True,
            ),
            "length_angles",
        )
    with a2:
        farthest = t("trouble.length.farthest")
        plot(
            F.lines(
                L.pairs,
                {t("trouble.length.gap"): L.angle_gap, farthest: L.farthest},
                t("trouble.length.gap_title"),
                x_title=t("trouble.length.pair_axis"),
                y_title=t("trouble.length.gap_axis"),
                dashed=(farthest,),
                markers=True,
            ),
            "length_gap",
        )
    worst = L.worst_pair
    st.markdown(
        t(
            "trouble.length.wrapped",
            train=l_train,
            wrapped=L.wrapped,
            pairs=L.pairs.size,
            range=t("trouble.length.wrapped_range", last=L.wrapped - 1) if L.wrapped > 1 else "",
            end=t("trouble.length.newest", worst=worst, gap=float(L.angle_gap[worst]))
            if L.beyond
            else t("trouble.length.end"),
        )
    )
    st.subheader(t("trouble.length.vectors_subheader"))
    page.prose("length-vectors")
    step_name = t("trouble.length.step")
    fig = F.lines(
        L.positions,
        {t("trouble.length.nearest"): L.nearest_distance, step_name: L.step_line},
        t("trouble.length.nearest_title"),
        x_title=t("trouble.length.position_axis"),
        y_title=t("trouble.length.distance_axis"),
        dashed=(step_name,),
    )
    plot(F.mark_lines(fig, x={f"L_train = {l_train}": L.end_line} if L.beyond else {}), "length_nearest")


length_section()

# -- 3. the four terms ---------------------------------------------------------------------------
st.header(t("trouble.terms.header"))
page.prose("terms")
tokens = sentence_tokens()
toks = tokens.tokens


@page.section(owns=("four_terms",))
def terms_section(toks: tuple[str, ...], k: int) -> None:
    """The four-term chart's Numbers panel; k comes from section 1's controls."""
    shift = max(k, 1)
    T = four_terms(toks, seed(), shift=shift)
    ids = {**terms.TERM_IDS, **terms.MAP_IDS}  # English name (the dicts' keys) → catalogue id
    label = {name: t(f"trouble.term.{ids[name]}") for name in ids}
    plot(
        F.token_heatmap_grid(
            T.stacked,
            toks,
            t("trouble.terms.grid_title"),
            panel_titles=[label[name] for name in terms.TERM_NAMES],
            value_label=t("trouble.terms.score_part"),
            cols=2,
            panel_height=T.panel_height,
        ),
        "four_terms",
    )
    yes, no, yes_absolute = t("trouble.terms.yes"), t("trouble.terms.no"), t("trouble.terms.yes_absolute")
    rows = []
    for name, size in T.mean_sizes.items():
        on_words, on_positions = terms.TERM_DEPENDS[ids[name]]
        rows.append(
            f"| {label[name]} | {yes if on_words else no} | {yes_absolute if on_positions else no} | {size:.3f} |"
        )
    st.markdown(t("trouble.terms.table_head") + "\n|---|---|---|---|\n" + "\n".join(rows))
    st.caption(t("trouble.terms.check", diff=T.sum_max_diff))
    page.prose("terms-which")


terms_section(toks, k)


# Going deeper: a published fix that unties the terms (TUPE) and the test of a relative score
# (Toeplitz), on the same four terms.
@page.section(owns=("tupe_terms", "toeplitz_spread"), deeper=True)
def untied_section(toks: tuple[str, ...], k: int, r: ch.ShiftResult | None) -> None:
    """The TUPE and Toeplitz charts' Numbers panels; k and r come from section 1's controls."""
    shift = max(k, 1)
    T = four_terms(toks, seed(), shift=shift)
    ids = {**terms.TERM_IDS, **terms.MAP_IDS}  # English name (the dicts' keys) → catalogue id
    label = {name: t(f"trouble.term.{ids[name]}") for name in ids}
    st.subheader(t("trouble.tupe.subheader"))
    page.prose("tupe")
    U = tupe_terms(toks, seed(), shift=shift)
    plot(
        F.token_heatmap_grid(
            U.stacked,
            toks,
            t("trouble.tupe.grid_title"),
            panel_titles=[t("trouble.tupe.content"), t("trouble.tupe.position"), t("trouble.tupe.total")],
            value_label=t("trouble.terms.score_part"),
            cols=3,
            panel_height=T.panel_height,
        ),
        "tupe_terms",
    )
    content_size, position_size = U.mean_sizes
    st.markdown(
        t(
            "trouble.tupe.measured",
            content=content_size,
            position=position_size,
            cp=U.dropped[0],
            pc=U.dropped[1],
            check=U.content_check,
            shift=U.shift,
            change=U.position_shift_change,
        )
    )

    st.subheader(t("trouble.terms.toeplitz_subheader"))
    page.prose("toeplitz")
    if T.n < 2:
        st.info(t("trouble.terms.single_token"))
    else:
        for col, (chart_key, name, mat) in zip(st.columns(3), T.map_charts, strict=True):
            with col:
                plot(
                    F.matrix_heatmap(
                        mat,
                        t("trouble.terms.map_title", name=label[name]),
                        x_title=t("trouble.terms.key_position"),
                        y_title=t("trouble.terms.query_position"),
                        value_label=t("trouble.terms.score_part"),
                        height=400,
                    ),
                    chart_key,
                )
                st.metric(
                    t("trouble.terms.spread_metric"),
                    f"{T.toeplitz[name]:.1e}",
                    help=t("trouble.terms.spread_help", relative=T.toeplitz_relative[name]),
                )
        plot(
            F.lines(
                T.offsets,
                {label[name]: s for name, s in T.spread.items()},
                t("trouble.terms.spread_title"),
                x_title=t("trouble.terms.offset_axis"),
                y_title=t("trouble.terms.spread_axis"),
                markers=T.n <= 40,
            ),
            "toeplitz_spread",
        )
        st.caption(t("trouble.terms.spread_caption"))
        page.prose("relative-part")
        moved = t("trouble.terms.moved", change=r.max_abs_change) if k and r is not None else ""
        st.markdown(
            t(
                "trouble.terms.relative_shift_prefix" if k else "trouble.terms.relative_shift",
                shift=shift,
                change=T.relative_shift_change,
            )
            + moved
        )


untied_section(toks, k, r)
