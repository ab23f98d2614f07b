"""Chapter: Spline-based Transformers — B-splines, local control, a sequence as a latent trajectory."""

import numpy as np
import streamlit as st

from encoders import spline as enc
from explain import figures as F
from explain.chapters import spline as ch
from lab import spline_data
from ui.classroom import URL, predict, secondary
from ui.common import header, plot, prose

KEY = "spline"
header(KEY, enc.PAPER, sources=(enc.bspline_basis, enc.clamped_knots, enc.uniform_knots, enc.bspline_curve,
                               enc.SplineBottleneck.forward))
prose(KEY, "intro")

basis = st.cache_data(max_entries=64)(ch.basis)
local_edit = st.cache_data(max_entries=64)(ch.local_edit)
reconstruct = st.cache_data(max_entries=64)(ch.reconstruct)
edit_latent = st.cache_data(max_entries=64)(ch.edit_latent)
blend = st.cache_data(max_entries=64)(ch.blend)
shipped_metrics = st.cache_data(ch.shipped_metrics)
sweep_curves = st.cache_data(ch.sweep_curves)

# ================================================================= part 1: B-splines
st.header("Part 1 · B-splines and local control")
prose(KEY, "basis-intro")
c1, c2, c3 = st.columns(3)
degree = c1.slider("Degree p", 1, 5, 3, key="spline_degree", **URL, help="1 (straight pieces) to 5 (quintic).")
n_ctrl = c2.slider("Control points K", 6, ch.MAX_CTRL, 10, key="spline_k", **URL,
                   help=f"6 to {ch.MAX_CTRL}; K basis functions, K + p + 1 knots.")
knots_kind = c3.radio("Knot vector", ("clamped", "uniform"), horizontal=True, key="spline_knots", **URL,
                      help="Clamped: end knots repeated p + 1 times, the curve ends on P0 and P(K−1). "
                           "Uniform: evenly spaced knots.")
B = basis(degree, n_ctrl, knots_kind)
plot(F.spline_basis(B.t, B.N, B.knots, B.domain,
                    f"The {n_ctrl} basis functions of degree {degree}, {knots_kind} knots"), "spline_basis")
knot_text = ", ".join(f"{k:.3g}" for k in B.knots)
st.caption(f"Knots ({len(B.knots)} = K + p + 1): {knot_text}. Domain [{B.domain[0]:.3g}, {B.domain[1]:.3g}]; "
           f"inside it the sum of the basis functions differs from 1 by at most "
           f"{np.abs(B.total[(B.t >= B.domain[0]) & (B.t <= B.domain[1])] - 1).max():.1e}. "
           f"Non-empty knot spans under each function: {', '.join(map(str, B.spans))}.")
prose(KEY, "basis-read")

st.subheader("Smoothness: continuity order per degree")
prose(KEY, "continuity")
st.dataframe(ch.continuity_table(), hide_index=True, key="spline_continuity")

st.subheader("Local control: move one point")
prose(KEY, "local-intro")
if st.session_state.get("spline_point", 0) > n_ctrl - 1:  # fewer points than the remembered choice
    st.session_state.pop("spline_point")
e1, e2 = st.columns([1, 2])
point = e1.slider("Control point to move", 0, n_ctrl - 1, min(5, n_ctrl - 1), key="spline_point", **URL,
                  help=f"P0 to P{n_ctrl - 1} (one of the K points).")
with e2, secondary("How far it moves"):
    e3, e4 = st.columns(2)
    dx = e3.slider("Move in x", -1.0, 1.0, 0.0, 0.05, key="spline_dx", **URL, help="−1 to 1.")
    dy = e4.slider("Move in y", -1.0, 1.0, 0.6, 0.05, key="spline_dy", **URL, help="−1 to 1.")
