"""Figures only the DeBERTa chapter draws (built from explain.figures' parts and its one look)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explain import figures as F
from explain.figures.spec import relayout


def bucket_staircase(
    distances: np.ndarray,
    buckets: np.ndarray,
    region: np.ndarray,
    title: str,
    *,
    regions: Sequence[str],
    x_title: str,
    y_title: str,
    last_row: str,
    last_bucket: int,
) -> go.Figure:
    """The distance → log-bucket staircase (buckets run negative too, so the y axis is not pinned at
    0), with a dashed line at the last bucket that owns a table row (everything above is clamped)."""
    fig = F.staircase(distances, buckets, region, title, regions=regions, x_title=x_title, y_title=y_title)
    relayout(fig, yaxis=dict(rangemode="normal"))
    return F.mark_lines(fig, y={last_row: last_bucket})
