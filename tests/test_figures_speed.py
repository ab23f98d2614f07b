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
def test_typed_array_matches_plotlys_own_encoding(array):
    """AtlasFigure.to_dict encodes a numeric array itself (fast.typed_array), without plotly's
    detour: the JSON must be exactly what plotly's encoder makes of the numpy array; what it does not
    encode (text, bool, a too-wide int64, an empty array) is left to plotly's own function."""

    def sent(x):  # what Streamlit sends: the figure's to_dict (where plotly encodes arrays), as JSON
        fig = go.Figure(data=[{"type": "scatter", "x": x}], _validate=False)
        return json.loads(pio.to_json(go.Figure.to_dict(fig), validate=False))["data"][0]["x"]

    spec = fast.typed_array(array)
    assert (spec is not None) == (array.dtype.kind in "fi" and array.size > 0 and not np.nanmax(array) >= 2**31)
    if spec is not None:
        assert sent(spec) == sent(array)


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


def _plotlys(data, layout, frames, validate=True) -> dict:
    """What plotly itself sends for this spec: its own constructor (validating) and its to_dict."""
    ref = go.Figure(data=data, layout=layout, _validate=validate)
    ref._frame_objs = tuple(go.Frame(**f, _validate=False) for f in frames)
    return json.loads(pio.to_json(go.Figure.to_dict(ref), validate=False))


def _json(d: dict) -> dict:
    return json.loads(pio.to_json(d, validate=False))


@settings(max_examples=60, deadline=None)
@given(
    z=_arrays,
    hover=st.lists(st.text(max_size=5), min_size=1, max_size=6),
    n_shapes=st.integers(0, 3),
    n_frames=st.integers(0, 3),
    ticks=st.lists(st.integers(-5, 5), max_size=4),
    scale=st.sampled_from(["Blues", "RdBu_r", "Cividis", [[0, "white"], [1, "black"]]]),
    axis_title=st.one_of(st.none(), st.text(max_size=4), st.builds(lambda t: {"text": t}, st.text(max_size=4))),
)
def test_atlas_figures_send_what_plotly_sends_built_or_not(z, hover, n_shapes, n_frames, ticks, scale, axis_title):
    """An AtlasFigure sends its spec without building plotly's objects: the result must be plotly's
    own, validated, for every form the builders write (a named colour scale, a title as text or as a
    dict, None and empty lists left out, arrays of every dtype, frames). Then, built, it still sends
    the same, and sending never changed it."""
    from explain.figures.spec import AtlasFigure
    from explain.figures.theme import make_figure

    data = [
        dict(type="heatmap", z=np.eye(2), customdata=z, hovertemplate="%{z}", colorscale=scale, zmax=None),
        dict(type="scatter", x=np.arange(len(hover)), y=[float(k) for k in range(len(hover))], text=hover),
    ]
    shapes = [dict(type="line", x0=k, x1=k, y0=0, y1=1, line=dict(color="red")) for k in range(n_shapes)]
    layout = dict(
        xaxis=dict(tickvals=np.asarray(ticks, int), ticktext=[str(v) for v in ticks], range=np.array([0.0, 2.0])),
        yaxis=dict(title=axis_title, type=None),
        shapes=shapes,
        annotations=[],
        # An array in a list stays as it is, a dict in a list is converted: plotly's rule, both ways.
        meta=[np.arange(3), {"a": np.arange(2.0)}, "x"],
    )
    # Frames as RoPE's: plain dicts, attached unvalidated; plotly leaves an array under a skipped key
    # ("range") alone.
    frames = [dict(data=[dict(type="scatter", y=np.arange(3) * k)], name=str(k)) for k in range(n_frames)]
    frames.append(dict(layout=dict(xaxis=dict(range=np.array([0.0, 2.0]))), name="raw"))
    fig = make_figure(data, "t", 300, frames=frames, **layout)
    assert isinstance(fig, AtlasFigure)
    spec_layout = fig._atlas_spec[1]
    lazy = _json(fig.to_dict())
    assert not fig.built  # sending did not build it
    assert lazy == _plotlys(data, spec_layout, frames)
    assert isinstance(data[0]["customdata"], np.ndarray) and data[1]["text"] == hover  # the spec is untouched
    assert isinstance(fig.data[0].customdata, np.ndarray)  # reading it as plotly's builds it …
    assert fig.built
    assert _json(fig.to_dict()) == lazy  # … and it sends the same
    assert _json(go.Figure.to_dict(fig)) == lazy  # sending left the built figure as it was


