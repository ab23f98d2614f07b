"""Chapter: Spline-based Transformers — B-splines, local control, a sequence as a latent trajectory."""

import numpy as np
import streamlit as st

from encoders import spline as enc
from explain import figures as F
from explain import i18n
from explain.chapters import spline as ch
from explain.chapters import spline_figures
from explain.i18n import language
from lab import spline_data
from ui.common import header, plot, prose
from ui.i18n import t
from ui.presenter import secondary
from ui.question import predict
from ui.url_state import URL

KEY = "spline"
header(
    KEY,
    enc.PAPER,
    sources=(enc.bspline_basis, enc.clamped_knots, enc.uniform_knots, enc.bspline_curve, enc.SplineBottleneck.forward),
)
prose(KEY, "intro")

basis = st.cache_data(max_entries=64)(ch.basis)
local_edit = st.cache_data(max_entries=64)(ch.local_edit)
reconstruct = st.cache_data(max_entries=64)(ch.reconstruct)
edit_latent = st.cache_data(max_entries=64)(ch.edit_latent)
blend = st.cache_data(max_entries=64)(ch.blend)
shipped_metrics = st.cache_data(ch.shipped_metrics)
sweep_curves = st.cache_data(ch.sweep_curves)

# ================================================================= part 1: B-splines
st.header(t("spline.part1"))
prose(KEY, "basis-intro")
c1, c2, c3 = st.columns(3)
degree = c1.slider(t("spline.degree"), 1, 5, 3, key="spline_degree", **URL, help=t("spline.degree_help"))
n_ctrl = c2.slider(
    t("spline.n_ctrl"), 6, ch.MAX_CTRL, 10, key="spline_k", **URL, help=t("spline.n_ctrl_help", max_ctrl=ch.MAX_CTRL)
)
# Option values stay the ids "clamped" / "uniform" (kept in the URL); only their labels are translated.
# Each format_func binds this run's language: AppTest calls it again outside the script run.
knots_kind = c3.radio(
    t("spline.knots"),
    ("clamped", "uniform"),
    horizontal=True,
    key="spline_knots",
    **URL,
    format_func=lambda k, lang=language(): i18n.t(f"spline.knot.{k}", lang),
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
        knots=", ".join(f"{k:.3g}" for k in B.knots),
        lo=B.domain[0],
        hi=B.domain[1],
        dev=np.abs(B.total[(B.t >= B.domain[0]) & (B.t <= B.domain[1])] - 1).max(),
        spans=", ".join(map(str, B.spans)),
    )
)
prose(KEY, "basis-read")

st.subheader(t("spline.continuity"))
prose(KEY, "continuity")
st.dataframe(ch.continuity_table(lang=language()), hide_index=True, key="spline_continuity")

st.subheader(t("spline.local"))
prose(KEY, "local-intro")
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
# The answer comes from the same knot vector and support interval the picture and its caption use.
moved_spans, n_spans = ch.spans_moved(n_ctrl, degree, knots_kind, point)
predict(
    "spline_q",
    t("spline.predict_q", point=point, kind=kind_word, degree=degree, n=n_ctrl, n_spans=n_spans),
    sorted(set(range(1, min(degree + 1, n_spans) + 1)) | {n_spans}),
    moved_spans,
    t(
        "spline.predict_a",
        moved=moved_spans,
        n_spans=n_spans,
        point=point,
        degree=degree,
        end=point + degree + 1,
        p1=degree + 1,
    )
    + t("spline.predict_inside" if moved_spans == degree + 1 else "spline.predict_ends")
    + t("spline.predict_rest", lo=E.support[0], hi=E.support[1]),
    format_func=lambda n: (
        t("spline.span_one" if n == 1 else "spline.span_many", n=n) + (t("spline.all_of_them") if n == n_spans else "")
    ),
)
l1, l2 = st.columns(2)
with l1:
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
    st.caption(
        t("spline.bspline_caption", point=point, lo=E.support[0], hi=E.support[1], pct=100 * E.bspline_changed_fraction)
    )
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
prose(KEY, "local-note")

# ================================================================= part 2: the model
st.header(t("spline.part2"))
prose(KEY, "model-intro")
with st.container(border=True):
    st.markdown(t("spline.choices_heading"))
    prose(KEY, "choices")

metrics = shipped_metrics()
sm, pm, am = metrics["spline"], metrics["pe-cat"], metrics["alibi-cat"]

