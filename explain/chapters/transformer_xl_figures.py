"""Figures only the transformer xl chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explain.figures.theme import (
    INDEX,
    colorbar,
    escape,
    make_figure,
)
from explain.i18n import t as _t


def labelled_grid(
    z: np.ndarray,
    labels: Sequence[Sequence[str]] | np.ndarray,
    title: str,
    *,
    x_title: str,
    y_title: str,
    value_label: str | None = None,  # default "value"
    veil: np.ndarray | None = None,
    x_ticks: Sequence[str] | None = None,
    y_ticks: Sequence[str] | None = None,
    zmin: float | None = None,
    zmax: float | None = None,
    height: int | None = None,
) -> go.Figure:
    """A small matrix with a label written in every cell (e.g. the rel-shift trick's "q2·R3"),
    coloured by z (INDEX; NaN cells stay white, e.g. a zero pad). Cells where `veil` is True get a
    translucent grey veil and a "✗" before their label (e.g. garbage that must be masked). Meant for
    a few dozen cells; labels are escaped, but pass program-made labels, not typed text."""
    value_label = _t("figures.value") if value_label is None else value_label
    z = np.asarray(z, dtype=float)
    n_rows, n_cols = z.shape
    text = np.asarray([[escape(str(s)) for s in row] for row in labels], dtype=object)
    veiled = np.zeros(z.shape, dtype=bool) if veil is None else np.asarray(veil, dtype=bool)
    finite = z[np.isfinite(z)]
    lo = float(finite.min()) if zmin is None and finite.size else (zmin if zmin is not None else 0.0)
    hi = float(finite.max()) if zmax is None and finite.size else (zmax if zmax is not None else 1.0)
    hi = hi if hi > lo else lo + 1.0
    traces = [
        dict(
            type="heatmap",
            z=z,
            x=list(range(n_cols)),
            y=list(range(n_rows)),
            colorscale=INDEX,
            zmin=lo,
            zmax=hi,
            xgap=2,
            ygap=2,
            customdata=text,
            hovertemplate=(
                f"{y_title}: %{{y}}<br>{x_title}: %{{x}}<br>{_t('figures.cell')}: %{{customdata}}"
                f"<br>{value_label}: %{{z}}<extra></extra>"
            ),
            hoverongaps=False,
            colorbar=colorbar(value_label),
        )
    ]
    if veiled.any():
        grey = "rgba(60, 60, 60, 0.55)"
        traces.append(
            dict(
                type="heatmap",
                z=np.where(veiled, 1.0, np.nan),
                x=list(range(n_cols)),
                y=list(range(n_rows)),
                colorscale=[[0, grey], [1, grey]],
                zmin=0,
                zmax=1,
                showscale=False,
                xgap=2,
                ygap=2,
                hoverinfo="skip",
                hoverongaps=False,
            )
        )
    rr, cc = np.meshgrid(np.arange(n_rows), np.arange(n_cols), indexing="ij")
    shade = np.where(np.isfinite(z), (np.nan_to_num(z) - lo) / (hi - lo), 1.0)
    colors = np.where(veiled | (shade < 0.5), "white", "black")
    shown = np.where(veiled, "✗ " + text.astype(str), text.astype(str))
    traces.append(
        dict(
            type="scatter",
            x=cc.ravel(),
            y=rr.ravel(),
            mode="text",
            text=list(shown.ravel()),
            textfont=dict(color=list(colors.ravel()), size=12 if n_cols <= 6 else 10),
            hoverinfo="skip",
            showlegend=False,
        )
    )
    xt = dict(tickmode="array", tickvals=list(range(n_cols)), ticktext=[escape(t) for t in x_ticks]) if x_ticks else {}
    yt = dict(tickmode="array", tickvals=list(range(n_rows)), ticktext=[escape(t) for t in y_ticks]) if y_ticks else {}
    return make_figure(
        traces,
        title,
        height or int(min(600, 190 + 52 * n_rows)),
        xaxis=dict(title=x_title, showgrid=False, zeroline=False, **xt),
        yaxis=dict(title=y_title, autorange="reversed", showgrid=False, zeroline=False, **yt),
    )
