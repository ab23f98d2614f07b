"""A bare Streamlit app that draws the first page's six charts with st.plotly_chart, and nothing else.

    python -m streamlit run tools/reference_app.py      (tools/bench_browser.py starts it itself)

The atlas's first page (Why order matters) draws three 14 × 64 heatmaps side by side, two 14 × 14
heatmaps side by side and one bar chart of two series (the default sentence has 14 tokens). This
script draws charts of the same kinds and sizes with plain plotly and st.plotly_chart, in the same
wide layout, with one number input in the sidebar (tests/support/browser.RENDERED_JS waits for the sidebar's
seed box, as on every atlas page) — and no text, no widgets, no sidebar navigation, no style sheet.

Its first render in a fresh browser profile is what Streamlit and its own chart element cost on this
machine: loading Streamlit's page, plotly's module (Streamlit loads its whole plotly.js build when
the first chart arrives) and drawing six charts (each twice). The atlas draws its charts with its own
element (ui/chart.py: plotly.js's cartesian build, each chart once); tools/bench_browser.py measures
both in the same run, so the first page's "≤ 3 s after healthy" can be read against this app.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

N, D = 14, 64  # the default sentence's tokens; the output maps' channels

st.set_page_config(page_title="Reference", layout="wide")
st.sidebar.number_input("seed", 0, 9_999, 0)
rng = np.random.default_rng(0)
tokens = [f"t{k}" for k in range(N)]
for column, k in zip(st.columns(3), range(3), strict=True):
    column.plotly_chart(go.Figure(go.Heatmap(z=rng.normal(size=(N, D)), y=tokens)), key=f"outputs{k}", theme=None)
for column, k in zip(st.columns(2), range(2), strict=True):
    weights = rng.random((N, N))
    column.plotly_chart(
        go.Figure(go.Heatmap(z=weights / weights.sum(1, keepdims=True), x=tokens, y=tokens)),
        key=f"weights{k}",
        theme=None,
    )
st.plotly_chart(
    go.Figure([go.Bar(x=tokens, y=rng.random(N), name="a"), go.Bar(x=tokens, y=rng.random(N), name="b")]),
    key="bars",
    theme=None,
)
