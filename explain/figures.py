"""Every figure in PE Atlas: numbers in, plotly Figure out, one shared look.

Colour rules (colour-blind safe, and legible on a classroom projector):
    SIGNED   diverging, centred on 0: blue negative, white zero, red positive (ColorBrewer RdBu)
    WEIGHTS  sequential for values in [0, 1] such as attention weights: white at 0, so the few
             strong weights stand out on a projector (ColorBrewer Blues)
    INDEX    sequential for counts and indices (cividis)
Token axes use integer positions with the words as tick text, so repeated words ("the … the") keep
their own rows; hover text always shows position, token and the exact number.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

SIGNED = "RdBu_r"
WEIGHTS = "Blues"
INDEX = "Cividis"
# Okabe–Ito: the qualitative palette that stays distinct under every common colour-vision deficiency.
LINES = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
FONT = dict(family="Inter, 'Noto Sans', 'Noto Sans CJK KR', 'Apple SD Gothic Neo', sans-serif", size=13)
MAX_TICKS = 40  # beyond this many tokens, label every k-th one; hover still names every cell


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left", font=dict(size=15)),
        font=FONT,
        height=height,
        margin=dict(l=10, r=10, t=50, b=10),
        template="plotly_white",
        hoverlabel=dict(font=dict(family=FONT["family"])),
    )
    return fig


def _tick_positions(n: int) -> list[int]:
    step = max(1, int(np.ceil(n / MAX_TICKS)))
    return list(range(0, n, step))


def _token_axis(tokens: Sequence[str], max_chars: int = 14) -> dict:
    ticks = _tick_positions(len(tokens))
    text = [_escape(_short(tokens[t], max_chars)) for t in ticks]
    return dict(tickmode="array", tickvals=ticks, ticktext=text, showgrid=False)


def _short(token: str, max_chars: int) -> str:
    return token if len(token) <= max_chars else token[: max_chars - 1] + "…"


def _escape(token: str) -> str:
    """Hover text is rendered as HTML by plotly.js: a typed '<b>' must show as text, not markup."""
    return token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _signed_range(z: np.ndarray, zmax: float | None) -> float:
    if zmax is not None:
        return zmax
    finite = np.abs(z[np.isfinite(z)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def token_heatmap(
    z: np.ndarray,
    row_tokens: Sequence[str],
    col_tokens: Sequence[str] | None,
    title: str,
    *,
    kind: str = "signed",
    row_title: str = "query i",
    col_title: str = "key j",
    value_label: str = "value",
    zmin: float | None = None,
    zmax: float | None = None,
    show_values: bool | None = None,
    height: int | None = None,
) -> go.Figure:
    """A (rows × cols) matrix with tokens on both axes. NaN cells (e.g. causally masked) stay blank.

    col_tokens=None: the columns are channels (numbered), not tokens.

    kind: "signed" (diverging, symmetric around 0), "weights" (0…1) or "index" (sequential).
    """
    z = np.asarray(z, dtype=float)
    n_rows, n_cols = z.shape
    rows = [f"{i} · {_escape(t)}" for i, t in enumerate(row_tokens)]
    cols = [f"{j} · {_escape(t)}" for j, t in enumerate(col_tokens)] if col_tokens else list(range(n_cols))
    custom = np.empty((n_rows, n_cols, 2), dtype=object)
    custom[:, :, 0] = np.asarray(rows, dtype=object)[:, None]
    custom[:, :, 1] = np.asarray(cols, dtype=object)[None, :]
    scale = dict(signed=SIGNED, weights=WEIGHTS, index=INDEX)[kind]
    if kind == "signed":
        r = _signed_range(z, zmax)
        zmin, zmax = -r, r
    elif kind == "weights":
        zmin = 0.0 if zmin is None else zmin
        zmax = 1.0 if zmax is None else zmax
    if show_values is None:
        show_values = max(n_rows, n_cols) <= 12
    heat = go.Heatmap(
        z=z,
        x=list(range(n_cols)),
        y=list(range(n_rows)),
        colorscale=scale,
        zmin=zmin,
        zmax=zmax,
        customdata=custom,
        hovertemplate=(
            f"{row_title}: %{{customdata[0]}}<br>{col_title}: %{{customdata[1]}}"
            f"<br>{value_label}: %{{z:.4g}}<extra></extra>"
        ),
        colorbar=dict(title=dict(text=value_label, side="right"), thickness=12),
        hoverongaps=False,
        texttemplate="%{z:.2f}" if show_values else None,
        textfont=dict(size=10),
    )
    fig = go.Figure(heat)
    if col_tokens:
        fig.update_xaxes(title=col_title, side="bottom", tickangle=-45, **_token_axis(col_tokens))
    else:
        fig.update_xaxes(title=col_title, side="bottom", showgrid=False)
    fig.update_yaxes(title=row_title, autorange="reversed", **_token_axis(row_tokens))
    side = max(n_rows, 4)
    return _layout(fig, title, height or int(min(720, max(340, 130 + 22 * side))))


def matrix_heatmap(
    z: np.ndarray,
    title: str,
    *,
    x_title: str,
    y_title: str,
    value_label: str = "value",
    kind: str = "signed",
    x: Sequence | None = None,
    y: Sequence | None = None,
    zmax: float | None = None,
    height: int = 420,
) -> go.Figure:
    """A numeric matrix on numeric axes (the PE matrix: position × channel; a bucket map; …)."""
    z = np.asarray(z, dtype=float)
    scale = dict(signed=SIGNED, weights=WEIGHTS, index=INDEX)[kind]
    r = _signed_range(z, zmax) if kind == "signed" else None
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(x) if x is not None else list(range(z.shape[1])),
            y=list(y) if y is not None else list(range(z.shape[0])),
            colorscale=scale,
            zmin=-r if r is not None else None,
            zmax=r,
            hovertemplate=f"{y_title}: %{{y}}<br>{x_title}: %{{x}}<br>{value_label}: %{{z:.4g}}<extra></extra>",
            colorbar=dict(title=dict(text=value_label, side="right"), thickness=12),
        )
    )
    fig.update_xaxes(title=x_title, showgrid=False)
    fig.update_yaxes(title=y_title, autorange="reversed", showgrid=False)
    return _layout(fig, title, height)


def lines(
    x: Sequence[float] | np.ndarray,
    ys: Mapping[str, Sequence[float] | np.ndarray],
    title: str,
    *,
    x_title: str,
    y_title: str,
    log_x: bool = False,
    log_y: bool = False,
    markers: bool = False,
    height: int = 380,
    dashed: Sequence[str] = (),
) -> go.Figure:
    """One line per named series over a shared x."""
    fig = go.Figure()
    for k, (name, y) in enumerate(ys.items()):
        fig.add_trace(
            go.Scatter(
                x=np.asarray(x),
                y=np.asarray(y),
                name=name,
                mode="lines+markers" if markers else "lines",
                line=dict(color=LINES[k % len(LINES)], width=2, dash="dash" if name in dashed else None),
                hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y:.4g}}<extra>{_escape(name)}</extra>",
            )
        )
    fig.update_xaxes(title=x_title, type="log" if log_x else None, zeroline=True)
    fig.update_yaxes(title=y_title, type="log" if log_y else None, zeroline=True)
    # Legend under the plot: above it, it collides with the title on narrow columns.
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0))
    return _layout(fig, title, height + 40)


def bars(
    labels: Sequence[str],
    values: Sequence[float] | np.ndarray,
    title: str,
    *,
    x_title: str,
    y_title: str,
    highlight: Sequence[int] = (),
    height: int = 340,
) -> go.Figure:
    """Bars over tokens (by position, so repeated words stay apart); `highlight` marks some bars."""
    values = np.asarray(values, dtype=float)
    colors = [LINES[1] if i in set(highlight) else LINES[0] for i in range(len(values))]
    names = [f"{i} · {_escape(t)}" for i, t in enumerate(labels)]
    fig = go.Figure(
        go.Bar(
            x=list(range(len(values))),
            y=values,
            marker_color=colors,
            customdata=names,
            hovertemplate=f"%{{customdata}}<br>{y_title}: %{{y:.4g}}<extra></extra>",
        )
    )
    fig.update_xaxes(title=x_title, tickangle=-45, **_token_axis(labels))
    fig.update_yaxes(title=y_title)
    return _layout(fig, title, height)


def mark_lines(
    fig: go.Figure,
    *,
    x: Mapping[str, float] | None = None,
    y: Mapping[str, float] | None = None,
) -> go.Figure:
    """Labelled dashed reference lines on a figure from this module: vertical at each x, horizontal
    at each y (label → coordinate), e.g. "end of training" under the last trained position.
    Labels are escaped: they may contain typed text."""
    for label, value in (x or {}).items():
        fig.add_vline(x=value, line=dict(color=LINES[7], width=2, dash="dash"),
                      annotation=dict(text=_escape(label), font=dict(size=12), bgcolor="rgba(255,255,255,0.8)"),
                      annotation_position="top right")
    for label, value in (y or {}).items():
        fig.add_hline(y=value, line=dict(color=LINES[7], width=2, dash="dash"),
                      annotation=dict(text=_escape(label), font=dict(size=12), bgcolor="rgba(255,255,255,0.8)"),
                      annotation_position="bottom left")
    return fig
