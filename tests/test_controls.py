"""Every control on every page, one at a time, at its minimum, its maximum and every option it
offers (every value, for a slider with at most SMALL_RANGE positions), renders without an exception
or an error box. The list of controls is read off the page itself, so a control added tomorrow is
swept without touching this file.

A page's controls are swept in PARTS items (every PARTS-th control from the k-th), each on a page of
its own: pytest-xdist spreads items, not files, so one item per page kept the largest page on one
worker for minutes. Which values are swept is the same: the split only decides which item sweeps a
control.

Selection widgets are set by their raw option values, which AppTest does not expose: they are read
from the widget's deserializer (RadioSerde / SelectboxSerde …, Streamlit 1.67 internals; the test
fails loudly if that changes).
"""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import errors, open_page
from ui.chapters import CHAPTERS

# Figures are what these page runs test: each is checked against plotly's own build (tests/conftest.py).
pytestmark = pytest.mark.check_figures

SMALL_RANGE = 17  # a slider with at most this many positions is swept through every one
PARTS = 3  # items per page; each opens the page once (one script run), then sweeps its controls
SIDEBAR_KEYS = {"sentence", "example", "seed", "lesson", "presenter", "lang"}
KINDS = (
    "slider",
    "select_slider",
    "selectbox",
    "radio",
    "button_group",
    "multiselect",
    "toggle",
    "checkbox",
    "number_input",
)


def raw_options(at: AppTest, widget: Any) -> list[Any]:
    state = at.session_state._state._state  # SafeSessionState → SessionState
    meta = state._new_widget_state.widget_metadata[widget.id]
    serde = meta.deserializer.__self__
    return list(serde.options)


def controls(at: AppTest) -> list[tuple[str, str]]:
    """(kind, key) of every control in the page body: not the sidebar, not a question's own radio,
    not a Numbers panel's widgets (their keys hold "__")."""
    out = []
    for kind in KINDS:
        for w in getattr(at.main, kind):
            if w.key and w.key not in SIDEBAR_KEYS and "__" not in w.key:
                out.append((kind, w.key))
    return out


def values(at: AppTest, kind: str, w: Any) -> list[Any]:
    whole = isinstance(w.value, int) and not isinstance(w.value, bool)  # AppTest reports bounds as floats
    if kind == "slider":
        lo, hi, step = w.min, w.max, w.step or 1
        positions = round((hi - lo) / step) + 1
        out = [lo + k * step for k in range(positions)] if positions <= SMALL_RANGE else [lo, hi]
        return [round(v) for v in out] if whole else out
    if kind == "number_input":
        out = [v for v in (w.min, w.max) if v is not None]
        return [round(v) for v in out] if whole else out
    if kind in ("toggle", "checkbox"):
        return [True, False]
    options = raw_options(at, w)
    if kind == "multiselect":
        return [[], options[:1]]
    if kind == "button_group":
        return options
    return options


def find(at: AppTest, kind: str, key: str) -> Any | None:
    found = [w for w in getattr(at.main, kind) if w.key == key]
    return found[0] if found else None


@pytest.mark.parametrize("part", range(PARTS))
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.key)
def test_every_control_at_its_extremes_and_options(chapter, part):
    at = open_page(chapter.path)
    assert not errors(at), errors(at)
    every = controls(at)
    assert every, "the page has no control to sweep"
    mine = every[part::PARTS]
    enabled = [c for c in mine if (w := find(at, *c)) is not None and not w.disabled]
    swept, problems = 0, []
    for kind, key in mine:
        w = find(at, kind, key)
        if w is None or w.disabled:
            continue  # it went away when another control moved back (e.g. a head shrank)
        original = w.value
        for v in values(at, kind, w):
            w = find(at, kind, key)
            if w is None:
                break
            w.set_value(v).run()
            swept += 1
            if errors(at):
                problems.append(f"{key} = {v!r}: {errors(at)[0][:200]}")
        w = find(at, kind, key)
        if w is not None:
            w.set_value(original).run()
    assert swept or not enabled, "no control was swept"
    assert not problems, "\n".join(problems)
