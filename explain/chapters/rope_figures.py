"""Figures only the rope chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explain.figures.theme import (
    LINES,
    escape,
    make_figure,
)
from explain.i18n import t as _t


def rotation_circles(
    q_xy: np.ndarray,
    k_xy: np.ndarray,
    title: str,
    *,
    panel_titles: Sequence[str],
    notes: np.ndarray,
    frame_titles: Sequence[str],
    frame_labels: Sequence[str],
    q_name: str | None = None,  # default "query"
    k_name: str | None = None,  # default "key"
    slider_prefix: str = "",
    cols: int = 4,
    frame_ms: int = 160,
    panel_height: int = 300,
    start: int = 0,
) -> go.Figure:
    """RoPE's rotation circles: one circle per 2-D pair (q_xy, k_xy: (frames, pairs, 2)), the query
    pair as a blue arrow and the key pair as a vermillion one, a grey arc for the angle between
    them, and a note under each circle (notes: (frames, pairs) strings). Frames animate with a
    Play/Pause button and a slider (short frame_labels, shown after slider_prefix); the second title
    line (frame_titles) changes with the frame, after the colour key for q and k.

    All circles share one pair of axes (circle p centred on a grid), so a frame updates four traces
    whatever the number of pairs: fast to build, light to animate. Each circle is scaled so the
    longer of its two arrows touches the rim (rotation keeps lengths, so the scale is the same in
    every frame); hover on an arrow tip gives the true coordinates. All text is escaped. The figure
    opens, paused, on frame `start` (a page's keyboard-operable step control: plotly's Play button
    and frame slider are SVG that no key reaches).
    """
    q_name = _t("figures.query") if q_name is None else q_name
    k_name = _t("figures.key") if k_name is None else k_name
    q_xy, k_xy = np.asarray(q_xy, dtype=float), np.asarray(k_xy, dtype=float)
    n_frames, n_pairs, _ = q_xy.shape
    start = min(max(int(start), 0), n_frames - 1)
    cols = max(1, min(cols, n_pairs))
    rows = int(np.ceil(n_pairs / cols))
    step_x, step_y = 2.9, 3.3  # grid spacing in circle radii: room for a title above and a note below
    cx = (np.arange(n_pairs) % cols) * step_x  # (pairs,)
    cy = -(np.arange(n_pairs) // cols) * step_y
    radius = np.maximum(np.linalg.norm(q_xy[0], axis=-1), np.linalg.norm(k_xy[0], axis=-1))  # (pairs,)
    radius = np.where(radius > 0, radius, 1.0)
    q_color, k_color, arc_color = LINES[0], LINES[1], "#555555"
    key_line = (
        f"<span style='color:{q_color}'>━━▶ {escape(q_name)}</span>   "
        f"<span style='color:{k_color}'>┅┅▶ {escape(k_name)}</span>   "
    )

    def heading(t: int) -> str:  # the fixed title; under it the colour key and what this frame shows
        return (
            f"<b>{escape(title)}</b><br><span style='font-size:15px;font-weight:normal'>{key_line}"
            f"{escape(frame_titles[t])}</span>"
        )

    def gaps(parts: Sequence[Any]) -> np.ndarray:
        # segments joined into one float array, separated by NaN (a gap in the line); float32: screen
        # coordinates need no more, and 41 frames of arcs in float64 were most of the page's bytes
        return np.concatenate([np.append(np.asarray(seg, dtype=float), np.nan) for seg in parts]).astype(np.float32)

    def segments(starts_x: np.ndarray, starts_y: np.ndarray, ends_x: np.ndarray, ends_y: np.ndarray) -> Any:
        # one origin→tip segment per pair, as `gaps` joins them, for all pairs at once
        nan = np.full_like(starts_x, np.nan)
        xs = np.stack([starts_x, ends_x, nan], axis=1).ravel().astype(np.float32)
        ys = np.stack([starts_y, ends_y, nan], axis=1).ravel().astype(np.float32)
        return xs, ys

    pair_names = [_t("figures.pair", p=p) for p in range(n_pairs)]

    def arrows(xy: np.ndarray, color: str, name: str, dash: str = "solid", *, moving: bool = False) -> dict[str, Any]:
        # (pairs, 2) → one trace of origin→tip segments; `moving`: only what a frame changes
        tips = xy / radius[:, None]
        xs, ys = segments(cx, cy, cx + tips[:, 0], cy + tips[:, 1])
        label = escape(name)
        hover = [
            h for p in range(n_pairs) for h in ("", f"{label} · {pair_names[p]}: ({xy[p, 0]:.3f}, {xy[p, 1]:.3f})", "")
        ]
        if moving:
            return dict(type="scatter", x=xs, y=ys, text=hover)
        return dict(
            type="scatter",
            x=xs,
            y=ys,
            mode="lines+markers",
            showlegend=False,
            line=dict(color=color, width=5, dash=dash),
            marker=dict(
                symbol=["circle", "arrow", "circle"] * n_pairs,
                size=np.tile([7, 20, 0], n_pairs),
                angleref="previous",
                color=color,
            ),
            text=hover,
            hovertemplate="%{text}<extra></extra>",
        )

    def arcs(q: np.ndarray, k: np.ndarray, *, moving: bool = False) -> dict[str, Any]:
        # the shortest way round from the query arrow to the key arrow, radius 0.36: 13 points, so
        # ≤ 15° a segment (a chord then strays < 0.01 radius, under a pixel: 30 points looked the
        # same and were, over 41 frames of 32 pairs, a quarter of the page at its largest)
        # All pairs at once: (pairs, 13) angles, then a NaN column ends each pair's arc (as `gaps`).
        a0 = np.arctan2(q[:, 1], q[:, 0])  # (pairs,)
        delta = (np.arctan2(k[:, 1], k[:, 0]) - a0 + np.pi) % (2 * np.pi) - np.pi
        t = a0[:, None] + np.linspace(0.0, delta, 13, axis=1)  # (pairs, 13)
        nan = np.full((n_pairs, 1), np.nan)
        xs = np.hstack([cx[:, None] + 0.36 * np.cos(t), nan]).ravel().astype(np.float32)
        ys = np.hstack([cy[:, None] + 0.36 * np.sin(t), nan]).ravel().astype(np.float32)
        if moving:
            return dict(type="scatter", x=xs, y=ys)
        return dict(
            type="scatter",
            x=xs,
            y=ys,
            mode="lines",
            line=dict(color=arc_color, width=3),
            hoverinfo="skip",
            showlegend=False,
        )

    def texts(ys: Any, labels: Sequence[Any], size: int, color: str) -> dict[str, Any]:
        return dict(
            type="scatter",
            x=cx,
            y=np.asarray(ys, dtype=float),
            mode="text",
            text=[escape(str(v)) for v in labels],
            textposition="middle center",
            textfont=dict(size=size, color=color),
            hoverinfo="skip",
            showlegend=False,
        )

    def frame_traces(t: int) -> list[dict[str, Any]]:
        return [
            arcs(q_xy[t], k_xy[t]),
            arrows(q_xy[t], q_color, q_name),
            # the key's arrow is dotted as well as coloured: colour is not the only channel (WCAG 1.4.1)
            arrows(k_xy[t], k_color, k_name, dash="dot"),
            texts(cy - 1.36, notes[t], 16, "#222222"),
        ]

    def frame_changes(t: int) -> list[dict[str, Any]]:
        # What frame t changes of frame_traces' four traces, no more: plotly's animate merges a
        # frame's traces into the drawn ones, so colours, markers and hover formats stay as drawn.
        # Sending them again in every frame was ~40 % of the figure's bytes.
        return [
            arcs(q_xy[t], k_xy[t], moving=True),
            arrows(q_xy[t], q_color, q_name, moving=True),
            arrows(k_xy[t], k_color, k_name, moving=True),
            dict(type="scatter", text=[escape(str(v)) for v in notes[t]]),
        ]

    ring = np.linspace(0, 2 * np.pi, 121)
    static = [
        dict(
            type="scatter",
            x=gaps([cx[p] + np.cos(ring) for p in range(n_pairs)]),
            y=gaps([cy[p] + np.sin(ring) for p in range(n_pairs)]),
            mode="lines",
            line=dict(color="#c8c8c8", width=2),
            hoverinfo="skip",
            showlegend=False,
        ),
        texts(cy + 1.3, panel_titles, 15, "#333333"),
    ]
    animated = list(range(len(static), len(static) + 4))  # the traces frames replace
    still = {"frame": {"duration": 0, "redraw": True}, "mode": "immediate", "transition": {"duration": 0}}
    axis = dict(visible=False, fixedrange=True)
    layout = dict(
        xaxis=dict(range=[-1.45, (cols - 1) * step_x + 1.45], **axis),
        yaxis=dict(range=[-(rows - 1) * step_y - 1.7, 1.55], scaleanchor="x", scaleratio=1, **axis),
        updatemenus=[
            dict(
                type="buttons",
                direction="left",
                x=0,
                y=0,
                xanchor="left",
                yanchor="top",
                pad=dict(t=10, r=10),
                showactive=False,
                font=dict(size=15),
                buttons=[
                    dict(
                        label=_t("figures.play"),
                        method="animate",
                        args=[
                            None,
                            {
                                "frame": {"duration": frame_ms, "redraw": True},
                                "fromcurrent": True,
                                "transition": {"duration": 0},
                                "mode": "immediate",
                            },
                        ],
                    ),
                    dict(label=_t("figures.pause"), method="animate", args=[[None], still]),
                ],
            )
        ],
        sliders=[
            dict(
                active=start,
                x=0.2,
                len=0.8,
                y=0,
                yanchor="top",
                pad=dict(t=10),
                currentvalue=dict(prefix=escape(slider_prefix), font=dict(size=15)),
                font=dict(size=11),
                steps=[
                    dict(label=escape(frame_labels[t]), method="animate", args=[[str(t)], still])
                    for t in range(n_frames)
                ],
            )
        ]
        if n_frames > 1
        else [],
    )
    # The whole title object in every frame: an animated layout replaces it, so a bare text would
    # lose its font and place.
    frames = [
        dict(
            data=frame_changes(t),
            traces=animated,
            name=str(t),
            layout=dict(title=dict(text=heading(t), x=0, xanchor="left", font=dict(size=15))),
        )
        for t in range(n_frames)
    ]
    # Built from plain dicts without validation: the frames hold thousands of points, and checking
    # each trace again costs seconds; every key above is a standard plotly attribute
    # (tests/test_rope.py rebuilds the figure with full validation and compares).
    # The frames go in as plain dicts: an AtlasFigure sends them as they are (its to_dict encodes
    # their arrays), and, if ever built, attaches them unvalidated (go.Figure(frames=…)
    # validates every frame even with _validate=False: ~150 ms for 41 frames).
    return make_figure(
        static + frame_traces(start),
        heading(start),
        rows * panel_height + 160,
        _validate=False,
        frames=frames,
        **layout,
        margin=dict(l=10, r=10, t=100, b=100),
    )
