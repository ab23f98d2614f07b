"""Every chart's computed text summary (explain.numbers.figure_summary): what a screen reader reads in
the chart's Numbers panel, before the table. Its facts come from the figure's own data."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explain import figures as F
from explain import i18n
from explain.numbers import MAX_SUMMARY_LINES, figure_summary
from tests.helpers import APP, TIMEOUT, errors
from ui.chapters import BY_KEY

TOKS = ["the", "cat", "sat", "on", "the", "mat"]


@pytest.fixture(params=i18n.LANGS)
def lang(request):
    token = i18n._current.set(request.param)
    yield request.param
    i18n._current.reset(token)


@pytest.mark.parametrize("where", [(0, 0), (4, 1), (5, 5), (2, 3)])
def test_heatmap_summary_names_the_strongest_cell(lang, where):
    """Sweep where the strongest and weakest cells are; repeated tokens keep their position."""
    z = np.full((6, 6), 0.1)
    z[where] = 0.9
    lo = (5 - where[0], 5 - where[1]) if where != (2, 3) else (0, 0)
    z[lo] = -0.5
    (line,) = figure_summary(F.token_heatmap(z, TOKS, TOKS, "attention"))
    name = lambda k: f"{k} · {TOKS[k]}"  # noqa: E731  (a token axis label: position · word)
    high, low = line.split("-0.5")
    assert line.startswith("attention:") and "0.9" in high
    assert name(where[0]) in high and name(where[1]) in high
    assert name(lo[0]) in low and name(lo[1]) in low
    if lang == "en":
        assert line == (
            f"attention: largest 0.9 at row {name(where[0])}, column {name(where[1])}; "
            f"smallest -0.5 at row {name(lo[0])}, column {name(lo[1])}."
        )
    else:
        assert f"({name(where[0])}행, {name(where[1])}열)" in line


def test_heatmap_summary_skips_nans_and_empty_maps(lang):
    z = np.full((3, 3), np.nan)
    assert figure_summary(F.token_heatmap(z, TOKS[:3], TOKS[:3], "t")) == []
    z[1, 2] = 2.0
    z[2, 0] = 1.0
    (line,) = figure_summary(F.token_heatmap(z, TOKS[:3], TOKS[:3], "t"))
    assert "2" in line and "nan" not in line.lower()


def test_line_summary_names_each_curves_extremes(lang):
    x = np.arange(10)
    fig = F.lines(x, {"up": x**2, "down": -x}, "t", x_title="distance", y_title="y")
    up, down = figure_summary(fig)
    assert up.startswith("up:") and "81" in up and up.index("81") < up.index("0")
    assert down.startswith("down:") and "-9" in down
    if lang == "ko":
        assert "가장 높은 값" in up


def test_summary_is_bounded():
    x = np.arange(3)
    fig = F.lines(x, {f"c{k}": x * k for k in range(30)}, "t", x_title="x", y_title="y")
    assert len(figure_summary(fig)) == MAX_SUMMARY_LINES


def test_a_broken_summary_is_caught():
    """The checks above can fail: a map whose strongest cell moved is described differently."""
    z = np.zeros((6, 6))
    z[1, 2] = 1.0
    a = figure_summary(F.token_heatmap(z, TOKS, TOKS, "t"))
    z[1, 2], z[3, 4] = 0.0, 1.0
    assert figure_summary(F.token_heatmap(z, TOKS, TOKS, "t")) != a


@pytest.mark.parametrize("lang_code", i18n.LANGS)
def test_the_numbers_panel_shows_the_summary(lang_code):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["lang"] = lang_code
    at.run()
    at.switch_page(BY_KEY["shaw"].path).run()
    assert not [t for t in at.text if t.value]  # closed: nothing computed
    at.session_state["shaw_index__numbers"] = True  # open the expander, as a click would
    at.run()
    assert not errors(at)
    texts = [t.value for t in at.text]
    assert len(texts) == 1
    word = "largest" if lang_code == "en" else "가장 큰 값"
    assert word in texts[0]
