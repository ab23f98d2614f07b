"""tools/reference_app.py, the bare app tools/bench_browser.py measures beside the first page, draws
what the first page draws: the same number of charts, of the same kinds and sizes, in the same order.

If the first page gains or loses a chart, or its maps change shape, the reference stops being the
floor of that page's first render; this test says so instead of the benchmark quietly comparing
two different pages.
"""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT, TIMEOUT, errors, fig_array, figures, open_page
from ui.chapters import BY_KEY


def shapes(figs: list[dict]) -> list[list[tuple[str, tuple[int, ...]]]]:
    """Per chart, its traces' types and data shapes (z of a heatmap, y of a bar)."""
    out = []
    for f in figs:
        out.append(
            [
                (trace.get("type", "scatter"), fig_array(trace["z" if "z" in trace else "y"]).shape)
                for trace in f["data"]
            ]
        )
    return out


def test_the_reference_draws_the_first_pages_charts_and_a_sidebar_seed_box():
    ref = AppTest.from_file(str(ROOT / "tools" / "reference_app.py"), default_timeout=TIMEOUT)
    ref.run()
    assert not errors(ref)
    assert len(ref.sidebar.number_input) == 1  # what tests/support/browser.RENDERED_JS waits for
    # The first chapter with charts (the app opens on Start here, one diagram): what the benchmark's
    # first render loads (tools/bench_browser.FIRST_CHARTS).
    first = open_page(BY_KEY["why-order"].page)
    assert not errors(first)
    # The reference draws with Streamlit's own chart element; the atlas with ui/chart.py's.
    assert shapes([json.loads(el.proto.spec) for el in ref.get("plotly_chart")]) == shapes(figures(first))
