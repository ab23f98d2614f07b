"""Every page draws what was recorded in tests/snapshots/figures/<chapter>.json
(tests/support/figure_snapshots.py): a refactor of the views, the figures or the chapters cannot
change a picture by accident. A change that alters a picture on purpose re-records that chapter
(`python tools/figure_snapshots.py record <chapter>`); the diff of its text file shows the picture."""

from __future__ import annotations

import json

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


def test_one_snapshot_file_per_chapter():
    assert {p.stem for p in S.SNAPSHOTS.glob("*.json")} == {c.key for c in CHAPTERS}
    assert set(STORED) == {f"{lang}/{c.key}" for lang in S.LANGS for c in CHAPTERS}


def test_the_text_reads_back_exactly():
    """The stored text is the figures, not an approximation: dumps → json.loads is the identity
    (floats, NaN, nested lists, Korean words), and a file is already in the form record writes."""
    obj = {"b": [1, 0.1 + 0.2, float("inf"), float("nan"), None, "말"], "a": {"z": [[1, 2], {"__array__": True}]}}
    back = json.loads(S.dumps(obj))
    assert json.dumps(back, sort_keys=True) == json.dumps(obj, sort_keys=True)  # NaN != NaN, but prints alike
    key = CHAPTERS[0].key
    assert S.path_of(key).read_text(encoding="utf-8") == S.dumps(S.load_chapter(key)) + "\n"


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
