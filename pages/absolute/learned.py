"""Chapter: Learned APE — a lookup table with one row per position (BERT, GPT-2), an untrained one
on the learner's sentence, and a real trained one (all-MiniLM-L6-v2).

A page only shows: widgets → one cached call into explain/chapters/learned.py per section → figures
→ st.*. The numbers and the question are computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import learned as ch
from explain.chapters import learned_figures
from explain.chapters import learned_real as real
from ui.cache import cached
from ui.common import inline_tokens, plot, seed, sentence, sentence_tokens
from ui.i18n import current, t
from ui.presenter import secondary
from ui.question import ask
from ui.section import open_chapter
from ui.trained import trained_panel
from ui.url_state import URL

SHOW_MISSING = 40  # tokens listed by name when a sentence runs past the table; the figure shows all
page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
toy_table = cached(ch.toy_table)
untrained_question = cached(ch.untrained_question)
real_available = cached(real.real_available)
real_section = cached(real.real_section)
pca_section = cached(real.pca_section)
norms_section = cached(real.norms_section)


@page.section(owns=("max_len", "toy_added", "toy_attention", "toy_table"))
def toy_section() -> None:
    """Owns the table's length and the toy maps: moving it changes only this section (and its question)."""
    c1, c2, c3 = st.columns([2, 1, 1])
    max_len = c1.slider(
        t("learned.toy.max_len"),
        1,
        ch.MAX_TOY_LEN,
        32,
        key="max_len",
        **URL,
        help=t("learned.toy.max_len_help", max_toy_len=ch.MAX_TOY_LEN),
    )
    v = toy_table(sentence(), seed(), max_len)
    n = v.n
    c2.metric(t("learned.toy.tokens"), n)
    c3.metric(
        t("learned.toy.parameters"),
        f"{ch.parameter_count(max_len, ch.TOY_D_MODEL):,}",
        help=t("learned.toy.parameters_help", max_len=max_len, d=ch.TOY_D_MODEL),
    )
    plot(
        learned_figures.lookup_table(
            v.table,
            v.tokens,
            t("learned.toy.table_title", max_len=max_len, d=ch.TOY_D_MODEL, seed=seed()),
            col_title=t("learned.toy.channel"),
            value_label=t("learned.toy.table_value"),
        ),
        "toy_table",
    )
    if v.missing:
        first, last = v.missing[0], v.missing[-1]
        where = (
            t("learned.toy.at_position", first=first)
            if first == last
            else t("learned.toy.at_positions", first=first, last=last)
        )
        count = len(v.missing)
        st.warning(
            t("learned.toy.too_long", n=n, last=max_len - 1)
            + (
                t("learned.toy.missing_one", where=where)
                if count == 1
                else t("learned.toy.missing_many", count=count, where=where)
            )
            + (t("learned.toy.fit_one") if v.n_fit == 1 else t("learned.toy.fit_many", count=v.n_fit))
        )
        shown, more = v.without_row(SHOW_MISSING)
        st.markdown(
            t("learned.toy.without_row") + inline_tokens(shown) + (t("learned.toy.more", more=more) if more else "")
        )
        st.caption(t("learned.toy.refusals", refusal=v.refusal, torch_refusal=v.torch_refusal))
        page.prose("overflow")
    else:
        st.success(
            t("learned.toy.all_fit_one", n=n) if v.spare == 1 else t("learned.toy.all_fit_many", n=n, spare=v.spare)
        )
    a1, a2 = st.columns(2)
    with a1:
        plot(
            F.token_heatmap(
                v.added,
                v.fitted_tokens,
                None,
                t("learned.toy.added_title"),
                row_title=t("learned.toy.added_rows"),
                col_title=t("learned.toy.channel"),
                value_label=t("learned.toy.added_value"),
                show_values=False,
            ),
            "toy_added",
        )
    with a2:
        title = t("learned.toy.attention_all") if not v.missing else t("learned.toy.attention_cut", last=v.n_fit - 1)
        plot(
            learned_figures.token_heatmap_cut(
                v.weights,
                v.tokens,
                v.n_fit,
                title,
                kind="weights",
                value_label=t("learned.toy.weight"),
                note=t("learned.toy.cut_note"),
            ),
            "toy_attention",
        )
    st.header(t("learned.heading.untrained"))
    page.prose("untrained")
    q = untrained_question(seed(), max_len, current())
    if q is not None:
        ask(q)