st.subheader(t("spline.pick"))
prose(KEY, "pick")
p1, p2, p3, p4, p5 = st.columns(5)
shape = lambda k, lang=language(): i18n.t(f"spline.shape.{k}", lang)  # noqa: E731  values stay spline_data.KINDS ids
family = p1.selectbox(
    t("spline.family"),
    spline_data.KINDS,
    index=3,
    key="spline_shape",
    **URL,
    format_func=shape,
    help=t("spline.family_help"),
)
letter = p2.selectbox(
    t("spline.letter"),
    spline_data.LETTER_NAMES,
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
    cols = [t("spline.col_model"), t("spline.col_this_curve"), t("spline.col_test_set")]
    st.dataframe(
        [
            dict(zip(cols, (t("spline.row_spline"), round(R.spline_mse, 5), round(sm["test_mse"], 5)), strict=False)),
            dict(zip(cols, (t("spline.model_pe"), round(R.pe_cat_mse, 5), round(pm["test_mse"], 5)), strict=False)),
            dict(
                zip(cols, (t("spline.model_alibi"), round(R.alibi_cat_mse, 5), round(am["test_mse"], 5)), strict=False)
            ),
        ],
        hide_index=True,
        key="spline_mse_table",
    )
    st.caption(
        t(
            "spline.recon_caption",
            size=sm["test_set"]["size"],
            seed=sm["test_set"]["seed"],
            mean=sm["mean_prediction_mse"],
        )
    )

st.subheader(t("spline.trajectory"))
prose(KEY, "trajectory")
st.subheader(t("spline.edit"))
prose(KEY, "edit")
k1, k2, k3 = st.columns(3)
K = len(R.ctrl_2d)
ctrl_index = k1.slider(t("spline.ctrl"), 0, K - 1, 4, key="spline_ctrl", **URL, help=t("spline.ctrl_help", last=K - 1))
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
labels = [str(j) for j in range(len(L.change))]
support_idx = tuple(int(j) for j in np.flatnonzero(L.in_support))
with b1:
    plot(
        F.bars(
            labels,
            L.change,
            t("spline.change_title", k=ctrl_index),
            x_title=t("spline.position_j"),
            y_title=t("spline.delta_output"),
            highlight=support_idx,
        ),
        "spline_change",
    )
    st.caption(
        t(
            "spline.change_caption",
            n_in=len(support_idx),
            n=len(labels),
            pct=100 * len(support_idx) / len(labels),
            k=ctrl_index,
            share=100 * L.share_in_support,
        )
    )
with b2:
    plot(
        F.bars(
            labels,
            L.pe_change,
            t("spline.pe_change_title", k=ctrl_index),
            x_title=t("spline.position_j"),
            y_title=t("spline.delta_output"),
            highlight=support_idx,
        ),
        "spline_pe_change",
    )
    share = L.pe_share_same_positions
    st.caption(
        t("spline.pe_change_caption", n_in=len(support_idx), share=100 * share)
        if np.isfinite(share)
        else t("spline.pe_no_move")
    )

st.subheader(t("spline.blend"))
prose(KEY, "blend")
q1, q2, q3, q4, q5 = st.columns(5)
fam_a = q1.selectbox(
    t("spline.curve_a"),
    spline_data.KINDS,
    index=0,
    key="spline_blend_a",
    **URL,
    format_func=shape,
    help=t("spline.curve_help"),
)
let_a = q2.selectbox(
    t("spline.letter_a"),
    spline_data.LETTER_NAMES,
    index=0,
    key="spline_blend_la",
    **URL,
    disabled=fam_a != "letter",
    help=t("spline.letter_a_help"),
)
fam_b = q3.selectbox(
    t("spline.curve_b"),
    spline_data.KINDS,
    index=3,
    key="spline_blend_b",
    **URL,
    format_func=shape,
    help=t("spline.curve_help"),
)
let_b = q4.selectbox(
    t("spline.letter_b"),
    spline_data.LETTER_NAMES,
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

st.subheader(t("spline.baseline"))
prose(KEY, "baseline")
rows = []
for name, m in (("model_spline", sm), ("row_pe", pm), ("row_alibi", am)):
    row = {t("spline.col_model"): t(f"spline.{name}"), t("spline.col_test_mse"): round(m["test_mse"], 5)}
    row.update({shape(k): round(v, 5) for k, v in m["test_mse_by_family"].items()})
    row.update(
        {
            t("spline.col_parameters"): m["n_params"],
            t("spline.col_steps"): m["train"]["steps"],
            t("spline.col_peak_lr"): m["train"]["lr"],
            t("spline.col_cpu"): m["cpu_seconds"],
        }
    )
    rows.append(row)
st.dataframe(rows, hide_index=True, key="spline_table")
plot(
    F.lines(
        sm["curve"]["step"],
        {
            t("spline.curve_test_mse", model=t("spline.model_spline_short")): sm["curve"]["test_mse"],
            t("spline.curve_test_mse", model=t("spline.model_pe")): pm["curve"]["test_mse"],
            t("spline.curve_test_mse", model=t("spline.model_alibi")): am["curve"]["test_mse"],
        },
        t("spline.curves_title"),
        x_title=t("spline.training_step"),
        y_title=t("spline.test_mse_log"),
        log_y=True,
    ),
    "spline_curves",
)
# The schedule is rebuilt from the recipe's numbers (the metrics file's "schedule" text is English only).
st.caption(
    t(
        "spline.train_caption",
        schedule=t("spline.schedule", warmup=sm["train"]["warmup"], clip=sm["train"]["clip"]),
        batch=sm["train"]["batch"],
        n_train=sm["train"]["n_train"],
        seed=sm["train"]["data_seed"],
        torch=sm["torch"],
        threads=sm["threads"],
    )
)

st.subheader(t("spline.lr"))
prose(KEY, "lr")
sweep = metrics["lr_sweep"]
if sweep is None:
    st.info(t("spline.no_sweep"))
    st.stop()
s1, s2 = st.columns(2)
for col, kind, title in ((s1, "spline", t("spline.title_spline")), (s2, "pe-cat", t("spline.model_pe"))):
    steps, ys = sweep_curves(kind, language())
    with col:
        fig = F.lines(
            steps,
            ys,
            t("spline.sweep_title", model=title, steps=sweep["steps"]),
            x_title=t("spline.training_step"),
            y_title=t("spline.test_mse_log"),
            log_y=True,
        )
        mean_mse = next(r["mean_prediction_mse"] for r in sweep["runs"] if r["kind"] == kind)
        plot(F.mark_lines(fig, y={t("spline.mean_point"): mean_mse}), f"spline_sweep_{kind}")
by = {(r["kind"], r["lr"]): r for r in sweep["runs"]}


def _status(r: dict) -> str:
    if r["unstable"]:
        return t("spline.status_unstable") + (
            t("spline.status_diverged", step=r["diverged_at_step"]) if r["diverged_at_step"] is not None else ""
        )
    # Not unstable by the rule, but a learner should not read "ok" next to an error near the mean's.
    return t("spline.status_barely") if r["test_mse"] > 0.5 * r["mean_prediction_mse"] else t("spline.status_learned")


SWEEP_NAMES = {"spline": t("spline.model_spline_col"), "pe-cat": t("spline.model_pe")}
table = []
for lr in sweep["lrs"]:
    row = {t("spline.col_peak_lr"): lr}
    for kind, name in SWEEP_NAMES.items():
        row.update({t("spline.col_final", model=name): by[(kind, lr)]["test_mse"], name: _status(by[(kind, lr)])})
    table.append(row)
st.dataframe(table, hide_index=True, key="spline_sweep_table")
best = {k: min((r for r in sweep["runs"] if r["kind"] == k), key=lambda r: r["test_mse"]) for k in ("spline", "pe-cat")}
st.markdown(
    t(
        "spline.best",
        steps=sweep["steps"],
        lr_s=best["spline"]["lr"],
        mse_s=best["spline"]["test_mse"],
        lr_p=best["pe-cat"]["lr"],
        mse_p=best["pe-cat"]["test_mse"],
    )
)
unstable = [t("spline.unstable_run", model=SWEEP_NAMES[r["kind"]], lr=r["lr"]) for r in sweep["runs"] if r["unstable"]]
verdict = (
    t("spline.verdict_unstable", runs="; ".join(unstable))
    if unstable
    else t("spline.verdict_stable", lr=max(sweep["lrs"]))
)
# The rule is written out in the catalogue (the sweep file states it in English only); both say what
# lab.spline_train computes: non-finite loss, or final test MSE ≥ the mean point's.
st.caption(verdict + t("spline.rule"))
