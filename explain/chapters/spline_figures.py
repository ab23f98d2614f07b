"""Figures only the spline chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explain.figures.fast import vline, vrect, vrect_note
from explain.figures.theme import (
    INDEX,
    LINES,
    SYMBOLS,
    colorbar,
    escape,
    make_figure,
)
from explain.i18n import t as _t


def spline_basis(
    t: np.ndarray,
    N: np.ndarray,
    knots: np.ndarray,
    domain: tuple[float, float],
    title: str,
    *,
    height: int = 380,
) -> go.Figure:
    """B-spline basis functions N_i(t) (one Okabe–Ito line each), their sum (dashed black), the
    knots as dotted verticals and the valid domain (where the sum is 1) shaded."""
    traces: list[dict[str, Any]] = []
    shapes = [vrect(domain[0], domain[1], fillcolor="rgba(0,0,0,0.05)", line=dict(width=0))]
    notes = [vrect_note(domain[0], domain[1], "bottom_left", text=_t("figures.domain"), font=dict(size=11))]
    for k in np.unique(knots):
        count = int(np.sum(knots == k))
        shapes.append(vline(float(k), dict(color="rgba(0,0,0,0.35)", width=1, dash="dot")))
        if count > 1:
            notes.append(dict(x=float(k), y=1.08, text=f"×{count}", showarrow=False, font=dict(size=11)))
    for i in range(N.shape[1]):
        traces.append(
            dict(
                type="scatter",
                x=t,
                y=N[:, i],
                mode="lines",
                name=f"N{i}",
                line=dict(color=LINES[i % (len(LINES) - 1)], width=2),
                hovertemplate=f"t: %{{x:.3f}}<br>N{i}(t): %{{y:.4f}}<extra></extra>",
            )
        )
    # Each basis function named at its peak: neighbours overlap, so colour alone would not say
    # which bump is which (WCAG 1.4.1).
    peaks = np.argmax(N, axis=0)  # (basis,)
    traces.append(
        dict(
            type="scatter",
            x=np.asarray(t)[peaks],
            y=N[peaks, np.arange(N.shape[1])],
            mode="text",
            text=[f"N{i}" for i in range(N.shape[1])],
            textposition="top center",
            textfont=dict(size=11, color="#333333"),
            hoverinfo="skip",
            showlegend=False,
            cliponaxis=False,
        )
    )
    traces.append(
        dict(
            type="scatter",
            x=t,
            y=N.sum(axis=1),
            mode="lines",
            name="Σ N_i",
            line=dict(color=LINES[7], width=2, dash="dash"),
            hovertemplate=f"t: %{{x:.3f}}<br>{_t('figures.sum')}: %{{y:.4f}}<extra></extra>",
        )
    )
    return make_figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=_t("figures.spline.parameter")),
        yaxis=dict(title="N_i(t)", range=[-0.05, 1.15]),
        shapes=shapes,
        annotations=notes,
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )


def curve_edit(
    before: np.ndarray,
    after: np.ndarray,
    changed: np.ndarray,
    title: str,
    *,
    ctrl_before: np.ndarray | None = None,
    ctrl_after: np.ndarray | None = None,
    reference: np.ndarray | None = None,
    names: tuple[str, str, str] | None = None,  # default ("before", "after", "changed stretch")
    markers: bool = False,
    height: int = 420,
) -> go.Figure:
    """A 2-D curve before (grey, dashed) and after (blue) an edit, the stretch that changed drawn thick in
    orange; optional control polygons before (grey, dashed) and after (numbered), and an optional
    reference curve (black dotted, e.g. the input a model should reproduce). Equal axis scales."""
    if names is None:
        names = (_t("figures.spline.before"), _t("figures.spline.after"), _t("figures.spline.changed_stretch"))
    traces: list[dict[str, Any]] = []
    mode = "lines+markers" if markers else "lines"
    if reference is not None:
        traces.append(
            dict(
                type="scatter",
                x=reference[:, 0],
                y=reference[:, 1],
                mode="lines+markers",
                name=_t("figures.spline.input"),
                line=dict(color=LINES[7], width=1, dash="dot"),
                marker=dict(size=4, color=LINES[7]),
                hovertemplate=(
                    f"{_t('figures.spline.input')} %{{customdata}}<br>x: %{{x:.3f}}<br>y: %{{y:.3f}}<extra></extra>"
                ),
                customdata=np.arange(len(reference)),
            )
        )
    if ctrl_before is not None:
        traces.append(
            dict(
                type="scatter",
                x=ctrl_before[:, 0],
                y=ctrl_before[:, 1],
                mode="lines+markers",
                name=_t("figures.control_points_before"),
                line=dict(color="rgba(120,120,120,0.6)", dash="dash"),
                marker=dict(size=8, symbol="square-open", color="rgba(120,120,120,0.9)"),
                hovertemplate=(
                    _t("figures.spline.point_before", k="%{customdata}") + "<br>(%{x:.3f}, %{y:.3f})<extra></extra>"
                ),
                customdata=np.arange(len(ctrl_before)),
            )
        )
    if ctrl_after is not None:
        traces.append(
            dict(
                type="scatter",
                x=ctrl_after[:, 0],
                y=ctrl_after[:, 1],
                mode="lines+markers+text",
                name=_t("figures.control_points"),
                line=dict(color=LINES[2], width=1, dash="dash"),
                marker=dict(size=10, color=LINES[2]),
                text=[f"P{i}" for i in range(len(ctrl_after))],
                textposition="top center",
                hovertemplate="%{text}<br>(%{x:.3f}, %{y:.3f})<extra></extra>",
            )
        )
    idx = np.arange(len(before))
    traces.append(
        dict(
            type="scatter",
            x=before[:, 0],
            y=before[:, 1],
            mode=mode,
            name=names[0],
            # dashed as well as grey: where the edit changed nothing, "after" hides "before" — and
            # colour is not the only channel (WCAG 1.4.1)
            line=dict(color="rgba(120,120,120,0.8)", width=2, dash="dash"),
            marker=dict(size=5),
            customdata=idx,
            hovertemplate="%{customdata}<br>x: %{x:.3f}<br>y: %{y:.3f}<extra></extra>",
        )
    )
    traces.append(
        dict(
            type="scatter",
            x=after[:, 0],
            y=after[:, 1],
            mode=mode,
            name=names[1],
            line=dict(color=LINES[0], width=2),
            marker=dict(size=5),
            customdata=idx,
            hovertemplate="%{customdata}<br>x: %{x:.3f}<br>y: %{y:.3f}<extra></extra>",
        )
    )
    hot = np.where(np.asarray(changed, dtype=bool)[:, None], after, np.nan)  # gaps where nothing changed
    traces.append(
        dict(
            type="scatter",
            x=hot[:, 0],
            y=hot[:, 1],
            mode=mode,
            name=names[2],
            line=dict(color=LINES[1], width=6),
            marker=dict(size=7, color=LINES[1]),
            opacity=0.75,
            connectgaps=False,
            customdata=idx,
            hovertemplate=(
                _t("figures.spline.changed", name="%{customdata}") + "<br>x: %{x:.3f}<br>y: %{y:.3f}<extra></extra>"
            ),
        )
    )
    return make_figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title="x", zeroline=False),
        yaxis=dict(title="y", zeroline=False, scaleanchor="x", scaleratio=1),
        legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0),
    )


def latent_trajectory(
    traj: np.ndarray,
    ctrl: np.ndarray,
    title: str,
    *,
    t: np.ndarray | None = None,
    traj_after: np.ndarray | None = None,
    ctrl_after: np.ndarray | None = None,
    moved: int | None = None,
    axis_titles: tuple[str, str] = ("PC 1", "PC 2"),
    height: int = 440,
) -> go.Figure:
    """A latent trajectory projected to 2-D: samples coloured by sequence position (cividis), the
    control polygon with numbered points; optionally the edited trajectory (orange) and moved point."""
    n = len(traj)
    traces: list[dict[str, Any]] = []
    traces.append(
        dict(
            type="scatter",
            x=ctrl[:, 0],
            y=ctrl[:, 1],
            mode="lines+markers+text",
            name=_t("figures.control_points"),
            line=dict(color=LINES[2], width=1, dash="dash"),
            marker=dict(size=11, color=LINES[2]),
            text=[f"P{i}" for i in range(len(ctrl))],
            textposition="top center",
            hovertemplate="%{text}<br>PC 1: %{x:.3f}<br>PC 2: %{y:.3f}<extra></extra>",
        )
    )
    hover = (
        _t("figures.position")
        + " %{customdata[0]}<br>t = %{customdata[1]:.3f}<br>PC 1: %{x:.3f}<br>PC 2: %{y:.3f}<extra></extra>"
    )
    tt = np.linspace(0, 1, n) if t is None else np.asarray(t)
    if traj_after is not None:  # drawn before the original, so under it: visible only where it moved away
        traces.append(
            dict(
                type="scatter",
                x=traj_after[:, 0],
                y=traj_after[:, 1],
                mode="lines+markers",
                name=_t("figures.after_edit"),
                line=dict(color=LINES[1], width=3),
                marker=dict(size=5, color=LINES[1]),
                opacity=0.8,
                customdata=np.stack([np.arange(n), tt], axis=1),
                hovertemplate=hover,
            )
        )
    traces.append(
        dict(
            type="scatter",
            x=traj[:, 0],
            y=traj[:, 1],
            mode="lines+markers",
            name=_t("figures.trajectory"),
            line=dict(color="rgba(120,120,120,0.6)", width=1),
            marker=dict(
                color=np.arange(n),
                colorscale=INDEX,
                size=7,
                showscale=True,
                colorbar=colorbar(_t("figures.position_j")),
            ),
            customdata=np.stack([np.arange(n), tt], axis=1),
            hovertemplate=hover,
        )
    )
    if ctrl_after is not None and moved is not None:
        traces.append(
            dict(
                type="scatter",
                x=[ctrl[moved, 0], ctrl_after[moved, 0]],
                y=[ctrl[moved, 1], ctrl_after[moved, 1]],
                mode="lines+markers",
                name=_t("figures.moved", k=moved),
                line=dict(color=LINES[1], width=2, dash="dot"),
                marker=dict(size=[8, 14], color=LINES[1], symbol=["circle-open", "star"]),
                hovertemplate="PC 1: %{x:.3f}<br>PC 2: %{y:.3f}<extra></extra>",
            )
        )
    return make_figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title=axis_titles[0], zeroline=False),
        yaxis=dict(title=axis_titles[1], zeroline=False, scaleanchor="x", scaleratio=1),
        legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0),
    )


def curves_2d(
    curves: Mapping[str, np.ndarray],
    title: str,
    *,
    dotted: Sequence[str] = (),
    height: int = 420,
) -> go.Figure:
    """Several 2-D point sequences (n, 2) on equal axes, one Okabe–Ito colour each, the first point
    of each marked with a larger symbol so the drawing direction shows; `dotted` names are drawn as
    thin dotted references (e.g. the input), still in their own colour."""
    traces: list[dict[str, Any]] = []
    for k, (name, pts) in enumerate(curves.items()):
        pts = np.asarray(pts)
        ref = name in dotted
        color = LINES[k % (len(LINES) - 1)]
        sizes = np.full(len(pts), 4 if ref else 6)
        sizes[0] = 11
        traces.append(
            dict(
                type="scatter",
                x=pts[:, 0],
                y=pts[:, 1],
                mode="lines+markers",
                name=escape(name),
                line=dict(color=color, width=1.5 if ref else 2, dash="dot" if ref else None),
                # A symbol per sequence beside its colour (WCAG 1.4.1); the legend shows it.
                marker=dict(size=sizes, color=color, symbol=SYMBOLS[k % len(SYMBOLS)]),
                customdata=np.arange(len(pts)),
                hovertemplate=(
                    f"{escape(name)}<br>{_t('figures.position')} %{{customdata}}<br>x: %{{x:.3f}}"
                    "<br>y: %{y:.3f}<extra></extra>"
                ),
            )
        )
    return make_figure(
        traces,
        title,
        height + 40,
        xaxis=dict(title="x", zeroline=False),
        yaxis=dict(title="y", zeroline=False, scaleanchor="x", scaleratio=1),
        legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0),
    )
