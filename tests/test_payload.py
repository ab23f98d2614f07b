"""What a page sends at maximum sizes stays under 1 MB (issue 18), and the block means that keep it
there draw exactly what they say.

The pages are the ones that sent the most before (tools/payload.py: Trouble 5.1 MB, Sinusoidal 4.4 MB
and 7.7 MB with its trained panel open, ALiBi 3.4 MB and 6.8 MB with the panel, the attention lab's
trained mode 10.6 MB), each driven exactly as bench.py's "max" column: every slider at its maximum
and a 256-token sentence. Payload is tests/support/sizes.figure_bytes: the figure JSON of every chart.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from explain.figures.theme import (
    FIGURE_CELLS,
    SCREEN_CELLS,
    block_spans,
    panel_cells,
    screen_blocks,
    screen_factor,
)
from tests.helpers import chart_elements, errors, open_page
from tests.support.sizes import figure_bytes, to_max
from ui.chapters import BY_KEY

# Figures are what these page runs test: each is checked against plotly's own build (tests/conftest.py).
pytestmark = pytest.mark.check_figures

MB = 1_000_000


def _biggest(at) -> str:
    sizes = sorted(((len(el.proto.bytes), el.key) for el in chart_elements(at)), reverse=True)
    return ", ".join(f"{k} {b // 1024} KB" for b, k in sizes[:4])


@pytest.mark.parametrize("key, panel", [("trouble", False), ("sinusoidal", True), ("alibi", True)])
def test_page_at_maximum_sizes_sends_under_1_mb(key, panel):
    at = open_page(BY_KEY[key].path)
    to_max(at)
    if panel:
        at.session_state[f"{key}_trained"] = True  # the closed "trained on real text" panel, opened
        at.run()
        assert any(el.key == f"{key}_trained_grid" for el in chart_elements(at))
    assert not errors(at)
    assert len(chart_elements(at)) >= 5
    assert figure_bytes(at) < MB, _biggest(at)


def test_minilm_at_the_longest_text_sends_under_1_mb():
    # 72 heads drawn as one tiled heatmap with empty rows and columns between them (issue 18)
    at = open_page(BY_KEY["minilm"].path)
    to_max(at)
    assert not errors(at)
    assert any(el.key == "minilm_grid" for el in chart_elements(at))
    from explain.chapters import minilm

    # to_max's sentence fills the model's 256 word pieces: thumbnails are blocks of several tokens
    assert minilm.wordpieces(at.session_state["sentence"]).kept > minilm.THUMB_SIDE
    assert figure_bytes(at) < MB, _biggest(at)


def test_lab_trained_mode_with_four_encodings_sends_under_1_mb():
    at = open_page(BY_KEY["attention-lab"].path)
    at.radio(key="lab_source").set_value("trained").run()
    to_max(at)
    assert len(at.multiselect(key="lab_methods").value) == 4
    assert len([el for el in chart_elements(at) if (el.key or "").startswith("lab_trained_")]) == 4
    assert not errors(at)
    assert figure_bytes(at) < MB, _biggest(at)


def _naive(z: np.ndarray, f: int, g: int, how: str) -> np.ndarray:
    rows, cols = block_spans(z.shape[0], f), block_spans(z.shape[1], g)
    out = np.full((len(rows), len(cols)), np.nan)
    for (i, (r0, r1)), (j, (c0, c1)) in itertools.product(enumerate(rows), enumerate(cols)):
        cells = z[r0 : r1 + 1, c0 : c1 + 1]
        cells = cells[np.isfinite(cells)]
        if cells.size:
            out[i, j] = cells.max() if how == "max" else cells.mean()
    return out


@pytest.mark.parametrize("how", ["mean", "max"])
def test_screen_blocks_is_each_blocks_mean_or_largest_without_the_masked_cells(how):
    rng = np.random.default_rng(0)
    for (rows, cols), f, g in itertools.product([(7, 7), (10, 13), (1, 5), (12, 12)], [1, 2, 3, 5], [1, 2, 4]):
        z = rng.normal(size=(rows, cols))
        z[np.triu_indices(rows, 1, cols)] = np.nan  # a causal mask: whole blocks of it stay NaN
        got = screen_blocks(z, f, g, how)
        assert got.dtype == np.float32 and got.shape == (-(-rows // f), -(-cols // g))
        want = _naive(z, f, g, how)
        assert np.array_equal(np.isnan(got), np.isnan(want)), (rows, cols, f, g)
        np.testing.assert_allclose(got[np.isfinite(got)], want[np.isfinite(want)], rtol=1e-6)


def test_screen_factors_and_panel_budget():
    for n in range(1, 1100):
        f = screen_factor(n, SCREEN_CELLS)
        assert -(-n // f) <= SCREEN_CELLS and (f == 1 or -(-n // (f - 1)) > SCREEN_CELLS)  # the least factor
        spans = block_spans(n, f)
        assert [a for a, _ in spans] == list(range(0, n, f)) and spans[-1][1] == n - 1
    for panels in range(1, 80):
        side = panel_cells(panels)
        assert 1 <= side <= SCREEN_CELLS and panels * side**2 <= max(FIGURE_CELLS, panels)
        assert panel_cells(panels + 1) <= side


def test_a_256_token_map_names_its_blocks_and_says_what_a_cell_is():
    from explain import figures as F

    tokens = [f"t{k}" for k in range(256)]
    z = np.tril(np.ones((256, 256))) / np.arange(1, 257)[:, None]
    z[np.triu_indices(256, 1)] = np.nan
    spec = json.loads(F.token_map(z, tokens, "title", kind="weights").to_json())
    heat = spec["data"][0]
    assert heat["y"][:2] == ["0–1 · t0", "2–3 · t2"] and len(heat["x"]) == 128
    assert "largest of 2 × 2 cells" in heat["hovertemplate"]
    assert spec["layout"]["coloraxis"]["colorbar"]["title"]["text"].endswith("largest of 2 × 2 cells")
    small = json.loads(F.token_map(z[:40, :40], tokens[:40], "title", kind="weights").to_json())
    assert "cells" not in small["data"][0]["hovertemplate"]  # a map the screen shows whole is drawn whole
