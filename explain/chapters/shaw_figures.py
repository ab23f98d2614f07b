"""Figures only the shaw chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explain.figures.maps import token_heatmap_parts
from explain.figures.theme import SCREEN_CELLS, make_figure, screen_blocks, screen_factor


def token_heatmap_marked(
    z: np.ndarray,
    row_tokens: Sequence[str],
    col_tokens: Sequence[str] | None,
    title: str,
    *,
    mark: np.ndarray,
    **kwargs: Any,
) -> go.Figure:
    """token_heatmap with the cells where `mark` is True veiled in translucent grey (e.g. Shaw's
    clipped pairs, which all share one vector). The veil takes no hover: the cell below still
    answers. Say what the veil means in the title."""
    traces, layout = token_heatmap_parts(z, row_tokens, col_tokens, title, **kwargs)
    mark = np.asarray(mark, dtype=bool)
    # On the map's own cells: a block drawn as one cell (a long sentence) is veiled when most of it is.
    f, g = (screen_factor(n, SCREEN_CELLS) for n in mark.shape)
    veil = np.where(screen_blocks(mark, f, g) >= 0.5, np.float32(1.0), np.float32(np.nan))
    grey = "rgba(60, 60, 60, 0.42)"
    traces.append(
        dict(
            type="heatmap",
            z=veil,
            x=traces[0]["x"],
            y=traces[0]["y"],
            colorscale=[[0, grey], [1, grey]],
            zmin=0,
            zmax=1,
            showscale=False,
            hoverinfo="skip",
            hoverongaps=False,
        )
    )
    return make_figure(traces, **layout)