E = local_edit(n_ctrl, degree, knots_kind, point, dx, dy)
# The answer comes from the same knot vector and support interval the picture and its caption use.
moved_spans, n_spans = ch.spans_moved(n_ctrl, degree, knots_kind, point)
predict(
    "spline_q", f"You move control point **P{point}** of the {knots_kind} B-spline of degree p = {degree} with "
    f"K = {n_ctrl} control points. Its domain has {n_spans} knot spans: on how many of them can the curve change?",
    sorted(set(range(1, min(degree + 1, n_spans) + 1)) | {n_spans}), moved_spans,
    f"**{moved_spans}** of {n_spans}. P{point} is weighted by $N_{{{point},{degree}}}$, which is non-zero only on "
    f"$[t_{{{point}}}, t_{{{point + degree + 1}}})$: at most p + 1 = {degree + 1} knot spans. "
    + ("All of them lie inside the domain here. " if moved_spans == degree + 1 else
       "Near the ends, part of that interval lies outside the domain or has zero length (repeated knots), "
       "so fewer spans are left. ")
    + f"Here that is t ∈ [{E.support[0]:.3g}, {E.support[1]:.3g}]; every other span keeps its shape exactly. "
    "The Bézier curve through the same points has one span only, and all of it moves.",
    format_func=lambda n: f"{n} span{'s' if n != 1 else ''}" + (" (all of them)" if n == n_spans else ""),
)
l1, l2 = st.columns(2)
with l1:
    plot(F.curve_edit(E.bspline_before, E.bspline_after, E.bspline_changed,
                      f"B-spline (degree {degree}, {knots_kind}): moving P{point}",
                      ctrl_before=E.ctrl_before, ctrl_after=E.ctrl_after), "spline_local")
    st.caption(f"P{point} acts on t ∈ [{E.support[0]:.3g}, {E.support[1]:.3g}]: "
               f"{100 * E.bspline_changed_fraction:.0f}% of the curve moved, the rest by exactly 0.")
with l2:
    plot(F.curve_edit(E.bezier_before, E.bezier_after, E.bezier_changed,
                      f"Bézier (degree {n_ctrl - 1}), same points: moving P{point}",
                      ctrl_before=E.ctrl_before, ctrl_after=E.ctrl_after), "spline_bezier")
    st.caption(f"Every Bernstein weight is positive on (0, 1), so every interior point moved; "
               f"{100 * E.bezier_changed_fraction:.0f}% moved by more than 10⁻⁹.")
prose(KEY, "local-note")

# ================================================================= part 2: the model
st.header("Part 2 · A Spline-based Transformer autoencoder")
prose(KEY, "model-intro")
with st.container(border=True):
    st.markdown("#### What is known, what we chose, what is unknown")
    prose(KEY, "choices")

metrics = shipped_metrics()
sm, pm, am = metrics["spline"], metrics["pe-cat"], metrics["alibi-cat"]

st.subheader("Pick an input curve")
prose(KEY, "pick")
p1, p2, p3, p4, p5 = st.columns(5)
family = p1.selectbox("Shape family", spline_data.KINDS, index=3, key="spline_shape", **URL,
                      help="Sines (left to right), arcs and spirals (counter-clockwise), letters (stroke order).")
letter = p2.selectbox("Letter", spline_data.LETTER_NAMES, index=5, key="spline_letter", **URL,
                      help="Used when the family is 'letter'.", disabled=family != "letter")
HELP = {"sine": ("amplitude", "half-waves (1–4)", "phase"), "arc": ("radius", "sweep (180°–330°)", "start angle"),
        "spiral": ("outer radius", "turns (1–2)", "start angle"), "letter": ("size", "slant", "rotation")}
a = p3.slider(f"a: {HELP[family][0]}", 0.0, 1.0, 0.5, 0.05, key="spline_a", **URL, help="0 to 1.")
b = p4.slider(f"b: {HELP[family][1]}", 0.0, 1.0, 0.5, 0.05, key="spline_b", **URL, help="0 to 1.")
c = p5.slider(f"c: {HELP[family][2]}", 0.0, 1.0, 0.5, 0.05, key="spline_c", **URL, help="0 to 1.")

R = reconstruct(family, a, b, c, letter)
r1, r2 = st.columns([3, 2])
with r1:
    plot(F.curves_2d({"input": R.points, "spline model (no PE)": R.spline, "PE baseline": R.pe_cat,
                      "ALiBi baseline": R.alibi_cat},
                     "Input and the three reconstructions (big dot: position 0)", dotted=("input",)), "spline_recon")
with r2:
    st.dataframe(
        [{"model": "spline (no PE)", "this curve": round(R.spline_mse, 5), "test set": round(sm["test_mse"], 5)},
         {"model": "PE baseline", "this curve": round(R.pe_cat_mse, 5), "test set": round(pm["test_mse"], 5)},
         {"model": "ALiBi baseline", "this curve": round(R.alibi_cat_mse, 5), "test set": round(am["test_mse"], 5)}],
        hide_index=True, key="spline_mse_table")
    st.caption("Reconstruction error: mean squared error per coordinate, coordinates in [−1, 1]. "
               f"Test set: {sm['test_set']['size']} curves (seed {sm['test_set']['seed']}), "
               f"all four families. Always predicting the mean point scores {sm['mean_prediction_mse']:.4f}.")

