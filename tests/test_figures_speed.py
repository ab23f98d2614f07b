"""explain/figures builds each figure in one constructor call (theme.make_figure): the shapes and labels
plotly's add_vline / add_hline / add_vrect would add are written out by hand in explain/figures/fast.py. These tests pin
them to what plotly itself makes, so a plotly upgrade that moves them shows up here, and check that
a figure's look does not depend on whether streamlit or this module was imported last."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explain import figures as F
from explain.figures import fast


def _spec(fig: go.Figure) -> dict:
    return json.loads(pio.to_json(fig, validate=False))


def _plain(**layout) -> go.Figure:
    return go.Figure(layout=dict(template="pe_atlas", **layout))


@pytest.mark.parametrize("position", ["top right", "bottom right"])
def test_vline_and_its_label_match_plotly(position):
    ref = _plain()
    ref.add_vline(x=3.5, line=dict(color="red", width=2), annotation=dict(text="here"), annotation_position=position)
    ours = _plain(
        shapes=[fast.vline(3.5, dict(color="red", width=2))],
        annotations=[fast.vline_note(3.5, position.replace(" ", "_"), text="here")],
    )
    assert _spec(ours) == _spec(ref)


@pytest.mark.parametrize("position", ["bottom left", "top left"])
def test_hline_and_its_label_match_plotly(position):
    ref = _plain()
    ref.add_hline(y=-2.0, line=dict(dash="dash"), annotation=dict(text="there"), annotation_position=position)
    ours = _plain(
        shapes=[fast.hline(-2.0, dict(dash="dash"))],
        annotations=[fast.hline_note(-2.0, position.replace(" ", "_"), text="there")],
    )
    assert _spec(ours) == _spec(ref)


@pytest.mark.parametrize("position", ["top left", "bottom left"])
def test_vrect_and_its_label_match_plotly(position):
    ref = _plain()
    ref.add_vrect(
        x0=4,
        x1=-1,
        fillcolor="grey",
        line_width=0,
        layer="below",
        annotation=dict(text="band"),
        annotation_position=position,
    )
    ours = _plain(
        shapes=[fast.vrect(4, -1, fillcolor="grey", line=dict(width=0), layer="below")],
        annotations=[fast.vrect_note(4, -1, position.replace(" ", "_"), text="band")],
    )
    assert _spec(ours) == _spec(ref)


def test_mark_lines_changes_the_figure_in_place_and_keeps_what_was_there():
    fig = F.lines([1, 10, 100], {"a": [1.0, 2.0, 3.0]}, "t", x_title="x", y_title="y", log_x=True)
    fig.add_hline(y=0.5)  # an earlier shape must survive
    same = F.mark_lines(fig, x={"<b>mark</b>": 10.0}, y={"level": 2.0})
    assert same is fig  # pages/contextual/cope.py relies on this
    shapes, notes = fig.layout.shapes, fig.layout.annotations
    assert [s.y0 for s in shapes] == [0.5, 0, 2.0] and shapes[1].x0 == 10.0
    # On a log x axis the label sits at log10(x) (plotly.js places annotations there), the line at x.
    assert notes[0].x == pytest.approx(1.0) and notes[0].text == "&lt;b&gt;mark&lt;/b&gt;"
    assert notes[1].y == 2.0 and notes[1].xref == "x domain"


def test_mark_lines_without_marks_leaves_the_figure_alone():
    fig = F.lines([0, 1], {"a": [0.0, 1.0]}, "t", x_title="x", y_title="y")
    before = _spec(fig)
    assert F.mark_lines(fig, x={}, y=None) is fig and _spec(fig) == before


def test_figures_get_the_atlas_template_whatever_was_imported_last():
    import streamlit  # noqa: F401  (its import sets plotly's default template to "streamlit")

    old = pio.templates.default
    try:
        pio.templates.default = "streamlit"
        fig = F.matrix_heatmap(np.eye(3), "t", x_title="x", y_title="y")
        assert fig.layout.template == pio.templates["pe_atlas"]
        assert fig.layout.template != pio.templates["streamlit"]
    finally:
        pio.templates.default = old


@pytest.mark.parametrize(
    "array",
    [
        np.array([0.5, np.nan, -2.25]),
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array([1, 2, 300]),
        np.array([-5, 70_000]),
        np.array([2**40, 1]),
        np.array(["circle", "arrow"]),
        np.array([True, False]),
        np.array([], dtype=float),
        np.array([7, 20, 0, 7, 20, 0]),
    ],
    ids=["f8-nan", "f4-2d", "int16", "int32", "int64-wide", "str", "bool", "empty", "int8"],
)
def test_typed_arrays_match_plotlys_own_encoding(array):
    """The animation frames carry arrays pre-encoded by _typed_arrays: the JSON must be exactly what
    plotly's encoder makes of the numpy array itself."""

    def sent(x):  # what Streamlit sends: the figure's to_dict (where plotly encodes arrays), as JSON
        fig = go.Figure(data=[{"type": "scatter", "x": x}], _validate=False)
        return json.loads(pio.to_json(fig.to_dict(), validate=False))["data"][0]["x"]

    assert sent(fast.typed_arrays(array)) == sent(array)


