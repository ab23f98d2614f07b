"""Settings for the whole suite."""

import hashlib
import os

from plotly.io.json import to_json_plotly

from explain.figures import spec as figure_spec

# Every figure a page sends is checked against plotly's own validated build of the same figure
# (explain.figures.theme.AtlasFigure.to_dict): every page run and every control sweep of the suite
# then proves that sending the builders' specs without building plotly's objects changes nothing.
# Servers the browser tests start inherit it.
os.environ["PE_ATLAS_CHECK_FIGURES"] = "1"

# The SmolLM2 chapter waits for its model instead of polling with a "warming up" note (AppTest runs a
# page to its end): the first run of that page in a test process loads the model (~25 s, once).
os.environ["PE_ATLAS_SMOLLM2_WAIT"] = "1"

# ... but each distinct figure once per test process. The check builds the figure with plotly's
# validation, which cost a third of every page run, and most of the suite's page runs send figures
# already checked: the default page that every AppTest opens first, the charts a moved control does
# not touch, a page reopened by the next test. A figure is the same when its spec (traces, layout,
# frames, validated or not) and what is sent are the same, byte for byte: plotly's build of the same
# spec is then the same, and so is the outcome. Anything else is checked. (tests/test_figure_check.py)
_check = figure_spec._check_against_plotly  # fails at import, loudly, if the check is renamed
CHECKED: set[bytes] = set()


def _fingerprint(fig, sent) -> bytes | None:
    spec = fig.__dict__.get("_atlas_spec")
    if spec is None:  # a figure built as plotly's: always checked
        return None
    data, layout, frames, validate = spec
    traces = [t if isinstance(t, dict) else t.to_plotly_json() for t in data]
    h = hashlib.sha256()
    for part in (traces, layout, list(frames), bool(validate), sent):
        h.update(to_json_plotly(part).encode())
        h.update(b"\0")
    return h.digest()


def check_once(fig, sent) -> None:
    key = _fingerprint(fig, sent)
    if key is not None and key in CHECKED:
        return
    _check(fig, sent)
    if key is not None:
        CHECKED.add(key)


figure_spec._check_against_plotly = check_once
