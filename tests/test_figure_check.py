"""The suite's figure check (tests/conftest.py) runs once per distinct figure, and never skips one
that differs from every figure checked before."""

from __future__ import annotations

import numpy as np
import pytest

import tests.conftest as suite
from explain.figures.theme import make_figure


@pytest.fixture
def counted(monkeypatch):
    """Count the checks plotly really makes, from an empty memory."""
    calls: list[int] = []
    real = suite._check

    def check(fig, sent):
        calls.append(1)
        real(fig, sent)

    monkeypatch.setattr(suite, "_check", check)
    monkeypatch.setattr(suite, "CHECKED", set())
    monkeypatch.setenv("PE_ATLAS_CHECK_FIGURES", "1")
    return calls


def heatmap(z, title="t"):
    return make_figure([dict(type="heatmap", z=np.asarray(z, dtype=float))], title, 300)


def test_the_same_figure_is_checked_once(counted):
    heatmap([[1, 2], [3, 4]]).to_dict()
    heatmap([[1, 2], [3, 4]]).to_dict()  # a new object, the same figure: a page's next run
    assert len(counted) == 1


@pytest.mark.parametrize(
    "other",
    [
        lambda: heatmap([[1, 2], [3, 5]]),  # one value
        lambda: heatmap([[1, 2, 3, 4]]),  # the shape
        lambda: heatmap([[1, 2], [3, 4]], "u"),  # the title
        lambda: make_figure([dict(type="heatmap", z=np.array([[1.0, 2], [3, 4]]))], "t", 301),  # the layout
    ],
    ids=["value", "shape", "title", "height"],
)
def test_a_different_figure_is_checked(counted, other):
    heatmap([[1, 2], [3, 4]]).to_dict()
    other().to_dict()
    assert len(counted) == 2


def test_a_wrong_spec_fails_after_a_good_one_was_checked(counted):
    """The memory does not hide a spec plotly reads differently (an underscore path)."""
    make_figure([dict(type="bar", x=[1], y=[2], marker=dict(color="red"))], "t", 300).to_dict()
    with pytest.raises(AssertionError, match=r"\.data\[0\]\.marker"):
        make_figure([dict(type="bar", x=[1], y=[2], marker_color="red")], "t", 300).to_dict()
    assert len(counted) == 2


FIGURE_MODULES = ("tests.test_pages_smoke", "tests.test_controls", "tests.test_payload")


@pytest.mark.parametrize("name", FIGURE_MODULES)
def test_the_modules_that_test_figures_check_them(name):
    """Every page at its default, empty, cut, Korean and markup sentences and extreme seeds; every
    control at each option and extreme; the largest payloads: marked, so their page runs check."""
    import importlib

    marks = getattr(importlib.import_module(name), "pytestmark", [])
    assert any(m.name == "check_figures" for m in (marks if isinstance(marks, list) else [marks])), name


def test_a_module_not_marked_runs_unchecked():
    import os

    assert os.environ["PE_ATLAS_CHECK_FIGURES"] == "0"  # this module has no check_figures mark