st.subheader("The latent trajectory and its control points")
prose(KEY, "trajectory")
st.subheader("Edit one latent control point")
prose(KEY, "edit")
k1, k2, k3 = st.columns(3)
K = len(R.ctrl_2d)
ctrl_index = k1.slider("Control point to move", 0, K - 1, 4, key="spline_ctrl", **URL, help=f"P0 to P{K - 1}.")
along1 = k2.slider("Along PC 1 (× spread)", -3.0, 3.0, 1.5, 0.25, key="spline_pc1", **URL,
                   help="−3 to 3 standard deviations of the trajectory along its first principal direction.")
along2 = k3.slider("Along PC 2 (× spread)", -3.0, 3.0, 0.0, 0.25, key="spline_pc2", **URL,
                   help="−3 to 3 standard deviations along the second principal direction.")
L = edit_latent(family, a, b, c, letter, ctrl_index, along1, along2)
t1, t2 = st.columns(2)
with t1:
    plot(F.latent_trajectory(L.traj_2d, L.ctrl_2d, "Latent trajectory (PCA of this curve's latents)",
                             t=R.t, traj_after=L.traj_2d_after, ctrl_after=L.ctrl_2d_after, moved=ctrl_index),
         "spline_latent")
    st.caption(f"The two principal directions capture {100 * L.explained:.0f}% of the spread of the "
               f"{len(L.traj_2d)} samples and {K} control points; the rest is not drawn.")
with t2:
    plot(F.curve_edit(L.decoded, L.decoded_after, L.in_support, f"Decoded curve before and after moving P{ctrl_index}",
                      names=("decoded before", "decoded after", f"positions in P{ctrl_index}'s support"),
                      markers=True), "spline_decoded_edit")
b1, b2 = st.columns(2)
labels = [str(j) for j in range(len(L.change))]
support_idx = tuple(int(j) for j in np.flatnonzero(L.in_support))
with b1:
    plot(F.bars(labels, L.change, f"Spline model: |Δ output| after moving P{ctrl_index}",
                x_title="position j", y_title="|Δ output|", highlight=support_idx), "spline_change")
    st.caption(f"Orange: the {len(support_idx)} of {len(labels)} positions ({100 * len(support_idx) / len(labels):.0f}%) "
               f"whose sample lies in P{ctrl_index}'s support. {100 * L.share_in_support:.0f}% of the total "
               "movement falls on them.")
with b2:
    plot(F.bars(labels, L.pe_change, f"PE baseline: |Δ output| after moving latent {ctrl_index}",
                x_title="position j", y_title="|Δ output|", highlight=support_idx), "spline_pe_change")
    share = L.pe_share_same_positions
    st.caption(f"Orange: the same {len(support_idx)} positions as on the left. {100 * share:.0f}% of the "
               "baseline's movement falls on them."
               if np.isfinite(share) else "The baseline's output did not move.")

st.subheader("Interpolate between two curves")
prose(KEY, "blend")
q1, q2, q3, q4, q5 = st.columns(5)
fam_a = q1.selectbox("Curve A", spline_data.KINDS, index=0, key="spline_blend_a", **URL, help="Parameters at their middle.")
let_a = q2.selectbox("Letter A", spline_data.LETTER_NAMES, index=0, key="spline_blend_la", **URL,
                     disabled=fam_a != "letter", help="Used when curve A is a letter.")
fam_b = q3.selectbox("Curve B", spline_data.KINDS, index=3, key="spline_blend_b", **URL, help="Parameters at their middle.")
let_b = q4.selectbox("Letter B", spline_data.LETTER_NAMES, index=4, key="spline_blend_lb", **URL,
                     disabled=fam_b != "letter", help="Used when curve B is a letter.")
alpha = q5.slider("α (0 = A, 1 = B)", 0.0, 1.0, 0.5, 0.05, key="spline_alpha", **URL, help="0 to 1.")
M = blend(fam_a, let_a, fam_b, let_b, alpha)
plot(F.curves_2d({"A": M.a, "B": M.b, "point-by-point mix": M.straight, "spline model": M.spline,
                  "PE baseline": M.pe_cat},
                 f"Blending control points, α = {alpha:.2f}", dotted=("A", "B")), "spline_blend")

