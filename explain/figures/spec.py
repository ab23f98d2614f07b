"""AtlasFigure: a plotly figure sent as the builder's spec, never built unless someone asks.

make_figure (theme.py) returns one. What Streamlit does with a figure is fig.to_dict(); this module
makes that result straight from the spec (in the canonical form plotly's validation would give it)
and builds plotly's objects only when a figure is read or changed as plotly's. layout_get and
relayout read and change a figure's layout either way. PE_ATLAS_CHECK_FIGURES=1 (the test suite's
figure tests) checks every figure sent against plotly's own validated build.
"""

from __future__ import annotations

import base64
import json
import os
from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.basevalidators import ColorscaleValidator, is_homogeneous_array
from _plotly_utils.utils import to_typed_array_spec

from .fast import typed_array


def _sent(obj: Any) -> Any:
    """`obj` as plotly's to_dict + convert_to_base64 leave it, in one pass: a copy of every dict,
    each numpy array that is a dict's value replaced by its typed-array spec; the lists and tuples
    on the way to a dict copied; everything else (numbers, strings, a list of plain values, an
    array inside a list, which plotly leaves as it is) shared, not copied. The keys plotly's
    conversion skips (_SKIPPED) are copied unconverted."""
    if isinstance(obj, dict):
        return {k: _containers(v) if k in _SKIPPED else _sent_value(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in obj):
        return type(obj)(_sent(v) for v in obj)
    return obj


def _sent_value(v: Any) -> Any:
    """A dict's value as sent: arrays typed (convert_to_base64's rule), containers recursed."""
    if isinstance(v, np.ndarray):
        return _typed(v)
    if isinstance(v, (dict, list, tuple)):
        return _sent(v)
    if (hasattr(v, "__array__") or hasattr(v, "__array_interface__")) and is_homogeneous_array(v):
        return to_typed_array_spec(v)  # pandas, a tensor…: rare, plotly's own path
    return v


def _typed(v: np.ndarray) -> Any:
    """plotly's to_typed_array_spec, for the numeric dtypes without its narwhals detour (~50 µs an
    array); any other dtype goes through plotly's own function."""
    spec = typed_array(v)
    if spec is not None:
        return spec
    # Text: plotly's function hands the array back and its JSON encoder writes it as a list.
    return v.tolist() if v.dtype.kind == "U" else to_typed_array_spec(v)


_SKIPPED = frozenset(("geojson", "layer", "layers", "range"))  # _plotly_utils.utils.is_skipped_key


def _containers(obj: Any) -> Any:
    """A copy of every dict in `obj`, and of every list and tuple on the way to one; everything else
    is shared, not copied."""
    if isinstance(obj, dict):
        return {k: _containers(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in obj):
        return type(obj)(_containers(v) for v in obj)
    return obj


class AtlasFigure(go.Figure):  # type: ignore[misc]
    """A go.Figure that is sent without ever being built as plotly objects, unless someone asks.

    Building a figure through plotly's constructor validates and copies every property into
    plotly's object tree: with plotly's to_dict, 2.3 ms a figure over the 21 the Sinusoidal page
    builds, and about half of its full rerun under cProfile. Yet what Streamlit does with a figure
    is fig.to_dict(). So an
    AtlasFigure keeps the builder's spec as given and makes to_dict's result from it directly
    (canonical: in the form plotly's validation would have given it, see _canonical), and builds
    the plotly objects only when something reads or changes the figure as a plotly figure
    (fig.layout, fig.data, update_layout, the Numbers panel): __getattr__ builds it then, from the
    same spec. layout_get and relayout (below) read and change the spec without building.

    to_dict, built or not, copies only what plotly's own to_dict would change (the dicts, and the
    lists and tuples on the way to one) and encodes each array directly; plotly's deep-copies the
    whole figure and then walks every element of every list, sending each array through narwhals
    (under cProfile: 3.6 + 2.2 ms a figure).

    Same JSON as plotly's own, validated: with PE_ATLAS_CHECK_FIGURES=1 (tests/conftest.py sets it
    where figures are what is tested: every page's smoke runs, every control of every page at each
    option and extreme, the largest payloads) to_dict also builds the figure with plotly's full
    validation and raises if the two differ anywhere. _data, _layout and
    _frame_objs are where plotly's own to_dict reads them (plotly is pinned in requirements.txt)."""

    def __init__(
        self,
        data: Any = None,
        layout: Any = None,
        frames: list[dict[str, Any]] | None = None,
        *,
        _validate: bool = True,
        **kwargs: Any,
    ) -> None:
        if isinstance(data, dict) or kwargs or layout is None:
            # A whole figure as a dict (unpickling) or anything unusual: plotly's own constructor.
            go.Figure.__init__(self, data=data, layout=layout, frames=frames, _validate=_validate, **kwargs)
            return
        # Set without BaseFigure.__setattr__ (which checks plotly's property names).
        self.__dict__["_atlas_spec"] = (list(data), dict(layout), list(frames or ()), _validate)

    def __getattr__(self, name: str) -> Any:
        # Reached only for an attribute the object does not have: before the plotly objects are
        # built, that is every plotly attribute (_data, _layout_obj, …). Build them, then look again.
        spec = self.__dict__.pop("_atlas_spec", None)
        if spec is None:
            raise AttributeError(name)
        data, layout, frames, validate = spec
        go.Figure.__init__(self, data=data, layout=layout, _validate=validate)
        # Frames are attached unvalidated: go.Figure(frames=…) validates every frame even with
        # _validate=False, ~150 ms for RoPE's 41 frames; _frame_objs is where plotly keeps them.
        self._frame_objs = tuple(go.Frame(**f, _validate=False) for f in frames)
        return getattr(self, name)

    def __reduce__(self) -> Any:
        # Pickled (st.cache_data keeps a cached figure pickled, and unpickles it for every call) as
        # its spec while it is not built: unpickling then makes an unbuilt figure again, instead of
        # plotly's way (the whole figure as a dict, rebuilt and validated, frames too).
        spec = self.__dict__.get("_atlas_spec")
        return super().__reduce__() if spec is None else (_from_spec, spec)

    @property
    def built(self) -> bool:
        """Whether the plotly objects exist (something read or changed the figure as plotly's)."""
        return "_atlas_spec" not in self.__dict__

    def layout_get(self, path: str) -> Any:
        """A layout property by its dotted path ("xaxis.type"), None when unset, without building."""
        spec = self.__dict__.get("_atlas_spec")
        if spec is None:
            return self.layout[path]
        value: Any = _canonical(spec[1]) if spec[3] else spec[1]  # as plotly would read it: a title is {text}
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def relayout(self, **changes: Any) -> None:
        """fig.update_layout(**changes), without building: nested dicts merge into what is there
        (as update_layout merges them), anything else (a list of shapes…) replaces it. Changes are
        given as nested dicts (font=dict(size=…)), not plotly's underscore paths (font_size=…)."""
        spec = self.__dict__.get("_atlas_spec")
        if spec is None:
            self.update_layout(**changes)
            return
        data, layout, frames, validate = spec
        # A validated figure's spec is merged in its canonical form: a title given as text is then
        # already {"text": …}, so title=dict(font=…) keeps the text, as update_layout would.
        layout = _merged(_canonical(layout), _canonical(changes)) if validate else _merged(layout, changes)
        self.__dict__["_atlas_spec"] = (data, layout, frames, validate)

    def to_dict(self) -> dict[str, Any]:
        spec = self.__dict__.get("_atlas_spec")
        if spec is None:
            res = {"data": _sent(self._data), "layout": _sent(self._layout)}
            frames = _sent([frame._props for frame in self._frame_objs])
        else:
            data, layout, frame_specs, validate = spec
            if validate:
                res = {
                    "data": [_sent(_canonical(trace)) for trace in data],
                    "layout": _sent({**_canonical(layout), "template": _template()}),
                }
            else:  # an unvalidated figure (RoPE's animation): its traces as given
                res = {"data": [_sent(trace) for trace in data], "layout": _sent(_raw_layout(layout))}
            frames = [_sent(f) for f in frame_specs]
        if frames:
            res["frames"] = frames
        if os.environ.get("PE_ATLAS_CHECK_FIGURES") == "1":
            _check_against_plotly(self, res)
        return res


def _from_spec(data: list[Any], layout: dict[str, Any], frames: list[dict[str, Any]], validate: bool) -> AtlasFigure:
    return AtlasFigure(data, layout, frames, _validate=validate)


def figure_parts(fig: go.Figure) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A figure's traces (as dicts) and layout as plotly will read them, without building an
    AtlasFigure: its spec, the layout in canonical form (a title given as text is {text})."""
    spec = fig.__dict__.get("_atlas_spec") if isinstance(fig, AtlasFigure) else None
    if spec is None:  # built: plotly's own JSON, its typed arrays read back as arrays
        whole = _untyped(fig.to_plotly_json())
        return list(whole.get("data", [])), dict(whole.get("layout", {}))
    data, layout, _frames, validate = spec
    traces = [t if isinstance(t, dict) else t.to_plotly_json() for t in data]
    return traces, (_canonical(layout) if validate else layout)


def _untyped(obj: Any) -> Any:
    """plotly's JSON with every typed array ({dtype, bdata, shape}) as a numpy array again."""
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            a = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=obj["dtype"])
            shape = obj.get("shape")
            return a.reshape([int(n) for n in str(shape).split(",")]) if shape else a
        return {k: _untyped(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_untyped(v) for v in obj]
    return obj


def layout_get(fig: go.Figure, path: str) -> Any:
    """A figure's layout property by its dotted path ("xaxis.type"), None when unset; an
    AtlasFigure answers from its spec, without being built."""
    return fig.layout_get(path) if isinstance(fig, AtlasFigure) else fig.layout[path]


def relayout(fig: go.Figure, **changes: Any) -> go.Figure:
    """fig.update_layout(**changes) (nested dicts, no underscore paths), in place; an AtlasFigure
    changes its spec, without being built. Returns the figure."""
    if isinstance(fig, AtlasFigure):
        fig.relayout(**changes)
    else:
        fig.update_layout(**changes)
    return fig


def _merged(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """`base` updated by `changes` as plotly's update_layout does it, in a new dict (the spec's
    dicts may be shared, e.g. FONT, so none is changed in place)."""
    out = dict(base)
    for k, v in changes.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


# What plotly's validation does to the specs the atlas writes, done directly: a colour scale named
# ("Blues") becomes its list of [position, colour], a title given as text becomes {"text": …}, a
# property set to None is left out, and so are an object with no property left and an empty list of
# shapes or notes. These are all the differences the atlas's figures show (PE_ATLAS_CHECK_FIGURES
# raises on any other).
_COMPOUND_LISTS = frozenset(
    ("shapes", "annotations", "images", "sliders", "updatemenus", "selections", "buttons", "steps")
)


def _canonical(obj: Any) -> Any:
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if v is None or (k in _COMPOUND_LISTS and isinstance(v, (list, tuple)) and not v):
                continue
            if k == "title" and isinstance(v, str):
                v = {"text": v}
            elif k == "colorscale" and isinstance(v, str):
                v = _colorscale(v)
            v = _canonical(v)
            if not (isinstance(v, dict) and not v):  # an object left with no property: left out, as plotly does
                out[k] = v
        return out
    if isinstance(obj, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in obj):
        return [_canonical(v) for v in obj]
    return obj


@lru_cache(maxsize=32)  # the named colorscales the builders use (a handful; never a learner's words)
def _colorscale(name: str) -> list[list[Any]]:
    return ColorscaleValidator("colorscale", "heatmap").validate_coerce(name)  # type: ignore[no-any-return]


@lru_cache(maxsize=4)  # keyed on the default template's name: one entry unless it is switched
def _template_of(name: str) -> dict[str, Any]:
    return go.Figure(layout={}, _validate=False).to_dict()["layout"]["template"]  # type: ignore[no-any-return]


def _template() -> dict[str, Any]:
    """The default template as a figure's layout carries it (copied by _sent on the way out)."""
    return _template_of(pio.templates.default)


def _raw_layout(layout: dict[str, Any]) -> dict[str, Any]:
    """An unvalidated figure's layout, as plotly's constructor keeps it (no canonical form)."""
    plain: dict[str, Any] = go.Layout(layout, _validate=False).to_plotly_json()
    return plain | {"template": _template()}


def _check_against_plotly(fig: AtlasFigure, sent: dict[str, Any]) -> None:
    """Raise if `sent` differs from what plotly, validating, makes of the same figure."""
    spec = fig.__dict__.get("_atlas_spec")
    if spec is None:
        reference = go.Figure.to_dict(fig)
    else:
        data, layout, frames, validate = spec
        ref = go.Figure(data=data, layout=layout, _validate=validate)
        ref._frame_objs = tuple(go.Frame(**f, _validate=False) for f in frames)
        reference = go.Figure.to_dict(ref)
    ours, theirs = json.loads(pio.to_json(sent, validate=False)), json.loads(pio.to_json(reference, validate=False))
    if ours != theirs:
        raise AssertionError(f"AtlasFigure.to_dict differs from plotly's: {_first_difference(ours, theirs)}")


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(a.keys() | b.keys()):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'plotly' if k not in a else 'ours'}"
            if a[k] != b[k]:
                return _first_difference(a[k], b[k], f"{path}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for n, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{n}]")
    return f"{path}: {str(a)[:80]} ≠ {str(b)[:80]}"
