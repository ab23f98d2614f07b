"""Panels several chapters draw the same way: one definition, so they look and read alike.

pair(...)          two token maps side by side: a layer's content and position terms, or its
                   attention with and without positions
token_map(...)     one token map (the light one, for long sentences)
shift_metrics(...) the shifted-copy probe: how much the position term and the output moved when
                   every position moved by SHIFT (explain.chapters.common.shift_probe)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from explain import figures as F
from explain.chapters.common import ShiftProbe
from ui.common import plot
from ui.i18n import t


def pair(
    maps: Any,
    tokens: Sequence[str],
    title: str,
    names: Sequence[str],
    value_label: str,
    key: str,
    *,
    weights: bool = False,
    zmax: float | None = None,
    panel_height: int = 480,
) -> None:
    """maps (2, i, j): two panels on one colour scale; `weights` for attention (0 … zmax)."""
    plot(
        F.token_heatmap_grid(
            maps,
            tokens,
            title,
            kind="weights" if weights else "signed",
            zmax=zmax,
            panel_titles=list(names),
            value_label=value_label,
            cols=2,
            panel_height=panel_height,
        ),
        key,
    )


def token_map(z: Any, tokens: Sequence[str], title: str, kind: str, value_label: str, key: str) -> None:
    plot(F.token_map(z, tokens, title, kind=kind, value_label=value_label), key)


def shift_metrics(probe: ShiftProbe, position_key: str, output_key: str) -> None:
    """Two numbers side by side: the largest change of the position term and of the layer output
    when every position moved by probe.shift (their labels: catalogue keys with a {shift} field)."""
    m1, m2 = st.columns(2)
    m1.metric(t(position_key, shift=probe.shift), f"{probe.position_change:.1e}")
    m2.metric(t(output_key, shift=probe.shift), f"{probe.output_change:.1e}")
