"""Every page draws what was recorded in tests/snapshots/figures.json.gz (tools/figure_snapshots.py):
a refactor of the views, the figures or the chapters cannot change a picture by accident. A change
that alters a picture on purpose re-records the snapshot (`python tools/figure_snapshots.py record`)
and says which picture in its commit message."""

from __future__ import annotations

import pytest

from tests.support import figure_snapshots as S
from ui.chapters import CHAPTERS

STORED = S.load()


@pytest.mark.parametrize("lang", S.LANGS)
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.key)
def test_page_draws_the_recorded_figures(chapter, lang):
    old = STORED[f"{lang}/{chapter.key}"]
    new = S.page_figures(chapter.path, lang)
    assert set(new) == set(old), f"charts added {set(new) - set(old)}, gone {set(old) - set(new)}"
    diffs = [f"{key}{d}" for key in sorted(old) for d in S.differences(old[key], new[key])]
    assert not diffs, "a picture changed (re-record only if on purpose):\n" + "\n".join(diffs[:20])


def test_the_comparison_catches_a_changed_picture():
    """The fingerprints are not blind: a changed value, shape, title or trace fails."""
    fig = S.fingerprint({"data": [{"z": {"dtype": "f4", "bdata": "AACAPwAAAEA=", "shape": "1, 2"}}], "t": "a 0.50"})
    same = S.fingerprint({"data": [{"z": {"dtype": "f4", "bdata": "AACAPwAAAEA=", "shape": "1, 2"}}], "t": "a 0.50"})
    assert S.differences(fig, same) == []
    other = S.fingerprint({"data": [{"z": {"dtype": "f4", "bdata": "AACAPwAAQEA=", "shape": "1, 2"}}], "t": "a 0.50"})
    assert S.differences(fig, other)  # 2.0 → 3.0 in the array
    assert S.differences(fig, {**fig, "t": "a 0.60"}) and S.differences(fig, {**fig, "t": "b 0.50"})
    assert not S.differences(fig, {**fig, "t": "a 0.51"})  # the last printed digit may move
    assert S.differences(fig, {**fig, "data": []})
