"""Chapter: Kerple and FIRE — a penalty of the distance that is learned, not fixed.

A page only shows: widgets → one cached call into explain/chapters/kerple_fire.py per section →
figures → st.*. The numbers, the question and every sentence that states a fact about them are
computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import alibi_figures
from explain.chapters import kerple_fire as ch
from ui.cache import cached
from ui.common import control_row, plot, seed, sentence_tokens
from ui.i18n import t
from ui.question import ask
from ui.section import open_chapter
from ui.trained import trained_panel
from ui.url_state import URL

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
kernel_view = cached(ch.kernel_view)
fire_view = cached(ch.fire_view)
sentence_view = cached(ch.sentence_view)
interpolation_question = cached(ch.interpolation_question)

tokens = sentence_tokens()
head_title = t("kerple_fire.head")
# The heads: read by the kernels and by the sentence maps, so a page-level control.
H = control_row().select_slider(
    t("kerple_fire.heads"),
    list(ch.HEADS),
    value=4,
    key="kf_heads",
    **URL,
    help=t("kerple_fire.heads_help", max=ch.MAX_HEADS),
)


def fmt_reach(value: float) -> str:
    return t("kerple_fire.kernels.beyond") if value != value else f"{value:.0f}"  # nan: not within the chart


@page.section(
    heading="kerple_fire.kernels.subheader", prose="kernels", owns=("kf_distance", "kf_log", "kf_power", "kf_reach")
)
def kernels_section(H: int) -> None:
    """Owns the distance range: it changes only the kernels' charts and table."""
    distance = st.select_slider(
        t("kerple_fire.distance"),
        [16, 64, 256, 1024, ch.MAX_DISTANCE],
        value=1024,
        key="kf_distance",
        **URL,
        help=t("kerple_fire.distance_help", max=ch.MAX_DISTANCE),
    )
    kv = kernel_view(H, distance, seed())
    colors = alibi_figures.head_colors(kv.slopes)
    names = [t("kerple_fire.head_name", k=k + 1) for k in range(kv.log.shape[0])]
    x_title, y_title = t("kerple_fire.kernels.x"), t("kerple_fire.kernels.y")
    for key, factor, title in (
        ("kf_log", kv.log_factor, t("kerple_fire.kernels.log_title")),
        ("kf_power", kv.power_factor, t("kerple_fire.kernels.power_title")),
    ):
        plot(
            alibi_figures.head_lines(
                kv.distances[1:],
                factor[:, 1:],
                title,
                names=names,
                colors=colors,
                x_title=x_title,
                y_title=y_title,
                dashed_ys=kv.alibi_factor[:, 1:],
                dashed_suffix=t("kerple_fire.kernels.alibi_suffix"),
                log_x=True,
            ),
            key,
        )
    st.dataframe(
        {
            head_title: list(range(1, len(names) + 1)),
            t("kerple_fire.kernels.col_log"): [f"r₁ = {a:.2f}, r₂ = {b:.2f}" for a, b in kv.log_params],
            t("kerple_fire.kernels.col_power"): [f"r₁ = {a:.2f}, r₂ = {b:.2f}" for a, b in kv.power_params],
            t("kerple_fire.kernels.col_reach_log"): [fmt_reach(v) for v in kv.reach_log],
            t("kerple_fire.kernels.col_reach_power"): [fmt_reach(v) for v in kv.reach_power],
            t("kerple_fire.kernels.col_reach_alibi"): [fmt_reach(v) for v in kv.reach_alibi],
        },
        hide_index=True,
        key="kf_reach",
    )
    page.prose("kernels-read")


kernels_section(H)


@page.section(
    heading="kerple_fire.fire.subheader", prose="fire", owns=("kf_threshold", "kf_n", "kf_normalised", "kf_rows")
)
def fire_section() -> None:
    """Owns FIRE's threshold and length and the question: they change only this section."""
    row = control_row()
    L = row.slider(
        t("kerple_fire.threshold"),
        ch.MIN_THRESHOLD,
        ch.MAX_THRESHOLD,
        32,
        key="kf_threshold",
        **URL,
        help=t("kerple_fire.threshold_help", lo=ch.MIN_THRESHOLD, hi=ch.MAX_THRESHOLD),
    )
    n = row.slider(
        t("kerple_fire.positions"),
        16,
        ch.MAX_POSITIONS,
        256,
        step=16,
        key="kf_n",
        **URL,
        help=t("kerple_fire.positions_help", max=ch.MAX_POSITIONS),
    )
    revealed = ask(interpolation_question(L, seed()))
    fv = fire_view(n, L, seed(), 1)
    plot(
        F.matrix_heatmap(
            fv.normalised,
            t("kerple_fire.fire.map_title", L=round(fv.threshold), n=fv.n),
            x_title=t("kerple_fire.key_j"),
            y_title=t("kerple_fire.query_i"),
            value_label=t("kerple_fire.fire.value"),
            kind="weights",
            zmax=1.0,
        ),
        "kf_normalised",
    )
    if not revealed:  # the rows answer the question: one distance, read at a near and a far query
        st.caption(t("kerple_fire.fire.after_reveal"))
        return
    plot(
        F.lines(
            list(range(max(len(v) for v in fv.rows.values()))) if fv.rows else [0],
            {t("kerple_fire.fire.row", i=i): list(v) for i, v in fv.rows.items()},
            t("kerple_fire.fire.rows_title"),
            x_title=t("kerple_fire.fire.rows_x"),
            y_title=t("kerple_fire.fire.value"),
        ),
        "kf_rows",
    )
    below = f"{fv.below_spread:.1e}" if fv.below_spread else "0"
    st.markdown(t("kerple_fire.fire.spread", L=round(fv.threshold), below=below, past=fv.past_spread))


fire_section()


@page.section(
    heading="kerple_fire.sentence.subheader", prose="sentence", owns=("kf_causal", "kf_kerple_map", "kf_fire_map")
)
def sentence_section(H: int) -> None:
    """Owns the causal toggle: it changes only the two sentence maps."""
    causal = st.toggle(t("kerple_fire.causal"), value=True, key="kf_causal", **URL, help=t("kerple_fire.causal_help"))
    sv = sentence_view(tuple(tokens.tokens), seed(), H, causal)
    if sv.cut:
        st.caption(t("kerple_fire.sentence.cut", shown=len(sv.tokens), n=len(tokens)))
    titles = [t("kerple_fire.head_name", k=k + 1) for k in range(sv.kerple.shape[0])]
    for key, weights, name in (("kf_kerple_map", sv.kerple, "Kerple"), ("kf_fire_map", sv.fire, "FIRE")):
        plot(
            F.token_heatmap_grid(
                weights,
                sv.tokens,
                t("kerple_fire.sentence.title", method=name),
                panel_titles=titles,
                kind="weights",
                value_label=t("kerple_fire.weight"),
                cols=4,
                row_title=t("kerple_fire.query_i"),
                col_title=t("kerple_fire.key_j"),
            ),
            key,
        )
    st.markdown(t("kerple_fire.sentence.reach", kerple=sv.reach_kerple, fire=sv.reach_fire, n=len(sv.tokens)))


sentence_section(H)
trained_panel(page.chapter)
