"""Colour is never the only channel (WCAG 1.4.1), swept over every chart of every page in both
languages: wherever two series of a chart differ in colour, they also differ in line dash, marker
symbol, fill pattern or line width — or the chart names each series on the plot itself (a text
label). The recorded figures are checked (tests/snapshots/figures/<chapter>.json): test_figure_snapshots
proves every page still draws exactly them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import figure_snapshots as S

STORED = S.load()
CHARTS = [(page, key) for page, figs in sorted(STORED.items()) for key in sorted(figs)]


def _colour(trace: dict[str, Any]) -> str:
    line, marker = trace.get("line") or {}, trace.get("marker") or {}
    return json.dumps(line.get("color") or marker.get("color"))


def _channels(trace: dict[str, Any]) -> tuple[Any, ...]:
    """Everything beside colour that a reader without colour vision sees of a series."""
    line, marker = trace.get("line") or {}, trace.get("marker") or {}
    shows_markers = trace.get("type") != "scatter" or "markers" in trace.get("mode", "lines")
    symbol = json.dumps(marker.get("symbol")) if shows_markers else None
    pattern = json.dumps((marker.get("pattern") or {}).get("shape"))
    return (line.get("dash") or "solid", symbol, pattern, line.get("width"))


def colour_only_pairs(fig: dict[str, Any]) -> list[tuple[str, str]]:
    """Pairs of legend series told apart by colour alone."""
    labelled = {
        str(s) for tr in fig.get("data", []) if tr.get("mode") == "text" for s in (tr.get("text") or [])
    }  # series named on the plot, e.g. a basis function at its peak
    series = [
        tr
        for tr in fig.get("data", [])
        if tr.get("type") in ("scatter", "scattergl", "bar")
        and tr.get("showlegend") is not False
        and tr.get("name")
        and tr["name"] not in labelled
        and (tr["type"] == "bar" or "lines" in tr.get("mode", "lines"))
    ]
    return [
        (a["name"], b["name"])
        for i, a in enumerate(series)
        for b in series[i + 1 :]
        if _colour(a) != _colour(b) and _channels(a) == _channels(b)
    ]


@pytest.mark.parametrize("page", sorted(STORED))
def test_no_chart_tells_series_apart_by_colour_alone(page):
    bad = {key: pairs for key, fig in STORED[page].items() if (pairs := colour_only_pairs(fig))}
    assert not bad, bad


def test_the_check_sees_a_colour_only_chart():
    two = {"type": "scatter", "mode": "lines", "name": "a", "line": {"color": "#000", "width": 2}}
    other = {**two, "name": "b", "line": {"color": "#f00", "width": 2}}
    assert colour_only_pairs({"data": [two, other]}) == [("a", "b")]
    dashed = {**other, "line": {"color": "#f00", "width": 2, "dash": "dash"}}
    assert colour_only_pairs({"data": [two, dashed]}) == []
    bars = [{"type": "bar", "name": n, "marker": {"color": c}} for n, c in (("x", "#000"), ("y", "#f00"))]
    assert colour_only_pairs({"data": bars}) == [("x", "y")]
    named = {"type": "scatter", "mode": "text", "text": ["a", "b"]}
    assert colour_only_pairs({"data": [two, other, named]}) == []
    # hidden from the legend (a companion of a series) does not count as a series of its own
    assert colour_only_pairs({"data": [two, {**other, "showlegend": False}]}) == []
    assert len(CHARTS) > 250  # the sweep really covers the recorded charts
