"""Settings for the whole suite."""

import os

# Every figure a page sends is checked against plotly's own validated build of the same figure
# (explain.figures.theme.AtlasFigure.to_dict): every page run and every control sweep of the suite
# then proves that sending the builders' specs without building plotly's objects changes nothing.
# Servers the browser tests start inherit it.
os.environ["PE_ATLAS_CHECK_FIGURES"] = "1"
