"""Chapter: Spline-based Transformers — B-splines, local control, a sequence as a latent trajectory.

A page only shows: widgets → one cached call into explain/chapters/spline.py (part 1) or
spline_models.py (part 2) per section → figures → st.*. The numbers, the question and every
sentence that states a fact about them are computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import spline as ch
from explain.chapters import spline_figures
from explain.chapters import spline_models as models
from ui.cache import cached
from ui.common import plot
from ui.i18n import current, option_names, t
from ui.presenter import secondary
from ui.question import answer_shown, ask, folded
from ui.section import open_chapter
from ui.url_state import URL, Param

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
basis = cached(ch.basis)
continuity_table = cached(ch.continuity_table)
local_edit = cached(ch.local_edit)
local_section = cached(ch.local_section)
contact_line = cached(ch.contact_line)
reconstruct = cached(models.reconstruct)
edit_latent = cached(models.edit_latent)
blend = cached(models.blend)
shipped_view = cached(models.shipped_view)  # one per language

lang = current()


def choice(param: Param) -> None:
    """A linked choice whose default is not its first option: restore the address's value, else
    start on the default (a widget without index= shows its first option)."""
    param.restore()
    st.session_state.setdefault(param.key, param.default)


# ================================================================= part 1: B-splines
@page.section(
    heading="spline.part1",
    prose="basis-intro",
    owns=("spline_basis", "spline_continuity", "spline_degree", "spline_k", "spline_knots"),
)
def part1_section() -> None:
    """Owns degree, points and knots, read only by part 1 (the local edit's own controls nest)."""
    c1, c2, c3 = st.columns(3)
    degree = c1.slider(
        t("spline.degree"), 1, ch.MAX_DEGREE, 3, key="spline_degree", **URL, help=t("spline.degree_help")
    )
    n_ctrl = c2.slider(
        t("spline.n_ctrl"),
        ch.MIN_CTRL,
        ch.MAX_CTRL,
        10,
        key="spline_k",
        **URL,
        help=t("spline.n_ctrl_help", max_ctrl=ch.MAX_CTRL),
    )
    # Option values stay the ids "clamped" / "uniform" (kept in the address); only their labels are translated.
    KNOTS = Param.choice("spline_knots", ch.KNOT_KINDS, default="clamped")
    knots_kind = KNOTS.widget(
        c3.radio,
        t("spline.knots"),
        KNOTS.options,
        horizontal=True,
        format_func=option_names(KNOTS.options, lambda k: t(f"spline.knot.{k}")),
        help=t("spline.knots_help"),
    )
    kind_word = t(f"spline.knot.{knots_kind}")
    B = basis(degree, n_ctrl, knots_kind)
    plot(
        spline_figures.spline_basis(
            B.t, B.N, B.knots, B.domain, t("spline.basis_title", n=n_ctrl, degree=degree, kind=kind_word)
        ),
        "spline_basis",
    )
    st.caption(
        t(
            "spline.knots_caption",
            count=len(B.knots),
            knots=B.knots_text,
            lo=B.domain[0],
            hi=B.domain[1],
            dev=B.max_deviation,
            spans=B.spans_text,
        )
    )
    page.prose("basis-read")

    st.subheader(t("spline.continuity"))
    page.prose("continuity")
    st.dataframe(continuity_table(lang=lang), hide_index=True, key="spline_continuity")

    @page.section(
        heading="spline.local",
        level=3,
        prose="local-intro",
        owns=("spline_bezier", "spline_dx", "spline_dy", "spline_local", "spline_point"),
    )
    def local_part() -> None:
        """Owns the edited point and its move and the question: they change only the local-edit charts."""
        if st.session_state.get("spline_point", 0) > n_ctrl - 1:  # fewer points than the remembered choice
            st.session_state.pop("spline_point")
        e1, e2 = st.columns([1, 2])
        point = e1.slider(
            t("spline.point"),
            0,
            n_ctrl - 1,
            min(5, n_ctrl - 1),
            key="spline_point",
            **URL,
            help=t("spline.point_help", last=n_ctrl - 1),
        )
        with e2, secondary(t("spline.how_far")):
            e3, e4 = st.columns(2)
            dx = e3.slider(t("spline.dx"), -1.0, 1.0, 0.0, 0.05, key="spline_dx", **URL, help=t("spline.range_pm1"))
            dy = e4.slider(t("spline.dy"), -1.0, 1.0, 0.6, 0.05, key="spline_dy", **URL, help=t("spline.range_pm1"))
        E = local_edit(n_ctrl, degree, knots_kind, point, dx, dy)
        # The question comes from the same knot vector and support interval the picture and its caption use.
        section = local_section(n_ctrl, degree, knots_kind, point, lang)
        if section.question is not None:
            ask(section.question)
        else:
            st.info(section.note)
        l1, l2 = st.columns(2)
        with l1:
            # The stretch that moved, and its t-interval, answer the question: they wait for Reveal.
            with folded(section.question, "local"):
                plot(
                    spline_figures.curve_edit(
                        E.bspline_before,
                        E.bspline_after,
                        E.bspline_changed,
                        t("spline.bspline_title", degree=degree, kind=kind_word, point=point),
                        ctrl_before=E.ctrl_before,
                        ctrl_after=E.ctrl_after,
                    ),
                    "spline_local",
                )
            if answer_shown(section.question, "support"):
                st.caption(
                    t(
                        "spline.bspline_caption",
                        point=point,
                        lo=E.support[0],
                        hi=E.support[1],
                        pct=100 * E.bspline_changed_fraction,
                    )
                )
            st.caption(contact_line(n_ctrl, degree, knots_kind, lang))
        with l2:
            plot(
                spline_figures.curve_edit(
                    E.bezier_before,
                    E.bezier_after,
                    E.bezier_changed,
                    t("spline.bezier_title", degree=n_ctrl - 1, point=point),
                    ctrl_before=E.ctrl_before,
                    ctrl_after=E.ctrl_after,
                ),
                "spline_bezier",
            )
            st.caption(t("spline.bezier_caption", pct=100 * E.bezier_changed_fraction))
        page.prose("local-note")

    local_part()


part1_section()

# ================================================================= part 2: the model
st.header(t("spline.part2"))
page.prose("model-intro")
with st.container(border=True):
    st.markdown(t("spline.choices_heading"))
    page.prose("choices")

shipped = shipped_view(lang)
shape_name = option_names(models.KINDS, lambda k: t(f"spline.shape.{k}"))


@page.section(
    heading="spline.pick",
    level=3,
    prose="pick",
    owns=("spline_letter", "spline_mse_table", "spline_recon", "spline_shape", "spline_[abc]"),
)
def model_part() -> None:
    """Owns the shape and its parameters, which the edit below also reads (its own controls nest)."""
    p1, p2, p3, p4, p5 = st.columns(5)
    SHAPE = Param.choice("spline_shape", models.KINDS, default="letter")
    choice(SHAPE)
    family = SHAPE.widget(
        p1.selectbox, t("spline.family"), SHAPE.options, format_func=shape_name, help=t("spline.family_help")
    )
    letter = p2.selectbox(
        t("spline.letter"),
        models.LETTER_NAMES,
        index=5,
        key="spline_letter",
        **URL,
        help=t("spline.letter_help"),
        disabled=family != "letter",
    )
    a, b, c = (
        col.slider(
            t("spline.param_label", letter=name, name=t(f"spline.param.{family}.{name}")),
            0.0,
            1.0,
            0.5,
            0.05,
            key=f"spline_{name}",
            **URL,
            help=t("spline.range_01"),
        )
        for col, name in ((p3, "a"), (p4, "b"), (p5, "c"))
    )

    R = reconstruct(family, a, b, c, letter)
    r1, r2 = st.columns([3, 2])
    with r1:
        plot(
            spline_figures.curves_2d(
                {
                    t("spline.input"): R.points,
                    t("spline.model_spline"): R.spline,
                    t("spline.model_pe"): R.pe_cat,
                    t("spline.model_alibi"): R.alibi_cat,
                },
                t("spline.recon_title"),
                dotted=(t("spline.input"),),
            ),
            "spline_recon",
        )
    with r2:
        st.dataframe(R.table(lang), hide_index=True, key="spline_mse_table")
        st.caption(shipped.recon_caption)

    st.subheader(t("spline.trajectory"))
    page.prose("trajectory")

    @page.section(
        heading="spline.edit",
        level=3,
        prose="edit",
        owns=(
            "spline_change",
            "spline_ctrl",
            "spline_decoded_edit",
            "spline_latent",
            "spline_pc1",
            "spline_pc2",
            "spline_pe_change",
        ),
    )
    def edit_part() -> None:
        """Owns the control point and the two moves: they change only the edit's charts."""
        k1, k2, k3 = st.columns(3)
        K = len(R.ctrl_2d)
        ctrl_index = k1.slider(
            t("spline.ctrl"), 0, K - 1, 4, key="spline_ctrl", **URL, help=t("spline.ctrl_help", last=K - 1)
        )
        along1 = k2.slider(t("spline.pc1"), -3.0, 3.0, 1.5, 0.25, key="spline_pc1", **URL, help=t("spline.pc1_help"))
        along2 = k3.slider(t("spline.pc2"), -3.0, 3.0, 0.0, 0.25, key="spline_pc2", **URL, help=t("spline.pc2_help"))
        L = edit_latent(family, a, b, c, letter, ctrl_index, along1, along2)
        t1, t2 = st.columns(2)
        with t1:
            plot(
                spline_figures.latent_trajectory(
                    L.traj_2d,
                    L.ctrl_2d,
                    t("spline.latent_title"),
                    t=R.t,
                    traj_after=L.traj_2d_after,
                    ctrl_after=L.ctrl_2d_after,
                    moved=ctrl_index,
                ),
                "spline_latent",
            )
            st.caption(t("spline.latent_caption", pct=100 * L.explained, n=len(L.traj_2d), k=K))
        with t2:
            plot(
                spline_figures.curve_edit(
                    L.decoded,
                    L.decoded_after,
                    L.in_support,
                    t("spline.decoded_title", k=ctrl_index),
                    names=(t("spline.decoded_before"), t("spline.decoded_after"), t("spline.in_support", k=ctrl_index)),
                    markers=True,
                ),
                "spline_decoded_edit",
            )
        b1, b2 = st.columns(2)
        with b1:
            plot(
                F.bars(
                    L.labels,
                    L.change,
                    t("spline.change_title", k=ctrl_index),
                    x_title=t("spline.position_j"),
                    y_title=t("spline.delta_output"),
                    highlight=L.support_indices,
                ),
                "spline_change",
            )
            st.caption(
                t(
                    "spline.change_caption",
                    n_in=len(L.support_indices),
                    n=len(L.labels),
                    pct=100 * L.support_share,
                    k=ctrl_index,
                    share=100 * L.share_in_support,
                )
            )
        with b2:
            plot(
                F.bars(
                    L.labels,
                    L.pe_change,
                    t("spline.pe_change_title", k=ctrl_index),
                    x_title=t("spline.position_j"),
                    y_title=t("spline.delta_output"),
                    highlight=L.support_indices,
                ),
                "spline_pe_change",
            )
            st.caption(
                t("spline.pe_change_caption", n_in=len(L.support_indices), share=100 * L.pe_share_same_positions)
                if L.pe_moved
                else t("spline.pe_no_move")
            )

    edit_part()


model_part()


@page.section(
    heading="spline.blend",
    level=3,
    prose="blend",
    owns=("spline_alpha", "spline_blend", "spline_blend_a", "spline_blend_b", "spline_blend_la", "spline_blend_lb"),
)
def blend_section() -> None:
    """Owns the two curves and the mix: they change only the blend chart."""
    q1, q2, q3, q4, q5 = st.columns(5)
    BLEND_A = Param.choice("spline_blend_a", models.KINDS, default="sine")
    fam_a = BLEND_A.widget(
        q1.selectbox, t("spline.curve_a"), BLEND_A.options, format_func=shape_name, help=t("spline.curve_help")
    )
    let_a = q2.selectbox(
        t("spline.letter_a"),
        models.LETTER_NAMES,
        index=0,
        key="spline_blend_la",
        **URL,
        disabled=fam_a != "letter",
        help=t("spline.letter_a_help"),
    )
    BLEND_B = Param.choice("spline_blend_b", models.KINDS, default="letter")
    choice(BLEND_B)
    fam_b = BLEND_B.widget(
        q3.selectbox, t("spline.curve_b"), BLEND_B.options, format_func=shape_name, help=t("spline.curve_help")
    )
    let_b = q4.selectbox(
        t("spline.letter_b"),
        models.LETTER_NAMES,
        index=4,
        key="spline_blend_lb",
        **URL,
        disabled=fam_b != "letter",
        help=t("spline.letter_b_help"),
    )
    alpha = q5.slider(t("spline.alpha"), 0.0, 1.0, 0.5, 0.05, key="spline_alpha", **URL, help=t("spline.range_01"))
    M = blend(fam_a, let_a, fam_b, let_b, alpha)
    plot(
        spline_figures.curves_2d(
            {
                "A": M.a,
                "B": M.b,
                t("spline.point_mix"): M.straight,
                t("spline.model_spline_short"): M.spline,
                t("spline.model_pe"): M.pe_cat,
            },
            t("spline.blend_title", alpha=alpha),
            dotted=("A", "B"),
        ),
        "spline_blend",
    )


blend_section()


@page.section(heading="spline.baseline", level=3, prose="baseline", owns=("spline_curves", "spline_table"))
def baseline_section() -> None:
    """Owns only its chart's Numbers panel: the shipped models' training curves."""
    st.dataframe(shipped.baseline_table, hide_index=True, key="spline_table")
    plot(
        F.lines(
            shipped.curve_steps,
            shipped.curves,
            t("spline.curves_title"),
            x_title=t("spline.training_step"),
            y_title=t("spline.test_mse_log"),
            log_y=True,
        ),
        "spline_curves",
    )
    st.caption(shipped.train_caption)


baseline_section()

st.subheader(t("spline.lr"))
page.prose("lr")
sweep = shipped.sweep
if sweep is None:
    st.info(t("spline.no_sweep"))
    st.stop()
s1, s2 = st.columns(2)
for col, kind, title in ((s1, "spline", t("spline.title_spline")), (s2, "pe-cat", t("spline.model_pe"))):
    steps, ys = sweep.curves[kind]
    with col:
        fig = F.lines(
            steps,
            ys,
            t("spline.sweep_title", model=title, steps=sweep.steps),
            x_title=t("spline.training_step"),
            y_title=t("spline.test_mse_log"),
            log_y=True,
        )
        plot(F.mark_lines(fig, y={t("spline.mean_point"): sweep.mean_mse[kind]}), f"spline_sweep_{kind}")
st.dataframe(sweep.table, hide_index=True, key="spline_sweep_table")
st.markdown(sweep.best_line)
st.caption(sweep.verdict)