# AtlasFigure.to_dict copies only the dicts (and the lists and tuples on the way to one) that
# plotly's base64 conversion assigns into. Its result must be plotly's own, and the figure must come
# out of it unchanged: a page reads the same figure again for its Numbers panel.
_DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "uint8", "uint64", "bool", "wide", "text"]


def _array(dtype: str, n: int, transposed: bool) -> np.ndarray:
    if dtype == "bool":
        a = np.ones((n, 3), bool)
    elif dtype == "wide":  # an int64 that no narrower integer holds: plotly sends it as a list
        a = np.arange(n * 3, dtype=np.int64).reshape(n, 3) + 2**40
    elif dtype == "text":
        a = np.array([[f"w{k}" for k in range(3)] for _ in range(n)])
    else:
        a = np.arange(n * 3, dtype=dtype).reshape(n, 3) - (3 if dtype[0] in "fi" else 0)
    return a.T if transposed else a  # transposed: not C-contiguous


_arrays = st.builds(_array, st.sampled_from(_DTYPES), st.integers(0, 6), st.booleans())


@settings(max_examples=60, deadline=None)
@given(
    z=_arrays,
    hover=st.lists(st.text(max_size=5), min_size=1, max_size=6),
    n_shapes=st.integers(0, 3),
    n_frames=st.integers(0, 3),
    ticks=st.lists(st.integers(-5, 5), max_size=4),
)
def test_atlas_figures_to_dict_is_plotlys_and_leaves_the_figure_alone(z, hover, n_shapes, n_frames, ticks):
    from explain.figures.theme import AtlasFigure, make_figure

    data = [
        dict(type="heatmap", z=np.eye(2), customdata=z, hovertemplate="%{z}"),
        dict(type="scatter", x=np.arange(len(hover)), y=[float(k) for k in range(len(hover))], text=hover),
    ]
    shapes = [dict(type="line", x0=k, x1=k, y0=0, y1=1, line=dict(color="red")) for k in range(n_shapes)]
    fig = make_figure(
        data,
        "t",
        300,
        xaxis=dict(tickvals=np.asarray(ticks, int), ticktext=[str(v) for v in ticks], range=np.array([0.0, 2.0])),
        shapes=shapes,
        # An array in a list stays as it is, a dict in a list is converted: plotly's rule, both ways.
        meta=[np.arange(3), {"a": np.arange(2.0)}, "x"],
    )
    fig._frame_objs = [go.Frame(data=[dict(type="scatter", y=np.arange(3) * k)], name=str(k)) for k in range(n_frames)]
    # An unvalidated frame (as RoPE's) keeps its arrays; plotly leaves one under a skipped key alone.
    fig._frame_objs.append(go.Frame(layout=dict(xaxis=dict(range=np.array([0.0, 2.0]))), name="raw", _validate=False))
    assert isinstance(fig, AtlasFigure)
    before = pio.to_json(go.Figure.to_dict(fig), validate=False)
    assert pio.to_json(fig.to_dict(), validate=False) == before
    assert pio.to_json(go.Figure.to_dict(fig), validate=False) == before  # the figure is as it was
    assert isinstance(fig.data[0].z, np.ndarray) and isinstance(fig._data[0]["z"], np.ndarray)


def test_atlas_figures_are_what_streamlit_sends():
    """st.plotly_chart turns a figure into its spec through fig.to_dict(): the override is the one used."""
    import plotly.tools

    fig = F.token_heatmap(np.eye(3), ["a", "b", "c"], ["a", "b", "c"], "t")
    sent = plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)
    assert pio.to_json(sent, validate=False) == pio.to_json(go.Figure.to_dict(fig), validate=False)
