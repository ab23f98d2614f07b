"""Every figure in PE Atlas: numbers in, plotly Figure out, one shared look.

    theme.py       the look (colour scales, font, template) and make_figure, the one constructor call
    fast.py        plotly fast paths: shapes, notes and typed arrays written out (pinned by tests)
    primitives.py  the figures several chapters draw (token maps, matrices, lines, bars, grids)

A builder used by one chapter only lives beside it, in explain/chapters/<chapter>_figures.py.
`from explain import figures as F` gives the shared builders and the colour constants.
"""

from .primitives import (
    bars,
    lab_map,
    lines,
    mark_lines,
    matrix_heatmap,
    staircase,
    token_bars,
    token_heatmap,
    token_heatmap_grid,
    token_map,
)
from .theme import FONT, INDEX, LINES, SIGNED, WEIGHTS

__all__ = [
    "FONT",
    "INDEX",
    "LINES",
    "SIGNED",
    "WEIGHTS",
    "bars",
    "lab_map",
    "lines",
    "mark_lines",
    "matrix_heatmap",
    "staircase",
    "token_bars",
    "token_heatmap",
    "token_heatmap_grid",
    "token_map",
]
