"""Every figure in PE Atlas: numbers in, plotly Figure out, one shared look.

    theme.py       the look (colour scales, font, template) and make_figure, the one constructor call
    fast.py        plotly fast paths: shapes, notes and typed arrays written out (pinned by tests)
    maps.py        maps several chapters draw (token maps, matrices, grids of small maps)
    charts.py      charts several chapters draw (lines, bars, marks, the bucket staircase)

A builder used by one chapter only lives beside it, in explain/chapters/<chapter>_figures.py.
`from explain import figures as F` gives the shared builders and the colour constants.
"""

from .charts import band_line, bars, lines, mark_lines, staircase, token_bars
from .maps import lab_map, matrix_heatmap, token_heatmap, token_heatmap_grid, token_map
from .theme import FONT, INDEX, LINES, SIGNED, WEIGHTS

__all__ = [
    "FONT",
    "INDEX",
    "LINES",
    "SIGNED",
    "WEIGHTS",
    "band_line",
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
