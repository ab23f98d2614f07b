"""Accessibility facts checkable without a browser: contrast of the colours the app styles (WCAG 2.2
AA: ≥ 4.5:1 for normal text) and no empty table header. tests/e2e/test_axe.py checks the drawn pages.
"""

from __future__ import annotations

import re
import tomllib

import numpy as np
import pytest

from explain import i18n
from explain.derivations import registry as D
from explain.derivations.view import value_table
from tests.helpers import ROOT, fig_array
from ui.presenter import ATLAS_CSS, CAPTION_COLOR, CAPTION_LINK_COLOR

AA = 4.5
WHITE = "#ffffff"
SIDEBAR = "#f0f2f6"  # Streamlit's light secondary background: the sidebar, where captions also appear


def luminance(hex_colour: str) -> float:
    """WCAG 2.x relative luminance of an sRGB colour "#rrggbb"."""
    rgb = [int(hex_colour.lstrip("#")[k : k + 2], 16) / 255 for k in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio (L1 + 0.05) / (L2 + 0.05), lighter over darker: 1 … 21."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def short_of_aa(pairs: dict[str, tuple[str, str]]) -> dict[str, float]:
    """The (foreground, background) pairs below 4.5:1, with their ratio."""
    return {name: round(contrast(fg, bg), 2) for name, (fg, bg) in pairs.items() if contrast(fg, bg) < AA}


def test_contrast_matches_known_values():
    assert contrast("#000000", WHITE) == pytest.approx(21.0)
    assert contrast(WHITE, WHITE) == pytest.approx(1.0)
    # The figures axe-core reported before the fix: faded caption text and its link on white.
    assert contrast("#828180", WHITE) == pytest.approx(3.88, abs=0.01)
    assert contrast("#7c95d2", WHITE) == pytest.approx(2.96, abs=0.01)
    assert contrast("#c53948", "#f3e5e6") == pytest.approx(4.23, abs=0.01)
    assert contrast("#767676", WHITE) >= AA > contrast("#777777", WHITE)  # the usual AA boundary grey


def styled_pairs() -> dict[str, tuple[str, str]]:
    theme = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]
    primary = theme["primaryColor"]
    return {
        "caption on white": (CAPTION_COLOR, WHITE),
        "caption in the sidebar": (CAPTION_COLOR, SIDEBAR),
        "caption link on white": (CAPTION_LINK_COLOR, WHITE),
        "caption link in the sidebar": (CAPTION_LINK_COLOR, SIDEBAR),
        "primary colour as text (selected language)": (primary, WHITE),
        "white text on the primary colour (buttons)": (WHITE, primary),
    }


def test_every_colour_the_app_styles_reaches_aa():
    assert short_of_aa(styled_pairs()) == {}


def test_the_check_catches_streamlits_own_colours():
    """The same check on Streamlit's defaults (before the fix) fails, so the test above can."""
    broken = {**styled_pairs(), "caption on white": ("#828180", WHITE), "primary": ("#ff4b4b", WHITE)}
    assert set(short_of_aa(broken)) == {"caption on white", "primary"}


def test_caption_style_undoes_the_fade():
    # Streamlit draws a caption at 60 % opacity: a colour alone would be faded again (measured:
    # #5e6069 came out as #9ea0a5, 2.6:1), so the sheet must also set it opaque.
    assert re.search(r'stCaptionContainer"\] \*[^{]*\{ opacity: 1; \}', ATLAS_CSS)
    assert CAPTION_COLOR in ATLAS_CSS and CAPTION_LINK_COLOR in ATLAS_CSS


def empty_header_cells(table: str) -> list[int]:
    """Indices of the empty cells in a Markdown table's header row."""
    cells = table.splitlines()[0].strip().strip("|").split("|")
    return [k for k, c in enumerate(cells) if not c.strip()]


def test_empty_header_cells_sees_an_empty_one():
    assert empty_header_cells("| line | | value |\n|---|---|---|") == [1]
    assert empty_header_cells("| line | step | value |\n|---|---|---|") == []


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("shape", ["scalar", "matrix"])
def test_value_tables_name_every_column(lang, shape):
    token = i18n._current.set(lang)
    try:
        for d in D.ALL_DERIVATIONS:
            table = value_table(d, [1.0 if shape == "scalar" else [[1.0, 0.0], [0.0, 1.0]]] * len(d.steps))
            assert empty_header_cells(table) == [], (d.id, table.splitlines()[0])
    finally:
        i18n._current.reset(token)