@pytest.mark.parametrize("built", [False, True], ids=["spec", "built"])
def test_mark_lines_and_presenter_scaling_change_a_figure_as_update_layout_would(built):
    """mark_lines and relayout change an unbuilt figure's spec, a built one through update_layout:
    the same figure either way, and the spec's shared dicts (FONT) are not changed."""
    from explain.figures.spec import layout_get, relayout
    from explain.figures.theme import FONT

    font_before = dict(FONT)
    fig = F.lines(np.arange(1, 5), {"a": np.arange(4.0)}, "t", x_title="x", y_title="y", log_y=True)
    if built:
        fig.layout  # noqa: B018  (reading it builds it)
    F.mark_lines(fig, x={"<b>x</b>": 2.0}, y={"y": 10.0})
    relayout(fig, height=500, font=dict(size=20), title=dict(font=dict(size=22)))
    assert fig.built is built
    assert layout_get(fig, "font.size") == 20 and layout_get(fig, "height") == 500
    sent = _json(fig.to_dict())
    reference = go.Figure(F.lines(np.arange(1, 5), {"a": np.arange(4.0)}, "t", x_title="x", y_title="y", log_y=True))
    reference.add_vline(x=2.0, line=dict(color=F.LINES[7], width=2, dash="dash"))
    reference.add_hline(y=10.0, line=dict(color=F.LINES[7], width=2, dash="dash"))
    reference.update_layout(height=500, font_size=20, title_font_size=22)
    theirs = json.loads(pio.to_json(reference, validate=False))["layout"]
    assert sent["layout"]["shapes"] == theirs["shapes"]
    assert [a["text"] for a in sent["layout"]["annotations"]] == ["&lt;b&gt;x&lt;/b&gt;", "y"]
    assert sent["layout"]["annotations"][1]["y"] == 1.0  # log axis: the label at log10(10)
    for key in ("height", "font", "title"):
        assert sent["layout"][key] == theirs[key]
    assert font_before == FONT


def test_a_spec_plotly_would_read_differently_is_caught(monkeypatch):
    """PE_ATLAS_CHECK_FIGURES (on for the whole suite) compares what is sent with plotly's own
    build: a spec written in a form the canonical pass does not know (an underscore path) fails."""
    from explain.figures.theme import make_figure

    monkeypatch.setenv("PE_ATLAS_CHECK_FIGURES", "1")
    fig = make_figure([dict(type="bar", x=[1], y=[2], marker_color="red")], "t", 300)
    with pytest.raises(AssertionError, match=r"\.data\[0\]\.marker"):
        fig.to_dict()
    monkeypatch.setenv("PE_ATLAS_CHECK_FIGURES", "0")
    assert "marker_color" in fig.to_dict()["data"][0]  # unchecked, it would have been sent as written


def test_atlas_figures_are_what_the_chart_element_sends():
    """ui.chart sends a figure as plotly.io.to_json makes it (through fig.to_dict(): the override is
    the one used), the figure stays unbuilt, and what arrives is plotly's own build of it, with the
    config and the chart's words beside it."""
    from ui.chart import payload, sent

    fig = F.token_heatmap(np.eye(3), ["a", "<b>", "c"], ["a", "<b>", "c"], "t")
    data = payload(fig, {"displaylogo": False}, {"fullscreen": "전체 화면"})
    assert not fig.built
    figure, config = sent(data)
    assert figure == json.loads(pio.to_json(go.Figure(fig), validate=False))
    assert config == {"displaylogo": False} and json.loads(data)["words"] == {"fullscreen": "전체 화면"}


def test_a_cached_figure_is_pickled_as_its_spec():
    """st.cache_data pickles a cached figure and unpickles it on every call: an unbuilt figure
    comes back unbuilt (not rebuilt and validated, as plotly's pickling would), and sends the same;
    a built one goes plotly's way and sends the same too."""
    import pickle

    frames = [dict(data=[dict(type="scatter", y=np.arange(3.0))], name="0")]
    fig = F.token_heatmap(np.eye(3), ["a", "<b>", "c"], ["a", "<b>", "c"], "t")
    fig.relayout(height=333)
    again = pickle.loads(pickle.dumps(fig))
    assert not again.built and not fig.built
    assert _json(again.to_dict()) == _json(fig.to_dict())
    assert _json(again.to_dict())["layout"]["height"] == 333
    from explain.figures.theme import make_figure

    animated = make_figure([dict(type="scatter", y=np.arange(3.0))], "t", 300, frames=frames)
    assert _json(pickle.loads(pickle.dumps(animated)).to_dict())["frames"] == _json(animated.to_dict())["frames"]
    fig.layout  # noqa: B018  (built)
    built_again = pickle.loads(pickle.dumps(fig))
    assert built_again.built and _json(built_again.to_dict()) == _json(fig.to_dict())
