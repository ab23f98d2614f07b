"""explain/figures/margins.py: the margins a figure is sent with, so the browser draws it once.

What plotly does with them is tested in a real browser (tests/e2e/test_margins_browser.py); here,
without one: the estimate never takes a margin away, never raises on any input a learner can cause,
models only what it knows (and says so with None for the rest), writes tick labels as plotly does,
and fit_margins changes nothing of a figure but its margins, without building it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explain.figures import labels as L
from explain.figures import margins as M
from explain.figures.spec import AtlasFigure, figure_parts
from explain.figures.theme import colorbar, make_figure

SIDES = ("l", "r", "b")


def test_plotly_keeps_growing_the_margins_itself():
    # The estimate is only a head start: automargin stays on, so a label wider than estimated
    # (another font, a narrower column) still gets the room it needs and nothing is clipped.
    fig = M.fit_margins(make_figure([dict(type="scatter", y=[0, 1])], "T", 300))
    layout = fig.to_dict()["layout"]["template"]["layout"]
    assert layout["xaxis"]["automargin"] is True and layout["yaxis"]["automargin"] is True
    # With the room given, no label sticks out of the div: plotly is told not to measure every
    # label to hide the ones that would (tests/e2e/test_margins_browser.py checks the room).
    assert layout["xaxis"]["ticklabeloverflow"] == layout["yaxis"]["ticklabeloverflow"] == "allow"
    assert colorbar("w")["ticklabeloverflow"] == "allow"


@pytest.mark.parametrize(
    ("widths", "plot_width", "rows"),
    [
        # Read off legends drawn in Chromium (item = its text's measured width + plotly's 40 px):
        ([104, 83, 72, 71, 184], 397, 3),  # the attention lab's length charts, half a page wide
        ([73, 104, 89, 83, 71, 72, 72], 391, 3),  # the real-text curves, half a page wide
        ([319, 410, 317], 868, 2),  # the attention lab's KV-cache chart, full width
        ([73, 104, 89, 83, 71, 72, 72, 97, 111, 116], 871, 2),  # the real-text lengths, full width
        ([100, 100], 300, 1),  # all fit in one row
        ([500], 300, 1),
    ],
)
def test_legend_rows_as_plotly_lays_them_out(widths, plot_width, rows):
    # Not one row: every item takes the widest one's width, as plotly.js 3's legend/draw.js does.
    assert M.legend_rows(widths, plot_width) == rows


@given(st.lists(st.floats(1, 600), min_size=1, max_size=30), st.floats(50, 2000), st.floats(1, 500))
def test_a_narrower_plot_never_has_fewer_legend_rows(widths, plot_width, less):
    assert len(widths) >= M.legend_rows(widths, max(1.0, plot_width - less)) >= M.legend_rows(widths, plot_width) >= 1


def test_a_half_width_chart_gets_room_for_more_legend_rows():
    lines = [dict(type="scatter", y=[0, 1], name=name) for name in ("sinusoidal", "learned", "RoPE", "ALiBi", "none")]
    layout = dict(
        margin=dict(l=10, r=10, t=50, b=10),
        height=340,
        font=dict(size=13),
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )
    full, half = M.estimate_margins(lines, layout), M.estimate_margins(lines, layout, M.HALF_PLOT_WIDTH)
    assert full is not None and half is not None and half["b"] > full["b"]


def test_an_x_label_at_the_plots_end_pushes_the_right_margin():
    # The toy lab's loss curve, half a page wide: a line over steps 25…600, ticks 200, 400, 600; the
    # "600" centred on the plot's right edge. Plotly settled on r = 23 px in Chromium.
    steps = np.arange(25, 601, 25)
    layout = dict(margin=dict(l=10, r=10, t=50, b=10), height=340, font=dict(size=12))
    line = [dict(type="scatter", x=steps, y=np.log(steps), mode="lines")]
    m = M.estimate_margins(line, layout, 366)
    assert m is not None and 23 <= m["r"] <= 23 + 8
    # Markers pad the range (plotly's autorange): not modelled, so no push is assumed …
    dots = M.estimate_margins([{**line[0], "mode": "lines+markers"}], layout, 366)
    assert dots is not None and dots["r"] == 10
    # … and a last tick well inside the plot pushes nothing.
    inside = M.estimate_margins([{**line[0], "x": np.linspace(0, 630, 24)}], layout, 366)
    assert inside is not None and inside["r"] == 10


@pytest.mark.parametrize(
    ("value", "dtick", "label"),
    [
        # As plotly.js 3 writes them (read off the drawn charts in Chromium): no trailing zeros,
        # U+2212 for minus, SI suffixes from 10⁴.
        (0.0, 0.2, "0"),
        (0.2, 0.2, "0.2"),
        (1.0, 0.2, "1"),
        (-0.5, 0.5, "−0.5"),
        (-30.0, 10.0, "−30"),
        (0.05, 0.01, "0.05"),
        (-0.04, 0.02, "−0.04"),
        (20000.0, 5000.0, "20k"),
        (1.5e6, 5e5, "1.5M"),
        (1e-17, 0.2, "0"),  # a rounding residue at zero
    ],
)
def test_number_labels_as_plotly_writes_them(value, dtick, label):
    assert L.number_label(value, dtick) == label


@pytest.mark.parametrize(
    ("lo", "hi", "length", "labels"),
    [
        # Plotly's auto ticks, as drawn in Chromium on the atlas's colour bars and axes.
        (0.0, 1.0, 300, ["0", "0.2", "0.4", "0.6", "0.8", "1"]),
        (-1.8915, 1.8915, 300, ["−1.5", "−1", "−0.5", "0", "0.5", "1", "1.5"]),
        (-0.0923, 0.0923, 400, ["−0.08", "−0.06", "−0.04", "−0.02", "0", "0.02", "0.04", "0.06", "0.08"]),
        (0.0, 3.0, 300, ["0", "0.5", "1", "1.5", "2", "2.5", "3"]),
    ],
)
def test_auto_ticks_as_plotly_picks_them(lo, hi, length, labels):
    assert L.linear_labels(lo, hi, length, "y") == labels


def test_log_axis_labels():
    assert L.log_labels(1e-3, 1.0) == ["0.001", "0.01", "0.1", "1"]
    assert L.log_labels(1e-4, 10.0)[0] == "100μ"
    # exponentformat="power": 10 with a superscript exponent, as narrow stand-ins
    assert all(s.startswith("10") for s in L.log_labels(1e-15, 1e-3, power=True))
    assert L.log_labels(0.0, 1.0) == [] and L.log_labels(float("nan"), 1.0) == []


def test_wider_text_is_estimated_wider():
    assert L.text_width("한국어", 13) > L.text_width("abc", 13) > L.text_width("...", 13) > 0
    assert L.text_width("<b>x</b>", 13) == L.text_width("x", 13)  # tags are not drawn
    assert L.text_width("&lt;", 13) == L.text_width("<", 13)  # entities are one character
    assert L.text_width("a<br>bb", 13) == L.text_width("bb", 13) and L.text_lines("a<br>bb") == 2


def _scatter(y, **layout):
    return [dict(type="scatter", y=y)], dict(
        margin=dict(l=10, r=10, t=50, b=10), height=340, font=dict(size=13), **layout
    )


def test_longer_labels_and_titles_need_more_room():
    short = M.estimate_margins(*_scatter([0, 1]))
    wide = M.estimate_margins(*_scatter([0, 123456.789]))
    titled = M.estimate_margins(*_scatter([0, 1], yaxis=dict(title=dict(text="weight")), xaxis=dict(title="p")))
    assert short is not None and wide is not None and titled is not None
    assert wide["l"] > short["l"] and titled["l"] > short["l"] and titled["b"] > short["b"]
    bigger = M.estimate_margins(*_scatter([0, 1], yaxis=dict(tickfont=dict(size=30))))
    assert bigger is not None and bigger["l"] > short["l"]


def test_a_colour_bar_and_a_legend_below_are_given_room():
    z = np.linspace(-1, 1, 12).reshape(3, 4)
    data = [dict(type="heatmap", z=z, colorbar=colorbar("weight"))]
    layout = dict(margin=dict(l=10, r=10, t=50, b=10), height=340, font=dict(size=13))
    m = M.estimate_margins(data, layout)
    assert m is not None and m["r"] > 60
    lines = [dict(type="scatter", y=[0, 1], name=f"a fairly long series name {i}") for i in range(8)]
    legend = dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0)
    one = M.estimate_margins(lines[:2], {**layout, "legend": legend})
    many = M.estimate_margins(lines, {**layout, "legend": legend})
    assert one is not None and many is not None and many["b"] > one["b"] > 40  # more rows, more room


@pytest.mark.parametrize(
    "case",
    ["slider", "legend beside", "marker colour bar", "free axis", "axis on the right", "polar"],
)
def test_what_is_not_modelled_keeps_its_margins(case):
    layout = dict(margin=dict(l=10, r=10, t=50, b=10), height=340)
    data = [dict(type="scatter", y=[0, 1], name="a"), dict(type="scatter", y=[1, 0], name="b")]
    if case == "slider":
        layout.update(sliders=[dict(steps=[])], legend=dict(orientation="h", y=-0.2))
    elif case == "legend beside":
        pass  # two named lines and plotly's default legend, right of the plot
    elif case == "marker colour bar":
        data = [dict(type="scatter", y=[0, 1], marker=dict(color=[0, 1], showscale=True))]
    elif case == "free axis":
        data = data[:1]
        layout["yaxis2"] = dict(anchor="free", position=0.1, overlaying="y")
    elif case == "axis on the right":
        data = data[:1]
        layout["yaxis"] = dict(side="right")
    else:
        data = [dict(type="scatterpolar", r=[1, 2], theta=[0, 90])]
    assert M.estimate_margins(data, layout) is None


def test_in_a_grid_only_the_axes_on_the_edges_push():
    def grid(inner_label: str, edge_label: str):
        data = [
            dict(type="heatmap", z=[[0, 1]], xaxis=f"x{i or ''}", yaxis=f"y{i or ''}", coloraxis="coloraxis")
            for i in (0, 2)
        ]
        layout = dict(
            margin=dict(l=10, r=10, t=50, b=10),
            height=340,
            font=dict(size=13),
            xaxis=dict(domain=[0, 0.45], anchor="y"),
            yaxis=dict(domain=[0, 1], anchor="x", tickmode="array", tickvals=[0], ticktext=[edge_label]),
            xaxis2=dict(domain=[0.55, 1], anchor="y2"),
            yaxis2=dict(domain=[0, 1], anchor="x2", tickmode="array", tickvals=[0], ticktext=[inner_label]),
            coloraxis=dict(cmin=0, cmax=1, colorbar=colorbar("weight")),
        )
        return M.estimate_margins(data, layout)

    base = grid("a", "a")
    assert base is not None and base["r"] > 60  # the shared colour axis's bar
    assert grid("a very long inner label", "a") == base  # inside the paper: no push
    wider = grid("a", "a very long edge label")
    assert wider is not None and wider["l"] > base["l"]


def test_fit_margins_changes_only_the_margins_and_builds_nothing():
    fig = make_figure([dict(type="heatmap", z=np.eye(3), colorbar=colorbar("w"))], "T", 300, xaxis=dict(title="x"))
    before = fig.to_dict()
    M.fit_margins(fig)
    assert isinstance(fig, AtlasFigure) and not fig.built
    after = fig.to_dict()
    margin = after["layout"].pop("margin")
    before["layout"].pop("margin")
    assert after == before
    assert all(margin[s] >= 10 for s in SIDES) and margin["t"] == 50
    # a built figure (someone read it as plotly's) gets the same margins
    built = make_figure([dict(type="heatmap", z=np.eye(3), colorbar=colorbar("w"))], "T", 300, xaxis=dict(title="x"))
    _ = built.layout
    M.fit_margins(built)
    assert built.to_dict()["layout"]["margin"] == margin
    assert figure_parts(built)[1]["margin"]["l"] == margin["l"]


TEXT = st.lists(
    st.sampled_from([*list("abcXYZ019 .,-−<>&;/"), "한", "국", "😀", "<b>", "</b>", "<br>", "&lt;", "&amp", "\u200b"]),
    max_size=30,
).map("".join)
NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.integers(-(10**12), 10**12),
    st.sampled_from([0.0, 1e-300, -1e300, 5e-324]),
)
COORDS = st.one_of(
    st.lists(NUMBER, max_size=40),
    st.lists(TEXT, max_size=40),
    st.lists(st.one_of(NUMBER, TEXT, st.none()), max_size=20),
    st.builds(lambda a: np.asarray(a, dtype=float), st.lists(NUMBER, max_size=40)),
)


@st.composite
def figures(draw):
    n = draw(st.integers(0, 4))
    data = []
    for _i in range(n):
        kind = draw(st.sampled_from(["scatter", "bar", "heatmap"]))
        if kind == "heatmap":
            rows, cols = draw(st.integers(0, 6)), draw(st.integers(0, 6))
            z = draw(st.lists(st.lists(NUMBER, min_size=cols, max_size=cols), min_size=rows, max_size=rows))
            trace = dict(type="heatmap", z=z, colorbar=colorbar(draw(TEXT)))
            for key in ("zmin", "zmax", "zmid"):
                if draw(st.booleans()):
                    trace[key] = draw(NUMBER)
        else:
            trace = dict(type=kind, y=draw(COORDS), name=draw(TEXT))
            if draw(st.booleans()):
                trace["x"] = draw(COORDS)
        data.append(trace)
    axis = st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["linear", "log", "category"]),
            "title": st.one_of(TEXT, st.fixed_dictionaries({"text": TEXT})),
            "tickangle": st.sampled_from([0, -45, 90, None]),
            "tickvals": st.lists(NUMBER, max_size=10),
            "ticktext": st.lists(TEXT, max_size=10),
            "range": st.lists(NUMBER, min_size=2, max_size=2),
            "rangemode": st.just("tozero"),
            "exponentformat": st.just("power"),
            "tickfont": st.fixed_dictionaries({"size": st.integers(1, 60)}),
            "showticklabels": st.booleans(),
        },
    )
    layout = dict(
        margin=dict(l=draw(st.integers(0, 80)), r=10, t=50, b=draw(st.integers(0, 80))),
        height=draw(st.integers(60, 2000)),
        font=dict(size=draw(st.integers(6, 40))),
        xaxis=draw(axis),
        yaxis=draw(axis),
    )
    if draw(st.booleans()):
        layout["legend"] = dict(orientation="h", yanchor="top", y=draw(st.floats(-1, -0.01)), x=0)
    return data, layout


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(figures())
def test_any_figure_gets_finite_margins_no_smaller_than_its_own(fig):
    data, layout = fig
    m = M.estimate_margins(data, layout)
    if m is None:
        return
    assert set(m) == set(SIDES)
    for side in SIDES:
        assert isinstance(m[side], int) and math.isfinite(m[side])
        assert m[side] >= layout["margin"].get(side, 0)
    # bounded in advance (plotly may still grow a side that needs more): a side of a narrow plot,
    # half the figure's height at the bottom
    assert max(m["l"], m["r"]) <= max(M.MAX_SIDE + M.PUSH_SLACK + 1, layout["margin"]["l"])
    assert m["b"] <= max(layout["height"] / 2 + M.PUSH_SLACK + 1, layout["margin"]["b"])


def test_a_log_axis_below_a_thousandth_counts_in_powers_of_ten():
    """explain.figures.charts.lines: a log axis whose values go below 0.001 is ticked 10⁻⁴, not
    plotly's "100μ" (a unit prefix, on radians or attention weights); above, plotly's plain numbers;
    a linear axis is left alone. The margin is measured for the labels the axis shows."""
    from explain.figures import charts

    x = np.arange(1, 6)
    tiny = charts.lines(x, {"a": [1.0, 1e-2, 1e-4, 2e-5, 0.0]}, "t", x_title="x", y_title="y", log_y=True)
    assert tiny.layout.yaxis.exponentformat == "power" and tiny.layout.yaxis.type == "log"
    plain = charts.lines(x, {"a": [1.0, 0.5, 2e-3, 1e-3, 0.1]}, "t", x_title="x", y_title="y", log_y=True)
    assert plain.layout.yaxis.exponentformat is None and plain.layout.yaxis.type == "log"
    linear = charts.lines(x, {"a": [1.0, 1e-5, 0, 0, 0]}, "t", x_title="x", y_title="y")
    assert linear.layout.yaxis.exponentformat is None and linear.layout.yaxis.type is None
    small_x = charts.lines([1e-6, 1e-3, 1.0], {"a": [1, 2, 3]}, "t", x_title="x", y_title="y", log_x=True)
    assert small_x.layout.xaxis.exponentformat == "power" and small_x.layout.yaxis.exponentformat is None
    labels = L.log_labels(2e-5, 1.0, power=True)
    assert "10⁻⁰" in labels and not any("μ" in s for s in labels)