def test_several_lines_differ_by_more_than_colour():
    from explain import figures as F

    x = list(range(5))
    fig = F.lines(x, {"a": x, "b": x, "c": x}, "t", x_title="x", y_title="y")
    dashes = [tr.line.dash for tr in fig.data]
    assert len(set(dashes)) == 3, dashes
    one = F.lines(x, {"a": x}, "t", x_title="x", y_title="y")
    assert one.data[0].line.dash is None  # a single line needs no second channel
    # A caller's own dash keeps its meaning (e.g. "dashed = the extrapolated part").
    kept = F.lines(x, {"a": x, "b": x}, "t", x_title="x", y_title="y", dashed=["b"])
    assert [tr.line.dash for tr in kept.data] == [None, "dash"]


def test_highlighted_bars_are_hatched_too():
    from explain import figures as F

    fig = F.bars(["a", "b", "c", "d"], [1, 2, 3, 4], "t", x_title="x", y_title="y", highlight=[1, 3])
    assert list(fig.data[0].marker.pattern.shape) == ["", "/", "", "/"]
    colours = list(fig.data[0].marker.color)
    assert colours[1] == colours[3] != colours[0]


def test_rope_circles_open_on_any_frame_paused():
    """The keyboard's way through the RoPE animation (pages/rotary/rope.py's "Frame" slider): the
    figure opens on frame `start`, its traces and title those of that frame, the plotly slider on
    it. Swept over every frame, and past both ends (clamped)."""
    from explain.chapters import rope as ch
    from explain.chapters import rope_figures

    toks = ("the", "cat", "sat", "on", "the", "mat", "and", "then", "slept")
    n = 12
    c = ch.circles(toks, 0, 16, 10000.0, 1, 5, 2, 6, n, "both")
    pairs = c.q_xy.shape[1]

    def build(start: int):
        return rope_figures.rotation_circles(
            c.q_xy,
            c.k_xy,
            "t",
            panel_titles=[f"p{p}" for p in range(pairs)],
            notes=np.full(c.q_xy.shape[:2], "note"),
            frame_titles=[f"frame {k}" for k in range(n)],
            frame_labels=[str(k) for k in range(n)],
            start=start,
        )

    for start in [*range(n), -3, n + 5]:
        fig = build(start).to_dict()  # the frames were attached unvalidated: read them as plain data
        shown = min(max(start, 0), n - 1)
        assert fig["layout"]["sliders"][0]["active"] == shown
        assert fig["layout"]["title"]["text"].endswith(f"frame {shown}</span>")
        frame = fig["frames"][shown]["data"]
        for drawn, expected in zip(fig["data"][len(fig["data"]) - len(frame) :], frame, strict=True):
            # a frame carries only what moves (points, hover text, notes): each of those as drawn
            assert {"x", "y", "text"} & set(expected)
            for key in ("x", "y"):
                if key in expected:
                    np.testing.assert_array_equal(fig_array(drawn[key]), fig_array(expected[key]))
            if "text" in expected:
                assert list(drawn["text"]) == list(expected["text"])
    # The comparison can fail: frames differ (the arrows move), so frame 3 drawn is not frame 4.
    a, b = build(3), build(4)
    assert any(
        not np.array_equal(np.asarray(u.x, dtype=float), np.asarray(v.x, dtype=float), equal_nan=True)
        for u, v in zip(a.data, b.data, strict=True)
    )


def test_the_rope_page_steps_its_animation_with_a_slider():
    from tests.helpers import chart, errors, open_page
    from ui.chapters import BY_KEY

    at = open_page(BY_KEY["rope"].path)
    assert chart(at, "rope_circles")["layout"]["sliders"][0]["active"] == 0
    at.slider(key="rope_frame").set_value(7).run()
    assert not errors(at)
    assert chart(at, "rope_circles")["layout"]["sliders"][0]["active"] == 7