@page.section(
    owns=(
        "by_distance",
        "cos_learned",
        "cos_sinusoidal",
        "explained",
        "neighbours",
        "norms",
        "pair",
        "pcs",
        "real_n",
        "real_table",
        "skip0",
    )
)
def real_part() -> None:
    """Owns the real table's range and the first-row toggle: they change only the MiniLM table's charts."""
    missing = real_available()
    if missing is not None:  # the model package is an optional dependency
        st.info(t("learned.real.missing_package", error=missing))
        return
    r1, r2 = st.columns([2, 1])
    n = r1.slider(
        t("learned.real.positions"),
        ch.MIN_REAL_POSITIONS,
        ch.MAX_REAL_POSITIONS,
        256,
        step=16,
        key="real_n",
        **URL,
        help=t("learned.real.positions_help", lo=ch.MIN_REAL_POSITIONS, hi=ch.MAX_REAL_POSITIONS),
    )
    with r2, secondary():
        skip0 = st.toggle(
            t("learned.real.skip0"),
            value=True,
            key="skip0",
            **URL,
            help=t("learned.real.skip0_help"),
        )
    sec = real_section(n)
    v = sec.view
    plot(
        F.matrix_heatmap(
            sec.table.values,
            t("learned.real.table_title", last=n - 1),
            x_title=t("learned.real.channel"),
            y_title=t("learned.real.position"),
            value_label=t("learned.toy.table_value"),
            y=sec.table.row_coords,
            zmax=v.clip,
            height=480,
            max_cells=max(sec.table.values.shape),  # pooled already (learned_real.MAX_TABLE_ROWS)
        ),
        "real_table",
    )
    if sec.table.row_factor > 1:
        st.caption(t("learned.real.pooled_rows", f=sec.table.row_factor))
    pr, pc, pv = v.peak
    st.caption(t("learned.real.clip", clip=v.clip, row=pr, channel=pc, value=pv))
    page.prose("real-table")

    st.header(t("learned.heading.similarity"))
    page.prose("similarity")
    s1, s2 = st.columns(2)
    cos_l, cos_s = sec.cos_learned, sec.cos_sinusoidal
    with s1:
        plot(
            F.matrix_heatmap(
                cos_l.values,
                t("learned.real.cos_learned"),
                x_title=t("learned.real.position_n"),
                y_title=t("learned.real.position_m"),
                value_label=t("learned.real.cos"),
                zmax=1.0,
                x=cos_l.col_coords,
                y=cos_l.row_coords,
                height=460,
            ),
            "cos_learned",
        )
    with s2:
        plot(
            F.matrix_heatmap(
                cos_s.values,
                t("learned.real.cos_sinusoidal"),
                x_title=t("learned.real.position_n"),
                y_title=t("learned.real.position_m"),
                value_label=t("learned.real.cos"),
                zmax=1.0,
                x=cos_s.col_coords,
                y=cos_s.row_coords,
                height=460,
            ),
            "cos_sinusoidal",
        )
    if cos_l.row_factor > 1:
        st.caption(t("learned.real.pooled_maps", f=cos_l.row_factor))

    page.prose("distance")
    bl, bs = v.by_distance_learned, v.by_distance_sinusoidal
    d1, d2 = st.columns([3, 1])
    with d1:
        plus, minus = t("learned.distance.learned_plus"), t("learned.distance.learned_minus")
        curves = {
            t("learned.distance.learned_mean"): bl.mean,
            plus: sec.learned_plus,
            minus: sec.learned_minus,
            t("learned.distance.sinusoidal"): bs.mean,
        }
        plot(
            F.lines(
                bl.distance,
                curves,
                t("learned.distance.title"),
                x_title=t("learned.distance.x"),
                y_title=t("learned.distance.y"),
                dashed=(plus, minus),
                height=420,
            ),
            "by_distance",
        )
    with d2:
        st.markdown(t("learned.distance.share"))
        help_r2 = t("learned.distance.share_help")
        st.metric(t("learned.distance.learned"), f"{bl.share_explained:.0%}", help=help_r2)
        st.metric(t("learned.distance.learned_no0"), f"{v.by_distance_learned_no0.share_explained:.0%}", help=help_r2)
        st.metric(t("learned.distance.sinusoidal_metric"), f"{bs.share_explained:.0%}", help=help_r2)

    st.header(t("learned.heading.pca"))
    page.prose("pca")
    ps = pca_section(n, skip0)
    pca, rot = ps.pca, ps.rotation
    label = {
        c: t(
            "learned.pca.label",
            k=c + 1,
            share=pca.explained[c],
            period=t("learned.slow_drift") if ps.drifts(c) else t("learned.period", period=pca.periods[c]),
        )
        for c in range(ps.drawn)
    }
    p1, p2 = st.columns([3, 2])
    with p1:
        plot(
            F.lines(
                pca.positions,
                {label[c]: ps.scores(c) for c in range(ps.drawn)},
                t("learned.pca.title", first=pca.positions[0], last=ps.last),
                x_title=t("learned.real.position"),
                y_title=t("learned.pca.score"),
                height=420,
            ),
            "pcs",
        )
    with p2:
        plot(
            F.bars(
                ps.names,
                pca.explained,
                t("learned.pca.explained_title"),
                x_title=t("learned.pca.component"),
                y_title=t("learned.pca.share"),
                highlight=rot.pair,
                height=460,
            ),
            "explained",
        )
    a, b = rot.pair
    q1, q2 = st.columns([2, 3])
    with q1:
        plot(
            learned_figures.path_2d(
                ps.scores(a),
                ps.scores(b),
                pca.positions,
                t("learned.pca.pair_title", a=a + 1, b=b + 1),
                x_title=f"PC{a + 1}",
                y_title=f"PC{b + 1}",
                order_title=t("learned.real.position"),
                height=460,
            ),
            "pair",
        )
    with q2:
        page.prose("pair")
        st.markdown(t("learned.pca.pair", a=a + 1, b=b + 1, step=rot.step_degrees, period=rot.period))

    st.header(t("learned.heading.norms"))
    page.prose("norms")
    rs = norms_section()
    limit = {t("learned.norms.fine_tuning", n=ch.MINILM_FINE_TUNING_LEN): ch.FINE_TUNING_LINE}
    n1, n2 = st.columns(2)
    with n1:
        # Row 0 is left off the chart (its length is in the title): at its scale the seams would look flat.
        plot(
            F.mark_lines(
                F.lines(
                    rs.positions_after_0,
                    {t("learned.norms.norm"): rs.norms_after_0},
                    t("learned.norms.norms_title", last=rs.positions[-1], row0=rs.norms[0]),
                    x_title=t("learned.real.position"),
                    y_title=t("learned.norms.norm"),
                    height=380,
                ),
                x=limit,
            ),
            "norms",
        )
    with n2:
        plot(
            F.mark_lines(
                F.lines(
                    rs.neighbour_positions,
                    {t("learned.norms.neighbour"): rs.neighbour_cosine},
                    t("learned.norms.neighbours_title"),
                    x_title=t("learned.real.position"),
                    y_title=t("learned.norms.neighbours_y"),
                    height=380,
                ),
                x=limit,
            ),
            "neighbours",
        )
    st.markdown(
        t(
            "learned.norms.summary",
            row0=rs.norms[0],
            ratio=rs.row0_ratio,
            median=rs.median_norm,
            typical=rs.typical_neighbour_cosine,
            sharp=rs.sharpest_text(),
        )
    )
    page.prose("norms-why")


st.header(t("learned.heading.table"))
page.prose("table")
# Filled last: with no text, sentence_tokens() stops the script, and the real table must still be drawn.
toy_box = st.container()

st.header(t("learned.heading.real"))
page.prose("real")
real_part()

st.subheader(t("learned.heading.costs"))
page.prose("costs")

with toy_box:
    sentence_tokens()  # stops the script with a note when there is no text
    toy_section()

trained_panel(page.chapter)