st.subheader("The baselines: same autoencoder, positions from a positional encoding")
prose(KEY, "baseline")
rows = []
for name, m in (("spline model (no PE)", sm), ("PE baseline (sinusoidal, Cat)", pm), ("ALiBi baseline (Cat)", am)):
    row = {"model": name, "test MSE": round(m["test_mse"], 5)}
    row.update({f"{k}": round(v, 5) for k, v in m["test_mse_by_family"].items()})
    row.update({"parameters": m["n_params"], "steps": m["train"]["steps"], "peak lr": m["train"]["lr"],
                "CPU time (s)": m["cpu_seconds"]})
    rows.append(row)
st.dataframe(rows, hide_index=True, key="spline_table")
plot(F.lines(sm["curve"]["step"], {"spline model: test MSE": sm["curve"]["test_mse"],
                                   "PE baseline: test MSE": pm["curve"]["test_mse"],
                                   "ALiBi baseline: test MSE": am["curve"]["test_mse"]},
             "Learning curves of the shipped models", x_title="training step", y_title="test MSE (log)",
             log_y=True), "spline_curves")
st.caption(f"{sm['schedule']}; batch {sm['train']['batch']}, {sm['train']['n_train']} training curves "
           f"(seed {sm['train']['data_seed']}), torch {sm['torch']}, {sm['threads']} thread. "
           "Regenerate with `python -m lab.spline_train`.")

st.subheader("Learning-rate sensitivity (measured on this toy)")
prose(KEY, "lr")
sweep = metrics["lr_sweep"]
if sweep is None:
    st.info("The learning-rate sweep has not been generated yet: run `python -m lab.spline_train --only sweep`.")
    st.stop()
s1, s2 = st.columns(2)
for col, kind, title in ((s1, "spline", "Spline model"), (s2, "pe-cat", "PE baseline")):
    steps, ys = sweep_curves(kind)
    with col:
        fig = F.lines(steps, ys, f"{title}: test MSE during {sweep['steps']} steps", x_title="training step",
                      y_title="test MSE (log)", log_y=True)
        mean_mse = next(r["mean_prediction_mse"] for r in sweep["runs"] if r["kind"] == kind)
        plot(F.mark_lines(fig, y={"always predicting the mean point": mean_mse}), f"spline_sweep_{kind}")
by = {(r["kind"], r["lr"]): r for r in sweep["runs"]}


def _status(r: dict) -> str:
    if r["unstable"]:
        return "unstable" + (f", diverged at step {r['diverged_at_step']}" if r["diverged_at_step"] is not None else "")
    # Not unstable by the rule, but a learner should not read "ok" next to an error near the mean's.
    return "barely learned (error > ½ of the mean's)" if r["test_mse"] > 0.5 * r["mean_prediction_mse"] else "learned"


table = [{"peak lr": lr,
          "spline: final test MSE": by[("spline", lr)]["test_mse"], "spline": _status(by[("spline", lr)]),
          "PE baseline: final test MSE": by[("pe-cat", lr)]["test_mse"], "PE baseline": _status(by[("pe-cat", lr)])}
         for lr in sweep["lrs"]]
st.dataframe(table, hide_index=True, key="spline_sweep_table")
best = {k: min((r for r in sweep["runs"] if r["kind"] == k), key=lambda r: r["test_mse"]) for k in ("spline", "pe-cat")}
st.markdown(f"After {sweep['steps']} steps the best peak learning rate was **{best['spline']['lr']:g}** for the "
            f"spline model (test MSE {best['spline']['test_mse']:.4f}) and **{best['pe-cat']['lr']:g}** for the "
            f"PE baseline ({best['pe-cat']['test_mse']:.4f}).")
unstable = [f"{r['kind']} at lr {r['lr']:g}" for r in sweep["runs"] if r["unstable"]]
verdict = (("Unstable by the rule above: " + "; ".join(unstable) + ".") if unstable else
           f"No run was unstable by the rule above, up to lr {max(sweep['lrs']):g}: at this scale, with warm-up "
           "and clipping, we did not reproduce the instability.")
st.caption(verdict + " Rule: " + sweep["unstable_rule"] + ". “Barely learned”: not unstable by that rule, but the "
           "final error is still more than half of the error of always predicting the mean point.")
