"""Presenter mode tucks secondary controls into a collapsed expander (ui.presenter.secondary), but
never one the page's prose names (issue 43: RoPE's 'Play moves' and ALiBi's 'Measure distance in
units of 1/m' were hidden while the prose asked the class to switch them).

For every page that has secondary controls: the expanders that exist only in presenter mode hold no
control whose label the prose names in *italics* (the catalogue's way of naming a control).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import APP, TIMEOUT
from ui.chapters import CHAPTERS

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("radio", "checkbox", "toggle", "slider", "select_slider", "selectbox", "number_input", "multiselect")
WITH_SECONDARY = [c for c in CHAPTERS if "secondary(" in (ROOT / c.path).read_text(encoding="utf-8")]


def _open(path: str, present: bool) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if present:
        at.query_params["present"] = "1"
    at.run()
    if path != CHAPTERS[0].path:
        at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_there_are_pages_with_secondary_controls():
    assert {"alibi", "rope"} <= {c.key for c in WITH_SECONDARY}


@pytest.mark.parametrize("chapter", WITH_SECONDARY, ids=lambda c: c.key)
def test_presenter_mode_hides_no_control_the_prose_names(chapter):
    normal = {e.label for e in _open(chapter.path, False).expander}
    at = _open(chapter.path, True)
    prose = "\n".join(m.value for m in at.markdown).lower()
    tucked = [e for e in at.expander if e.label not in normal]
    assert tucked, "presenter mode tucks nothing away here"
    labels = [(box.label, str(getattr(w, "label", ""))) for box in tucked for kind in KINDS for w in box.get(kind)]
    assert labels, "no control found in the tucked-away expanders"
    hidden = [(box, label) for box, label in labels if f"*{label.lower()}*" in prose]
    assert not hidden, hidden
